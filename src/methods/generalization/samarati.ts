/**
 * Samarati & Sweeney's k-minimal generalization (Samarati & Sweeney), as the `k-minimal` strategy.
 *
 * A k-minimal generalization is a feasible node (k-anonymous with at most MaxSup rows
 * suppressed) with no feasible node strictly below it. Every k-minimal node dominates the
 * distance vector V(x, y) of some outlier x (a QI tuple occurring fewer than k times) and some
 * other tuple y — V(x, y)ᵢ being the level at which x's and y's values first meet. (If a node
 * dominated none, every outlier would be alone and suppressed there as at the bottom node,
 * which would then be feasible and below it.) The search:
 *
 * 1. computes the set of distance vectors between outliers and all tuples;
 * 2. builds the DAG of those vectors (an arc from each vector to the smallest vectors above
 *    it) and follows every path bottom-up until a feasible vector (a local minimum), keeping
 *    track of visited vectors — their algorithm;
 * 3. completes the feasibility of the nodes above the vectors by predictive tagging, and
 *    keeps the feasible nodes whose every direct specialization is infeasible.
 *
 * The preferred node among the k-minimal ones follows the spec's policy: minimum absolute
 * distance (Σ dᵢ), minimum relative distance (Σ dᵢ/hᵢ), maximum distribution (most distinct
 * released tuples), minimum suppression; ties fall to the spec's metric, then docs/definitions.md §6.
 */
import { K_ANONYMITY } from '../../catalogue/k-anonymity.ts';
import { SpecError } from '../../errors.ts';
import type { Preference } from '../../release-spec/spec.ts';
import type { NodeEvaluator, NodeResult } from './evaluate.ts';
import { compareTieBreak, type Lattice, nearlyEqual } from './lattice.ts';
import { bottomUp, FEASIBLE, INFEASIBLE, type SearchOutcome, Tagger, UNKNOWN } from './search.ts';

export interface KMinimalOutcome extends SearchOutcome {
  /** Every k-minimal node, in lattice order. */
  readonly kMinimal: NodeResult[];
  /** Distinct distance vectors between outliers and tuples. */
  readonly distanceVectors: number;
}

export function kMinimalSearch(
  evaluator: NodeEvaluator,
  levelTables: readonly Int32Array[][],
  tupleColumns: readonly Int32Array[],
  preference: Preference,
  specFile: string,
): KMinimalOutcome {
  const { problem } = evaluator;
  const { lattice } = problem;
  if (problem.models.some((m) => m.spec.model !== K_ANONYMITY.name)) {
    throw new SpecError(
      'E_SPEC_CONFLICT',
      `${specFile}: method.strategy 'k-minimal' (Samarati & Sweeney) is defined for k-anonymity alone`,
      'use "strategy": "optimal" with l-diversity, t-closeness or δ-disclosure',
    );
  }
  const k = problem.models.reduce(
    (acc, m) => Math.max(acc, m.spec.model === K_ANONYMITY.name ? m.spec.k : 1),
    1,
  );
  const tagger = new Tagger(evaluator, true);

  // 1. Distinct QI tuples at the bottom node, their counts, and the outliers among them.
  const bottom = tagger.evaluate(0);
  const representative = new Int32Array(bottom.groups).fill(-1);
  for (let t = 0; t < bottom.groupOf.length; t++) {
    if (representative[bottom.groupOf[t]!]! < 0) representative[bottom.groupOf[t]!] = t;
  }
  const qiTuples = tupleColumns.map((col) => Int32Array.from(representative, (t) => col[t]!));
  // (Outliers by persons with an entity column: a tuple of fewer than k persons.)
  const inV = distanceVectors(lattice, levelTables, bottom.persons ?? bottom.sizes, qiTuples, k);
  const vectors: number[] = [];
  for (let id = 0; id < lattice.size; id++) if (inV[id]) vectors.push(id);

  let kMinimal: NodeResult[];
  if (vectors.length === 0) {
    // No outliers: the bottom node is k-anonymous and the only k-minimal node.
    tagger.check(0);
    kMinimal = [bottom];
  } else {
    // 2. The seed's DAG walk: from the minimal vectors upwards along arcs to the smallest
    //    dominating vectors, stopping each path at its first feasible vector.
    const visited = new Uint8Array(lattice.size);
    // The smallest vectors above v: walk up the lattice from v, stopping at vectors.
    const above = (v: number) => {
      const found: number[] = [];
      const seen = new Set<number>([v]);
      const queue = lattice.successors(v);
      while (queue.length > 0) {
        const u = queue.pop()!;
        if (seen.has(u)) continue;
        seen.add(u);
        if (inV[u]) found.push(u);
        else queue.push(...lattice.successors(u));
      }
      return found.filter((u) => !found.some((w) => w !== u && lattice.dominatedBy(w, u)));
    };
    // Roots: vectors with no vector below them (walk down the lattice the same way).
    const hasVectorBelow = new Uint8Array(lattice.size);
    for (let id = 0; id < lattice.size; id++) {
      for (const p of lattice.predecessors(id)) if (inV[p] || hasVectorBelow[p]) hasVectorBelow[id] = 1;
    }
    const roots = vectors.filter((v) => !hasVectorBelow[v]);
    const stack = [...roots];
    while (stack.length > 0) {
      const v = stack.pop()!;
      if (visited[v]) continue;
      visited[v] = 1;
      const feasible = tagger.tags[v] === UNKNOWN ? tagger.check(v) : tagger.tags[v] === FEASIBLE;
      if (!feasible) for (const u of above(v)) if (!visited[u]) stack.push(u);
    }
    // 3. Complete feasibility above the vectors (nodes elsewhere dominate no vector and are
    //    infeasible), then keep the minimal feasible nodes.
    const upClosure = new Uint8Array(lattice.size);
    for (let id = 0; id < lattice.size; id++) {
      if (inV[id]) upClosure[id] = 1;
      else for (const p of lattice.predecessors(id)) if (upClosure[p]) upClosure[id] = 1;
    }
    const inClosure = (id: number) => upClosure[id] === 1;
    const cost = Float64Array.from({ length: lattice.size }, (_, id) => lattice.levelSum(id));
    for (const start of bottomUp(lattice, cost)) {
      if (inClosure(start) && tagger.tags[start] === UNKNOWN) {
        tagger.searchPath(tagger.pathFrom(start, inClosure, cost));
      }
    }
    kMinimal = [];
    for (let id = 0; id < lattice.size; id++) {
      if (!inClosure(id) || tagger.tags[id] !== FEASIBLE) continue;
      const minimal = lattice.predecessors(id).every((p) => !inClosure(p) || tagger.tags[p] === INFEASIBLE);
      if (minimal) kMinimal.push(tagger.evaluate(id));
    }
  }

  const best = preferred(lattice, preference, kMinimal);
  return {
    best,
    kMinimal,
    distanceVectors: vectors.length,
    nodesChecked: evaluator.checked,
    strategy: `k-minimal (Samarati, ${preference})`,
  };
}

