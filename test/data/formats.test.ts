/**
 * Inputs publishers have: Parquet files of every codec their writers use, and Arrow and Parquet
 * dates, timestamps and decimals. Each, made by a maintained writer, releases the same bytes as
 * the same table given as CSV with the texts ppdp reads them as; each kind of bad file is
 * refused with a message naming the file and what to do. A spreadsheet's CSV export releases
 * what its workbook does, the empty rows of its used range left out.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  DateDay,
  DateMillisecond,
  Decimal,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  Timestamp,
  TimestampMicrosecond,
  TimestampMillisecond,
  TimestampNanosecond,
  TimestampSecond,
  TimeUnit,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import ExcelJS from 'exceljs';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { readArrow } from '../../src/data/arrow.ts';
import { withDecimalPoint } from '../../src/data/decimal.ts';
import { readParquet } from '../../src/data/parquet.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import {
  formatDecimal,
  formatTimestamp,
  signedBigEndian,
  signedLittleEndian,
} from '../../src/data/values.ts';
import { InputError } from '../../src/errors.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultColumns } from '../helpers/parquet.ts';
import { expectSameRelease, releaseTo } from '../helpers/release.ts';
import { expectBytesAlike } from '../helpers/shards.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');

function cells(table: EncodedTable): string[][] {
  return Array.from({ length: table.rowCount }, (_, r) =>
    table.columns.map((c) => c.dictionary[c.codes[r]!]!),
  );
}

/** A 128-bit (or `bits`) two's-complement little-endian decimal column's words. */
function decimalWords(values: bigint[], bits = 128): Uint32Array {
  const per = bits / 32;
  const words = new Uint32Array(values.length * per);
  values.forEach((v, i) => {
    let u = BigInt.asUintN(bits, v);
    for (let w = 0; w < per; w++) {
      words[i * per + w] = Number(u & 0xffffffffn);
      u >>= 32n;
    }
  });
  return words;
}

/** Extra columns of typed values, and the texts the same table as CSV holds. */
function typedColumns(n: number) {
  const days = Int32Array.from({ length: n }, (_, i) => (i % 40) * 400 - 4000);
  const millis = BigInt64Array.from({ length: n }, (_, i) =>
    BigInt((i % 37) * 86_400_000 * 11 - 86_400_000 * 60),
  );
  const seconds = BigInt64Array.from({ length: n }, (_, i) => BigInt(((i * 7919) % 5000) * 3_600 + (i % 3)));
  const micros = BigInt64Array.from({ length: n }, (_, i) => BigInt((i % 50) * 1_000_123_450 - 7_000_000));
  const nanos = BigInt64Array.from({ length: n }, (_, i) => BigInt(i % 29) * 1_000_000_001n - 3n);
  const amounts = Array.from({ length: n }, (_, i) => BigInt(((i * 37) % 2001) - 1000));
  const big = Array.from({ length: n }, (_, i) => BigInt(i % 13) * 10n ** 25n - 7n);
  const fields: Field[] = [];
  const data: ReturnType<typeof makeData>[] = [];
  const texts: string[][] = [];
  const add = (field: Field, d: ReturnType<typeof makeData>, text: (i: number) => string) => {
    fields.push(field);
    data.push(d);
    texts.push(Array.from({ length: n }, (_, i) => text(i)));
  };
  const iso = (ms: number) => new Date(ms).toISOString();
  add(new Field('day', new DateDay(), false), makeData({ type: new DateDay(), length: n, data: days }), (i) =>
    iso(days[i]! * 86_400_000).slice(0, 10),
  );
  add(
    new Field('day64', new DateMillisecond(), false),
    makeData({ type: new DateMillisecond(), length: n, data: millis }),
    (i) => iso(Number(millis[i]!)).slice(0, 10),
  );
  add(
    new Field('local', new TimestampSecond(), false),
    makeData({ type: new TimestampSecond(), length: n, data: seconds }),
    (i) => iso(Number(seconds[i]!) * 1000).slice(0, 19),
  );
  const utcMicros = new Timestamp(TimeUnit.MICROSECOND, 'UTC');
  add(new Field('at', utcMicros, false), makeData({ type: utcMicros, length: n, data: micros }), (i) =>
    formatTimestamp(micros[i]!, 'MICROS', true),
  );
  const parisNanos = new Timestamp(TimeUnit.NANOSECOND, 'Europe/Paris');
  add(new Field('atNs', parisNanos, false), makeData({ type: parisNanos, length: n, data: nanos }), (i) =>
    formatTimestamp(nanos[i]!, 'NANOS', true),
  );
  const amount = new Decimal(2, 7, 128);
  add(
    new Field('amount', amount, false),
    makeData({ type: amount, length: n, data: decimalWords(amounts) }),
    (i) => {
      const v = amounts[i]!;
      const a = v < 0n ? -v : v;
      return `${v < 0n ? '-' : ''}${a / 100n}.${String(a % 100n).padStart(2, '0')}`;
    },
  );
  const wide = new Decimal(3, 30, 128);
  add(new Field('wide', wide, false), makeData({ type: wide, length: n, data: decimalWords(big) }), (i) =>
    formatDecimal(big[i]!, 3),
  );
  return { fields, data, texts };
}

