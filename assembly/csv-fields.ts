// The CSV reader's plain rows (src/data/csv.ts, CsvParser): a window of bytes split into rows,
// as many whole rows as there are before the first row the reader itself must parse (a quoted
// field holding a line break or followed by other text, a coded one holding an escaped quote,
// a blank line, a row of empty fields (delimiters, spaces and tabs only), a row of another
// width, one not ended in the window). A quoted field's value is what lies between its quotes,
// `""` a quote in it (free text often holds the delimiter).
// Per coded column each row's field (its start, end and FNV-1a hash, looked up after), per raw
// column its bytes copied out with their lengths; omitted columns are only skipped. The
// plain-TS loop (src/kernels/csv-fields/reference.ts) is its reference: the same rows, words
// and bytes.
//
// Header words at `state` (the wrapper's):
//   0 the window's bytes (and 8 readable bytes after them)   1 their count   2 the delimiter (one byte)   3 columns
//   4 per column its kind (i32: 0 omitted, 1 coded, 2 raw)
//   5 per column its output's index among its kind's
//   6 most rows   7 coded starts (`most` words per coded column, column after column)
//   8 coded ends   9 coded hashes (starts and ends are places in the caller's bytes: the
//   window's own plus `base`)   10 raw offsets (`most` + 1 words per raw column, the first 0)
//   11 per raw column the address of its bytes' output (room for the window's bytes and 8 more)
//   12 per raw column the bytes written there (i32, zero at the start)
//   13 out: the bytes the rows took   14 base
// Returns the rows.

import { word } from './header';

const QUOTE: i32 = 0x22;
const LF: i32 = 0x0a;
const CR: i32 = 0x0d;
const SPACE: i32 = 0x20;
const TAB: i32 = 0x09;
const HASH_SEED: i32 = <i32>0x811c9dc5;
const FNV_PRIME: i32 = 0x01000193;

const CODED: i32 = 1;
const RAW: i32 = 2;

