/**
 * Columns that pass through unchanged (insensitive ones: no model, metric or hierarchy reads
 * them) carried as their rows' UTF-8 bytes, as an Arrow Utf8 vector holds them: one buffer of
 * every row's value and n + 1 offsets. Such a column is never a dictionary on its way from the
 * shards to the release, so a column of distinct values (a free-text note, a timestamp) costs
 * its bytes, not a string and a map entry per value: rows move by gathering byte ranges, and
 * only the writers of a released file code it as the file needs it (firstUseDictionary).
 */
import { isAscii } from 'node:buffer';

/** Row i's value is `bytes[offsets[i], offsets[i + 1])`, UTF-8. */
export interface RawValues {
  readonly offsets: Int32Array;
  readonly bytes: Uint8Array;
}

/** The number of rows of `raw`. */
export function rawLength(raw: RawValues): number {
  return raw.offsets.length - 1;
}

/** Rows `rows` of `raw` (row j is `raw`'s row `rows[j]`), or its first `rows` rows. */
export function gatherRaw(raw: RawValues, rows: Int32Array | number): RawValues {
  const { offsets, bytes } = raw;
  if (typeof rows === 'number') {
    if (rows === rawLength(raw) && offsets[0] === 0) return raw;
    const end = offsets[rows]!;
    const first = offsets[0]!;
    const out = new Int32Array(rows + 1);
    for (let j = 0; j <= rows; j++) out[j] = offsets[j]! - first;
    return { offsets: out, bytes: bytes.slice(first, end) };
  }
  const n = rows.length;
  const out = new Int32Array(n + 1);
  let total = 0;
  for (let j = 0; j < n; j++) {
    const r = rows[j]!;
    total += offsets[r + 1]! - offsets[r]!;
    out[j + 1] = total;
  }
  const to = new Uint8Array(total);
  for (let j = 0; j < n; j++) {
    const r = rows[j]!;
    copyBytes(bytes, offsets[r]!, offsets[r + 1]!, to, out[j]!);
  }
  return { offsets: out, bytes: to };
}

/** Pieces of one column, one after another. */
export function concatRaw(pieces: readonly RawValues[]): RawValues {
  let rows = 0;
  let total = 0;
  for (const p of pieces) {
    rows += rawLength(p);
    total += p.offsets[rawLength(p)]! - p.offsets[0]!;
  }
  const offsets = new Int32Array(rows + 1);
  const bytes = new Uint8Array(total);
  let row = 0;
  let at = 0;
  for (const p of pieces) {
    const n = rawLength(p);
    const first = p.offsets[0]!;
    for (let j = 1; j <= n; j++) offsets[row + j] = at + p.offsets[j]! - first;
    bytes.set(p.bytes.subarray(first, p.offsets[n]!), at);
    row += n;
    at = offsets[row]!;
  }
  return { offsets, bytes };
}

/** Each row's value from its code into a dictionary held as bytes (`dictionary`'s entry c is code c). */
export function rawOfCodes(dictionary: RawValues, codes: Int32Array, from = 0, to = codes.length): RawValues {
  const d = dictionary.offsets;
  const n = to - from;
  const offsets = new Int32Array(n + 1);
  let total = 0;
  for (let j = 0; j < n; j++) {
    const c = codes[from + j]!;
    total += d[c + 1]! - d[c]!;
    offsets[j + 1] = total;
  }
  const bytes = new Uint8Array(total);
  for (let j = 0; j < n; j++) {
    const c = codes[from + j]!;
    copyBytes(dictionary.bytes, d[c]!, d[c + 1]!, bytes, offsets[j]!);
  }
  return { offsets, bytes };
}

/**
 * The rows' distinct values in order of first use (as bytes) and each row's code into them: what
 * a released dictionary column holds (compactDictionary over the values as strings gives the same
 * entries, since UTF-8 is one-to-one). Values are compared by their bytes, through an
 * open-addressing table of FNV-1a hashes.
 */
export function firstUseDictionary(raw: RawValues): { dictionary: RawValues; codes: Int32Array } {
  const { offsets, bytes } = raw;
  const n = rawLength(raw);
  let size = 64;
  while (size < 2 * n) size *= 2;
  const mask = size - 1;
  /** Slot → entry + 1 (0: empty). */
  const slots = new Int32Array(size);
  /** Entry → its first row, and its hash. */
  const firstRow = new Int32Array(n);
  const hashes = new Int32Array(n);
  const codes = new Int32Array(n);
  let entries = 0;
  let total = 0;
  for (let r = 0; r < n; r++) {
    const start = offsets[r]!;
    const end = offsets[r + 1]!;
    let h = 0x811c9dc5 | 0;
    for (let j = start; j < end; j++) h = Math.imul(h ^ bytes[j]!, 0x01000193);
    let i = (h ^ (h >>> 15)) & mask;
    let code = -1;
    for (;;) {
      const k = slots[i]!;
      if (k === 0) break;
      const e = k - 1;
      if (
        hashes[e] === h &&
        sameBytes(bytes, offsets[firstRow[e]!]!, offsets[firstRow[e]! + 1]!, start, end)
      ) {
        code = e;
        break;
      }
      i = (i + 1) & mask;
    }
    if (code < 0) {
      code = entries++;
      slots[i] = code + 1;
      firstRow[code] = r;
      hashes[code] = h;
      total += end - start;
    }
    codes[r] = code;
  }
  const dOffsets = new Int32Array(entries + 1);
  const dBytes = new Uint8Array(total);
  for (let e = 0; e < entries; e++) {
    const r = firstRow[e]!;
    const at = dOffsets[e]!;
    copyBytes(bytes, offsets[r]!, offsets[r + 1]!, dBytes, at);
    dOffsets[e + 1] = at + offsets[r + 1]! - offsets[r]!;
  }
  return { dictionary: { offsets: dOffsets, bytes: dBytes }, codes };
}

/** Rows `[from, to)` of `raw` as strings. */
export function rawStrings(raw: RawValues, from = 0, to = rawLength(raw)): string[] {
  const { offsets, bytes } = raw;
  const first = offsets[from]!;
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset + first, offsets[to]! - first);
  const out = new Array<string>(to - from);
  // Every byte ASCII: one decode of the whole run, then slices of it.
  if (isAscii(buffer)) {
    const joined = buffer.toString('latin1');
    for (let r = from; r < to; r++)
      out[r - from] = joined.slice(offsets[r]! - first, offsets[r + 1]! - first);
    return out;
  }
  for (let r = from; r < to; r++)
    out[r - from] = buffer.toString('utf8', offsets[r]! - first, offsets[r + 1]! - first);
  return out;
}

function sameBytes(bytes: Uint8Array, a: number, aEnd: number, b: number, bEnd: number): boolean {
  if (aEnd - a !== bEnd - b) return false;
  for (; a < aEnd; a++, b++) if (bytes[a] !== bytes[b]) return false;
  return true;
}

/** Short values byte by byte (a typed array's set() costs more than the copy under ~32 bytes). */
function copyBytes(from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): void {
  if (end - start > 32) {
    to.set(from.subarray(start, end), at);
    return;
  }
  for (let j = start; j < end; j++) to[at++] = from[j]!;
}

const released = new WeakMap<RawValues, { dictionary: RawValues; codes: Int32Array }>();

/** firstUseDictionary, computed once per column for the writers that each write it (Arrow, CSV, Parquet). */
export function releasedDictionary(raw: RawValues): { dictionary: RawValues; codes: Int32Array } {
  let d = released.get(raw);
  if (!d) released.set(raw, (d = firstUseDictionary(raw)));
  return d;
}
