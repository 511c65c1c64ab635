/**
 * A grouping session over more tuples than one kernel instance should hold: the tuples stay in
 * their JS arrays, and each call groups them a chunk at a time, each chunk in a small session of
 * its own, then merges the chunks' classes by their generalized tuple. Chunks are taken in
 * tuple order and each chunk numbers its classes in order of first appearance, so the merged
 * ids, sizes and representatives are exactly what one session over every tuple gives: callers
 * (the lattice search, the report) cannot tell the two apart, and test/kernels checks they
 * are equal. What grows with the tuples is then plain typed arrays, not one WASM instance's
 * memory, which addresses 4 GiB at most.
 */
import { kernelError, Status } from '../status.ts';
import {
  type Grouping,
  type GroupingInput,
  type GroupingResult,
  type GroupingSession,
  keysOf,
  levelBases,
  type RollupResult,
  radices,
  validateCodes,
  validateCompose,
  validateRollup,
  validateShapes,
} from './kernel.ts';
import { composeReference, histogramReference } from './reference.ts';

type Open = (input: GroupingInput, tables: readonly (readonly Int32Array[])[]) => GroupingSession;

export function chunkedSession(
  input: GroupingInput,
  tables: readonly (readonly Int32Array[])[],
  /** Opens one chunk's session (a small one: the WASM kernel's own, reused between chunks). */
  open: Open,
  chunkTuples: number,
): GroupingSession {
  const n = validateShapes(input, tables);
  validateCodes(input);
  const { columns, domains } = input;
  const m = columns.length;
  const bases = levelBases(domains, tables);
  const mapsAt = (levels: ArrayLike<number> | null) =>
    columns.map((_, i) => (levels ? tables[i]![levels[i]!]! : null));
  let last: { levels: ArrayLike<number> | null; reps: Int32Array } = {
    levels: null,
    reps: new Int32Array(0),
  };
  let disposed = false;
  const live = () => {
    if (disposed) throw new Error('grouping session used after dispose');
  };

  /**
   * Groups `nSrc` sources — tuple `src[s]` weighing `weights[s]`, or tuple s weighing its count
   * when `src` is absent — under `levels`, one chunk of sources at a time.
   */
  const groupSources = (
    levels: ArrayLike<number> | null,
    nSrc: number,
    src: Int32Array | null,
    weights: Int32Array | undefined,
    withMap: boolean,
  ) => {
    const { radix, product } = radices(domains, bases, levels);
    const merged = new ClassMerge(m, product < 2 ** 53 ? radix : null, Math.min(nSrc, 1 << 16));
    const srcToGroup = withMap ? new Int32Array(nSrc) : undefined;
    const chunkColumns = columns.map(() => new Int32Array(Math.min(nSrc, chunkTuples)));
    for (let start = 0; start < nSrc; start += chunkTuples) {
      const len = Math.min(chunkTuples, nSrc - start);
      const chunk = chunkColumns.map((c) => c.subarray(0, len));
      for (let i = 0; i < m; i++) {
        const from = columns[i]!;
        const to = chunk[i]!;
        if (src) for (let j = 0; j < len; j++) to[j] = from[src[start + j]!]!;
        else to.set(from.subarray(start, start + len));
      }
      const session = open(
        { columns: chunk, counts: weights?.subarray(start, start + len), domains },
        tables,
      );
      let local: GroupingResult;
      let keys: Int32Array[];
      try {
        local = session.group(levels);
        keys = session.keys(local.groups);
      } finally {
        session.dispose();
      }
      const toMerged = new Int32Array(local.groups);
      for (let g = 0; g < local.groups; g++) {
        const s = start + local.reps[g]!;
        toMerged[g] = merged.add(keys, g, local.sizes[g]!, src ? src[s]! : s);
      }
      if (srcToGroup) for (let j = 0; j < len; j++) srcToGroup[start + j] = toMerged[local.groupOf[j]!]!;
      // The first chunk's classes per source, carried over the rest: room for them at once,
      // rather than doubling (old and new arrays held together) on the way there.
      if (start === 0 && len < nSrc)
        merged.expect(Math.min(nSrc, Math.ceil(1.05 * (local.groups / len) * nSrc)));
    }
    return { ...merged.done(), srcToGroup };
  };

  return {
    n,
    domains,
    group(levels): GroupingResult {
      live();
      const r = groupSources(levels, n, null, input.counts, true);
      last = { levels, reps: r.reps };
      return { groups: r.groups, groupOf: r.srcToGroup!, sizes: r.sizes, reps: r.reps };
    },
    rollup(levels, from: Grouping, withMap = true): RollupResult {
      live();
      validateRollup(from, n, true);
      // A class's first tuple stands for it, weighing the class's size.
      const r = groupSources(levels, from.groups, from.reps, from.sizes, withMap);
      return { groups: r.groups, sizes: r.sizes, reps: r.reps, ...(withMap ? { map: r.srcToGroup! } : {}) };
    },
    compose(groupOf, map) {
      live();
      validateCompose(groupOf, map, n);
      return composeReference(groupOf, map);
    },
    histogram(groupOf, groups, values, width) {
      live();
      for (let t = 0; t < n; t++) {
        const g = groupOf[t]!;
        const x = values[t]!;
        if (g < 0 || g >= groups || x < 0 || x >= width)
          throw kernelError('histogram', Status.TupleOutOfRange, `tuple ${t} out of range`);
      }
      return histogramReference(groupOf, groups, values, width, input.counts);
    },
    keys(groups) {
      live();
      return keysOf(columns, mapsAt(last.levels), last.reps, groups);
    },
    dispose() {
      disposed = true;
    },
  };
}

