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
export interface Interval {
  readonly lo: number;
  readonly hi: number;
}

const bits = new Float64Array(1);
const halves = new Uint32Array(bits.buffer);
/** Where the low 32 bits of a double's representation sit (0 on little-endian machines). */
const LOW = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1 ? 0 : 1;
const HIGH = 1 - LOW;

/**
 * Past this magnitude (2^-960) `v + |v|·PHI` rounds to the next double above v, exactly, and
 * `v − |v|·PHI` to the one below: with PHI = 2^-53 + 2^-105, |v|·PHI is a normal double just over
 * half an ulp of v and under one ulp and a half, so rounding to nearest lands on the neighbour (the
 * derivation's hottest step: no trip through the representation). Below it, and for 0, NaN and
 * ±∞, the bits are stepped instead.
 */
const FAST_FROM = 2 ** -960;
const PHI = 2 ** -53 + 2 ** -105;
/** Under this magnitude (2^1023) the neighbour is finite too. */
const TOP = 2 ** 1023;

/** The next double above `v` (Java's Math.nextAfter(v, +∞)). */
function nextUp(v: number): number {
  const magnitude = Math.abs(v);
  // (NaN and ±∞ fail the second test and step through the bits as before.)
  if (magnitude >= FAST_FROM && magnitude <= Number.MAX_VALUE) return v + magnitude * PHI;
  return nextUpByBits(v);
}

/** nextUp through the representation: the slow, obviously exact path (its test compares the two). */
export function nextUpByBits(v: number): number {
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
  const magnitude = Math.abs(v);
  if (magnitude >= FAST_FROM && magnitude <= Number.MAX_VALUE) return v - magnitude * PHI;
  return -nextUpByBits(-v);
}

/** The fast nextUp and nextDown, exported for their test against the bits. */
export const nextAfter = { up: nextUp, down: nextDown };

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
const pow = (a: Interval, e: number) => unary(a, (x) => x ** e);

const ONE = point(1);
const MINUS_ONE = point(-1);
const PI = point(Math.PI);
const TWO_PI = mul(point(2), PI);

