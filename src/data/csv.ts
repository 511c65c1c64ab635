/**
 * CSV input and output. Reading decodes the file's bytes in 8 MB chunks, runs them through a
 * resumable RFC 4180 state machine and dictionary-encodes every field as it completes, so memory
 * holds the bytes, one chunk of text, each column's distinct values and the codes — never all
 * rows' strings.
 */
import { readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { InputError, OutputError } from '../errors.ts';
import type { EncodedColumn, EncodedTable, OutputColumn } from './table.ts';

/** Delimiters tried by detection, in tie-break order. */
const CANDIDATES = [';', ',', '\t'] as const;
/** Bytes decoded per step; small enough to keep one decoded chunk cheap, large enough to be fast. */
const CHUNK_BYTES = 8 * 1024 * 1024;

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;

export interface ReadCsvOptions {
  /** `;`, `,` or tab (any single character other than a quote, CR or LF is accepted). */
  delimiter?: string;
}

/** How a delimiter is named in messages: a tab is invisible when quoted. */
export function delimiterName(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : `'${delimiter}'`;
}

/**
 * Reads a CSV file with a header row into a dictionary-encoded table.
 * @throws InputError with codes E_INPUT_MISSING, E_INPUT_EMPTY, E_INPUT_NO_ROWS, E_INPUT_ENCODING,
 *   E_CSV_DELIMITER, E_CSV_HEADER, E_CSV_RAGGED, E_CSV_QUOTE.
 */
export function readCsv(path: string, options: ReadCsvOptions = {}): EncodedTable {
  const file = basename(path);
  const bytes = readInputBytes(path);

  if (
    bytes.length >= 2 &&
    ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff))
  ) {
    throw new InputError(
      'E_INPUT_ENCODING',
      `${file}: the file is UTF-16 (it starts with a UTF-16 ${bytes[0] === 0xff ? 'little' : 'big'}-endian byte order mark)`,
      `save it as UTF-8, e.g. \`iconv -f utf-16 -t utf-8 ${file} > ${file.replace(/(\.[^.]*)?$/, '-utf8$1')}\``,
    );
  }
  // A UTF-8 BOM is not part of the first column's name.
  let start = bytes.length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  if (start >= bytes.length) {
    throw new InputError(
      'E_INPUT_EMPTY',
      `${file}: the file is empty`,
      'expected a header row and data rows',
    );
  }

  // ignoreBOM keeps a U+FEFF that happens to start a later chunk: only the file's BOM is dropped.
  const decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });
  let parser: CsvParser | undefined;
  while (start < bytes.length) {
    const end = chunkEnd(bytes, start);
    const slice = bytes.subarray(start, end);
    let text: string;
    try {
      text = decoder.decode(slice);
    } catch {
      // Parse the valid prefix so the error can name the row and column of the bad bytes.
      const bad = start + firstInvalidUtf8(slice);
      let prefix = '';
      try {
        prefix = decoder.decode(bytes.subarray(start, bad));
      } catch {
        // The validator and the decoder disagree: the error names where this chunk starts.
      }
      parser ??= new CsvParser(
        file,
        pickDelimiter(file, prefix, options.delimiter),
        options.delimiter !== undefined,
      );
      parser.feed(prefix);
      throw parser.encodingError(bad);
    }
    parser ??= new CsvParser(
      file,
      pickDelimiter(file, text, options.delimiter),
      options.delimiter !== undefined,
    );
    parser.feed(text);
    start = end;
  }
  return parser!.finish(path);
}

/**
 * The bytes of an input file.
 * @throws InputError E_INPUT_MISSING if it does not exist or cannot be read.
 */
export function readInputBytes(path: string): Uint8Array {
  const file = basename(path);
  try {
    return readFileSync(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      throw new InputError(
        'E_INPUT_MISSING',
        `${file}: input file not found (${resolve(path)})`,
        'check the path, or run from the directory the path is relative to',
      );
    }
    throw new InputError(
      'E_INPUT_MISSING',
      `${file}: input file cannot be read (${resolve(path)}: ${code ?? 'unknown error'})`,
      'make sure the path names a readable file, not a directory',
    );
  }
}