export function csvFields(state: usize): i32 {
  const bytes = <usize>word(state, 0);
  const n = word(state, 1);
  const delimiter = word(state, 2);
  const width = word(state, 3);
  const kinds = <usize>word(state, 4);
  const slots = <usize>word(state, 5);
  const most = word(state, 6);
  const starts = <usize>word(state, 7);
  const ends = <usize>word(state, 8);
  const hashes = <usize>word(state, 9);
  const rawOffsets = <usize>word(state, 10);
  const rawOut = <usize>word(state, 11);
  const written = <usize>word(state, 12);
  const base = word(state, 14);
  let rows = 0;
  let pos = 0;
  while (rows < most) {
    const rowStart = pos;
    let c = 0;
    let whole = false;
    // Whether a field is quoted or holds a byte other than a space or a tab: a row without
    // (an empty row, as a spreadsheet exports its used range) is left to the reader.
    let value = false;
    while (pos < n && c < width) {
      const kind = load<i32>(kinds + (<usize>c << 2));
      let s = pos;
      // What ends the field: the delimiter, a line break (LF, CR LF), or nothing the kernel
      // reads (-1: the window's end, or a row left to the reader).
      let end = -1;
      let escaped = false;
      let e = 0;
      if (<i32>load<u8>(bytes + <usize>pos) === QUOTE) {
        s = pos + 1;
        let q = s;
        let closed = false;
        for (;;) {
          // The next quote, or a line break inside the quotes (the reader's: it counts lines).
          q = nextStop(bytes, q, n, QUOTE);
          if (q + 1 >= n || <i32>load<u8>(bytes + <usize>q) !== QUOTE) break;
          if (<i32>load<u8>(bytes + <usize>(q + 1)) !== QUOTE) {
            closed = true;
            break;
          }
          escaped = true;
          q += 2;
        }
        if (!closed || (escaped && kind === CODED)) break;
        e = q;
        pos = q + 1;
        const b = <i32>load<u8>(bytes + <usize>pos);
        if (b === delimiter) end = delimiter;
        else if (b === LF) end = LF;
        else if (b === CR && pos + 1 < n && <i32>load<u8>(bytes + <usize>(pos + 1)) === LF) end = LF;
        else break;
        value = true;
      } else {
        for (;;) {
          pos = nextStop(bytes, pos, n, delimiter);
          if (pos >= n) break;
          const b = <i32>load<u8>(bytes + <usize>pos);
          if (b !== CR) {
            end = b === LF ? LF : delimiter;
            break;
          }
          if (pos + 1 >= n) break;
          if (<i32>load<u8>(bytes + <usize>(pos + 1)) === LF) {
            end = LF;
            break;
          }
          pos++; // a lone CR is data
        }
        if (end < 0) break;
        e = pos;
        for (let p = s; p < e && !value; p++) {
          const b = <i32>load<u8>(bytes + <usize>p);
          value = b !== SPACE && b !== TAB;
        }
      }
      const at = (<usize>load<i32>(slots + (<usize>c << 2)) * <usize>most + <usize>rows) << 2;
      if (kind === CODED) {
        let h = HASH_SEED;
        for (let p = bytes + <usize>s, z = bytes + <usize>e; p < z; p++) h = (h ^ <i32>load<u8>(p)) * FNV_PRIME;
        store<i32>(starts + at, s + base);
        store<i32>(ends + at, e + base);
        store<i32>(hashes + at, h);
      } else if (kind === RAW) {
        // Where the column's bytes end so far: a row left to the reader is written over.
        const slot = <usize>load<i32>(slots + (<usize>c << 2));
        const to = <usize>load<i32>(rawOut + (slot << 2)) + <usize>load<i32>(written + (slot << 2));
        const length = escaped ? copyUnescaped(bytes + <usize>s, bytes + <usize>e, to) : e - s;
        // Eight bytes at a time (the output has room for 8 past its last field, and the bytes
        // read past a field are within the window's region or the padding after it).
        if (!escaped)
          for (let p = bytes + <usize>s, z = bytes + <usize>e, t = to; p < z; p += 8, t += 8) store<u64>(t, load<u64>(p));
        // The field's length, made the row's end among the column's bytes once the row is whole.
        store<i32>(rawOffsets + ((slot * <usize>(most + 1) + <usize>rows + 1) << 2), length);
      }
      c++;
      if (end === LF) {
        pos += <i32>load<u8>(bytes + <usize>pos) === CR ? 2 : 1;
        whole = c === width;
        break;
      }
      pos++;
    }
    if (!whole || !value) {
      pos = rowStart;
      break;
    }
    // The row's raw bytes kept: its lengths become offsets.
    for (let k = 0; k < width; k++) {
      if (load<i32>(kinds + (<usize>k << 2)) !== RAW) continue;
      const slot = <usize>load<i32>(slots + (<usize>k << 2));
      const count = written + (slot << 2);
      const offset = rawOffsets + ((slot * <usize>(most + 1) + <usize>rows + 1) << 2);
      const total = load<i32>(count) + load<i32>(offset);
      store<i32>(offset, total);
      store<i32>(count, total);
    }
    rows++;
  }
  store<i32>(state + 52, pos);
  return rows;
}

// A quoted value's bytes `[from, end)` copied to `to`, each `""` as one quote: its length.
function copyUnescaped(from: usize, end: usize, to: usize): i32 {
  let t = to;
  for (let p = from; p < end; t++) {
    const b = load<u8>(p);
    store<u8>(t, b);
    p += b === <u8>QUOTE ? 2 : 1;
  }
  return <i32>(t - to);
}

// The first byte at or after `pos` that is the delimiter, LF or CR (`n` when none is before it):
// 16 bytes compared at a time while 16 remain (the bytes past `n` read are ignored).
function nextStop(bytes: usize, pos: i32, n: i32, delimiter: i32): i32 {
  const d = i8x16.splat(<i8>delimiter);
  const lf = i8x16.splat(<i8>LF);
  const cr = i8x16.splat(<i8>CR);
  while (pos + 16 <= n) {
    const v = v128.load(bytes + <usize>pos);
    const stops = i8x16.bitmask(v128.or(v128.or(i8x16.eq(v, d), i8x16.eq(v, lf)), i8x16.eq(v, cr)));
    if (stops !== 0) return pos + ctz(stops);
    pos += 16;
  }
  while (pos < n) {
    const b = <i32>load<u8>(bytes + <usize>pos);
    if (b === delimiter || b === LF || b === CR) return pos;
    pos++;
  }
  return n;
}