describe('the same table as CSV, Arrow and Parquet of every codec, with dates, timestamps and decimals', () => {
  it('releases the same data bytes', async () => {
    const ws = adultWorkspace(600);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    const typed = typedColumns(rows.length);
    const names = [...header, ...typed.fields.map((f) => f.name)];
    ws.write(
      'adult.csv',
      `${names.join(';')}\n${rows.map((r, i) => [...r, ...typed.texts.map((t) => t[i])].join(';')).join('\n')}\n`,
    );
    const fields = [
      ...header.map((name) => new Field(name, name === 'age' ? new Int32() : new Utf8(), false)),
      ...typed.fields,
    ];
    const children = [
      ...header.map((name, c) =>
        name === 'age'
          ? makeData({
              type: new Int32(),
              length: rows.length,
              data: Int32Array.from(rows, (r) => Number(r[c])),
            })
          : vectorFromArray(
              rows.map((r) => r[c]!),
              new Utf8(),
            ).data[0]!,
      ),
      ...typed.data,
    ];
    const schema = new Schema(fields);
    const table = new Table(schema, [
      new RecordBatch(
        schema,
        makeData({ type: new Struct(fields), length: rows.length, nullCount: 0, children }),
      ),
    ]);
    ws.write('adult.arrow', tableToIPC(table, 'file'));
    const codecs = ['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4', 'LZ4_RAW'] as const;
    for (const codec of codecs) {
      const props = new wasm.WriterPropertiesBuilder()
        .setCompression(wasm.Compression[codec])
        .setMaxRowGroupSize(250)
        .setDataPageSizeLimit(512)
        .build();
      ws.write(
        `${codec}.parquet`,
        wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream')), props),
      );
    }
    // Three quasi-identifiers keep the lattice small; every other column is released as it is.
    const original = JSON.parse(ws.read('release.json'));
    for (const name of names) {
      if (!['sex', 'age', 'race', 'occupation'].includes(name))
        original.attributes[name] = { type: 'insensitive' };
    }
    const release = async (input: string) => {
      const spec = structuredClone(original);
      spec.input = input;
      if (input !== 'adult.csv') delete spec.format;
      ws.write('release.json', JSON.stringify(spec));
      const out = join(ws.dir, 'out', input);
      await releaseTo(ws.spec, out);
      return out;
    };
    const csv = await release('adult.csv');
    expect(readFileSync(join(csv, 'data.csv'), 'utf8')).toMatch(/;-?\d+\.\d\d;\d+\.\d{3}\n/);
    for (const input of ['adult.arrow', ...codecs.map((c) => `${c}.parquet`)]) {
      const out = await release(input);
      for (const name of ['data.csv', 'data.arrow']) {
        expect(readFileSync(join(out, name)).equals(readFileSync(join(csv, name))), `${input} ${name}`).toBe(
          true,
        );
      }
    }
  }, 180_000);
});

