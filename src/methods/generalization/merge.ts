/**
 * The shards' distinct tuples merged one shard at a time, in shard order. A merged tuple's id is
 * its first appearance over the shards' tuples concatenated, and its count the sum of theirs:
 * what grouping the concatenation gives (the grouping kernels number groups so), without ever
 * holding the shards together or a copy of them all. Each shard's tuples are dropped once added.
 * Shards of nearly distinct tuples are merged by ConcatMerge instead (below).
 */
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import { gather, gatherFloat } from '../../util/gather.ts';
import { Int32s } from '../../util/int32s.ts';

export interface Counted {
  readonly columns: readonly Int32Array[];
  readonly counts: Int32Array;
}

/**
 * The most tuples a table of 2^k slots holds, as a share of its slots. Seven tenths keeps probes
 * short (the stored hash rejects most other tuples without a column read), and for many tuple
 * counts (10^8 among them) needs a table half the size that half full would: the merge's
 * largest array.
 */
const LOAD = 0.7;

/** The largest product of domains whose tuples pack exactly into one double (mixed radix). */
const PACKED_LIMIT = 2 ** 53;

export class TupleMerge {
  private columns: Int32Array[];
  /**
   * Open addressing, 16 bytes a slot, so that a probe reads one cache line: a double, then the
   * merged id + 1 (0: free) and the count so far. The double is the tuple itself, packed (Σ
   * code · place value), when the domains' product allows it: a tuple is then found or told
   * apart without a read of the merged columns (a cache miss each). Otherwise it is the tuple's
   * hash, which rejects most other tuples before their columns are read.
   */
  private keys: Float64Array;
  private cells: Int32Array;
  private readonly packs: boolean;
  private size = 0;

  /** `domains`: each column's code domain (codes in [0, domain)), checked as tuples are added. */
  constructor(private readonly domains: readonly number[]) {
    this.columns = domains.map(() => new Int32Array(1024));
    this.packs = domains.reduce((p, d) => p * Math.max(1, d), 1) <= PACKED_LIMIT;
    [this.keys, this.cells] = table(2048);
  }

  /** Merged tuples so far. */
  get tuples(): number {
    return this.size;
  }

