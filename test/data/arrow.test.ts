import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Bool,
  type Data,
  Dictionary,
  Field,
  Float16,
  Float32,
  Float64,
  Int8,
  Int16,
  Int32,
  Int64,
  LargeUtf8,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimeMillisecond,
  tableFromArrays,
  tableFromIPC,
  tableToIPC,
  Uint8,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { arrowRanges, encodeArrow, readArrow, readArrowShards } from '../../src/data/arrow.ts';
import { readTable } from '../../src/data/read.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { InputError, OutputError } from '../../src/errors.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-arrow-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function write(bytes: Uint8Array | string, name = `t${n++}.arrow`): string {
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return path;
}

/** Column name → decoded values. */
function decode(t: EncodedTable): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const c of t.columns) out[c.name] = Array.from(c.codes, (code) => c.dictionary[code]!);
  return out;
}

function inputError(fn: () => unknown, code: string): InputError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe(code);
    return err as InputError;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

/** A table of several record batches whose schema is `fields`; each batch is a list of column Data. */
function multiBatch(fields: Field[], batches: Data[][]): Table {
  const schema = new Schema(fields);
  return new Table(
    schema,
    batches.map(
      (children) =>
        new RecordBatch(
          schema,
          makeData({ type: new Struct(fields), length: children[0]!.length, nullCount: 0, children }),
        ),
    ),
  );
}

function dictData(type: Dictionary, dict: string[], idx: number[]): Data {
  return makeData({
    type,
    length: idx.length,
    nullCount: 0,
    data: Int32Array.from(idx),
    dictionary: vectorFromArray(dict, new Utf8()),
  });
}

describe('encodeArrow → readArrow', () => {
  const cols: OutputColumn[] = [
    {
      name: 'age',
      kind: 'dictionary',
      dictionary: ['[20-30[', '[30-40[', '*'],
      codes: Int32Array.from([0, 1, 2, 1, 0]),
    },
    {
      name: 'city',
      kind: 'dictionary',
      dictionary: ['Zürich', 'a;b', '', 'say "x"'],
      codes: Int32Array.from([3, 2, 1, 0, 0]),
    },
    { name: 'income', kind: 'number', values: Float64Array.from([1, 2.5, -0.125, 1e21, 3]) },
  ];

  it('round-trips decoded values', () => {
    const bytes = encodeArrow(cols);
    const t = readArrow(write(bytes));
    expect(t.rowCount).toBe(5);
    expect(t.delimiter).toBe(';');
    expect(decode(t)).toEqual({
      age: ['[20-30[', '[30-40[', '*', '[30-40[', '[20-30['],
      city: ['say "x"', '', 'a;b', 'Zürich', 'Zürich'],
      income: ['1', '2.5', '-0.125', '1e+21', '3'],
    });
    // A dictionary listed in the order of first use is kept as it is; another is coded in that
    // order, as a CSV of the same rows is.
    expect(t.columns[0]!.dictionary).toEqual(cols[0]!.kind === 'dictionary' ? cols[0]!.dictionary : []);
    expect(t.columns[1]!.dictionary).toEqual(['say "x"', '', 'a;b', 'Zürich']);
    expect(Array.from(t.columns[1]!.codes)).toEqual([0, 1, 2, 3, 3]);
  });

  it('writes the file format with Dictionary<Utf8, Int8> and Float64 columns for few values', () => {
    const bytes = encodeArrow(cols);
    expect(new TextDecoder().decode(bytes.subarray(0, 6))).toBe('ARROW1');
    const table = tableFromIPC(bytes);
    expect(table.schema.fields.map((f) => String(f.type))).toEqual([
      'Dictionary<Int8, Utf8>',
      'Dictionary<Int8, Utf8>',
      'Float64',
    ]);
    expect(table.getChild('city')!.toArray()).toEqual(['say "x"', '', 'a;b', 'Zürich', 'Zürich']);
  });

  it('widens the indices with the dictionary: Int8 to 128 values, Int16 to 32,768, then Int32', () => {
    for (const [size, type] of [
      [128, 'Int8'],
      [129, 'Int16'],
      [32768, 'Int16'],
      [32769, 'Int32'],
    ] as const) {
      const dictionary = Array.from({ length: size }, (_, i) => `v${i}`);
      // The last value and the first: the codes at both ends of the type's range.
      const codes = Int32Array.from([size - 1, 0, size - 1]);
      const bytes = encodeArrow([{ name: 'a', kind: 'dictionary', dictionary, codes }]);
      expect(String(tableFromIPC(bytes).schema.fields[0]!.type)).toBe(`Dictionary<${type}, Utf8>`);
      const t = readArrow(write(bytes));
      // Coded in order of first use: the entries no row uses are not listed.
      expect(Array.from(t.columns[0]!.codes)).toEqual([0, 1, 0]);
      expect(t.columns[0]!.dictionary).toEqual([`v${size - 1}`, 'v0']);
    }
  });

  it('is deterministic', () => {
    const a = encodeArrow(cols);
    encodeArrow([{ name: 'other', kind: 'dictionary', dictionary: ['q'], codes: Int32Array.from([0]) }]);
    const b = encodeArrow(cols);
    expect(Buffer.from(a).equals(Buffer.from(b))).toBe(true);
  });

  it('rejects columns of different lengths and out-of-range codes', () => {
    expect(() =>
      encodeArrow([
        { name: 'a', kind: 'dictionary', dictionary: ['x'], codes: Int32Array.from([0, 0]) },
        { name: 'b', kind: 'number', values: Float64Array.from([1]) },
      ]),
    ).toThrow(OutputError);
    expect(() =>
      encodeArrow([{ name: 'a', kind: 'dictionary', dictionary: ['x'], codes: Int32Array.from([1]) }]),
    ).toThrow(OutputError);
  });

  it('is picked by readTable for .arrow, .feather and .ipc', () => {
    const bytes = encodeArrow(cols);
    for (const ext of ['arrow', 'feather', 'IPC'])
      expect(readTable(write(bytes, `x${n++}.${ext}`)).rowCount).toBe(5);
    expect(readTable(write(bytes, `x${n++}.bin`), { format: 'arrow' }).rowCount).toBe(5);
  });
});

