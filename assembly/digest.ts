// The table digest's row sum (src/util/keys.ts, CellDigest): each row's four 32-bit lanes mixed
// across its columns after the leading ones (whose lanes come from a table folded ahead), and
// added lane by lane into the sum. The plain-TS loop there is its reference; both give the
// same sum.
//
// Header words at `state` (the wrapper's):
//   0 columns   1 leading columns folded ahead   2 the folded-ahead lanes (4 words per
//   combination of the leading columns' codes)   3 the leading columns' dictionary sizes (i32 each)
//   4 per column, the address of its values' lanes (4 words a code)   5 the codes block (n rows,
//   column after column)   6–9 the sum's lanes (in and out)   10–13 each lane's output constant

import { word } from './header';

// @ts-expect-error: decorator
@inline
function mix32(x: i32): i32 {
  let h = x;
  h = (h ^ (h >>> 16)) * <i32>0x85ebca6b;
  h = (h ^ (h >>> 13)) * <i32>0xc2b2ae35;
  return h ^ (h >>> 16);
}

export function digestRows(state: usize, n: i32): void {
  const m = word(state, 0);
  const width = word(state, 1);
  const ahead = <usize>word(state, 2);
  const sizes = <usize>word(state, 3);
  const lanes = <usize>word(state, 4);
  const codes = <usize>word(state, 5);
  let s0 = word(state, 6);
  let s1 = word(state, 7);
  let s2 = word(state, 8);
  let s3 = word(state, 9);
  const out0 = word(state, 10);
  const out1 = word(state, 11);
  const out2 = word(state, 12);
  const out3 = word(state, 13);
  const columnBytes = <usize>n << 2;
  for (let r = 0; r < n; r++) {
    const row = codes + (<usize>r << 2);
    let combination = 0;
    for (let k = 0; k < width; k++)
      combination = combination * load<i32>(sizes + (<usize>k << 2)) + load<i32>(row + <usize>k * columnBytes);
    const from = ahead + (<usize>combination << 4);
    let a = load<i32>(from);
    let b = load<i32>(from, 4);
    let c = load<i32>(from, 8);
    let d = load<i32>(from, 12);
    for (let k = width; k < m; k++) {
      const at = <usize>load<u32>(lanes + (<usize>k << 2)) + (<usize>load<i32>(row + <usize>k * columnBytes) << 4);
      // Each lane also takes its neighbour's state, as the reference does.
      a = mix32(a ^ load<i32>(at) ^ (b >>> 7));
      b = mix32(b ^ load<i32>(at, 4) ^ (c >>> 7));
      c = mix32(c ^ load<i32>(at, 8) ^ (d >>> 7));
      d = mix32(d ^ load<i32>(at, 12) ^ (a >>> 7));
    }
    s0 += mix32(a ^ out0);
    s1 += mix32(b ^ out1);
    s2 += mix32(c ^ out2);
    s3 += mix32(d ^ out3);
  }
  store<i32>(state, s0, 24);
  store<i32>(state, s1, 28);
  store<i32>(state, s2, 32);
  store<i32>(state, s3, 36);
}

// Each value's four lanes from its bytes (src/kernels/digest/reference.ts, tsRawLanes), for the
// values that are all ASCII (their UTF-8 bytes are their UTF-16 units); a value with another
// byte is flagged, and the wrapper hashes it from its decoded text. Four values at a time, one
// in each lane of a v128: the hash steps of a value wait on each other, those of four do not.
//
// Header words at `state` (the wrapper's):
//   0 the values' n + 1 offsets (i32, into the bytes block, the first one `base`)
//   1 the bytes block   2 the output (4 words a value)   3 the flags (a byte a value: 1, not
//   ASCII)   4 the column's number   5 base: the first offset   6 the lanes' constants (4 words)
// Returns how many values were flagged.

const FNV_PRIME: i32 = 0x01000193;
const B_PRIME: i32 = 0x5bd1e995;

