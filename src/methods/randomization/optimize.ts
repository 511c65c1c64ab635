/**
 * Optimal randomization parameters (docs/definitions.md §5, the attribute-disclosure paper, Problem 1 and Result 2): choose the
 * diagonals p₁..p_k of the randomized attributes' a·I + b·J matrices to minimize the expected
 * squared reconstruction error, which is proportional to Π ‖Pᵢ⁻¹‖²_F, subject to
 * max risk ≤ τ (and optional upper bounds, e.g. from (ρ1, ρ2)-privacy).
 *
 * The objective Σ ln(‖Pᵢ⁻¹‖²_F / dᵢ) falls as every pᵢ grows and the risk grows with them, so
 * the optimum lies on the constraint's boundary. The search works in normalized coordinates
 * uᵢ ∈ [0, 1] (pᵢ = loᵢ + uᵢ·(hiᵢ − loᵢ), loᵢ = 1/dᵢ): a point's boundary projection is the
 * farthest feasible point on its ray from 0 (`boundary`); Nelder–Mead over the projected
 * points from several starts, then a pattern search that trades one coordinate against
 * another along the boundary and pushes every coordinate as far as it stays feasible. Any
 * point it returns has been evaluated feasible; `gridSearch` (grid.ts) is the reference it
 * is tested against.
 */
import { NoSolutionError } from '../../errors.ts';
import { Random } from '../../util/random.ts';
import { runSteps, type Steps } from '../../util/steps.ts';
import { inverseNormFactor } from './matrices.ts';

export interface OptimizeVariable {
  readonly name: string;
  readonly d: number;
  /** Admissible diagonal range (lo = 1/d is singular and excluded). */
  readonly lo: number;
  readonly hi: number;
}

export interface OptimizeProblem {
  readonly variables: readonly OptimizeVariable[];
  readonly tau: number;
  /** Max risk over the rows for these diagonals (one per variable). */
  readonly maxRisk: (diags: Float64Array) => number;
  /**
   * The hint when no diagonals meet τ, given the least τ they could meet (the release's:
   * loosenHint, plan.ts); by default the least τ.
   */
  readonly hint?: ((leastTau: number) => string) | undefined;
}

export interface OptimizeResult {
  readonly diags: Float64Array;
  readonly maxRisk: number;
  /** Σ ln(‖Pᵢ⁻¹‖²_F / dᵢ) over the variables. */
  readonly objective: number;
  readonly evaluations: number;
}

/** Constraint slack kept so that an independent recomputation (other summation order) still passes. */
export const TAU_MARGIN = 1e-9;

export function objectiveOf(variables: readonly OptimizeVariable[], diags: Float64Array): number {
  let s = 0;
  variables.forEach((v, i) => {
    s += Math.log(inverseNormFactor(v.d, diags[i]!));
  });
  return s;
}

const U_MIN = 1e-9;
/** Boundary tolerances in u: while exploring, and for the answer. */
const COARSE = 1e-6;
const FINE = 1e-11;

export function optimizeParameters(problem: OptimizeProblem): OptimizeResult {
  return runSteps(optimizeSteps(problem));
}

