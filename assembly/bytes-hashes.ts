// Two lanes of a hash of each value's bytes (src/verify/fingerprint.ts, bytesHashes): MurmurHash3
// (x86, 32-bit) under two seeds, one pass over the bytes for both lanes. The plain-TS loop
// (src/kernels/bytes-hashes/reference.ts) is its reference; both give the same words.
//
// Header words at `state` (the wrapper's):
//   0 the values' n + 1 offsets (i32, into the bytes block, the first one `base`)
//   1 the bytes block   2 the output (2 words a value)   3 seed of lane 0   4 seed of lane 1
//   5 base: the first offset (offsets are relative to where the block's bytes were taken from)

import { word } from './header';

// @ts-expect-error: decorator
@inline
function block(h: i32, k: i32): i32 {
  return (rotl<i32>(h ^ k, 13) * 5) + <i32>0xe6546b64;
}

// @ts-expect-error: decorator
@inline
function scramble(k: i32): i32 {
  return rotl<i32>(k * <i32>0xcc9e2d51, 15) * <i32>0x1b873593;
}

// @ts-expect-error: decorator
@inline
function finish(h: i32): i32 {
  h ^= h >>> 16;
  h *= <i32>0x85ebca6b;
  h ^= h >>> 13;
  h *= <i32>0xc2b2ae35;
  return h ^ (h >>> 16);
}

export function bytesHashes(state: usize, n: i32): void {
  const offsets = <usize>word(state, 0);
  const bytes = <usize>word(state, 1);
  const out = <usize>word(state, 2);
  const seed0 = word(state, 3);
  const seed1 = word(state, 4);
  const base = word(state, 5);
  let from = load<i32>(offsets) - base;
  for (let i = 0; i < n; i++) {
    const to = load<i32>(offsets + (<usize>(i + 1) << 2)) - base;
    let h0 = seed0;
    let h1 = seed1;
    let at = <usize>from;
    const end = <usize>to;
    for (; at + 4 <= end; at += 4) {
      const k = scramble(load<i32>(bytes + at));
      h0 = block(h0, k);
      h1 = block(h1, k);
    }
    const tail = <i32>(end - at);
    if (tail > 0) {
      let k = <i32>load<u8>(bytes + at);
      if (tail > 1) k ^= <i32>load<u8>(bytes + at + 1) << 8;
      if (tail > 2) k ^= <i32>load<u8>(bytes + at + 2) << 16;
      k = scramble(k);
      h0 ^= k;
      h1 ^= k;
    }
    const length = to - from;
    store<i32>(out + (<usize>i << 3), finish(h0 ^ length));
    store<i32>(out + (<usize>i << 3), finish(h1 ^ length), 4);
    from = to;
  }
}
