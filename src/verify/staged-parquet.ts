/**
 * A staged Parquet file checked against the table the Arrow file holds: read back with ppdp's
 * Parquet reader (the one that reads inputs), a shard at a time, cell by cell.
 */
import { readParquetShards } from '../data/parquet.ts';
import { PpdpError } from '../errors.ts';
import type { CodedTable } from './common.ts';

/** Rows read from the file at a time. */
const SHARD_ROWS = 250_000;

/**
 * True when the Parquet file at `path` holds exactly `table`: the same column names, the same
 * number of rows, and the same value in every cell, in the same order. A file that cannot be
 * read (corrupt, a null, a type the reader refuses) holds no table.
 */
export function parquetHoldsTable(path: string, table: CodedTable): boolean {
  let at = 0;
  try {
    for (const shard of readParquetShards(path, SHARD_ROWS)) {
      if (shard.columns.map((c) => c.name).join('\u0000') !== table.names.join('\u0000')) return false;
      if (at + shard.rowCount > table.rowCount) return false;
      for (const [c, column] of shard.columns.entries()) {
        const want = table.dictionaries[c]!;
        const wantCodes = table.codes[c]!;
        for (let r = 0; r < shard.rowCount; r++) {
          if (column.dictionary[column.codes[r]!] !== want[wantCodes[at + r]!]) return false;
        }
      }
      at += shard.rowCount;
    }
  } catch (err) {
    // An empty part's file: the reader refuses a table of no rows, whose columns it does not name.
    if (err instanceof PpdpError) return err.code === 'E_INPUT_NO_ROWS' && table.rowCount === 0;
    throw err;
  }
  return at === table.rowCount;
}
