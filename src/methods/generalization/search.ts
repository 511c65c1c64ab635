/**
 * Optimal full-domain generalization. Two phases:
 *
 * 1. Feasibility by predictive tagging (Flash-like): visit the lattice level by level (from the
 *    top or the bottom, whichever checks fewer nodes for the metric), build a path upwards
 *    from each untagged node and binary-search it; a feasible node tags all its
 *    generalizations feasible, an infeasible one all its specializations infeasible. When a
 *    model is not monotonic under the spec's suppression, the tagging judges class sizes
 *    alone (rows in classes smaller than any model lets pass), which is monotonic, with checks
 *    that only group.
 * 2. Branch and bound over the nodes not known infeasible, in order of their lower bound
 *    before grouping (the metric with no suppression, raised by what evaluated nodes above and
 *    below teach): stop once that bound exceeds the best value found, and skip nodes whose
 *    bound has risen past it since.
 *
 * Suppression makes every metric non-monotonic (a generalization may release rows a
 * specialization suppressed), which is why phase 1 alone — the minimal feasible nodes — is
 * not enough, and phase 2 compares values, not just feasibility.
 */

import { K_ANONYMITY } from '../../catalogue/k-anonymity.ts';
import { NoSolutionError } from '../../errors.ts';
import { smallestPassingClass } from '../../models/index.ts';
import { LEAST_PROTECTIVE_L } from '../../models/l-diversity.ts';
import type { GeneralizationProblem, NodeEvaluator, NodeResult } from './evaluate.ts';
import { compareTieBreak, type Lattice, nearlyEqual } from './lattice.ts';

export interface SearchOutcome {
  readonly best: NodeResult;
  readonly nodesChecked: number;
  readonly strategy: string;
}

export const UNKNOWN = 0;
export const FEASIBLE = 1;
export const INFEASIBLE = -1;

/**
 * Feasibility by predictive tagging over a lattice (only sound when the models are
 * monotonic): a checked feasible node tags all its generalizations feasible, an infeasible
 * one all its specializations infeasible. Shared by the optimal and the k-minimal searches.
 */
export class Tagger {
  readonly tags: Int8Array;
  readonly results = new Map<number, NodeResult>();

  /**
   * `feasible` overrides what a check decides with (default: a full evaluation); a cheaper
   * monotonic predicate tags by that predicate instead (k-anonymity alone, say).
   */
  constructor(
    private readonly evaluator: NodeEvaluator,
    private readonly monotonic: boolean,
    private readonly onEvaluated: (r: NodeResult) => void = () => {},
    private readonly feasible?: (id: number) => boolean,
  ) {
    this.tags = new Int8Array(evaluator.problem.lattice.size);
  }

  evaluate(id: number): NodeResult {
    let r = this.results.get(id);
    if (!r) {
      r = this.evaluator.evaluate(id);
      this.results.set(id, r);
      this.onEvaluated(r);
    }
    return r;
  }

  check(id: number): boolean {
    const feasible = this.feasible ? this.feasible(id) : this.evaluate(id).feasible;
    if (this.monotonic) {
      const lattice = this.evaluator.problem.lattice;
      if (feasible) spread(lattice, this.tags, id, FEASIBLE, 'up');
      else spread(lattice, this.tags, id, INFEASIBLE, 'down');
    }
    return feasible;
  }

