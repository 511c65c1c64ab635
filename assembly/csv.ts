// CSV rows from dictionary codes: each row's cells copied from per-column tables of distinct
// cells (each cell's bytes with its delimiter or line end), 8 bytes at a time. The wrapper
// (src/kernels/csv/wasm.ts) owns the layout and has range-checked every code against its
// table before the unchecked loops below.
//
// Layout (byte pointers):
//   codes    width columns of n i32 codes, one after another
//   starts   width tables of i32 byte offsets: column c's cell k is bytes [starts[c][k], +lengths)
//            of the cells blob, padded to 8 bytes (at most 7 bytes past a cell may be copied)
//   lengths  width tables of i32 byte lengths, cell for cell
//   tables   width × 2 i32: per column the byte pointers of its starts and lengths tables
//   kinds    width i32: 0 for such a column; for a column of values (a column of rows' bytes),
//            0x100 | the delimiter's first byte: value k is bytes [starts[k], starts[k + 1]) of
//            the cells (no lengths table), written as they are, or quoted (its quotes doubled)
//            when it holds a quote, CR, LF or that byte; the delimiter after it is a column of its own
//   out      the output, with 8 spare bytes past its last byte written
//
// A row is written whole while the output has not passed `limit` at its start: the caller
// sizes `limit` so that the widest row still fits. Returns the next row; the next byte goes
// to the i32 at `result`.

export function csvRows(
  codes: usize,
  n: i32,
  width: i32,
  from: i32,
  tables: usize,
  cells: usize,
  out: usize,
  at: i32,
  limit: i32,
  result: usize,
  kinds: usize,
): i32 {
  let p = at;
  let r = from;
  for (; r < n && p <= limit; r++) {
    for (let c = 0; c < width; c++) {
      const k = load<i32>(codes + ((<usize>c * <usize>n + <usize>r) << 2));
      const t = tables + ((<usize>c) << 3);
      const kind = load<i32>(kinds + ((<usize>c) << 2));
      if (kind != 0) {
        p = valueWrite(<usize>load<u32>(t), k, cells, out, p, kind & 0xff);
        continue;
      }
      const s = load<i32>(<usize>load<u32>(t) + (<usize>k << 2));
      const len = load<i32>(<usize>load<u32>(t, 4) + (<usize>k << 2));
      const src = cells + <usize>s;
      const dst = out + <usize>p;
      for (let j = 0; j < len; j += 8) store<u64>(dst + <usize>j, load<u64>(src + <usize>j));
      p += len;
    }
  }
  store<i32>(result, p);
  return r;
}

// Rows of a CSV file compared with the cells they must hold, byte for byte (the verifier's
// fast path: a row in the exact form a writer gives it). The wrapper (src/kernels/csv/match.ts)
// owns the layout and has range-checked every code.
//
// Layout (byte pointers):
//   codes    width columns of n i32 codes, one after another
//   tables   width × 2 i32: per column the byte pointers of its starts and lengths tables
//   starts   per column, cell k's expected bytes at `cells + starts[k]` (8-byte aligned, zero
//            after its end up to the next multiple of 8), `lengths[k]` of them: the value and
//            the delimiter or line end after it; a length of -1 marks a value not compared here
//   kinds    width i32: 0 for such a column; for a column of values (a column of rows' bytes),
//            0x100 | the delimiter's first byte: value k is bytes [starts[k], starts[k + 1]) of
//            the cells, unquoted (no lengths table), and the field holding it is either quoted
//            (its quotes doubled: any valid quoting) or its bytes as they are, which must then
//            hold no quote, CR, LF or that byte (a field the writer would have had to quote)
//   buf      the file's bytes [0, filled), and 8 readable bytes after them
//
// Compares rows from `from` on, from byte `at`; stops at the first row that is not whole in
// the buffer, holds a value not compared here, or differs. Returns that row; the byte it
// starts at goes to the i32 at `result`.

export function csvMatch(
  codes: usize,
  n: i32,
  width: i32,
  from: i32,
  tables: usize,
  cells: usize,
  buf: usize,
  at: i32,
  filled: i32,
  result: usize,
  kinds: usize,
): i32 {
  let p = at;
  let r = from;
  for (; r < n; r++) {
    const end = rowMatch(codes, n, width, r, tables, cells, buf, p, filled, kinds);
    if (end < 0) break;
    p = end;
  }
  store<i32>(result, p);
  return r;
}

/** Row `r` compared from byte `p`: the byte after it, or -1 where it stops. */
function rowMatch(
  codes: usize,
  n: i32,
  width: i32,
  r: i32,
  tables: usize,
  cells: usize,
  buf: usize,
  p: i32,
  filled: i32,
  kinds: usize,
): i32 {
  let q = p;
  for (let c = 0; c < width; c++) {
    const k = load<i32>(codes + ((<usize>c * <usize>n + <usize>r) << 2));
    const t = tables + ((<usize>c) << 3);
    const kind = load<i32>(kinds + ((<usize>c) << 2));
    if (kind != 0) {
      q = valueMatch(<usize>load<u32>(t), k, cells, buf, q, filled, kind & 0xff);
      if (q < 0) return -1;
      continue;
    }
    const len = load<i32>(<usize>load<u32>(t, 4) + (<usize>k << 2));
    if (len < 0 || q + len > filled) return -1;
    const cell = cells + <usize>load<i32>(<usize>load<u32>(t) + (<usize>k << 2));
    const got = buf + <usize>q;
    let j = 0;
    for (; j + 8 <= len; j += 8) if (load<u64>(got + <usize>j) != load<u64>(cell + <usize>j)) return -1;
    if (j < len) {
      const mask: u64 = (<u64>1 << (<u64>(len - j) << 3)) - 1;
      if (((load<u64>(got + <usize>j) ^ load<u64>(cell + <usize>j)) & mask) != 0) return -1;
    }
    q += len;
  }
  return q;
}

