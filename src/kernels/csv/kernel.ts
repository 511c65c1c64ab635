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
 *
 * Or, with `values` (the delimiter's first byte), a column of values (a column of rows' bytes: a
 * note, an amount): value `k` is bytes [starts[k], starts[k + 1]) of `bytes` (no lengths), its
 * field either its bytes as they are or, when they hold a quote, CR, LF or that byte, quoted
 * with its quotes doubled; the delimiter after it is a table of its own.
 */
export interface CellTable {
  readonly bytes: Uint8Array;
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  readonly codes: Int32Array;
  readonly values?: number;
}

const QUOTE = 0x22;

/** Whether value bytes [start, end) must be quoted in a field (`special`: the delimiter's first byte). */
export function needsQuotes(bytes: Uint8Array, start: number, end: number, special: number): boolean {
  for (let j = start; j < end; j++) {
    const b = bytes[j]!;
    if (b === QUOTE || b === 0x0d || b === 0x0a || b === special) return true;
  }
  return false;
}

/**
 * Value bytes [start, end) as a field at `at` of `out` (quoted when they must be): where it
 * ends. The writers' reference (the WASM kernel writes the same bytes).
 */
export function writeValue(
  bytes: Uint8Array,
  start: number,
  end: number,
  special: number,
  out: Uint8Array,
  at: number,
): number {
  if (!needsQuotes(bytes, start, end, special)) {
    out.set(bytes.subarray(start, end), at);
    return at + end - start;
  }
  out[at++] = QUOTE;
  for (let j = start; j < end; j++) {
    const b = bytes[j]!;
    out[at++] = b;
    if (b === QUOTE) out[at++] = QUOTE;
  }
  out[at++] = QUOTE;
  return at;
}

/**
 * The most bytes a cell of the table takes in a row: its longest cell, or for a column of
 * values its longest value quoted with every byte a quote (a bound: the writer sizes by it).
 */
export function widestCell(t: CellTable): number {
  let widest = 0;
  if (t.values === undefined) {
    for (let k = 0; k < t.lengths.length; k++) if (t.lengths[k]! > widest) widest = t.lengths[k]!;
    return widest;
  }
  // The array held in a local, each start read once: a column of millions of values.
  const starts = t.starts;
  let previous = starts[0]!;
  for (let k = 1; k < starts.length; k++) {
    const next = starts[k]!;
    if (next - previous > widest) widest = next - previous;
    previous = next;
  }
  return starts.length > 1 ? 2 * widest + 2 : 0;
}

/** The most bytes a column of values (value k: [starts[k], starts[k + 1])) takes, by the same bound. */
export function valuesBound(starts: Int32Array): number {
  const n = starts.length - 1;
  return n > 0 ? 2 * (starts[n]! - starts[0]!) + 2 * n : 0;
}

/** Bytes a writer may write past a row's last byte: the output keeps this many spare. */
export const SPARE_BYTES = 8;

export interface CsvRowsKernel {
  readonly name: string;
  /**
   * A writer of `rowCount` rows of these columns, in chunks (closed when done); `widest`, when
   * the caller has it, bounds a row's bytes (each column's widest cell that a row takes).
   */
  open(columns: readonly CellTable[], rowCount: number, widest?: number): CsvRowsWriter;
}

export interface CsvRowsWriter {
  /**
   * Writes rows `from`… into `out` from byte `at`, each whole, while a row starts at or before
   * `limit` (`out` holds the widest row past it, and SPARE_BYTES more). The next row and byte.
   */
  write(from: number, out: Uint8Array, at: number, limit: number): { row: number; at: number };
  close(): void;
}
