/**
 * A multiset of fixed-width integer tuples (rows as dictionary codes) over typed arrays, so
 * counting millions of rows allocates no per-row strings or objects. Written for the verifiers
 * on purpose, apart from the grouping kernels they check.
 *
 * Element `k` of a tuple lies in [-2, radices[k] - 2). When the product of the radices is an
 * exact double, a tuple is one mixed-radix number: a direct table indexes it when small, an
 * open-addressing table hashes it otherwise. Wider key spaces hash the tuples themselves.
 */
export class TupleCounts {
  /** Count by tuple id; ids are 0 … size - 1 in order of first appearance. */
  counts: Int32Array;
  size = 0;
  private readonly radices: Int32Array;
  /** Mixed-radix mode: the key space, or 0 when tuples are hashed. */
  private readonly space: number;
  /** Key space → id + 1, when the key space is small (0 is absent). */
  private readonly direct: Int32Array | undefined;
  /** Hashed keys: per slot the key and id + 1 (0 is empty). */
  private numbers: Float64Array;
  /** Hashed tuples: slot → id + 1 (0 is empty), and per id its hash and tuple. */
  private slots: Int32Array;
  private hashes: Int32Array;
  private keys: Int32Array;
  /** Slots - 1 of the hashed modes. */
  private mask: number;

  constructor(
    readonly width: number,
    radices: readonly number[],
    /** Largest key space indexed directly (4 bytes per key). */
    directLimit = 1 << 22,
  ) {
    this.radices = Int32Array.from(radices);
    let space = 1;
    for (const r of radices) space *= r;
    this.space = space <= Number.MAX_SAFE_INTEGER ? space : 0;
    this.direct = this.space > 0 && this.space <= directLimit ? new Int32Array(this.space) : undefined;
    const tuples = this.space === 0;
    this.slots = new Int32Array(tuples ? 2048 : 0);
    this.mask = 2047;
    this.counts = new Int32Array(1024);
    this.hashes = new Int32Array(tuples ? 1024 : 0);
    this.numbers = new Float64Array(this.direct === undefined && !tuples ? 2 * 2048 : 0);
    this.keys = new Int32Array(tuples ? 1024 * width : 0);
  }

  /** The id of `tuple[0, width)`, or -1 when it was never added. */
  find(tuple: Int32Array): number {
    return this.lookup(tuple, false);
  }

  /** The id of `tuple[0, width)`, adding it with count 0 when new. */
  intern(tuple: Int32Array): number {
    return this.lookup(tuple, true);
  }

  private lookup(tuple: Int32Array, add: boolean): number {
    if (this.space > 0) {
      let key = 0;
      for (let k = 0; k < this.width; k++) key = key * this.radices[k]! + tuple[k]! + 2;
      const direct = this.direct;
      if (direct !== undefined) {
        const id = direct[key]! - 1;
        if (id >= 0 || !add) return id;
        direct[key] = this.newId() + 1;
        return this.size - 1;
      }
      // Slot s holds its key and id + 1 side by side: one cache line per probe.
      const table = this.numbers;
      let s = mix((key % 4294967296) | 0, (key / 4294967296) | 0) & this.mask;
      for (;;) {
        const id = table[2 * s + 1]! - 1;
        if (id < 0) break;
        if (table[2 * s] === key) return id;
        s = (s + 1) & this.mask;
      }
      if (!add) return -1;
      const id = this.newId();
      table[2 * s] = key;
      table[2 * s + 1] = id + 1;
      if (this.size * 2 > this.mask + 1) this.rehashNumbers();
      return id;
    }
    let h = 0x9747b28c | 0;
    for (let k = 0; k < this.width; k++) h = mix(h, tuple[k]!);
    let s = h & this.mask;
    for (;;) {
      const id = this.slots[s]! - 1;
      if (id < 0) break;
      if (this.hashes[id] === h && this.equals(id, tuple)) return id;
      s = (s + 1) & this.mask;
    }
    if (!add) return -1;
    const id = this.newId();
    this.keys.set(tuple.subarray(0, this.width), id * this.width);
    return this.place(id, h, s);
  }

  private rehashNumbers(): void {
    const old = this.numbers;
    const mask = this.mask * 2 + 1;
    const table = new Float64Array((mask + 1) * 2);
    for (let o = 0; o < old.length; o += 2) {
      if (old[o + 1] === 0) continue;
      const key = old[o]!;
      let s = mix((key % 4294967296) | 0, (key / 4294967296) | 0) & mask;
      while (table[2 * s + 1] !== 0) s = (s + 1) & mask;
      table[2 * s] = key;
      table[2 * s + 1] = old[o + 1]!;
    }
    this.numbers = table;
    this.mask = mask;
  }

  /** A new id, the per-id arrays grown to hold it. */
  private newId(): number {
    const id = this.size++;
    if (id >= this.counts.length) {
      const n = this.counts.length * 2;
      this.counts = grown(this.counts, n);
      if (this.space === 0) {
        this.hashes = grown(this.hashes, n);
        this.keys = grown(this.keys, n * this.width);
      }
    }
    return id;
  }

  /** Records the new `id` with hash `h` at free slot `s`, rehashing into a larger table when half full. */
  private place(id: number, h: number, s: number): number {
    this.hashes[id] = h;
    this.slots[s] = id + 1;
    if (this.size * 2 > this.slots.length) {
      const slots = new Int32Array(this.slots.length * 2);
      const mask = slots.length - 1;
      for (let i = 0; i < this.size; i++) {
        let t = this.hashes[i]! & mask;
        while (slots[t] !== 0) t = (t + 1) & mask;
        slots[t] = i + 1;
      }
      this.slots = slots;
      this.mask = mask;
    }
    return id;
  }

  private equals(id: number, tuple: Int32Array): boolean {
    const w = this.width;
    const base = id * w;
    for (let k = 0; k < w; k++) if (this.keys[base + k] !== tuple[k]) return false;
    return true;
  }
}

/** A copy of `a` in an array of `n` elements (n ≥ its length). */
export function grown<T extends Int32Array | Float64Array>(a: T, n: number): T {
  const b = new (a.constructor as new (n: number) => T)(n);
  b.set(a);
  return b;
}

/** One murmur3-style round of `x` into `h`, then a finalizer. */
function mix(h: number, x: number): number {
  let k = Math.imul(x, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  h ^= Math.imul(k, 0x1b873593);
  h = (h << 13) | (h >>> 19);
  h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}
