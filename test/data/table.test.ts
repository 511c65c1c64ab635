/**
 * The joins of dictionary-coded pieces: `shuffledUnion` (Assemble's, in two passes) gives
 * exactly what the union, the reordering and the compaction give one after the other.
 */
import { describe, expect, it } from 'vitest';
import {
  type CodeArray,
  columnRows,
  compactDictionary,
  concatTables,
  type EncodedTable,
  originsWithin,
  type RowOrigin,
  rowPlaces,
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

describe('rows named where they are in the input', () => {
  const column = (name: string, rows: number) => ({ name, dictionary: ['v'], codes: new Int32Array(rows) });
  const table = (source: string, rows: number, origins?: RowOrigin[]): EncodedTable => ({
    source,
    rowCount: rows,
    columns: [column('id', rows), column('age', rows)],
    delimiter: ',',
    ...(origins ? { origins } : {}),
  });
  const csvHeader = (source: string) => source.endsWith('.csv') || source.endsWith('.xlsx');
  const sheet = { name: 'Data', letters: ['B', 'D'] };

  it('names the file and its row (header counted or not), or the cell on a sheet, runs of one place together', () => {
    const folder = table('/in', 9, [
      { source: '/in/a.csv', at: 0, firstRow: 0 },
      { source: '/in/b.parquet', at: 3, firstRow: 0 },
      { source: '/in/c.xlsx', at: 6, firstRow: 2, sheet },
    ]);
    expect(rowPlaces(folder, 'age', [1, 2, 3, 5, 6, 8], csvHeader)).toBe(
      'a.csv rows 3, 4, b.parquet rows 1, 3, c.xlsx sheet "Data" cells D4, D6',
    );
    // Without origins: the table's source, from `firstRow` on; a column alone: rows only.
    expect(rowPlaces(table('/x/one.csv', 4), 'age', [2], csvHeader, 100)).toBe('one.csv row 104');
    expect(columnRows('age', [0, 4])).toBe('rows 2, 6');
  });

  it('gives a slice its own origins, and tables put one after another theirs', () => {
    const origins: RowOrigin[] = [
      { source: '/in/a.csv', at: 0, firstRow: 0 },
      { source: '/in/b.csv', at: 3, firstRow: 10 },
    ];
    expect(originsWithin(origins, 2, 3)).toEqual([
      { source: '/in/a.csv', at: 0, firstRow: 2 },
      { source: '/in/b.csv', at: 1, firstRow: 10 },
    ]);
    expect(originsWithin(origins, 4, 2)).toEqual([{ source: '/in/b.csv', at: 0, firstRow: 11 }]);
    // Two shards of one file join into one run; a table without origins is its source from row 0.
    const joined = concatTables([
      table('/in', 2, originsWithin(origins, 0, 2)),
      table('/in', 3, originsWithin(origins, 2, 3)),
      table('/other.csv', 1),
    ]);
    expect(joined.origins).toEqual([...origins, { source: '/other.csv', at: 5, firstRow: 0 }]);
    expect(rowPlaces(joined, 'id', [0, 4, 5], csvHeader)).toBe('a.csv row 2, b.csv row 13, other.csv row 2');
  });
});
