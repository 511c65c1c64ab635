import { Status } from '../src/kernels/status-codes';
// Group-by over generalized tuples: the hot loop of the lattice search (one call per node)
// and of the row → distinct-tuple collapse (identity maps).
//
// A call groups "sources": either the tuples themselves (src = 0) or the classes of a node
// evaluated before (a rollup: src[s] is the first tuple of source class s, weights[s] its
// size). Classes only merge as levels rise, so a node's classes are unions of any lower
// node's classes, and grouping those costs O(classes) instead of O(tuples). Group ids are in
// order of first appearance, and a class's first source holds its first tuple, so a rollup
// numbers groups exactly as grouping the tuples would.
//
// Layout (all i32 unless noted, byte pointers):
//   n           the number of tuples
//   cols        the tuples, row-major (one tuple's m codes share a cache line): value (t, i)
//               at cols + (t*m + i)*4
//   maps        m pointers to level tables (code → generalized code); 0 = identity
//   radix       m u64 digit bases for packed keys, or 0 to compare whole tuples
//   domains     m code domain sizes
//   contrib     scratch: per column and code, its generalized code times the column's place
//               value (Σ domains u64): a packed key is then m loads and adds
//   src         source → tuple index, or 0 (source s is tuple s)
//   weights     per source weight, or 0 (1 each)
//   srcToGroup  out: source → group id, or 0 (not wanted)
//   sizes       out: group → summed weight
//   reps        out: group → its first tuple
//   packed      scratch and out: each source's packed key, then group → its key (packed and
//               direct modes)
//   slots       scratch: group → table slot (cleared on exit)
//   keys        scratch: group → generalized tuple, row-major (tuple mode)
//   table       `capacity` slots holding group id + 1; zero on entry and on exit
//   direct      1: the packed key is the slot (capacity > product of the radices): no hashing
// Returns the number of groups, or -1 if a source names a tuple outside [0, n).

// @ts-expect-error: decorator
@inline
function mix(h: u32, v: u32): u32 {
  h ^= v * 0x9e3779b1;
  h = (h << 13) | (h >>> 19);
  return h * 5 + 0xe6546b64;
}

// @ts-expect-error: decorator
@inline
function tupleOf(src: usize, s: i32): i32 {
  return src == 0 ? s : load<i32>(src + ((<usize>s) << 2));
}

// @ts-expect-error: decorator
@inline
function packKey(cols: usize, t: i32, m: i32, contribs: usize): u64 {
  let key: u64 = 0;
  let colPtr = cols + ((<usize>t * <usize>m) << 2);
  for (let i = 0; i < m; i++) {
    const table = <usize>load<u32>(contribs + ((<usize>i) << 2));
    if (table != 0) key += load<u64>(table + ((<usize>load<i32>(colPtr)) << 3));
    colPtr += 4;
  }
  return key;
}

// contrib tables for one node: column i's code c ↦ map_i(c) · Π_{j>i} radix_j. `contribs`
// receives the m table pointers, the tables follow it.
function placeValues(m: i32, maps: usize, radix: usize, domains: usize, contribs: usize): void {
  let at = contribs + ((<usize>m) << 2);
  at = (at + 7) & ~7;
  let place: u64 = 1;
  for (let i = m - 1; i >= 0; i--) {
    const map = load<u32>(maps + ((<usize>i) << 2));
    const d = load<i32>(domains + ((<usize>i) << 2));
    const base = load<u64>(radix + ((<usize>i) << 3));
    // A column the node maps to one value adds 0 to every key: 0 marks it skipped.
    store<u32>(contribs + ((<usize>i) << 2), base == 1 ? 0 : <u32>at);
    for (let c = 0; c < d; c++) {
      const v = map != 0 ? load<i32>(<usize>map + ((<usize>c) << 2)) : c;
      store<u64>(at + ((<usize>c) << 3), <u64>v * place);
    }
    at += (<usize>d) << 3;
    place *= load<u64>(radix + ((<usize>i) << 3));
  }
}

// Counts source s (tuple t) into group `found`, or into a new group numbered `groups` when
// `found` < 0; returns the group. The caller registers a new group's key.
// @ts-expect-error: decorator
@inline
function count(
  found: i32,
  groups: i32,
  s: i32,
  t: i32,
  weights: usize,
  srcToGroup: usize,
  sizes: usize,
  reps: usize,
): i32 {
  const w = weights == 0 ? 1 : load<i32>(weights + ((<usize>s) << 2));
  const g = found < 0 ? groups : found;
  const p = sizes + ((<usize>g) << 2);
  if (found < 0) {
    store<i32>(p, w);
    store<i32>(reps + ((<usize>g) << 2), t);
  } else store<i32>(p, load<i32>(p) + w);
  if (srcToGroup != 0) store<i32>(srcToGroup + ((<usize>s) << 2), g);
  return g;
}