describe('readArrow: input types', () => {
  it('reads Utf8, LargeUtf8, int, float and bool columns', () => {
    const table = new Table({
      s: vectorFromArray(['b', 'a', 'b', 'c'], new Utf8()),
      ls: vectorFromArray(['x', 'x', 'ÿ', 'x'], new LargeUtf8()),
      i8: vectorFromArray([-1, 2, -1, 127], new Int8()),
      u8: vectorFromArray([255, 0, 1, 255], new Uint8()),
      i64: vectorFromArray([2n ** 60n, -5n, 0n, 2n ** 60n], new Int64()),
      f32: vectorFromArray([0.5, 1.25, 0.5, -2], new Float32()),
      f64: vectorFromArray([0.1, Number.NaN, 3, 1e-7], new Float64()),
      f16: vectorFromArray([1.5, -2, 1.5, 0], new Float16()),
      ok: vectorFromArray([true, false, false, true], new Bool()),
    });
    for (const fmt of ['file', 'stream'] as const) {
      const t = readArrow(write(tableToIPC(table, fmt)));
      expect(decode(t)).toEqual({
        s: ['b', 'a', 'b', 'c'],
        ls: ['x', 'x', 'ÿ', 'x'],
        i8: ['-1', '2', '-1', '127'],
        u8: ['255', '0', '1', '255'],
        i64: [String(2n ** 60n), '-5', '0', String(2n ** 60n)],
        f32: ['0.5', '1.25', '0.5', '-2'],
        f64: ['0.1', '', '3', '1e-7'], // NaN is the missing value, as a released CSV writes it
        f16: ['1.5', '-2', '1.5', '0'],
        ok: ['true', 'false', 'false', 'true'],
      });
      // Non-dictionary columns are encoded by first appearance, one entry per distinct value.
      expect(t.columns[0]!.dictionary).toEqual(['b', 'a', 'c']);
      expect(Array.from(t.columns[0]!.codes)).toEqual([0, 1, 0, 2]);
    }
  });

  it('reads dictionaries with Int8 and Int16 indices', () => {
    const t8 = new Dictionary(new Utf8(), new Int8(), 0);
    const t16 = new Dictionary(new Utf8(), new Int16(), 1);
    const fields = [new Field('a', t8, false), new Field('b', t16, false)];
    const a = makeData({
      type: t8,
      length: 3,
      nullCount: 0,
      data: Int8Array.from([1, 0, 1]),
      dictionary: vectorFromArray(['p', 'q'], new Utf8()),
    });
    const b = makeData({
      type: t16,
      length: 3,
      nullCount: 0,
      data: Int16Array.from([0, 0, 1]),
      dictionary: vectorFromArray(['r', 's'], new Utf8()),
    });
    const t = readArrow(write(tableToIPC(multiBatch(fields, [[a, b]]), 'file')));
    expect(decode(t)).toEqual({ a: ['q', 'p', 'q'], b: ['r', 'r', 's'] });
  });

  it('merges duplicate dictionary entries into one code', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const t = readArrow(
      write(
        tableToIPC(
          multiBatch([new Field('a', type, false)], [[dictData(type, ['x', 'y', 'x'], [0, 1, 2, 2])]]),
        ),
      ),
    );
    expect(t.columns[0]!.dictionary).toEqual(['x', 'y']);
    expect(Array.from(t.columns[0]!.codes)).toEqual([0, 1, 0, 0]);
  });
});

