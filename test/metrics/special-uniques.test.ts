import { describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import { PpdpError } from '../../src/errors.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { classRisk, specialUniques, weightedRisk } from '../../src/metrics/special-uniques.ts';

function column(name: string, values: string[]): EncodedColumn {
  const dictionary = [...new Set(values)];
  return { name, dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
}

/** Every subset of ≤ m attributes on which row r is alone and no smaller subset is. */
function bruteMsus(rows: string[][], r: number, m: number): number[][] {
  const q = rows[0]!.length;
  const unique = (s: number[]) => rows.filter((x) => s.every((i) => x[i] === rows[r]![i])).length === 1;
  const subsets: number[][] = [];
  for (let mask = 1; mask < 1 << q; mask++) {
    const s = [...Array(q).keys()].filter((i) => mask & (1 << i));
    if (s.length <= m) subsets.push(s);
  }
  return subsets.filter(
    (s) =>
      unique(s) && !subsets.some((t) => t.length < s.length && t.every((i) => s.includes(i)) && unique(t)),
  );
}

describe('special uniques', () => {
  it('finds the minimal sample uniques of a small table', () => {
    // row 2 is alone on a (size 1); row 3 alone on {b, c} only.
    const rows = [
      ['x', '1', 'p'],
      ['x', '1', 'q'],
      ['y', '2', 'p'],
      ['x', '2', 'q'],
      ['x', '1', 'p'],
      ['x', '2', 'p'],
    ];
    const qis = ['a', 'b', 'c'].map((name, i) =>
      column(
        name,
        rows.map((r) => r[i]!),
      ),
    );
    const s = specialUniques(qis, tsGroupingKernel);
    expect(s.maxSize).toBe(3);
    // q = 3, m = 3: an MSU of size 1 weighs (3−1)(3−2) = 2, size 2 weighs 1, size 3 weighs 1.
    expect(Array.from(s.msuCount)).toEqual(rows.map((_, r) => bruteMsus(rows, r, 3).length));
    expect(s.msuCount[2]).toBe(1);
    expect(s.score[2]).toBe(2);
    expect(s.msuCount[3]).toBe(1);
    expect(s.score[3]).toBe(1);
  });

  it('agrees with brute force on a random table (both kernels)', () => {
    let seed = 7;
    const next = () => {
      seed = (seed * 1103515245 + 12345) % 2 ** 31;
      return seed;
    };
    const rows = Array.from({ length: 60 }, () =>
      Array.from({ length: 5 }, (_, i) => String(next() % (2 + i))),
    );
    const qis = [...Array(5).keys()].map((i) =>
      column(
        `q${i}`,
        rows.map((r) => r[i]!),
      ),
    );
    const brute = rows.map((_, r) => bruteMsus(rows, r, 3));
    for (const kernel of [tsGroupingKernel, wasmGroupingKernel]) {
      const s = specialUniques(qis, kernel);
      expect(Array.from(s.msuCount)).toEqual(brute.map((b) => b.length));
      // q = 5, m = 3: sizes 1, 2, 3 weigh 4·3, 3, 1.
      expect(Array.from(s.score)).toEqual(
        brute.map((b) => b.reduce((x, msu) => x + [12, 3, 1][msu.length - 1]!, 0)),
      );
      expect(s.msusBySize.reduce((a, b) => a + b, 0)).toBe(brute.flat().length);
    }
  });
});

describe('weighted individual risk', () => {
  it('follows the formulas per class size', () => {
    const p = 1 / 50;
    expect(classRisk(1, 50)).toBeCloseTo((p / (1 - p)) * Math.log(50), 15);
    const p2 = 2 / 40;
    const o = p2 / (1 - p2);
    expect(classRisk(2, 40)).toBeCloseTo(o - o * o * Math.log(1 / p2), 15);
    expect(classRisk(5, 100)).toBeCloseTo(0.05 / (5 - 0.95), 15);
    // a class that is its whole population: 1/f, the formulas' limit
    expect(classRisk(1, 1)).toBe(1);
    expect(classRisk(1, 1.0001)).toBeCloseTo(1, 3);
    expect(classRisk(2, 2.0002)).toBeCloseTo(0.5, 3);
  });

  it('sums the records’ risks and refuses a weight that is not a positive number', () => {
    const rowToClass = Int32Array.from([0, 1, 1, 2, 2, 2]);
    const weight = column('w', ['10', '20', '20', '5', '5', '5']);
    const r = weightedRisk(rowToClass, () => true, weight, 0.05);
    const expected = classRisk(1, 10) + 2 * classRisk(2, 40) + 3 * classRisk(3, 15);
    expect(r.expectedReidentifications).toBeCloseTo(expected, 14);
    expect(r.globalRisk).toBeCloseTo(expected / 6, 14);
    expect(r.population).toBe(65);
    expect(() =>
      weightedRisk(rowToClass, () => true, column('w', ['1', 'x', '1', '1', '1', '1']), 0.05),
    ).toThrow(PpdpError);
  });
});