  /**
   * Binary search of a chain for its lowest feasible node. `skip` names nodes not worth a
   * check any more (e.g. bounds learnt on the way rule them out): the search passes above them.
   */
  searchPath(path: readonly number[], skip?: (id: number) => boolean): void {
    let lo = 0;
    let hi = path.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const id = path[mid]!;
      const tag = this.tags[id];
      if (tag === UNKNOWN && skip?.(id)) lo = mid + 1;
      else if (tag === UNKNOWN ? this.check(id) : tag === FEASIBLE) hi = mid - 1;
      else lo = mid + 1;
    }
  }

  /** A chain upwards from `start` through untagged nodes that `allowed` admits, cheapest first. */
  pathFrom(start: number, allowed: (id: number) => boolean, cost: Float64Array): number[] {
    const lattice = this.evaluator.problem.lattice;
    const path = [start];
    for (;;) {
      let next = -1;
      const last = path.at(-1)!;
      for (let i = 0; i < lattice.m; i++) {
        const s = lattice.up(last, i);
        if (s < 0 || this.tags[s] !== UNKNOWN || !allowed(s)) continue;
        if (next < 0 || cost[s]! < cost[next]!) next = s;
      }
      if (next < 0) return path;
      path.push(next);
    }
  }
}

/** Sets `tags` to `value` from `start` through all its generalizations (up) or specializations. */
function spread(lattice: Lattice, tags: Int8Array, start: number, value: number, dir: 'up' | 'down'): void {
  const walk = WALK.start(start);
  while (walk.top > 0) {
    const id = walk.pop();
    if (tags[id] === value) continue;
    tags[id] = value;
    walk.pushNeighbours(lattice, id, dir);
  }
}

/**
 * Raises `values` to at least `v` from `start` through its generalizations (up) or
 * specializations, stopping where already higher.
 */
function raise(lattice: Lattice, values: Float64Array, start: number, v: number, dir: 'up' | 'down'): void {
  const walk = WALK.start(start);
  while (walk.top > 0) {
    const id = walk.pop();
    if (values[id]! >= v) continue;
    values[id] = v;
    walk.pushNeighbours(lattice, id, dir);
  }
}

/**
 * The stack of the walks above, typed and reused (a walk runs to its end before the next
 * starts): a JS array and a callback per node cost more than the walks' own work.
 */
class WalkStack {
  private cells = new Int32Array(1024);
  top = 0;

  start(id: number): this {
    this.top = 0;
    this.cells[this.top++] = id;
    return this;
  }

  pop(): number {
    return this.cells[--this.top]!;
  }

  pushNeighbours(lattice: Lattice, id: number, dir: 'up' | 'down'): void {
    if (this.top + lattice.m > this.cells.length) {
      const more = new Int32Array(2 * (this.top + lattice.m));
      more.set(this.cells.subarray(0, this.top));
      this.cells = more;
    }
    for (let i = 0; i < lattice.m; i++) {
      const n = dir === 'up' ? lattice.up(id, i) : lattice.down(id, i);
      if (n >= 0) this.cells[this.top++] = n;
    }
  }
}
const WALK = new WalkStack();

