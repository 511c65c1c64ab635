/**
 * Columns carried as their rows' bytes (src/data/raw.ts): moved by gathering, and written by
 * the release writers as they are: CSV cells byte for byte those of the same column of strings,
 * a plain Utf8 Arrow column and a PLAIN Parquet column that read back as the values.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DataType, tableFromIPC } from 'apache-arrow';
import { parquetMetadata } from 'hyparquet';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, encodeArrowPieces, readArrow } from '../../src/data/arrow.ts';
import { encodeCsv, encodeCsvChunks } from '../../src/data/csv.ts';
import { readParquet } from '../../src/data/parquet.ts';
import { encodeParquet } from '../../src/data/parquet-write.ts';
import {
  concatRaw,
  gatherJoined,
  gatherRaw,
  type RawValues,
  rawLength,
  rawOfCodes,
  rawStrings,
  scatterRaw,
} from '../../src/data/raw.ts';
import { compactDictionary, type OutputColumn } from '../../src/data/table.ts';
import { utf8Buffers } from '../../src/data/utf8.ts';
import { tsCsvKernel } from '../../src/kernels/csv/reference.ts';
import { wasmCsvKernel } from '../../src/kernels/csv/wasm.ts';
import { tsGatherBytes, tsShuffleBytes } from '../../src/kernels/gather-bytes/reference.ts';
import { wasmGatherBytes, wasmShuffleBytes } from '../../src/kernels/gather-bytes/wasm.ts';
import {
  decodeShardRows,
  encodeShardRows,
  encodeShardRowsPieces,
  RawShards,
} from '../../src/pipeline/rows.ts';
import { Random } from '../../src/util/random.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-raw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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

  it('gathers rows of any length, empty and not ASCII, from pieces at any offset', () => {
    const values = Array.from({ length: 5000 }, (_, i) => {
      const pick = random.below(5);
      if (pick === 0) return '';
      if (pick === 1) return TRICKY[random.below(TRICKY.length)]!;
      // Long values are copied with set(), short ones byte by byte: both, around the cut.
      if (pick === 2) return 'é'.repeat(40 + random.below(20)) + String(i);
      return `${i}`.repeat(1 + random.below(4));
    });
    const all = raw(values);
    // Pieces as Arrow chunks of a larger vector: offsets that do not start at 0.
    const cuts = [0, 1, 1, 700, 2500, 4999, 5000];
    const pieces = cuts.slice(1).map((end, p) => {
      const from = cuts[p]!;
      return { offsets: all.offsets.subarray(from, end + 1), bytes: all.bytes };
    });
    const shuffle = new Random(3).permutation(values.length);
    const sorted = Int32Array.from(shuffle.subarray(0, 2000)).sort();
    const subset = shuffle.subarray(0, 1234);
    for (const rows of [shuffle, sorted, subset, new Int32Array(0), Int32Array.of(4, 4, 0, 4)]) {
      const want = Array.from(rows, (r) => values[r]!);
      expect(strings(gatherJoined(pieces, rows))).toEqual(want);
      expect(strings(gatherJoined(pieces, rows, tsShuffleBytes))).toEqual(want);
      // The shuffle kernels alone: the same offsets and bytes, none for a row asked for twice.
      const [ts, wasm] = [tsShuffleBytes(pieces, rows), wasmShuffleBytes(pieces, rows)];
      expect(wasm && { offsets: [...wasm.offsets], bytes: Buffer.from(wasm.bytes) }).toEqual(
        ts && { offsets: [...ts.offsets], bytes: Buffer.from(ts.bytes) },
      );
      expect(ts === undefined).toBe(new Set(rows).size < rows.length);
      expect(strings(gatherRaw(all, rows))).toEqual(want);
      const got = gatherJoined(pieces, rows);
      expect(got.offsets[0]).toBe(0);
      expect(got.bytes.length).toBe(got.offsets[rows.length]);
    }
    expect(() => gatherJoined(pieces, Int32Array.of(5000))).toThrow(RangeError);
    expect(() => gatherRaw(all, Int32Array.of(-1))).toThrow(RangeError);
  });

  it("scatters rows to parts as gathering each part's rows would, rows sent nowhere left out", () => {
    const values = Array.from({ length: 3000 }, (_, i) => {
      const pick = random.below(4);
      if (pick === 0) return '';
      if (pick === 1) return TRICKY[random.below(TRICKY.length)]!;
      if (pick === 2) return 'ü'.repeat(50 + random.below(20)) + String(i);
      return `${i}`.repeat(1 + random.below(3));
    });
    const all = raw(values);
    // A piece of an Arrow vector: offsets that do not start at 0.
    const piece = { offsets: all.offsets.subarray(500, 2501), bytes: all.bytes };
    const parts = 7;
    // Part 6 takes no row; -1 sends a row nowhere.
    const partOf = Int32Array.from({ length: 2000 }, () => random.below(7) - 1);
    for (const kernel of [wasmGatherBytes, tsGatherBytes]) {
      const got = scatterRaw(piece, partOf, parts, kernel);
      expect(got).toHaveLength(parts);
      for (let p = 0; p < parts; p++) {
        const rows = Int32Array.from(partOf.keys()).filter((r) => partOf[r] === p);
        expect(strings(got[p]!)).toEqual(strings(gatherRaw(piece, rows)));
        expect(got[p]!.bytes.length).toBe(got[p]!.offsets[rawLength(got[p]!)]);
      }
      expect(rawLength(got[6]!)).toBe(0);
    }
    expect(() => scatterRaw(piece, partOf.subarray(1), parts)).toThrow(RangeError);
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
    it(`writes ${name} to CSV as the strings are written, to Arrow and Parquet as they are`, async () => {
      const [coded, bytes] = both(values);
      const others = (c: OutputColumn) => (values.length === rows.length ? [age, c, amount] : [c]);
      for (const delimiter of [';', ',', '\t', '§', "'"]) {
        for (const escapeFormulas of [false, true]) {
          const got = encodeCsv(others(bytes), delimiter, { escapeFormulas });
          const want = encodeCsv(others(coded), delimiter, { escapeFormulas });
          expect(Buffer.from(got).equals(Buffer.from(want)), `${delimiter} ${escapeFormulas}`).toBe(true);
        }
      }
      // A one-column file quotes an empty value.
      expect(Buffer.from(encodeCsv([bytes], ',')).equals(Buffer.from(encodeCsv([coded], ',')))).toBe(true);
      // The same bytes in small chunks and with the plain-TS row writer: the values quoted as
      // they are written, or (escaped) a cell a row.
      for (const escapeFormulas of [false, true]) {
        const whole = Buffer.from(encodeCsv(others(coded), ';', { escapeFormulas }));
        for (const kernel of [wasmCsvKernel, tsCsvKernel]) {
          const chunks = encodeCsvChunks(others(bytes), ';', { escapeFormulas }, 512, kernel);
          expect(Buffer.concat(chunks).equals(whole), `${kernel.name} ${escapeFormulas}`).toBe(true);
        }
      }
      // Arrow: a plain Utf8 column of the rows' values; the other columns as they were.
      const arrow = encodeArrow(others(bytes));
      // As the writer's pieces (for a store's put), the same bytes.
      expect(Buffer.concat(await encodeArrowPieces(others(bytes))).equals(Buffer.from(arrow))).toBe(true);
      const table = tableFromIPC(arrow);
      const at = others(bytes).indexOf(bytes);
      expect(DataType.isUtf8(table.schema.fields[at]!.type)).toBe(true);
      expect(table.getChildAt(at)!.toArray()).toEqual(values);
      const before = tableFromIPC(encodeArrow(others(coded)));
      for (const [c, field] of table.schema.fields.entries()) {
        if (c === at) continue;
        expect(String(field.type)).toBe(String(before.schema.fields[c]!.type));
        expect(table.getChildAt(c)!.toArray()).toEqual(before.getChildAt(c)!.toArray());
      }
      // Both readers of released files read the values back (an input of no rows is refused).
      const file = (ext: string, content: Uint8Array) => {
        const path = join(dir, `${name.replaceAll(/\W/g, '-')}.${ext}`);
        writeFileSync(path, content);
        return path;
      };
      const parquet = encodeParquet(others(bytes));
      const reads =
        values.length === 0 ? [] : [readArrow(file('arrow', arrow)), readParquet(file('parquet', parquet))];
      for (const read of reads) {
        const note = read.columns[at]!;
        expect(Array.from(note.codes, (k) => note.dictionary[k]!)).toEqual(values);
      }
      // Parquet: the column's values PLAIN, with no dictionary page.
      const metadata = parquetMetadata(
        parquet.buffer.slice(parquet.byteOffset, parquet.byteOffset + parquet.byteLength) as ArrayBuffer,
      );
      for (const group of metadata.row_groups) {
        const chunk = group.columns[at]!.meta_data!;
        expect(chunk.dictionary_page_offset).toBeUndefined();
        expect(chunk.encodings).not.toContain('RLE_DICTIONARY');
      }
    });
  }
});

describe('CSV cells of values as bytes taken from a larger buffer', () => {
  it('quotes the rows that need it, none before or after them, whatever the buffer holds around', () => {
    const values = ['a', 'b,c', '', 'say "hi"', 'd', '=1', 'e\nf', 'g'];
    const inner = raw(values);
    // The rows' bytes inside a buffer with specials before and after them, offsets not from 0.
    const around = Buffer.from(',"\n', 'utf8');
    const bytes = Buffer.concat([around, Buffer.from(inner.bytes), around]);
    const shifted: RawValues = { offsets: inner.offsets.map((o) => o + around.length), bytes };
    for (const escapeFormulas of [false, true]) {
      const columns = (note: OutputColumn): OutputColumn[] => [note, coded('k', values)];
      const want = encodeCsv(columns(coded('note', values)), ',', { escapeFormulas });
      for (const kernel of [wasmCsvKernel, tsCsvKernel]) {
        const got = encodeCsvChunks(
          columns({ name: 'note', kind: 'utf8', values: shifted }),
          ',',
          { escapeFormulas },
          16,
          kernel,
        );
        expect(Buffer.concat(got).toString(), `${kernel.name} ${escapeFormulas}`).toBe(
          Buffer.from(want).toString(),
        );
      }
    }
  });
});

describe('shards with columns that pass through', () => {
  it('hold those columns as their rows’ values, read back as written', async () => {
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
      const bytes = encodeShardRows(converted);
      // Written as the writer's pieces (views of the shard's own arrays), the same bytes.
      const pieces = await encodeShardRowsPieces(converted);
      expect(Buffer.concat(pieces).equals(Buffer.from(bytes))).toBe(true);
      expect(pieces.some((p) => p.buffer === note.raw!.bytes.buffer)).toBe(true);
      const back = decodeShardRows(bytes, layout, to - from);
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