/** The optimization, yielding after every risk evaluation (src/util/steps.ts). */
export function* optimizeSteps(problem: OptimizeProblem): Steps<OptimizeResult> {
  const { variables } = problem;
  const k = variables.length;
  const limit = problem.tau * (1 - TAU_MARGIN);
  let evaluations = 0;
  const toDiags = (u: Float64Array) =>
    Float64Array.from(variables, (v, i) => v.lo + Math.min(1, Math.max(U_MIN, u[i]!)) * (v.hi - v.lo));
  function* risk(u: Float64Array): Steps<number> {
    evaluations++;
    const r = problem.maxRisk(toDiags(u));
    yield;
    return r;
  }
  function* feasible(u: Float64Array): Steps<boolean> {
    return (yield* risk(u)) <= limit;
  }
  const objective = (u: Float64Array) => objectiveOf(variables, toDiags(u));
  const finish = (u: Float64Array): OptimizeResult => {
    const diags = toDiags(u);
    return { diags, maxRisk: problem.maxRisk(diags), objective: objectiveOf(variables, diags), evaluations };
  };

  const ones = new Float64Array(k).fill(1);
  // Every risk is a probability: τ ≥ 1 holds for any release. The identity's risk is the
  // input's group shares, computed exactly enough to need no margin below τ.
  if (k === 0 || problem.tau >= 1) return finish(ones);
  const onesRisk = yield* risk(ones);
  if (onesRisk <= problem.tau) return finish(ones);
  const floor = new Float64Array(k).fill(U_MIN);
  const floorRisk = yield* risk(floor);
  if (!(floorRisk <= limit)) {
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `no randomization of ${variables.map((v) => v.name).join(', ')} brings the maximum attribute-disclosure risk to τ = ${problem.tau}: the lowest reachable is ${floorRisk.toPrecision(4)}`,
      (problem.hint ?? ((least: number) => `raise τ to at least ${least.toPrecision(4)}`))(
        floorRisk / (1 - TAU_MARGIN),
      ),
    );
  }

  /** Largest s ∈ [0, 1] with s·w feasible (w scaled so that max wᵢ = 1), to within `tol`. */
  function* project(w: Float64Array, tol: number): Steps<Float64Array> {
    let top = 0;
    for (const x of w) top = Math.max(top, x);
    const dir = top > 0 ? w.map((x) => Math.max(0, x) / top) : new Float64Array(k).fill(1);
    const dirRisk = yield* risk(dir);
    if (dirRisk <= limit) return dir;
    const s = yield* boundary((t) => risk(dir.map((x) => x * t)), 0, floorRisk, 1, dirRisk, limit, tol);
    return dir.map((x) => Math.max(U_MIN, x * s));
  }

  /** Pushes coordinate i of a feasible u as far up as it stays feasible, to within `tol`. */
  function* push(u: Float64Array, i: number, tol: number): Steps<Float64Array> {
    const trial = u.slice();
    trial[i] = 1;
    const topRisk = yield* risk(trial);
    if (topRisk <= limit) return trial;
    // Bisection: regula falsi would first need u's own risk, one more evaluation, and the
    // bracket is short by then (the pattern search lowers a coordinate of a boundary point).
    let lo = u[i]!;
    let hi = 1;
    while (hi - lo > tol) {
      const mid = (lo + hi) / 2;
      trial[i] = mid;
      if (yield* feasible(trial)) lo = mid;
      else hi = mid;
    }
    trial[i] = lo;
    return trial;
  }
  function* pushAll(u: Float64Array, tol: number): Steps<Float64Array> {
    let x = u;
    for (let i = 0; i < k; i++) x = yield* push(x, i, tol);
    return x;
  }

  if (k === 1) {
    // Both ends' risks are known: one regula falsi search from the floor to 1.
    const at = (t: number) => risk(Float64Array.of(t));
    return finish(Float64Array.of(yield* boundary(at, U_MIN, floorRisk, 1, onesRisk, limit, FINE)));
  }

  // Nelder–Mead over directions; a direction's value is the objective of its boundary point.
  function* value(w: Float64Array): Steps<number> {
    return objective(yield* project(w, COARSE));
  }
  const rng = new Random(0x5eed);
  const starts: Float64Array[] = [ones.slice()];
  for (let i = 0; i < k; i++) {
    const w = new Float64Array(k).fill(0.5);
    w[i] = 1;
    starts.push(w);
  }
  for (let s = 0; s < 2; s++)
    starts.push(Float64Array.from({ length: k }, () => 0.05 + 0.95 * (rng.nextU32() / 2 ** 32)));

  let best = yield* pushAll(yield* project(ones, COARSE), COARSE);
  let bestValue = objective(best);
  for (const start of starts) {
    const w = yield* nelderMead(value, start, 0.25, 30 * k);
    const u = yield* pushAll(yield* project(w, COARSE), COARSE);
    const v = objective(u);
    if (v < bestValue) {
      best = u;
      bestValue = v;
    }
  }

  // Pattern search along the boundary: lower one coordinate by δ, push another up.
  for (let delta = 0.05; delta > 1e-7; ) {
    let improved = false;
    for (let j = 0; j < k; j++) {
      if (best[j]! - delta < U_MIN) continue;
      for (let i = 0; i < k; i++) {
        if (i === j) continue;
        const trial = best.slice();
        trial[j]! -= delta;
        const cand = yield* push(trial, i, Math.max(FINE, delta * 1e-3));
        const v = objective(cand);
        if (v < bestValue - 1e-14) {
          best = yield* pushAll(cand, Math.max(FINE, delta * 1e-3));
          bestValue = objective(best);
          improved = true;
        }
      }
    }
    if (!improved) delta /= 2;
  }
  best = yield* pushAll(best, FINE);
  // Variables that ended at their upper bound do not bind: fix them there and search the
  // others again (a smaller problem whose boundary the search above may have missed).
  const free = variables.map((_, i) => i).filter((i) => best[i]! < 1);
  if (free.length > 0 && free.length < k) {
    const fixed = toDiags(best);
    const sub = yield* optimizeSteps({
      variables: free.map((i) => variables[i]!),
      tau: problem.tau,
      hint: problem.hint,
      maxRisk: (diags) => {
        const all = fixed.slice();
        free.forEach((i, j) => {
          all[i] = diags[j]!;
        });
        return problem.maxRisk(all);
      },
    });
    evaluations += sub.evaluations;
    const candidate = best.slice();
    free.forEach((i, j) => {
      const v = variables[i]!;
      candidate[i] = (sub.diags[j]! - v.lo) / (v.hi - v.lo);
    });
    if (objective(candidate) < objective(best) && (yield* feasible(candidate))) best = candidate;
  }
  return finish(best);
}