/** Ends a chunk after its last LF (or at a UTF-8 character boundary) so no character is split. */
function chunkEnd(bytes: Uint8Array, start: number): number {
  const limit = start + CHUNK_BYTES;
  if (limit >= bytes.length) return bytes.length;
  const lf = bytes.lastIndexOf(LF, limit - 1);
  if (lf >= start) return lf + 1;
  let end = limit;
  // Back off continuation bytes (10xxxxxx) so a multi-byte sequence stays whole.
  for (let k = 0; k < 3 && end > start + 1 && (bytes[end]! & 0xc0) === 0x80; k++) end--;
  return end;
}

/** Offset of the first byte that starts an invalid or truncated UTF-8 sequence. */
function firstInvalidUtf8(b: Uint8Array): number {
  const n = b.length;
  let i = 0;
  while (i < n) {
    const c = b[i]!;
    if (c < 0x80) {
      i++;
      continue;
    }
    let need: number;
    let lo = 0x80;
    let hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf) need = 1;
    else if (c >= 0xe0 && c <= 0xef) {
      need = 2;
      if (c === 0xe0) lo = 0xa0;
      else if (c === 0xed) hi = 0x9f; // no surrogates
    } else if (c >= 0xf0 && c <= 0xf4) {
      need = 3;
      if (c === 0xf0) lo = 0x90;
      else if (c === 0xf4) hi = 0x8f;
    } else return i;
    if (i + need >= n) return i; // truncated at the end
    const c1 = b[i + 1]!;
    if (c1 < lo || c1 > hi) return i;
    for (let k = 2; k <= need; k++) {
      const ck = b[i + k]!;
      if ((ck & 0xc0) !== 0x80) return i;
    }
    i += need + 1;
  }
  return n;
}

/** The explicit delimiter, or the candidate seen most often outside quotes in the header line. */
function pickDelimiter(file: string, text: string, given: string | undefined): string {
  if (given !== undefined) {
    if (given.length !== 1 || given === '"' || given === '\r' || given === '\n') {
      throw new InputError(
        'E_CSV_DELIMITER',
        `${file}: the delimiter must be a single character other than a quote or a line break`,
        "use ';', ',' or a tab, or leave the delimiter out to detect it from the header",
      );
    }
    return given;
  }
  const counts = [0, 0, 0];
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === '"') quoted = !quoted;
    else if (!quoted) {
      if (c === '\n' || c === '\r') break;
      const k = CANDIDATES.indexOf(c as (typeof CANDIDATES)[number]);
      if (k >= 0) counts[k]!++;
    }
  }
  let best = 0;
  for (let k = 1; k < counts.length; k++) if (counts[k]! > counts[best]!) best = k;
  // No candidate at all: a single-column file; `;` is the tool's default delimiter.
  return counts[best]! > 0 ? CANDIDATES[best]! : ';';
}

const S_FIELD_START = 0;
const S_UNQUOTED = 1;
/** Saw CR in an unquoted field: a line end if LF follows, else a literal CR. */
const S_UNQUOTED_CR = 2;
const S_QUOTED = 3;
/** Saw a quote inside a quoted field: an escaped quote or the closing quote. */
const S_QUOTE_IN_QUOTED = 4;
/** Saw CR right after a closing quote: only LF may follow. */
const S_CLOSED_CR = 5;

/** Resumable RFC 4180 parser: text may arrive in any number of pieces. */
class CsvParser {
  private readonly delim: number;
  private state = S_FIELD_START;
  /** Text of the field being parsed. */
  private field = '';
  /** Fields completed in the row being parsed. */
  private fieldCount = 0;
  /** Whether the field being parsed opened with a quote (`""` is a value, not a blank line). */
  private fieldQuoted = false;
  /** Whether the row's first field is empty and unquoted: with one field, the line is blank. */
  private firstBlank = false;
  /** Codes of the row being parsed, committed when it ends; -1 defers a blank first field. */
  private rowCodes = new Int32Array(0);
  /** Blank lines not yet committed: dropped at the end of the file, else rows (or errors). */
  private pendingBlanks = 0;
  private pendingRow = 0;
  private pendingLine = 0;
  /** The header's fields while row 1 is parsed. */
  private headerFields: string[] = [];
  /** Whether the header's first field was quoted. */
  private headerQuoted = false;
  /** Column count (from the header). */
  private width = 0;
  /** 1-based row (record) being parsed; the header is row 1. */
  private row = 1;
  /** 1-based physical line being parsed, and the line the current row started on. */
  private line = 1;
  private rowLine = 1;
  /** Where the open quote of the current field was. */
  private quoteRow = 0;
  private quoteLine = 0;

