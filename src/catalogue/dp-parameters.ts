/**
 * The parameters of (ε, δ)-differential privacy by sampling and generalization, derived as ARX
 * 3.9.2 derives them, in interval arithmetic whose every step rounds outwards by one ulp
 * (docs/definitions.md, "Differential privacy"):
 *
 *   β = 1 − e^(−ε)             (the lower end of its interval)
 *   γ = (e^ε − 1 + β) / e^ε
 *   a(n) = Σ_{j = ⌊nγ⌋+1}^{n} C(n, j) β^j (1 − β)^(n−j)       (Loader's saddle-point form)
 *   c(n) = exp(−n (γ ln(γ/β) − (γ − β)))
 *   δ(k) = max a(n) over n = ⌈k/γ − 1⌉, … until the running max is clearly above c(n)
 *   k    = one more than the first k' ≥ 1 whose δ(k') is clearly below δ
 *
 * Pure arithmetic on the spec's numbers: the models, the method and the verifier all read it
 * from here (the catalogue is the ground floor, it imports nothing).
 */

/** A closed interval [lo, hi] of doubles. */
interface Interval {
  readonly lo: number;
  readonly hi: number;
}

const bits = new Float64Array(1);
const halves = new Uint32Array(bits.buffer);
/** Where the low 32 bits of a double's representation sit (0 on little-endian machines). */
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/** The next double above `v` (Java's Math.nextAfter(v, +∞)). */
function nextUp(v: number): number {
  if (Number.isNaN(v) || v === Number.POSITIVE_INFINITY) return v;
  if (v === 0) return Number.MIN_VALUE;
  bits[0] = v;
  // The representation as a 64-bit magnitude: one more away from zero above 0, one less below.
  if (v > 0) {
    halves[LOW] = (halves[LOW]! + 1) >>> 0;
    if (halves[LOW] === 0) halves[HIGH] = (halves[HIGH]! + 1) >>> 0;
  } else {
    if (halves[LOW] === 0) halves[HIGH] = (halves[HIGH]! - 1) >>> 0;
    halves[LOW] = (halves[LOW]! - 1) >>> 0;
  }
  return bits[0]!;
}

/** The next double below `v` (Java's Math.nextAfter(v, −∞)). */
function nextDown(v: number): number {
  return -nextUp(-v);
}

class ParameterError extends Error {}

function finite(v: number): number {
  if (!Number.isFinite(v)) throw new ParameterError('numeric instability');
  return v;
}

function point(v: number): Interval {
  finite(v);
  return { lo: v, hi: v };
}

function closed(lo: number, hi: number): Interval {
  finite(lo);
  finite(hi);
  if (lo > hi) throw new ParameterError('invalid range');
  return { lo, hi };
}

function binary(a: Interval, b: Interval, op: (x: number, y: number) => number): Interval {
  const v0 = finite(op(a.lo, b.lo));
  const v1 = finite(op(a.lo, b.hi));
  const v2 = finite(op(a.hi, b.lo));
  const v3 = finite(op(a.hi, b.hi));
  return closed(nextDown(Math.min(v0, v1, v2, v3)), nextUp(Math.max(v0, v1, v2, v3)));
}

function unary(a: Interval, op: (x: number) => number): Interval {
  const v0 = finite(op(a.lo));
  const v1 = finite(op(a.hi));
  return closed(nextDown(Math.min(v0, v1)), nextUp(Math.max(v0, v1)));
}

const add = (a: Interval, b: Interval) => binary(a, b, (x, y) => x + y);
const sub = (a: Interval, b: Interval) => binary(a, b, (x, y) => x - y);
const mul = (a: Interval, b: Interval) => binary(a, b, (x, y) => x * y);
const div = (a: Interval, b: Interval) => binary(a, b, (x, y) => x / y);
const exp = (a: Interval) => unary(a, Math.exp);
const log = (a: Interval) => unary(a, Math.log);
const inv = (a: Interval) => unary(a, (x) => 1 / x);
const sqrt = (a: Interval) => unary(a, Math.sqrt);
const pow = (a: Interval, e: number) => unary(a, (x) => x ** e);

const ZERO = point(0);
const ONE = point(1);
const MINUS_ONE = point(-1);
const PI = point(Math.PI);
const TWO_PI = mul(point(2), PI);

/** a clearly below b; overlapping intervals cannot be decided. */
function below(a: Interval, b: Interval): boolean {
  if (!(a.hi < b.lo || b.hi < a.lo)) throw new ParameterError('undecidable comparison');
  return a.hi < b.lo;
}

function larger(a: Interval, b: Interval): Interval {
  if (a.hi === b.lo) return b;
  if (b.hi === a.lo) return a;
  if (!(a.hi < b.lo || b.hi < a.lo)) throw new ParameterError('undecidable comparison');
  return a.hi < b.lo ? b : a;
}

function toInt(v: number): number {
  if (v > 2147483647 || v < -2147483648) throw new ParameterError('value does not fit an integer');
  return v;
}

/** The error of Stirling's series at n, with the bound of its next term on both sides. */
function stirlingError(n: Interval): Interval {
  const base = sub(inv(mul(point(12), n)), inv(mul(point(360), pow(n, 3))));
  const bound = inv(mul(point(1260), pow(n, 5)));
  const offset = Math.max(Math.abs(bound.lo), Math.abs(bound.hi));
  return closed(nextDown(base.lo - offset), nextUp(base.hi + offset));
}

