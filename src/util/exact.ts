/**
 * Exact comparison of a ratio of integers with a bound the spec gives, for the models' bounds
 * (docs/definitions.md: EMD ≤ t, classes/rows ≤ threshold, …): the bound is the decimal number
 * the spec wrote (`t: 0.3` is 3/10, not the double nearest it), so no tolerance either way.
 */

/**
 * The decimal a finite double stands for, exactly, as num/den (den a power of ten): the shortest
 * decimal that reads back as the double (`String(x)`), which is the number a spec wrote unless
 * it wrote more digits than a double holds.
 */
export function decimalOf(x: number): { num: bigint; den: bigint } {
  const m = /^(-?)(\d+)(?:\.(\d+))?(?:e([+-]\d+))?$/.exec(String(x));
  if (!m) throw new RangeError(`${x} is not a finite number`);
  const fraction = m[3] ?? '';
  const shift = Number(m[4] ?? 0) - fraction.length;
  const digits = BigInt(`${m[1]}${m[2]}${fraction}`);
  return shift >= 0
    ? { num: digits * 10n ** BigInt(shift), den: 1n }
    : { num: digits, den: 10n ** BigInt(-shift) };
}

/**
 * The sign of num/den − x (−1, 0 or 1), x read as the decimal it stands for (decimalOf); NaN
 * when x is NaN. `num` and `den` are integers (numbers that are safe integers, or BigInts),
 * `den` > 0.
 */
export function compareRatio(num: number | bigint, den: number | bigint, x: number): number {
  if (Number.isNaN(x)) return Number.NaN;
  if (x === Number.POSITIVE_INFINITY) return -1;
  if (x === Number.NEGATIVE_INFINITY) return 1;
  if (typeof num === 'number' && typeof den === 'number') {
    // Both exact, so num/den is the ratio correctly rounded, and x the decimal correctly
    // rounded: rounding keeps order, so only a quotient equal to x leaves the sign open.
    const q = num / den;
    if (q < x) return -1;
    if (q > x) return 1;
  }
  const bound = decimalOf(x);
  const left = BigInt(num) * bound.den;
  const right = bound.num * BigInt(den);
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