/** Marks every distinct V(x, y) for outlier tuples x and all other tuples y. */
function distanceVectors(
  lattice: Lattice,
  levelTables: readonly Int32Array[][],
  counts: Int32Array,
  qiTuples: readonly Int32Array[],
  k: number,
): Uint8Array {
  const m = levelTables.length;
  const n = counts.length;
  const seen = new Uint8Array(lattice.size);
  const radix = Array.from({ length: m }, (_, i) => {
    const unit = new Array(m).fill(0);
    unit[i] = 1;
    return lattice.index(unit);
  });
  // contribution[i][code]: the lattice-index weight of the level where `code` meets x's value.
  const contribution = levelTables.map((tables) => new Int32Array(tables[0]!.length));
  const ids = new Int32Array(n);
  let found = 0;
  for (let x = 0; x < n; x++) {
    if (counts[x]! >= k) continue;
    ids.fill(0);
    for (let i = 0; i < m; i++) {
      const tables = levelTables[i]!;
      const own = qiTuples[i]![x]!;
      const out = contribution[i]!;
      for (let code = 0; code < out.length; code++) {
        let level = 0;
        while (tables[level]![code] !== tables[level]![own]) level++;
        out[code] = level * radix[i]!;
      }
      // Column by column: one tight loop per attribute over all tuples.
      const col = qiTuples[i]!;
      for (let y = 0; y < n; y++) ids[y]! += out[col[y]!]!;
    }
    for (let y = 0; y < n; y++) {
      if (y !== x && !seen[ids[y]!]) {
        seen[ids[y]!] = 1;
        // Every node but the bottom is a vector: nothing more to find.
        if (++found === lattice.size - 1) return seen;
      }
    }
  }
  return seen;
}

/** The node the policy prefers among k-minimal nodes. */
export function preferred(lattice: Lattice, policy: Preference, nodes: readonly NodeResult[]): NodeResult {
  return nodes.reduce((a, b) => (prefer(lattice, policy, b, a) ? b : a));
}

/** Whether `a` is preferred over `b` under the policy (then the metric, then docs/definitions.md §6). */
function prefer(lattice: Lattice, policy: Preference, a: NodeResult, b: NodeResult): boolean {
  const key = (r: NodeResult): number => {
    switch (policy) {
      case 'min-absolute-distance':
        return lattice.levelSum(r.id);
      case 'min-relative-distance':
        return lattice.relativeDistance(r.id);
      case 'max-distribution':
        return -r.retainedClasses;
      case 'min-suppression':
        return r.suppressedPersons ?? r.suppressedRows;
    }
  };
  const ka = key(a);
  const kb = key(b);
  if (!nearlyEqual(ka, kb)) return ka < kb;
  if (!nearlyEqual(a.value, b.value)) return a.value < b.value;
  return compareTieBreak(lattice, a.id, b.id) < 0;
}