  /**
   * Adds one shard's distinct tuples; each one's merged id, in the shard's order. A large
   * table is probed region by region (the tuples in the order of the region their first slot
   * falls in): a probe of a table of millions of tuples misses the cache, a region's probes do
   * not. New tuples take their ids after, in the shard's order, so that ids stay first
   * appearances.
   */
  add(part: Counted): Int32Array {
    const n = part.counts.length;
    const m = this.domains.length;
    if (part.columns.length !== m)
      throw new Error(`a shard's counts have ${part.columns.length} columns, expected ${m}`);
    this.reserve(this.size + n);
    const { keys, cells, domains, packs, columns } = this;
    const mask = (keys.length >> 1) - 1;
    const from = part.columns;
    // Each tuple's key (the packed tuple, or its hash) and hash, its codes checked.
    const keyOf = new Float64Array(n);
    const hashes = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      let key = 0;
      for (let i = 0; i < m; i++) {
        const code = from[i]![t]!;
        const domain = domains[i]!;
        // Out of its domain, a code would pack into another tuple's key.
        if (!(code >= 0 && code < domain))
          throw new RangeError(
            `a shard's tuple ${t} has code ${code} in column ${i}, outside its ${domain} values`,
          );
        if (packs) key = key * domain + code; // exact: the product of the domains is below 2^53
      }
      const h = packs ? hashOfKey(key) : hashOf(from, t, m);
      keyOf[t] = packs ? key : h;
      hashes[t] = h;
    }
    // A large table is probed region by region: each tuple's key, hash and count moved into
    // that order, so the probes read them in turn.
    const sorted = mask + 1 >= REGION_TABLE && n >= REGION_BATCH ? regionOrder(hashes, mask) : undefined;
    const keyAt = sorted ? gatherFloat(keyOf, sorted) : keyOf;
    const hashAt = sorted ? gather(hashes, sorted) : hashes;
    const countAt = sorted ? gather(part.counts, sorted) : part.counts;
    // Each tuple's merged id; -1 for a new one until the ids come (in the shard's order).
    const groupOf = new Int32Array(n);
    // A new tuple's slot, in probe order (-1: found merged already): its id is written into the
    // table in that order too, which reads the table region by region, not at random.
    const freshSlot = new Int32Array(n);
    for (let k = 0; k < n; k++) {
      const t = sorted ? sorted[k]! : k;
      const key = keyAt[k]!;
      let slot = hashAt[k]! & mask;
      for (;;) {
        const e = cells[4 * slot + 2]!;
        if (e === 0) {
          // New: a shard's tuples are distinct, so no other of this shard's is this one.
          keys[2 * slot] = key;
          cells[4 * slot + 2] = -1;
          freshSlot[k] = slot;
          groupOf[t] = -1;
          break;
        }
        if (e > 0 && keys[2 * slot] === key && (packs || same(columns, e - 1, from, t, m))) {
          freshSlot[k] = -1;
          groupOf[t] = e - 1;
          break;
        }
        slot = (slot + 1) & mask;
      }
      cells[4 * slot + 3]! += countAt[k]!;
    }
    for (let t = 0; t < n; t++) {
      if (groupOf[t] !== -1) continue;
      const id = this.size++;
      for (let i = 0; i < m; i++) columns[i]![id] = from[i]![t]!;
      groupOf[t] = id;
    }
    for (let k = 0; k < n; k++) {
      const slot = freshSlot[k]!;
      if (slot >= 0) cells[4 * slot + 2] = groupOf[sorted ? sorted[k]! : k]! + 1;
    }
    return groupOf;
  }

  /** The merged tuples (the table let go once their counts are out; columns trimmed to size when that saves much). */
  done(): { columns: Int32Array[]; counts: Int32Array } {
    const counts = new Int32Array(this.size);
    const { cells } = this;
    for (let at = 2; at < cells.length; at += 4) if (cells[at] !== 0) counts[cells[at]! - 1] = cells[at + 1]!;
    [this.keys, this.cells] = table(0);
    const trim = (a: Int32Array) =>
      this.size >= 0.9 * a.length ? a.subarray(0, this.size) : a.slice(0, this.size);
    const columns = this.columns.map(trim);
    this.columns = [];
    return { columns, counts };
  }

  /** Room for `need` tuples: the columns grow by half again (at least), the table rehashes. */
  reserve(need: number): void {
    const had = this.columns[0]?.length ?? 0;
    if (need > had) {
      const capacity = Math.max(need, Math.ceil(had * 1.5));
      this.columns = this.columns.map((a) => {
        const b = new Int32Array(capacity);
        b.set(a.subarray(0, this.size));
        return b;
      });
    }
    const slotsNow = this.keys.length >> 1;
    if (need > slotsNow * LOAD) {
      let capacity = slotsNow;
      while (need > capacity * LOAD) capacity *= 2;
      const [keys, cells] = table(capacity);
      const mask = capacity - 1;
      // The kept keys (or hashes) move the tuples over without a read of their columns.
      const old = this.keys;
      const oldCells = this.cells;
      for (let s = 0; s < slotsNow; s++) {
        if (oldCells[4 * s + 2] === 0) continue;
        const key = old[2 * s]!;
        let slot = (this.packs ? hashOfKey(key) : key) & mask;
        while (cells[4 * slot + 2] !== 0) slot = (slot + 1) & mask;
        keys[2 * slot] = key;
        cells[4 * slot + 2] = oldCells[4 * s + 2]!;
        cells[4 * slot + 3] = oldCells[4 * s + 3]!;
      }
      this.keys = keys;
      this.cells = cells;
    }
  }
}

/** Tables of at least this many slots are probed region by region, by shards of at least this many tuples. */
const REGION_TABLE = 1 << 18;
const REGION_BATCH = 1 << 14;
/** Regions of a table probed in turn: a region of a 2^24-slot table is 64 KiB. */
const REGION_BITS = 12;

