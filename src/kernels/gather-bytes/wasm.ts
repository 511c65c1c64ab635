/**
 * The gather of values' bytes in the WASM core (assembly/gather-bytes.ts): the output in the
 * instance whole (its writes go anywhere in it), each piece's offsets, targets and bytes copied
 * in a block at a time; the output copied out once. The same bytes as the plain-TS loop
 * (`tsGatherBytes`, reference.ts).
 */
import { placeShifted, Regions, reserve, valueBlockEnd } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import type { GatherBytesKernel, ShuffleBytesKernel } from './kernel.ts';

/** Values, and bytes, copied into the instance at a time. */
const BLOCK_VALUES = 1 << 16;
const BLOCK_BYTES = 4 << 20;
const HEADER_WORDS = 5;

export const wasmGatherBytes: GatherBytesKernel = (pieces, targets, out) => {
  // The kernel's stores are unchecked: every value's range must lie inside the output.
  let values = 0;
  for (const { offsets } of pieces) {
    const n = offsets.length - 1;
    for (let i = 0; i < n; i++) {
      const at = targets[values + i]!;
      if (at >= 0 && at + offsets[i + 1]! - offsets[i]! > out.length)
        throw new RangeError(`value ${values + i} written past the output's ${out.length} bytes`);
    }
    values += n;
  }
  if (out.length === 0) return;
  const { core } = acquireCore();
  try {
    // The output's region comes first in every block's layout: the same address throughout.
    const outWords = Math.ceil(out.length / 4);
    const outAt = new Regions(HEADER_WORDS).place(outWords);
    reserve(core, outAt + 4 * outWords);
    // Zeroed: no byte an earlier session left there can reach the output.
    new Uint8Array(core.memory.buffer, outAt, out.length).fill(0);
    let first = 0;
    for (const { offsets, bytes } of pieces) {
      const n = offsets.length - 1;
      for (let from = 0; from < n; ) {
        const to = valueBlockEnd(offsets, from, n, BLOCK_VALUES, BLOCK_BYTES);
        const count = to - from;
        const base = offsets[from]!;
        const byteCount = offsets[to]! - base;
        const layout = new Regions(HEADER_WORDS);
        layout.place(outWords);
        const offsetsAt = layout.place(count + 1);
        const targetsAt = layout.place(count);
        const bytesAt = layout.place(Math.ceil(byteCount / 4) + 2);
        reserve(core, layout.end);
        const memory = core.memory.buffer;
        new Int32Array(memory).set(offsets.subarray(from, to + 1), offsetsAt >> 2);
        new Int32Array(memory).set(targets.subarray(first + from, first + to), targetsAt >> 2);
        new Uint8Array(memory).set(bytes.subarray(base, base + byteCount), bytesAt);
        new Int32Array(memory).set([offsetsAt, bytesAt, targetsAt, outAt, base], layout.state >> 2);
        core.gatherBytes(layout.state, count);
        from = to;
      }
      first += n;
    }
    out.set(new Uint8Array(core.memory.buffer, outAt, out.length));
  } finally {
    releaseCore(core, 0, 0);
  }
};

/**
 * The shuffle of values as bytes in the WASM core: the pieces' offsets (rebased onto their bytes
 * joined) and bytes copied in once, the places found (shufflePlaces), the values written there
 * in one pass over them (gatherBytes), the output copied out. Every output byte is some value's,
 * so none of the memory's earlier bytes reaches it. The same as `tsShuffleBytes` (reference.ts).
 */
export const wasmShuffleBytes: ShuffleBytesKernel = (pieces, rows) => {
  const n = pieces.reduce((sum, p) => sum + p.offsets.length - 1, 0);
  const m = rows.length;
  const bytes = pieces.reduce((sum, p) => sum + p.offsets[p.offsets.length - 1]! - p.offsets[0]!, 0);
  const layout = new Regions(HEADER_WORDS);
  const offsetsAt = layout.place(n + 1);
  const rowsAt = layout.place(m);
  const outAt = layout.place(m + 1);
  const targetsAt = layout.place(n);
  const bytesAt = layout.place(Math.ceil(bytes / 4) + 2);
  const { core } = acquireCore();
  try {
    reserve(core, layout.end);
    let words = new Int32Array(core.memory.buffer);
    const memory = new Uint8Array(core.memory.buffer);
    let value = offsetsAt >> 2;
    let at = 0;
    for (const { offsets, bytes: from } of pieces) {
      const count = offsets.length - 1;
      const first = offsets[0]!;
      placeShifted(words, value, offsets.subarray(0, count), at - first);
      value += count;
      memory.set(from.subarray(first, offsets[count]!), bytesAt + at);
      at += offsets[count]! - first;
    }
    words[value] = at;
    words.set(rows, rowsAt >> 2);
    words.set([offsetsAt, n, rowsAt, outAt, targetsAt], layout.state >> 2);
    const total = core.shufflePlaces(layout.state, m);
    if (total < 0) return undefined;
    const toAt = layout.place(Math.ceil(total / 4) + 2);
    reserve(core, layout.end);
    words = new Int32Array(core.memory.buffer);
    words.set([offsetsAt, bytesAt, targetsAt, toAt, 0], layout.state >> 2);
    core.gatherBytes(layout.state, n);
    return {
      offsets: words.slice(outAt >> 2, (outAt >> 2) + m + 1),
      bytes: new Uint8Array(core.memory.buffer).slice(toAt, toAt + total),
    };
  } finally {
    releaseCore(core, 0, 0);
  }
};
