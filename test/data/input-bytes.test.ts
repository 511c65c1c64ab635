/**
 * What an input's bytes are, whatever it claims: `|` delimits as `;`, `,` and tab do; text that is
 * not UTF-8 in an Arrow or Parquet column is refused as in a CSV; Arrow IPC with compressed
 * buffers is refused with how to write it; a file is read as the format its first bytes name, a
 * compressed one refused, and UTF-16 without a byte order mark refused; a CSV whose lines end with
 * CR alone reads as its LF twin. Every input is made by a maintained writer (apache-arrow,
 * hyparquet-writer, node:zlib, parquet-wasm).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { deflateRawSync, gzipSync } from 'node:zlib';
import {
  Binary,
  type Data,
  Dictionary,
  Field,
  Int8,
  makeData,
  makeVector,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { CompressionType } from 'apache-arrow/fb/compression-type';
import { compressionRegistry } from 'apache-arrow/ipc/compression/registry';
import { strToU8, zipSync } from 'fflate';
import { decompress as zstdDecompress } from 'fzstd';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { afterAll, describe, expect, it } from 'vitest';
import { readArrowShards } from '../../src/data/arrow.ts';
import { readCsv } from '../../src/data/csv.ts';
import { readParquetShards } from '../../src/data/parquet.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { formatOf, readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { InputError } from '../../src/errors.ts';
import { expectSameRelease, releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');

const dir = mkdtempSync(join(tmpdir(), 'ppdp-bytes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function write(name: string, content: string | Uint8Array): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Runs `fn`, expects an InputError with `code`, and returns it. */
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

/** Every shard of a read, so that a later one's error is thrown too. */
function readAll(shards: Iterable<EncodedTable>): EncodedTable[] {
  return [...shards];
}

/** Rows of cell texts (a column read as bytes, too). */
function cells(tables: readonly EncodedTable[]): string[][] {
  return tables.flatMap((t) =>
    Array.from({ length: t.rowCount }, (_, r) =>
      t.columns.map((c) => (c.raw ? rawStrings(c.raw)[r]! : c.dictionary[c.codes[r]!]!)),
    ),
  );
}

const latin1 = (s: string) => Buffer.from(s, 'latin1');

const utf8 = (s: string) => Buffer.from(s, 'utf8');

/** An Arrow column of type `type` (Utf8 or Binary) holding `values` as bytes, as a writer of bytes does. */
function bytesColumn(
  values: readonly Uint8Array[],
  type: Utf8 | Binary = new Utf8(),
  valid?: boolean[],
): Data {
  const offsets = new Int32Array(values.length + 1);
  values.forEach((v, i) => {
    offsets[i + 1] = offsets[i]! + v.length;
  });
  const nullBitmap = valid ? Uint8Array.from({ length: (values.length + 7) >> 3 }, () => 0) : undefined;
  valid?.forEach((ok, i) => {
    if (ok) nullBitmap![i >> 3]! |= 1 << (i & 7);
  });
  return makeData({
    type: type as Utf8,
    length: values.length,
    nullCount: valid ? valid.filter((ok) => !ok).length : 0,
    valueOffsets: offsets,
    data: Buffer.concat(values),
    ...(nullBitmap ? { nullBitmap } : {}),
  });
}

/** An Arrow table of record batches, each of named columns' Data. */
function arrowTable(batches: readonly Record<string, Data>[]): Table {
  const fields = Object.entries(batches[0]!).map(([name, d]) => new Field(name, d.type, d.nullCount > 0));
  const schema = new Schema(fields);
  return new Table(
    schema,
    batches.map(
      (b) =>
        new RecordBatch(
          schema,
          makeData({
            type: new Struct(fields),
            length: Object.values(b)[0]!.length,
            nullCount: 0,
            children: Object.values(b),
          }),
        ),
    ),
  );
}

const plain = (values: readonly string[]) => vectorFromArray(values, new Utf8()).data[0]!;

