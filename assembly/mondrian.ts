import { Status } from '../src/kernels/status-codes';
// Mondrian's split steps (LeFevre, DeWitt, Ramakrishnan 2006), in place over row records.
// The TS driver (src/methods/mondrian/partition.ts) keeps the stack of partitions and judges
// each candidate split with the privacy models; these kernels do the per-row work of one
// step on one partition [start, end) of the records. The plain-TS reference with identical
// results is src/kernels/mondrian/reference.ts.
//
// Layout (all i32, byte pointers, owned by src/kernels/mondrian/wasm.ts):
//   recs      n records of w i32, row-major: [key_0 … key_{m-1}, sa_0 … sa_{s-1}, row id]
//             key_i is the dimension's code: a rank for numeric/ordinal QIs, a value code
//             for nominal QIs. Records move; the set in a partition's range never changes.
//   scratch   n·w i32, spill space for the stable partitions
//   dims      m × 4 i32: [hierarchy table pointer (0 = none), height, domain, contiguous]; the table
//             holds (height+1)·domain i32, table[l·domain + key] = label at level l, and
//             level `height` is a single root (the wrapper adds one when the file has none)
//   saBase    s i32: where SA j's counts start in a histogram of W = Σ widths counts
// Partitions are never empty when a kernel is called; codes are validated by the wrapper
// (the loops use unchecked loads).

// @ts-expect-error: decorator
@inline
function recAt(recs: usize, w: i32, r: i32): usize {
  return recs + ((<usize>r * <usize>w) << 2);
}

// @ts-expect-error: decorator
@inline
function copyRec(dst: usize, src: usize, w: i32): void {
  for (let j = 0; j < w; j++) store<i32>(dst + ((<usize>j) << 2), load<i32>(src + ((<usize>j) << 2)));
}

// @ts-expect-error: decorator
@inline
function countSa(rec: usize, saCol: i32, s: i32, saBase: usize, hist: usize): void {
  for (let j = 0; j < s; j++) {
    const code = load<i32>(rec + ((<usize>(saCol + j)) << 2));
    const at = hist + ((<usize>(load<i32>(saBase + ((<usize>j) << 2)) + code)) << 2);
    store<i32>(at, load<i32>(at) + 1);
  }
}

// Per dimension: smallest key, largest key, and the level of the keys' lowest common
// ancestor (0 when all keys are equal or the dimension has no hierarchy). out: m × 3 i32.
// Min and max come from one row-major pass over all dimensions. When a hierarchy's labels
// each cover a contiguous range of keys (dims[3] = 1: nominal keys are numbered subtree by
// subtree), the LCA of the range's keys is the LCA of its min and max; otherwise each key
// climbs from the first key's level.
export function mondrianStats(
  recs: usize,
  w: i32,
  start: i32,
  end: i32,
  m: i32,
  dims: usize,
  out: usize,
): void {
  const step = (<usize>w) << 2;
  let p = recAt(recs, w, start);
  for (let i = 0; i < m; i++) {
    const k = load<i32>(p + ((<usize>i) << 2));
    const o = out + <usize>i * 12;
    store<i32>(o, k);
    store<i32>(o, k, 4);
  }
  for (let r = start + 1; r < end; r++) {
    p += step;
    for (let i = 0; i < m; i++) {
      const k = load<i32>(p + ((<usize>i) << 2));
      const o = out + <usize>i * 12;
      if (k < load<i32>(o)) store<i32>(o, k);
      if (k > load<i32>(o, 4)) store<i32>(o, k, 4);
    }
  }
  for (let i = 0; i < m; i++) {
    const d = dims + ((<usize>i) << 4);
    const table = <usize>load<u32>(d);
    const height = load<i32>(d, 4);
    const rowBytes = (<usize>load<i32>(d, 8)) << 2;
    const o = out + <usize>i * 12;
    const min = load<i32>(o);
    const max = load<i32>(o, 4);
    let lca = 0;
    if (table != 0 && min != max) {
      if (load<i32>(d, 12) != 0) {
        const a = (<usize>min) << 2;
        const b = (<usize>max) << 2;
        lca = 1;
        while (lca < height) {
          const level = table + <usize>lca * rowBytes;
          if (load<i32>(level + a) == load<i32>(level + b)) break;
          lca++;
        }
      } else {
        let q = recAt(recs, w, start) + ((<usize>i) << 2);
        const k0off = (<usize>load<i32>(q)) << 2;
        for (let r = start; r < end && lca < height; r++) {
          const koff = (<usize>load<i32>(q)) << 2;
          if (koff != k0off) {
            let l = lca < 1 ? 1 : lca;
            while (l < height) {
              const level = table + <usize>l * rowBytes;
              if (load<i32>(level + koff) == load<i32>(level + k0off)) break;
              l++;
            }
            lca = l;
          }
          q += step;
        }
      }
    }
    store<i32>(o, lca, 8);
  }
}

