/**
 * The verifier's fast path through a staged CSV file: rows compared byte for byte with the
 * cells they must hold, as long as each is in the exact form a writer gives it (every value
 * unquoted, the delimiter after it, `\n` after the last). Where a row is not, the verifier's
 * own reader takes over (src/verify/staged-csv.ts). The WASM kernel (assembly/csv.ts) and the
 * plain-TS reference stop at the same row.
 */
import { acquireCore, type CoreExports, releaseCore } from '../../wasm/module.ts';

/**
 * A column's expected cells: cell `k` is `lengths[k]` bytes at byte `starts[k]` of `bytes`
 * (each start a multiple of 8, zero after the cell up to the next), or, with a length of -1,
 * a value not compared here; `codes` are the rows' cells, each checked in range.
 */
export interface ExpectedCells {
  readonly bytes: Uint8Array;
  readonly starts: Int32Array;
  readonly lengths: Int32Array;
  readonly codes: Int32Array;
}

export interface CsvMatchKernel {
  readonly name: string;
  /** A matcher of `rowCount` rows of these columns (closed when done). */
  open(columns: readonly ExpectedCells[], rowCount: number): CsvMatcher;
}

export interface CsvMatcher {
  /** The buffer the file is read into, `filled` bytes of it read: given again after each read. */
  load(buf: Uint8Array, filled: number): void;
  /**
   * Compares rows from `row` on, from byte `at` of the loaded bytes: the first row not whole
   * there, not in the exact form, or different, and the byte it starts at.
   */
  match(at: number, row: number): { row: number; pos: number };
  close(): void;
}

export const tsCsvMatchKernel: CsvMatchKernel = {
  name: 'ts',
  open(columns, rowCount) {
    let buf: Uint8Array = new Uint8Array(0);
    let filled = 0;
    return {
      load(bytes, length) {
        buf = bytes;
        filled = length;
      },
      match(at, from) {
        let p = at;
        let r = from;
        rows: for (; r < rowCount; r++) {
          let q = p;
          for (const t of columns) {
            const k = t.codes[r]!;
            const length = t.lengths[k]!;
            if (length < 0 || q + length > filled) break rows;
            const start = t.starts[k]!;
            for (let j = 0; j < length; j++) if (buf[q + j] !== t.bytes[start + j]) break rows;
            q += length;
          }
          p = q;
        }
        return { row: r, pos: p };
      },
      close() {},
    };
  },
};

const PAGE = 65536;
/** Rows whose codes are copied in at a time. */
const BLOCK_ROWS = 1 << 16;
const align = (x: number) => (x + 15) & ~15;

export const wasmCsvMatchKernel: CsvMatchKernel = {
  name: 'wasm',
  open(columns, rowCount) {
    const { core } = acquireCore();
    const width = columns.length;
    const blockRows = Math.max(1, Math.min(BLOCK_ROWS, rowCount));
    // Layout: result | tables | per column: starts, lengths | cells | codes block | buffer.
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
    const bufAt = align(codes + 4 * width * blockRows);
    let words = new Int32Array(reserve(core, bufAt + 16).buffer);
    columns.forEach((t, c) => {
      const { starts, lengths } = placed[c]!;
      words[(tables >> 2) + 2 * c] = starts;
      words[(tables >> 2) + 2 * c + 1] = lengths;
      for (let k = 0; k < t.starts.length; k++) words[(starts >> 2) + k] = t.starts[k]! + offsets[c]!;
      words.set(t.lengths, lengths >> 2);
      new Uint8Array(words.buffer, cells + offsets[c]!, t.bytes.length).set(t.bytes);
    });
    let filled = 0;
    let block = -1;
    let blockLength = 0;
    return {
      load(bytes, length) {
        words = new Int32Array(reserve(core, bufAt + length + 16).buffer);
        new Uint8Array(words.buffer, bufAt, length).set(bytes.subarray(0, length));
        filled = length;
      },
      match(start, from) {
        let row = from;
        let pos = start;
        while (row < rowCount) {
          if (!(row >= block && row < block + blockLength)) {
            block = row;
            blockLength = Math.min(blockRows, rowCount - row);
            for (const [c, t] of columns.entries())
              words.set(t.codes.subarray(block, block + blockLength), (codes >> 2) + c * blockLength);
          }
          const r = core.csvMatch(
            codes,
            blockLength,
            width,
            row - block,
            tables,
            cells,
            bufAt,
            pos,
            filled,
            result,
          );
          pos = words[result >> 2]!;
          row = block + r;
          if (r < blockLength) break;
        }
        return { row, pos };
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
