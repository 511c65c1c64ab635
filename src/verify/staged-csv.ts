/**
 * Checks a staged data.csv against a table read from elsewhere (the release's data.arrow)
 * without decoding it: its own small RFC 4180 reader (not src/data/csv.ts, which the writer
 * shares) streams the file in chunks and compares every field's bytes with the UTF-8 bytes of
 * the table's value at that row and column. Memory stays at one chunk plus the dictionaries.
 */
import { closeSync, fstatSync, openSync, readSync } from 'node:fs';
import type { RawValues } from '../data/raw.ts';
import type { EncodedTable } from '../data/table.ts';
import { type CsvMatchKernel, type ExpectedCells, wasmCsvMatchKernel } from '../kernels/csv/match.ts';
import { rowNumbers } from '../util/int32s.ts';
import type { CodedTable, DecodedTable } from './common.ts';

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
const MORE = -1;
const DIFFERENT = -2;

/**
 * A column's dictionary as UTF-8: value `k` is `bytes[ends[k], ends[k + 1])`; `plain[k]` is 1
 * when it holds no quote, CR, LF or delimiter (unquoted, it ends right where the field does);
 * a column of rows' bytes is not searched for them (all 0: its fields are read as any field).
 */
interface CellBytes {
  readonly bytes: Uint8Array;
  readonly ends: Int32Array;
  readonly plain: Uint8Array;
  /** A column of rows' bytes (cell r is row r), not of distinct values. */
  readonly rows: boolean;
}

/** A column's values as its cells: a dictionary's entries, or (`raw`) its rows' bytes. */
function cellBytes(values: readonly string[] | RawValues, delimiter: Buffer): CellBytes {
  const rows = !Array.isArray(values);
  const raw = rows ? (values as RawValues) : utf8Of(values as readonly string[]);
  const size = raw.offsets.length - 1;
  const first = raw.offsets[0]!;
  const ends = first === 0 ? raw.offsets : shifted(raw.offsets, first);
  const bytes = raw.bytes.subarray(first, first + ends[size]!);
  // A column of rows' bytes is matched as values, quoted or not (expectedCells): its values are
  // not searched for special bytes, and the reader takes its rows the matcher leaves as it
  // takes any value that may need quotes.
  const plain = new Uint8Array(size);
  if (!rows) {
    plain.fill(1);
    for (const needle of [Buffer.of(QUOTE), Buffer.of(CR), Buffer.of(LF), delimiter])
      markSpecial(bytes, ends, needle, plain);
  }
  return { bytes, ends, plain, rows };
}

/** `from[start, end)` to `to` at `at`: short values byte by byte (a subarray costs more). Where it ends. */
function copyBytes(from: Uint8Array, start: number, end: number, to: Uint8Array, at: number): number {
  if (end - start > 32) to.set(from.subarray(start, end), at);
  else for (let j = start; j < end; j++) to[at + j - start] = from[j]!;
  return at + end - start;
}

/** The bytes of `bytes[start, end)` as a quoted field: its quotes doubled, between two quotes. */
function quotedLength(bytes: Uint8Array, start: number, end: number): number {
  let n = end - start + 2;
  for (let j = start; j < end; j++) if (bytes[j] === QUOTE) n++;
  return n;
}

/** `bytes[start, end)` written to `to` at `at` as a quoted field: where it ends. */
function quotedInto(bytes: Uint8Array, start: number, end: number, to: Uint8Array, at: number): number {
  let p = at;
  to[p++] = QUOTE;
  for (let j = start; j < end; j++) {
    to[p++] = bytes[j]!;
    if (bytes[j] === QUOTE) to[p++] = QUOTE;
  }
  to[p++] = QUOTE;
  return p;
}

/** `offsets`, each less `first` (a loop of its own, which the JIT optimizes alone). */
function shifted(offsets: Int32Array, first: number): Int32Array {
  const out = new Int32Array(offsets.length);
  for (let k = 0; k < offsets.length; k++) out[k] = offsets[k]! - first;
  return out;
}

/** Whether every code is in [0, size) (a loop of its own, which the JIT optimizes alone). */
function codesBelow(codes: Int32Array, size: number): boolean {
  for (let r = 0; r < codes.length; r++) if (!(codes[r]! >= 0 && codes[r]! < size)) return false;
  return true;
}