export function rawLanes(state: usize, n: i32): i32 {
  const offsets = <usize>word(state, 0);
  const bytes = <usize>word(state, 1);
  const out = <usize>word(state, 2);
  const flags = <usize>word(state, 3);
  const column = word(state, 4);
  const base = word(state, 5);
  const seedA = 0x811c9dc5 ^ column;
  const seedB = FNV_PRIME ^ ((column + 1) * <i32>0x9e3779b9);
  // The block's bytes end where its last value does: a lane past its own value's end reads on
  // into the values after it, never past that end.
  const end = bytes + <usize>(load<i32>(offsets + (<usize>n << 2)) - base);
  let flagged = 0;
  let r = 0;
  for (; r + 4 <= n; r += 4) {
    const o = offsets + (<usize>r << 2);
    const s0 = load<i32>(o) - base;
    const s1 = load<i32>(o, 4) - base;
    const s2 = load<i32>(o, 8) - base;
    const s3 = load<i32>(o, 12) - base;
    const s4 = load<i32>(o, 16) - base;
    const l0 = s1 - s0;
    const l1 = s2 - s1;
    const l2 = s3 - s2;
    const l3 = s4 - s3;
    const longest = max(max(l0, l1), max(l2, l3));
    // A lane reads up to the longest value's length from its start: past the block's end for
    // a short value before a long one at the block's end. Those four one at a time.
    if (bytes + <usize>s3 + <usize>longest > end) break;
    let lengths = i32x4.replace_lane(i32x4.splat(l0), 1, l1);
    lengths = i32x4.replace_lane(i32x4.replace_lane(lengths, 2, l2), 3, l3);
    let a = i32x4.splat(seedA);
    let b = i32x4.splat(seedB);
    let seen = i32x4.splat(0);
    const p0 = bytes + <usize>s0;
    const p1 = bytes + <usize>s1;
    const p2 = bytes + <usize>s2;
    const p3 = bytes + <usize>s3;
    for (let k = 0; k < longest; k++) {
      const at = <usize>k;
      let u = i32x4.splat(<i32>load<u8>(p0 + at));
      u = i32x4.replace_lane(u, 1, <i32>load<u8>(p1 + at));
      u = i32x4.replace_lane(u, 2, <i32>load<u8>(p2 + at));
      u = i32x4.replace_lane(u, 3, <i32>load<u8>(p3 + at));
      const live = i32x4.gt_s(lengths, i32x4.splat(k));
      seen = v128.or(seen, v128.and(u, live));
      const a2 = i32x4.mul(v128.xor(a, u), i32x4.splat(FNV_PRIME));
      let b2 = i32x4.mul(v128.xor(b, u), i32x4.splat(B_PRIME));
      b2 = v128.xor(b2, i32x4.shr_u(b2, 15));
      a = v128.bitselect(a2, a, live);
      b = v128.bitselect(b2, b, live);
    }
    const wide = i32x4.ne(v128.and(seen, i32x4.splat(0x80)), i32x4.splat(0));
    flagged += flagLane(flags, r, i32x4.extract_lane(wide, 0));
    flagged += flagLane(flags, r + 1, i32x4.extract_lane(wide, 1));
    flagged += flagLane(flags, r + 2, i32x4.extract_lane(wide, 2));
    flagged += flagLane(flags, r + 3, i32x4.extract_lane(wide, 3));
    storeLanes(state, out, r, i32x4.extract_lane(a, 0), i32x4.extract_lane(b, 0), l0);
    storeLanes(state, out, r + 1, i32x4.extract_lane(a, 1), i32x4.extract_lane(b, 1), l1);
    storeLanes(state, out, r + 2, i32x4.extract_lane(a, 2), i32x4.extract_lane(b, 2), l2);
    storeLanes(state, out, r + 3, i32x4.extract_lane(a, 3), i32x4.extract_lane(b, 3), l3);
  }
  // The rest one at a time.
  for (; r < n; r++) {
    const from = bytes + <usize>(load<i32>(offsets + (<usize>r << 2)) - base);
    const to = bytes + <usize>(load<i32>(offsets + (<usize>(r + 1) << 2)) - base);
    let a = seedA;
    let b = seedB;
    let seen = 0;
    for (let p = from; p < to; p++) {
      const u = <i32>load<u8>(p);
      seen |= u;
      a = (a ^ u) * FNV_PRIME;
      b = (b ^ u) * B_PRIME;
      b ^= b >>> 15;
    }
    flagged += flagLane(flags, r, (seen & 0x80) !== 0 ? -1 : 0);
    storeLanes(state, out, r, a, b, <i32>(to - from));
  }
  return flagged;
}

// @ts-expect-error: decorator
@inline
function flagLane(flags: usize, r: i32, wide: i32): i32 {
  const flag = wide !== 0 ? 1 : 0;
  store<u8>(flags + <usize>r, <u8>flag);
  return flag;
}

// A value's four lanes from its two running hashes and its length (valueLanesOf in the reference).
// @ts-expect-error: decorator
@inline
function storeLanes(state: usize, out: usize, r: i32, a: i32, b: i32, length: i32): void {
  const x = mix32(a ^ length);
  const y = mix32(b ^ (length * <i32>0xcc9e2d51));
  const at = out + (<usize>r << 4);
  store<i32>(at, mix32(x + y + word(state, 6)));
  store<i32>(at, mix32(x + 2 * y + word(state, 7)), 4);
  store<i32>(at, mix32(x + 3 * y + word(state, 8)), 8);
  store<i32>(at, mix32(x + 4 * y + word(state, 9)), 12);
}
