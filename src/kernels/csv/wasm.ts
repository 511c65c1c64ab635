/**
 * The WASM CSV row writer (assembly/csv.ts). Opening lays out the cell tables in an instance's
 * memory; each write then takes the rows a block at a time (their codes copied in) into a
 * window of memory, copied out to the chunk: the instance holds a block and a window, not the
 * table or the chunk.
 */
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import { type CsvRowsKernel, SPARE_BYTES, widestCell } from './kernel.ts';
import { placeCells, placeCodes, resultOf } from './layout.ts';

/** Bytes written into memory before they are copied out, at least. */
const WINDOW_BYTES = 4 * 1024 * 1024;

export const wasmCsvKernel: CsvRowsKernel = {
  name: 'wasm',
  open(columns, rowCount, widestRow) {
    const { core } = acquireCore();
    // The widest row: its columns' widest cells.
    const widest = widestRow ?? columns.reduce((n, t) => n + widestCell(t), 0);
    const window = Math.max(WINDOW_BYTES, 2 * widest);
    const layout = placeCells(core, columns, rowCount, window + SPARE_BYTES);
    const out = layout.end;
    return {
      write(from, target, start, limit) {
        let row = from;
        let p = start;
        while (row < rowCount && p <= limit) {
          const n = Math.min(layout.blockRows, rowCount - row);
          placeCodes(core, layout, columns, row, n);
          // Rows start while the window can take the widest and the chunk's limit is not passed.
          const last = Math.min(window - widest, limit - p);
          const { tables, cells, result, kinds } = layout;
          const done = core.csvRows(
            layout.codes,
            n,
            columns.length,
            0,
            tables,
            cells,
            out,
            0,
            last,
            result,
            kinds,
          );
          const bytes = resultOf(core, layout);
          target.set(new Uint8Array(core.memory.buffer, out, bytes), p);
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
