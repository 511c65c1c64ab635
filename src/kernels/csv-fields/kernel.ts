/**
 * The CSV reader's plain rows (src/data/csv.ts, CsvParser): bytes split into rows of fields, as
 * many whole rows as come before the first one the reader parses itself (a quoted field holding
 * a line break or followed by other text, a coded one holding an escaped quote, a row of another
 * width, a blank line, a row of empty fields — delimiters, spaces and tabs only — a row the bytes
 * cut short). A quoted field's value lies between its
 * quotes, `""` a quote in it. The WASM kernel (assembly/csv-fields.ts) and the plain-TS
 * reference give the same rows.
 */

/** How a column's fields are kept. */
export const OMITTED = 0;
/** Its fields' places and FNV-1a hashes, for a dictionary lookup. */
export const CODED = 1;
/** Its fields' bytes, copied out. */
export const RAW = 2;

export interface PlainRowsRequest {
  readonly bytes: Uint8Array;
  /** The rows looked for in `bytes[start, end)`. */
  readonly start: number;
  readonly end: number;
  /** One byte (ASCII, not a quote, CR or LF). */
  readonly delimiter: number;
  /** Per column OMITTED, CODED or RAW; at least two columns. */
  readonly kinds: readonly number[];
  /** At most so many rows. */
  readonly most: number;
}

export interface PlainRows {
  readonly rows: number;
  /** Where the rows end in `bytes`: `start` when there are none. */
  readonly end: number;
  /** Per coded column, in column order: each row's value `[starts, ends)` of `bytes` (inside its quotes), and hash. */
  readonly coded: readonly { starts: Int32Array; ends: Int32Array; hashes: Int32Array }[];
  /** Per raw column, in column order: the rows' values (unquoted), offsets from 0. */
  readonly raw: readonly { offsets: Int32Array; bytes: Uint8Array }[];
}

/**
 * The plain rows of a request. What it returns is read before the next call on the thread (the
 * WASM one's arrays are views of its memory).
 */
export type PlainRowsKernel = (request: PlainRowsRequest) => PlainRows;
