import { describe, expect, it } from 'vitest';
import { compareRatio, decimalOf, ratioAtLeast, ratioAtMost } from '../../src/util/exact.ts';

/** The double just below x > 0. */
const below = (x: number) => {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, x);
  b.setBigUint64(0, b.getBigUint64(0) - 1n);
  return b.getFloat64(0);
};

describe('exact comparison of a ratio of integers with a bound', () => {
  it('reads a double as the decimal it stands for', () => {
    expect(decimalOf(0.3)).toEqual({ num: 3n, den: 10n });
    expect(decimalOf(-0.375)).toEqual({ num: -375n, den: 1000n });
    expect(decimalOf(1e-7)).toEqual({ num: 1n, den: 10n ** 7n });
    expect(decimalOf(1.5e-7)).toEqual({ num: 15n, den: 10n ** 8n });
    expect(decimalOf(2e21)).toEqual({ num: 2n * 10n ** 21n, den: 1n });
    expect(decimalOf(0.0999999999995)).toEqual({ num: 999999999995n, den: 10n ** 13n });
    expect(decimalOf(0)).toEqual({ num: 0n, den: 1n });
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

  it('compares with the decimal the bound was written as, not its double', () => {
    // 0.1 as a double lies above 1/10, 0.3 below 3/10; the spec wrote 1/10 and 3/10.
    expect(compareRatio(1, 10, 0.1)).toBe(0);
    expect(compareRatio(3, 10, 0.3)).toBe(0);
    expect(compareRatio(3n, 10n, 0.3)).toBe(0);
    expect(compareRatio(1, 10, below(0.1))).toBe(1);
    expect(ratioAtMost(3, 10, below(0.3))).toBe(false);
    // The quotient rounds to the bound, yet the ratio lies above the decimal.
    expect(1 / 10).toBe(0.1);
    expect(compareRatio(10n ** 20n + 1n, 10n ** 21n, 0.1)).toBe(1);
    expect(ratioAtMost(10n ** 20n + 1n, 10n ** 21n, 0.1)).toBe(false);
    expect(ratioAtMost(1, 10, 0.0999999999995)).toBe(false);
  });

  it('compares huge numerators and denominators past 2^53', () => {
    const big = 3n * 10n ** 30n;
    expect(compareRatio(big, 10n ** 31n, 0.3)).toBe(0);
    expect(compareRatio(big + 1n, 10n ** 31n, 0.3)).toBe(1);
    expect(compareRatio(big + 1n, big, 1)).toBe(1);
    expect(compareRatio(big - 1n, big, 1)).toBe(-1);
    expect(compareRatio(big, big, 1)).toBe(0);
    // 2^100 prints as 1.2676506002282294e+30, the decimal 12676506002282294·10^14 below it.
    const r = 2n ** 100n;
    expect(compareRatio(r, 1n, Number(r))).toBe(1);
    expect(compareRatio(12676506002282294n * 10n ** 14n * 3n, 3n, Number(r))).toBe(0);
    expect(compareRatio(12676506002282294n * 10n ** 14n - 1n, 1n, Number(r))).toBe(-1);
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