  private names: string[] = [];
  private maps: Map<string, number>[] = [];
  private dictionaries: string[][] = [];
  private codes: Int32Array[] = [];
  private capacity = 0;
  private rowCount = 0;

  constructor(
    private readonly file: string,
    private readonly delimiter: string,
    /** Whether the delimiter was given (not detected): a mismatch is then worth naming. */
    private readonly explicit = false,
  ) {
    this.delim = delimiter.charCodeAt(0);
  }

  feed(s: string): void {
    const n = s.length;
    const delim = this.delim;
    let i = 0;
    while (i < n) {
      switch (this.state) {
        case S_FIELD_START: {
          if (s.charCodeAt(i) === QUOTE) {
            this.state = S_QUOTED;
            this.fieldQuoted = true;
            this.quoteRow = this.row;
            this.quoteLine = this.line;
            i++;
          } else {
            this.state = S_UNQUOTED;
          }
          break;
        }
        case S_UNQUOTED: {
          let j = i;
          let c = 0;
          while (j < n) {
            c = s.charCodeAt(j);
            if (c === delim || c === LF || c === CR) break;
            j++;
          }
          if (j > i) this.field = this.field === '' ? s.slice(i, j) : this.field + s.slice(i, j);
          if (j === n) {
            i = n;
          } else if (c === delim) {
            this.endField();
            this.state = S_FIELD_START;
            i = j + 1;
          } else if (c === LF) {
            this.endField();
            this.endRow();
            i = j + 1;
          } else {
            this.state = S_UNQUOTED_CR;
            i = j + 1;
          }
          break;
        }
        case S_UNQUOTED_CR: {
          if (s.charCodeAt(i) === LF) {
            this.endField();
            this.endRow();
            i++;
          } else {
            // A lone CR is data; the current character is handled as part of the field.
            this.field += '\r';
            this.state = S_UNQUOTED;
          }
          break;
        }
        case S_QUOTED: {
          const q = s.indexOf('"', i);
          const end = q < 0 ? n : q;
          // Bounded to the field: an unbounded indexOf would rescan the line for every quoted field.
          for (let k = i; k < end; k++) if (s.charCodeAt(k) === LF) this.line++;
          if (end > i) this.field += s.slice(i, end);
          if (q < 0) {
            i = n;
          } else {
            this.state = S_QUOTE_IN_QUOTED;
            i = q + 1;
          }
          break;
        }
        case S_QUOTE_IN_QUOTED: {
          const c = s.charCodeAt(i);
          if (c === QUOTE) {
            this.field += '"';
            this.state = S_QUOTED;
          } else if (c === delim) {
            this.endField();
            this.state = S_FIELD_START;
          } else if (c === LF) {
            this.endField();
            this.endRow();
          } else if (c === CR) {
            this.state = S_CLOSED_CR;
          } else {
            throw this.textAfterQuote();
          }
          i++;
          break;
        }
        case S_CLOSED_CR: {
          if (s.charCodeAt(i) !== LF) throw this.textAfterQuote();
          this.endField();
          this.endRow();
          i++;
          break;
        }
      }
    }
  }

