/**
 * The plain-TS reference of the CSV row writer (assembly/csv.ts): the same cells, 4-byte words
 * at a time; a column of values each value as writeValue writes it.
 */
import { type CellTable, type CsvRowsKernel, writeValue } from './kernel.ts';

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

export const tsCsvKernel: CsvRowsKernel = {
  name: 'ts',
  open(columns: readonly CellTable[], rowCount: number) {
    const codes = columns.map((t) => t.codes);
    // A cell may start at any byte: each column's cells read through a view, 3 bytes spare after.
    const words = columns.map((t) => {
      const padded = new Uint8Array(t.bytes.byteLength + 3);
      padded.set(t.bytes);
      return new DataView(padded.buffer);
    });
    const starts = columns.map((t) => t.starts);
    const lengths = columns.map((t) => t.lengths);
    return {
      write(from, out, at, limit) {
        const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
        return copyRows(out, view, at, from, rowCount, limit, columns, codes, starts, words, lengths);
      },
      close() {},
    };
  },
};

/**
 * Writes rows `from`… from byte `at` while it has not passed `limit`, each cell as whole 32-bit
 * words: a word may spill up to three bytes past the cell, which the next cell (or the spare
 * bytes) overwrites. Returns the next row and byte.
 */
function copyRows(
  bytes: Uint8Array,
  out: DataView,
  at: number,
  from: number,
  rowCount: number,
  limit: number,
  columns: readonly CellTable[],
  codes: Int32Array[],
  starts: Int32Array[],
  words: DataView[],
  lengths: Int32Array[],
): { row: number; at: number } {
  const width = codes.length;
  const le = LITTLE_ENDIAN;
  let p = at;
  let r = from;
  for (; r < rowCount && p <= limit; r++) {
    for (let c = 0; c < width; c++) {
      const k = codes[c]![r]!;
      const values = columns[c]!.values;
      if (values !== undefined) {
        p = writeValue(columns[c]!.bytes, starts[c]![k]!, starts[c]![k + 1]!, values, bytes, p);
        continue;
      }
      const w = words[c]!;
      const length = lengths[c]![k]!;
      const start = starts[c]![k]!;
      for (let j = 0; j < length; j += 4) out.setInt32(p + j, w.getInt32(start + j, le), le);
      p += length;
    }
  }
  return { row: r, at: p };
}
