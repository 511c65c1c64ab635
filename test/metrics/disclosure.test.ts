/**
 * The disclosure measures and the sensitive distribution from sparse class histograms (the
 * values each class holds) are those from the classes × values matrix, to the last digit: the
 * values a class lacks are summed at once on both. The sparse histograms are counted in time
 * linear in the rows.
 */
import { describe, expect, it } from 'vitest';
import {
  type ClassHistogramSet,
  disclosureMeasures,
  modeCounts,
  type SparseClassHistograms,
  sensitiveDistribution,
  sparseClassHistograms,
} from '../../src/metrics/disclosure.ts';
import { equalEmd, orderedEmd } from '../../src/models/t-closeness.ts';

/** A fixed linear congruential stream in [0, 1). */
function stream(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/** `groups` classes over `width` values, each holding a few of them; and the same classes sparse. */
function classes(
  groups: number,
  width: number,
  next: () => number,
): { dense: ClassHistogramSet; sparse: SparseClassHistograms } {
  const counts = new Int32Array(groups * width);
  for (let g = 0; g < groups; g++) {
    const held = 1 + Math.floor(next() * Math.min(width, 6));
    for (let i = 0; i < held; i++)
      counts[g * width + Math.floor(next() * width)]! += 1 + Math.floor(next() * 4);
  }
  const keep = (g: number) => g % 7 !== 3;
  const offsets = new Int32Array(groups + 1);
  const values: number[] = [];
  const entries: number[] = [];
  for (let g = 0; g < groups; g++) {
    for (let s = 0; s < width; s++) {
      if (counts[g * width + s]! > 0) {
        values.push(s);
        entries.push(counts[g * width + s]!);
      }
    }
    offsets[g + 1] = values.length;
  }
  return {
    dense: { groups, width, counts, keep },
    sparse: {
      groups,
      width,
      offsets,
      values: Int32Array.from(values),
      counts: Int32Array.from(entries),
      keep,
    },
  };
}

describe('disclosure measures from sparse class histograms', () => {
  it('match the classes × values matrix to the last digit: numbers (ordered t, spreads) and words', () => {
    for (const [seed, groups, width] of [
      [1, 40, 2],
      [2, 200, 30],
      [3, 500, 300],
      [4, 60, 1],
    ] as const) {
      const next = stream(seed);
      const { dense, sparse } = classes(groups, width, next);
      // A table distribution of uneven shares, in a value order other than the codes'.
      const weights = Float64Array.from({ length: width }, () => 0.05 + next());
      const total = weights.reduce((a, b) => a + b, 0);
      const table = weights.map((w) => w / total);
      const numbers = Array.from({ length: width }, (_, s) => String((s * 37) % (width + 11)));
      const text = numbers.map((v) => `v${v}`);
      const original = classes(groups, width, stream(seed + 100)).dense;
      for (const values of [numbers, text]) {
        const a = disclosureMeasures('x', sparse, original, table, values);
        const b = disclosureMeasures('x', dense, original, table, values);
        expect(a.tDistance).toBe(values === numbers && width > 0 ? 'ordered' : 'equal');
        expect(a).toEqual(b);
        const d = sensitiveDistribution('x', sparse, table, values);
        expect(d).toEqual(sensitiveDistribution('x', dense, table, values));
        expect(d?.numeric !== undefined).toBe(values === numbers);
      }
      expect(modeCounts(sparse)).toEqual(modeCounts(dense));
    }
  });

  it('give t as the t-closeness model does, to the bit, dense or sparse (one t per attribute)', () => {
    for (const [seed, groups, width] of [
      [5, 300, 40],
      [6, 200, 700],
      [7, 50, 3],
    ] as const) {
      const next = stream(seed);
      const { dense, sparse } = classes(groups, width, next);
      const weights = Float64Array.from({ length: width }, () => 0.05 + next());
      const total = weights.reduce((a, b) => a + b, 0);
      const table = weights.map((w) => w / total);
      const numbers = Array.from({ length: width }, (_, s) => String((s * 37) % (width + 11)));
      const order = numbers.map((_, s) => s).sort((a, b) => Number(numbers[a]) - Number(numbers[b]));
      for (const [values, emd] of [
        [numbers, orderedEmd(table, order)],
        [numbers.map((v) => `v${v}`), equalEmd(table)],
      ] as const) {
        let worst = 0;
        for (let g = 0; g < groups; g++) {
          if (!dense.keep(g)) continue;
          const h = dense.counts.subarray(g * width, (g + 1) * width);
          let size = 0;
          for (const c of h) size += c;
          if (size > 0) worst = Math.max(worst, emd(h, size));
        }
        const original = classes(groups, width, stream(seed + 100)).dense;
        expect(disclosureMeasures('x', dense, original, table, values).release.t).toBe(worst);
        expect(disclosureMeasures('x', sparse, original, table, values).release.t).toBe(worst);
      }
    }
  });

  it('are counted from the rows as the classes × values matrix counts them', () => {
    for (const [seed, items, groups, width] of [
      [1, 1000, 40, 300],
      [2, 50, 1, 3],
      [3, 0, 5, 4],
      [4, 2000, 300, 1],
      // More cells than items (and than 2^16): counted by the two sorts, not the matrix.
      [5, 3000, 400, 200],
    ] as const) {
      const next = stream(seed);
      // Items out of every class (−1), holding no counted value (−1), or weighing nothing.
      const groupOf = Int32Array.from({ length: items }, () =>
        next() < 0.05 ? -1 : Math.floor(next() * groups),
      );
      const code = Int32Array.from({ length: items }, () =>
        next() < 0.05 ? -1 : Math.floor(next() * width),
      );
      const weight = Int32Array.from({ length: items }, () =>
        next() < 0.05 ? 0 : 1 + Math.floor(next() * 4),
      );
      const keep = (g: number) => g !== 2;
      const got = sparseClassHistograms(groupOf, groups, width, code, keep, weight);
      const counts = new Int32Array(groups * width);
      for (let i = 0; i < items; i++)
        if (groupOf[i]! >= 0 && code[i]! >= 0) counts[groupOf[i]! * width + code[i]!]! += weight[i]!;
      const values: number[] = [];
      const entries: number[] = [];
      const offsets = [0];
      for (let g = 0; g < groups; g++) {
        for (let s = 0; s < width; s++) {
          if (counts[g * width + s]! > 0) {
            values.push(s);
            entries.push(counts[g * width + s]!);
          }
        }
        offsets.push(values.length);
      }
      expect([got.groups, got.width, got.keep]).toEqual([groups, width, keep]);
      expect(got.offsets).toEqual(Int32Array.from(offsets));
      expect(got.values).toEqual(Int32Array.from(values));
      expect(got.counts).toEqual(Int32Array.from(entries));
      // Rows, each weighing 1.
      const rows = sparseClassHistograms(groupOf, groups, width, code, keep);
      let total = 0;
      for (const c of rows.counts) total += c;
      expect(total).toBe(groupOf.filter((g, i) => g >= 0 && code[i]! >= 0).length);
    }
  });
});