describe('dates, timestamps and decimals as text', () => {
  it('formats decimals exactly and reads two’s-complement integers of any width', () => {
    expect(formatDecimal(375n, 2)).toBe('3.75');
    expect(formatDecimal(-5n, 2)).toBe('-0.05');
    expect(formatDecimal(350n, 2)).toBe('3.50');
    expect(formatDecimal(0n, 3)).toBe('0.000');
    expect(formatDecimal(12n, 0)).toBe('12');
    expect(formatDecimal(12n, -2)).toBe('1200');
    expect(signedLittleEndian(Uint8Array.of(0xff, 0xff))).toBe(-1n);
    expect(signedLittleEndian(Uint8Array.of(0x01, 0x80))).toBe(-32767n);
    expect(signedBigEndian(Uint8Array.of(0x80, 0x01))).toBe(-32767n);
    expect(signedBigEndian(Uint8Array.of(0x01, 0x00))).toBe(256n);
  });

  it('reads Arrow Date, Timestamp of each unit and Decimal128/256, nulls as the missing value', () => {
    const dir = adultWorkspace(1).dir;
    const n = 3;
    const d256 = new Decimal(4, 60, 256);
    const fields = [
      new Field('d', new DateDay(), true),
      new Field('ms', new TimestampMillisecond(), false),
      new Field('us', new TimestampMicrosecond('UTC'), false),
      new Field('ns', new TimestampNanosecond(), false),
      new Field('big', d256, false),
    ];
    const children = [
      makeData({
        type: new DateDay(),
        length: n,
        nullCount: 1,
        nullBitmap: Uint8Array.of(0b011),
        data: Int32Array.of(0, -1, 0),
      }),
      makeData({ type: new TimestampMillisecond(), length: n, data: BigInt64Array.of(1234n, -1n, 0n) }),
      makeData({
        type: new TimestampMicrosecond('UTC'),
        length: n,
        data: BigInt64Array.of(1_500_000n, 0n, 1n),
      }),
      makeData({ type: new TimestampNanosecond(), length: n, data: BigInt64Array.of(-1n, 10n ** 18n, 5n) }),
      makeData({ type: d256, length: n, data: decimalWords([-(10n ** 50n), 1n, 123456n], 256) }),
    ];
    const schema = new Schema(fields);
    const path = join(dir, 'types.arrow');
    writeFileSync(
      path,
      tableToIPC(
        new Table(schema, [
          new RecordBatch(schema, makeData({ type: new Struct(fields), length: n, nullCount: 0, children })),
        ]),
        'file',
      ),
    );
    expect(cells(readArrow(path, { nulls: 'missing' }))).toEqual([
      [
        '1970-01-01',
        '1970-01-01T00:00:01.234',
        '1970-01-01T00:00:01.5Z',
        '1969-12-31T23:59:59.999999999',
        `-1${'0'.repeat(46)}.0000`,
      ],
      ['1969-12-31', '1969-12-31T23:59:59.999', '1970-01-01T00:00:00Z', '2001-09-09T01:46:40', '0.0001'],
      ['', '1970-01-01T00:00:00', '1970-01-01T00:00:00.000001Z', '1970-01-01T00:00:00.000000005', '12.3456'],
    ]);
    expect(() => readArrow(path)).toThrow(/^types\.arrow column "d" row 3: the value is null/);
  });

  it('reads Parquet DECIMAL stored as INT32, INT64, FIXED_LEN_BYTE_ARRAY and BYTE_ARRAY', () => {
    const dir = adultWorkspace(1).dir;
    const path = join(dir, 'decimals.parquet');
    writeFileSync(
      path,
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [
            { name: 'i32', data: [375n, -5n, 0n], nullable: false },
            { name: 'i64', data: BigInt64Array.of(-123456789012345n, 1n, 10n), nullable: false },
            {
              name: 'flba',
              data: [-2n, 100n, -32768n],
              nullable: false,
            },
            {
              name: 'bytes',
              data: [1n, -1n, 0n],
              nullable: false,
            },
          ],
          schema: [
            { name: 'root', num_children: 4 },
            {
              name: 'i32',
              type: 'INT32',
              converted_type: 'DECIMAL',
              scale: 2,
              precision: 9,
              repetition_type: 'REQUIRED',
            },
            {
              name: 'i64',
              type: 'INT64',
              logical_type: { type: 'DECIMAL', scale: 4, precision: 18 },
              repetition_type: 'REQUIRED',
            },
            {
              name: 'flba',
              type: 'FIXED_LEN_BYTE_ARRAY',
              type_length: 2,
              converted_type: 'DECIMAL',
              scale: 1,
              precision: 4,
              repetition_type: 'REQUIRED',
            },
            {
              name: 'bytes',
              type: 'BYTE_ARRAY',
              converted_type: 'DECIMAL',
              scale: 0,
              precision: 3,
              repetition_type: 'REQUIRED',
            },
          ],
        }),
      ),
    );
    expect(cells(readParquet(path))).toEqual([
      ['3.75', '-12345678901.2345', '-0.2', '1'],
      ['-0.05', '0.0001', '10.0', '-1'],
      ['0.00', '0.0010', '-3276.8', '0'],
    ]);
    expectBytesAlike(path, 2);
  });
});