export function groupBy(
  cols: usize,
  n: i32,
  m: i32,
  maps: usize,
  radix: usize,
  domains: usize,
  contribs: usize,
  src: usize,
  nSrc: i32,
  weights: usize,
  srcToGroup: usize,
  sizes: usize,
  reps: usize,
  packed: usize,
  slots: usize,
  keys: usize,
  table: usize,
  capacity: i32,
  direct: i32,
): i32 {
  // A rollup's sources name tuples: each must be one of the n. The loops check as they go and
  // stop at the first that is not, returning -1 − (groups so far), whose slots are cleared here.
  let groups: i32;
  if (radix == 0) {
    groups = groupTuples(cols, n, m, maps, src, nSrc, weights, srcToGroup, sizes, reps, slots, keys, table, capacity);
  } else if (direct != 0) {
    placeValues(m, maps, radix, domains, contribs);
    groups = groupDirect(cols, n, m, contribs, src, nSrc, weights, srcToGroup, sizes, reps, packed, table);
    const made = groups < 0 ? -1 - groups : groups;
    if (clearsWhole(made, capacity)) memory.fill(table, 0, (<usize>capacity) << 2);
    else for (let g = 0; g < made; g++) store<i32>(table + ((<usize>load<u64>(packed + ((<usize>g) << 3))) << 2), 0);
    return groups < 0 ? -1 : groups;
  } else {
    placeValues(m, maps, radix, domains, contribs);
    groups = groupPacked(cols, n, m, contribs, src, nSrc, weights, srcToGroup, sizes, reps, packed, slots, table, capacity);
  }
  const made = groups < 0 ? -1 - groups : groups;
  if (clearsWhole(made, capacity)) memory.fill(table, 0, (<usize>capacity) << 2);
  else for (let g = 0; g < made; g++) store<i32>(table + ((<usize>load<i32>(slots + ((<usize>g) << 2))) << 2), 0);
  return groups < 0 ? -1 : groups;
}

// Whether a call's used slots are cleared by clearing the whole table: in turn, it costs
// about what a slot cleared at random costs per 16 slots (a cache line), and random clears of
// millions of groups miss the cache each.
// @ts-expect-error: decorator
@inline
function clearsWhole(groups: i32, capacity: i32): bool {
  return groups >= capacity >> 4;
}

// Every source's packed key into packed[s], before any table work: the loads of one source
// do not wait on another's table probe, so many are in flight at once (10 % faster on the
// search's rollups). The grouping pass then overwrites packed[g] with group g's key, g ≤ s:
// only keys of sources already grouped. False, having touched no table, if a source names a
// tuple outside [0, n).
function packKeys(cols: usize, n: i32, m: i32, contribs: usize, src: usize, nSrc: i32, packed: usize): bool {
  for (let s = 0; s < nSrc; s++) {
    const t = tupleOf(src, s);
    if (<u32>t >= <u32>n) return false;
    store<u64>(packed + ((<usize>s) << 3), packKey(cols, t, m, contribs));
  }
  return true;
}

// The generalized domains' product is small: the packed key indexes the table directly.
function groupDirect(
  cols: usize,
  n: i32,
  m: i32,
  contribs: usize,
  src: usize,
  nSrc: i32,
  weights: usize,
  srcToGroup: usize,
  sizes: usize,
  reps: usize,
  packed: usize,
  table: usize,
): i32 {
  if (!packKeys(cols, n, m, contribs, src, nSrc, packed)) return Status.CodeOutOfDomain;
  let groups = 0;
  for (let s = 0; s < nSrc; s++) {
    const key = load<u64>(packed + ((<usize>s) << 3));
    const slot = table + ((<usize>key) << 2);
    const g = count(load<i32>(slot) - 1, groups, s, tupleOf(src, s), weights, srcToGroup, sizes, reps);
    if (g == groups) {
      groups++;
      store<i32>(slot, g + 1);
      store<u64>(packed + ((<usize>g) << 3), key);
    }
  }
  return groups;
}

