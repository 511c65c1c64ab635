/**
 * Plain-TS reference of the WASM grouping kernel (assembly/groupby.ts): the same modes
 * (direct-addressed packed keys, hashed packed keys, hashed whole tuples), the same group
 * numbering — so outputs are identical, not merely equivalent.
 */
import { kernelError, Status } from '../status.ts';
import {
  directCapacity,
  type Grouping,
  type GroupingInput,
  type GroupingKernel,
  type GroupingSession,
  keyMode,
  keysOf,
  levelBases,
  radices,
  tableCapacity,
  validateCompose,
  validateGroupingInput,
  validateRollup,
} from './kernel.ts';

function mix(h: number, v: number): number {
  h = (h ^ Math.imul(v, 0x9e3779b1)) >>> 0;
  h = ((h << 13) | (h >>> 19)) >>> 0;
  return (Math.imul(h, 5) + 0xe6546b64) >>> 0;
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b) >>> 0;
  return (h ^ (h >>> 13)) >>> 0;
}

export interface GroupOutput {
  groups: number;
  srcToGroup: Int32Array;
  sizes: Int32Array;
  reps: Int32Array;
}

/**
 * Groups sources (tuple `src ? src[s] : s`, weight `weights ? weights[s] : 1`) by their
 * generalized tuple. `radix` packs keys when their product < 2^53; with `direct`, the packed
 * key is the slot of `table` (zero on entry, cleared again on exit).
 */
export function groupByReference(
  columns: readonly Int32Array[],
  maps: readonly (Int32Array | null)[],
  radix: readonly number[] | null,
  src: Int32Array | null,
  nSrc: number,
  weights: Int32Array | undefined,
  direct: boolean,
  table: Int32Array,
): GroupOutput {
  const m = columns.length;
  const srcToGroup = new Int32Array(nSrc);
  const sizes = new Int32Array(nSrc);
  const reps = new Int32Array(nSrc);
  const value = (i: number, t: number) => {
    const code = columns[i]![t]!;
    const map = maps[i];
    return map ? map[code]! : code;
  };
  let groups = 0;
  const place = (s: number, t: number, found: number): number => {
    const w = weights ? weights[s]! : 1;
    let g = found;
    if (g < 0) {
      g = groups++;
      sizes[g] = w;
      reps[g] = t;
    } else sizes[g]! += w;
    srcToGroup[s] = g;
    return g;
  };
  const capacity = tableCapacity(nSrc);
  const slots = new Int32Array(nSrc);
  /** Linear probing from a hash: the slot of the matching group, or the free slot for a new one. */
  let slot = 0;
  const probe = (hash: number, matches: (g: number) => boolean): number => {
    slot = hash & (capacity - 1);
    for (;;) {
      const e = table[slot]!;
      if (e === 0) return -1;
      if (matches(e - 1)) return e - 1;
      slot = (slot + 1) & (capacity - 1);
    }
  };
  if (radix) {
    const packed = new Float64Array(nSrc);
    for (let s = 0; s < nSrc; s++) {
      const t = src ? src[s]! : s;
      let key = 0;
      for (let i = 0; i < m; i++) key = key * radix[i]! + value(i, t);
      if (direct) {
        const g = place(s, t, table[key]! - 1);
        table[key] = g + 1;
        slots[g] = key;
        continue;
      }
      // Hash of the 53-bit key's two halves.
      const hash = finish(mix(mix(0x811c9dc5, key >>> 0), Math.floor(key / 2 ** 32) >>> 0));
      const found = probe(hash, (g) => packed[g] === key);
      const g = place(s, t, found);
      if (found < 0) {
        table[slot] = g + 1;
        slots[g] = slot;
        packed[g] = key;
      }
    }
  } else {
    const keys = columns.map(() => new Int32Array(nSrc));
    const scratch = new Int32Array(m);
    for (let s = 0; s < nSrc; s++) {
      const t = src ? src[s]! : s;
      let h = 0x811c9dc5;
      for (let i = 0; i < m; i++) {
        scratch[i] = value(i, t);
        h = mix(h, scratch[i]! >>> 0);
      }
      const found = probe(finish(h), (g) => {
        for (let i = 0; i < m; i++) if (scratch[i] !== keys[i]![g]) return false;
        return true;
      });
      const g = place(s, t, found);
      if (found < 0) {
        table[slot] = g + 1;
        slots[g] = slot;
        for (let i = 0; i < m; i++) keys[i]![g] = scratch[i]!;
      }
    }
  }
  for (let g = 0; g < groups; g++) table[slots[g]!] = 0;
  return { groups, srcToGroup, sizes: sizes.slice(0, groups), reps: reps.slice(0, groups) };
}

/** A rollup's tuple → class map from its source's: `map[groupOf[t]]`, each class id checked. */
export function composeReference(groupOf: Int32Array, map: Int32Array): Int32Array {
  const out = new Int32Array(groupOf.length);
  for (let t = 0; t < out.length; t++) {
    const g = groupOf[t]!;
    if (g < 0 || g >= map.length)
      throw kernelError('compose', Status.ClassOutOfMap, 'a class id is outside the map');
    out[t] = map[g]!;
  }
  return out;
}

export function histogramReference(
  groupOf: Int32Array,
  groups: number,
  values: Int32Array,
  width: number,
  counts: Int32Array | undefined,
): Int32Array {
  const out = new Int32Array(groups * width);
  for (let t = 0; t < groupOf.length; t++) out[groupOf[t]! * width + values[t]!]! += counts ? counts[t]! : 1;
  return out;
}

export const tsGroupingKernel: GroupingKernel = {
  name: 'ts',
  open(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): GroupingSession {
    const n = validateGroupingInput(input, tables);
    const { columns } = input;
    const limit = directCapacity(n);
    const bases = levelBases(input.domains, tables);
    const codes = input.domains.reduce((a, d) => a + d, 0);
    const table = new Int32Array(limit);
    const mapsAt = (levels: ArrayLike<number> | null) =>
      columns.map((_, i) => (levels ? tables[i]![levels[i]!]! : null));
    const run = (levels: ArrayLike<number> | null, from: Grouping | null) => {
      const maps = mapsAt(levels);
      const { radix, product } = radices(input.domains, bases, levels);
      const mode = keyMode(product, codes, limit);
      return groupByReference(
        columns,
        maps,
        mode === 'tuple' ? null : radix,
        from ? from.reps : null,
        from ? from.groups : n,
        from ? from.sizes : input.counts,
        mode === 'direct',
        table,
      );
    };
    let last: { maps: (Int32Array | null)[]; reps: Int32Array } = { maps: [], reps: new Int32Array(0) };
    return {
      n,
      domains: input.domains,
      group(levels) {
        const r = run(levels, null);
        last = { maps: mapsAt(levels), reps: r.reps };
        return { groups: r.groups, groupOf: r.srcToGroup, sizes: r.sizes, reps: r.reps };
      },
      rollup(levels, from, withMap = true) {
        validateRollup(from, n, true);
        const r = run(levels, from);
        return { groups: r.groups, sizes: r.sizes, reps: r.reps, ...(withMap ? { map: r.srcToGroup } : {}) };
      },
      compose(groupOf, map) {
        validateCompose(groupOf, map, n);
        return composeReference(groupOf, map);
      },
      histogram(groupOf, groups, values, width) {
        return histogramReference(groupOf, groups, values, width, input.counts);
      },
      keys(groups) {
        return keysOf(columns, last.maps, last.reps, groups);
      },
      dispose() {},
    };
  },
};
