/**
 * The plain-TS reference of the CSV row writer (assembly/csv.ts): the same cells, 4-byte words
 * at a time.
 */
import type { CellTable, CsvRowsKernel } from './kernel.ts';

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

export const tsCsvKernel: CsvRowsKernel = {
  name: 'ts',
  open(columns: readonly CellTable[], rowCount: number) {
    const codes = columns.map((t) => t.codes);
    const words = columns.map(
      (t) => new Int32Array(t.bytes.buffer, t.bytes.byteOffset, t.bytes.byteLength >> 2),
    );
    const starts = columns.map((t) => t.starts);
    const lengths = columns.map((t) => t.lengths);
    return {
      write(from, out, at, limit) {
        const view = new DataView(out.buffer, out.byteOffset, out.byteLength);
        return copyRows(view, at, from, rowCount, limit, codes, starts, words, lengths);
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
  out: DataView,
  at: number,
  from: number,
  rowCount: number,
  limit: number,
  codes: Int32Array[],
  starts: Int32Array[],
  words: Int32Array[],
  lengths: Int32Array[],
): { row: number; at: number } {
  const width = codes.length;
  const le = LITTLE_ENDIAN;
  let p = at;
  let r = from;
  for (; r < rowCount && p <= limit; r++) {
    for (let c = 0; c < width; c++) {
      const k = codes[c]![r]!;
      const w = words[c]!;
      const length = lengths[c]![k]!;
      const end = (starts[c]![k]! + length + 3) >> 2;
      let q = p;
      for (let j = starts[c]![k]! >> 2; j < end; j++) {
        out.setInt32(q, w[j]!, le);
        q += 4;
      }
      p += length;
    }
  }
  return { row: r, at: p };
}
