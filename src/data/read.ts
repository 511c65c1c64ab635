/** Picks the reader for an input table by explicit format or by file extension. */
import { extname } from 'node:path';
import { type NullPolicy, readArrow, readArrowShards } from './arrow.ts';
import { readCsv, readCsvShards } from './csv.ts';
import type { EncodedTable } from './table.ts';

export type InputFormat = 'csv' | 'arrow';

export interface ReadTableOptions {
  /** CSV only; detected from the header when absent. */
  delimiter?: string;
  /** Overrides the extension-based choice. */
  format?: InputFormat;
  /** Arrow only: what a null does (default: an error). */
  nulls?: NullPolicy;
  /** Columns left out as they are read, never stored (identifying ones): see EncodedTable.omitted. */
  omit?: ReadonlySet<string>;
}

const ARROW_EXTENSIONS = new Set(['.arrow', '.feather', '.ipc']);

/** `arrow` for `.arrow`, `.feather` and `.ipc` (any case), `csv` for anything else. */
export function formatOf(path: string): InputFormat {
  return ARROW_EXTENSIONS.has(extname(path).toLowerCase()) ? 'arrow' : 'csv';
}

export function readTable(path: string, options: ReadTableOptions = {}): EncodedTable {
  const format = options.format ?? formatOf(path);
  return format === 'arrow'
    ? readArrow(path, { nulls: options.nulls })
    : readCsv(path, { delimiter: options.delimiter });
}

/**
 * Reads a table as consecutive shards of `rowsPerShard` rows, one held at a time; each shard's
 * dictionaries are a prefix of the next one's (see readCsvShards, readArrowShards).
 */
export function readTableShards(
  path: string,
  rowsPerShard: number,
  options: ReadTableOptions = {},
): Generator<EncodedTable, void, undefined> {
  const format = options.format ?? formatOf(path);
  return format === 'arrow'
    ? readArrowShards(path, rowsPerShard, { nulls: options.nulls, omit: options.omit })
    : readCsvShards(path, rowsPerShard, { delimiter: options.delimiter, omit: options.omit });
}