/** The tuples (by their hashes) in the order of the table region their first slot (`hash & mask`) falls in, each region's in order. */
function regionOrder(hashes: Int32Array, mask: number): Int32Array {
  const n = hashes.length;
  const shift = Math.max(0, Math.log2(mask + 1) - REGION_BITS);
  const regions = (mask >>> shift) + 1;
  const starts = new Int32Array(regions + 1);
  for (let t = 0; t < n; t++) starts[((hashes[t]! & mask) >>> shift) + 1]!++;
  for (let r = 0; r < regions; r++) starts[r + 1]! += starts[r]!;
  const order = new Int32Array(n);
  for (let t = 0; t < n; t++) order[starts[(hashes[t]! & mask) >>> shift]!++] = t;
  return order;
}

/** A table of `slots` slots: the same bytes seen as doubles (2 a slot) and as int32s (4 a slot). */
function table(slots: number): [Float64Array, Int32Array] {
  const bytes = new ArrayBuffer(16 * slots);
  return [new Float64Array(bytes), new Int32Array(bytes)];
}

function hashOf(columns: readonly Int32Array[], t: number, m: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < m; i++) h = Math.imul(h ^ columns[i]![t]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

/** A packed tuple's hash, from its two 32-bit halves (the key is an integer below 2^53). */
function hashOfKey(key: number): number {
  const low = key >>> 0;
  let h = Math.imul(0x811c9dc5 ^ low, 0x01000193);
  h = Math.imul(h ^ ((key - low) / 0x100000000), 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

function same(a: readonly Int32Array[], s: number, b: readonly Int32Array[], t: number, m: number): boolean {
  for (let i = 0; i < m; i++) if (a[i]![s] !== b[i]![t]) return false;
  return true;
}

/**
 * The shards' tuples merged by grouping their concatenation in the grouping kernel, for shards
 * of nearly distinct tuples (exact dates, postcodes): the concatenation is then about the merged
 * tuples' size, which TupleMerge would hold too, and the kernel groups it several times faster
 * than TupleMerge probes a table of millions (3·10⁶ tuples: about 0.2 s against 1.2 s). Grouping
 * numbers groups by first appearance and sums their counts: the same ids, counts and tuples.
 * Each shard's tuples are copied in as it is added and may be dropped then.
 */
export class ConcatMerge {
  private columns: Int32s[];
  private counts: Int32s;
  private readonly lengths: number[] = [];

  /** `expected`: the tuples the shards likely hold in all (the arrays grow past it if need be). */
  constructor(
    private readonly domains: readonly number[],
    expected: number,
    private readonly kernel: GroupingKernel,
  ) {
    this.columns = domains.map(() => Int32s.sized(expected));
    this.counts = Int32s.sized(expected);
  }

  add(part: Counted): void {
    const n = part.counts.length;
    if (part.columns.length !== this.domains.length)
      throw new Error(
        `a shard's counts have ${part.columns.length} columns, expected ${this.domains.length}`,
      );
    const append = (to: Int32s, from: Int32Array) => {
      to.reserve(n);
      to.data.set(from, to.length);
      to.length += n;
    };
    part.columns.forEach((c, i) => {
      append(this.columns[i]!, c);
    });
    append(this.counts, part.counts);
    this.lengths.push(n);
  }

  /**
   * The merged tuples and counts, and per shard its tuples' merged ids (the kernel checks every
   * code against its domain).
   */
  done(): {
    merged: { columns: Int32Array[]; counts: Int32Array };
    groupOf: Int32Array[];
  } {
    const cut = (a: Int32s) => a.data.subarray(0, a.length);
    const session = this.kernel.open(
      { columns: this.columns.map(cut), counts: cut(this.counts), domains: this.domains },
      this.domains.map(() => []),
    );
    try {
      const grouped = session.group(null);
      const merged = { columns: session.keys(grouped.groups), counts: grouped.sizes };
      let at = 0;
      const groupOf = this.lengths.map((n) => grouped.groupOf.subarray(at, (at += n)));
      return { merged, groupOf };
    } finally {
      session.dispose();
      this.columns = [];
      this.counts = new Int32s();
    }
  }
}
