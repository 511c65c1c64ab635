/**
 * The private search of (ε, δ)-differential privacy by sampling and generalization, as ARX
 * 3.9.2 runs it (docs/definitions.md, "Differential privacy"): from the top of the lattice, each
 * step adds the current node's direct specializations to the candidates, removes the current
 * node, and draws the next one from the candidates by the exponential mechanism with the step's
 * ε over a score of sensitivity one; the release takes the best-scoring node drawn (the top
 * included; of equal scores the lower node, as ARX's optimum does). The score is ARX's for its Loss metric, computed on the sample: minus the summed
 * Loss share of every cell of the sample (a suppressed or unsampled row's cells count 1 each),
 * over the number of quasi-identifiers and k − 1 (the sensitivity). The draws come from the
 * caller's generator: the secret one in a release (never the spec's seed).
 */
import type { UniformDraws } from '../../util/random.ts';
import type { NodeEvaluator, NodeResult } from './evaluate.ts';
import type { Prepared } from './prepared.ts';

/** What the search needs of the budget and of the sample. */
export interface DpSearchSettings {
  /** The ε each step's exponential mechanism spends. */
  readonly stepEpsilon: number;
  /** The largest number of steps. */
  readonly steps: number;
  /** Classes with fewer sampled rows than k are suppressed. */
  readonly k: number;
  /** The input's rows (the rows not sampled count as suppressed in the score). */
  readonly inputRows: number;
}

export interface DpSearchOutcome {
  /** The chosen node: quasi-identifier → level. */
  readonly node: Record<string, number>;
  /** Steps taken (fewer than allowed when the candidates run out at the bottom). */
  readonly stepsTaken: number;
  /** Nodes scored. */
  readonly nodesScored: number;
}

/** The exponential mechanism's draw: index i with probability ∝ exp(ε·score_i / 2). */
export function exponentialMechanism(scores: readonly number[], epsilon: number, u: number): number {
  let shift = -Number.MAX_VALUE;
  for (const s of scores) shift = Math.max(shift, 0.5 * epsilon * s);
  const weights = scores.map((s) => Math.exp(0.5 * epsilon * s - shift));
  let total = 0;
  for (const w of weights) total += w;
  const target = u * total;
  let running = 0;
  for (let i = 0; i < weights.length; i++) {
    running += weights[i]!;
    if (target < running) return i;
  }
  return weights.length - 1;
}

/**
 * ARX's Loss score of a node: −(Σ over quasi-identifiers of (rows suppressed or not sampled +
 * Σ over retained classes of size · share)) / (m · (k − 1)), the divisor m alone when k = 1.
 */
export function lossScore(prepared: Prepared, result: NodeResult, k: number, inputRows: number): number {
  const { hierarchies, tuples } = prepared;
  const m = hierarchies.length;
  const { groups, sizes, reps, suppressed, suppressedRows, levels } = result;
  const removed = inputRows - prepared.table.rowCount + suppressedRows;
  let total = m * removed;
  for (let i = 0; i < m; i++) {
    const h = hierarchies[i]!;
    const table = h.levelTables[levels[i]!]!;
    const under = h.rowsUnder[levels[i]!]!;
    const codes = tuples.columns[i]!;
    let sum = 0;
    for (let g = 0; g < groups; g++) if (!suppressed[g]) sum += sizes[g]! * under[table[codes[reps[g]!]!]!]!;
    total += sum / h.rows;
  }
  return -total / (k > 1 ? m * (k - 1) : m);
}

/** The search on the prepared sample (`evaluator` opened on it), drawing from `random`. */
export function dpSearch(
  prepared: Prepared,
  evaluator: NodeEvaluator,
  settings: DpSearchSettings,
  random: UniformDraws,
  uniform: (random: UniformDraws) => number,
): DpSearchOutcome {
  const { lattice } = prepared.problem;
  const score = (id: number) => lossScore(prepared, evaluator.evaluate(id), settings.k, settings.inputRows);
  let pivot = lattice.top;
  let best = pivot;
  let bestScore = score(pivot);
  let scored = 1;
  const candidates = new Map<number, number>([[pivot, bestScore]]);
  let taken = 0;
  for (let step = 1; step <= settings.steps; step++) {
    for (const p of lattice.predecessors(pivot)) {
      if (candidates.has(p)) continue;
      candidates.set(p, score(p));
      scored++;
    }
    candidates.delete(pivot);
    if (candidates.size === 0) break;
    const ids = [...candidates.keys()];
    const values = [...candidates.values()];
    const drawn = exponentialMechanism(values, settings.stepEpsilon, uniform(random));
    pivot = ids[drawn]!;
    taken = step;
    // As ARX keeps its optimum: the better score, and of two equal ones the lower node (with
    // every class suppressed, each node scores as the top does).
    if (
      values[drawn]! > bestScore ||
      (values[drawn]! === bestScore && lattice.levelSum(pivot) < lattice.levelSum(best))
    ) {
      best = pivot;
      bestScore = values[drawn]!;
    }
  }
  const node = Object.fromEntries(prepared.qis.map((c, i) => [c.name, lattice.level(best, i)]));
  return { node, stepsTaken: taken, nodesScored: scored };
}
