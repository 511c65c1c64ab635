/**
 * The verifier's fast path through a staged CSV file: rows compared byte for byte with the
 * cells they must hold, as long as each is in the exact form a writer gives it (every value
 * unquoted, the delimiter after it, `\n` after the last). A column of values (a column of rows'
 * bytes: a note, an amount) is compared as its values instead, each field quoted or not: the
 * matcher unquotes it as it compares, so its values need no quoted copy made first. Where a
 * row is not in such a form, the verifier's own reader takes over (src/verify/staged-csv.ts).
 * The WASM kernel (assembly/csv.ts) and the plain-TS reference stop at the same row.
 */
import { reserve } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import { type CellTable, needsQuotes } from './kernel.ts';
import { placeCells, placeCodes, resultOf } from './layout.ts';

/**
 * A column's expected cells, laid out as a writer's (CellTable): cell `k` is `lengths[k]` bytes
 * at byte `starts[k]` of `bytes`, or, with a length of -1, a value not compared here. Or, with
 * `values`, a column of values (CellTable): its field either quoted (any valid quoting: quotes
 * doubled) or its bytes as they are, which must then need no quotes (else the reader takes the row).
 */
export type ExpectedCells = CellTable;

const QUOTE = 0x22;

/** Value k of a column of values compared with the field at `q` of `buf`: the byte after it, or -1 (see ExpectedCells). */
function valueMatch(t: ExpectedCells, k: number, buf: Uint8Array, q: number, filled: number): number {
  const start = t.starts[k]!;
  const end = t.starts[k + 1]!;
  if (q < filled && buf[q] === QUOTE) {
    let p = q + 1;
    let j = start;
    for (;;) {
      if (p >= filled) return -1;
      const b = buf[p]!;
      if (b === QUOTE) {
        if (p + 1 >= filled) return -1;
        if (buf[p + 1] !== QUOTE) break;
        p++;
      }
      if (j >= end || t.bytes[j] !== b) return -1;
      j++;
      p++;
    }
    return j === end ? p + 1 : -1;
  }
  if (q + end - start > filled) return -1;
  for (let j = start; j < end; j++) if (buf[q + j - start] !== t.bytes[j]) return -1;
  return needsQuotes(t.bytes, start, end, t.values!) ? -1 : q + end - start;
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
            if (t.values !== undefined) {
              q = valueMatch(t, k, buf, q, filled);
              if (q < 0) break rows;
              continue;
            }
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

export const wasmCsvMatchKernel: CsvMatchKernel = {
  name: 'wasm',
  open(columns, rowCount) {
    const { core } = acquireCore();
    const width = columns.length;
    const layout = placeCells(core, columns, rowCount, 16);
    // The file's bytes after the layout.
    const bufAt = layout.end;
    let filled = 0;
    let block = -1;
    let blockLength = 0;
    return {
      load(bytes, length) {
        reserve(core, bufAt + length + 16);
        new Uint8Array(core.memory.buffer, bufAt, length).set(bytes.subarray(0, length));
        filled = length;
      },
      match(start, from) {
        let row = from;
        let pos = start;
        while (row < rowCount) {
          if (!(row >= block && row < block + blockLength)) {
            block = row;
            blockLength = Math.min(layout.blockRows, rowCount - row);
            placeCodes(core, layout, columns, block, blockLength);
          }
          const { codes, tables, cells, result, kinds } = layout;
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
            kinds,
          );
          pos = resultOf(core, layout);
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
