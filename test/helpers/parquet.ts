/** Parquet fixtures written in tests (hyparquet-writer, SNAPPY). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ColumnSource, parquetWriteBuffer } from 'hyparquet-writer';
import { expect } from 'vitest';
import { CellDigest, tableDigest } from '../../src/data/digest.ts';
import { readParquet, readParquetShards } from '../../src/data/parquet.ts';
import { rawStrings } from '../../src/data/raw.ts';

export function writeParquet(path: string, columnData: ColumnSource[], rowGroupSize = 1000): void {
  writeFileSync(path, new Uint8Array(parquetWriteBuffer({ columnData, rowGroupSize })));
}

/** Adult's rows as columns: age as INT32, the rest as strings. */
export function adultColumns(csv: string): { header: string[]; rows: string[][] } {
  const [head, ...lines] = csv.trimEnd().split('\n');
  return { header: head!.split(';'), rows: lines.map((l) => l.split(';')) };
}

export function adultParquet(path: string, header: string[], rows: string[][], rowGroupSize: number): void {
  writeParquet(
    path,
    header.map((name, i) =>
      name === 'age'
        ? { name, data: Int32Array.from(rows, (r) => Number(r[i])), type: 'INT32', nullable: false }
        : { name, data: rows.map((r) => r[i]!), type: 'STRING', nullable: false },
    ),
    rowGroupSize,
  );
}

/**
 * A folder `name` in `dir` holding Adult's rows as Parquet files cut at `cuts` (row indexes),
 * each in row groups of `rowGroupSize` rows.
 */
export function adultParquetFolder(
  dir: string,
  name: string,
  csv: string,
  cuts: number[],
  rowGroupSize: number,
): void {
  const { header, rows } = adultColumns(csv);
  mkdirSync(join(dir, name));
  const bounds = [0, ...cuts, rows.length];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const part = rows.slice(bounds[k], bounds[k + 1]);
    adultParquet(join(dir, name, `part-${String(k).padStart(5, '0')}.parquet`), header, part, rowGroupSize);
  }
}

/**
 * The file read in shards of `rowsPerShard` rows with every column as bytes: each row's bytes
 * are the cell the coded read gives, and the digest is the coded table's.
 */
export function expectBytesAlike(
  path: string,
  rowsPerShard: number,
  options: { nulls?: 'missing' } = {},
): void {
  const whole = readParquet(path, options);
  const raw = new Set(whole.columns.map((c) => c.name));
  const shards = [...readParquetShards(path, rowsPerShard, { ...options, raw })];
  const rows = shards.flatMap((shard) => {
    const columns = shard.columns.map((c) => (c.raw ? rawStrings(c.raw) : []));
    return Array.from({ length: shard.rowCount }, (_, r) => columns.map((c) => c[r]!));
  });
  const cells = Array.from({ length: whole.rowCount }, (_, r) =>
    whole.columns.map((c) => c.dictionary[c.codes[r]!]!),
  );
  expect(rows).toEqual(cells);
  const digest = new CellDigest();
  for (const shard of shards) digest.add(shard);
  expect(Buffer.from(digest.digest()).toString('hex')).toBe(Buffer.from(tableDigest(whole)).toString('hex'));
}
