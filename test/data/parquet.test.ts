/**
 * Parquet input and folder inputs: Parquet cells read as the CSV and Arrow readers read the
 * same values; row groups are split where shards end; errors name the file, the column and
 * the row; the same table as CSV, Arrow, Parquet or a folder of files releases the same bytes,
 * whatever the shard count.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DateDay,
  Field,
  Float64,
  Int32,
  List,
  RecordBatch,
  Schema,
  Struct,
  Table,
  TimestampMillisecond,
  tableFromArrays,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { readArrow } from '../../src/data/arrow.ts';
import { digestInput } from '../../src/data/input.ts';
import { readParquet } from '../../src/data/parquet.ts';
import { formatOf, readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { formatTimestamp } from '../../src/data/values.ts';
import { InputError, SpecError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { readInputShards } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultColumns, adultParquet, adultParquetFolder, writeParquet } from '../helpers/parquet.ts';
import { expectSameRelease, releaseTo } from '../helpers/release.ts';
import { checkShards, expectBytesAlike } from '../helpers/shards.ts';
import { thrown as thrownOf } from '../helpers/thrown.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const thrown = (f: () => unknown) => thrownOf(f, InputError);

const dir = mkdtempSync(join(tmpdir(), 'ppdp-parquet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function cells(t: EncodedTable): string[][] {
  return Array.from({ length: t.rowCount }, (_, r) => t.columns.map((c) => c.dictionary[c.codes[r]!]!));
}

describe('Parquet cells', () => {
  it('are the Arrow reader’s cells for the same ints, floats, bools and strings, with nulls missing', () => {
    const ints = Int32Array.of(1, -2, 30, 1, 0);
    const bigs = BigInt64Array.of(1n, -2n, 9007199254740993n, 1n, 0n);
    const doubles = Float64Array.of(1.5, 0.1, Number.NaN, 1e21, -0);
    const floats = Float32Array.of(1.1, 2, 0.5, 1.1, -3);
    const bools = [true, false, true, true, false];
    const strings = ['a', 'é ü', '', '\uFEFFb', 'a'];
    const path = join(dir, 'types.parquet');
    writeParquet(
      path,
      [
        { name: 'i', data: ints, type: 'INT32', nullable: false },
        { name: 'l', data: bigs, type: 'INT64', nullable: false },
        { name: 'd', data: doubles, type: 'DOUBLE', nullable: false },
        { name: 'f', data: floats, type: 'FLOAT', nullable: false },
        { name: 'b', data: bools, type: 'BOOLEAN', nullable: false },
        { name: 's', data: strings, type: 'STRING', nullable: false },
      ],
      2,
    );
    const arrowPath = join(dir, 'types.arrow');
    writeFileSync(
      arrowPath,
      tableToIPC(tableFromArrays({ i: ints, l: bigs, d: doubles, f: floats, b: bools, s: strings }), 'file'),
    );
    const parquet = readParquet(path);
    expect(cells(parquet)).toEqual(cells(readArrow(arrowPath)));
    expect(cells(parquet)[2]).toEqual(['30', '9007199254740993', '', '0.5', 'true', '']);
    expect(parquet.columns.map((c) => c.name)).toEqual(['i', 'l', 'd', 'f', 'b', 's']);

    // A null: an error naming file, column and row (in the third row group), or the missing value.
    const nulls = join(dir, 'nulls.parquet');
    writeParquet(nulls, [{ name: 'zip', data: ['1', '2', '3', '4', null, '6'], type: 'STRING' }], 2);
    const e = thrown(() => readParquet(nulls));
    expect(e.code).toBe('E_INPUT_NULL');
    expect(e.message).toBe('nulls.parquet column "zip" row 5: the value is null (missing)');
    expect(e.hint).toMatch(/emptyCells/);
    expect(cells(readParquet(nulls, { nulls: 'missing' })).flat()).toEqual(['1', '2', '3', '4', '', '6']);
    // Columns kept as bytes (those released unchanged) hold the same cells.
    for (const size of [1, 2, 3, 1e9]) expectBytesAlike(path, size);
    for (const size of [1, 4, 1e9]) expectBytesAlike(nulls, size, { nulls: 'missing' });
  });

  it('a file from another writer (parquet-wasm: the Rust Parquet writer) reads as the Arrow table it was made from', () => {
    const n = 50;
    const loose = tableFromArrays({
      zip: Array.from({ length: n }, (_, i) => (i % 7 === 3 ? null : String(10000 + ((i * 37) % 11)))),
      id: Array.from({ length: n }, (_, i) => `P${i}`),
      age: Int32Array.from({ length: n }, (_, i) => 20 + (i % 13)),
      big: BigInt64Array.from({ length: n }, (_, i) => BigInt(i) * 10_000_000_000n),
      score: Float64Array.from({ length: n }, (_, i) => (i % 5 === 0 ? Number.NaN : i / 8)),
      flag: Array.from({ length: n }, (_, i) => i % 3 === 0),
    });
    // id is REQUIRED (no definition levels), zip OPTIONAL: both kinds of plain pages are read.
    const schema = new Schema(
      loose.schema.fields.map((f) => (f.name === 'id' ? new Field(f.name, f.type, false) : f)),
    );
    const source = new Table(
      schema,
      loose.batches.map((b) => new RecordBatch(schema, b.data)),
    );
    const arrowPath = join(dir, 'rust.arrow');
    writeFileSync(arrowPath, tableToIPC(source, 'file'));
    const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');
    // Small pages and a small dictionary limit: several pages per chunk, and dictionary-encoded
    // pages followed by plain ones in the same chunk; data pages of both versions.
    for (const version of [wasm.WriterVersion.V1, wasm.WriterVersion.V2]) {
      const props = new wasm.WriterPropertiesBuilder()
        .setCompression(wasm.Compression.SNAPPY)
        .setMaxRowGroupSize(16)
        .setWriteBatchSize(4)
        .setDataPageSizeLimit(16)
        .setDictionaryPageSizeLimit(24)
        .setWriterVersion(version)
        .build();
      const path = join(dir, `rust-${version}.parquet`);
      writeFileSync(path, wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(source, 'stream')), props));
      const parquet = readParquet(path, { nulls: 'missing' });
      expect(cells(parquet)).toEqual(cells(readArrow(arrowPath, { nulls: 'missing' })));
      expect(cells(parquet)[3]).toEqual(['', 'P3', '23', '30000000000', '0.375', 'true']);
      expect(() => readParquet(path)).toThrow(/^rust-\d\.parquet column "zip" row 4: the value is null/);
      for (const size of [1, 7, 16, 1e9]) checkShards(path, size, { nulls: 'missing' });
      for (const size of [1, 7, 16, 1e9]) expectBytesAlike(path, size, { nulls: 'missing' });
    }
  });

  it('DATE is YYYY-MM-DD; TIMESTAMP is ISO 8601 with the fraction it has and Z in UTC', () => {
    const path = join(dir, 'dates.parquet');
    const days = Int32Array.of(0, -1, 19000, 2932896);
    const times = [new Date(0), new Date(1234), new Date(-1), new Date(Date.UTC(2024, 1, 29, 13, 5, 9, 120))];
    writeParquet(path, [
      { name: 'day', data: days, type: 'INT32', nullable: false },
      { name: 'at', data: times, type: 'TIMESTAMP', nullable: false },
    ]);
    // hyparquet-writer writes DATE only from an explicit schema: the day column is annotated here.
    const annotated = join(dir, 'dates-annotated.parquet');
    writeFileSync(
      annotated,
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [{ name: 'day', data: days, nullable: false }],
          schema: [
            { name: 'root', num_children: 1 },
            { name: 'day', type: 'INT32', converted_type: 'DATE', repetition_type: 'REQUIRED' },
          ],
        }),
      ),
    );
    expect(cells(readParquet(annotated)).flat()).toEqual([
      '1970-01-01',
      '1969-12-31',
      '2022-01-08',
      '9999-12-31',
    ]);
    expect(cells(readParquet(path)).map((r) => r[1])).toEqual([
      '1970-01-01T00:00:00Z',
      '1970-01-01T00:00:01.234Z',
      '1969-12-31T23:59:59.999Z',
      '2024-02-29T13:05:09.12Z',
    ]);
    expect(formatTimestamp(-1n, 'NANOS', false)).toBe('1969-12-31T23:59:59.999999999');
    expect(formatTimestamp(1_500_000n, 'MICROS', true)).toBe('1970-01-01T00:00:01.5Z');
  });

  it('a null date or time read as missing is an empty cell, as a null number is, never the epoch', () => {
    const source = new Table({
      day: vectorFromArray([new Date(Date.UTC(2020, 0, 2)), null], new DateDay()),
      at: vectorFromArray([new Date(1000), null], new TimestampMillisecond()),
      x: vectorFromArray([1.5, null], new Float64()),
    });
    const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');
    const path = join(dir, 'null-dates.parquet');
    writeFileSync(path, wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(source, 'stream'))));
    expect(cells(readParquet(path, { nulls: 'missing' }))).toEqual([
      ['2020-01-02', '1970-01-01T00:00:01', '1.5'],
      ['', '', ''],
    ]);
    expectBytesAlike(path, 1, { nulls: 'missing' });
  });
});

describe('a Parquet file that cannot be released', () => {
  it('is refused naming the file, the column and the row, with a hint', () => {
    const good = join(dir, 'good.parquet');
    writeParquet(good, [{ name: 'a', data: ['x', 'y', 'z'], type: 'STRING' }]);
    const bytes = readFileSync(good);

    const truncated = join(dir, 'truncated.parquet');
    writeFileSync(truncated, bytes.subarray(0, bytes.length - 3));
    expect(thrown(() => readParquet(truncated)).code).toBe('E_PARQUET_CORRUPT');
    const csv = join(dir, 'not.parquet');
    writeFileSync(csv, 'a;b\n1;2\n');
    expect(thrown(() => readParquet(csv)).message).toMatch(/^not\.parquet: not a readable Parquet file/);
    const empty = join(dir, 'empty.parquet');
    writeFileSync(empty, '');
    expect(thrown(() => readParquet(empty)).code).toBe('E_INPUT_EMPTY');

    // A column chunk's bytes damaged: the column and its rows are named.
    const damaged = Buffer.from(bytes);
    const at = damaged.indexOf('x');
    damaged.fill(0xff, 4, at + 3);
    const broken = join(dir, 'broken.parquet');
    writeFileSync(broken, damaged);
    const e = thrown(() => readParquet(broken));
    expect(e.code).toBe('E_PARQUET_CORRUPT');
    expect(e.message).toMatch(/^broken\.parquet column "a" rows 1–3: /);

    const lzo = join(dir, 'lzo.parquet');
    writeFileSync(
      lzo,
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [{ name: 'a', data: ['x'], type: 'STRING' }],
          codec: 'LZO',
          // Stored as it is: only the codec named in the metadata matters here.
          compressors: { LZO: (bytes: Uint8Array) => bytes },
        }),
      ),
    );
    const z = thrown(() => readParquet(lzo));
    expect(z.code).toBe('E_PARQUET_CODEC');
    expect(z.message).toBe('lzo.parquet column "a" rows 1–1: compression LZO is not supported');

    const json = join(dir, 'json.parquet');
    writeParquet(json, [
      { name: 'ok', data: [1], type: 'INT32' },
      { name: 'doc', data: [{ a: 1 }], type: 'JSON' },
    ]);
    const t = thrown(() => readParquet(json));
    expect(t.code).toBe('E_PARQUET_TYPE');
    expect(t.message).toBe('json.parquet column "doc": Parquet type BYTE_ARRAY (JSON) is not supported');
    expect(t.hint).toMatch(/cast the column/);
  });

  it('a column the spec names that the file lacks is named with the file’s columns', () => {
    const path = join(dir, 'cols.parquet');
    writeParquet(path, [
      { name: 'age', data: [30, 31], type: 'INT32' },
      { name: 'zip', data: ['1', '2'], type: 'STRING' },
    ]);
    const spec = join(dir, 'cols.json');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'cols.parquet',
        attributes: {
          age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10] } },
          sex: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      }),
    );
    const read = () => [...readInputShards(loadSpec(spec), 1)];
    expect(read).toThrow(SpecError);
    expect(read).toThrow(/attributes\.sex is not a column of cols\.parquet/);
  });
});

describe('an identifying Parquet column', () => {
  it('is not read, whatever its type: the release is the same table’s as CSV', async () => {
    const ws = adultWorkspace(1);
    const n = 40;
    const g = Array.from({ length: n }, (_, i) => (i % 2 ? 'A' : 'B'));
    const s = Array.from({ length: n }, (_, i) => ['x', 'y', 'z'][i % 3]!);
    const list = new List(new Field('item', new Utf8(), true));
    const struct = new Struct([new Field('a', new Utf8(), true), new Field('b', new Int32(), true)]);
    // A list (one leaf) and a struct (two leaves) before a column read: its chunk is the fourth.
    const table = new Table({
      g: vectorFromArray(g, new Utf8()),
      emails: vectorFromArray(
        g.map((_, i) => [`e${i}@x.org`]),
        list,
      ),
      who: vectorFromArray(
        g.map((_, i) => ({ a: `p${i}`, b: i })),
        struct,
      ),
      s: vectorFromArray(s, new Utf8()),
    });
    const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');
    ws.write('t.parquet', wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))));
    // hyparquet-writer's JSON (BYTE_ARRAY annotated JSON), a type ppdp does not read.
    writeParquet(join(ws.dir, 'h.parquet'), [
      { name: 'g', data: g, type: 'STRING' },
      { name: 'emails', data: g.map((_, i) => ({ a: i })), type: 'JSON' },
      { name: 'who', data: g.map((_, i) => `p${i}`), type: 'STRING' },
      { name: 's', data: s, type: 'STRING' },
    ]);
    ws.write('t.csv', `g;emails;who;s\n${g.map((x, i) => `${x};e${i};p${i};${s[i]}`).join('\n')}\n`);
    const omit = new Set(['emails', 'who']);
    for (const input of ['t.parquet', 'h.parquet']) {
      const path = join(ws.dir, input);
      expect(thrown(() => readParquet(path)).message).toMatch(
        new RegExp(`^${input.replace('.', '\\.')} column "emails": Parquet type .* is not supported`),
      );
      const read = readTable(path, { omit });
      expect(read.omitted).toEqual(['emails', 'who']);
      expect(cells(read)).toEqual(g.map((x, i) => [x, s[i]]));
    }
    await expectSameRelease(ws, ['t.csv', 't.parquet', 'h.parquet'], {
      g: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      emails: { type: 'identifying' },
      who: { type: 'identifying' },
      s: { type: 'sensitive' },
    });
  }, 60_000);
});

describe('Parquet and folder inputs in row shards', () => {
  it('row groups split where shards end; the shards are the CSV reader’s, codes and dictionaries', () => {
    const ws = adultWorkspace(500);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    const path = join(ws.dir, 'adult.parquet');
    adultParquet(path, header, rows, 70);
    const csvPath = join(ws.dir, 'adult.csv');
    for (const size of [1, 33, 70, 499, 1e9]) {
      const shards = checkShards(path, size);
      const csvShards = [...readTableShards(csvPath, size)];
      expect(shards.map((s) => s.columns)).toEqual(csvShards.map((s) => s.columns));
    }
  });

  it('a folder is its files in name order, read as one table; errors name the file and its row', () => {
    const folder = join(dir, 'lake');
    mkdirSync(folder);
    writeFileSync(join(folder, 'part-2.csv'), 'a;b\n3;z\n4;x\n');
    writeFileSync(join(folder, 'part-1.csv'), 'a;b\n1;x\n2;y\n');
    writeFileSync(join(folder, 'part-3.csv'), 'a;b\n');
    writeFileSync(join(folder, '_SUCCESS'), '');
    writeFileSync(join(folder, '.part-1.csv.crc'), 'junk');
    const one = join(dir, 'one.csv');
    writeFileSync(one, 'a;b\n1;x\n2;y\n3;z\n4;x\n');
    expect(formatOf(folder)).toBe('csv');
    for (const size of [1, 3, 1e9]) {
      const shards = checkShards(folder, size);
      expect(shards.map((s) => s.columns)).toEqual([...readTableShards(one, size)].map((s) => s.columns));
    }
    expect(digestInput(folder).equals(digestInput(folder))).toBe(true);

    // An empty cell in the second file is named by that file and its row.
    const spec = join(dir, 'lake.json');
    writeFileSync(join(dir, 'b.csv'), 'x;*\ny;*\nz;*\n');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'lake',
        attributes: { a: { type: 'insensitive' }, b: { type: 'quasi-identifying', hierarchy: 'b.csv' } },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      }),
    );
    writeFileSync(join(folder, 'part-2.csv'), 'a;b\n3;z\n4;\n');
    expect(() => [...readInputShards(loadSpec(spec), 3)]).toThrow(
      /^part-2\.csv row 3, column "b": the cell is empty/,
    );

    // Files that disagree, or that are not of one known format.
    writeFileSync(join(folder, 'part-2.csv'), 'a;c\n3;z\n');
    let e = thrown(() => [...readTableShards(folder, 10)]);
    expect(e.code).toBe('E_INPUT_FILES_DIFFER');
    expect(e.message).toBe(
      "lake/part-2.csv: the columns differ from the folder's first file: its column 2 is named otherwise than part-1.csv's",
    );
    rmSync(join(folder, 'part-2.csv'));
    writeFileSync(join(folder, 'notes.md'), '# notes');
    e = thrown(() => [...readTableShards(folder, 10)]);
    expect(e.code).toBe('E_INPUT_FOLDER');
    expect(e.message).toMatch(/^lake\/notes\.md: not a \.csv, \.arrow, \.parquet or \.xlsx file/);
    rmSync(join(folder, 'notes.md'));
    writeParquet(join(folder, 'part-9.parquet'), [{ name: 'a', data: [1], type: 'INT32' }]);
    e = thrown(() => [...readTableShards(folder, 10)]);
    expect(e.message).toBe('lake/part-9.parquet: a Parquet file, but part-1.csv is CSV');
    rmSync(join(folder, 'part-9.parquet'));
    mkdirSync(join(folder, 'year=2024'));
    expect(thrown(() => [...readTableShards(folder, 10)]).code).toBe('E_INPUT_FOLDER');
  });

  it('a Parquet folder: a null in a later file is named by that file and its row', () => {
    const folder = join(dir, 'pq-lake');
    mkdirSync(folder);
    writeParquet(join(folder, 'a.parquet'), [{ name: 'z', data: ['1', '2'], type: 'STRING' }]);
    writeParquet(join(folder, 'b.parquet'), [{ name: 'z', data: ['3', null], type: 'STRING' }]);
    expect(() => [...readTableShards(folder, 1)]).toThrow(/^b\.parquet column "z" row 2: the value is null/);
    expect(cells(readTable(folder, { nulls: 'missing' })).flat()).toEqual(['1', '2', '3', '']);
  });
});

describe('the same table as CSV, Arrow, Parquet and a folder of Parquet files', () => {
  it('releases the same data bytes, with 1 and several shards', async () => {
    const ws = adultWorkspace(3000);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    adultParquet(join(ws.dir, 'adult.parquet'), header, rows, 700);
    const arrow = tableFromArrays(
      Object.fromEntries(
        header.map((name, i) => [
          name,
          name === 'age' ? Int32Array.from(rows, (r) => Number(r[i])) : rows.map((r) => r[i]!),
        ]),
      ),
    );
    ws.write('adult.arrow', tableToIPC(arrow, 'file'));
    adultParquetFolder(ws.dir, 'lake', ws.read('adult.csv'), [1100, 1101], 400);
    const original = ws.read('release.json');
    const release = async (input: string, shards?: number) => {
      ws.write('release.json', original);
      ws.editSpec((s) => {
        s.input = input;
        if (input !== 'adult.csv') delete s.format;
        // Released unchanged: over shards read as bytes, a number (age) and strings alike.
        const attributes = s.attributes as Record<string, unknown>;
        for (const name of ['age', 'native-country']) attributes[name] = { type: 'insensitive' };
      });
      const out = join(ws.dir, 'out', `${input}-${shards ?? 0}`);
      if (shards === undefined) await releaseTo(ws.spec, out);
      else await executeRelease({ spec: ws.spec, out, shards });
      return out;
    };
    const csv = await release('adult.csv');
    const same = (out: string) => {
      for (const name of ['data.csv', 'data.arrow']) {
        expect(readFileSync(join(out, name)).equals(readFileSync(join(csv, name))), `${out} ${name}`).toBe(
          true,
        );
      }
    };
    same(await release('adult.arrow'));
    same(await release('adult.parquet'));
    same(await release('adult.parquet', 3));
    same(await release('lake'));
    same(await release('lake', 4));
    const report = JSON.parse(readFileSync(join(await release('lake', 1), 'report.json'), 'utf8'));
    expect(report.input.file).toBe('lake');
  }, 120_000);
});
