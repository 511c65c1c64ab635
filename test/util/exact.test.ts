import { describe, expect, it } from 'vitest';
import { compareRatio, dyadic, ratioAtLeast, ratioAtMost } from '../../src/util/exact.ts';

/** The double just below x > 0. */
const below = (x: number) => {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, x);
  b.setBigUint64(0, b.getBigUint64(0) - 1n);
  return b.getFloat64(0);
};

describe('exact comparison of a ratio of integers with a double', () => {
  it('reads a double as mantissa · 2^exponent exactly', () => {
    for (const x of [1, 0.5, 3, 0.1, -0.375, 2 ** 60, 2 ** -40, Number.MAX_SAFE_INTEGER]) {
      const { mantissa, exponent } = dyadic(x);
      expect(Number(mantissa) * 2 ** exponent).toBe(x);
    }
    expect(dyadic(0).mantissa).toBe(0n);
  });

  it('compares powers of two and their neighbours', () => {
    expect(compareRatio(1, 2, 0.5)).toBe(0);
    expect(compareRatio(3, 8, 0.375)).toBe(0);
    expect(compareRatio(1, 1024, 2 ** -10)).toBe(0);
    expect(compareRatio(2 ** 40, 1, 2 ** 40)).toBe(0);
    expect(compareRatio(3, 8, below(0.375))).toBe(1);
    expect(ratioAtMost(3, 8, below(0.375))).toBe(false);
    expect(ratioAtLeast(3, 8, below(0.375))).toBe(true);
  });

  it('compares with the exact binary value of a decimal bound', () => {
    // 0.1 as a double lies above 1/10, 0.3 below 3/10: 1/10 ≤ 0.1 holds, 3/10 ≤ 0.3 does not.
    expect(compareRatio(1, 10, 0.1)).toBe(-1);
    expect(compareRatio(3, 10, 0.3)).toBe(1);
    expect(compareRatio(1, 10, below(0.1))).toBe(1);
    // The quotient rounds to the bound, yet the ratio lies above it.
    expect(3 / 10).toBe(0.3);
    expect(ratioAtMost(3, 10, 0.3)).toBe(false);
    expect(ratioAtMost(3n, 10n, 0.30000000000000004)).toBe(true);
  });

  it('compares huge numerators and denominators past 2^53', () => {
    const big = 3n * 10n ** 30n;
    expect(compareRatio(big, 10n ** 31n, 0.3)).toBe(1);
    expect(compareRatio(big + 1n, big, 1)).toBe(1);
    expect(compareRatio(big - 1n, big, 1)).toBe(-1);
    expect(compareRatio(big, big, 1)).toBe(0);
    // 2^100 / 3 against 2^100 / 3 rounded: the double is one side of it, never equal.
    const r = 2n ** 100n;
    const q = Number(r) / 3;
    expect(compareRatio(r, 3n, q)).not.toBe(0);
    expect(compareRatio(r * 3n, 3n, Number(r))).toBe(0);
    expect(compareRatio(2n ** 80n + 1n, 1n, 2 ** 80)).toBe(1);
  });

  it('handles infinities, NaN and negative numbers', () => {
    expect(compareRatio(5, 1, Number.POSITIVE_INFINITY)).toBe(-1);
    expect(compareRatio(5, 1, Number.NEGATIVE_INFINITY)).toBe(1);
    expect(compareRatio(5, 1, Number.NaN)).toBeNaN();
    expect(ratioAtMost(5, 1, Number.NaN)).toBe(false);
    expect(compareRatio(-3, 8, -0.375)).toBe(0);
    expect(compareRatio(0, 7, 0)).toBe(0);
    expect(compareRatio(0, 7, -0)).toBe(0);
  });
});