/**
 * The merged classes: each class's generalized tuple (one packed number when the node's key
 * fits 53 bits, else its m codes), size and first tuple, found again by open addressing.
 */
class ClassMerge {
  private packed: Float64Array;
  private keyColumns: Int32Array[];
  private sizes: Int32Array;
  private reps: Int32Array;
  /** Slot → class id + 1 (0: free), at most half full. */
  private slots: Int32Array;
  private groups = 0;

  constructor(
    private readonly m: number,
    /** Per column its digit base when keys pack into one number, else null. */
    private readonly radix: readonly number[] | null,
    capacity: number,
  ) {
    const c = Math.max(16, capacity);
    this.packed = new Float64Array(radix ? c : 0);
    this.keyColumns = radix ? [] : Array.from({ length: m }, () => new Int32Array(c));
    this.sizes = new Int32Array(c);
    this.reps = new Int32Array(c);
    this.slots = new Int32Array(slotsFor(c));
  }

  /** Adds class g of a chunk (its key in `keys`, column-major): its merged id. */
  add(keys: readonly Int32Array[], g: number, size: number, rep: number): number {
    const { m, radix } = this;
    let key = 0;
    let h = 0x811c9dc5;
    if (radix) {
      for (let i = 0; i < m; i++) key = key * radix[i]! + keys[i]![g]!;
      h = hashPacked(key);
    } else {
      for (let i = 0; i < m; i++) h = Math.imul(h ^ keys[i]![g]!, 0x01000193);
      h = finish(h);
    }
    const mask = this.slots.length - 1;
    let slot = h & mask;
    for (;;) {
      const e = this.slots[slot]!;
      if (e === 0) break;
      const id = e - 1;
      if (radix ? this.packed[id] === key : this.sameKey(id, keys, g)) {
        this.sizes[id]! += size;
        return id;
      }
      slot = (slot + 1) & mask;
    }
    if (this.groups >= this.sizes.length) {
      this.grow();
      return this.place(this.groups++, key, keys, g, size, rep);
    }
    const id = this.groups++;
    this.slots[slot] = id + 1;
    return this.place(id, key, keys, g, size, rep, true);
  }

  /** Room for `classes` classes in all (no smaller than now). */
  expect(classes: number): void {
    if (classes > this.sizes.length) this.grow(classes);
  }

  /** The classes (arrays trimmed to them unless they fill nine tenths already: no copy then). */
  done(): { groups: number; sizes: Int32Array; reps: Int32Array } {
    const { groups } = this;
    this.slots = new Int32Array(0);
    const trim = (a: Int32Array) => (groups >= 0.9 * a.length ? a.subarray(0, groups) : a.slice(0, groups));
    return { groups, sizes: trim(this.sizes), reps: trim(this.reps) };
  }

  private place(
    id: number,
    key: number,
    keys: readonly Int32Array[],
    g: number,
    size: number,
    rep: number,
    slotted = false,
  ): number {
    if (this.radix) this.packed[id] = key;
    else for (let i = 0; i < this.m; i++) this.keyColumns[i]![id] = keys[i]![g]!;
    this.sizes[id] = size;
    this.reps[id] = rep;
    if (!slotted) this.slot(id);
    return id;
  }

  private sameKey(id: number, keys: readonly Int32Array[], g: number): boolean {
    for (let i = 0; i < this.m; i++) if (this.keyColumns[i]![id] !== keys[i]![g]) return false;
    return true;
  }

  /** Puts class id (its key stored) into a free slot. */
  private slot(id: number): void {
    const mask = this.slots.length - 1;
    let s = this.hashOf(id) & mask;
    while (this.slots[s] !== 0) s = (s + 1) & mask;
    this.slots[s] = id + 1;
  }

  private hashOf(id: number): number {
    if (this.radix) return hashPacked(this.packed[id]!);
    let h = 0x811c9dc5;
    for (let i = 0; i < this.m; i++) h = Math.imul(h ^ this.keyColumns[i]![id]!, 0x01000193);
    return finish(h);
  }

  /** Room for `c` classes (twice the room by default); the slots rebuilt from the stored keys. */
  private grow(c = 2 * this.sizes.length): void {
    const widen = <T extends Int32Array | Float64Array>(a: T, make: (c: number) => T): T => {
      const b = make(c);
      b.set(a);
      return b;
    };
    this.sizes = widen(this.sizes, (k) => new Int32Array(k));
    this.reps = widen(this.reps, (k) => new Int32Array(k));
    if (this.radix) this.packed = widen(this.packed, (k) => new Float64Array(k));
    else this.keyColumns = this.keyColumns.map((a) => widen(a, (k) => new Int32Array(k)));
    this.slots = new Int32Array(slotsFor(c));
    for (let id = 0; id < this.groups; id++) this.slot(id);
  }
}

/** A power of two at least twice `classes`: the table stays at most half full. */
function slotsFor(classes: number): number {
  let s = 16;
  while (s < 2 * classes) s *= 2;
  return s;
}

function hashPacked(key: number): number {
  let h = Math.imul(0x811c9dc5 ^ (key >>> 0), 0x01000193);
  h = Math.imul(h ^ Math.floor(key / 2 ** 32), 0x01000193);
  return finish(h);
}

function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}
