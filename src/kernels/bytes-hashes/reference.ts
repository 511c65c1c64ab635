/** The plain-TS reference of the values' byte hashes (assembly/bytes-hashes.ts). */
import type { BytesHashesKernel } from './kernel.ts';

export const tsBytesHashes: BytesHashesKernel = ({ offsets, bytes }, seed0, seed1, out) => {
  const n = offsets.length - 1;
  for (let i = 0; i < n; i++) murmur3Pair(bytes, offsets[i]!, offsets[i + 1]!, seed0, seed1, out, 2 * i);
};

/**
 * MurmurHash3 x86 32-bit of `bytes[from, to)` under two seeds, into `out[at]` and
 * `out[at + 1]`: one pass over the bytes for both lanes (each block mixed once).
 */
export function murmur3Pair(
  bytes: Uint8Array,
  from: number,
  to: number,
  seed0: number,
  seed1: number,
  out: Int32Array,
  at: number,
): void {
  let h0 = seed0 | 0;
  let h1 = seed1 | 0;
  let i = from;
  for (; i + 4 <= to; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h0 ^= k;
    h0 = (h0 << 13) | (h0 >>> 19);
    h0 = (Math.imul(h0, 5) + 0xe6546b64) | 0;
    h1 ^= k;
    h1 = (h1 << 13) | (h1 >>> 19);
    h1 = (Math.imul(h1, 5) + 0xe6546b64) | 0;
  }
  const tail = to - i;
  if (tail > 0) {
    let k = bytes[i]!;
    if (tail > 1) k ^= bytes[i + 1]! << 8;
    if (tail > 2) k ^= bytes[i + 2]! << 16;
    k = Math.imul(k, 0xcc9e2d51);
    k = Math.imul((k << 15) | (k >>> 17), 0x1b873593);
    h0 ^= k;
    h1 ^= k;
  }
  out[at] = finish(h0 ^ (to - from));
  out[at + 1] = finish(h1 ^ (to - from));
}

/** MurmurHash3's final mix. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