export function optimalSearch(evaluator: NodeEvaluator): SearchOutcome {
  const { lattice, metrics, metric, maxSuppressedRows } = evaluator.problem;
  const monotonic = prunable(evaluator.problem);
  const apriori = new Float64Array(lattice.size);
  for (let id = 0; id < lattice.size; id++) apriori[id] = metrics.aprioriBound(metric, lattice.levels(id));
  // Bounds learnt from evaluated nodes: `fromBelow` holds for every generalization of an
  // evaluated node (classes only merge upwards); `carried` is what suppression at an
  // evaluated node costs all its specializations (monotonic models only).
  const fromBelow = new Float64Array(lattice.size);
  const carried = new Float64Array(lattice.size);
  // Discernibility under k-anonymity alone: a class of at least k rows at an evaluated node
  // stays inside a released class at every generalization, and a row in a class below k at an
  // evaluated node is suppressed at every specialization. Released and suppressed rows are
  // disjoint, so their two costs add: Σ|E|² over the big classes below, N per row above.
  // Without suppression it teaches nothing: a node below one with rows in small classes is
  // tagged infeasible, and the big classes' squares never pass `fromBelow`.
  const split =
    metric === 'discernibility' &&
    maxSuppressedRows > 0 &&
    evaluator.problem.models.every((m) => m.spec.model === K_ANONYMITY.name);
  const bigSquares = split ? new Float64Array(lattice.size) : undefined;
  const rowsBelowKAbove = split ? new Float64Array(lattice.size) : undefined;
  let best: NodeResult | undefined;

  const tagger = new Tagger(evaluator, monotonic, (r) => {
    // Discernibility's grouping bound is Σ|E|² over every class, which evaluation counted.
    const up =
      metric === 'discernibility'
        ? (r.retainedSquares ?? 0) + r.suppressedSquares
        : metrics.groupingBound(metric, r, maxSuppressedRows);
    if (up > 0) raise(lattice, fromBelow, r.id, up, 'up');
    if (monotonic && r.feasible && r.suppressedRows > 0) {
      const carry = metrics.suppressionCarry(metric, r.levels, r.values, r.suppressedRows);
      if (carry > 0) raise(lattice, carried, r.id, carry, 'down');
    }
    if (bigSquares && rowsBelowKAbove) {
      // k alone: the retained classes are those of at least k rows, the suppressed the others.
      raise(lattice, bigSquares, r.id, r.retainedSquares ?? 0, 'up');
      raise(lattice, rowsBelowKAbove, r.id, r.suppressedRows, 'down');
    }
    if (r.feasible && (!best || isBetter(r, best, (a, b) => compareTieBreak(lattice, a, b)))) best = r;
  });
  const { tags } = tagger;
  const lowerBound = (id: number) => {
    let bound = Math.max(apriori[id]!, fromBelow[id]!);
    if (carried[id]! > 0)
      bound = Math.max(bound, metrics.suppressionBound(metric, lattice.levels(id), carried[id]!));
    if (bigSquares && rowsBelowKAbove)
      bound = Math.max(bound, bigSquares[id]! + evaluator.problem.rows * rowsBelowKAbove[id]!);
    return bound;
  };
  /** No node with this lower bound can beat the incumbent. */
  const beaten = (id: number, bound: number) => {
    if (!best) return false;
    const tie = nearlyEqual(bound, best.value);
    return (bound > best.value && !tie) || (tie && compareTieBreak(lattice, id, best.id) >= 0);
  };
  const promising = (id: number) => !beaten(id, lowerBound(id));

  const order = bottomUp(lattice, apriori);
  // Where the walks of phase 1 start, top first or bottom first, changes only how many nodes
  // they check, never the optimum. Measured on Adult (bench/arx.ts): with a metric whose
  // suppression penalty is capped by the top level's cost (NCP, precision), or for entropy and
  // AECS without suppression, starting at the top checks 2–4× fewer nodes; discernibility
  // always, and entropy and AECS under suppression, check fewer or cheaper nodes bottom first.
  const topFirst =
    metric === 'ncp' || metric === 'precision' || (maxSuppressedRows === 0 && metric !== 'discernibility');
  // Infeasibility known before phase 2: by the models' own tagging when they are monotonic,
  // else by class sizes alone (classes smaller than any model lets pass are suppressed at a
  // node and all its specializations), tagged with checks that only group.
  let infeasible = tags;
  if (monotonic) {
    // An incumbent first, from the cheapest chain bottom to top: it bounds the region worth
    // tagging to the nodes whose lower bound is below its value.
    tagger.searchPath(tagger.pathFrom(0, promising, apriori));
    // Phase 1: predictive tagging within that region.
    for (let j = 0; j < order.length; j++) {
      const start = order[topFirst ? order.length - 1 - j : j]!;
      if (tags[start] === UNKNOWN && promising(start))
        tagger.searchPath(tagger.pathFrom(start, promising, apriori), (id) => !promising(id));
    }
  } else if (requiresK(evaluator)) {
    const byK = new Tagger(evaluator, true, undefined, (id) => evaluator.forcedWithinLimit(id));
    for (const start of order) {
      if (byK.tags[start] === UNKNOWN) byK.searchPath(byK.pathFrom(start, () => true, apriori));
    }
    infeasible = byK.tags;
  }

  // Phase 2: the candidates left (feasible or unknown, not evaluated), in order of their
  // lower bound, skipping those that a bound learnt since rules out, and
  // those whose grouping alone (the too-small classes suppressed) already costs too much.
  // In order of the lower bound known now (phase 1's evaluations raised many above the a-priori
  // one): the best release turns up sooner and prunes more of the rest. Bounds only rise, so
  // once a candidate's bound at sorting passes the best value, so do all later ones': those
  // (the loop below would stop at the first) are left out before sorting.
  const sortedBound = new Float64Array(lattice.size);
  const candidates: number[] = [];
  for (let id = 0; id < lattice.size; id++) {
    if (infeasible[id] === INFEASIBLE || tagger.results.has(id)) continue;
    const bound = lowerBound(id);
    sortedBound[id] = bound;
    if (!(best && bound > best.value && !nearlyEqual(bound, best.value))) candidates.push(id);
  }
  candidates.sort((a, b) => sortedBound[a]! - sortedBound[b]! || compareTieBreak(lattice, a, b));
  for (const id of candidates) {
    // Sorted: once the bound passes the best value (beyond a tie: a tie's later nodes may still
    // win on the tie-break), no later node can win.
    if (best && sortedBound[id]! > best.value && !nearlyEqual(sortedBound[id]!, best.value)) break;
    if (tags[id] === INFEASIBLE || !promising(id)) continue;
    // (With k alone that bound is the node's value: checking it costs no more.)
    if (best && evaluator.judgesBeyondK && beaten(id, evaluator.groupingBound(id))) continue;
    tagger.check(id);
  }
  if (!best) throw noSolution(evaluator);
  return {
    best,
    nodesChecked: evaluator.checked,
    strategy: monotonic ? 'optimal (flash + bound)' : 'optimal (bound)',
  };
}