describe('readArrow: multiple record batches', () => {
  it('shares one dictionary across batches (file format)', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const dict = vectorFromArray(['x', 'y', 'z'], new Utf8());
    const fields = [
      new Field('a', type, false),
      new Field('n', new Int32(), false),
      new Field('s', new Utf8(), false),
    ];
    const batch = (idx: number[], nums: number[], strs: string[]): Data[] => [
      makeData({ type, length: idx.length, nullCount: 0, data: Int32Array.from(idx), dictionary: dict }),
      makeData({ type: new Int32(), length: nums.length, nullCount: 0, data: Int32Array.from(nums) }),
      vectorFromArray(strs, new Utf8()).data[0]!,
    ];
    const table = multiBatch(fields, [
      batch([0, 1, 0], [1, 2, 3], ['p', 'q', 'p']),
      batch([2, 1], [3, 5], ['r', 'p']),
    ]);
    const bytes = tableToIPC(table, 'file');
    expect(tableFromIPC(bytes).batches.length).toBe(2);
    const t = readArrow(write(bytes));
    expect(t.rowCount).toBe(5);
    expect(decode(t)).toEqual({
      a: ['x', 'y', 'x', 'z', 'y'],
      n: ['1', '2', '3', '3', '5'],
      s: ['p', 'q', 'p', 'r', 'p'],
    });
    expect(t.columns[0]!.dictionary).toEqual(['x', 'y', 'z']);
    expect(Array.from(t.columns[0]!.codes)).toEqual([0, 1, 0, 2, 1]);
    expect(t.columns[1]!.dictionary).toEqual(['1', '2', '3', '5']);
  });

  it('remaps batches with replacement dictionaries (stream format)', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const fields = [new Field('a', type, false)];
    const table = multiBatch(fields, [
      [dictData(type, ['x', 'y'], [0, 1, 0])],
      [dictData(type, ['z', 'y'], [0, 1])],
      [dictData(type, ['y'], [0, 0])],
    ]);
    const t = readArrow(write(tableToIPC(table, 'stream')));
    expect(t.rowCount).toBe(7);
    expect(decode(t).a).toEqual(['x', 'y', 'x', 'z', 'y', 'y', 'y']);
    expect(t.columns[0]!.dictionary).toEqual(['x', 'y', 'z']);
  });

  it('reads batches that grow and shrink, each batch its own rows', () => {
    const sizes = [2, 5, 1, 4];
    const tables = sizes.map((n, b) =>
      tableFromArrays({
        n: Int32Array.from({ length: n }, (_, i) => 10 * b + i),
        x: Float64Array.from({ length: n }, (_, i) => b + i / 4),
      }),
    );
    const t = readArrow(write(tableToIPC(new Table(tables.flatMap((t) => t.batches)), 'file')));
    const rows = sizes.flatMap((n, b) =>
      Array.from({ length: n }, (_, i) => [`${10 * b + i}`, `${b + i / 4}`]),
    );
    expect(decode(t)).toEqual({ n: rows.map((r) => r[0]), x: rows.map((r) => r[1]) });
  });

  it('reads a table built from several tableFromArrays batches', () => {
    const t1 = tableFromArrays({ n: Float64Array.from([1, 2]), b: Int32Array.from([7, 8]) });
    const t2 = tableFromArrays({ n: Float64Array.from([2, 4]), b: Int32Array.from([9, 7]) });
    const table = new Table([...t1.batches, ...t2.batches]);
    const t = readArrow(write(tableToIPC(table, 'file')));
    expect(decode(t)).toEqual({ n: ['1', '2', '2', '4'], b: ['7', '8', '9', '7'] });
  });
});