  /** Ends the input: completes a last row without a trailing newline and builds the table. */
  finish(source: string): EncodedTable {
    switch (this.state) {
      case S_FIELD_START:
        // After a delimiter the row has a last, empty field; after a newline there is no row.
        // Blank lines still pending are trailing ones: they are not rows.
        if (this.fieldCount > 0) {
          this.endField();
          this.endRow();
        }
        break;
      case S_QUOTED:
        throw new InputError(
          'E_CSV_QUOTE',
          `${this.where(this.quoteRow, this.quoteLine)}, ${this.columnLabel(this.fieldCount)}: ` +
            'a quoted field opened here is never closed',
          'close the quote; a quote inside a quoted field is written as two quotes ("")',
        );
      default:
        // A CR at the very end is a line end, not data.
        this.endField();
        this.endRow();
    }
    if (this.row === 1) {
      throw new InputError(
        'E_INPUT_EMPTY',
        `${this.file}: the file is empty`,
        'expected a header row and data rows',
      );
    }
    if (this.rowCount === 0) {
      throw new InputError(
        'E_INPUT_NO_ROWS',
        `${this.file}: the header has no data rows below it`,
        'add data rows under the header row',
      );
    }
    const columns: EncodedColumn[] = this.names.map((name, c) => ({
      name,
      dictionary: this.dictionaries[c]!,
      codes: this.codes[c]!.slice(0, this.rowCount),
    }));
    return { source, rowCount: this.rowCount, columns, delimiter: this.delimiter };
  }

  /** The error for invalid UTF-8 at byte `offset`, named by the row and column being parsed. */
  encodingError(offset: number): InputError {
    return new InputError(
      'E_INPUT_ENCODING',
      `${this.where(this.row, this.rowLine)}, ${this.columnLabel(this.fieldCount)}: ` +
        `bytes that are not valid UTF-8 (byte offset ${offset})`,
      'save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 in.csv > out.csv`',
    );
  }

  private endField(): void {
    const c = this.fieldCount++;
    const value = this.field;
    this.field = '';
    this.state = S_FIELD_START;
    if (c === 0) this.firstBlank = value === '' && !this.fieldQuoted;
    if (this.row === 1 && c === 0) this.headerQuoted = this.fieldQuoted;
    this.fieldQuoted = false;
    if (this.row === 1) {
      this.headerFields.push(value);
      return;
    }
    // Extra fields of a ragged row are only counted; the row fails at its end.
    if (c >= this.width) return;
    // A blank line must not add '' to the dictionary if it turns out to be trailing.
    this.rowCodes[c] = c === 0 && this.firstBlank ? -1 : this.encode(c, value);
  }

  private encode(c: number, value: string): number {
    const map = this.maps[c]!;
    let code = map.get(value);
    if (code === undefined) {
      const dict = this.dictionaries[c]!;
      code = dict.length;
      const own = detach(value);
      dict.push(own);
      map.set(own, code);
    }
    return code;
  }

  private endRow(): void {
    if (this.row === 1) {
      this.setHeader(this.headerFields);
      this.headerFields = [];
    } else if (this.fieldCount === 1 && this.firstBlank) {
      // Decided by what follows: trailing blank lines are not rows.
      if (this.pendingBlanks++ === 0) {
        this.pendingRow = this.row;
        this.pendingLine = this.rowLine;
      }
    } else {
      const width = this.width;
      if (this.fieldCount !== width) throw this.ragged(this.row, this.rowLine, this.fieldCount, false);
      if (this.pendingBlanks > 0) {
        if (width !== 1) throw this.ragged(this.pendingRow, this.pendingLine, 1, true);
        // In a one-column file a blank line is an empty value.
        for (; this.pendingBlanks > 0; this.pendingBlanks--) this.commit(-1);
      }
      this.commit(this.rowCodes[0]!);
    }
    this.fieldCount = 0;
    this.row++;
    this.line++;
    this.rowLine = this.line;
  }

  /** Appends the row in `rowCodes`, with `first` as the first column's code (-1: empty value). */
  private commit(first: number): void {
    const r = this.rowCount;
    if (r === this.capacity) this.grow();
    this.codes[0]![r] = first < 0 ? this.encode(0, '') : first;
    for (let c = 1; c < this.width; c++) this.codes[c]![r] = this.rowCodes[c]!;
    this.rowCount = r + 1;
  }