/**
 * The largest t ∈ [lo, hi] with g(t) ≤ limit, to within `tol`, for g increasing with
 * g(lo) ≤ limit < g(hi): regula falsi with the Anderson–Björck correction (the end that stays
 * has its value scaled down, so both ends close in), a few evaluations where g is smooth where
 * bisection takes one per halving, and a bisection step whenever two steps in a row have not
 * halved the bracket (a kink of the max over the rows). With it the optimization of a
 * 500-value zip code took a third of the evaluations it took with bisection alone. The answer
 * is always a point evaluated feasible (or `lo`).
 */
function* boundary(
  g: (t: number) => Steps<number>,
  lo: number,
  gLo: number,
  hi: number,
  gHi: number,
  limit: number,
  tol: number,
): Steps<number> {
  let fLo = gLo - limit;
  let fHi = gHi - limit;
  /** The end the last step kept: its value is scaled when the next step keeps it again. */
  let kept: 'lo' | 'hi' | undefined;
  let slow = 0;
  while (hi - lo > tol) {
    const width = hi - lo;
    let t: number;
    if (slow >= 2 || !(fHi > fLo)) {
      t = (lo + hi) / 2;
      slow = 0;
      kept = undefined;
    } else {
      t = lo - (fLo * (hi - lo)) / (fHi - fLo);
      t = Math.min(hi - tol / 4, Math.max(lo + tol / 4, t));
    }
    const f = (yield* g(t)) - limit;
    if (f <= 0) {
      if (kept === 'hi') {
        const m = 1 - f / fLo;
        fHi *= m > 0 ? m : 0.5;
      }
      lo = t;
      fLo = f;
      kept = 'hi';
    } else {
      if (kept === 'lo') {
        const m = 1 - f / fHi;
        fLo *= m > 0 ? m : 0.5;
      }
      hi = t;
      fHi = f;
      kept = 'lo';
    }
    slow = hi - lo > width / 2 ? slow + 1 : 0;
  }
  return lo;
}

/** Nelder–Mead minimization in [0, 1]^k (points clamped), from `start` with initial step `step`. */
function* nelderMead(
  f: (x: Float64Array) => Steps<number>,
  start: Float64Array,
  step: number,
  iterations: number,
): Steps<Float64Array> {
  const k = start.length;
  const clamp = (x: Float64Array) => x.map((v) => Math.min(1, Math.max(0.001, v)));
  const simplex: { x: Float64Array; v: number }[] = [];
  const s0 = clamp(start);
  simplex.push({ x: s0, v: yield* f(s0) });
  for (let i = 0; i < k; i++) {
    const x = s0.slice();
    x[i] = x[i]! - step >= 0.001 ? x[i]! - step : x[i]! + step;
    const c = clamp(x);
    simplex.push({ x: c, v: yield* f(c) });
  }
  for (let it = 0; it < iterations; it++) {
    simplex.sort((a, b) => a.v - b.v);
    const worst = simplex[k]!;
    if (Math.abs(worst.v - simplex[0]!.v) < 1e-12) break;
    const centroid = new Float64Array(k);
    for (let i = 0; i < k; i++) for (let j = 0; j < k; j++) centroid[j]! += simplex[i]!.x[j]! / k;
    const along = (t: number) => clamp(centroid.map((c, j) => c + t * (worst.x[j]! - c)));
    const r = along(-1);
    const rv = yield* f(r);
    if (rv < simplex[0]!.v) {
      const e = along(-2);
      const ev = yield* f(e);
      simplex[k] = ev < rv ? { x: e, v: ev } : { x: r, v: rv };
    } else if (rv < simplex[k - 1]!.v) {
      simplex[k] = { x: r, v: rv };
    } else {
      const c = along(rv < worst.v ? -0.5 : 0.5);
      const cv = yield* f(c);
      if (cv < Math.min(rv, worst.v)) simplex[k] = { x: c, v: cv };
      else {
        const b = simplex[0]!.x;
        for (let i = 1; i <= k; i++) {
          const x = clamp(b.map((bj, j) => bj + 0.5 * (simplex[i]!.x[j]! - bj)));
          simplex[i] = { x, v: yield* f(x) };
        }
      }
    }
  }
  simplex.sort((a, b) => a.v - b.v);
  return simplex[0]!.x;
}