/** A table of one record batch. */
function oneBatch(fields: Field[], children: ReturnType<typeof makeData>[]): Table {
  const schema = new Schema(fields);
  const length = children[0]!.length;
  return new Table(schema, [
    new RecordBatch(schema, makeData({ type: new Struct(fields), length, nullCount: 0, children })),
  ]);
}

describe('one value per text', () => {
  it('a Date64 with times of day is its day, from Parquet as from Arrow, released as the CSV of its days', async () => {
    const ws = adultWorkspace(1);
    const n = 40;
    // 2020-01-01 at 00:00 and 12:00, 2020-01-02 at 00:00 and 06:00 (arrow-rs writes a Date64's milliseconds as they are).
    const hours = [0, 12, 24, 30];
    const millis = BigInt64Array.from({ length: n }, (_, i) =>
      BigInt(1_577_836_800_000 + hours[i % 4]! * 3_600_000),
    );
    const groups = Array.from({ length: n }, (_, i) => (i % 3 ? 'A' : 'B'));
    const table = oneBatch(
      [new Field('d', new DateMillisecond(), false), new Field('g', new Utf8(), false)],
      [
        makeData({ type: new DateMillisecond(), length: n, data: millis }),
        vectorFromArray(groups, new Utf8()).data[0]!,
      ],
    );
    ws.write('t.arrow', tableToIPC(table, 'file'));
    ws.write('t.parquet', wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))));
    const days = Array.from(millis, (ms) => new Date(Number(ms)).toISOString().slice(0, 10));
    ws.write('t.csv', `d;g\n${days.map((d, i) => `${d};${groups[i]}`).join('\n')}\n`);
    const parquet = readParquet(join(ws.dir, 't.parquet'));
    expect(parquet.columns[0]!.dictionary).toEqual(['2020-01-01', '2020-01-02']);
    expect(cells(parquet)).toEqual(cells(readArrow(join(ws.dir, 't.arrow'))));
    await expectSameRelease(ws, ['t.csv', 't.arrow', 't.parquet'], {
      d: { type: 'quasi-identifying', hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year'] } },
      g: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
    });
  }, 60_000);

  it('an Arrow float column’s NaN and null are one missing value, released as the CSV of empty cells', async () => {
    const ws = adultWorkspace(1);
    const n = 40;
    const x = Array.from({ length: n }, (_, i) => (i % 5 === 0 ? null : [1.5, 2.5, Number.NaN, 3.5][i % 4]!));
    const groups = Array.from({ length: n }, (_, i) => (i % 2 ? 'A' : 'B'));
    const table = oneBatch(
      [new Field('x', new Float64(), true), new Field('g', new Utf8(), false)],
      [vectorFromArray(x, new Float64()).data[0]!, vectorFromArray(groups, new Utf8()).data[0]!],
    );
    ws.write('t.arrow', tableToIPC(table, 'file'));
    ws.write('t.parquet', wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))));
    const text = (v: number | null) => (v === null || Number.isNaN(v) ? '' : String(v));
    ws.write('t.csv', `x;g\n${x.map((v, i) => `${text(v)};${groups[i]}`).join('\n')}\n`);
    const mask = { type: 'quasi-identifying', hierarchy: { mask: 'right' } };
    await expectSameRelease(
      ws,
      ['t.csv', 't.arrow', 't.parquet'],
      { x: mask, g: mask },
      { emptyCells: 'value' },
    );
  }, 60_000);
});

