/**
 * The table digest's row loop in the WASM core (assembly/digest.ts): the rows' codes copied in a
 * block at a time, every column's value lanes and the folded-ahead table once. The same sum as
 * the plain-TS loop (`tsDigestRows`, reference.ts).
 */

import { Regions, reserve } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import { type DigestRowsKernel, LANE_OUTPUTS } from './kernel.ts';

/** Rows whose codes are copied into the instance at a time. */
const BLOCK_ROWS = 1 << 16;
const HEADER_WORDS = 14;

export const wasmDigestRows: DigestRowsKernel = ({ rowCount, codes, lanes, sizes, width, ahead }, sum) => {
  if (rowCount === 0) return;
  const m = lanes.length;
  const blockRows = Math.min(BLOCK_ROWS, rowCount);
  const layout = new Regions(HEADER_WORDS);
  const { state } = layout;
  const aheadAt = layout.place(ahead.length);
  const sizesAt = layout.place(width);
  const lanesTable = layout.place(m);
  const lanesAt = lanes.map((l) => layout.place(l.length));
  const block = layout.place(m * blockRows);
  const { core } = acquireCore();
  try {
    reserve(core, layout.end);
    let words = new Uint32Array(core.memory.buffer);
    words.set(ahead, aheadAt >> 2);
    words.set(sizes.slice(0, width), sizesAt >> 2);
    lanes.forEach((l, k) => {
      words[(lanesTable >> 2) + k] = lanesAt[k]!;
      words.set(l, lanesAt[k]! >> 2);
    });
    words.set([m, width, aheadAt, sizesAt, lanesTable, block], state >> 2);
    words.set(sum, (state >> 2) + 6);
    words.set(
      LANE_OUTPUTS.map((o) => o >>> 0),
      (state >> 2) + 10,
    );
    for (let from = 0; from < rowCount; from += blockRows) {
      const rows = Math.min(blockRows, rowCount - from);
      const view = new Int32Array(core.memory.buffer);
      codes.forEach((c, k) => {
        view.set(c.subarray(from, from + rows), (block >> 2) + k * rows);
      });
      core.digestRows(state, rows);
    }
    words = new Uint32Array(core.memory.buffer);
    sum.set(words.subarray((state >> 2) + 6, (state >> 2) + 10));
  } finally {
    releaseCore(core, 0, 0);
  }
};