describe('arrowRanges: a file read as ranges of its record batches', () => {
  const sizes = [3, 2, 4, 1, 5];
  const batches = sizes.map(
    (n, b) =>
      new Table({
        n: vectorFromArray(Int32Array.from({ length: n }, (_, i) => 10 * b + i)),
        s: vectorFromArray(
          Array.from({ length: n }, (_, i) => `v${(b + i) % 4}`),
          new Utf8(),
        ),
      }),
  );
  const whole = new Table(batches.flatMap((t) => t.batches));
  /** The rows of every range, read on its own, one after another. */
  const rangesRead = (path: string, ranges: NonNullable<ReturnType<typeof arrowRanges>>) =>
    ranges.flatMap((range) => [...readArrowShards(path, Number.POSITIVE_INFINITY, { range })]);

  for (const format of ['file', 'stream'] as const) {
    it(`groups whole batches up to the rows asked, and the ranges hold the file's rows (${format} format)`, () => {
      const path = write(tableToIPC(whole, format));
      const ranges = arrowRanges(path, 5)!;
      // 3+2 | 4+1 | 5: no range passes 5 rows unless one batch does.
      expect(ranges.map((r) => [r.firstRow, r.rows])).toEqual([
        [0, 5],
        [5, 5],
        [10, 5],
      ]);
      const parts = rangesRead(path, ranges);
      expect(parts.map((t) => t.rowCount)).toEqual([5, 5, 5]);
      const all = decode(readArrow(path));
      const joined = parts.map(decode).reduce((a, b) => ({ n: [...a.n!, ...b.n!], s: [...a.s!, ...b.s!] }));
      expect(joined).toEqual(all);
      // A batch longer than the rows asked is a range of its own.
      expect(arrowRanges(path, 2)!.map((r) => r.rows)).toEqual(sizes);
    });
  }

  it('does not split a file of one batch, or of one range', () => {
    const one = write(tableToIPC(tableFromArrays({ n: Int32Array.from([1, 2, 3]) }), 'file'));
    expect(arrowRanges(one, 1)).toBeUndefined();
    expect(arrowRanges(write(tableToIPC(whole, 'file')), 100)).toBeUndefined();
  });

  it('does not split a stream whose dictionaries change after its first batch, nor bytes it cannot walk', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const table = multiBatch(
      [new Field('a', type, false)],
      [[dictData(type, ['x', 'y'], [0, 1, 0])], [dictData(type, ['z', 'y'], [0, 1])]],
    );
    expect(arrowRanges(write(tableToIPC(table, 'stream')), 1)).toBeUndefined();
    expect(arrowRanges(write('not arrow at all, but long enough to be walked'), 1)).toBeUndefined();
    expect(arrowRanges(join(dir, 'missing.arrow'), 1)).toBeUndefined();
  });

  it('a range names rows of the file in its errors', () => {
    const fields = [new Field('v', new Int32(), true)];
    const data = (values: (number | null)[]) => vectorFromArray(values, new Int32()).data[0]!;
    const path = write(
      tableToIPC(multiBatch(fields, [[data([1, 2])], [data([3, 4])], [data([5, null])]]), 'file'),
    );
    const ranges = arrowRanges(path, 2)!;
    expect(ranges).toHaveLength(3);
    const err = inputError(() => rangesRead(path, ranges.slice(2)), 'E_INPUT_NULL');
    expect(err.message).toContain('column "v" row 6');
  });
});

