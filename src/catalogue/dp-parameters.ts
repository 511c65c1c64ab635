/**
 * The parameters of (ε, δ)-differential privacy by sampling and generalization (SafePub: Bild,
 * Kuhn & Prasser, PoPETs 2018; Li, Qardaji & Su, ASIACCS 2012), derived as ARX 3.9.2 derives
 * them, in interval arithmetic whose every step rounds outwards by one ulp
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
const word = new BigInt64Array(bits.buffer);

/** The next double above `v` (Java's Math.nextAfter(v, +∞)). */
function nextUp(v: number): number {
  if (Number.isNaN(v) || v === Number.POSITIVE_INFINITY) return v;
  if (v === 0) return Number.MIN_VALUE;
  bits[0] = v;
  word[0] = v > 0 ? word[0]! + 1n : word[0]! - 1n;
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
  const v = [op(a.lo, b.lo), op(a.lo, b.hi), op(a.hi, b.lo), op(a.hi, b.hi)].map(finite);
  return closed(nextDown(Math.min(...v)), nextUp(Math.max(...v)));
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

/** P(X = k) for X ~ Binomial(n, p), by Loader's saddle-point expansion. */
function binomial(n: number, p: Interval, k: number): Interval {
  if (k < 0 || k > n) return ZERO;
  if (k === 0) return pow(sub(ONE, p), n);
  if (k === n) return pow(p, n);
  const N = point(n);
  const K = point(k);
  const NK = sub(N, K);
  const dev = add(mul(K, log(div(K, mul(N, p)))), mul(NK, log(div(NK, mul(N, sub(ONE, p))))));
  const term1 = sub(sub(stirlingError(N), stirlingError(K)), stirlingError(NK));
  const term2 = sqrt(div(N, mul(mul(mul(point(2), PI), K), NK)));
  return exp(sub(add(log(term2), term1), dev));
}

/** (β, k) for (ε, δ)-DP by sampling and generalization, as ARX derives them. */
export interface DpParameters {
  /** The sampling probability: each input row is kept with probability β. */
  readonly beta: number;
  /** Classes with fewer sampled rows than k are suppressed. */
  readonly k: number;
}

/**
 * β and k for (ε, δ) (ε the budget left for sampling, the whole ε with a given generalization).
 * Throws an Error when the interval arithmetic cannot decide (as ARX does).
 */
export function dpParameters(epsilon: number, delta: number): DpParameters {
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
