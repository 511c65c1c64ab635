/**
 * Registry-shaped inputs of any size for the benchmarks: a table shaped like real person-level
 * data rather than like Adult, whose few distinct values hide costs that grow with distinct
 * values. One row per person: a unique person id (identifying), age (intervals), sex (groups),
 * a 5-digit postcode uniform over 10000–99999 (mask), an exact birth date over 1930–2005 (date
 * builder) and a 10-value diagnosis (sensitive); k = 5 with at most 2 % suppressed. The
 * quasi-identifier tuples are almost all distinct. Seeded: the same size gives the same bytes.
 */
import { mkdirSync, mkdtempSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import {
  DateDay,
  Decimal,
  makeData,
  makeVector,
  Table,
  TimestampMillisecond,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { Random } from '../src/util/random.ts';
import { writeRows } from './adult-sample.ts';

const DIAGNOSES = ['J11', 'I10', 'E11', 'M54', 'F32', 'K21', 'N39', 'S72', 'C50', 'G43'];
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export const REGISTRY_SPEC = {
  input: 'registry.csv',
  format: { delimiter: ',' },
  attributes: {
    person_id: { type: 'identifying' },
    age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20], bottom: 0, top: 100 } },
    sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
    postcode: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
    birth_date: {
      type: 'quasi-identifying',
      hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year', 'decade'] },
    },
    diagnosis: { type: 'sensitive' },
  },
  privacy: [{ model: 'k-anonymity', k: 5 }],
  method: { name: 'generalization', maxSuppression: 0.02, metric: 'ncp' },
  seed: 1,
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** The registry table's columns, in order. */
export const REGISTRY_COLUMNS = ['person_id', 'age', 'sex', 'postcode', 'birth_date', 'diagnosis'] as const;

/**
 * The registry table's `rows` rows, each as its cells in REGISTRY_COLUMNS order: one seeded
 * stream, so the same rows come out whatever they are written as or cut into.
 */
export function* registryRows(rows: number): Generator<string[], void, undefined> {
  const random = new Random(20261125);
  for (let r = 0; r < rows; r++) {
    const year = 1930 + random.below(76);
    const month = random.below(12);
    const leap = month === 1 && year % 4 === 0 ? 1 : 0;
    const day = 1 + random.below(DAYS_IN_MONTH[month]! + leap);
    // Ages as of the release year, so age and birth date agree as they would in a registry.
    const age = 2026 - year - (random.below(2) === 0 ? 1 : 0);
    yield [
      `P${pad(r, 10)}-${pad(random.below(1_000_000), 6)}`,
      String(age),
      random.below(2) === 0 ? 'F' : 'M',
      String(10000 + random.below(90000)),
      `${year}-${pad(month + 1, 2)}-${pad(day, 2)}`,
      DIAGNOSES[random.below(10)]!,
    ];
  }
}

/**
 * Columns that ride along (`bench:scale --ride-along`), released unchanged (insensitive): a
 * free-text note with one distinct value per row (a comma in one of five, a quoted word in one
 * of fifty, as notes people write hold), an amount with two decimals and a timestamp.
 * No model or metric reads them; they cost only what carrying a column costs.
 */
export const RIDE_ALONG_COLUMNS = ['note', 'amount', 'recorded_at'] as const;

/** REGISTRY_SPEC, with the ride-along columns insensitive when asked. */
export function registrySpec(rideAlong = false): typeof REGISTRY_SPEC {
  if (!rideAlong) return REGISTRY_SPEC;
  const extra = Object.fromEntries(RIDE_ALONG_COLUMNS.map((c) => [c, { type: 'insensitive' }]));
  return { ...REGISTRY_SPEC, attributes: { ...REGISTRY_SPEC.attributes, ...extra } };
}

const WORDS = ['seen', 'follow-up', 'referred', 'stable', 'review', 'discharged', 'in clinic', 'by phone'];

/**
 * The ride-along cells of row `r`, from a stream of their own: the registry's own columns are
 * the same bytes with or without them. The note is free text as people write it: one in five
 * goes on after a comma, one in fifty quotes a word (a CSV file quotes both kinds of cell).
 */
export function rideAlongCells(random: Random, r: number): string[] {
  let note = `${WORDS[random.below(WORDS.length)]} ${WORDS[random.below(WORDS.length)]} #${r} ${random.below(1_000_000).toString(36)}`;
  if (random.below(5) === 0) note += `, ${WORDS[random.below(WORDS.length)]}`;
  if (random.below(50) === 0) note += ` "${WORDS[random.below(WORDS.length)]}"`;
  const cents = random.below(10_000_000);
  const day = random.below(365);
  const date = new Date(Date.UTC(2025, 0, 1 + day, random.below(24), random.below(60), random.below(60)));
  return [note, `${Math.floor(cents / 100)}.${pad(cents % 100, 2)}`, date.toISOString().slice(0, 19)];
}

