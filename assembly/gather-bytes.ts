// Values' bytes moved to where a permutation puts them (src/data/raw.ts, gatherJoined): value i
// of a block goes to `to + targets[i]` (-1: nowhere). The plain-TS loop
// (src/kernels/gather-bytes/reference.ts) is its reference; both write the same bytes.
//
// Header words at `state` (the wrapper's):
//   0 the block's n + 1 offsets (i32, into the bytes block, the first one `base`)
//   1 the block's bytes   2 the block's targets (i32 byte offsets into the output, -1: none)
//   3 the output   4 base: the first offset (offsets are relative to where the bytes were taken)

import { word } from './header';

export function gatherBytes(state: usize, n: i32): void {
  const offsets = <usize>word(state, 0);
  const bytes = <usize>word(state, 1);
  const targets = <usize>word(state, 2);
  const out = <usize>word(state, 3);
  const base = word(state, 4);
  let from = load<i32>(offsets) - base;
  for (let i = 0; i < n; i++) {
    const to = load<i32>(offsets + (<usize>(i + 1) << 2)) - base;
    const target = load<i32>(targets + (<usize>i << 2));
    if (target >= 0) {
      let s = bytes + <usize>from;
      let d = out + <usize>target;
      const end = bytes + <usize>to;
      // Eight bytes at a time, then the rest byte by byte: a value never writes past its end
      // (the values around it may be written already).
      for (; s + 8 <= end; s += 8, d += 8) store<u64>(d, load<u64>(s));
      for (; s < end; s++, d++) store<u8>(d, load<u8>(s));
    }
    from = to;
  }
}

// Where a shuffle puts each value (src/data/raw.ts, gatherJoined): rows `rows` of the joined
// values (row j is value rows[j], each asked for once, every one in range: the wrapper checks),
// their offsets in the output, and each value's target there (-1: not asked for), which
// gatherBytes then writes while the values are read in turn. One read at random a row (its
// offsets) and one write (its target). The plain-TS loop (src/kernels/gather-bytes/reference.ts,
// tsShuffleBytes) is its reference.
//
// Header words at `state` (the wrapper's):
//   0 the values' n + 1 offsets   1 n   2 the rows (m)   3 out: the rows' m + 1 offsets
//   4 out: each value's target (n)
// Returns the output's bytes, or -1 when a row is asked for twice.
export function shufflePlaces(state: usize, m: i32): i32 {
  const offsets = <usize>word(state, 0);
  const n = word(state, 1);
  const rows = <usize>word(state, 2);
  const out = <usize>word(state, 3);
  const targets = <usize>word(state, 4);
  memory.fill(targets, 0xff, <usize>n << 2);
  let total = 0;
  store<i32>(out, 0);
  for (let j = 0; j < m; j++) {
    const r = <usize>load<i32>(rows + (<usize>j << 2));
    const target = targets + (r << 2);
    if (load<i32>(target) !== -1) return -1;
    store<i32>(target, total);
    const at = offsets + (r << 2);
    total += load<i32>(at, 4) - load<i32>(at);
    store<i32>(out + (<usize>(j + 1) << 2), total);
  }
  return total;
}
