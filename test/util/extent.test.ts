import { describe, expect, it } from 'vitest';
import { labelLoss } from '../../src/metrics/label-loss.ts';
import { maxOf, minOf } from '../../src/util/extent.ts';

describe('minOf and maxOf', () => {
  it('answer as Math.min and Math.max do', () => {
    for (const values of [[], [3], [2, -1, 7], [1, Number.NaN, 2], [Number.POSITIVE_INFINITY, 4]]) {
      expect(minOf(values)).toBe(Math.min(...values));
      expect(maxOf(values)).toBe(Math.max(...values));
    }
    expect(
      maxOf(
        new Map([
          ['a', 2],
          ['b', 5],
        ]).values(),
      ),
    ).toBe(5);
  });

  it('take more values than a call can pass as arguments', () => {
    const many = Array.from({ length: 500_000 }, (_, i) => (i * 7919) % 500_000);
    expect(() => Math.max(...many)).toThrow(RangeError);
    expect(minOf(many)).toBe(0);
    expect(maxOf(many)).toBe(499_999);
  });
});

describe('labelLoss', () => {
  it('spans a numeric column of more distinct values than a call can pass as arguments', () => {
    // Exact amounts as a quasi-identifier: half a million distinct numbers.
    const values = Array.from({ length: 500_000 }, (_, i) => String(i / 100));
    const loss = labelLoss(values, undefined);
    expect(loss('[0-2499.995]')).toBeCloseTo(0.5);
    expect(loss('12.34')).toBe(0);
  });

  it('spans the numbers alone: an empty cell is a value of its own, not the number 0', () => {
    const loss = labelLoss(['1990', '2000', '2010', '2020', '', ' '], undefined);
    expect(loss('[1990-2005]')).toBeCloseTo(15 / 30, 12);
    expect(loss('')).toBe(0);
    expect(loss('*')).toBe(1);
  });
});
