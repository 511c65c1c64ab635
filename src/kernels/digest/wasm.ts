/**
 * The table digest's row loop in the WASM core (assembly/digest.ts): the rows' codes copied in a
 * block at a time, every column's value lanes and the folded-ahead table once. The same sum as
 * the plain-TS loop (`tsDigestRows`, reference.ts).
 */

import { Regions, reserve, valueBlockEnd } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import { type DigestRowsKernel, LANE_OUTPUTS, LANES, type RawLanesKernel } from './kernel.ts';
import { hashValue } from './reference.ts';

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

/** Values, and bytes, of a raw column copied into the instance at a time. */
const RAW_BLOCK_VALUES = 1 << 16;
const RAW_BLOCK_BYTES = 4 << 20;
const RAW_HEADER_WORDS = 10;

/**
 * A raw column's value lanes in the WASM core (assembly/digest.ts, rawLanes): the values' offsets
 * and bytes copied in a block at a time, their lanes copied out; a value that is not all ASCII
 * hashed here from its decoded text. The same words as `tsRawLanes` (reference.ts).
 */
export const wasmRawLanes: RawLanesKernel = (column, { offsets, bytes }) => {
  const n = offsets.length - 1;
  const out = new Uint32Array(Math.max(0, n) * LANES);
  if (n <= 0) return out;
  let text: Buffer | undefined;
  const { core } = acquireCore();
  try {
    for (let from = 0; from < n; ) {
      const to = valueBlockEnd(offsets, from, n, RAW_BLOCK_VALUES, RAW_BLOCK_BYTES);
      const count = to - from;
      const base = offsets[from]!;
      const byteCount = offsets[to]! - base;
      const layout = new Regions(RAW_HEADER_WORDS);
      const offsetsAt = layout.place(count + 1);
      const outAt = layout.place(LANES * count);
      const flagsAt = layout.place(Math.ceil(count / 4));
      const bytesAt = layout.place(Math.ceil(byteCount / 4) + 1);
      reserve(core, layout.end);
      const memory = core.memory.buffer;
      new Int32Array(memory).set(offsets.subarray(from, to + 1), offsetsAt >> 2);
      new Uint8Array(memory).set(bytes.subarray(base, base + byteCount), bytesAt);
      // Then the lanes' constants, as each value's output mix takes them (the rows' sum the same).
      new Int32Array(memory).set(
        [offsetsAt, bytesAt, outAt, flagsAt, column, base, ...LANE_OUTPUTS],
        layout.state >> 2,
      );
      const flagged = core.rawLanes(layout.state, count);
      out.set(new Uint32Array(core.memory.buffer, outAt, LANES * count), LANES * from);
      if (flagged > 0) {
        const flags = new Uint8Array(core.memory.buffer, flagsAt, count);
        text ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
        for (let i = 0; i < count; i++)
          if (flags[i] === 1) {
            const r = from + i;
            hashValue(column, text.toString('utf8', offsets[r]!, offsets[r + 1]!), out, LANES * r);
          }
      }
      from = to;
    }
  } finally {
    releaseCore(core, 0, 0);
  }
  return out;
};