describe('Parquet files that cannot be read', () => {
  it('a codec ppdp does not read (LZO) is named with the file and column', () => {
    const dir = adultWorkspace(1).dir;
    const path = join(dir, 'lzo.parquet');
    writeFileSync(
      path,
      new Uint8Array(
        parquetWriteBuffer({
          columnData: [{ name: 'zip', data: ['1', '2'], type: 'STRING' }],
          codec: 'LZO',
          compressors: { LZO: (b: Uint8Array) => b },
        }),
      ),
    );
    let err: unknown;
    try {
      readParquet(path);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe('E_PARQUET_CODEC');
    expect((err as InputError).message).toMatch(
      /^lzo\.parquet column "zip" rows 1–2: compression LZO is not supported/,
    );
    expect((err as InputError).hint).toMatch(/ZSTD/);
  });

  it.each(['ZSTD', 'LZ4_RAW', 'LZ4'] as const)(
    'a %s page whose bytes are broken is corrupt, named by file and column',
    (codec) => {
      const dir = adultWorkspace(1).dir;
      const values = Array.from({ length: 2000 }, (_, i) => `value ${i % 97} ${'x'.repeat(i % 13)}`);
      const source = new Table({ v: vectorFromArray(values, new Utf8()) });
      const props = new wasm.WriterPropertiesBuilder()
        .setCompression(wasm.Compression[codec])
        .setDictionaryEnabled(false)
        .build();
      const bytes = wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(source, 'stream')), props);
      const path = join(dir, `broken-${codec}.parquet`);
      writeFileSync(path, bytes);
      expect(cells(readParquet(path)).map((r) => r[0])).toEqual(values);
      // Overwrite the middle of the column's compressed bytes (the first page's data).
      const broken = Uint8Array.from(bytes);
      for (let k = 200; k < 600; k++) broken[k] = (k * 31) & 0xff;
      writeFileSync(path, broken);
      let err: unknown;
      try {
        readParquet(path);
      } catch (e) {
        err = e;
      }
      expect(err).toBeInstanceOf(InputError);
      expect((err as InputError).code).toBe('E_PARQUET_CORRUPT');
      expect((err as InputError).message).toMatch(new RegExp(`^broken-${codec}\\.parquet column "v"`));
      expect((err as InputError).hint).toMatch(/write .* again/);
    },
  );
});