/** A CSV cell: quoted (its quotes doubled) when it holds a comma, a quote or a line break. */
function csvCell(value: string): string {
  return /[",\r\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * Writes `rows` rows of the registry table to `file` (CSV, comma-separated, with a header);
 * with `rideAlong`, the ride-along columns after the registry's own.
 */
export async function writeRegistryCsv(file: string, rows: number, rideAlong = false): Promise<void> {
  const it = registryRows(rows);
  if (!rideAlong) {
    await writeRows(file, REGISTRY_COLUMNS.join(','), rows, () => it.next().value!.join(','));
    return;
  }
  const random = new Random(20261128);
  await writeRows(file, [...REGISTRY_COLUMNS, ...RIDE_ALONG_COLUMNS].join(','), rows, (r) =>
    [...it.next().value!, ...rideAlongCells(random, r).map(csvCell)].join(','),
  );
}

/** Rows per Parquet row group (as bench/parquet.ts measured). */
const PARQUET_ROW_GROUP = 250_000;

/** A column's cells as the Arrow vector a Parquet file of the table holds. */
function parquetColumn(name: string, cells: string[]) {
  if (name === 'age') return vectorFromArray(Int32Array.from(cells, Number));
  if (name === 'birth_date')
    return vectorFromArray(
      cells.map((d) => new Date(`${d}T00:00:00Z`)),
      new DateDay(),
    );
  if (name === 'amount') {
    // DECIMAL(12, 2): each value's unscaled cents in the low word of its 128 bits (cents < 2^32).
    const words = new Uint32Array(cells.length * 4);
    for (let i = 0; i < cells.length; i++) words[i * 4] = Math.round(Number(cells[i]) * 100);
    return makeVector(makeData({ type: new Decimal(2, 12, 128), length: cells.length, data: words }));
  }
  if (name === 'recorded_at')
    return vectorFromArray(
      cells.map((t) => new Date(`${t}Z`).getTime()),
      new TimestampMillisecond('UTC'),
    );
  return vectorFromArray(cells, new Utf8());
}

/** Parquet compression codecs the benchmarks write (all of them read by src/data/parquet.ts). */
export const PARQUET_CODECS = ['snappy', 'zstd', 'gzip', 'uncompressed'] as const;
export type ParquetCodec = (typeof PARQUET_CODECS)[number];

/**
 * Writes the registry table's `rows` rows as `files` Parquet files `part-<i>.parquet` in `dir`
 * (rows cut evenly, in order), as a data lake holds a table: age INT32, birth_date DATE, the
 * rest strings (with `rideAlong`, amount DECIMAL(12, 2) and recorded_at a UTC TIMESTAMP too),
 * `codec` (SNAPPY unless asked), row groups of 250,000 rows. Written by parquet-wasm (the Rust
 * Parquet writer), whose files bench/parquet.ts measured smaller and faster to read than
 * hyparquet-writer's. Returns the bytes written.
 */
export function writeRegistryParquet(
  dir: string,
  rows: number,
  files: number,
  options: { rideAlong?: boolean; codec?: ParquetCodec } = {},
): number {
  const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');
  const compression = {
    snappy: wasm.Compression.SNAPPY,
    zstd: wasm.Compression.ZSTD,
    gzip: wasm.Compression.GZIP,
    uncompressed: wasm.Compression.UNCOMPRESSED,
  }[options.codec ?? 'snappy'];
  const props = () =>
    new wasm.WriterPropertiesBuilder()
      .setCompression(compression)
      .setMaxRowGroupSize(PARQUET_ROW_GROUP)
      .build();
  const columns: readonly string[] = options.rideAlong
    ? [...REGISTRY_COLUMNS, ...RIDE_ALONG_COLUMNS]
    : REGISTRY_COLUMNS;
  const it = registryRows(rows);
  // The same stream as writeRegistryCsv's, so both inputs hold the same rows.
  const random = new Random(20261128);
  let bytes = 0;
  let at = 0;
  for (let f = 0; f < files; f++) {
    const n = Math.floor((rows * (f + 1)) / files) - Math.floor((rows * f) / files);
    const cells: string[][] = columns.map(() => new Array<string>(n));
    for (let r = 0; r < n; r++, at++) {
      const row = it.next().value!;
      if (options.rideAlong) row.push(...rideAlongCells(random, at));
      for (let c = 0; c < row.length; c++) cells[c]![r] = row[c]!;
    }
    const table = new Table(
      Object.fromEntries(columns.map((name, c) => [name, parquetColumn(name, cells[c]!)])),
    );
    const out = wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream')), props());
    writeFileSync(join(dir, `part-${pad(f, 5)}.parquet`), out);
    bytes += out.length;
  }
  return bytes;
}

/**
 * A folder with release.json and the registry table of `rows` rows: registry.csv (with
 * `rideAlong`, its ride-along columns too), or with `parquetFiles`, the folder registry/ of that
 * many Parquet files (the spec's input names it; `parquetCodec` their compression). `bytes` is
 * the input's size.
 */
export async function registrySample(
  rows: number,
  options: { parquetFiles?: number; rideAlong?: boolean; parquetCodec?: ParquetCodec } = {},
): Promise<{ dir: string; spec: string; bytes: number }> {
  const dir = mkdtempSync(join(os.tmpdir(), `ppdp-registry-${rows}-`));
  const spec = join(dir, 'release.json');
  const rideAlong = options.rideAlong ?? false;
  if (options.parquetFiles === undefined) {
    writeFileSync(spec, `${JSON.stringify(registrySpec(rideAlong), null, 2)}\n`);
    await writeRegistryCsv(join(dir, 'registry.csv'), rows, rideAlong);
    return { dir, spec, bytes: statSync(join(dir, 'registry.csv')).size };
  }
  const { format: _csvOnly, ...parquetSpec } = registrySpec(rideAlong);
  writeFileSync(spec, `${JSON.stringify({ ...parquetSpec, input: 'registry' }, null, 2)}\n`);
  mkdirSync(join(dir, 'registry'));
  const written = writeRegistryParquet(join(dir, 'registry'), rows, options.parquetFiles, {
    rideAlong,
    codec: options.parquetCodec,
  });
  return { dir, spec, bytes: written };
}

// `tsx bench/registry-sample.ts <rows> <folder>` writes a sample where asked.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const rows = Number(process.argv[2] ?? 1000);
  const { dir, bytes } = await registrySample(rows);
  console.log(`${dir} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
}
