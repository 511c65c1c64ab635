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
): i32 {
  let p = at;
  let r = from;
  for (; r < n && p <= limit; r++) {
    for (let c = 0; c < width; c++) {
      const k = load<i32>(codes + ((<usize>c * <usize>n + <usize>r) << 2));
      const t = tables + ((<usize>c) << 3);
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
): i32 {
  let p = at;
  let r = from;
  for (; r < n; r++) {
    const end = rowMatch(codes, n, width, r, tables, cells, buf, p, filled);
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
): i32 {
  let q = p;
  for (let c = 0; c < width; c++) {
    const k = load<i32>(codes + ((<usize>c * <usize>n + <usize>r) << 2));
    const t = tables + ((<usize>c) << 3);
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
