/**
 * Plain-TS reference of the WASM grouping kernel (assembly/groupby.ts): the same hash, the
 * same probing, the same group numbering — so outputs are identical, not merely equivalent.
 */
import {
  type GroupingInput,
  type GroupingKernel,
  type GroupingSession,
  tableCapacity,
  validateGroupingInput,
} from './grouping.ts';

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

export function groupByReference(
  columns: readonly Int32Array[],
  maps: readonly (Int32Array | null)[],
  counts: Int32Array | undefined,
  n: number,
): { groups: number; groupOf: Int32Array; sizes: Int32Array; keys: Int32Array[] } {
  const m = columns.length;
  const capacity = tableCapacity(n);
  const mask = capacity - 1;
  const table = new Int32Array(capacity);
  const keys = columns.map(() => new Int32Array(n));
  const groupOf = new Int32Array(n);
  const sizes = new Int32Array(n);
  const scratch = new Int32Array(m);
  let groups = 0;
  for (let t = 0; t < n; t++) {
    let h = 0x811c9dc5;
    for (let i = 0; i < m; i++) {
      const map = maps[i];
      const code = columns[i]![t]!;
      const v = map ? map[code]! : code;
      scratch[i] = v;
      h = mix(h, v >>> 0);
    }
    let slot = finish(h) & mask;
    let g = -1;
    for (;;) {
      const s = table[slot]!;
      if (s === 0) break;
      const cand = s - 1;
      let equal = true;
      for (let i = 0; i < m; i++) {
        if (scratch[i] !== keys[i]![cand]) {
          equal = false;
          break;
        }
      }
      if (equal) {
        g = cand;
        break;
      }
      slot = (slot + 1) & mask;
    }
    const w = counts ? counts[t]! : 1;
    if (g < 0) {
      g = groups++;
      table[slot] = g + 1;
      for (let i = 0; i < m; i++) keys[i]![g] = scratch[i]!;
      sizes[g] = w;
    } else {
      sizes[g]! += w;
    }
    groupOf[t] = g;
  }
  return { groups, groupOf, sizes: sizes.subarray(0, groups), keys };
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
    let lastKeys: Int32Array[] = [];
    return {
      n,
      group(levels) {
        const maps = input.columns.map((_, i) => (levels ? tables[i]![levels[i]!]! : null));
        const r = groupByReference(input.columns, maps, input.counts, n);
        lastKeys = r.keys;
        return { groups: r.groups, groupOf: r.groupOf, sizes: r.sizes };
      },
      histogram(groupOf, groups, values, width) {
        return histogramReference(groupOf, groups, values, width, input.counts);
      },
      keys(groups) {
        return lastKeys.map((k) => k.slice(0, groups));
      },
      dispose() {},
    };
  },
};