/** a clearly below b; overlapping intervals cannot be decided. */
function below(a: Interval, b: Interval): boolean {
  if (!(a.hi < b.lo || b.hi < a.lo)) throw new ParameterError('undecidable comparison');
  return a.hi < b.lo;
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

/*
 * The sum a(n) asks for O(n²) binomial terms: they are computed on bare doubles, the same
 * operations in the same order as the Interval functions above (each result's ends rounded
 * outwards by one ulp), without an object per step. Each operation leaves its interval in
 * `out` (a typed array: a module-level number would be boxed anew on every write).
 */
const out = new Float64Array(2);

/** The interval spanning four candidate ends, rounded outwards (as `binary` and `closed`). */
function span4(v0: number, v1: number, v2: number, v3: number): void {
  out[0] = finite(nextDown(Math.min(v0, v1, v2, v3)));
  out[1] = finite(nextUp(Math.max(v0, v1, v2, v3)));
}

/** The interval spanning two candidate ends, rounded outwards (as `unary` and `closed`). */
function span2(v0: number, v1: number): void {
  out[0] = finite(nextDown(Math.min(v0, v1)));
  out[1] = finite(nextUp(Math.max(v0, v1)));
}

/** Sums and differences are monotonic in each argument: their ends are the span's min and max. */
const addTo = (al: number, ah: number, bl: number, bh: number) => span2(al + bl, ah + bh);
const subTo = (al: number, ah: number, bl: number, bh: number) => span2(al - bh, ah - bl);
const mulTo = (al: number, ah: number, bl: number, bh: number) => span4(al * bl, al * bh, ah * bl, ah * bh);
const divTo = (al: number, ah: number, bl: number, bh: number) => span4(al / bl, al / bh, ah / bl, ah / bh);

/**
 * Stirling's error at the whole number i (as a point), and at n − k computed as an interval
 * (`sub(point(n), point(k))`, which depends on n − k alone): the same values for every (n, p),
 * remembered (ends at 2i and 2i + 1), since the derivation asks for them O(n²) times.
 */
let stirlingAt = new Float64Array(0);
let stirlingOfDifference = new Float64Array(0);
/** How many whole numbers each table holds (the tables are filled from 1 up). */
let stirlingKnown = 0;

/** Fills the Stirling tables for 1 … n. */
function stirlingUpTo(n: number): void {
  if (n <= stirlingKnown) return;
  const size = Math.max(n + 1, 2 * stirlingKnown);
  const at = new Float64Array(2 * size);
  const ofDifference = new Float64Array(2 * size);
  at.set(stirlingAt);
  ofDifference.set(stirlingOfDifference);
  for (let i = stirlingKnown + 1; i < size; i++) {
    const s = stirlingError(point(i));
    at[2 * i] = s.lo;
    at[2 * i + 1] = s.hi;
    // n − k as the binomial computes it: [n − k] rounded outwards, whatever n and k.
    const d = stirlingError(closed(nextDown(i), nextUp(i)));
    ofDifference[2 * i] = d.lo;
    ofDifference[2 * i + 1] = d.hi;
  }
  stirlingAt = at;
  stirlingOfDifference = ofDifference;
  stirlingKnown = size - 1;
}

/**
 * a(n) = Σ_{j = from}^{to} P(X = j) for X ~ Binomial(n, p) (to = n: the tail), each term by
 * Loader's saddle-point expansion, summed in interval arithmetic from j = from up (exported for
 * its test).
 */
export function binomialTail(n: number, p: Interval, from: number, to = n): Interval {
  // The derivation's p is β, well inside (0, 1): the fast loop below. Anything else, the
  // step-by-step one.
  return p.lo > FAST_FROM && p.hi < 1
    ? binomialTailPositive(n, p, from, to)
    : binomialTailReference(n, p, from, to);
}

/** `finite(nextUp(v))` in one step: the fast successor where it is exact, else the bits and the check. */
function upChecked(v: number): number {
  const magnitude = Math.abs(v);
  if (magnitude >= FAST_FROM && magnitude < TOP) return v + magnitude * PHI;
  return finite(nextUpByBits(v));
}

/** `finite(nextDown(v))` in one step. */
function downChecked(v: number): number {
  const magnitude = Math.abs(v);
  if (magnitude >= FAST_FROM && magnitude < TOP) return v - magnitude * PHI;
  return finite(-nextUpByBits(-v));
}

/** 2π·i as an interval (`mul(TWO_PI, point(i))`), ends at 2i and 2i + 1, remembered as the Stirling terms are. */
let twoPiTimes = new Float64Array(0);

function twoPiUpTo(n: number): void {
  const known = twoPiTimes.length / 2 - 1;
  if (n <= known) return;
  const size = Math.max(n + 1, 2 * (known + 1));
  const table = new Float64Array(2 * size);
  table.set(twoPiTimes);
  for (let i = Math.max(0, known + 1); i < size; i++) {
    table[2 * i] = downChecked(TWO_PI.lo * i);
    table[2 * i + 1] = upChecked(TWO_PI.hi * i);
  }
  twoPiTimes = table;
}

/**
 * binomialTail for 2^-960 < p.lo ≤ p.hi < 1: every operation the reference makes, rounded to the
 * same ends, but with the outward steps written out as the fast successor (no call: too many
 * calls in one loop stop V8 from inlining them), the ends of products and quotients of positive
 * intervals taken where they must lie (rounding to nearest is monotonic: a·c ≤ b·c for a ≤ b,
 * c > 0) instead of the least and greatest of four, and 2π·k from a table. The fast successor is
 * exact for magnitudes in [2^-960, 2^1023): the least and greatest magnitude stepped are kept,
 * and a sum that stepped any other (or NaN) is done again by the reference, whose checks then
 * decide. Its test holds it to the reference bit for bit.
 */
function binomialTailPositive(n: number, p: Interval, from: number, to: number): Interval {
  stirlingUpTo(n);
  twoPiUpTo(n);
  const sAt = stirlingAt;
  const sDiff = stirlingOfDifference;
  const twoPi = twoPiTimes;
  const pLo = p.lo;
  const pHi = p.hi;
  let least = Number.POSITIVE_INFINITY;
  let most = 0;
  // x − |x|·PHI is x's next double below, x + |x|·PHI the next above (for magnitudes in range).
  let a = n * pLo;
  let b = n * pHi;
  least = Math.min(least, Math.abs(a), Math.abs(b));
  most = Math.max(most, Math.abs(a), Math.abs(b));
  const npLo = a - Math.abs(a) * PHI;
  const npHi = b + Math.abs(b) * PHI;
  a = 1 - pHi;
  b = 1 - pLo;
  least = Math.min(least, Math.abs(a), Math.abs(b));
  most = Math.max(most, Math.abs(a), Math.abs(b));
  const qLo = a - Math.abs(a) * PHI;
  const qHi = b + Math.abs(b) * PHI;
  a = n * qLo;
  b = n * qHi;
  least = Math.min(least, Math.abs(a), Math.abs(b));
  most = Math.max(most, Math.abs(a), Math.abs(b));
  const nqLo = a - Math.abs(a) * PHI;
  const nqHi = b + Math.abs(b) * PHI;
  const snLo = sAt[2 * n]!;
  const snHi = sAt[2 * n + 1]!;
  let sumLo = 0;
  let sumHi = 0;
  for (let k = from; k <= to; k++) {
    let tLo = 0;
    let tHi = 0;
    if (k < 0) {
      // P(X = k) = 0
    } else if (k === 0 || k === n) {
      // (1 − p)^n or p^n
      const x = (k === 0 ? qLo : pLo) ** n;
      const y = (k === 0 ? qHi : pHi) ** n;
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      tLo = a - Math.abs(a) * PHI;
      tHi = b + Math.abs(b) * PHI;
    } else {
      // NK = N − K, a whole number ≥ 1
      a = n - k;
      least = Math.min(least, a);
      most = Math.max(most, a);
      const nkLo = a - a * PHI;
      const nkHi = a + a * PHI;
      // dev = K·log(K / Np) + NK·log(NK / Nq)
      a = k / npHi;
      b = k / npLo;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      let x = Math.log(a - Math.abs(a) * PHI);
      let y = Math.log(b + Math.abs(b) * PHI);
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = k * (a - Math.abs(a) * PHI);
      b = k * (b + Math.abs(b) * PHI);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      const d1Lo = a - Math.abs(a) * PHI;
      const d1Hi = b + Math.abs(b) * PHI;
      a = nkLo / nqHi;
      b = nkHi / nqLo;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      x = Math.log(a - Math.abs(a) * PHI);
      y = Math.log(b + Math.abs(b) * PHI);
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      const l2Lo = a - Math.abs(a) * PHI;
      const l2Hi = b + Math.abs(b) * PHI;
      // NK > 0 times an interval of either sign.
      a = l2Lo >= 0 ? nkLo * l2Lo : nkHi * l2Lo;
      b = l2Hi >= 0 ? nkHi * l2Hi : nkLo * l2Hi;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = d1Lo + (a - Math.abs(a) * PHI);
      b = d1Hi + (b + Math.abs(b) * PHI);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      const devLo = a - Math.abs(a) * PHI;
      const devHi = b + Math.abs(b) * PHI;
      // term1 = (S(n) − S(k)) − S(n − k)
      a = snLo - sAt[2 * k + 1]!;
      b = snHi - sAt[2 * k]!;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = a - Math.abs(a) * PHI - sDiff[2 * (n - k) + 1]!;
      b = b + Math.abs(b) * PHI - sDiff[2 * (n - k)]!;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      const t1Lo = a - Math.abs(a) * PHI;
      const t1Hi = b + Math.abs(b) * PHI;
      // term2 = sqrt(N / (2π·K·NK))
      a = twoPi[2 * k]! * nkLo;
      b = twoPi[2 * k + 1]! * nkHi;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = n / (b + Math.abs(b) * PHI);
      b = n / (twoPi[2 * k]! * nkLo - Math.abs(twoPi[2 * k]! * nkLo) * PHI);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      x = Math.sqrt(a - Math.abs(a) * PHI);
      y = Math.sqrt(b + Math.abs(b) * PHI);
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      // exp((log(term2) + term1) − dev)
      x = Math.log(a - Math.abs(a) * PHI);
      y = Math.log(b + Math.abs(b) * PHI);
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = a - Math.abs(a) * PHI + t1Lo;
      b = b + Math.abs(b) * PHI + t1Hi;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      a = a - Math.abs(a) * PHI - devHi;
      b = b + Math.abs(b) * PHI - devLo;
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      x = Math.exp(a - Math.abs(a) * PHI);
      y = Math.exp(b + Math.abs(b) * PHI);
      a = Math.min(x, y);
      b = Math.max(x, y);
      least = Math.min(least, Math.abs(a), Math.abs(b));
      most = Math.max(most, Math.abs(a), Math.abs(b));
      tLo = a - Math.abs(a) * PHI;
      tHi = b + Math.abs(b) * PHI;
    }
    a = sumLo + tLo;
    b = sumHi + tHi;
    least = Math.min(least, Math.abs(a), Math.abs(b));
    most = Math.max(most, Math.abs(a), Math.abs(b));
    sumLo = a - Math.abs(a) * PHI;
    sumHi = b + Math.abs(b) * PHI;
  }
  // (NaN fails both tests.)
  if (!(least >= FAST_FROM && most < TOP)) return binomialTailReference(n, p, from, to);
  return { lo: sumLo, hi: sumHi };
}

/** binomialTail step by step, for any p: the reference the fast loop is tested against. */
export function binomialTailReference(n: number, p: Interval, from: number, to = n): Interval {
  stirlingUpTo(n);
  const sAt = stirlingAt;
  const sDiff = stirlingOfDifference;
  // Per n: N·p, N·(1 − p) and the Stirling error at n.
  mulTo(n, n, p.lo, p.hi);
  const npLo = out[0]!;
  const npHi = out[1]!;
  subTo(1, 1, p.lo, p.hi);
  const qLo = out[0]!;
  const qHi = out[1]!;
  mulTo(n, n, qLo, qHi);
  const nqLo = out[0]!;
  const nqHi = out[1]!;
  const snLo = sAt[2 * n]!;
  const snHi = sAt[2 * n + 1]!;
  let sumLo = 0;
  let sumHi = 0;
  for (let k = from; k <= to; k++) {
    let tLo = 0;
    let tHi = 0;
    if (k < 0) {
      // P(X = k) = 0
    } else if (k === 0 || k === n) {
      // (1 − p)^n or p^n
      const bl = k === 0 ? qLo : p.lo;
      const bh = k === 0 ? qHi : p.hi;
      span2(bl ** n, bh ** n);
      tLo = out[0]!;
      tHi = out[1]!;
    } else {
      // NK = N − K
      subTo(n, n, k, k);
      const nkLo = out[0]!;
      const nkHi = out[1]!;
      // dev = K·log(K / Np) + NK·log(NK / Nq)
      divTo(k, k, npLo, npHi);
      span2(Math.log(out[0]!), Math.log(out[1]!));
      mulTo(k, k, out[0]!, out[1]!);
      const d1Lo = out[0]!;
      const d1Hi = out[1]!;
      divTo(nkLo, nkHi, nqLo, nqHi);
      span2(Math.log(out[0]!), Math.log(out[1]!));
      mulTo(nkLo, nkHi, out[0]!, out[1]!);
      addTo(d1Lo, d1Hi, out[0]!, out[1]!);
      const devLo = out[0]!;
      const devHi = out[1]!;
      // term1 = (S(n) − S(k)) − S(n − k)
      subTo(snLo, snHi, sAt[2 * k]!, sAt[2 * k + 1]!);
      subTo(out[0]!, out[1]!, sDiff[2 * (n - k)]!, sDiff[2 * (n - k) + 1]!);
      const t1Lo = out[0]!;
      const t1Hi = out[1]!;
      // term2 = sqrt(N / (2π·K·NK))
      mulTo(TWO_PI.lo, TWO_PI.hi, k, k);
      mulTo(out[0]!, out[1]!, nkLo, nkHi);
      divTo(n, n, out[0]!, out[1]!);
      span2(Math.sqrt(out[0]!), Math.sqrt(out[1]!));
      // exp((log(term2) + term1) − dev)
      span2(Math.log(out[0]!), Math.log(out[1]!));
      addTo(out[0]!, out[1]!, t1Lo, t1Hi);
      subTo(out[0]!, out[1]!, devLo, devHi);
      span2(Math.exp(out[0]!), Math.exp(out[1]!));
      tLo = out[0]!;
      tHi = out[1]!;
    }
    addTo(sumLo, sumHi, tLo, tHi);
    sumLo = out[0]!;
    sumHi = out[1]!;
  }
  return { lo: sumLo, hi: sumHi };
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
  return deriveWith(epsilon, delta, true);
}

/**
 * derive summing every a(n) its search visits, none passed over for its bound: what derive's
 * test holds it to (the same β and k, the same errors).
 */
export function deriveSummingEvery(epsilon: number, delta: number): DpParameters {
  return deriveWith(epsilon, delta, false);
}

/**
 * Past its first term P(X = m) (m = `from`), each term of a(n) is at most r = (n − m)/(m + 1) ·
 * p/(1 − p) times the one before (the ratio of term j + 1 to term j falls as j grows), so a(n)
 * ≤ P(X = m)/(1 − r). Each of a(n)'s terms spans at most a factor e^0.005 (its Stirling errors'
 * bounds, 2/1260 each at most; the outward steps add far less), so the upper end of a(n) as
 * summed stays under TAIL_SLACK times that: an upper bound on it from one term instead of
 * n − m + 1. +∞ where it does not apply, and for a first term near the subnormals (there each
 * outward step adds a whole subnormal, no longer a share of the term). (Exported for its test.)
 */
export function tailAbove(n: number, p: Interval, from: number): number {
  if (from < 1 || from >= n || !(p.lo > 0 && p.hi < 1)) return Number.POSITIVE_INFINITY;
  // (Rounded up well past its few roundings.)
  const r = (((n - from) * p.hi) / ((from + 1) * (1 - p.hi))) * (1 + 1e-12);
  if (!(r < 1)) return Number.POSITIVE_INFINITY;
  const first = binomialTail(n, p, from, from).hi;
  if (!(first > BOUNDED_FROM)) return Number.POSITIVE_INFINITY;
  return (first / (1 - r)) * TAIL_SLACK;
}

/** Over e^0.005, the most a(n) as summed lies above the sum of its terms' true values (tailAbove). */
const TAIL_SLACK = 1.05;
/** The derivation's numbers per n, in this order. */
const [FROM, C_HI, A_ABOVE, A_LO, A_HI, FIELDS] = [0, 1, 2, 3, 4, 5] as const;
/** tailAbove bounds a tail whose first term is above this: far from the subnormals. */
const BOUNDED_FROM = 1e-200;
/**
 * The derivation's numbers per n, reused by the next derivation (cleared to NaN up to what the
 * last one used): a new array per call adds to the young generation's array buffers, whose
 * collection then fell in the derivation or the release after it.
 */
let perNScratch = new Float64Array(FIELDS * 1024).fill(Number.NaN);
let perNUsed = 0;
/** A scratch grown past this many n (a large ε) is not kept for the next derivation. */
const PER_N_KEPT = 1 << 16;

function deriveWith(epsilon: number, delta: number, passOver: boolean): DpParameters {
  const eps = point(epsilon);
  const del = point(delta);
  const beta = sub(ONE, exp(mul(MINUS_ONE, eps)));
  const power = exp(eps);
  const gamma = div(add(sub(power, ONE), beta), power);
  // c(n)'s exponent per n, which depends on γ and β alone: computed once (the same
  // operations, so the same ends; an error it raises is raised before any a(n) instead of after
  // the first, and every derivation computes at least one a(n)).
  const t1 = mul(gamma, log(div(gamma, beta)));
  const t2 = sub(t1, sub(gamma, beta));
  // Per n, computed once each, FIELDS numbers from n·FIELDS (NaN: not yet): a(n)'s first term,
  // the upper end of c(n), an upper bound on a(n)'s upper end, and a(n)'s ends.
  let perN = perNScratch;
  perN.fill(Number.NaN, 0, perNUsed);
  perNUsed = 0;
  const deltaOf = (k: number): Interval => {
    const first = toInt(Math.ceil(sub(div(point(k), gamma), ONE).lo));
    // The larger of the a(n) so far, on bare ends: of two intervals that only touch, the upper;
    // of two that overlap more, neither can be told larger (an error).
    let worstLo = -Number.MAX_VALUE;
    let worstHi = -Number.MAX_VALUE;
    let boundHi = Number.MAX_VALUE;
    for (let n = first; worstLo <= boundHi; n++) {
      const at = n * FIELDS;
      if (at >= perN.length) {
        const grown = new Float64Array(Math.max(at + FIELDS, 4 * perN.length)).fill(Number.NaN);
        grown.set(perN);
        perN = perNScratch = grown;
      }
      if (at >= perNUsed) perNUsed = at + FIELDS;
      if (Number.isNaN(perN[at + FROM]!)) {
        // mul(point(n), gamma).lo and exp(mul(MINUS_ONE, mul(point(n), t2))).hi on bare ends.
        mulTo(n, n, gamma.lo, gamma.hi);
        const from = toInt(Math.floor(out[0]!)) + 1;
        perN[at + FROM] = from;
        mulTo(n, n, t2.lo, t2.hi);
        mulTo(-1, -1, out[0]!, out[1]!);
        span2(Math.exp(out[0]!), Math.exp(out[1]!));
        perN[at + C_HI] = out[1]!;
        perN[at + A_ABOVE] = passOver ? tailAbove(n, beta, from) : Number.POSITIVE_INFINITY;
      }
      boundHi = perN[at + C_HI]!;
      let lo = perN[at + A_LO]!;
      if (Number.isNaN(lo)) {
        // An a(n) whose upper end lies below the running maximum's lower end changes nothing
        // below (neither the maximum nor an error): its bound says so without summing it.
        if (perN[at + A_ABOVE]! < worstLo) continue;
        // (`| 0`: the first term as the small integer it is, as tailAbove passed it.)
        const sum = binomialTail(n, beta, perN[at + FROM]! | 0);
        lo = perN[at + A_LO] = sum.lo;
        perN[at + A_HI] = sum.hi;
      }
      const hi = perN[at + A_HI]!;
      if (worstHi === lo) {
        worstLo = lo;
        worstHi = hi;
      } else if (hi === worstLo) {
        // the running one stays
      } else if (!(worstHi < lo || hi < worstLo)) {
        throw new ParameterError('undecidable comparison');
      } else if (worstHi < lo) {
        worstLo = lo;
        worstHi = hi;
      }
    }
    return { lo: worstLo, hi: worstHi };
  };
  let k = 1;
  try {
    for (let dk = point(Number.MAX_VALUE); !below(dk, del); k++) dk = deltaOf(k);
  } finally {
    if (perN.length > FIELDS * PER_N_KEPT) {
      perNScratch = new Float64Array(FIELDS * 1024).fill(Number.NaN);
      perNUsed = 0;
    }
  }
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
