/**
 * The memory layout the CSV kernels share (assembly/csv.ts): a result word, each column's
 * pointers, its cells' starts and lengths, one blob of every column's cells, a block of rows'
 * codes and each column's kind, then whatever the kernel needs after it (`end`).
 */
import { align16, placeShifted, reserve } from '../../wasm/layout.ts';
import type { CoreExports } from '../../wasm/module.ts';
import type { CellTable } from './kernel.ts';

/** Rows whose codes are copied in at a time. */
export const BLOCK_ROWS = 1 << 16;

export interface CellLayout {
  /** The i32 a kernel writes its byte position to. */
  readonly result: number;
  readonly tables: number;
  readonly cells: number;
  /** Where a block of `blockRows` rows' codes goes, column after column. */
  readonly codes: number;
  readonly blockRows: number;
  /** Per column its kind: 0 for a table of cells, 0x100 | the delimiter's first byte for values. */
  readonly kinds: number;
  /** The first byte after the kinds. */
  readonly end: number;
}

/** Lays the columns' tables out in the instance's memory (grown to `end + extra`). */
export function placeCells(
  core: CoreExports,
  columns: readonly CellTable[],
  rowCount: number,
  extra: number,
): CellLayout {
  const width = columns.length;
  const blockRows = Math.max(1, Math.min(BLOCK_ROWS, rowCount));
  const result = 16;
  const tables = align16(result + 4);
  let at = align16(tables + 8 * width);
  const placed = columns.map((t) => {
    const starts = at;
    const lengths = align16(starts + 4 * t.starts.length);
    at = align16(lengths + 4 * t.lengths.length);
    return { starts, lengths };
  });
  const cells = at;
  const offsets = columns.map((t) => {
    const offset = at - cells;
    at = align16(at + t.bytes.length);
    return offset;
  });
  const codes = at;
  const kinds = align16(codes + 4 * width * blockRows);
  const end = align16(kinds + 4 * width);
  const words = new Int32Array(reserve(core, end + extra).buffer);
  words.set(
    columns.map((t) => (t.values === undefined ? 0 : 0x100 | (t.values & 0xff))),
    kinds >> 2,
  );
  columns.forEach((t, c) => {
    const { starts, lengths } = placed[c]!;
    words[(tables >> 2) + 2 * c] = starts;
    words[(tables >> 2) + 2 * c + 1] = lengths;
    // Each column's starts count from the one blob of every column's cells.
    placeShifted(words, starts >> 2, t.starts, offsets[c]!);
    words.set(t.lengths, lengths >> 2);
    new Uint8Array(words.buffer, cells + offsets[c]!, t.bytes.length).set(t.bytes);
  });
  return { result, tables, cells, codes, blockRows, kinds, end };
}

/** Copies the codes of rows [from, from + n) into the codes block, column after column. */
export function placeCodes(
  core: CoreExports,
  layout: CellLayout,
  columns: readonly CellTable[],
  from: number,
  n: number,
): void {
  const words = new Int32Array(core.memory.buffer);
  for (const [c, t] of columns.entries())
    words.set(t.codes.subarray(from, from + n), (layout.codes >> 2) + c * n);
}

/** The i32 at `layout.result`. */
export function resultOf(core: CoreExports, layout: CellLayout): number {
  return new Int32Array(core.memory.buffer, layout.result, 1)[0]!;
}
