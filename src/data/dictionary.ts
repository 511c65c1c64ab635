/**
 * A column's dictionary keyed by the UTF-8 bytes of its values: a field is looked up straight
 * from the input's bytes, and only a value seen for the first time is decoded to a string.
 */

/**
 * Cells whose slots and entries codeMany reads ahead at a time: their cache lines (two a cell)
 * stay in a core's cache until the lookups use them, where a block of 65,536 cells' lines
 * (8 MiB) would be gone again.
 */
const TOUCH_CELLS = 4096;

export class ByteDictionary {
  /** code → value, in order of first appearance. */
  readonly values: string[] = [];
  /**
   * Open-addressing table: slot i holds a value's hash and code + 1 (0: empty) side by side, so
   * a probe reads one cache line and the hash rules out other values there.
   */
  private slots = new Int32Array(2 * 64);
  private mask = 63;
  /**
   * Per code, side by side (16 bytes, one cache line): where its bytes start in `arena`, their
   * length, and its first 8 bytes (little-endian, zero-padded), so a value of up to 8 bytes (a
   * postcode, an age, a code) is compared without reading the arena.
   */
  private entries = new Int32Array(4 * 16);
  private arena = new Uint8Array(256);
  private arenaLength = 0;

  get size(): number {
    return this.values.length;
  }

  /** `code` with the hash computed here (FNV-1a over the bytes), for callers that do not scan. */
  codeOf(bytes: Buffer, start: number, end: number): number {
    let h = 0x811c9dc5 | 0;
    for (let j = start; j < end; j++) h = Math.imul(h ^ bytes[j]!, 0x01000193);
    return this.code(bytes, start, end, h);
  }

  /**
   * `code` of `n` cells of `bytes` (cell k: `[starts[k], ends[k])` with hash `hashes[k]`) into
   * `codes[rows[k]]`, in order. Their slots and entries are read first, all of them: loads that
   * do not wait on each other miss the cache side by side, where lookups one after another
   * wait for each miss in turn (a table of 10⁵ postcodes is larger than a core's cache).
   */
  codeMany(
    bytes: Buffer,
    n: number,
    rows: Int32Array,
    starts: Int32Array,
    ends: Int32Array,
    hashes: Int32Array,
    codes: Int32Array,
  ): void {
    for (let from = 0; from < n; from += TOUCH_CELLS) {
      const to = Math.min(n, from + TOUCH_CELLS);
      this.touch(hashes, from, to);
      for (let k = from; k < to; k++) codes[rows[k]!] = this.code(bytes, starts[k]!, ends[k]!, hashes[k]!);
    }
  }

  /** The slots and entries of cells [from, to) read (codeMany's first reads). */
  private touch(hashes: Int32Array, from: number, to: number): void {
    const slots = this.slots;
    const mask = this.mask;
    const entries = this.entries;
    let touched = 0;
    for (let k = from; k < to; k++) {
      const h = hashes[k]!;
      const slot = slots[2 * ((h ^ (h >>> 15)) & mask) + 1]!;
      if (slot > 0) touched ^= entries[4 * (slot - 1)]!;
    }
    this.touched = touched;
  }

  /** What codeMany's first reads gave (nothing to use): kept so that they are not optimized away. */
  touched = 0;

  /** The code of the value whose UTF-8 bytes are `bytes[start, end)` with hash `h`, added if new. */
  code(bytes: Buffer, start: number, end: number, h: number): number {
    const slots = this.slots;
    const mask = this.mask;
    const len = end - start;
    let i = (h ^ (h >>> 15)) & mask;
    for (;;) {
      const k = slots[2 * i + 1]!;
      if (k === 0) break;
      if (slots[2 * i] === h) {
        const code = k - 1;
        const entries = this.entries;
        const e = 4 * code;
        if (
          entries[e + 1] === len &&
          entries[e + 2] === word(bytes, start, end) &&
          entries[e + 3] === word(bytes, start + 4, end)
        ) {
          if (len <= 8) return code;
          const arena = this.arena;
          let at = entries[e]! + 8;
          let j = start + 8;
          while (j < end && arena[at] === bytes[j]) {
            at++;
            j++;
          }
          if (j === end) return code;
        }
      }
      i = (i + 1) & mask;
    }
    return this.add(bytes, start, end, h, i);
  }

  private add(bytes: Buffer, start: number, end: number, h: number, slot: number): number {
    const code = this.values.length;
    const len = end - start;
    if (4 * code === this.entries.length) this.entries = grown(this.entries, 8 * code);
    if (this.arenaLength + len > this.arena.length) {
      const next = new Uint8Array(Math.max(this.arena.length * 2, this.arenaLength + len));
      next.set(this.arena.subarray(0, this.arenaLength));
      this.arena = next;
    }
    this.arena.set(bytes.subarray(start, end), this.arenaLength);
    this.entries[4 * code] = this.arenaLength;
    this.entries[4 * code + 1] = len;
    this.entries[4 * code + 2] = word(bytes, start, end);
    this.entries[4 * code + 3] = word(bytes, start + 4, end);
    this.arenaLength += len;
    this.values.push(bytes.toString('utf8', start, end));
    this.slots[2 * slot] = h;
    this.slots[2 * slot + 1] = code + 1;
    if ((code + 1) * 2 > this.mask) this.rehash();
    return code;
  }

  private rehash(): void {
    const size = 2 * (this.mask + 1);
    const old = this.slots;
    const slots = new Int32Array(2 * size);
    const mask = size - 1;
    for (let k = 0; k < old.length; k += 2) {
      if (old[k + 1] === 0) continue;
      const h = old[k]!;
      let i = (h ^ (h >>> 15)) & mask;
      while (slots[2 * i + 1] !== 0) i = (i + 1) & mask;
      slots[2 * i] = h;
      slots[2 * i + 1] = old[k + 1]!;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

/** The 4 bytes from `start` (those before `end`; the others 0), little-endian. */
function word(bytes: Uint8Array, start: number, end: number): number {
  if (start + 4 <= end)
    return bytes[start]! | (bytes[start + 1]! << 8) | (bytes[start + 2]! << 16) | (bytes[start + 3]! << 24);
  let w = 0;
  for (let j = start, shift = 0; j < end; j++, shift += 8) w |= bytes[j]! << shift;
  return w;
}

function grown(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(size);
  next.set(a);
  return next;
}
