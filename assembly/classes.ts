// The verifier's class sums (src/verify/class-sums.ts): each row's class key, its QI labels'
// hashes folded lane by lane in column order, four 32-bit lanes at once in one v128; the
// class interned in a table of keys; per class its size and the sums of its rows' joined
// hashes. The plain-TS reference there gives the same classes, ids and sums.
//
// The wrapper owns the memory: a header of i32 words at `state` (below), the tables it points
// to, and a block of `n` rows' codes (column after column: the QI columns, then the others).
// A call sums one block and may be called again with the next: the classes carry over.
//
// Header words:
//   0 classes so far        1 slots in use (a power of two)   2 QI columns    3 leading QI columns folded ahead
//   4 other columns         5 sums per class (3, or 5 with the masked fingerprint)
//   6 capacity (classes)    7, 8 the masked QI hash (lanes 0 and 1)
//   9 the folded-ahead keys (4 words per combination of the leading columns' codes)
//  10 the leading columns' code domains (i32 each)
//  11 per QI column, the address of its codes' hashes (4 words a code)
//  12 per other column, the address of its codes' hashes (2 words a code)
//  13 keys (4 words a class)   14 sums   15 slots (class + 1; 0 free)
//  16 the codes block           17 out: each row's class, or 0 (not wanted)
// The slots in use start zero (the wrapper's); keys and sums are written as classes appear.
// Returns the classes so far, or -1 when they would pass the capacity.

import { word } from './header';

const C1: i32 = <i32>0x85ebca6b;
const C2: i32 = <i32>0xc2b2ae35;
const C3: i32 = <i32>0x9e3779b9;
const OTHER0: i32 = <i32>0x13198a2e;
const OTHER1: i32 = <i32>0x03707344;
const JOIN0: i32 = <i32>0xa4093822;
const JOIN1: i32 = <i32>0x299f31d0;

// fold (src/verify/fingerprint.ts) in each lane.
// @ts-expect-error: decorator
@inline
function foldLanes(h: v128, value: v128): v128 {
  let x = v128.xor(h, value);
  x = i32x4.mul(v128.xor(x, i32x4.shr_u(x, 16)), i32x4.splat(C1));
  x = i32x4.mul(v128.xor(x, i32x4.shr_u(x, 13)), i32x4.splat(C2));
  return i32x4.add(v128.xor(x, i32x4.shr_u(x, 16)), i32x4.splat(C3));
}

export function classSums(state: usize, n: i32): i32 {
  const q = word(state, 2);
  const width = word(state, 3);
  const others = word(state, 4);
  const lanes = word(state, 5);
  const capacity = word(state, 6);
  const prefix = <usize>word(state, 9);
  const domains = <usize>word(state, 10);
  const qiHashes = <usize>word(state, 11);
  const otherHashes = <usize>word(state, 12);
  const keys = <usize>word(state, 13);
  const sums = <usize>word(state, 14);
  const slots = <usize>word(state, 15);
  const codes = <usize>word(state, 16);
  const classOf = <usize>word(state, 17);
  let size = word(state, 0);
  let slotCount = word(state, 1);
  // The joins' first fold: [qi lane 0, qi lane 1, masked lane 0, masked lane 1] from their seeds.
  const joinSeeds = i32x4(JOIN0, JOIN1, JOIN0, JOIN1);
  const masked = i32x4.replace_lane(i32x4.replace_lane(i32x4.splat(0), 2, word(state, 7)), 3, word(state, 8));
  const rowBytes = <usize>n << 2;
  for (let r = 0; r < n; r++) {
    const row = codes + (<usize>r << 2);
    let combination = 0;
    for (let c = 0; c < width; c++)
      combination = combination * load<i32>(domains + (<usize>c << 2)) + load<i32>(row + <usize>c * rowBytes);
    let key = v128.load(prefix + (<usize>combination << 4));
    for (let c = width; c < q; c++) {
      const code = load<i32>(row + <usize>c * rowBytes);
      key = foldLanes(key, v128.load(<usize>load<u32>(qiHashes + (<usize>c << 2)) + (<usize>code << 4)));
    }
    let other = i32x4(OTHER0, OTHER1, 0, 0);
    for (let k = 0; k < others; k++) {
      const code = load<i32>(row + <usize>(q + k) * rowBytes);
      other = foldLanes(other, v128.load64_zero(<usize>load<u32>(otherHashes + (<usize>k << 2)) + (<usize>code << 3)));
    }
    // join(qi, other, lane) = fold(fold(seed, qi), other), for the row's key and its mask.
    let joined = foldLanes(joinSeeds, v128.bitselect(key, masked, i32x4(-1, -1, 0, 0)));
    joined = foldLanes(joined, v128.shuffle<i32>(other, other, 0, 1, 0, 1));

    // The class: lane 3 is a mixed hash, its low bits spread the slots.
    let s = i32x4.extract_lane(key, 3) & (slotCount - 1);
    let id = -1;
    for (;;) {
      const e = load<i32>(slots + (<usize>s << 2));
      if (e == 0) break;
      if (i32x4.all_true(i32x4.eq(v128.load(keys + (<usize>(e - 1) << 4)), key))) {
        id = e - 1;
        break;
      }
      s = (s + 1) & (slotCount - 1);
    }
    if (id < 0) {
      if (size >= capacity) return -1;
      id = size++;
      v128.store(keys + (<usize>id << 4), key);
      // Its sums start at zero (the memory may hold an earlier session's).
      memory.fill(sums + ((<usize>id * <usize>lanes) << 2), 0, <usize>lanes << 2);
      store<i32>(slots + (<usize>s << 2), id + 1);
      if (2 * size > slotCount) {
        slotCount <<= 1;
        rehash(keys, size, slots, slotCount);
      }
    }
    if (classOf != 0) store<i32>(classOf + (<usize>r << 2), id);
    const at = sums + ((<usize>id * <usize>lanes) << 2);
    store<i32>(at, load<i32>(at) + 1);
    store<i32>(at, load<i32>(at, 4) + i32x4.extract_lane(joined, 0), 4);
    store<i32>(at, load<i32>(at, 8) + i32x4.extract_lane(joined, 1), 8);
    if (lanes == 5) {
      store<i32>(at, load<i32>(at, 12) + i32x4.extract_lane(joined, 2), 12);
      store<i32>(at, load<i32>(at, 16) + i32x4.extract_lane(joined, 3), 16);
    }
  }
  store<i32>(state, size);
  store<i32>(state, slotCount, 4);
  return size;
}

// The slots rebuilt from the keys, `count` of them wide: the classes go back in id order.
function rehash(keys: usize, size: i32, slots: usize, count: i32): void {
  memory.fill(slots, 0, <usize>count << 2);
  for (let id = 0; id < size; id++) {
    let s = load<i32>(keys + (<usize>id << 4), 12) & (count - 1);
    while (load<i32>(slots + (<usize>s << 2)) != 0) s = (s + 1) & (count - 1);
    store<i32>(slots + (<usize>s << 2), id + 1);
  }
}
