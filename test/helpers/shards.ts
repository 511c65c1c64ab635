/** Checks of a table read in row shards against the same table read whole. */
import { expect } from 'vitest';
import { CellDigest, tableDigest } from '../../src/data/digest.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { type ReadTableOptions, readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';

/** Row `r`'s cells. */
export function rowCells(t: EncodedTable, r: number): string[] {
  return t.columns.map((c) => c.dictionary[c.codes[r]!]!);
}

/**
 * The shards of `path`: they hold the whole table's rows in order, each shard's dictionaries
 * are a prefix of the next one's, and their digest is the whole table's.
 */
export function checkShards(
  path: string,
  rowsPerShard: number,
  options: ReadTableOptions = {},
): EncodedTable[] {
  const whole = readTable(path, options);
  const digest = new CellDigest();
  const shards = [...readTableShards(path, rowsPerShard, options)];
  // Compared in plain code, one expect per property: tens of thousands of expects are slow.
  const sizes: number[] = [];
  const wrongRows: number[] = [];
  const notPrefixes: number[] = [];
  let at = 0;
  let previous: EncodedTable | undefined;
  for (const [s, shard] of shards.entries()) {
    sizes.push(shard.rowCount);
    for (let r = 0; r < shard.rowCount; r++) {
      if (rowCells(shard, r).join('\0') !== rowCells(whole, at + r).join('\0')) wrongRows.push(at + r);
    }
    for (const [i, c] of shard.columns.entries()) {
      const before = previous ? previous.columns[i]!.dictionary : [];
      if (before.some((v, j) => c.dictionary[j] !== v)) notPrefixes.push(s);
    }
    digest.add(shard);
    previous = shard;
    at += shard.rowCount;
  }
  expect(sizes).toEqual(sizes.map((_, s) => Math.min(rowsPerShard, whole.rowCount - s * rowsPerShard)));
  expect(wrongRows).toEqual([]);
  expect(notPrefixes).toEqual([]);
  expect(at).toBe(whole.rowCount);
  expect(Buffer.from(digest.digest()).equals(Buffer.from(tableDigest(whole)))).toBe(true);
  return shards;
}

/**
 * The file read in shards of `rowsPerShard` rows with every column as bytes: each row's bytes
 * are the cell the coded read gives, and the digest is the coded table's.
 */
export function expectBytesAlike(path: string, rowsPerShard: number, options: ReadTableOptions = {}): void {
  const whole = readTable(path, options);
  const raw = new Set(whole.columns.map((c) => c.name));
  const shards = [...readTableShards(path, rowsPerShard, { ...options, raw })];
  const rows = shards.flatMap((shard) => {
    const columns = shard.columns.map((c) => (c.raw ? rawStrings(c.raw) : []));
    return Array.from({ length: shard.rowCount }, (_, r) => columns.map((c) => c[r]!));
  });
  expect(rows).toEqual(Array.from({ length: whole.rowCount }, (_, r) => rowCells(whole, r)));
  const digest = new CellDigest();
  for (const shard of shards) digest.add(shard);
  expect(Buffer.from(digest.digest()).toString('hex')).toBe(Buffer.from(tableDigest(whole)).toString('hex'));
}
