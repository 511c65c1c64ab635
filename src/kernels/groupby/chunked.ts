/**
 * A grouping session over more tuples than one kernel instance should hold: the tuples stay in
 * their JS arrays, and each call splits them (or a lower node's classes) into parts by a hash of
 * their generalized tuple, so that every class lies in one part, and groups each part in a small
 * session of its own; a part past one chunk (a class of very many tuples) is grouped a chunk at
 * a time and the chunks' classes merged by their generalized tuple. Each part numbers its classes
 * by first appearance, and the parts' classes are numbered again by their first tuple, so the
 * ids, sizes and representatives are exactly what one session over every tuple gives: callers
 * (the lattice search, the report) cannot tell the two apart, and test/kernels checks they are
 * equal. What grows with the tuples is then plain typed arrays, not one WASM instance's memory,
 * which addresses 4 GiB at most.
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

/** Chunks' worth of sources one batch of parts copies out in one pass over the sources. */
const BATCH_CHUNKS = 8;

type Open = (
  input: GroupingInput,
  tables: readonly (readonly Int32Array[])[],
  bases: number[][],
) => GroupingSession;

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

  /** Per column at `levels`, each code's hash (a column every code of which maps to one value: absent). */
  const codeHashes = (levels: ArrayLike<number> | null): (Int32Array | null)[] => {
    const { radix } = radices(domains, bases, levels);
    return mapsAt(levels).map((map, i) => {
      if (radix[i] === 1) return null;
      const salt = Math.imul(i + 1, 0x85ebca6b);
      return Int32Array.from({ length: domains[i]! }, (_, c) =>
        finish(Math.imul((map ? map[c]! : c) + 1, 0x9e3779b1) ^ salt),
      );
    });
  };

  /**
   * Groups `nSrc` sources — tuple `src[s]` weighing `weights[s]`, or tuple s weighing its count
   * when `src` is absent — under `levels`. Past one chunk, the sources are split into parts by a
   * hash of their generalized tuple, so that a class lies in one part: each part is grouped apart
   * (numbering its classes by their first source) and the parts' classes are numbered again in
   * order of their first source over all the parts. Nothing is looked up across parts, however
   * few tuples share a class, and every pass over the sources reads them in order.
   */
  const groupSources = (
    levels: ArrayLike<number> | null,
    nSrc: number,
    src: Int32Array | null,
    weights: Int32Array | undefined,
    withMap: boolean,
  ) => {
    if (nSrc <= chunkTuples) {
      const r = groupPart(levels, nSrc, src, weights);
      const reps = src ? r.firsts.map((s) => src[s]!) : r.firsts;
      return { groups: r.groups, sizes: r.sizes, reps, srcToGroup: withMap ? r.groupOf : undefined };
    }
    // Parts of half a chunk on average: most fit one chunk; one that does not (a class of very
    // many sources) is merged chunk by chunk.
    let parts = 2;
    while (parts < 1 << 16 && parts * chunkTuples < 2 * nSrc) parts *= 2;
    const shift = 32 - Math.log2(parts);
    // Each source's part: the hash of its generalized tuple (its columns' hashes combined).
    const partOf = new Int32Array(nSrc);
    for (const [i, hashes] of codeHashes(levels).entries()) {
      if (!hashes) continue;
      const col = columns[i]!;
      if (src) for (let s = 0; s < nSrc; s++) partOf[s]! ^= hashes[col[src[s]!]!]!;
      else for (let s = 0; s < nSrc; s++) partOf[s]! ^= hashes[col[s]!]!;
    }
    const starts = new Int32Array(parts + 1);
    for (let s = 0; s < nSrc; s++) {
      const p = Math.imul(partOf[s]!, 0x9e3779b1) >>> shift;
      partOf[s] = p;
      starts[p + 1]!++;
    }
    for (let p = 0; p < parts; p++) starts[p + 1]! += starts[p]!;
    const partSize = (p: number) => starts[p + 1]! - starts[p]!;
    // Part by part (each part's sources in source order): each source's class, numbered part
    // after part (provisional ids), and each provisional class's size.
    const preOf = new Int32Array(nSrc);
    const preSizes = new Int32Array(nSrc);
    let classes = 0;
    const place = (at: number, r: { groups: number; sizes: Int32Array; groupOf: Int32Array }) => {
      for (let j = 0; j < r.groupOf.length; j++) preOf[at + j] = classes + r.groupOf[j]!;
      preSizes.set(r.sizes.subarray(0, r.groups), classes);
      classes += r.groups;
    };
    // Parts that fit a chunk go in batches of consecutive parts: one pass over the sources
    // copies a batch's tuples out, part after part, for its sessions.
    const batchSources = Math.min(nSrc, BATCH_CHUNKS * chunkTuples);
    const batch = columns.map(() => new Int32Array(batchSources));
    const batchWeights = weights ? new Int32Array(batchSources) : undefined;
    for (let lo = 0; lo < parts; ) {
      if (partSize(lo) > chunkTuples) {
        // A part past one chunk, alone: its sources' tuples listed, then merged chunk by chunk.
        const len = partSize(lo);
        const tuples = new Int32Array(len);
        const partWeights = weights ? new Int32Array(len) : undefined;
        for (let s = 0, j = 0; s < nSrc; s++) {
          if (partOf[s] !== lo) continue;
          tuples[j] = src ? src[s]! : s;
          if (partWeights) partWeights[j] = weights![s]!;
          j++;
        }
        place(starts[lo]!, groupPart(levels, len, tuples, partWeights));
        lo++;
        continue;
      }
      let hi = lo + 1;
      while (hi < parts && partSize(hi) <= chunkTuples && starts[hi + 1]! - starts[lo]! <= batchSources) hi++;
      const base = starts[lo]!;
      const fill = starts.slice(lo, hi);
      for (let s = 0; s < nSrc; s++) {
        const p = partOf[s]!;
        if (p < lo || p >= hi) continue;
        const at = fill[p - lo]!++ - base;
        const t = src ? src[s]! : s;
        for (let i = 0; i < m; i++) batch[i]![at] = columns[i]![t]!;
        if (batchWeights) batchWeights[at] = weights![s]!;
      }
      for (let p = lo; p < hi; p++) {
        const from = starts[p]! - base;
        const len = partSize(p);
        if (len === 0) continue;
        place(
          starts[p]!,
          groupChunk(
            levels,
            batch.map((c) => c.subarray(from, from + len)),
            batchWeights?.subarray(from, from + len),
          ),
        );
      }
      lo = hi;
    }
    // The final ids: in order of first source, met in one pass over the sources in order (each
    // part's in order too); the parts become the sources' classes in place.
    const finalId = new Int32Array(classes).fill(-1);
    const sizes = new Int32Array(classes);
    const reps = new Int32Array(classes);
    const cursor = starts.subarray(0, parts);
    for (let s = 0, g = 0; s < nSrc; s++) {
      const c = preOf[cursor[partOf[s]!]!++]!;
      let id = finalId[c]!;
      if (id < 0) {
        id = finalId[c] = g;
        sizes[g] = preSizes[c]!;
        reps[g++] = src ? src[s]! : s;
      }
      partOf[s] = id;
    }
    return { groups: classes, sizes, reps, srcToGroup: withMap ? partOf : undefined };
  };

  /** One chunk of tuples grouped in a session of its own. */
  const groupChunk = (
    levels: ArrayLike<number> | null,
    chunk: Int32Array[],
    counts: Int32Array | undefined,
  ): GroupingResult => {
    const session = open({ columns: chunk, counts, domains }, tables, bases);
    try {
      return session.group(levels);
    } finally {
      session.dispose();
    }
  };

  /**
   * Groups `len` sources (source j: tuple `tuples[j]`, or tuple j when absent; weight
   * `weights[j]`): in one chunk's session, or chunk by chunk with the chunks' classes merged.
   * `firsts`: each class's first source.
   */
  const groupPart = (
    levels: ArrayLike<number> | null,
    len: number,
    tuples: Int32Array | null,
    weights: Int32Array | undefined,
  ): { groups: number; sizes: Int32Array; firsts: Int32Array; groupOf: Int32Array } => {
    const { radix, product } = radices(domains, bases, levels);
    const merged =
      len <= chunkTuples ? undefined : new ClassMerge(m, product < 2 ** 53 ? radix : null, 1 << 16);
    const groupOf = new Int32Array(len);
    const chunkColumns = columns.map(() => new Int32Array(Math.min(len, chunkTuples)));
    for (let start = 0; start < len; start += chunkTuples) {
      const size = Math.min(chunkTuples, len - start);
      const chunk = chunkColumns.map((c) => c.subarray(0, size));
      for (let i = 0; i < m; i++) {
        const from = columns[i]!;
        const to = chunk[i]!;
        if (tuples) for (let j = 0; j < size; j++) to[j] = from[tuples[start + j]!]!;
        else to.set(from.subarray(start, start + size));
      }
      const counts = weights?.subarray(start, start + size);
      if (!merged) {
        const local = groupChunk(levels, chunk, counts);
        return { groups: local.groups, sizes: local.sizes, firsts: local.reps, groupOf: local.groupOf };
      }
      const session = open({ columns: chunk, counts, domains }, tables, bases);
      let local: GroupingResult;
      let keys: Int32Array[];
      try {
        local = session.group(levels);
        keys = session.keys(local.groups);
      } finally {
        session.dispose();
      }
      const toMerged = new Int32Array(local.groups);
      for (let g = 0; g < local.groups; g++)
        toMerged[g] = merged.add(keys, g, local.sizes[g]!, start + local.reps[g]!);
      for (let j = 0; j < size; j++) groupOf[start + j] = toMerged[local.groupOf[j]!]!;
    }
    if (!merged) return { groups: 0, sizes: new Int32Array(0), firsts: new Int32Array(0), groupOf };
    const r = merged.done();
    return { groups: r.groups, sizes: r.sizes, firsts: r.reps, groupOf };
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