  private ragged(row: number, line: number, count: number, blank: boolean): InputError {
    return new InputError(
      'E_CSV_RAGGED',
      `${this.where(row, line)}: ${count} field${count === 1 ? '' : 's'}, the header has ${this.width}` +
        (blank ? ' (the line is empty)' : ''),
      blank
        ? 'remove empty lines between rows'
        : `fields are split on ${delimiterName(this.delimiter)}; put fields that contain ` +
            `${delimiterName(this.delimiter)} or line breaks in double quotes, or set the right delimiter`,
    );
  }

  private setHeader(names: string[]): void {
    if (this.explicit && names.length === 1 && !this.headerQuoted) {
      const other = CANDIDATES.find((d) => d !== this.delimiter && names[0]!.includes(d));
      if (other !== undefined) {
        throw new InputError(
          'E_CSV_DELIMITER',
          `${this.file} row 1: the header is a single column when split on ${delimiterName(this.delimiter)} ` +
            `(the delimiter set in the spec), but it contains ${delimiterName(other)}`,
          `the file seems to be ${delimiterName(other)}-separated: set "format": { "delimiter": ` +
            `"${other === '\t' ? '\\t' : other}" }, or leave the delimiter out to detect it`,
        );
      }
    }
    const seen = new Map<string, number>();
    for (let c = 0; c < names.length; c++) {
      const name = names[c]!;
      if (name.trim() === '') {
        throw new InputError(
          'E_CSV_HEADER',
          `${this.file} row 1: column ${c + 1} of ${names.length} has an empty name`,
          `give every column a name in the header row (fields are split on ${delimiterName(this.delimiter)})`,
        );
      }
      const first = seen.get(name);
      if (first !== undefined) {
        throw new InputError(
          'E_CSV_HEADER',
          `${this.file} row 1: column name "${name}" appears twice (columns ${first + 1} and ${c + 1})`,
          'rename one of the columns so every name in the header is unique',
        );
      }
      seen.set(name, c);
    }
    this.names = names;
    this.width = names.length;
    this.rowCodes = new Int32Array(names.length);
    this.maps = names.map(() => new Map<string, number>());
    this.dictionaries = names.map(() => []);
    this.capacity = 1024;
    this.codes = names.map(() => new Int32Array(this.capacity));
  }

  private grow(): void {
    this.capacity *= 2;
    this.codes = this.codes.map((old) => {
      const next = new Int32Array(this.capacity);
      next.set(old);
      return next;
    });
  }

  private textAfterQuote(): InputError {
    return new InputError(
      'E_CSV_QUOTE',
      `${this.where(this.row, this.line)}, ${this.columnLabel(this.fieldCount)}: ` +
        `text follows the closing quote of a quoted field (the quote opened on row ${this.quoteRow})`,
      `a quoted field must end right before ${delimiterName(this.delimiter)} or a line break; ` +
        'write a quote inside a quoted field as two quotes ("")',
    );
  }

  /** "adult.csv row 17", plus the physical line when quoted line breaks make them differ. */
  private where(row: number, line: number): string {
    return `${this.file} row ${row}${line !== row ? ` (line ${line})` : ''}`;
  }

  private columnLabel(index: number): string {
    const name = this.names[index];
    return name !== undefined ? `column "${name}"` : `column ${index + 1}`;
  }
}

/**
 * A copy of `s` that does not pin the decoded chunk it was sliced from: V8 slices of 13+
 * characters keep their parent string alive, and dictionary entries live as long as the table.
 */
function detach(s: string): string {
  return s.length < 13 ? s : (' ' + s).slice(1);
}

/**
 * Formats columns as CSV: a header, then one line per row, each ending in `\n`. A field is
 * quoted only when it contains the delimiter, a quote, CR or LF — or, in a one-column table,
 * when it is empty (`""`), so that it does not read back as a blank line.
 */