/** Nodes by level sum, then by a cost, then by id: the bottom-up order of the walks. */
export function bottomUp(lattice: Lattice, cost: Float64Array): number[] {
  const n = lattice.size;
  const sums = new Int32Array(n);
  let maxSum = 0;
  for (let id = 0; id < n; id++) {
    sums[id] = lattice.levelSum(id);
    if (sums[id]! > maxSum) maxSum = sums[id]!;
  }
  if (cost.some(Number.isNaN))
    return Array.from({ length: n }, (_, id) => id).sort(
      (a, b) => sums[a]! - sums[b]! || cost[a]! - cost[b]! || a - b,
    );
  // The same order from one native sort of the costs and two stable counting sorts (by the
  // rank of the cost, then by the sum), ids ascending within ties: a comparator sort of the
  // whole lattice, or sorts of composite keys, cost more than the walks it orders.
  const sorted = Float64Array.from(cost).sort();
  const rank = new Int32Array(n);
  for (let id = 0; id < n; id++) {
    let lo = 0;
    let hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (sorted[mid]! < cost[id]!) lo = mid + 1;
      else hi = mid;
    }
    rank[id] = lo;
  }
  const byRank = countingSort(rank, n, null);
  return Array.from(countingSort(sums, maxSum + 1, byRank));
}

/**
 * `ids` (0..n−1 when null) reordered stably by `key[id]` ∈ [0, range): one counting sort.
 */
function countingSort(key: Int32Array, range: number, ids: Int32Array | null): Int32Array {
  const n = key.length;
  const start = new Int32Array(range + 1);
  for (let id = 0; id < n; id++) start[key[id]! + 1]!++;
  for (let v = 0; v < range; v++) start[v + 1]! += start[v]!;
  const out = new Int32Array(n);
  for (let j = 0; j < n; j++) {
    const id = ids ? ids[j]! : j;
    out[start[key[id]!]!++] = id;
  }
  return out;
}

/** Whether some class size fails every model (else tagging by class sizes prunes nothing). */
function requiresK(evaluator: NodeEvaluator): boolean {
  return smallestPassingClass(evaluator.problem.models) > 1;
}

