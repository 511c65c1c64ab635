/**
 * Rows per item (a row shard, an output part) sized by what the rows hold, not by their number
 * alone. The functions that take one item each are sized for so many rows of coded cells (a
 * code per cell, whatever the value's length). A column carried as its rows' bytes (a
 * pass-through column: a free-text note, an amount, a timestamp) adds those bytes to every row
 * an item holds, at every table size. Rows of such columns come fewer to an item, so that each
 * item holds what its function was sized for, with or without them.
 */
import type { EncodedTable } from '../../data/table.ts';

/** What a shard state (CountShard, ApplyShard) holds per row of coded cells: 150 MiB per million rows. */
export const SHARD_BYTES_PER_ROW = 150;
/** What an output part's states (Assemble, VerifySlice) hold per row: 240 MiB per million rows. */
export const PART_BYTES_PER_ROW = 240;
/**
 * What a shard state holds per byte of a pass-through column's rows: the shard's bytes as read,
 * as staged and as released. Measured deployed on 10^6 registry rows with three such columns
 * of 55 bytes a row between them (bench/results/deployed-registry.json): ApplyShard held 4.3
 * bytes more per such byte, CountShard 2.5.
 */
export const SHARD_BYTES_PER_RAW_BYTE = 4;
/** What an output part's states hold per byte of a pass-through column's rows (as above: Assemble 10–11, VerifySlice 6). */
export const PART_BYTES_PER_RAW_BYTE = 10;

/** Items are cut to whole thousands of rows, the figures read as sizes: never below this. */
const ROW_STEP = 1000;

/**
 * The rows an item of `rawBytesPerRow`-byte pass-through rows gets in place of `rows` rows of
 * coded cells costing `bytesPerRow` each: as many bytes held, each raw byte costing
 * `perRawByte`. Rows without pass-through bytes (or an unbounded item) keep `rows`.
 */
export function rowsForWidth(
  rows: number,
  rawBytesPerRow: number,
  item: { readonly bytesPerRow: number; readonly perRawByte: number },
): number {
  if (!(rawBytesPerRow > 0) || !Number.isFinite(rows)) return rows;
  const fewer = (rows * item.bytesPerRow) / (item.bytesPerRow + item.perRawByte * rawBytesPerRow);
  return fewer >= ROW_STEP ? Math.floor(fewer / ROW_STEP) * ROW_STEP : Math.max(1, Math.floor(fewer));
}

export const SHARD_ITEM = { bytesPerRow: SHARD_BYTES_PER_ROW, perRawByte: SHARD_BYTES_PER_RAW_BYTE } as const;
export const PART_ITEM = { bytesPerRow: PART_BYTES_PER_ROW, perRawByte: PART_BYTES_PER_RAW_BYTE } as const;

/**
 * Mean UTF-8 bytes per row of the `passThrough` columns of `rows` (read with every column
 * coded, as Plan reads the input's first rows): what each row adds to an item beyond its codes.
 */
export function passThroughBytesPerRow(rows: EncodedTable, passThrough: readonly string[]): number {
  if (rows.rowCount === 0) return 0;
  const names = new Set(passThrough);
  let bytes = 0;
  for (const c of rows.columns) {
    if (!names.has(c.name)) continue;
    const lengths = c.dictionary.map((v) => Buffer.byteLength(v));
    for (let r = 0; r < rows.rowCount; r++) bytes += lengths[c.codes[r]!]!;
  }
  return bytes / rows.rowCount;
}
