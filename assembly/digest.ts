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
