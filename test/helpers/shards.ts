/** Checks of a table read in row shards against the same table read whole. */
import { expect } from 'vitest';
import { type ReadTableOptions, readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { CellDigest, tableDigest } from '../../src/util/keys.ts';

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
  let at = 0;
  let previous: EncodedTable | undefined;
  for (const shard of shards) {
    expect(shard.rowCount).toBe(Math.min(rowsPerShard, whole.rowCount - at));
    for (let r = 0; r < shard.rowCount; r++) expect(rowCells(shard, r)).toEqual(rowCells(whole, at + r));
    for (const [i, c] of shard.columns.entries()) {
      const before = previous ? previous.columns[i]!.dictionary : [];
      expect(c.dictionary.slice(0, before.length)).toEqual(before);
    }
    digest.add(shard);
    previous = shard;
    at += shard.rowCount;
  }
  expect(at).toBe(whole.rowCount);
  expect(Buffer.from(digest.digest()).equals(Buffer.from(tableDigest(whole)))).toBe(true);
  return shards;
}
