import { describe, expect, it } from 'vitest';
import { labelLoss } from '../../src/metrics/label-loss.ts';
import { maxOf, minOf, widthOver } from '../../src/util/extent.ts';

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

  it('reads a range whose numbers are written with an exponent', () => {
    // Doses in grams: JavaScript (and Mondrian's ranges) write numbers below 1e-6 as 1e-7.
    const doses = labelLoss(['1e-7', '2.5e-7', '4e-7', '5e-7'], undefined);
    expect(doses('[1e-7-3e-7]')).toBeCloseTo(0.5, 12);
    expect(doses('[2.5e-7, 5e-7[')).toBeCloseTo(0.625, 12);
    const signed = labelLoss(['-4e-7', '0', '4e-7'], undefined);
    expect(signed('[-4e-7--2e-7]')).toBeCloseTo(0.25, 12);
    // Other tools write capitals and a plus sign.
    const amounts = labelLoss(['1000', '2500', '5000'], undefined);
    expect(amounts('[1E+3-2.5E+3]')).toBeCloseTo(0.375, 12);
    expect(amounts('2.5e3..5e3')).toBeCloseTo(0.625, 12);
    expect(amounts('[1e+-3]')).toBeNull();
  });

  it('spans the numbers alone: an empty cell is a value of its own, not the number 0', () => {
    const loss = labelLoss(['1990', '2000', '2010', '2020', '', ' '], undefined);
    expect(loss('[1990-2005]')).toBeCloseTo(15 / 30, 12);
    expect(loss('')).toBe(0);
    expect(loss('*')).toBe(1);
  });

  it('counts a value once under a label its row repeats up the levels', () => {
    // '1050' is kept as itself at level 1; '10**' and '1***' each cover it once.
    const rows = [
      ['1011', '101*', '10**', '1***', '*'],
      ['1012', '101*', '10**', '1***', '*'],
      ['1050', '1050', '10**', '10**', '*'],
      ['2000', '200*', '20**', '2***', '*'],
      ['9999', '999*', '99**', '9***', '*'],
    ];
    const loss = labelLoss(
      rows.map((r) => r[0]!),
      rows,
    );
    expect(loss('10**')).toBeCloseTo(2 / 4, 12);
    expect(loss('101*')).toBeCloseTo(1 / 4, 12);
    expect(loss('1***')).toBeCloseTo(1 / 4, 12);
    // A label of a value no row holds explains nothing.
    expect(loss('55**')).toBeNull();
  });
});

describe('widthOver', () => {
  const share = (...a: [number, number, number, number]) => {
    const [width, span] = widthOver(...a);
    return width / span;
  };

  it('is the plain differences for ordinary numbers', () => {
    expect(widthOver(2, 5, 1, 11)).toEqual([3, 10]);
    expect(widthOver(0.1, 0.3, 0, 1)).toEqual([0.3 - 0.1, 1]);
  });

  it('keeps a range’s share finite and exact where the differences overflow', () => {
    // Without the scaling: Infinity / Infinity.
    expect((1e308 - -1e308) / (1e308 - -1e308)).toBeNaN();
    expect(share(-1e308, 1e308, -1e308, 1e308)).toBe(1);
    expect(share(0, 1e308, -1e308, 1e308)).toBe(0.5);
    expect(share(-1e308, -1e308, -1e308, 1e308)).toBe(0);
    expect(share(-1.7e308, 0, -1.7e308, 1.7e308)).toBe(0.5);
    // Room for a count of rows: size · width stays finite.
    const [width] = widthOver(
      -1.7976931348623157e308,
      1.7976931348623157e308,
      -1.7976931348623157e308,
      1.7976931348623157e308,
    );
    expect(Number.isFinite(2 ** 31 * width)).toBe(true);
  });
});

describe('labelLoss of a range near ±1.8e308', () => {
  it('is its share of the span, finite', () => {
    const loss = labelLoss(['-1e+308', '0', '1e+308'], undefined);
    const digits = (x: number) => BigInt(x).toString();
    expect(loss(`[${digits(-1e308)}-${digits(1e308)}]`)).toBe(1);
    expect(loss(`[0-${digits(1e308)}]`)).toBe(0.5);
  });
});