/**
 * Stirling's error at the whole number i (as a point), and at n − k computed as an interval
 * (`sub(point(n), point(k))`, which depends on n − k alone): the same values for every (n, p),
 * remembered, since the derivation asks for them O(n²) times.
 */
const stirlingAt = new Map<number, Interval>();
const stirlingOfDifference = new Map<number, Interval>();

function stirlingPoint(i: number): Interval {
  let v = stirlingAt.get(i);
  if (v === undefined) stirlingAt.set(i, (v = stirlingError(point(i))));
  return v;
}

function stirlingDifference(d: number, difference: Interval): Interval {
  let v = stirlingOfDifference.get(d);
  if (v === undefined) stirlingOfDifference.set(d, (v = stirlingError(difference)));
  return v;
}

/** P(X = k) for X ~ Binomial(n, p), by Loader's saddle-point expansion. */
function binomial(n: number, p: Interval, k: number): Interval {
  if (k < 0 || k > n) return ZERO;
  if (k === 0) return pow(sub(ONE, p), n);
  if (k === n) return pow(p, n);
  const N = point(n);
  const K = point(k);
  const NK = sub(N, K);
  const dev = add(mul(K, log(div(K, mul(N, p)))), mul(NK, log(div(NK, mul(N, sub(ONE, p))))));
  const term1 = sub(sub(stirlingPoint(n), stirlingPoint(k)), stirlingDifference(n - k, NK));
  const term2 = sqrt(div(N, mul(mul(TWO_PI, K), NK)));
  return exp(sub(add(log(term2), term1), dev));
}

/** (β, k) for (ε, δ)-DP by sampling and generalization, as ARX derives them. */
export interface DpParameters {
  /** The sampling probability: each input row is kept with probability β. */
  readonly beta: number;
  /** Classes with fewer sampled rows than k are suppressed. */
  readonly k: number;
}

/** Derived (ε, δ) pairs: the derivation takes seconds at large ε, and a release reads it several times. */
const derived = new Map<string, DpParameters>();

/**
 * β and k for (ε, δ) (ε the budget left for sampling, the whole ε with a given generalization).
 * Throws an Error when the interval arithmetic cannot decide (as ARX does).
 */
export function dpParameters(epsilon: number, delta: number): DpParameters {
  const key = `${epsilon}:${delta}`;
  let p = derived.get(key);
  if (p === undefined) {
    p = derive(epsilon, delta);
    derived.set(key, p);
  }
  return p;
}

/** dpParameters without the memory of derived pairs (what the benchmark times). */
export function derive(epsilon: number, delta: number): DpParameters {
  const eps = point(epsilon);
  const del = point(delta);
  const beta = sub(ONE, exp(mul(MINUS_ONE, eps)));
  const power = exp(eps);
  const gamma = div(add(sub(power, ONE), beta), power);
  const a = new Map<number, Interval>();
  const c = new Map<number, Interval>();
  const deltaOf = (k: number): Interval => {
    const first = toInt(Math.ceil(sub(div(point(k), gamma), ONE).lo));
    let worst = point(-Number.MAX_VALUE);
    let bound = point(Number.MAX_VALUE);
    for (let n = first; worst.lo <= bound.hi; n++) {
      if (!a.has(n)) {
        const from = toInt(Math.floor(mul(point(n), gamma).lo)) + 1;
        let sum = ZERO;
        for (let j = from; j <= n; j++) sum = add(sum, binomial(n, beta, j));
        a.set(n, sum);
        const t1 = mul(gamma, log(div(gamma, beta)));
        const t2 = sub(t1, sub(gamma, beta));
        c.set(n, exp(mul(MINUS_ONE, mul(point(n), t2))));
      }
      worst = larger(worst, a.get(n)!);
      bound = c.get(n)!;
    }
    return worst;
  };
  let k = 1;
  for (let dk = point(Number.MAX_VALUE); !below(dk, del); k++) dk = deltaOf(k);
  return { beta: beta.lo, k };
}

/**
 * How (ε, δ)-differential privacy spends ε, as ARX 3.9.2 splits it: with a private search,
 * ε_search = searchBudget · ε goes to the search, spent evenly over its steps (each step's
 * ε the lower end of ε_search / steps), and the sampling and suppression take the lower end of
 * ε − ε_search; with the node fixed in advance, all of ε goes to the sampling.
 */
export interface DpBudget {
  /** The ε that β and k are derived from. */
  readonly epsilonAnon: number;
  /** The ε of the search (0 with the node fixed in advance). */
  readonly epsilonSearch: number;
  /** The ε each search step's exponential mechanism spends (0 without a search). */
  readonly stepEpsilon: number;
  /** The search's largest number of steps (0 without a search). */
  readonly steps: number;
}

/** The split of ε; throws an Error when the interval arithmetic fails (as ARX does). */
export function dpBudget(epsilon: number, search?: { searchBudget: number; steps: number }): DpBudget {
  if (search === undefined) return { epsilonAnon: epsilon, epsilonSearch: 0, stepEpsilon: 0, steps: 0 };
  const epsilonSearch = search.searchBudget * epsilon;
  const epsilonAnon = sub(point(epsilon), point(epsilonSearch)).lo;
  const stepEpsilon = div(point(epsilonSearch), point(search.steps)).lo;
  if (!(epsilonAnon > 0) || !(stepEpsilon > 0)) throw new ParameterError('empty budget');
  return { epsilonAnon, epsilonSearch, stepEpsilon, steps: search.steps };
}