/** Strings as UTF-8 bytes, encoded here (not by the writers' encoder: the verifier stays apart). */
function utf8Of(values: readonly string[]): RawValues {
  const parts = values.map((v) => Buffer.from(v, 'utf8'));
  const offsets = new Int32Array(parts.length + 1);
  parts.forEach((p, k) => {
    offsets[k + 1] = offsets[k]! + p.length;
  });
  return { offsets, bytes: Buffer.concat(parts) };
}

/**
 * The values `k` whose bytes `bytes[ends[k], ends[k + 1])` hold `needle` (a quote, CR, LF or the
 * delimiter; as UTF-8, a character's bytes never occur inside another's, so a byte match is a
 * character match) marked 0 in `plain`. Each found by searching the column's bytes, the values
 * walked in order beside the matches (free text may hold a delimiter every few rows).
 */
function markSpecial(bytes: Uint8Array, ends: Int32Array, needle: Buffer, plain: Uint8Array): void {
  const all = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let k = 0;
  for (let at = all.indexOf(needle); at >= 0; ) {
    // The value holding byte `at`: the last k with ends[k] <= at (an empty value holds none).
    while (ends[k + 1]! <= at) k++;
    // A delimiter of several bytes counts only within one value.
    if (at + needle.length <= ends[k + 1]!) {
      plain[k] = 0;
      at = all.indexOf(needle, ends[k + 1]!);
    } else at = all.indexOf(needle, at + 1);
  }
}

/** The characters that start a formula: a CSV cell starting with one is escaped (csvText). */
const FORMULA_START = "=+-@\t\r'";

/**
 * The text a released value must have in the CSV (docs/release-spec.md, CSV formulas): with
 * the spec's `format.escapeFormulas`, a value starting with `=`, `+`, `-`, `@`, tab, CR or `'`
 * is written with one `'` in front; otherwise as it is. Stated here apart from the writer, so
 * that a cell the writer forgot to escape (or escaped without need) fails verification.
 */
export function csvText(value: string, escaped: boolean): string {
  return escaped && value.length > 0 && FORMULA_START.includes(value[0]!) ? `'${value}` : value;
}

/**
 * A coded table whose columns `raw[c]`, where given, are their rows' bytes instead of a
 * dictionary and codes (a column read as bytes: readArrow's `raw`).
 */
export type CsvTable = CodedTable & { readonly raw?: readonly (RawValues | undefined)[] };

/** A coded table's names and values as its CSV must hold them (escaping is one-to-one: codes stay). */
export function asCsvCoded<T extends CsvTable>(table: T, escaped: boolean): T {
  if (!escaped) return table;
  const text = (v: string) => csvText(v, true);
  return {
    ...table,
    names: table.names.map(text),
    dictionaries: table.dictionaries.map((d) => d.map(text)),
    ...(table.raw ? { raw: table.raw.map((r) => r && escapedRaw(r)) } : {}),
  };
}

/** Rows as bytes as csvText writes them: a `'` before a value that starts with a formula's character. */
function escapedRaw(raw: RawValues): RawValues {
  const { offsets, bytes } = raw;
  const n = offsets.length - 1;
  const starts = Uint8Array.from(FORMULA_START, (ch) => ch.charCodeAt(0));
  const escapes = (r: number) => offsets[r + 1]! > offsets[r]! && starts.includes(bytes[offsets[r]!]!);
  const out = new Int32Array(n + 1);
  let extra = 0;
  for (let r = 0; r < n; r++) {
    if (escapes(r)) extra++;
    out[r + 1] = offsets[r + 1]! - offsets[0]! + extra;
  }
  const to = new Uint8Array(out[n]!);
  for (let r = 0; r < n; r++) {
    let at = out[r]!;
    if (escapes(r)) to[at++] = 0x27;
    to.set(bytes.subarray(offsets[r]!, offsets[r + 1]!), at);
  }
  return { offsets: out, bytes: to };
}

/** A decoded table as its CSV must hold it. */
export function asCsvDecoded(table: DecodedTable, escaped: boolean): DecodedTable {
  if (!escaped) return table;
  const text = (v: string) => csvText(v, true);
  return { names: table.names.map(text), columns: table.columns.map((c) => c.map(text)) };
}