describe('text that is not UTF-8 in an Arrow or Parquet column', () => {
  const ASIS = [undefined, new Set(['city'])] as const;

  it('is refused in an Arrow Utf8 column, coded or read as bytes, naming file, column and row (not the value)', () => {
    // Latin-1 in the second batch: rows count from the file's start.
    const table = arrowTable([
      { n: plain(['1', '2']), city: bytesColumn([utf8('Zürich'), utf8('Köln')]) },
      { n: plain(['3', '4', '5']), city: bytesColumn([utf8('Berlin'), latin1('München'), utf8('Köln')]) },
    ]);
    for (const format of ['file', 'stream'] as const) {
      const path = write(`latin1-${format}.arrow`, tableToIPC(table, format));
      for (const raw of ASIS) {
        for (const rowsPerShard of [Number.POSITIVE_INFINITY, 2]) {
          const err = inputError(
            () => readAll(readArrowShards(path, rowsPerShard, { raw })),
            'E_INPUT_ENCODING',
          );
          expect(err.message).toBe(
            `latin1-${format}.arrow column "city" row 4: bytes that are not valid UTF-8 text`,
          );
          expect(err.describe()).not.toMatch(/nchen/);
          expect(err.hint).toMatch(/decode\("latin-1"\)/);
        }
      }
    }
  });

  it('is refused when a character is split between two values, each invalid, their bytes together valid', () => {
    const path = write(
      'split.arrow',
      tableToIPC(
        arrowTable([{ city: bytesColumn([utf8('a'), utf8('xü').subarray(0, 2), utf8('ü').subarray(1)]) }]),
      ),
    );
    for (const raw of ASIS) {
      const err = inputError(
        () => readAll(readArrowShards(path, Number.POSITIVE_INFINITY, { raw })),
        'E_INPUT_ENCODING',
      );
      expect(err.message).toBe('split.arrow column "city" row 2: bytes that are not valid UTF-8 text');
    }
  });

  it("reads valid text, whatever a null's bytes (they mean nothing)", () => {
    const city = bytesColumn([utf8('Zürich'), latin1('München'), utf8('日本😀')], new Utf8(), [
      true,
      false,
      true,
    ]);
    const path = write('null-bytes.arrow', tableToIPC(arrowTable([{ city }])));
    for (const raw of ASIS)
      expect(
        cells(readAll(readArrowShards(path, Number.POSITIVE_INFINITY, { raw, nulls: 'missing' }))),
      ).toEqual([['Zürich'], [''], ['日本😀']]);
  });

  it('is refused in a Dictionary<Utf8> entry a row uses, naming the first such row; an entry no row uses is not read', () => {
    const entries = bytesColumn([utf8('Köln'), latin1('München'), utf8('Bonn')]);
    const type = new Dictionary(new Utf8(), new Int8(), 0, false);
    const column = (indices: number[]) =>
      makeData({
        type,
        length: indices.length,
        nullCount: 0,
        data: Int8Array.from(indices),
        dictionary: makeVector(entries as Data<Utf8>),
      });
    const unused = write('dict-unused.arrow', tableToIPC(arrowTable([{ city: column([0, 2, 0]) }])));
    const used = write('dict-used.arrow', tableToIPC(arrowTable([{ city: column([0, 2, 0, 1, 1]) }])));
    for (const raw of ASIS) {
      expect(cells(readAll(readArrowShards(unused, Number.POSITIVE_INFINITY, { raw })))).toEqual([
        ['Köln'],
        ['Bonn'],
        ['Köln'],
      ]);
      const err = inputError(
        () => readAll(readArrowShards(used, Number.POSITIVE_INFINITY, { raw })),
        'E_INPUT_ENCODING',
      );
      expect(err.message).toBe('dict-used.arrow column "city" row 4: bytes that are not valid UTF-8 text');
    }
  });

  it('is refused in a Parquet BYTE_ARRAY column (unannotated or STRING), of plain or dictionary pages, from hyparquet-writer and arrow-rs', () => {
    const n = 300;
    // Few distinct values (dictionary pages) or one a row (plain pages); Latin-1 first at row 200.
    const value = (i: number, distinct: boolean) => {
      const text = distinct ? `Köln ${i}` : ['Köln', 'Bonn'][i % 2]!;
      return i >= 199 && i % 2 === 1 ? latin1(`${text} München`) : utf8(text);
    };
    const files: string[] = [];
    for (const distinct of [false, true]) {
      const data = Array.from({ length: n }, (_, i) => value(i, distinct));
      for (const type of ['BYTE_ARRAY', 'STRING'] as const) {
        for (const encoding of [undefined, 'PLAIN'] as const) {
          const name = `hyparquet-${type}-${encoding ?? 'default'}-${distinct}.parquet`;
          const columnData = [
            { name: 'n', data: Array.from({ length: n }, (_, i) => String(i)), type: 'STRING' as const },
            { name: 'city', data, type, ...(encoding ? { encoding } : {}) },
          ];
          files.push(write(name, new Uint8Array(parquetWriteBuffer({ columnData, rowGroupSize: 150 }))));
        }
      }
      const arrow = arrowTable([
        { n: plain(data.map((_, i) => String(i))), city: bytesColumn(data, new Binary()) },
      ]);
      for (const dictionary of [true, false]) {
        const props = new wasm.WriterPropertiesBuilder()
          .setDictionaryEnabled(dictionary)
          .setMaxRowGroupSize(150)
          .setDataPageSizeLimit(512)
          .build();
        files.push(
          write(
            `arrow-rs-${dictionary}-${distinct}.parquet`,
            wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(arrow, 'stream')), props),
          ),
        );
      }
    }
    for (const path of files) {
      for (const raw of ASIS) {
        const err = inputError(() => readAll(readParquetShards(path, 100, { raw })), 'E_INPUT_ENCODING');
        expect(err.message, path).toBe(
          `${path.split('/').at(-1)} column "city" row 200: bytes that are not valid UTF-8 text`,
        );
      }
    }
  });

  it('stops a release of it as a quasi-identifier with a groups hierarchy as not UTF-8, not as values the hierarchy lacks', async () => {
    const ws = adultWorkspace(1);
    const n = 40;
    const table = arrowTable([
      {
        age: plain(Array.from({ length: n }, (_, i) => String(20 + (i % 5)))),
        city: bytesColumn(Array.from({ length: n }, (_, i) => (i % 2 ? latin1('München') : utf8('Köln')))),
      },
    ]);
    ws.write('t.arrow', tableToIPC(table, 'file'));
    ws.write(
      'release.json',
      JSON.stringify({
        input: 't.arrow',
        attributes: {
          age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10] } },
          city: { type: 'quasi-identifying', hierarchy: { groups: [{ Köln: '*', München: '*' }] } },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
        seed: 1,
      }),
    );
    await expect(releaseTo(ws.spec, join(ws.dir, 'out'))).rejects.toMatchObject({
      code: 'E_INPUT_ENCODING',
      message: 't.arrow column "city" row 2: bytes that are not valid UTF-8 text',
    });
    expect(ws.list('out')).toBeNull();
  }, 60_000);
});

