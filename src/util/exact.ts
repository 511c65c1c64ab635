/**
 * Exact comparison of a ratio of integers with a double, for the models' bounds
 * (docs/definitions.md: EMD ≤ t, classes/rows ≤ threshold, …): a bound is the exact binary
 * value of the double the spec gives, so no tolerance either way.
 */

const bits = new DataView(new ArrayBuffer(8));

/** A finite double as `mantissa · 2^exponent`, exactly. */
export function dyadic(x: number): { mantissa: bigint; exponent: number } {
  bits.setFloat64(0, x);
  const high = bits.getUint32(0);
  const biased = (high >>> 20) & 0x7ff;
  let mantissa = (BigInt(high & 0xfffff) << 32n) | BigInt(bits.getUint32(4));
  // Subnormals have no implicit leading 1 and the smallest exponent.
  if (biased !== 0) mantissa |= 1n << 52n;
  const exponent = (biased === 0 ? 1 : biased) - 1075;
  return { mantissa: high >>> 31 ? -mantissa : mantissa, exponent };
}

/**
 * The sign of num/den − x (−1, 0 or 1), exactly; NaN when x is NaN. `num` and `den` are
 * integers (numbers that are safe integers, or BigInts), `den` > 0.
 */
export function compareRatio(num: number | bigint, den: number | bigint, x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x === Number.POSITIVE_INFINITY) return -1;
  if (x === Number.NEGATIVE_INFINITY) return 1;
  if (typeof num === 'number' && typeof den === 'number') {
    // Both exact, so num/den is the ratio correctly rounded, and rounding keeps order: only a
    // quotient equal to x leaves the sign open.
    const q = num / den;
    if (q < x) return -1;
    if (q > x) return 1;
  }
  const { mantissa, exponent } = dyadic(x);
  // num/den vs mantissa·2^exponent, both sides times den·2^max(0, −exponent).
  const left = BigInt(num) << BigInt(Math.max(0, -exponent));
  const right = (mantissa * BigInt(den)) << BigInt(Math.max(0, exponent));
  return left < right ? -1 : left > right ? 1 : 0;
}

/** num/den ≤ x, exactly. */
export function ratioAtMost(num: number | bigint, den: number | bigint, x: number): boolean {
  return compareRatio(num, den, x) <= 0;
}

/** num/den ≥ x, exactly. */
export function ratioAtLeast(num: number | bigint, den: number | bigint, x: number): boolean {
  return compareRatio(num, den, x) >= 0;
}

/** |x| of a BigInt. */
export function absBig(x: bigint): bigint {
  return x < 0n ? -x : x;
}

/** The smaller of two BigInts (Math.min takes numbers only). */
export function minBig(a: bigint, b: bigint): bigint {
  return a < b ? a : b;
}

/**
 * The most a floating entropy −Σ p·ln p over `terms` shares c/n (summed in order) and ln l can
 * be off from their exact values, `magnitude` the larger of the two. Each share is rounded once
 * (an absolute error of u = 2^−53 in its log), its log and product once each (2u relative):
 * at most u·(1 + 3·h) over all terms; summing `terms` non-negative terms adds (terms − 1)·u·h,
 * and ln l one u·ln l. Twice that, in Number.EPSILON = 2u, leaves room for Math.log's own
 * last bit. Entropy is no ratio of integers (it has logs), so this slack stays; it lets pass
 * no class whose entropy is more than that below ln l.
 */
export function entropyRounding(terms: number, magnitude: number): number {
  return ((terms + 3) * magnitude + 1) * Number.EPSILON;
}
