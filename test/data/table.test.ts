/**
 * The joins of dictionary-coded pieces: `shuffledUnion` (Assemble's, in two passes) gives
 * exactly what the union, the reordering and the compaction give one after the other.
 */
import { describe, expect, it } from 'vitest';
import {
  type CodeArray,
  compactDictionary,
  shuffledUnion,
  unionOfDictionaries,
} from '../../src/data/table.ts';
import { Random } from '../../src/util/random.ts';

/** Pieces of `rows` rows in all, over `values` values, each with its own dictionary of some of them. */
function pieces(rows: number[], values: number, seed: number) {
  const random = new Random(seed);
  return rows.map((n) => {
    // Each piece lists a shuffled subset of the values, some of which no row uses.
    const listed = Array.from(random.permutation(values)).slice(0, Math.max(1, random.below(values) + 1));
    const dictionary = listed.map((v) => `v${v}`);
    const wide = Int32Array.from({ length: n }, () => random.below(dictionary.length));
    const codes: CodeArray =
      dictionary.length <= 128
        ? Int8Array.from(wide)
        : dictionary.length <= 32768
          ? Int16Array.from(wide)
          : wide;
    return { dictionary, codes, wide };
  });
}

describe('shuffledUnion', () => {
  it.each<[string, number, number[]]>([
    ['few values', 5, [3, 0, 7, 1]],
    ['up to 256', 200, [500, 300]],
    ['up to 65,536', 40_000, [20_000, 30_000, 1]],
    ['more', 70_000, [80_000, 50_000]],
  ])('is the union, reordered, compacted (%s)', (_, values, rows) => {
    const ps = pieces(rows, values, values);
    const total = rows.reduce((a, b) => a + b, 0);
    const order = new Random(7).permutation(total);
    const { dictionary, codes: joined } = unionOfDictionaries(
      total,
      ps.map((p) => ({ dictionary: p.dictionary, codes: p.wide })),
    );
    const expected = compactDictionary(
      'c',
      dictionary,
      Int32Array.from(order, (i) => joined[i]!),
    );
    const got = shuffledUnion(
      'c',
      ps.map((p) => ({ dictionary: p.dictionary, codes: p.codes })),
      order,
    );
    expect(got.dictionary).toEqual(expected.dictionary);
    expect(Array.from(got.codes)).toEqual(Array.from(expected.codes));
  });

  it('refuses pieces whose rows are not the order’s', () => {
    const ps = [{ dictionary: ['a'], codes: Int8Array.of(0, 0) }];
    expect(() => shuffledUnion('c', ps, Int32Array.of(0, 1, 2))).toThrow(/fewer rows/);
    expect(() => shuffledUnion('c', ps, Int32Array.of(0))).toThrow(/more rows/);
  });
});
