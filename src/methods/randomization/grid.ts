/**
 * The reference the optimizer is tested against (its acceptance test): the best point of a
 * grid with a fixed step on every parameter, found exhaustively. The only pruning is by the
 * objective, which falls as every diagonal grows: for a fixed prefix, values of the next
 * coordinate are tried from the largest down and the loop stops once the prefix alone is no
 * better than the best feasible point found — so the result is the exact grid optimum
 * whether or not the risk is monotone.
 *
 * With `monotone` (the risk grows with every diagonal, which tests check empirically) it also
 * skips a value whose completion with every later coordinate at its smallest grid value is
 * already infeasible, and finds the last coordinate by binary search: the same optimum in far
 * fewer evaluations.
 */

import { inverseNormFactor } from './matrices.ts';
import type { OptimizeProblem } from './optimize.ts';

export interface GridResult {
  /** Best feasible grid point (diagonals), or undefined when no grid point is feasible. */
  readonly diags: Float64Array | undefined;
  readonly objective: number;
  readonly evaluations: number;
}

/**
 * `values[i]` lists the diagonals tried for variable i; by default every multiple of `step`
 * in (loᵢ, hiᵢ] and hiᵢ itself. `limit` is the risk bound (τ unless given).
 */
export function gridSearch(
  problem: OptimizeProblem,
  options: { step?: number; values?: readonly number[][]; limit?: number; monotone?: boolean } = {},
): GridResult {
  const { step = 0.01, values, limit = problem.tau, monotone = false } = options;
  const vars = problem.variables;
  const k = vars.length;
  const grids =
    values ??
    vars.map((v) => {
      const out: number[] = [];
      for (let i = Math.floor(v.lo / step) + 1; i * step < v.hi - 1e-12; i++) {
        if (i * step > v.lo + 1e-12) out.push(Math.round(i * step * 1e9) / 1e9);
      }
      out.push(v.hi);
      return out;
    });
  const phi = grids.map((g, i) => g.map((p) => Math.log(inverseNormFactor(vars[i]!.d, p))));
  let best = Number.POSITIVE_INFINITY;
  let bestPoint: Float64Array | undefined;
  let evaluations = 0;
  const point = new Float64Array(k);
  const feasible = (p: Float64Array) => {
    evaluations++;
    return problem.maxRisk(p) <= limit;
  };
  const walk = (i: number, prefix: number) => {
    const g = grids[i]!;
    if (monotone && i === k - 1) {
      // largest feasible value by binary search, then the objective test
      let lo = -1;
      let hi = g.length - 1;
      while (lo < hi) {
        const mid = (lo + hi + 1) >> 1;
        point[i] = g[mid]!;
        if (feasible(point)) lo = mid;
        else hi = mid - 1;
      }
      if (lo >= 0 && prefix + phi[i]![lo]! < best) {
        best = prefix + phi[i]![lo]!;
        point[i] = g[lo]!;
        bestPoint = point.slice();
      }
      return;
    }
    for (let j = g.length - 1; j >= 0; j--) {
      const value = prefix + phi[i]![j]!;
      if (value >= best) return; // lower values of this coordinate are worse still
      point[i] = g[j]!;
      if (i < k - 1) {
        if (monotone) {
          const low = point.slice();
          for (let o = i + 1; o < k; o++) low[o] = grids[o]![0]!;
          if (!feasible(low)) continue;
        }
        walk(i + 1, value);
        continue;
      }
      if (feasible(point)) {
        best = value;
        bestPoint = point.slice();
        return;
      }
    }
  };
  if (k > 0) walk(0, 0);
  return { diags: bestPoint, objective: best, evaluations };
}
