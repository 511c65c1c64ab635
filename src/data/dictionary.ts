/**
 * A column's dictionary keyed by the UTF-8 bytes of its values: a field is looked up straight
 * from the input's bytes, and only a value seen for the first time is decoded to a string.
 */

export class ByteDictionary {
  /** code → value, in order of first appearance. */
  readonly values: string[] = [];
  /** Open-addressing table of code + 1 (0 is empty). */
  private slots = new Int32Array(64);
  private mask = 63;
  /** Per code: hash, and where its bytes are in `arena`. */
  private hashes = new Int32Array(16);
  private starts = new Int32Array(16);
  private lengths = new Int32Array(16);
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

  /** The code of the value whose UTF-8 bytes are `bytes[start, end)` with hash `h`, added if new. */
  code(bytes: Buffer, start: number, end: number, h: number): number {
    const slots = this.slots;
    const mask = this.mask;
    const len = end - start;
    let i = (h ^ (h >>> 15)) & mask;
    for (;;) {
      const k = slots[i]!;
      if (k === 0) break;
      const code = k - 1;
      if (this.hashes[code] === h && this.lengths[code] === len) {
        const arena = this.arena;
        let at = this.starts[code]!;
        let j = start;
        while (j < end && arena[at] === bytes[j]) {
          at++;
          j++;
        }
        if (j === end) return code;
      }
      i = (i + 1) & mask;
    }
    return this.add(bytes, start, end, h, i);
  }

  private add(bytes: Buffer, start: number, end: number, h: number, slot: number): number {
    const code = this.values.length;
    const len = end - start;
    if (code === this.hashes.length) {
      this.hashes = grown(this.hashes, code * 2);
      this.starts = grown(this.starts, code * 2);
      this.lengths = grown(this.lengths, code * 2);
    }
    if (this.arenaLength + len > this.arena.length) {
      const next = new Uint8Array(Math.max(this.arena.length * 2, this.arenaLength + len));
      next.set(this.arena.subarray(0, this.arenaLength));
      this.arena = next;
    }
    this.arena.set(bytes.subarray(start, end), this.arenaLength);
    this.hashes[code] = h;
    this.starts[code] = this.arenaLength;
    this.lengths[code] = len;
    this.arenaLength += len;
    this.values.push(bytes.toString('utf8', start, end));
    this.slots[slot] = code + 1;
    if ((code + 1) * 2 > this.mask) this.rehash();
    return code;
  }

  private rehash(): void {
    const size = this.slots.length * 2;
    const slots = new Int32Array(size);
    const mask = size - 1;
    for (let code = 0; code < this.values.length; code++) {
      const h = this.hashes[code]!;
      let i = (h ^ (h >>> 15)) & mask;
      while (slots[i] !== 0) i = (i + 1) & mask;
      slots[i] = code + 1;
    }
    this.slots = slots;
    this.mask = mask;
  }
}

function grown(a: Int32Array, size: number): Int32Array<ArrayBuffer> {
  const next = new Int32Array(size);
  next.set(a);
  return next;
}