describe("an attribute's missing texts", () => {
  it('reads its texts as the missing value in every column, coded or as bytes', () => {
    const dir = adultWorkspace(1).dir;
    const path = join(dir, 'markers.csv');
    writeFileSync(path, 'a;b\n3;x\nNA;NA \n -;NULLS\n5;-\n');
    const missing = new Map([
      ['a', new Set(['NA', '-'])],
      ['b', new Set(['NA', '-'])],
    ]);
    for (const raw of [undefined, new Set(['a', 'b'])]) {
      const table = readTable(path, { missing, ...(raw ? { raw } : {}) });
      const [a, b] = table.columns.map((c, i) =>
        c.raw ? rawStrings(c.raw) : cells(table).map((r) => r[i]!),
      );
      expect(a, raw ? 'bytes' : 'coded').toEqual(['3', '', '', '5']);
      expect(b, raw ? 'bytes' : 'coded').toEqual(['x', '', 'NULLS', '']);
    }
    // Only where listed: b's NULLS stays, and a column without the setting keeps its NA.
    expect(cells(readTable(path, { missing: new Map([['a', new Set(['NA'])]]) })).map((r) => r[1])).toEqual([
      'x',
      'NA ',
      'NULLS',
      '-',
    ]);
    const spec = (missing: unknown) => {
      const ws = adultWorkspace(1);
      ws.editSpec((s) => {
        (s.attributes as Record<string, Record<string, unknown>>).age!.missing = missing;
      });
      return loadSpec(ws.spec);
    };
    expect(spec(['NA', ' - ']).attributes.find((a) => a.name === 'age')!.missing).toEqual(['NA', '-']);
    expect(() => spec(['NA', 'NA'])).toThrow(/attributes\.age\.missing\[1\] must be a text/);
    expect(() => spec([' '])).toThrow(/attributes\.age\.missing\[0\]/);
    expect(() => spec([])).toThrow(/attributes\.age\.missing lists 0 texts/);
  });

  it('releases the bytes of the same table with empty cells where its texts stand', async () => {
    const ws = adultWorkspace(400);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    const hours = rows.map((_, i) => (i % 17 === 0 ? 'NA' : i % 23 === 0 ? '-' : String(20 + (i % 30))));
    const write = (name: string, markers: boolean) =>
      ws.write(
        name,
        `${[...header, 'hours', 'note'].join(';')}\n${rows
          .map((r, i) => {
            const h = markers ? hours[i] : hours[i] === 'NA' || hours[i] === '-' ? '' : hours[i];
            const note = i % 5 === 0 ? (markers ? 'NA' : '') : `n${i}`;
            return [...r, h, note].join(';');
          })
          .join('\n')}\n`,
      );
    write('markers.csv', true);
    write('empty.csv', false);
    const original = JSON.parse(ws.read('release.json'));
    for (const name of header) {
      if (!['sex', 'occupation'].includes(name)) original.attributes[name] = { type: 'insensitive' };
    }
    original.attributes.hours = { type: 'quasi-identifying', hierarchy: { intervals: [10, 20] } };
    original.attributes.note = { type: 'insensitive' };
    const release = async (input: string, missing?: string[]) => {
      const spec = structuredClone(original);
      spec.input = input;
      spec.format.emptyCells = 'value';
      if (missing) {
        spec.attributes.hours.missing = missing;
        spec.attributes.note.missing = missing;
      }
      ws.write('release.json', JSON.stringify(spec));
      const out = join(ws.dir, 'out', input);
      await releaseTo(ws.spec, out);
      return out;
    };
    const empty = await release('empty.csv');
    const markers = await release('markers.csv', ['NA', '-']);
    for (const name of ['data.csv', 'data.arrow']) {
      expect(readFileSync(join(markers, name)).equals(readFileSync(join(empty, name))), name).toBe(true);
    }
  }, 120_000);
});