export function formatCsv(columns: OutputColumn[], delimiter: string): string {
  const bytes = encodeCsv(columns, delimiter);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * `formatCsv` as UTF-8 bytes, for writers: skips the final string (which cannot exceed
 * ~512 M characters) and is what `formatCsv` builds on, since bytes are 4× faster to assemble
 * than per-row strings.
 */
export function encodeCsv(columns: OutputColumn[], delimiter: string): Uint8Array {
  const rowCount = columns.length > 0 ? outputLength(columns[0]!) : 0;
  for (const col of columns) {
    if (outputLength(col) !== rowCount) {
      throw new OutputError(
        'E_OUTPUT_SHAPE',
        `output column "${col.name}" has ${outputLength(col)} rows, column "${columns[0]!.name}" has ${rowCount}`,
        'this is a bug in ppdp: every released column must have the same number of rows',
      );
    }
  }
  const utf8 = new TextEncoder();
  // In a one-column file an empty value would be a blank line, which readCsv drops at the end.
  const quoteEmpty = columns.length === 1;
  const quote = (s: string): string => (quoteEmpty && s === '' ? '""' : quoteField(s, delimiter));
  const delim = utf8.encode(delimiter);
  // Each dictionary entry is quoted and encoded once, not once per row.
  const encoded = columns.map((col) =>
    col.kind === 'dictionary' ? col.dictionary.map((d) => utf8.encode(quote(d))) : null,
  );

  const out = new ByteSink(1 << 16);
  out.write(utf8.encode(columns.map((c, i) => quoteName(c.name, i, quote, quoteEmpty)).join(delimiter)));
  out.byte(LF);
  const width = columns.length;
  for (let r = 0; r < rowCount; r++) {
    for (let c = 0; c < width; c++) {
      if (c > 0) out.write(delim);
      const col = columns[c]!;
      if (col.kind === 'dictionary') out.write(encoded[c]![col.codes[r]!]!);
      else {
        const x = col.values[r]!;
        out.ascii(quoteEmpty && Number.isNaN(x) ? '""' : formatNumber(x));
      }
    }
    out.byte(LF);
  }
  return out.bytes();
}

/**
 * A header name as written: quoted also when reading it back unquoted would go wrong — a first
 * name starting with U+FEFF (read as a byte order mark) or, in a one-column file, a name that
 * contains another delimiter (read as a delimiter mismatch).
 */
function quoteName(name: string, index: number, quote: (s: string) => string, oneColumn: boolean): string {
  const q = quote(name);
  if (q !== name) return q;
  const bom = index === 0 && name.charCodeAt(0) === 0xfeff;
  const other = oneColumn && CANDIDATES.some((d) => name.includes(d));
  return bom || other ? `"${name}"` : name;
}

/** A growable byte buffer. */
class ByteSink {
  private buf: Uint8Array;
  private length = 0;

  constructor(capacity: number) {
    this.buf = new Uint8Array(capacity);
  }

  private reserve(n: number): void {
    if (this.length + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.length + n) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buf.subarray(0, this.length));
    this.buf = next;
  }

  byte(b: number): void {
    this.reserve(1);
    this.buf[this.length++] = b;
  }

  write(bytes: Uint8Array): void {
    const n = bytes.length;
    this.reserve(n);
    const buf = this.buf;
    // A loop beats `set` for the short cells that dominate CSV output.
    if (n < 16) for (let k = 0; k < n; k++) buf[this.length++] = bytes[k]!;
    else {
      buf.set(bytes, this.length);
      this.length += n;
    }
  }

  /** Writes a string known to be ASCII (a formatted number). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const buf = this.buf;
    for (let k = 0; k < n; k++) buf[this.length++] = s.charCodeAt(k);
  }

  bytes(): Uint8Array {
    return this.buf.subarray(0, this.length);
  }
}

function outputLength(col: OutputColumn): number {
  return col.kind === 'dictionary' ? col.codes.length : col.values.length;
}

function quoteField(s: string, delimiter: string): string {
  if (s.includes(delimiter) || s.includes('"') || s.includes('\n') || s.includes('\r')) {
    return '"' + s.replaceAll('"', '""') + '"';
  }
  return s;
}

/** Integers without decimals (even beyond 1e21), others in shortest round-trip form; NaN is empty. */
export function formatNumber(x: number): string {
  if (Number.isNaN(x)) return '';
  if (Number.isInteger(x) && Math.abs(x) >= 1e21) return BigInt(x).toString();
  return String(x);
}
