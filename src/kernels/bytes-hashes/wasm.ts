/**
 * The values' byte hashes in the WASM core (assembly/bytes-hashes.ts): the values' offsets and
 * bytes copied in a block at a time, their lanes copied out. The same words as the plain-TS loop
 * (`tsBytesHashes`, reference.ts).
 */
import { Regions, reserve, valueBlockEnd } from '../../wasm/layout.ts';
import { acquireCore, releaseCore } from '../../wasm/module.ts';
import type { BytesHashesKernel } from './kernel.ts';

/** Values, and bytes, copied into the instance at a time (its memory stays a few MiB). */
const BLOCK_VALUES = 1 << 16;
const BLOCK_BYTES = 4 << 20;
const HEADER_WORDS = 6;

export const wasmBytesHashes: BytesHashesKernel = ({ offsets, bytes }, seed0, seed1, out) => {
  const n = offsets.length - 1;
  if (n <= 0) return;
  const { core } = acquireCore();
  try {
    let from = 0;
    while (from < n) {
      const to = valueBlockEnd(offsets, from, n, BLOCK_VALUES, BLOCK_BYTES);
      const count = to - from;
      const base = offsets[from]!;
      const byteCount = offsets[to]! - base;
      const layout = new Regions(HEADER_WORDS);
      const offsetsAt = layout.place(count + 1);
      const outAt = layout.place(2 * count);
      const bytesAt = layout.place(Math.ceil(byteCount / 4) + 1);
      reserve(core, layout.end);
      const memory = core.memory.buffer;
      new Int32Array(memory).set(offsets.subarray(from, to + 1), offsetsAt >> 2);
      new Uint8Array(memory).set(bytes.subarray(base, base + byteCount), bytesAt);
      new Int32Array(memory).set([offsetsAt, bytesAt, outAt, seed0 | 0, seed1 | 0, base], layout.state >> 2);
      core.bytesHashes(layout.state, count);
      out.set(new Int32Array(core.memory.buffer, outAt, 2 * count), 2 * from);
      from = to;
    }
  } finally {
    releaseCore(core, 0, 0);
  }
};