describe('readArrow: errors', () => {
  it('E_INPUT_MISSING', () => {
    const err = inputError(() => readArrow(join(dir, 'gone.arrow')), 'E_INPUT_MISSING');
    expect(err.message).toContain('gone.arrow: input file not found');
  });

  it('E_INPUT_EMPTY for a zero-byte file', () => {
    inputError(() => readArrow(write(new Uint8Array(0), 'zero.arrow')), 'E_INPUT_EMPTY');
  });

  it('E_ARROW_CORRUPT for truncated files and other formats', () => {
    const bytes = encodeArrow([
      { name: 'a', kind: 'dictionary', dictionary: ['x', 'y'], codes: Int32Array.from([0, 1, 1]) },
    ]);
    for (const cut of [bytes.length - 1, bytes.length - 40, Math.floor(bytes.length / 2), 10]) {
      const err = inputError(() => readArrow(write(bytes.subarray(0, cut), 'cut.arrow')), 'E_ARROW_CORRUPT');
      expect(err.message).toContain('cut.arrow');
    }
    const stream = tableToIPC(tableFromArrays({ a: Int32Array.from([1, 2, 3]) }), 'stream');
    inputError(
      () => readArrow(write(stream.subarray(0, stream.length - 20), 'cut.arrow')),
      'E_ARROW_CORRUPT',
    );
    const csv = inputError(() => readArrow(write('a;b\n1;2\n', 'text.arrow')), 'E_ARROW_CORRUPT');
    expect(csv.message).toContain('text.arrow');
    inputError(() => readArrow(write('short', 'tiny.arrow')), 'E_ARROW_CORRUPT');
  });

  it('E_INPUT_NO_ROWS for a table without rows', () => {
    const empty = tableFromArrays({ a: new Float64Array(0) });
    const err = inputError(
      () => readArrow(write(tableToIPC(empty, 'file'), 'norows.arrow')),
      'E_INPUT_NO_ROWS',
    );
    expect(err.message).toContain('norows.arrow');
  });

  it('a table without record batches has no rows: alone E_INPUT_NO_ROWS, in a folder it adds none', () => {
    const fields = [new Field('a', new Float64(), false)];
    const rows = tableFromArrays({ a: Float64Array.of(1, 2) });
    // Arrow JS writes the file format of a table without batches with no message: its schema is the footer's.
    const empty = new Table(new Schema(fields));
    for (const format of ['file', 'stream'] as const) {
      const err = inputError(
        () => readArrow(write(tableToIPC(empty, format), `batchless-${format}.arrow`)),
        'E_INPUT_NO_ROWS',
      );
      expect(err.message).toBe(`batchless-${format}.arrow: the table has no rows`);
    }
    const folder = join(dir, 'parts');
    mkdirSync(folder);
    writeFileSync(join(folder, 'part-0.arrow'), tableToIPC(empty, 'file'));
    inputError(() => readTable(folder), 'E_INPUT_NO_ROWS');
    writeFileSync(join(folder, 'part-1.arrow'), tableToIPC(rows, 'file'));
    writeFileSync(join(folder, 'part-2.arrow'), tableToIPC(empty, 'file'));
    expect(decode(readTable(folder))).toEqual({ a: ['1', '2'] });
  });

  it('E_INPUT_NULL names column and row, not values', () => {
    const table = new Table({
      name: vectorFromArray(['SECRET-A', 'SECRET-B', 'SECRET-C'], new Utf8()),
      zip: vectorFromArray(['SECRET-1', null, 'SECRET-3'], new Utf8()),
    });
    const err = inputError(() => readArrow(write(tableToIPC(table), 'nulls.arrow')), 'E_INPUT_NULL');
    expect(err.message).toContain('nulls.arrow');
    expect(err.message).toContain('column "zip"');
    expect(err.message).toContain('row 2');
    expect(err.describe()).not.toContain('SECRET');
  });

  it('E_INPUT_NULL in a later batch counts rows across batches', () => {
    const fields = [new Field('v', new Int32(), true)];
    const first = makeData({ type: new Int32(), length: 2, nullCount: 0, data: Int32Array.from([1, 2]) });
    const second = vectorFromArray([3, null], new Int32()).data[0]!;
    const err = inputError(
      () => readArrow(write(tableToIPC(multiBatch(fields, [[first], [second]]), 'stream'), 'late.arrow')),
      'E_INPUT_NULL',
    );
    expect(err.message).toContain('column "v" row 4');
  });

  it('with nulls: "missing", a null of any type reads as the missing value, and adds no other entry', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const dict = makeData({
      type,
      length: 3,
      nullCount: 0,
      data: Int32Array.from([0, 0, 1]),
      dictionary: vectorFromArray(['x', null], new Utf8()),
    });
    const table = new Table({
      s: vectorFromArray(['a', null, 'b'], new Utf8()),
      f: vectorFromArray([1.5, null, 2], new Float64()),
      ok: vectorFromArray([true, null, true], new Bool()),
    });
    const path = write(tableToIPC(table));
    expect(() => readArrow(path)).toThrow(/column "s" row 2: the value is null/);
    const read = readArrow(path, { nulls: 'missing' });
    expect(
      Object.fromEntries(read.columns.map((c) => [c.name, [...c.codes].map((x) => c.dictionary[x])])),
    ).toEqual({
      s: ['a', '', 'b'],
      f: ['1.5', '', '2'],
      ok: ['true', '', 'true'],
    });
    expect(read.columns.map((c) => c.dictionary.length)).toEqual([3, 3, 2]);
    const d = readArrow(write(tableToIPC(multiBatch([new Field('d', type, true)], [[dict]]))), {
      nulls: 'missing',
    });
    expect([...d.columns[0]!.codes].map((x) => d.columns[0]!.dictionary[x])).toEqual(['x', 'x', '']);
  });

  it('with nulls: "missing", NaN and a null are one missing value, one entry, plain or in a dictionary', () => {
    const type = new Dictionary(new Float64(), new Int32(), 0);
    const fields = [new Field('f', new Float64(), true), new Field('d', type, true)];
    const plain = vectorFromArray([1.5, Number.NaN, null, 2, Number.NaN], new Float64()).data[0]!;
    const dict = makeData({
      type,
      length: 5,
      nullCount: 1,
      nullBitmap: Uint8Array.of(0b11011),
      data: Int32Array.from([0, 1, 0, 2, 1]),
      dictionary: vectorFromArray([1.5, Number.NaN, 2], new Float64()),
    });
    const read = readArrow(write(tableToIPC(multiBatch(fields, [[plain, dict]]))), { nulls: 'missing' });
    expect(decode(read)).toEqual({ f: ['1.5', '', '', '2', ''], d: ['1.5', '', '', '2', ''] });
    expect(read.columns.map((c) => c.dictionary)).toEqual([
      ['1.5', '', '2'],
      ['1.5', '', '2'],
    ]);
  });

  it('E_INPUT_NULL for a dictionary entry that is null', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const data = makeData({
      type,
      length: 3,
      nullCount: 0,
      data: Int32Array.from([0, 0, 1]),
      dictionary: vectorFromArray(['SECRET', null], new Utf8()),
    });
    const err = inputError(
      () => readArrow(write(tableToIPC(multiBatch([new Field('d', type, true)], [[data]])), 'dnull.arrow')),
      'E_INPUT_NULL',
    );
    expect(err.message).toContain('column "d" row 3');
    expect(err.describe()).not.toContain('SECRET');
  });

  it('E_ARROW_CORRUPT for a dictionary index outside the dictionary', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    for (const [name, idx] of [
      ['high.arrow', [0, 5, 1]],
      ['negative.arrow', [0, -1, 1]],
    ] as const) {
      const data = dictData(type, ['x', 'y'], [...idx]);
      const bytes = tableToIPC(multiBatch([new Field('d', type, false)], [[data]]), 'file');
      const err = inputError(() => readArrow(write(bytes, name)), 'E_ARROW_CORRUPT');
      expect(err.message).toContain(`${name} column "d" row 2`);
    }
  });

  it('E_ARROW_SCHEMA for duplicate column names', () => {
    const fields = [new Field('a', new Int32(), false), new Field('a', new Int32(), false)];
    const col = () => makeData({ type: new Int32(), length: 1, nullCount: 0, data: Int32Array.from([1]) });
    const err = inputError(
      () => readArrow(write(tableToIPC(multiBatch(fields, [[col(), col()]]), 'file'), 'dupcols.arrow')),
      'E_ARROW_SCHEMA',
    );
    expect(err.message).toContain('"a" appears twice');
  });

  it('E_ARROW_SCHEMA for a column without a name (a field may leave its name out)', () => {
    const table = new Table({
      a: vectorFromArray([1, 2], new Int32()),
      b: vectorFromArray([3, 4], new Int32()),
    });
    const bytes = Buffer.from(tableToIPC(table, 'stream'));
    // The stream's first message is the schema (after its 0xFFFFFFFF marker and length): the
    // name slot of its fields' vtable (one both share) is cleared, as a writer leaving it out does.
    const table0 = (at: number) => at + bytes.readUInt32LE(at);
    const slot = (t: number, i: number) => {
      const vtable = t - bytes.readInt32LE(t);
      return { at: vtable + 4 + 2 * i, offset: bytes.readUInt16LE(vtable + 4 + 2 * i) };
    };
    const message = table0(8);
    const schema = table0(message + slot(message, 2).offset);
    const fields = table0(schema + slot(schema, 1).offset);
    const second = table0(fields + 8);
    bytes.writeUInt16LE(0, slot(second, 0).at);
    const err = inputError(() => readArrow(write(bytes, 'noname.arrows')), 'E_ARROW_SCHEMA');
    expect(err.message).toBe('noname.arrows: column 1 has no name');
  });

  it('E_ARROW_TYPE names the column and its type', () => {
    const table = new Table({
      ok: vectorFromArray([1, 2], new Int32()),
      time: vectorFromArray([0, 86_399_000], new TimeMillisecond()),
    });
    const err = inputError(() => readArrow(write(tableToIPC(table), 'types.arrow')), 'E_ARROW_TYPE');
    expect(err.message).toContain('types.arrow');
    expect(err.message).toContain('column "time"');
    expect(err.message).toContain('Time');
    expect(err.hint).toContain('Utf8');
  });
});