describe("a spreadsheet's CSV export", () => {
  /** A workbook of `rows` (empty ones: no cell) whose used range goes `used` rows further: cells formatted, no value. */
  async function workbook(rows: readonly (readonly (string | number)[])[], used: number): Promise<Buffer> {
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Data');
    for (const row of rows) sheet.addRow(row.every((v) => v === '') ? [] : [...row]);
    for (let r = 0; r < used; r++)
      for (let c = 1; c <= rows[0]!.length; c++) sheet.getCell(rows.length + 1 + r, c).numFmt = '0.00';
    return Buffer.from(await wb.xlsx.writeBuffer());
  }

  it("releases the bytes of the table without its used range's empty rows (;; lines, CR LF, blanks), as the workbook", async () => {
    const header = ['age', 'g', 'zip'];
    const rows = Array.from({ length: 40 }, (_, i) => [20 + (i % 9), ['A', 'B', 'C'][i % 3]!, `z${i % 4}`]);
    const text = (eol: string, tail: string) =>
      `${[header, ...rows].map((r) => r.join(';')).join(eol)}${eol}${tail}`;
    const mask = { type: 'quasi-identifying', hierarchy: { mask: 'right' } };
    // Refused (an empty quasi-identifier cell) or released as rows of missing values before.
    for (const format of [{}, { emptyCells: 'value' }]) {
      const ws = adultWorkspace(1);
      ws.write('t.csv', text('\n', ''));
      ws.write('semi.csv', text('\n', ';;\n'.repeat(12)));
      ws.write('crlf.csv', text('\r\n', ';;\r\n ; ;\t\r\n;;\r\n;;'));
      ws.write('t.xlsx', await workbook([header, ...rows], 12));
      expect(readTable(join(ws.dir, 'crlf.csv')).rowCount).toBe(40);
      await expectSameRelease(
        ws,
        ['t.csv', 'semi.csv', 'crlf.csv', 't.xlsx'],
        { age: mask, g: mask, zip: mask },
        format,
      );
    }
  }, 120_000);

  it('releases rows of empty cells from the CSV export; the workbook with empty rows between its rows is refused, naming them', async () => {
    const ws = adultWorkspace(1);
    // Two rows in three empty: a released data.csv ends with a row of empty cells.
    const rows = Array.from({ length: 30 }, (_, i) => (i % 3 === 0 ? [20 + (i % 7), `d${i % 2}`] : ['', '']));
    ws.write('t.csv', `age;disease\n${[...rows, [21, 'd0']].map((r) => r.join(';')).join('\n')}\n;\n;\n`);
    ws.write('t.xlsx', await workbook([['age', 'disease'], ...rows, [21, 'd0']], 5));
    // Mondrian's verifier reads data.csv back with the CSV reader, generalization's with its own.
    for (const [method, age] of [
      ['mondrian', { type: 'quasi-identifying', scale: 'numeric' }],
      ['generalization', { type: 'quasi-identifying', hierarchy: { intervals: [5, 10] } }],
    ] as const) {
      for (const input of ['t.csv', 't.xlsx']) {
        ws.write(
          'release.json',
          JSON.stringify({
            input,
            format: { emptyCells: 'value' },
            attributes: { age, disease: { type: 'sensitive' } },
            privacy: [{ model: 'k-anonymity', k: 2 }],
            method: { name: method },
            seed: 1,
          }),
        );
        const out = join(ws.dir, 'out', `${method}-${input}`);
        if (input === 't.xlsx') {
          // A row number alone makes no record (a 3 KB sheet could declare a million).
          await expect(releaseTo(ws.spec, out)).rejects.toMatchObject({ code: 'E_XLSX_RAGGED' });
          continue;
        }
        const { report } = await releaseTo(ws.spec, out);
        expect(report.verification.verified).toBe(true);
        expect(report.rows.input).toBe(31);
        const released = readFileSync(join(out, 'data.csv'), 'utf8').trimEnd().split('\n');
        expect(
          released.filter((line) => /^"";*$/.test(line)),
          method,
        ).toHaveLength(20);
        if (method === 'mondrian') expect(released.at(-1)).toMatch(/^"";+$/);
      }
    }
  }, 120_000);
});