/** An encoded table (as read from Arrow) as its CSV must hold it. */
export function asCsvEncoded(table: EncodedTable, escaped: boolean): EncodedTable {
  if (!escaped) return table;
  const text = (v: string) => csvText(v, true);
  return {
    ...table,
    columns: table.columns.map((c) => ({ ...c, name: text(c.name), dictionary: c.dictionary.map(text) })),
  };
}

/**
 * The cells rows hold in the exact form a writer gives them, for the kernel: each value, quoted
 * when it holds a quote, CR, LF or the delimiter (its quotes doubled), then the delimiter after
 * it (`\n` after the last column's). A row written in another form (quoted when it need not be,
 * CR LF line ends) is left to the reader after the kernel. A column of rows' bytes is two tables:
 * its rows' values as they are, which the kernel compares with each field quoted or not (any
 * valid quoting, as the reader accepts; unquoted only when the value needs no quotes), then the
 * delimiter. None when a code is out of range (the file cannot hold such a table): checked
 * here, before the kernel's unchecked loads.
 */
function expectedCells(
  cells: CellBytes[],
  codes: Int32Array[],
  delimiter: Buffer,
): ExpectedCells[] | undefined {
  const lineEnd = Buffer.of(LF);
  const expected: ExpectedCells[] = [];
  for (const [c, cell] of cells.entries()) {
    const after = c + 1 < cells.length ? delimiter : lineEnd;
    const size = cell.ends.length - 1;
    const column = codes[c]!;
    if (cell.rows) {
      // Row r's value is its own (the codes are the row numbers): as many rows as the table's.
      // The matcher compares it quoted or not, as its bytes (no copy of them quoted).
      if (size !== column.length) return undefined;
      const tail = new Uint8Array((after.length + 7) & ~7);
      tail.set(after);
      expected.push(
        {
          bytes: cell.bytes,
          starts: cell.ends,
          lengths: new Int32Array(0),
          codes: column,
          values: delimiter[0]!,
        },
        {
          bytes: tail,
          starts: Int32Array.of(0),
          lengths: Int32Array.of(after.length),
          codes: new Int32Array(column.length),
        },
      );
      continue;
    }
    if (!codesBelow(column, size)) return undefined;
    const lengths = new Int32Array(size);
    const starts = new Int32Array(size);
    let end = 0;
    for (let k = 0; k < size; k++) {
      const value = cell.plain[k]
        ? cell.ends[k + 1]! - cell.ends[k]!
        : quotedLength(cell.bytes, cell.ends[k]!, cell.ends[k + 1]!);
      lengths[k] = value + after.length;
      starts[k] = end;
      end += (lengths[k]! + 7) & ~7;
    }
    const bytes = new Uint8Array(end);
    for (let k = 0; k < size; k++) {
      const at = cell.plain[k]
        ? copyBytes(cell.bytes, cell.ends[k]!, cell.ends[k + 1]!, bytes, starts[k]!)
        : quotedInto(cell.bytes, cell.ends[k]!, cell.ends[k + 1]!, bytes, starts[k]!);
      copyBytes(after, 0, after.length, bytes, at);
    }
    expected.push({ bytes, starts, lengths, codes: column });
  }
  return expected;
}

/**
 * True when the CSV file at `path` (header, then one line per row, fields split on
 * `delimiter`, quoted fields unescaped) holds exactly `table`: the same column names, the same
 * number of rows, and the same value in every cell, in the same order.
 */
export function csvHoldsTable(
  path: string,
  delimiter: string,
  table: CsvTable,
  chunkBytes = 8 * 1024 * 1024,
  kernel: CsvMatchKernel = wasmCsvMatchKernel,
): boolean {
  const fd = openSync(path, 'r');
  try {
    return new StagedCsv(fd, delimiter, table, Math.max(16, chunkBytes), kernel).matches();
  } finally {
    closeSync(fd);
  }
}

class StagedCsv {
  private buf: Buffer;
  private filled = 0;
  private eof = false;
  private readonly delim: Buffer;
  private readonly cells: CellBytes[];
  /** Per column, each row's cell (a raw column's row r is its cell r). */
  private readonly codes: Int32Array[];
  private readonly width: number;

  constructor(
    private readonly fd: number,
    delimiter: string,
    private readonly table: CsvTable,
    chunk: number,
    private readonly kernel: CsvMatchKernel,
  ) {
    this.buf = Buffer.allocUnsafeSlow(Math.min(chunk, fstatSync(fd).size + 1));
    this.delim = Buffer.from(delimiter, 'utf8');
    const raw = table.raw ?? [];
    this.cells = table.dictionaries.map((d, c) => cellBytes(raw[c] ?? d, this.delim));
    this.codes = table.codes.map((codes, c) => (raw[c] ? rowNumbers(table.rowCount) : codes));
    this.width = table.names.length;
  }