/** xxHash32 (LZ4 frames' header checksum). */
function xxh32(buf: Uint8Array, seed = 0): number {
  const P1 = 2654435761;
  const P2 = 2246822519;
  const P3 = 3266489917;
  const P4 = 668265263;
  const P5 = 374761393;
  const rotl = (x: number, r: number) => ((x << r) | (x >>> (32 - r))) >>> 0;
  // Inputs here are shorter than 16 bytes: no stripes.
  const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
  let h = (seed + P5 + buf.length) >>> 0;
  let i = 0;
  for (; i + 4 <= buf.length; i += 4) {
    h = (h + Math.imul(view.getUint32(i, true), P3)) >>> 0;
    h = Math.imul(rotl(h, 17), P4) >>> 0;
  }
  for (; i < buf.length; i++) {
    h = (h + Math.imul(buf[i]!, P5)) >>> 0;
    h = Math.imul(rotl(h, 11), P1) >>> 0;
  }
  h ^= h >>> 15;
  h = Math.imul(h, P2) >>> 0;
  h ^= h >>> 13;
  h = Math.imul(h, P3) >>> 0;
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * Codecs that write valid frames of stored (uncompressed) blocks: an LZ4 frame (version 1,
 * independent blocks of up to 64 KiB) and a Zstandard frame (single segment, raw blocks), all
 * Arrow JS needs to write IPC with compressed buffers (it brings no compressor of its own).
 */
const STORED: Partial<Record<CompressionType, { encode: (d: Uint8Array) => Uint8Array }>> = {
  [CompressionType.LZ4_FRAME]: {
    encode: (d) => {
      const descriptor = Uint8Array.of(0x60, 0x40);
      const out = Buffer.alloc(7 + 4 + d.length + 4);
      out.set([0x04, 0x22, 0x4d, 0x18, ...descriptor, (xxh32(descriptor) >>> 8) & 0xff]);
      out.writeUInt32LE((d.length | 0x80000000) >>> 0, 7);
      out.set(d, 11);
      return out;
    },
  },
  [CompressionType.ZSTD]: {
    encode: (d) => {
      const out = Buffer.alloc(4 + 1 + 4 + 3 + d.length);
      out.writeUInt32LE(0xfd2fb528, 0);
      out[4] = 0xa0; // a 4-byte content size, single segment
      out.writeUInt32LE(d.length, 5);
      const block = (d.length << 3) | 1; // raw, last
      out.set([block & 0xff, (block >> 8) & 0xff, (block >> 16) & 0xff], 9);
      out.set(d, 12);
      return out;
    },
  },
};

describe('Arrow IPC with compressed buffers', () => {
  it('is refused as compressed (LZ4_FRAME, pyarrow Feather’s default, or ZSTD), saying how to write it', () => {
    const table = arrowTable([{ n: plain(['1', '2', '3']), city: plain(['Köln', 'Bonn', 'Köln']) }]);
    const sample = utf8('Köln, Bonn');
    expect(Buffer.from(zstdDecompress(STORED[CompressionType.ZSTD]!.encode(sample))).equals(sample)).toBe(
      true,
    );
    for (const compressionType of [CompressionType.LZ4_FRAME, CompressionType.ZSTD]) {
      const before = compressionRegistry.get(compressionType);
      compressionRegistry.set(compressionType, STORED[compressionType]!);
      try {
        for (const format of ['file', 'stream'] as const) {
          const writer =
            format === 'file'
              ? new RecordBatchFileWriter({ compressionType })
              : new RecordBatchStreamWriter({ compressionType });
          writer.write(table);
          writer.finish();
          const path = write(`compressed-${compressionType}-${format}.arrow`, writer.toUint8Array(true));
          const err = inputError(() => readTable(path), 'E_ARROW_COMPRESSED');
          expect(err.message).toMatch(
            /record batch 1 \(at byte \d+\): its buffers are compressed \(LZ4 or ZSTD\), which ppdp does not read$/,
          );
          expect(err.hint).toMatch(/compression="uncompressed"/);
          expect(err.hint).toMatch(/Parquet/);
        }
      } finally {
        compressionRegistry.set(compressionType, before ?? {});
      }
    }
  });
});

describe('a CSV whose lines end with CR alone (Excel for Mac’s "CSV (Macintosh)")', () => {
  it('releases what its LF twin releases', async () => {
    const ws = adultWorkspace(120);
    const lines = ws.read('adult.csv').trimEnd().split('\n');
    ws.write('cr.csv', `${lines.join('\r')}\r`);
    await expectSameRelease(ws, ['adult.csv', 'cr.csv'], adultAttributes(ws.read('adult.csv')));
  }, 60_000);
});

describe('a file read as what its first bytes say', () => {
  const csv = 'city;n\nKöln;1\nBonn;2\nKöln;3\n';
  const table = arrowTable([{ city: plain(['Köln', 'Bonn', 'Köln']), n: plain(['1', '2', '3']) }]);
  const parquet = () => wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream')));

  it('reads an Arrow stream named .arrows and Parquet named .pq, and either named .csv, .txt or nothing', () => {
    const want = cells([readCsv(write('ref.csv', csv))]);
    const files: [string, Uint8Array, 'arrow' | 'parquet'][] = [
      ['t.arrows', tableToIPC(table, 'stream'), 'arrow'],
      ['t.pq', parquet(), 'parquet'],
      ['arrow-file.csv', tableToIPC(table, 'file'), 'arrow'],
      ['arrow-stream.txt', tableToIPC(table, 'stream'), 'arrow'],
      ['parquet-noext', parquet(), 'parquet'],
    ];
    for (const [name, bytes, format] of files) {
      const path = write(name, bytes);
      expect(formatOf(path), name).toBe(format);
      expect(cells([readTable(path)]), name).toEqual(want);
    }
    // A folder of .pq parts reads as one table.
    mkdirSync(join(dir, 'parts'));
    write('parts/a.pq', parquet());
    write('parts/b.pq', parquet());
    expect(cells(readAll(readTableShards(join(dir, 'parts'), 2)))).toEqual([...want, ...want]);
  });

  it('reads a CSV whose header starts like a binary format’s magic as CSV', () => {
    const path = write('par1.csv', 'PAR1;ARROW1\nx;y\n');
    expect(formatOf(path)).toBe('csv');
    expect(cells([readTable(path)])).toEqual([['x', 'y']]);
  });

  it('refuses a compressed file (gzip, ZIP) saying how to decompress it', () => {
    for (const [name, bytes] of [
      ['t.csv.gz', gzipSync(csv)],
      ['t.gz', gzipSync(csv)],
    ] as const) {
      const err = inputError(() => readTable(write(name, bytes)), 'E_INPUT_COMPRESSED');
      expect(err.message).toBe(`${name}: the file is compressed (gzip), not a CSV file`);
      expect(err.hint).toContain(`gzip -dc ${name} > ${name === 't.gz' ? 't' : 't.csv'}`);
    }
    // A ZIP archive of one deflated file, as zip writes it: a local file header first.
    const deflated = deflateRawSync(csv);
    const header = Buffer.alloc(30);
    header.writeUInt32LE(0x04034b50, 0);
    header.writeUInt16LE(20, 4);
    header.writeUInt16LE(8, 8);
    header.writeUInt32LE(deflated.length, 18);
    header.writeUInt32LE(Buffer.byteLength(csv), 22);
    header.writeUInt16LE(5, 26);
    const zip = Buffer.concat([header, Buffer.from('t.csv'), deflated]);
    const err = inputError(() => readTable(write('t.zip', zip)), 'E_INPUT_COMPRESSED');
    expect(err.message).toBe('t.zip: the file is compressed (a ZIP archive), not a CSV file');
    expect(err.hint).toContain('unzip t.zip');
    // A workbook of another name may be one: its name, or format.type, says so.
    expect(err.hint).toContain('ends in .xlsx, or with "format": { "type": "xlsx" }');
  });

  it('refuses an Arrow or Parquet file read as CSV because format.type says so, naming its format', () => {
    for (const [name, bytes, what] of [
      ['a.arrow', tableToIPC(table, 'file'), 'an Arrow IPC'],
      ['s.arrows', tableToIPC(table, 'stream'), 'an Arrow IPC'],
      ['p.parquet', parquet(), 'a Parquet'],
    ] as const) {
      const err = inputError(() => readTable(write(name, bytes), { format: 'csv' }), 'E_INPUT_FORMAT');
      expect(err.message).toBe(
        `${name}: ${what} file (its first bytes say so), read as CSV because format.type is "csv"`,
      );
    }
  });

  it('refuses a workbook read as CSV because format.type says so, naming format.type (not its name)', () => {
    const book = zipSync({ 'xl/workbook.xml': strToU8('<workbook/>') });
    for (const name of ['book.xlsx', 'BOOK.XLSM']) {
      const err = inputError(() => readTable(write(name, book), { format: 'csv' }), 'E_INPUT_FORMAT');
      expect(err.message).toBe(
        `${name}: an Excel workbook (its name and first bytes say so), read as CSV because format.type is "csv"`,
      );
      expect(err.hint).toContain('"format": { "type": "xlsx" }, or leave format.type out');
    }
  });
});

describe('UTF-16 text without a byte order mark', () => {
  it('is refused naming UTF-16 and its byte order, with the iconv that converts it', () => {
    const text = 'city;n\nKöln;1\nBonn;2\n';
    const le = Buffer.from(text, 'utf16le');
    const be = Buffer.from(le).swap16();
    for (const [name, bytes, order] of [
      ['le.csv', le, 'LE'],
      ['be.csv', be, 'BE'],
    ] as const) {
      const err = inputError(() => readTable(write(name, bytes)), 'E_INPUT_ENCODING');
      expect(err.message).toBe(
        `${name}: the file is UTF-16 ${order === 'LE' ? 'little' : 'big'}-endian without a byte order mark (every other byte of its start is a NUL byte)`,
      );
      expect(err.hint).toContain(`iconv -f UTF-16${order} -t UTF-8 ${name}`);
    }
  });

  it('does not take a UTF-8 file with a NUL byte in a value for it', () => {
    expect(cells([readTable(write('nul.csv', 'city;n\nK\u0000ln;1\nBonn;2\n'))])).toEqual([
      ['K\u0000ln', '1'],
      ['Bonn', '2'],
    ]);
  });
});

describe('"|" as the delimiter', () => {
  it('is detected, and releases what the same table with ";" does, written with "|"', async () => {
    const ws = adultWorkspace(120);
    const semicolon = ws.read('adult.csv');
    ws.write('pipe.csv', semicolon.replaceAll(';', '|'));
    const attributes = adultAttributes(semicolon);
    const outs: string[] = [];
    for (const [input, format] of [
      ['adult.csv', {}],
      ['pipe.csv', {}],
      ['pipe.csv', { delimiter: '|' }],
    ] as const) {
      ws.write(
        'release.json',
        JSON.stringify({
          input,
          format,
          attributes,
          privacy: [{ model: 'k-anonymity', k: 2 }],
          method: { name: 'generalization', maxSuppression: 0.1 },
          seed: 1,
        }),
      );
      const { report, out } = await releaseTo(ws.spec, join(ws.dir, 'out', `${outs.length}`));
      expect(report.verification.verified).toBe(true);
      outs.push(out);
    }
    const released = readFileSync(join(outs[0]!, 'data.csv'), 'utf8');
    for (const out of outs.slice(1)) {
      expect(readFileSync(join(out, 'data.arrow')).equals(readFileSync(join(outs[0]!, 'data.arrow')))).toBe(
        true,
      );
      expect(readFileSync(join(out, 'data.csv'), 'utf8')).toBe(released.replaceAll(';', '|'));
    }
  }, 60_000);
});

/** Adult's columns: sex, age and race quasi-identifying (masked), the others released as they are. */
function adultAttributes(csv: string): Record<string, unknown> {
  const mask = { type: 'quasi-identifying', hierarchy: { mask: 'right' } };
  const names = csv.slice(0, csv.indexOf('\n')).split(';');
  return Object.fromEntries(
    names.map((name) => [name, ['sex', 'age', 'race'].includes(name) ? mask : { type: 'insensitive' }]),
  );
}
