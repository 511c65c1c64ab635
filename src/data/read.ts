/** Picks the reader for an input table by explicit format or by file extension. */
import { extname } from 'node:path';
import { type NullPolicy, readArrow } from './arrow.ts';
import { readCsv } from './csv.ts';
import type { EncodedTable } from './table.ts';

export type InputFormat = 'csv' | 'arrow';

export interface ReadTableOptions {
  /** CSV only; detected from the header when absent. */
  delimiter?: string;
  /** Overrides the extension-based choice. */
  format?: InputFormat;
  /** Arrow only: what a null does (default: an error). */
  nulls?: NullPolicy;
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