// When the product fits in 53 bits, a tuple packs into one i64 (mixed radix): one hash and
// one compare per source instead of m of each.
function groupPacked(
  cols: usize,
  n: i32,
  m: i32,
  contribs: usize,
  src: usize,
  nSrc: i32,
  weights: usize,
  srcToGroup: usize,
  sizes: usize,
  reps: usize,
  packed: usize,
  slots: usize,
  table: usize,
  capacity: i32,
): i32 {
  if (!packKeys(cols, n, m, contribs, src, nSrc, packed)) return Status.CodeOutOfDomain;
  const mask = <u32>(capacity - 1);
  // A slot holds group id + 1 (below capacity: groups ≤ sources ≤ capacity / 2) in its low
  // bits and, above them, a tag of the key's hash: a probe that meets another key tells it
  // apart without a read of that group's key (a cache miss each, in a table of millions).
  // (capacity is a power of two below 2^32: the shift is at most 31.)
  const tagShift = <u32>ctz<u32>(<u32>capacity);
  let groups = 0;
  for (let s = 0; s < nSrc; s++) {
    const t = tupleOf(src, s);
    const key = load<u64>(packed + ((<usize>s) << 3));
    let h = key * 0x9e3779b97f4a7c15;
    h ^= h >>> 29;
    let slot = <u32>(h >>> 32) & mask;
    const tag = (<u32>h) << tagShift;
    let g = -1;
    while (true) {
      const e = load<u32>(table + ((<usize>slot) << 2));
      if (e == 0) break;
      if ((e & ~mask) == tag) {
        const cand = <i32>(e & mask) - 1;
        if (load<u64>(packed + ((<usize>cand) << 3)) == key) {
          g = cand;
          break;
        }
      }
      slot = (slot + 1) & mask;
    }
    g = count(g, groups, s, t, weights, srcToGroup, sizes, reps);
    if (g == groups) {
      groups++;
      store<u32>(table + ((<usize>slot) << 2), <u32>(g + 1) | tag);
      store<i32>(slots + ((<usize>g) << 2), slot);
      store<u64>(packed + ((<usize>g) << 3), key);
    }
  }
  return groups;
}

// Keys too wide to pack: hash and compare whole generalized tuples.
function groupTuples(
  cols: usize,
  n: i32,
  m: i32,
  maps: usize,
  src: usize,
  nSrc: i32,
  weights: usize,
  srcToGroup: usize,
  sizes: usize,
  reps: usize,
  slots: usize,
  keys: usize,
  table: usize,
  capacity: i32,
): i32 {
  const mask = <u32>(capacity - 1);
  const keyRow = (<usize>m) << 2;
  let groups = 0;
  for (let s = 0; s < nSrc; s++) {
    const t = tupleOf(src, s);
    if (<u32>t >= <u32>n) return Status.TupleOutOfRange;
    // Generalize the tuple into the key slot of the next new group (a free scratch row:
    // kept if the tuple starts a group, overwritten otherwise) and hash it on the way.
    let h: u32 = 0x811c9dc5;
    let colPtr = cols + <usize>t * keyRow;
    const scratch = keys + <usize>groups * keyRow;
    let keyPtr = scratch;
    for (let i = 0; i < m; i++) {
      const map = load<u32>(maps + ((<usize>i) << 2));
      let v = load<i32>(colPtr);
      if (map != 0) v = load<i32>(<usize>map + ((<usize>v) << 2));
      store<i32>(keyPtr, v);
      h = mix(h, <u32>v);
      colPtr += 4;
      keyPtr += 4;
    }
    h ^= h >>> 16;
    h *= 0x85ebca6b;
    h ^= h >>> 13;
    // Linear probing; slots hold group id + 1.
    let slot = h & mask;
    let g = -1;
    while (true) {
      const e = load<i32>(table + ((<usize>slot) << 2));
      if (e == 0) break;
      const cand = e - 1;
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
    g = count(g, groups, s, t, weights, srcToGroup, sizes, reps);
    if (g == groups) {
      groups++; // its key is already in place: the scratch row
      store<i32>(table + ((<usize>slot) << 2), g + 1);
      store<i32>(slots + ((<usize>g) << 2), slot);
    }
  }
  return groups;
}

// Column i of the tuples placed row-major at `to` (stride m) from the n codes at `from`, each
// checked against the column's domain: -1 at the first code outside it.
export function placeColumn(from: usize, n: i32, m: i32, i: i32, domain: i32, to: usize): i32 {
  const stride = (<usize>m) << 2;
  let src = from;
  let dst = to + ((<usize>i) << 2);
  for (let t = 0; t < n; t++) {
    const v = load<i32>(src);
    if (<u32>v >= <u32>domain) return Status.CodeOutOfDomain;
    store<i32>(dst, v);
    src += 4;
    dst += stride;
  }
  return 0;
}

// A rollup's tuple → class map, composed from the source's: out[t] = map[groupOf[t]].
// Returns -1, having written nothing past the bad tuple, if a class id is outside [0, nMap).
export function compose(groupOf: usize, map: usize, n: i32, nMap: i32, out: usize): i32 {
  for (let t = 0; t < n; t++) {
    const p = (<usize>t) << 2;
    const g = load<i32>(groupOf + p);
    if (<u32>g >= <u32>nMap) return Status.ClassOutOfMap;
    store<i32>(out + p, load<i32>(map + ((<usize>g) << 2)));
  }
  return 0;
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
