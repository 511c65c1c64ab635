/**
 * A typed input (Arrow, Parquet, Excel) is coded as the same table given as CSV: every column's
 * values, the missing value of a null included, in order of first appearance, whatever the
 * record batches, row groups or shards; so it releases the same bytes and the same report
 * (measures summed in dictionary order round alike). Its release CSV uses `format.delimiter`,
 * `;` when the spec gives none.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  Dictionary,
  Field,
  Float64,
  Int32,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { readTableShards } from '../../src/data/read.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');

const N = 300;
/** Record batches of the Arrow file: nulls stand at the first row, around a cut and at the last. */
const BATCH = 100;
const NULL_AMOUNTS = new Set([0, 7, BATCH - 1, BATCH, 2 * BATCH, N - 1]);

/** A table of ages, amounts with nulls, cities (an Arrow dictionary listed backwards) and notes. */
function rows() {
  let s = 2024;
  const next = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 4294967296;
  };
  const age = Array.from({ length: N }, () => 20 + Math.floor(next() * 50));
  const amount = Array.from({ length: N }, (_, i) =>
    NULL_AMOUNTS.has(i) || next() < 0.08 ? null : Math.round(next() * 100_000) / 100,
  );
  const city = Array.from({ length: N }, (_, i) =>
    i === 3 || i === BATCH + 1 ? null : `c${String(Math.floor(next() ** 2 * 12)).padStart(2, '0')}`,
  );
  const note = Array.from({ length: N }, (_, i) => (i % 17 === 2 ? null : `n${i % 5}`));
  return { age, amount, city, note };
}

function bitmap(values: readonly unknown[]): Uint8Array {
  const bits = new Uint8Array(Math.ceil(values.length / 8));
  values.forEach((v, i) => {
    if (v !== null) bits[i >> 3]! |= 1 << (i & 7);
  });
  return bits;
}

/** The table as an Arrow file of record batches of BATCH rows. */
function arrowFile(t: ReturnType<typeof rows>): Table {
  const cities = [...new Set(t.city.filter((c) => c !== null))].sort().reverse();
  const dictionary = vectorFromArray(cities, new Utf8());
  const cityType = new Dictionary(new Utf8(), new Int32(), 0, true);
  const fields = [
    new Field('age', new Int32(), false),
    new Field('amount', new Float64(), true),
    new Field('city', cityType, true),
    new Field('note', new Utf8(), true),
  ];
  const schema = new Schema(fields);
  const batches: RecordBatch[] = [];
  for (let from = 0; from < N; from += BATCH) {
    const n = Math.min(BATCH, N - from);
    const part = <T>(values: T[]) => values.slice(from, from + n);
    const notes = part(t.note);
    // A null's bytes are unspecified: these hold a value that no row has.
    const bytes: number[] = [];
    const offsets = new Int32Array(n + 1);
    notes.forEach((v, i) => {
      for (const b of Buffer.from(v ?? 'garbage')) bytes.push(b);
      offsets[i + 1] = bytes.length;
    });
    const nullsOf = (values: readonly unknown[]) => values.filter((v) => v === null).length;
    const children = [
      makeData({ type: new Int32(), length: n, data: Int32Array.from(part(t.age)) }),
      vectorFromArray(part(t.amount), new Float64()).data[0]!,
      makeData({
        type: cityType,
        length: n,
        nullCount: nullsOf(part(t.city)),
        nullBitmap: bitmap(part(t.city)),
        data: Int32Array.from(part(t.city), (c) => (c === null ? 0 : cities.indexOf(c))),
        dictionary,
      }),
      makeData({
        type: new Utf8(),
        length: n,
        nullCount: nullsOf(notes),
        nullBitmap: bitmap(notes),
        valueOffsets: offsets,
        data: Uint8Array.from(bytes),
      }),
    ];
    batches.push(
      new RecordBatch(schema, makeData({ type: new Struct(fields), length: n, nullCount: 0, children })),
    );
  }
  return new Table(schema, batches);
}

