/**
 * The shards' distinct tuples merged one shard at a time, in shard order. A merged tuple's id is
 * its first appearance over the shards' tuples concatenated, and its count the sum of theirs:
 * what grouping the concatenation gives (the grouping kernels number groups so), without ever
 * holding the shards together or a copy of them all. Each shard's tuples are dropped once added.
 */
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

export class TupleMerge {
  private columns: Int32Array[];
  private counts: Int32Array;
  /**
   * Open addressing, two cells a slot: the tuple's hash, and its merged id + 1 (0: free). The
   * hash rejects most other tuples without a read of their columns (a cache miss each).
   */
  private slots: Int32Array;
  private size = 0;

  constructor(private readonly m: number) {
    this.columns = Array.from({ length: m }, () => new Int32Array(1024));
    this.counts = new Int32Array(1024);
    this.slots = new Int32Array(2 * 2048);
  }

  /** Merged tuples so far. */
  get tuples(): number {
    return this.size;
  }

  /** Adds one shard's distinct tuples; each one's merged id, in the shard's order. */
  add(part: Counted): Int32Array {
    const n = part.counts.length;
    if (part.columns.length !== this.m)
      throw new Error(`a shard's counts have ${part.columns.length} columns, expected ${this.m}`);
    this.reserve(this.size + n);
    const { m, slots } = this;
    const mask = (slots.length >> 1) - 1;
    const from = part.columns;
    const columns = this.columns;
    const groupOf = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      const h = hashOf(from, t, m);
      let slot = h & mask;
      let id = -1;
      for (;;) {
        const e = slots[2 * slot + 1]!;
        if (e === 0) break;
        if (slots[2 * slot] === h && same(columns, e - 1, from, t, m)) {
          id = e - 1;
          break;
        }
        slot = (slot + 1) & mask;
      }
      if (id < 0) {
        id = this.size++;
        for (let i = 0; i < m; i++) columns[i]![id] = from[i]![t]!;
        slots[2 * slot] = h;
        slots[2 * slot + 1] = id + 1;
      }
      this.counts[id]! += part.counts[t]!;
      groupOf[t] = id;
    }
    return groupOf;
  }

  /** The merged tuples (the table let go first; arrays trimmed to size when that saves much). */
  done(): { columns: Int32Array[]; counts: Int32Array } {
    this.slots = new Int32Array(0);
    const trim = (a: Int32Array) =>
      this.size >= 0.9 * a.length ? a.subarray(0, this.size) : a.slice(0, this.size);
    const columns = this.columns.map(trim);
    const counts = trim(this.counts);
    this.columns = [];
    this.counts = new Int32Array(0);
    return { columns, counts };
  }

  /** Room for `need` tuples: the columns grow by half again (at least), the table rehashes. */
  private reserve(need: number): void {
    if (need > this.counts.length) {
      const capacity = Math.max(need, Math.ceil(this.counts.length * 1.5));
      const grow = (a: Int32Array) => {
        const b = new Int32Array(capacity);
        b.set(a.subarray(0, this.size));
        return b;
      };
      this.columns = this.columns.map(grow);
      this.counts = grow(this.counts);
    }
    if (need > (this.slots.length >> 1) * LOAD) {
      let capacity = this.slots.length >> 1;
      while (need > capacity * LOAD) capacity *= 2;
      const slots = new Int32Array(2 * capacity);
      const mask = capacity - 1;
      // The kept hashes move the tuples over without a read of their columns.
      const old = this.slots;
      for (let at = 0; at < old.length; at += 2) {
        if (old[at + 1] === 0) continue;
        const h = old[at]!;
        let slot = h & mask;
        while (slots[2 * slot + 1] !== 0) slot = (slot + 1) & mask;
        slots[2 * slot] = h;
        slots[2 * slot + 1] = old[at + 1]!;
      }
      this.slots = slots;
    }
  }
}

function hashOf(columns: readonly Int32Array[], t: number, m: number): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < m; i++) h = Math.imul(h ^ columns[i]![t]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h | 0;
}

function same(a: readonly Int32Array[], s: number, b: readonly Int32Array[], t: number, m: number): boolean {
  for (let i = 0; i < m; i++) if (a[i]![s] !== b[i]![t]) return false;
  return true;
}
