/**
 * The WASM CSV row writer (assembly/csv.ts). Opening lays out the cell tables in an instance's
 * memory; each write then takes the rows a block at a time (their codes copied in) into a
 * window of memory, copied out to the chunk: the instance holds a block and a window, not the
 * table or the chunk.
 */
import { acquireCore, type CoreExports, releaseCore } from '../../wasm/module.ts';
import { type CellTable, type CsvRowsKernel, SPARE_BYTES } from './kernel.ts';

const PAGE = 65536;
/** Rows whose codes are copied in at a time. */
const BLOCK_ROWS = 1 << 16;
/** Bytes written into memory before they are copied out, at least. */
const WINDOW_BYTES = 4 * 1024 * 1024;

const align = (x: number) => (x + 15) & ~15;

export const wasmCsvKernel: CsvRowsKernel = {
  name: 'wasm',
  open(columns: readonly CellTable[], rowCount: number) {
    const { core } = acquireCore();
    const width = columns.length;
    // The widest row: its columns' widest cells.
    const widest = columns.reduce((n, t) => n + t.lengths.reduce((m, l) => Math.max(m, l), 0), 0);
    const window = Math.max(WINDOW_BYTES, 2 * widest);
    const blockRows = Math.max(1, Math.min(BLOCK_ROWS, rowCount));
    // Layout: result | tables | per column: starts, lengths | cells | codes block | window.
    const result = 16;
    const tables = align(result + 4);
    let at = align(tables + 8 * width);
    const placed = columns.map((t) => {
      const starts = at;
      const lengths = align(starts + 4 * t.starts.length);
      at = align(lengths + 4 * t.lengths.length);
      return { starts, lengths };
    });
    const cells = at;
    const offsets = columns.map((t) => {
      const offset = at - cells;
      at = align(at + t.bytes.length);
      return offset;
    });
    const codes = at;
    const out = align(codes + 4 * width * blockRows);
    const memory = reserve(core, out + window + SPARE_BYTES);
    const words = new Int32Array(memory.buffer);
    columns.forEach((t, c) => {
      const { starts, lengths } = placed[c]!;
      words[(tables >> 2) + 2 * c] = starts;
      words[(tables >> 2) + 2 * c + 1] = lengths;
      // Each column's starts count from the one blob of every column's cells.
      for (let k = 0; k < t.starts.length; k++) words[(starts >> 2) + k] = t.starts[k]! + offsets[c]!;
      words.set(t.lengths, lengths >> 2);
      new Uint8Array(memory.buffer, cells + offsets[c]!, t.bytes.length).set(t.bytes);
    });
    return {
      write(from, target, start, limit) {
        let row = from;
        let p = start;
        while (row < rowCount && p <= limit) {
          const n = Math.min(blockRows, rowCount - row);
          for (const [c, t] of columns.entries())
            words.set(t.codes.subarray(row, row + n), (codes >> 2) + c * n);
          // Rows start while the window can take the widest and the chunk's limit is not passed.
          const last = Math.min(window - widest, limit - p);
          const done = core.csvRows(codes, n, width, 0, tables, cells, out, 0, last, result);
          const bytes = words[result >> 2]!;
          target.set(new Uint8Array(memory.buffer, out, bytes), p);
          p += bytes;
          row += done;
        }
        return { row, at: p };
      },
      close() {
        releaseCore(core, 0, 0);
      },
    };
  },
};

/** The instance's memory grown to at least `bytes`. */
function reserve(core: CoreExports, bytes: number): WebAssembly.Memory {
  const need = Math.ceil(bytes / PAGE) - core.memory.buffer.byteLength / PAGE;
  if (need > 0) core.memory.grow(need);
  return core.memory;
}
