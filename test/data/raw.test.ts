/**
 * Columns carried as their rows' bytes (src/data/raw.ts): moved by gathering, and written by
 * the release writers as the same column of strings is written, byte for byte.
 */
import { DataType, tableFromIPC } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { encodeArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import { encodeParquet } from '../../src/data/parquet-write.ts';
import {
  concatRaw,
  firstUseDictionary,
  gatherRaw,
  type RawValues,
  rawLength,
  rawOfCodes,
  rawStrings,
} from '../../src/data/raw.ts';
import { compactDictionary, type OutputColumn } from '../../src/data/table.ts';
import { utf8Buffers } from '../../src/data/utf8.ts';
import { decodeShardRows, encodeShardRows, RawShards } from '../../src/pipeline/rows.ts';
import { Random } from '../../src/util/random.ts';

const raw = (values: string[]): RawValues => utf8Buffers(values);
const strings = (r: RawValues) => rawStrings(r);

/** Rows of strings as Apply releases them: coded against their distinct values (compactDictionary). */
function coded(name: string, values: string[]) {
  const distinct = [...new Set(values)];
  const index = new Map(distinct.map((v, i) => [v, i]));
  return compactDictionary(
    name,
    distinct,
    Int32Array.from(values, (v) => index.get(v)!),
  );
}

const random = new Random(2026);
/** Values a released CSV must quote or escape, beside plain ones, repeated and unique. */
const TRICKY = [
  'plain',
  '',
  ' ',
  'a;b',
  'a,b',
  'say "hi"',
  'two\nlines',
  'cr\rhere',
  '=SUM(A1)',
  '+1',
  '-3',
  '@me',
  '\tlead',
  "'quoted",
  'café',
  '日本',
  '😀 x',
  'x§y',
];
const rows = Array.from({ length: 3000 }, (_, i) =>
  random.below(3) === 0
    ? TRICKY[random.below(TRICKY.length)]!
    : `note #${i} ${random.below(1e6).toString(36)}`,
);

describe('values as bytes', () => {
  it('gathers, joins and codes rows as the strings would be', () => {
    const r = raw(rows);
    expect(rawLength(r)).toBe(rows.length);
    const order = new Random(1).permutation(rows.length);
    expect(strings(gatherRaw(r, order))).toEqual(Array.from(order, (i) => rows[i]!));
    expect(strings(gatherRaw(r, 10))).toEqual(rows.slice(0, 10));
    expect(strings(gatherRaw(r, new Int32Array(0)))).toEqual([]);
    const pieces = [rows.slice(0, 7), [], rows.slice(7, 1000), rows.slice(1000)].map(raw);
    // A piece may start past its buffer's first byte (a view of a larger vector).
    const shifted = gatherRaw(pieces[2]!, 993);
    expect(strings(concatRaw(pieces))).toEqual(rows);
    expect(strings(concatRaw([pieces[0]!, shifted]))).toEqual(rows.slice(0, 1000));
    const dictionary = [...new Set(rows)];
    const codes = Int32Array.from(rows, (v) => dictionary.indexOf(v));
    expect(strings(rawOfCodes(raw(dictionary), codes))).toEqual(rows);
    expect(strings(rawOfCodes(raw(dictionary), codes, 5, 50))).toEqual(rows.slice(5, 50));
  });

  it('codes distinct values in order of first use, as compactDictionary does the strings', () => {
    for (const values of [rows, [], [''], ['a', 'a', 'a'], TRICKY, [...TRICKY, ...TRICKY].reverse()]) {
      const { dictionary, codes } = firstUseDictionary(raw(values));
      const want = coded('x', values);
      expect(strings(dictionary)).toEqual(want.dictionary);
      expect(Array.from(codes)).toEqual(Array.from(want.codes));
    }
  });
});

describe('released files of a column of values as bytes', () => {
  /** The same rows as a dictionary column (as Apply releases text) and as bytes. */
  const both = (values: string[]): [OutputColumn, OutputColumn] => {
    return [coded('note', values), { name: 'note', kind: 'utf8', values: raw(values) }];
  };
  const age: OutputColumn = compactDictionary(
    'age',
    ['1', '2', '3'],
    Int32Array.from(rows, (_, i) => i % 3),
  );
  const amount: OutputColumn = {
    name: 'amount',
    kind: 'number',
    values: Float64Array.from(rows, (_, i) => i / 4),
  };
  const cases: [string, string[]][] = [
    ['tricky and unique values', rows],
    ['no rows', []],
    ['one empty value', ['']],
    ['values of every kind', TRICKY],
    ['more than 32,768 distinct values (Int32 indices)', Array.from({ length: 40_000 }, (_, i) => `v${i}`)],
  ];

  for (const [name, values] of cases) {
    it(`writes ${name} to Arrow, CSV and Parquet as the strings are written`, () => {
      const [coded, bytes] = both(values);
      const others = (c: OutputColumn) => (values.length === rows.length ? [age, c, amount] : [c]);
      expect(Buffer.from(encodeArrow(others(bytes))).equals(Buffer.from(encodeArrow(others(coded))))).toBe(
        true,
      );
      for (const delimiter of [';', ',', '\t', '§']) {
        for (const escapeFormulas of [false, true]) {
          const got = encodeCsv(others(bytes), delimiter, { escapeFormulas });
          const want = encodeCsv(others(coded), delimiter, { escapeFormulas });
          expect(Buffer.from(got).equals(Buffer.from(want)), `${delimiter} ${escapeFormulas}`).toBe(true);
        }
      }
      // A one-column file quotes an empty value.
      expect(Buffer.from(encodeCsv([bytes], ',')).equals(Buffer.from(encodeCsv([coded], ',')))).toBe(true);
      expect(
        Buffer.from(encodeParquet(others(bytes))).equals(Buffer.from(encodeParquet(others(coded)))),
      ).toBe(true);
    });
  }

  it('writes a work-area piece as a plain Utf8 column of its rows', () => {
    const [, bytes] = both(rows);
    const table = tableFromIPC(encodeArrow([age, bytes], { plainText: true }));
    expect(DataType.isUtf8(table.schema.fields[1]!.type)).toBe(true);
    expect(DataType.isDictionary(table.schema.fields[0]!.type)).toBe(true);
    expect(table.getChildAt(1)!.toArray()).toEqual(rows);
  });
});

describe('shards with columns that pass through', () => {
  it('hold those columns as their rows’ values, read back as written', () => {
    const dictionary = [...new Set(rows)];
    const codes = Int32Array.from(rows, (v) => dictionary.indexOf(v));
    const shard = (from: number, to: number) => ({
      source: 'in.csv',
      rowCount: to - from,
      delimiter: ';',
      columns: [
        {
          name: 'age',
          dictionary: ['1', '2'],
          codes: Int32Array.from({ length: to - from }, (_, i) => i % 2),
        },
        // The reader's dictionary by the shard's end: the values of its rows and the rows before.
        {
          name: 'note',
          dictionary: dictionary.slice(0, Math.max(...codes.subarray(0, to)) + 1),
          codes: codes.slice(from, to),
        },
      ],
    });
    const converter = new RawShards(new Set(['note']));
    const layout = { rowCount: rows.length, shards: [], source: 'in.csv', delimiter: ';' };
    for (const [from, to] of [
      [0, 1000],
      [1000, 1001],
      [1001, 3000],
    ] as const) {
      const converted = converter.convert(shard(from, to));
      const note = converted.columns[1]!;
      expect(note.dictionary).toEqual([]);
      expect(note.codes.length).toBe(0);
      expect(strings(note.raw!)).toEqual(rows.slice(from, to));
      expect(converted.columns[0]!.raw).toBeUndefined();
      const back = decodeShardRows(encodeShardRows(converted), layout, to - from);
      expect(strings(back.columns[1]!.raw!)).toEqual(rows.slice(from, to));
      expect(back.columns[0]!.dictionary).toEqual(['1', '2']);
      expect(Array.from(back.columns[0]!.codes)).toEqual(Array.from(converted.columns[0]!.codes));
    }
    // A dictionary that does not extend the one before (another file's) is encoded afresh.
    const other = converter.convert({
      source: 'in.csv',
      rowCount: 2,
      delimiter: ';',
      columns: [
        { name: 'age', dictionary: ['1'], codes: Int32Array.of(0, 0) },
        { name: 'note', dictionary: ['b', 'a'], codes: Int32Array.of(1, 0) },
      ],
    });
    expect(strings(other.columns[1]!.raw!)).toEqual(['a', 'b']);
  });

  it('keep the number of distinct values of a column listed without its values', () => {
    const table = {
      source: 'in.csv',
      rowCount: 0,
      delimiter: ';',
      columns: [{ name: 'note', dictionary: [], codes: new Int32Array(0), distinct: 12345 }],
    };
    const layout = { rowCount: 0, shards: [], source: 'in.csv', delimiter: ';' };
    expect(decodeShardRows(encodeShardRows(table), layout, 0).columns[0]!.distinct).toBe(12345);
  });
});