// The key at sorted position `target` (0-based) of column `col` over the range — among the
// rows whose `filterCol` key equals `filterValue` when filterCol ≥ 0. out: [key, rows below
// it, rows equal to it] (among the counted rows). The driver passes the range's extent
// [lo, hi]: when that span is small next to the rows, keys are counted (counts: hi − lo + 1
// i32 of scratch); when it is wide (a numeric QI with many distinct values), the keys are
// copied to `scratch` (end − start i32) and selected with quickselect, so a call costs
// O(rows) either way. Returns 0, or −1 (out untouched) when a counted key lies outside
// [lo, hi] or fewer than target + 1 rows count.
export function mondrianMedian(
  recs: usize,
  w: i32,
  start: i32,
  end: i32,
  col: i32,
  lo: i32,
  hi: i32,
  target: i32,
  filterCol: i32,
  filterValue: i32,
  counts: usize,
  scratch: usize,
  out: usize,
): i32 {
  const span = hi - lo + 1;
  const step = (<usize>w) << 2;
  const keyOff = (<usize>col) << 2;
  const filterOff = (<usize>(filterCol < 0 ? col : filterCol)) << 2;
  if (span > ((end - start) << 2) + 64) return selectMedian(recs, w, start, end, keyOff, lo, hi, target, filterCol, filterOff, filterValue, scratch, out);
  memory.fill(counts, 0, (<usize>span) << 2);
  let p = recAt(recs, w, start);
  for (let r = start; r < end; r++) {
    if (filterCol < 0 || load<i32>(p + filterOff) == filterValue) {
      const d = load<i32>(p + keyOff) - lo;
      if (<u32>d >= <u32>span) return Status.BadMedian;
      const at = counts + ((<usize>d) << 2);
      store<i32>(at, load<i32>(at) + 1);
    }
    p += step;
  }
  let below = 0;
  for (let v = 0; v < span; v++) {
    const c = load<i32>(counts + ((<usize>v) << 2));
    if (below + c > target) {
      store<i32>(out, lo + v);
      store<i32>(out, below, 4);
      store<i32>(out, c, 8);
      return 0;
    }
    below += c;
  }
  return Status.BadMedian;
}

// @ts-expect-error: decorator
@inline
function at32(base: usize, i: i32): usize {
  return base + ((<usize>i) << 2);
}

function selectMedian(
  recs: usize,
  w: i32,
  start: i32,
  end: i32,
  keyOff: usize,
  lo: i32,
  hi: i32,
  target: i32,
  filterCol: i32,
  filterOff: usize,
  filterValue: i32,
  buf: usize,
  out: usize,
): i32 {
  const step = (<usize>w) << 2;
  let count = 0;
  let p = recAt(recs, w, start);
  for (let r = start; r < end; r++) {
    if (filterCol < 0 || load<i32>(p + filterOff) == filterValue) {
      const k = load<i32>(p + keyOff);
      if (k < lo || k > hi) return Status.BadMedian;
      store<i32>(at32(buf, count++), k);
    }
    p += step;
  }
  if (target < 0 || target >= count) return Status.BadMedian;
  // Quickselect with a three-way partition around the median of three.
  let a = 0;
  let b = count - 1;
  let value = 0;
  for (;;) {
    if (a >= b) {
      value = load<i32>(at32(buf, a));
      break;
    }
    const x = load<i32>(at32(buf, a));
    const y = load<i32>(at32(buf, a + ((b - a) >> 1)));
    const z = load<i32>(at32(buf, b));
    const pivot = x < y ? (y < z ? y : x < z ? z : x) : x < z ? x : y < z ? z : y;
    let lt = a;
    let gt = b;
    let i = a;
    while (i <= gt) {
      const v = load<i32>(at32(buf, i));
      if (v < pivot) {
        store<i32>(at32(buf, i), load<i32>(at32(buf, lt)));
        store<i32>(at32(buf, lt), v);
        lt++;
        i++;
      } else if (v > pivot) {
        store<i32>(at32(buf, i), load<i32>(at32(buf, gt)));
        store<i32>(at32(buf, gt), v);
        gt--;
      } else i++;
    }
    if (target < lt) b = lt - 1;
    else if (target > gt) a = gt + 1;
    else {
      value = pivot;
      break;
    }
  }
  let below = 0;
  let equal = 0;
  for (let i = 0; i < count; i++) {
    const v = load<i32>(at32(buf, i));
    if (v < value) below++;
    else if (v == value) equal++;
  }
  store<i32>(out, value);
  store<i32>(out, below, 4);
  store<i32>(out, equal, 8);
  return 0;
}

// Which side a record goes to: keys below `value` left, above right; of the keys equal to
// it, with col2 < 0 the first `quota` left; with col2 ≥ 0 (a divided median, its rows
// ordered by a second column) those whose col2 key is below `value2` left, and of those
// equal to value2 the first `quota2`.
// @ts-expect-error: decorator
@inline
function sideOf(k: i32, value: i32, k2: i32, value2: i32, col2: i32, taken: i32, quota: i32): i32 {
  if (k != value) return k < value ? 1 : 0;
  if (col2 < 0) return taken < quota ? 2 : 0;
  if (k2 != value2) return k2 < value2 ? 1 : 0;
  return taken < quota ? 2 : 0;
}

