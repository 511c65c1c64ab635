// Hash group-by over generalized tuples: the hot loop of the lattice search (one call per
// node) and of the row → distinct-tuple collapse (identity maps).
//
// Layout (all i32, byte pointers):
//   cols      m columns, column-major: value (t, i) at cols + (i*stride + t)*4
//   maps      m pointers to level tables (code → generalized code); 0 = identity
//   counts    weight per tuple (0 = weight 1)
//   groupOf   out: tuple → group id (ids in order of first appearance)
//   sizes     out: group → summed weight
//   radix     m u64 digit bases for packed keys, or 0 to compare whole tuples
//   keys      out: group → generalized tuple, row-major (m codes per group: one cache line)
//   packed    out: group → packed u64 key (only with radix)
//   table     scratch: `capacity` slots (power of two ≥ 2n), cleared here
// Returns the number of groups.

// @ts-expect-error: decorator
@inline
function mix(h: u32, v: u32): u32 {
  h ^= v * 0x9e3779b1;
  h = (h << 13) | (h >>> 19);
  return h * 5 + 0xe6546b64;
}

export function groupBy(
  cols: usize,
  stride: i32,
  n: i32,
  m: i32,
  maps: usize,
  radix: usize,
  counts: usize,
  groupOf: usize,
  sizes: usize,
  keys: usize,
  packed: usize,
  table: usize,
  capacity: i32,
): i32 {
  memory.fill(table, 0, (<usize>capacity) << 2);
  return radix != 0
    ? groupPacked(cols, stride, n, m, maps, radix, counts, groupOf, sizes, keys, packed, table, capacity)
    : groupTuples(cols, stride, n, m, maps, counts, groupOf, sizes, keys, table, capacity);
}

// When the generalized domains' product fits in 53 bits, a tuple packs into one i64
// (mixed radix): one hash and one compare per tuple instead of m of each.
function groupPacked(
  cols: usize,
  stride: i32,
  n: i32,
  m: i32,
  maps: usize,
  radix: usize,
  counts: usize,
  groupOf: usize,
  sizes: usize,
  keys: usize,
  packed: usize,
  table: usize,
  capacity: i32,
): i32 {
  const mask = <u32>(capacity - 1);
  const colStride = (<usize>stride) << 2;
  const keyRow = (<usize>m) << 2;
  let groups = 0;
  for (let t = 0; t < n; t++) {
    let key: u64 = 0;
    let colPtr = cols + ((<usize>t) << 2);
    let keyPtr = keys + <usize>groups * keyRow;
    for (let i = 0; i < m; i++) {
      const map = load<u32>(maps + ((<usize>i) << 2));
      let v = load<i32>(colPtr);
      if (map != 0) v = load<i32>(<usize>map + ((<usize>v) << 2));
      store<i32>(keyPtr, v);
      key = key * load<u64>(radix + ((<usize>i) << 3)) + <u64>v;
      colPtr += colStride;
      keyPtr += 4;
    }
    let h = key * 0x9e3779b97f4a7c15;
    h ^= h >>> 29;
    let slot = <u32>(h >>> 32) & mask;
    let g = -1;
    while (true) {
      const s = load<i32>(table + ((<usize>slot) << 2));
      if (s == 0) break;
      if (load<u64>(packed + ((<usize>(s - 1)) << 3)) == key) {
        g = s - 1;
        break;
      }
      slot = (slot + 1) & mask;
    }
    const w = counts == 0 ? 1 : load<i32>(counts + ((<usize>t) << 2));
    if (g < 0) {
      g = groups++;
      store<i32>(table + ((<usize>slot) << 2), g + 1);
      store<u64>(packed + ((<usize>g) << 3), key);
      store<i32>(sizes + ((<usize>g) << 2), w);
    } else {
      const p = sizes + ((<usize>g) << 2);
      store<i32>(p, load<i32>(p) + w);
    }
    store<i32>(groupOf + ((<usize>t) << 2), g);
  }
  return groups;
}

function groupTuples(
  cols: usize,
  stride: i32,
  n: i32,
  m: i32,
  maps: usize,
  counts: usize,
  groupOf: usize,
  sizes: usize,
  keys: usize,
  table: usize,
  capacity: i32,
): i32 {
  const mask = <u32>(capacity - 1);
  const colStride = (<usize>stride) << 2;
  const keyRow = (<usize>m) << 2;
  let groups = 0;
  for (let t = 0; t < n; t++) {
    // Generalize the tuple into the key slot of the next new group (a free scratch row:
    // kept if the tuple starts a group, overwritten otherwise) and hash it on the way.
    let h: u32 = 0x811c9dc5;
    let colPtr = cols + ((<usize>t) << 2);
    const scratch = keys + <usize>groups * keyRow;
    let keyPtr = scratch;
    for (let i = 0; i < m; i++) {
      const map = load<u32>(maps + ((<usize>i) << 2));
      let v = load<i32>(colPtr);
      if (map != 0) v = load<i32>(<usize>map + ((<usize>v) << 2));
      store<i32>(keyPtr, v);
      h = mix(h, <u32>v);
      colPtr += colStride;
      keyPtr += 4;
    }
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    // Linear probing; slots hold group id + 1.
    let slot = h & mask;
    let g = -1;
    while (true) {
      const s = load<i32>(table + ((<usize>slot) << 2));
      if (s == 0) break;
      const cand = s - 1;
      let equal = true;
      let a = scratch;
      let b = keys + <usize>cand * keyRow;
      for (let i = 0; i < m; i++) {
        if (load<i32>(a) != load<i32>(b)) {
          equal = false;
          break;
        }
        a += 4;
        b += 4;
      }
      if (equal) {
        g = cand;
        break;
      }
      slot = (slot + 1) & mask;
    }
    const w = counts == 0 ? 1 : load<i32>(counts + ((<usize>t) << 2));
    if (g < 0) {
      g = groups++;
      store<i32>(table + ((<usize>slot) << 2), g + 1);
      store<i32>(sizes + ((<usize>g) << 2), w);
    } else {
      const p = sizes + ((<usize>g) << 2);
      store<i32>(p, load<i32>(p) + w);
    }
    store<i32>(groupOf + ((<usize>t) << 2), g);
  }
  return groups;
}

// Per-group histogram of one extra column (e.g. a sensitive attribute):
// out[g * width + value] += weight, for every tuple. `out` is cleared here.
export function histogram(
  groupOf: usize,
  values: usize,
  counts: usize,
  n: i32,
  groups: i32,
  width: i32,
  out: usize,
): void {
  memory.fill(out, 0, (<usize>groups * <usize>width) << 2);
  for (let t = 0; t < n; t++) {
    const g = load<i32>(groupOf + ((<usize>t) << 2));
    const v = load<i32>(values + ((<usize>t) << 2));
    const w = counts == 0 ? 1 : load<i32>(counts + ((<usize>t) << 2));
    const p = out + ((<usize>g * <usize>width + <usize>v) << 2);
    store<i32>(p, load<i32>(p) + w);
  }
}