  /**
   * The rows: a kernel takes those in the exact form a writer gives them (src/kernels/csv/
   * match.ts); where it stops, this reader takes one row (quoted fields, CR LF line ends),
   * then the kernel again.
   */
  private body(start: number): number {
    const { rowCount } = this.table;
    const expected = expectedCells(this.cells, this.codes, this.delim);
    if (!expected) return DIFFERENT;
    const matcher = this.kernel.open(expected, rowCount);
    try {
      matcher.load(this.buf, this.filled);
      let pos = start;
      for (let row = 0; row < rowCount; ) {
        const fast = matcher.match(pos, row);
        row = fast.row;
        pos = fast.pos;
        if (row === rowCount) break;
        const end = this.rows(pos, row, row + 1);
        if (end.pos === DIFFERENT) return DIFFERENT;
        if (end.row > row) {
          row = end.row;
          pos = end.pos;
        } else {
          // The row is not all in the buffer.
          if (this.eof) return DIFFERENT;
          pos = this.refill(pos);
          matcher.load(this.buf, this.filled);
        }
      }
      return pos;
    } finally {
      matcher.close();
    }
  }

  matches(): boolean {
    if (this.delim.length === 0 || this.delim.includes(QUOTE) || this.delim.includes(LF)) return false;
    if (this.delim.includes(CR) || this.width === 0) return false;
    this.fill(0);
    // A UTF-8 byte order mark is not part of the first name (as in src/data/csv.ts).
    let pos =
      this.filled >= 3 && this.buf[0] === 0xef && this.buf[1] === 0xbb && this.buf[2] === 0xbf ? 3 : 0;
    for (;;) {
      const names: string[] = [];
      const end = this.header(pos, names);
      if (end === DIFFERENT) return false;
      if (end !== MORE) {
        if (names.join('\u0000') !== this.table.names.join('\u0000')) return false;
        pos = end;
        break;
      }
      if (this.eof) return false;
      pos = this.refill(pos);
    }
    pos = this.body(pos);
    if (pos === DIFFERENT) return false;
    // Nothing may follow the last row.
    if (pos < this.filled) return false;
    if (this.eof) return true;
    this.refill(pos);
    return this.filled === 0;
  }

  /** Keeps the unfinished bytes from `pos` on, reads behind them (a larger buffer when full); the new pos. */
  private refill(pos: number): number {
    const keep = this.filled - pos;
    if (pos === 0 && keep === this.buf.length) {
      const larger = Buffer.allocUnsafeSlow(this.buf.length * 2);
      this.buf.copy(larger, 0, 0, keep);
      this.buf = larger;
    } else {
      this.buf.copyWithin(0, pos, this.filled);
    }
    this.fill(keep);
    return 0;
  }

  /** Reads from the file until the buffer is full or the file ends. */
  private fill(from: number): void {
    let at = from;
    while (at < this.buf.length) {
      const n = readSync(this.fd, this.buf, at, this.buf.length - at, null);
      if (n === 0) {
        this.eof = true;
        break;
      }
      at += n;
    }
    this.filled = at;
  }

  private delimiterAt(p: number): number {
    const d = this.delim;
    if (p + d.length > this.filled) return this.eof ? 0 : MORE;
    for (let k = 0; k < d.length; k++) if (this.buf[p + k] !== d[k]) return 0;
    return 1;
  }

  /** After a row's last field: the position behind its line end. */
  private lineEnd(p: number): number {
    const buf = this.buf;
    if (p >= this.filled) return this.eof ? p : MORE;
    if (buf[p] === LF) return p + 1;
    if (buf[p] !== CR) return DIFFERENT;
    if (p + 1 >= this.filled) return this.eof ? DIFFERENT : MORE;
    return buf[p + 1] === LF ? p + 2 : DIFFERENT;
  }