/** Evaluates every node: the ground truth the search is tested against. */
export function exhaustiveSearch(evaluator: NodeEvaluator): SearchOutcome {
  const { lattice } = evaluator.problem;
  let best: NodeResult | undefined;
  for (let id = 0; id < lattice.size; id++) {
    const r = evaluator.evaluate(id);
    if (r.feasible && (!best || isBetter(r, best, (a, b) => compareTieBreak(lattice, a, b)))) best = r;
  }
  if (!best) throw noSolution(evaluator);
  return { best, nodesChecked: evaluator.checked, strategy: 'exhaustive' };
}

/**
 * Whether the search may prune by predictive tagging: every model monotonic under the
 * suppression the spec allows (SA models other than distinct l-diversity are monotonic only
 * when nothing may be suppressed).
 */
export function prunable(problem: GeneralizationProblem): boolean {
  return problem.models.every((m) =>
    problem.maxSuppressedRows === 0 ? m.monotonicWithoutSuppression : m.monotonic,
  );
}

/**
 * No node is feasible (possible for l, t and δ, never for k ≤ N): name the models that fail
 * and the best value each reaches, at the top node where every row is one class.
 */
export function noSolution(evaluator: NodeEvaluator): NoSolutionError {
  const { problem } = evaluator;
  // The top node: one class of every row, whose SA histograms are the table's; with an entity
  // column, of every person, each weighing 1 split over their rows (as the search counts them).
  const entity = problem.entity;
  const rowsOf = entity ? new Float64Array(entity.codes) : undefined;
  if (entity && rowsOf)
    for (let t = 0; t < entity.of.length; t++) rowsOf[entity.of[t]!]! += problem.counts[t]!;
  const wholeTable = (attribute: string | null): Int32Array | Float64Array | null => {
    const sa = problem.sensitive.find((x) => x.attribute === attribute);
    if (!sa) return null;
    if (entity && rowsOf) {
      const h = new Float64Array(sa.width);
      for (let t = 0; t < sa.values.length; t++)
        h[sa.values[t]!]! += problem.counts[t]! / rowsOf[entity.of[t]!]!;
      return h;
    }
    const h = new Int32Array(sa.width);
    for (let t = 0; t < sa.values.length; t++) h[sa.values[t]!]! += problem.counts[t]!;
    return h;
  };
  const failing = problem.models
    .map((model) => {
      const top = { size: entity ? entity.persons : problem.rows, histogram: wholeTable(model.attribute) };
      return { model, measure: model.measure(top), holds: model.holds(top) };
    })
    .filter((x) => !x.holds);
  const what = (
    failing.length > 0 ? failing : problem.models.map((model) => ({ model, measure: Number.NaN }))
  ).map(({ model, measure }) => {
    const spec = model.spec as unknown as Record<string, number | string>;
    const required = spec[model.measureName];
    return `${model.spec.model} ${model.measureName} = ${required}${
      Number.isNaN(measure)
        ? ''
        : entity
          ? ` (the top node, one class of all persons, reaches ${round(measure)}, counted over persons)`
          : ` (the top node, one class of all rows, reaches ${round(measure)})`
    }`;
  });
  return new NoSolutionError(
    'E_NO_SOLUTION',
    `no generalization satisfies ${what.join(' and ')} with at most ${
      entity
        ? `${entity.maxSuppressedPersons} persons with a suppressed row`
        : `${problem.maxSuppressedRows} suppressed rows`
    }`,
    `relax the model (e.g. a smaller l, though not below ${LEAST_PROTECTIVE_L}; a larger t or δ), allow more suppression, or coarsen the hierarchies`,
  );
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(4)) : x;
}

function isBetter(a: NodeResult, b: NodeResult, tieBreak: (a: number, b: number) => number): boolean {
  if (nearlyEqual(a.value, b.value)) return tieBreak(a.id, b.id) < 0;
  return a.value < b.value;
}
