/**
 * CSV rows from dictionary codes (the writer's hot loop): each row's cells copied from each
 * table of distinct cells in turn, every cell already quoted and followed by its delimiter or
 * line end (or, for a column of values as bytes, followed by a table of one cell: the delimiter).
 * The WASM kernel (assembly/csv.ts) and the plain-TS reference write the same bytes.
 */

/**
 * A table's distinct cells: cell `k` is `lengths[k]` bytes at byte `starts[k]` of `bytes`, at
 * any byte (a writer may copy whole words: up to 7 bytes past a cell are read and written, then
 * overwritten by the next cell); `codes` are the rows' cells, each checked in range.
 */
export interface CellTable {
  readonly bytes: Uint8Array;
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  readonly codes: Int32Array;
}

/** Bytes a writer may write past a row's last byte: the output keeps this many spare. */
export const SPARE_BYTES = 8;

export interface CsvRowsKernel {
  readonly name: string;
  /** A writer of `rowCount` rows of these columns, in chunks (closed when done). */
  open(columns: readonly CellTable[], rowCount: number): CsvRowsWriter;
}

export interface CsvRowsWriter {
  /**
   * Writes rows `from`… into `out` from byte `at`, each whole, while a row starts at or before
   * `limit` (`out` holds the widest row past it, and SPARE_BYTES more). The next row and byte.
   */
  write(from: number, out: Uint8Array, at: number, limit: number): { row: number; at: number };
  close(): void;
}