  /**
   * Compares rows from `row` on, starting at `start`, with the table until the buffer ends in
   * an unfinished row or the table's rows are done: where it stopped, or pos DIFFERENT.
   */
  private rows(start: number, from: number, to: number): { pos: number; row: number } {
    const { buf, filled, eof, width, delim } = this;
    const rowCount = this.table.rowCount;
    const codes = this.codes;
    const bytesOf = this.cells.map((c) => c.bytes);
    const endsOf = this.cells.map((c) => c.ends);
    const plainOf = this.cells.map((c) => c.plain);
    const d0 = delim[0]!;
    const dlen = delim.length;
    let row = from;
    let rowStart = start;
    rows: for (; row < Math.min(rowCount, to); row++) {
      let p = rowStart;
      for (let c = 0; c < width; c++) {
        const bytes = bytesOf[c]!;
        const ends = endsOf[c]!;
        const k = codes[c]![row]!;
        let i = ends[k]!;
        const stop = ends[k + 1]!;
        if (dlen === 1 && plainOf[c]![k] === 1 && p + stop - i <= filled && buf[p] !== QUOTE) {
          // A one-byte delimiter and a value without special bytes: the field is equal when
          // its bytes come next, followed by a delimiter or line end (checked below). Only a
          // row the kernel stopped at comes here: byte by byte.
          for (; i < stop; i++, p++) if (buf[p] !== bytes[i]) return { pos: DIFFERENT, row };
        } else if (p < filled && buf[p] === QUOTE) {
          p++;
          for (;;) {
            if (p >= filled) {
              if (eof) return { pos: DIFFERENT, row };
              break rows;
            }
            const b = buf[p]!;
            if (b === QUOTE) {
              if (p + 1 >= filled && !eof) break rows;
              if (p + 1 >= filled || buf[p + 1] !== QUOTE) {
                p++;
                break;
              }
              p++;
            }
            if (i >= stop || bytes[i] !== b) return { pos: DIFFERENT, row };
            i++;
            p++;
          }
        } else {
          for (;;) {
            if (p >= filled) {
              if (!eof) break rows;
              break;
            }
            const b = buf[p]!;
            if (b === LF || b === CR) break;
            if (b === d0) {
              if (dlen === 1) break;
              const at = this.delimiterAt(p);
              if (at === MORE) break rows;
              if (at === 1) break;
            }
            if (b === QUOTE || i >= stop || bytes[i] !== b) return { pos: DIFFERENT, row };
            i++;
            p++;
          }
        }
        if (i !== stop) return { pos: DIFFERENT, row };
        if (c + 1 < width) {
          if (dlen === 1 && p < filled) {
            if (buf[p] !== d0) return { pos: DIFFERENT, row };
            p++;
          } else {
            const at = this.delimiterAt(p);
            if (at === MORE) break rows;
            if (at !== 1) return { pos: DIFFERENT, row };
            p += dlen;
          }
        }
      }
      const end = this.lineEnd(p);
      if (end === MORE) break;
      if (end === DIFFERENT) return { pos: DIFFERENT, row };
      rowStart = end;
    }
    return { pos: rowStart, row };
  }

  /** Reads the header's names; the position behind it, MORE or DIFFERENT. */
  private header(start: number, names: string[]): number {
    const buf = this.buf;
    const filled = this.filled;
    let p = start;
    for (;;) {
      const field: number[] = [];
      if (p < filled && buf[p] === QUOTE) {
        p++;
        for (;;) {
          if (p >= filled) return this.eof ? DIFFERENT : MORE;
          const b = buf[p]!;
          if (b === QUOTE) {
            if (p + 1 >= filled && !this.eof) return MORE;
            if (buf[p + 1] !== QUOTE || p + 1 >= filled) {
              p++;
              break;
            }
            p++;
          }
          field.push(b);
          p++;
        }
      } else {
        for (;;) {
          if (p >= filled) {
            if (!this.eof) return MORE;
            break;
          }
          const b = buf[p]!;
          if (b === LF || b === CR) break;
          if (b === this.delim[0]) {
            const at = this.delimiterAt(p);
            if (at === MORE) return MORE;
            if (at === 1) break;
          }
          if (b === QUOTE) return DIFFERENT;
          field.push(b);
          p++;
        }
      }
      try {
        names.push(UTF8.decode(Uint8Array.from(field)));
      } catch {
        return DIFFERENT;
      }
      const at = this.delimiterAt(p);
      if (at === MORE) return MORE;
      if (at === 1) {
        p += this.delim.length;
        continue;
      }
      return this.lineEnd(p);
    }
  }
}