describe('format.decimal ","', () => {
  it('reads numbers written with decimal commas as with points, one value with their point form', () => {
    const dir = adultWorkspace(1).dir;
    const path = join(dir, 'commas.csv');
    writeFileSync(path, 'a;b\n3,75;x\n3.75;1,2,3\n-0,5;a,b\n 12,0 ;7\n3,75;,5\n');
    const shards = [...readTableShards(path, 2, { decimal: ',' })];
    expect(shards.map((s) => s.columns[0]!.dictionary)).toEqual([
      ['3.75'],
      ['3.75', '-0.5', ' 12.0 '],
      ['3.75', '-0.5', ' 12.0 '],
    ]);
    expect(shards.flatMap((s) => Array.from(s.columns[0]!.codes))).toEqual([0, 0, 1, 2, 0]);
    // Only numbers: other cells with commas are as they are.
    expect(cells(readTable(path, { decimal: ',' })).map((r) => r[1])).toEqual([
      'x',
      '1,2,3',
      'a,b',
      '7',
      ',5',
    ]);
    expect(cells(readTable(path)).map((r) => r[0])).toEqual(['3,75', '3.75', '-0,5', ' 12,0 ', '3,75']);
    expect(withDecimalPoint('1,5')).toBe('1.5');
    expect(withDecimalPoint('1,500,000')).toBe('1,500,000');
    // Thousands grouped by points before the comma, as such locales' spreadsheets export them.
    expect(withDecimalPoint('1.234,5')).toBe('1234.5');
    expect(withDecimalPoint(' -2.000.000,25 ')).toBe(' -2000000.25 ');
    // A whole number grouped so: its points group thousands, where a decimal comma is the rule.
    expect(withDecimalPoint('3.000')).toBe('3000');
    expect(withDecimalPoint('-1.234.567')).toBe('-1234567');
    for (const text of ['1.23,5', '1234.567,5', '.234,5', '3.75', '1.2345', '1.234.5', '12.34.567'])
      expect(withDecimalPoint(text)).toBe(text);
  });

  it('reads a column of numbers with grouped thousands as numbers, read as bytes or coded', () => {
    const dir = adultWorkspace(1).dir;
    const path = join(dir, 'grouped.csv');
    writeFileSync(path, 'a;b\n3,75;x\n1.234,5;7\n-2.000,25;1.234,5\n-1,5;y\n3.000;2.5\n');
    const values = ['3.75', '1234.5', '-2000.25', '-1.5', '3000'];
    for (const raw of [undefined, new Set(['a', 'b'])]) {
      const table = readTable(path, { decimal: ',', ...(raw ? { raw } : {}) });
      const [a, b] = table.columns.map((c, i) =>
        c.raw ? rawStrings(c.raw) : cells(table).map((r) => r[i]!),
      );
      expect(a, raw ? 'bytes' : 'coded').toEqual(values);
      expect(b, raw ? 'bytes' : 'coded').toEqual(['x', '7', '1234.5', 'y', '2.5']);
    }
  });

  it('releases the same bytes as the table written with decimal points, numbers grouped into intervals', async () => {
    const ws = adultWorkspace(400);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    const hours = rows.map((_, i) => `${20 + (i % 30)},${(i * 7) % 10}`);
    const write = (name: string, point: boolean) =>
      ws.write(
        name,
        `${[...header, 'hours'].join(';')}\n${rows.map((r, i) => [...r, point ? hours[i]!.replace(',', '.') : hours[i]].join(';')).join('\n')}\n`,
      );
    write('commas.csv', false);
    write('points.csv', true);
    const original = JSON.parse(ws.read('release.json'));
    for (const name of header) {
      if (!['sex', 'occupation'].includes(name)) original.attributes[name] = { type: 'insensitive' };
    }
    original.attributes.hours = { type: 'quasi-identifying', hierarchy: { intervals: [10, 20] } };
    const release = async (input: string, decimal?: string) => {
      const spec = structuredClone(original);
      spec.input = input;
      if (decimal) spec.format.decimal = decimal;
      ws.write('release.json', JSON.stringify(spec));
      const out = join(ws.dir, 'out', input);
      await releaseTo(ws.spec, out);
      return out;
    };
    const points = await release('points.csv');
    const commas = await release('commas.csv', ',');
    expect(readFileSync(join(points, 'data.csv'), 'utf8')).toMatch(/;\[\d+,\d+\)\n/);
    for (const name of ['data.csv', 'data.arrow']) {
      expect(readFileSync(join(commas, name)).equals(readFileSync(join(points, name))), name).toBe(true);
    }
    // Without it, the commas are text: a numeric hierarchy refuses them.
    await expect(release('commas.csv')).rejects.toThrow();
  }, 120_000);

  it('is "." or ","', () => {
    const ws = adultWorkspace(1);
    ws.editSpec((s) => {
      s.format = { delimiter: ';', decimal: ';' };
    });
    expect(() => loadSpec(ws.spec)).toThrow(/format\.decimal/);
  });
});