const QUOTE: u8 = 0x22;
const ONES: u64 = 0x0101010101010101;
const HIGHS: u64 = 0x8080808080808080;

/**
 * The bytes of `w` that are `b` (`spread`: b in every byte), each flagged by its high bit. A
 * borrow runs only upward, so a byte is flagged wrongly only above one flagged rightly.
 */
// @ts-ignore: decorator
@inline
function byteFlags(w: u64, spread: u64): u64 {
  const x = w ^ spread;
  return (x - ONES) & ~x & HIGHS;
}

/**
 * Whether `len` bytes at `value` hold a quote, CR, LF or `special`: a field that must be quoted.
 * A word at a time, the last one too: the layouts keep 8 readable bytes past every value, and
 * the bytes past this one are masked off (a wrong flag lies only above a right one).
 */
function holdsSpecial(value: usize, len: i32, special: i32): bool {
  const quotes = ONES * <u64>QUOTE;
  const crs = ONES * 0x0d;
  const lfs = ONES * 0x0a;
  const delims = ONES * <u64>special;
  let j = 0;
  for (; j < len; j += 8) {
    const w = load<u64>(value + <usize>j);
    let flags = byteFlags(w, quotes) | byteFlags(w, crs) | byteFlags(w, lfs) | byteFlags(w, delims);
    if (len - j < 8) flags &= HIGHS >> (<u64>(8 - (len - j)) << 3);
    if (flags != 0) return true;
  }
  return false;
}

/**
 * Value k of a column of values (bytes [starts[k], starts[k + 1]) of the cells) written at byte
 * `p` of `out`, quoted when it must be: the byte after it.
 */
function valueWrite(starts: usize, k: i32, cells: usize, out: usize, p: i32, special: i32): i32 {
  const s = load<i32>(starts + (<usize>k << 2));
  const len = load<i32>(starts + ((<usize>k + 1) << 2)) - s;
  const value = cells + <usize>s;
  const dst = out + <usize>p;
  if (!holdsSpecial(value, len, special)) {
    for (let j = 0; j < len; j += 8) store<u64>(dst + <usize>j, load<u64>(value + <usize>j));
    return p + len;
  }
  store<u8>(dst, QUOTE);
  let q = dst + 1;
  for (let j = 0; j < len; j++) {
    const b = load<u8>(value + <usize>j);
    store<u8>(q++, b);
    if (b == QUOTE) store<u8>(q++, QUOTE);
  }
  store<u8>(q, QUOTE);
  return p + <i32>(q + 1 - dst);
}

/**
 * Value k of a column of values (bytes [starts[k], starts[k + 1]) of the cells) compared with
 * the field at byte `q`: the byte after the field, or -1 where the row is left to the reader.
 */
function valueMatch(starts: usize, k: i32, cells: usize, buf: usize, q: i32, filled: i32, special: i32): i32 {
  const s = load<i32>(starts + (<usize>k << 2));
  const len = load<i32>(starts + ((<usize>k + 1) << 2)) - s;
  const value = cells + <usize>s;
  if (q < filled && load<u8>(buf + <usize>q) == QUOTE) return quotedMatch(value, len, buf, q + 1, filled);
  if (q + len > filled) return -1;
  const got = buf + <usize>q;
  // A word at a time, the last one's bytes past the value masked off (8 readable bytes follow
  // both the file's bytes and every value).
  for (let j = 0; j < len; j += 8) {
    let diff = load<u64>(got + <usize>j) ^ load<u64>(value + <usize>j);
    if (len - j < 8) diff &= ~(<u64>0) >> (<u64>(8 - (len - j)) << 3);
    if (diff != 0) return -1;
  }
  return holdsSpecial(value, len, special) ? -1 : q + len;
}

/**
 * A quoted field from byte `p` (after its opening quote) compared with `len` bytes at `value`:
 * the byte after its closing quote, or -1 (a difference, or a field not whole in the buffer).
 */
function quotedMatch(value: usize, len: i32, buf: usize, p: i32, filled: i32): i32 {
  let j = 0;
  for (;;) {
    if (p >= filled) return -1;
    const b = load<u8>(buf + <usize>p);
    if (b == QUOTE) {
      // Escaped or closing: the next byte tells (not in the buffer: the reader refills).
      if (p + 1 >= filled) return -1;
      if (load<u8>(buf + <usize>p + 1) != QUOTE) break;
      p++;
    }
    if (j >= len || load<u8>(value + <usize>j) != b) return -1;
    j++;
    p++;
  }
  return j == len ? p + 1 : -1;
}
