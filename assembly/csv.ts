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
