/**
 * Columns that pass through unchanged (insensitive ones: no model, metric or hierarchy reads
 * them) carried as their rows' UTF-8 bytes, as an Arrow Utf8 vector holds them: one buffer of
 * every row's value and n + 1 offsets. Such a column is never a dictionary on its way from the
 * shards to the release, so a column of distinct values (a free-text note, a timestamp) costs
 * its bytes, not a string and a map entry per value: rows move by gathering byte ranges, and
 * the released files hold it as it is (an Arrow Utf8 column, a Parquet column of plain byte
 * arrays, CSV cells copied from the bytes).
 */
import { isAscii } from 'node:buffer';
import type { GatherBytesKernel, ShuffleBytesKernel } from '../kernels/gather-bytes/kernel.ts';
import { copyValue, viewOf } from '../kernels/gather-bytes/reference.ts';
import { wasmGatherBytes, wasmShuffleBytes } from '../kernels/gather-bytes/wasm.ts';

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
  return gatherJoined([raw], rows);
}

/**
 * `raw`'s rows split into `parts` (row r goes to part `partOf[r]`, in order; -1: to none): each
 * row's place in one buffer of every part's bytes, part after part, found in one pass, and the
 * bytes written there by the gather kernel while the column is read once in turn; each part's
 * bytes are then a view of that buffer. Gathering each part's rows from the whole column instead
 * streams the column through the cache once a part.
 */
export function scatterRaw(
  raw: RawValues,
  partOf: Int32Array,
  parts: number,
  kernel: GatherBytesKernel = wasmGatherBytes,
): RawValues[] {
  const { offsets } = raw;
  const n = rawLength(raw);
  if (partOf.length !== n) throw new RangeError(`${partOf.length} parts given for ${n} rows`);
  const rows = new Int32Array(parts);
  const totals = new Int32Array(parts + 1);
  for (let r = 0; r < n; r++) {
    const p = partOf[r]!;
    if (p < 0) continue;
    rows[p]!++;
    totals[p + 1]! += offsets[r + 1]! - offsets[r]!;
  }
  // Part p's bytes start at totals[p] of the buffer.
  for (let p = 0; p < parts; p++) totals[p + 1]! += totals[p]!;
  const out = Array.from({ length: parts }, (_, p) => new Int32Array(rows[p]! + 1));
  const targets = new Int32Array(n);
  const filled = new Int32Array(parts);
  for (let r = 0; r < n; r++) {
    const p = partOf[r]!;
    if (p < 0) {
      targets[r] = -1;
      continue;
    }
    const to = out[p]!;
    const at = to[filled[p]!]!;
    targets[r] = totals[p]! + at;
    to[++filled[p]!] = at + offsets[r + 1]! - offsets[r]!;
  }
  const bytes = new Uint8Array(totals[parts]!);
  kernel([raw], targets, bytes);
  return out.map((o, p) => ({ offsets: o, bytes: bytes.subarray(totals[p]!, totals[p + 1]!) }));
}

/**
 * Rows `rows` of the pieces joined one after another (row j is joined row `rows[j]`), without
 * joining them. Rows in increasing order (a shard's rows of one output part) are read in turn;
 * others (a shuffle) are written where they go while the pieces are read in turn: a random
 * read costs a cache miss a row, which the copy then waits for, a random write does not wait.
 */
export function gatherJoined(
  pieces: readonly RawValues[],
  rows: Int32Array,
  kernel: ShuffleBytesKernel = wasmShuffleBytes,
): RawValues {
  const n = pieces.reduce((sum, p) => sum + rawLength(p), 0);
  const m = rows.length;
  let increasing = true;
  for (let j = 0; j < m; j++) {
    const r = rows[j]!;
    if (!(r >= 0 && r < n)) throw new RangeError(`row ${r} is not among the ${n} rows`);
    if (j > 0 && r <= rows[j - 1]!) increasing = false;
  }
  // Rows in order: only theirs are read (a shard's rows of one part, one part of many, costs
  // its own rows, not the shard's).
  if (increasing) return gatherIncreasing(pieces, rows);
  return kernel(pieces, rows) ?? gatherRepeated(concatRaw(pieces), rows);
}

/** gatherJoined's rows when they increase: the pieces walked once, each row read where it is. */
function gatherIncreasing(pieces: readonly RawValues[], rows: Int32Array): RawValues {
  const m = rows.length;
  const out = new Int32Array(m + 1);
  let total = 0;
  for (let j = 0, p = 0, base = 0; j < m; j++) {
    const r = rows[j]!;
    while (r >= base + rawLength(pieces[p]!)) base += rawLength(pieces[p++]!);
    const { offsets } = pieces[p]!;
    total += offsets[r - base + 1]! - offsets[r - base]!;
    out[j + 1] = total;
  }
  const to = new Uint8Array(total);
  const into = viewOf(to);
  const views = pieces.map((piece) => viewOf(piece.bytes));
  for (let j = 0, p = 0, base = 0; j < m; j++) {
    const r = rows[j]!;
    while (r >= base + rawLength(pieces[p]!)) base += rawLength(pieces[p++]!);
    const { offsets, bytes } = pieces[p]!;
    copyValue(bytes, views[p]!, offsets[r - base]!, offsets[r - base + 1]!, to, into, out[j]!);
  }
  return { offsets: out, bytes: to };
}

/** gatherJoined's rows when some are asked for more than once: each read where it is. */
function gatherRepeated(joined: RawValues, rows: Int32Array): RawValues {
  const { offsets, bytes } = joined;
  const out = new Int32Array(rows.length + 1);
  for (let j = 0; j < rows.length; j++) out[j + 1] = out[j]! + offsets[rows[j]! + 1]! - offsets[rows[j]!]!;
  const to = new Uint8Array(out[rows.length]!);
  const from = viewOf(bytes);
  const into = viewOf(to);
  for (let j = 0; j < rows.length; j++) {
    const r = rows[j]!;
    copyValue(bytes, from, offsets[r]!, offsets[r + 1]!, to, into, out[j]!);
  }
  return { offsets: out, bytes: to };
}

/** Pieces of one column, one after another. */
export function concatRaw(pieces: readonly RawValues[]): RawValues {
  if (pieces.length === 1 && pieces[0]!.offsets[0] === 0) return pieces[0]!;
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
  const source = viewOf(dictionary.bytes);
  const into = viewOf(bytes);
  for (let j = 0; j < n; j++) {
    const c = codes[from + j]!;
    copyValue(dictionary.bytes, source, d[c]!, d[c + 1]!, bytes, into, offsets[j]!);
  }
  return { offsets, bytes };
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