// Binary partition on column `col` (see sideOf; quota is quota2 when col2 ≥ 0).
// move = 0: only count — hist (2·W i32) gets the left part's SA counts, then the right
// part's; records stay. move = 1: move the records (stably), hist untouched.
// Returns the left part's size.
export function mondrianCut(
  recs: usize,
  scratch: usize,
  w: i32,
  start: i32,
  end: i32,
  col: i32,
  value: i32,
  quota: i32,
  col2: i32,
  value2: i32,
  saCol: i32,
  s: i32,
  saBase: usize,
  hist: usize,
  histWidth: i32,
  move: i32,
): i32 {
  const step = (<usize>w) << 2;
  const keyOff = (<usize>col) << 2;
  const key2Off = (<usize>(col2 < 0 ? col : col2)) << 2;
  let src = recAt(recs, w, start);
  let taken = 0;
  let left = 0;
  if (move == 0) {
    if (histWidth > 0) memory.fill(hist, 0, (<usize>histWidth) << 3);
    const right = hist + ((<usize>histWidth) << 2);
    for (let r = start; r < end; r++) {
      const side = sideOf(load<i32>(src + keyOff), value, load<i32>(src + key2Off), value2, col2, taken, quota);
      if (side == 2) taken++;
      if (side != 0) left++;
      countSa(src, saCol, s, saBase, side != 0 ? hist : right);
      src += step;
    }
    return left;
  }
  let dst = src;
  let spill = scratch;
  for (let r = start; r < end; r++) {
    const side = sideOf(load<i32>(src + keyOff), value, load<i32>(src + key2Off), value2, col2, taken, quota);
    if (side == 2) taken++;
    if (side != 0) {
      if (dst != src) copyRec(dst, src, w);
      dst += step;
      left++;
    } else {
      copyRec(spill, src, w);
      spill += step;
    }
    src += step;
  }
  memory.copy(dst, scratch, spill - scratch);
  return left;
}

// Multiway partition by the label of column `col`'s key in `table` (key → label, one level
// of a hierarchy, `labels` labels): parts in increasing label order, empty labels skipped;
// bounds[p] = end of part p relative to start. move = 0: only count — hist gets parts × W
// SA counts; records stay. move = 1: move the records (stably), hist untouched.
// counts and partOf: `labels` i32 of scratch each. Returns the number of parts.
export function mondrianGroup(
  recs: usize,
  scratch: usize,
  w: i32,
  start: i32,
  end: i32,
  col: i32,
  table: usize,
  labels: i32,
  counts: usize,
  partOf: usize,
  bounds: usize,
  saCol: i32,
  s: i32,
  saBase: usize,
  hist: usize,
  histWidth: i32,
  move: i32,
): i32 {
  memory.fill(counts, 0, (<usize>labels) << 2);
  const step = (<usize>w) << 2;
  const keyOff = (<usize>col) << 2;
  const first = recAt(recs, w, start);
  let p = first;
  for (let r = start; r < end; r++) {
    const at = counts + ((<usize>load<i32>(table + ((<usize>load<i32>(p + keyOff)) << 2))) << 2);
    store<i32>(at, load<i32>(at) + 1);
    p += step;
  }
  let parts = 0;
  let offset = 0;
  for (let lab = 0; lab < labels; lab++) {
    const at = counts + ((<usize>lab) << 2);
    const c = load<i32>(at);
    if (c == 0) continue;
    store<i32>(partOf + ((<usize>lab) << 2), parts);
    store<i32>(at, offset); // from here on: the next free slot of the label's part
    offset += c;
    store<i32>(bounds + ((<usize>parts) << 2), offset);
    parts++;
  }
  if (move == 0) {
    if (histWidth == 0) return parts;
    memory.fill(hist, 0, (<usize>parts * <usize>histWidth) << 2);
    const partBytes = (<usize>histWidth) << 2;
    p = first;
    for (let r = start; r < end; r++) {
      const lab = load<i32>(table + ((<usize>load<i32>(p + keyOff)) << 2));
      const part = load<i32>(partOf + ((<usize>lab) << 2));
      countSa(p, saCol, s, saBase, hist + <usize>part * partBytes);
      p += step;
    }
    return parts;
  }
  p = first;
  for (let r = start; r < end; r++) {
    const at = counts + ((<usize>load<i32>(table + ((<usize>load<i32>(p + keyOff)) << 2))) << 2);
    const slot = load<i32>(at);
    store<i32>(at, slot + 1);
    copyRec(scratch + <usize>slot * step, p, w);
    p += step;
  }
  memory.copy(first, scratch, <usize>(end - start) * step);
  return parts;
}