async function workbook(t: ReturnType<typeof rows>): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const sheet = wb.addWorksheet('Data');
  sheet.addRow(['age', 'amount', 'city', 'note']);
  for (let i = 0; i < N; i++)
    sheet.addRow([t.age[i], t.amount[i] ?? undefined, t.city[i] ?? undefined, t.note[i] ?? undefined]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

/** The table as CSV, Arrow (batches), Parquet (row groups, with and without dictionary pages) and Excel. */
async function inputs(ws: Workspace): Promise<string[]> {
  const t = rows();
  const text = (v: string | number | null) => (v === null ? '' : String(v));
  ws.write(
    't.csv',
    `age;amount;city;note\n${t.age.map((a, i) => [a, t.amount[i]!, t.city[i]!, t.note[i]!].map(text).join(';')).join('\n')}\n`,
  );
  const table = arrowFile(t);
  expect(table.batches.length).toBe(3);
  ws.write('t.arrow', tableToIPC(table, 'file'));
  for (const dictionary of [true, false]) {
    const props = new wasm.WriterPropertiesBuilder()
      .setMaxRowGroupSize(70)
      .setDictionaryEnabled(dictionary)
      .build();
    ws.write(
      `t${dictionary ? '' : '-plain'}.parquet`,
      wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream')), props),
    );
  }
  ws.write('t.xlsx', await workbook(t));
  return ['t.csv', 't.arrow', 't.parquet', 't-plain.parquet', 't.xlsx'];
}

/** A report without what differs between runs of one table: timings, the input's file name, the run id. */
function comparable(report: Record<string, Record<string, unknown>>): unknown {
  const { timings: _, ...rest } = JSON.parse(JSON.stringify(report), (key, value) =>
    key === 'ms' ? undefined : value,
  );
  delete rest.input.file;
  delete rest.ppdp.runId;
  if (rest.spec) delete rest.spec.file;
  return rest;
}

describe('a typed input is coded in order of first appearance, as its CSV', () => {
  it('reads the same dictionaries and codes from CSV, Arrow, Parquet and Excel, whole and in shards', async () => {
    const ws = adultWorkspace(1);
    const files = await inputs(ws);
    const read = (file: string, rowsPerShard: number) =>
      [...readTableShards(join(ws.dir, file), rowsPerShard, { nulls: 'missing' })].map((shard) =>
        shard.columns.map((c) => ({ name: c.name, dictionary: c.dictionary, codes: Array.from(c.codes) })),
      );
    const csv = read('t.csv', Number.POSITIVE_INFINITY);
    // The missing value is coded at row 1, where the first null stands.
    expect(csv[0]![1]!.dictionary[0]).toBe('');
    for (const file of files) {
      expect(read(file, Number.POSITIVE_INFINITY), file).toEqual(csv);
      // Shards cut inside batches and row groups: each shard's dictionaries are the CSV's, read as far.
      for (const rowsPerShard of [37, 100, 150]) {
        const shards = read(file, rowsPerShard);
        const expected = read('t.csv', rowsPerShard);
        expect(shards, `${file} in shards of ${rowsPerShard}`).toEqual(expected);
      }
    }
  }, 60_000);

  it('releases the same bytes and the same report from every format, in one shard or three', async () => {
    const ws = adultWorkspace(1);
    const files = await inputs(ws);
    const attributes = {
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] }, scale: 'numeric' },
      city: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      amount: { type: 'sensitive' },
      note: { type: 'insensitive' },
    };
    const privacy = [
      { model: 'k-anonymity', k: 3 },
      { model: 't-closeness', attribute: 'amount', t: 0.6, distance: 'ordered' },
    ];
    for (const method of [{ name: 'generalization', maxSuppression: 0.1 }, { name: 'mondrian' }]) {
      let first: { data: Buffer[]; report: unknown } | undefined;
      for (const input of files) {
        // Mondrian reads the table whole (one task): its shards are generalization's.
        for (const shards of method.name === 'generalization' ? [1, 3] : [1]) {
          const format = { emptyCells: 'value', ...(input.endsWith('.csv') ? { delimiter: ';' } : {}) };
          ws.write('release.json', JSON.stringify({ input, format, attributes, privacy, method, seed: 1 }));
          const out = join(ws.dir, 'out', `${method.name}-${input}-${shards}`);
          const { plan } = await executeRelease({ spec: ws.spec, out, shards });
          if (shards > 1) expect(plan.mode).toBe('sharded');
          const got = {
            data: ['data.csv', 'data.arrow'].map((name) => readFileSync(join(out, name))),
            report: comparable(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'))),
          };
          if (!first) first = got;
          const label = `${method.name} ${input} --shards ${shards}`;
          expect(got.data[0]!.equals(first.data[0]!), `${label} data.csv`).toBe(true);
          expect(got.data[1]!.equals(first.data[1]!), `${label} data.arrow`).toBe(true);
          expect(got.report, label).toEqual(first.report);
        }
      }
    }
  }, 300_000);
});

describe("a typed input's release CSV", () => {
  it('uses format.delimiter, `;` when the spec gives none, as the same table as CSV of that delimiter', async () => {
    const ws = adultWorkspace(1);
    const typed = (await inputs(ws)).filter((f) => !f.endsWith('.csv'));
    const csv = ws.read('t.csv');
    const attributes = {
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
      city: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      amount: { type: 'insensitive' },
      note: { type: 'insensitive' },
    };
    const privacy = [{ model: 'k-anonymity', k: 3 }];
    const method = { name: 'generalization', maxSuppression: 0.1 };
    const release = async (input: string, delimiter: string | undefined, shards: number) => {
      const format = { emptyCells: 'value', ...(delimiter ? { delimiter } : {}) };
      ws.write('release.json', JSON.stringify({ input, format, attributes, privacy, method, seed: 1 }));
      const out = join(ws.dir, 'out', `${input}-${delimiter === '\t' ? 'tab' : delimiter}-${shards}`);
      await executeRelease({ spec: ws.spec, out, shards });
      return readFileSync(join(out, 'data.csv'), 'utf8');
    };
    for (const [delimiter, shards] of [
      [undefined, 1],
      [',', 1],
      [',', 3],
      ['\t', 1],
      ['|', 1],
    ] as const) {
      const sep = delimiter ?? ';';
      // The table as CSV of that delimiter (its cells hold none), the delimiter detected.
      ws.write('d.csv', csv.replaceAll(';', sep));
      const expected = await release('d.csv', undefined, 1);
      expect(expected.split('\n')[0]).toBe(['age', 'amount', 'city', 'note'].join(sep));
      for (const input of typed) {
        const label = `${input} with ${delimiter === undefined ? 'no delimiter' : JSON.stringify(delimiter)}, ${shards} shard(s)`;
        expect(await release(input, delimiter, shards), label).toBe(expected);
      }
    }
  }, 300_000);
});
