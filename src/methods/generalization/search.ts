/**
 * Optimal full-domain generalization. Two phases:
 *
 * 1. Feasibility by predictive tagging (Flash-like; only when every model is monotonic):
 *    walk the lattice bottom-up, build a path upwards from each untagged node and
 *    binary-search it; a feasible node tags all its generalizations feasible, an infeasible
 *    one all its specializations infeasible.
 * 2. Branch and bound over the nodes not known infeasible, in order of a lower bound known
 *    before grouping (the metric with no suppression): stop once that bound exceeds the best
 *    value found, and skip nodes whose bound from an evaluated specialization already does.
 *
 * Suppression makes every metric non-monotonic (a generalization may release rows a
 * specialization suppressed), which is why phase 1 alone — the minimal feasible nodes — is
 * not enough, and phase 2 compares values, not just feasibility.
 */

import type { NodeEvaluator, NodeResult } from './evaluate.ts';
import { compareTieBreak, nearlyEqual } from './lattice.ts';

export interface SearchOutcome {
  readonly best: NodeResult;
  readonly nodesChecked: number;
  readonly strategy: string;
}

const UNKNOWN = 0;
const FEASIBLE = 1;
const INFEASIBLE = -1;

export function optimalSearch(evaluator: NodeEvaluator): SearchOutcome {
  const { lattice, metrics, metric, models, maxSuppressedRows } = evaluator.problem;
  const monotonic = models.every((m) => m.monotonic);
  const tags = new Int8Array(lattice.size);
  const cache = new Map<number, NodeResult>();
  const apriori = new Float64Array(lattice.size);
  for (let id = 0; id < lattice.size; id++) apriori[id] = metrics.aprioriBound(metric, lattice.levels(id));
  // Bounds learnt from evaluated nodes: `fromBelow` holds for every generalization of an
  // evaluated node (classes only merge upwards); `carried` is what suppression at an
  // evaluated node costs all its specializations (monotonic models only).
  const fromBelow = new Float64Array(lattice.size);
  const carried = new Float64Array(lattice.size);

  /** Raises `values` to at least `v` from `start` through `next`, stopping where already higher. */
  const spread = (values: Float64Array, start: number, v: number, next: (id: number) => number[]) => {
    const stack = [start];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (values[id]! >= v) continue;
      values[id] = v;
      for (const n of next(id)) if (values[n]! < v) stack.push(n);
    }
  };
  const lowerBound = (id: number) => {
    let bound = Math.max(apriori[id]!, fromBelow[id]!);
    if (carried[id]! > 0)
      bound = Math.max(bound, metrics.suppressionBound(metric, lattice.levels(id), carried[id]!));
    return bound;
  };

  const evaluate = (id: number): NodeResult => {
    let r = cache.get(id);
    if (!r) {
      r = evaluator.evaluate(id);
      cache.set(id, r);
      const up = metrics.groupingBound(metric, r, maxSuppressedRows);
      if (up > 0) spread(fromBelow, id, up, (x) => lattice.successors(x));
      if (monotonic && r.feasible && r.suppressedRows > 0) {
        const carry = metrics.suppressionCarry(metric, r.levels, r.values, r.suppressedRows);
        if (carry > 0) spread(carried, id, carry, (x) => lattice.predecessors(x));
      }
    }
    return r;
  };
  const tag = (start: number, value: number, next: (id: number) => number[]) => {
    const stack = [start];
    while (stack.length > 0) {
      const id = stack.pop()!;
      if (tags[id] === value) continue;
      tags[id] = value;
      for (const n of next(id)) if (tags[n] !== value) stack.push(n);
    }
  };
  const check = (id: number): boolean => {
    const r = evaluate(id);
    if (monotonic) {
      if (r.feasible) tag(id, FEASIBLE, (x) => lattice.successors(x));
      else tag(id, INFEASIBLE, (x) => lattice.predecessors(x));
    }
    if (r.feasible && (!best || isBetter(r, best, (a, b) => compareTieBreak(lattice, a, b)))) best = r;
    return r.feasible;
  };

  let best: NodeResult | undefined;
  /** No node with this lower bound can beat the incumbent. */
  const beaten = (id: number, bound: number) => {
    if (!best) return false;
    const tie = nearlyEqual(bound, best.value);
    return (bound > best.value && !tie) || (tie && compareTieBreak(lattice, id, best.id) >= 0);
  };
  /** Binary search of a chain for its lowest feasible node. */
  const searchPath = (path: number[]) => {
    let lo = 0;
    let hi = path.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const id = path[mid]!;
      if (tags[id] === UNKNOWN ? check(id) : tags[id] === FEASIBLE) hi = mid - 1;
      else lo = mid + 1;
    }
  };
  /** A chain upwards from `start` through untagged nodes that could still beat the incumbent. */
  const pathFrom = (start: number) => {
    const path = [start];
    for (;;) {
      let next = -1;
      for (const s of lattice.successors(path.at(-1)!)) {
        if (tags[s] !== UNKNOWN || beaten(s, lowerBound(s))) continue;
        if (next < 0 || apriori[s]! < apriori[next]!) next = s;
      }
      if (next < 0) return path;
      path.push(next);
    }
  };

  if (monotonic) {
    // An incumbent first, from the cheapest chain bottom to top: it bounds the region worth
    // tagging to the nodes whose lower bound is below its value.
    searchPath(pathFrom(0));
    // Phase 1: predictive tagging within that region, bottom-up.
    const bottomUp = Array.from({ length: lattice.size }, (_, id) => id).sort(
      (a, b) => lattice.levelSum(a) - lattice.levelSum(b) || apriori[a]! - apriori[b]! || a - b,
    );
    for (const start of bottomUp) {
      if (tags[start] === UNKNOWN && !beaten(start, lowerBound(start))) searchPath(pathFrom(start));
    }
  }

  // Phase 2: the candidates left (feasible or unknown, not evaluated), in order of their
  // a-priori bound, skipping those that a bound learnt from evaluated nodes rules out.
  const candidates: number[] = [];
  for (let id = 0; id < lattice.size; id++)
    if (tags[id] !== INFEASIBLE && !cache.has(id)) candidates.push(id);
  candidates.sort((a, b) => apriori[a]! - apriori[b]! || compareTieBreak(lattice, a, b));
  for (const id of candidates) {
    if (beaten(id, apriori[id]!) && apriori[id]! > best!.value) break; // sorted: none later can win
    if (tags[id] !== INFEASIBLE && !beaten(id, lowerBound(id))) check(id);
  }
  if (!best) throw new Error('no feasible node: the privacy models admit no generalization');
  return {
    best,
    nodesChecked: evaluator.checked,
    strategy: monotonic ? 'optimal (flash + bound)' : 'optimal (bound)',
  };
}

/** Evaluates every node: the ground truth the search is tested against. */
export function exhaustiveSearch(evaluator: NodeEvaluator): SearchOutcome {
  const { lattice } = evaluator.problem;
  let best: NodeResult | undefined;
  for (let id = 0; id < lattice.size; id++) {
    const r = evaluator.evaluate(id);
    if (r.feasible && (!best || isBetter(r, best, (a, b) => compareTieBreak(lattice, a, b)))) best = r;
  }
  if (!best) throw new Error('no feasible node: the privacy models admit no generalization');
  return { best, nodesChecked: evaluator.checked, strategy: 'exhaustive' };
}

function isBetter(a: NodeResult, b: NodeResult, tieBreak: (a: number, b: number) => number): boolean {
  if (nearlyEqual(a.value, b.value)) return tieBreak(a.id, b.id) < 0;
  return a.value < b.value;
}