describe('readArrow: larger input', () => {
  it('reads 300k dictionary rows without decoding them one by one', () => {
    const rows = 300_000;
    const codes = new Int32Array(rows);
    for (let r = 0; r < rows; r++) codes[r] = (r * 7919) % 50;
    const dictionary = Array.from({ length: 50 }, (_, j) => `v${j}`);
    const values = Float64Array.from({ length: rows }, (_, r) => r % 11);
    const path = write(
      encodeArrow([
        { name: 'd', kind: 'dictionary', dictionary, codes },
        { name: 'x', kind: 'number', values },
      ]),
    );
    const t = readArrow(path);
    expect(t.rowCount).toBe(rows);
    // Coded in order of first use (rows 0 to 49 use every entry once), as a CSV of these rows.
    const firstUse = Array.from({ length: 50 }, (_, r) => `v${codes[r]}`);
    expect(t.columns[0]!.dictionary).toEqual(firstUse);
    const read = t.columns[0]!.codes;
    // Compared as values: a deep equal over 300k elements is slow.
    expect(read.every((c, r) => firstUse[c] === dictionary[codes[r]!])).toBe(true);
    expect(t.columns[1]!.dictionary.length).toBe(11);
    expect(readFileSync(path).length).toBeGreaterThan(rows * 4);
  });
});

describe('readArrow: one message at a time', () => {
  it('reads a file whose stream part starts with the schema message (as other writers write it)', () => {
    const table = tableFromArrays({ a: Int32Array.from([4, 5, 4]), s: ['x', 'y', 'x'] });
    const stream = tableToIPC(table, 'stream');
    const file = tableToIPC(table, 'file');
    // The footer (schema, blocks), its length and the closing magic: the last bytes of the file.
    const footerLength = Buffer.from(file).readInt32LE(file.length - 10);
    const tail = file.subarray(file.length - 10 - footerLength);
    const magic = Buffer.from('ARROW1\0\0', 'latin1');
    const t = readArrow(write(Buffer.concat([magic, stream, tail])));
    expect(decode(t)).toEqual({ a: ['4', '5', '4'], s: ['x', 'y', 'x'] });
  });

  it('reads many record batches into codes of exactly rowCount entries', () => {
    const type = new Dictionary(new Utf8(), new Int32(), 0);
    const fields = [new Field('a', type, false)];
    const dict = vectorFromArray(['p', 'q', 'r'], new Utf8());
    const batches = Array.from({ length: 50 }, (_, b) => [
      makeData({ type, length: 4, nullCount: 0, data: Int32Array.from([b % 3, 1, 2, 0]), dictionary: dict }),
    ]);
    for (const format of ['file', 'stream'] as const) {
      const t = readArrow(write(tableToIPC(multiBatch(fields, batches), format)));
      expect(t.rowCount).toBe(200);
      expect(t.columns[0]!.codes.buffer.byteLength).toBe(200 * 4);
      expect(decode(t).a.slice(0, 8)).toEqual(['p', 'q', 'r', 'p', 'q', 'q', 'r', 'p']);
    }
  });
});
