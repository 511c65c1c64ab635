/**
 * CSV input and output. Reading takes the file in fixed-size pieces from its descriptor,
 * validates each piece as UTF-8, and runs an RFC 4180 parser over the bytes that looks every
 * completed field up in its column's byte-keyed dictionary: memory holds one piece, the codes and
 * each column's distinct values — never the file as text or any row's strings. A column asked
 * for as bytes (`raw`) is never looked up: each field's bytes are appended to the shard's buffer.
 */
import { isUtf8 } from 'node:buffer';
import { closeSync } from 'node:fs';
import { basename } from 'node:path';
import { InputError, LimitError, OutputError } from '../errors.ts';
import {
  type CellTable,
  type CsvRowsKernel,
  SPARE_BYTES,
  valuesBound,
  widestCell,
} from '../kernels/csv/kernel.ts';
import { wasmCsvKernel } from '../kernels/csv/wasm.ts';
import { CODED, OMITTED, type PlainRowsKernel, RAW } from '../kernels/csv-fields/kernel.ts';
import { wasmPlainRows } from '../kernels/csv-fields/wasm.ts';
import { rowNumbersUpTo } from '../util/int32s.ts';
import { MAX_CSV_HEADER_BYTES, MAX_INPUT_COLUMNS, MAX_NAME_LENGTH } from '../util/limits.ts';
import type { InputMagic } from '../util/magic.ts';
import { ByteDictionary } from './dictionary.ts';
import { type InputFile, magicOf, openInput, READ_CHUNK_BYTES, readAt, readInto } from './input.ts';
import { checkColumnName, tooManyColumns } from './limits.ts';
import { type RawValues, rawLength } from './raw.ts';
import type { EncodedColumn, EncodedTable, OutputColumn } from './table.ts';

export { readInputBytes } from './input.ts';

/** Delimiters tried by detection, in tie-break order (the spec's `format.delimiter` values). */
const CANDIDATES = [';', ',', '\t', '|'] as const;

const QUOTE = 0x22;
const LF = 0x0a;
const CR = 0x0d;
/** The blanks an empty row may hold between its delimiters. */
const SPACE = 0x20;
const TAB = 0x09;
/**
 * FNV-1a over a field's bytes, folded in as the parser scans them (defined here, not imported:
 * a module binding read in the byte loop costs a getter call under CommonJS interop).
 */
const HASH_SEED = 0x811c9dc5 | 0;
const FNV_PRIME = 0x01000193;

export interface ReadCsvOptions {
  /** `;`, `,`, tab or `|` (any single character other than a quote, CR or LF is accepted). */
  delimiter?: string;
  /**
   * Without `delimiter`: the first of these that the first line holds outside quotes is the
   * delimiter (the first of them when it holds none), instead of the one of `;`, `,`, tab and
   * `|` seen most often (a hierarchy file's rule: a `;` file's labels may hold commas).
   */
  firstOf?: readonly string[];
  /**
   * The file has no header row (a hierarchy file): its first row is a row like the others and
   * sets their width; the table's columns are named `1`, `2`, … Messages name a row's fields
   * and count them as `names` says.
   */
  headerless?: HeaderlessNames;
  /** How messages name the file (its base name by default; a command names it as it was given). */
  name?: string;
  /** Bytes read per step (tests use tiny pieces to cross every boundary); 8 MB by default. */
  chunkBytes?: number;
  /** Bytes of rows parsed before their cells are looked up (tests cross it too); 256 KiB by default. */
  windowBytes?: number;
  /**
   * Columns parsed (so the file's shape is still checked) but never stored: their cells are
   * not interned and the tables leave them out (listed in `omitted`). Identifying columns.
   */
  omit?: ReadonlySet<string>;
  /**
   * Columns kept as their rows' UTF-8 bytes (EncodedColumn.raw: a sharded release's
   * pass-through ones): each field's bytes are appended as they are read, never looked up in a
   * dictionary or made a string.
   */
  raw?: ReadonlySet<string>;
  /** Only these rows of the file (csvRanges), after its header. */
  range?: CsvRange;
  /**
   * The kernel that splits plain rows (the WASM one by default; tests name the reference, or
   * null for the parser's own loop over every row).
   */
  plainRows?: PlainRowsKernel | null;
}

/**
 * A run of whole rows of one CSV file, read on its own (a scan reads a large file as ranges
 * side by side): the header in bytes [0, head), then the rows in bytes [start, end). Every
 * range but the last ends right after a line break (a cut, csvRanges).
 */
export interface CsvRange {
  readonly kind: 'csv';
  /** Where the header row ends (after its line break): every range reads it for the columns. */
  readonly head: number;
  readonly start: number;
  readonly end: number;
  /**
   * Rows of the file before the range and the line its first row starts on, once counted
   * (csvRowsBefore, only for a message): errors then name the file's rows, else the range's.
   */
  readonly firstRow?: number;
  readonly firstLine?: number;
}

/** How messages name the fields of a file without a header row (ReadCsvOptions.headerless). */
export interface HeaderlessNames {
  /** Field `index` (0-based) of a row, e.g. `level 2`. */
  readonly field: (index: number) => string;
  /** `count` fields of a row, e.g. `3 levels`. */
  readonly count: (count: number) => string;
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
  const [table] = readCsvShards(path, Number.POSITIVE_INFINITY, options);
  return table!;
}

/**
 * Reads a CSV file as consecutive shards of `rowsPerShard` rows (the last one shorter), so no
 * more than one shard's codes are held: each shard's columns carry the dictionaries read so
 * far (each a prefix of the next shard's), and row numbers in errors count from the file's start
 * (of a range: once its rows before are counted, `CsvRange.firstRow`).
 * @throws InputError as readCsv; E_CSV_CUT when a range other than the last ends inside a quoted field.
 */
export function* readCsvShards(
  path: string,
  rowsPerShard: number,
  options: ReadCsvOptions = {},
): Generator<EncodedTable, void, undefined> {
  const input = openInput(path);
  try {
    const end = yield* readOpen(path, input, options, rowsPerShard);
    if (end.inQuotes) throw cutInQuotes(basename(path));
  } finally {
    closeSync(input.fd);
  }
}

/**
 * The error for a range whose cut fell inside a quoted field (its parser, which started at a
 * row, is inside quotes at its end): the next range did not start at a row.
 */
export function cutInQuotes(file: string): InputError {
  return new InputError(
    'E_CSV_CUT',
    `${file}: the file was read as ranges side by side, cut at line breaks, and a cut fell inside a ` +
      'quoted field that holds a line break, so a range did not start at a row; nothing was released',
    'set "format": { "lineBreaksInQuotes": true } in the spec to read the file in one piece',
  );
}

/** Where a read ended: the next row's number and line, and whether it ended inside a quoted field. */
interface CsvEnd {
  readonly row: number;
  readonly line: number;
  readonly inQuotes: boolean;
}

/**
 * The bytes a read takes in turn: the whole file from its descriptor's position, or a range's
 * header and rows read at their places. `size`: the bytes it gives in all (0: unknown, a pipe);
 * `at`: the file offset of its n-th byte.
 */
interface CsvBytes {
  readonly size: number;
  read(buf: Buffer, from: number, to: number): number;
  at(n: number): number;
}

function bytesOf(path: string, input: InputFile, range: CsvRange | undefined): CsvBytes {
  if (range === undefined)
    return { size: input.size, read: (buf, from, to) => readInto(path, input, buf, from, to), at: (n) => n };
  const spans: [number, number][] =
    range.start === range.head
      ? [[0, range.end]]
      : [
          [0, range.head],
          [range.start, range.end],
        ];
  let span = 0;
  let at = 0;
  return {
    size: spans.reduce((n, [a, b]) => n + b - a, 0),
    read(buf, from, to) {
      let n = from;
      while (n < to && span < spans.length) {
        const [, end] = spans[span]!;
        if (at >= end) {
          at = spans[++span]?.[0] ?? 0;
          continue;
        }
        const got = readAt(path, input, buf.subarray(n, Math.min(to, n + end - at)), at);
        if (got === 0) break; // the file is shorter than planned: its end
        n += got;
        at += got;
      }
      return n - from;
    },
    at: (n) => (n < range.head ? n : range.start + n - range.head),
  };
}

/**
 * The rows of a CSV file before a range's start, and whether the start is a row's: the bytes
 * before it parsed from the file's start (nothing stored), as one read would. Only a failed
 * range asks, for its message.
 * @throws InputError an earlier row's error (named by its row in the file).
 */
export function csvRowsBefore(
  path: string,
  range: CsvRange,
  delimiter?: string,
): { readonly rows: number; readonly line: number; readonly inQuotes: boolean } {
  const input = openInput(path);
  try {
    const before: CsvRange = { kind: 'csv', head: range.head, start: range.head, end: range.start };
    const reading = readOpen(path, input, { delimiter, range: before }, Number.POSITIVE_INFINITY, true);
    for (let step = reading.next(); ; step = reading.next()) {
      if (step.done)
        return { rows: step.value.row - 2, line: step.value.line, inQuotes: step.value.inQuotes };
    }
  } finally {
    closeSync(input.fd);
  }
}

/** Bytes of a file's start Plan reads for its first rows (csvRanges): the header and a sample of rows. */
const SAMPLE_BYTES = 4 * 1024 * 1024;
/** Bytes read at a time around a nominal cut, to find the line break after it. */
const CUT_WINDOW_BYTES = 64 * 1024;
/**
 * The fewest bytes a range holds: a smaller one is read in a few milliseconds, less than what
 * a piece of its own costs (a state, its files, Combine's merge).
 */
export const MIN_RANGE_BYTES = 1024 * 1024;

/**
 * A CSV file cut into ranges of about `rowsPerRange` rows each, to be read side by side; undefined
 * when the file holds fewer than about two ranges' rows or two ranges of `minRangeBytes` (by
 * default MIN_RANGE_BYTES), or may hold a line break inside a
 * quoted field (one is seen in its first `sampleRows` rows): a cut there would not start a row.
 * The rows' count is estimated from the sample's bytes per row; each cut is the first line break
 * at or after its nominal offset that ends a line which is not blank (only a small window is
 * read there). A cut that falls inside a quoted field all the same is found as the file is
 * read: the range before it ends inside quotes (readCsvShards, E_CSV_CUT).
 */
export function csvRanges(
  path: string,
  rowsPerRange: number,
  options: {
    readonly delimiter?: string;
    readonly sampleRows: number;
    readonly minRangeBytes?: number;
    /** So many ranges, whatever their rows (at least two; fewer when the file is small). */
    readonly ranges?: number;
    /**
     * Ranges counted from the rows come in a multiple of this (the workers that read them side
     * by side: 11 ranges on 2 workers leave one reading the last alone).
     */
    readonly multipleOf?: number;
  },
): CsvRange[] | undefined {
  if (!(rowsPerRange >= 1 && Number.isFinite(rowsPerRange))) return undefined;
  let input: InputFile;
  try {
    input = openInput(path);
  } catch {
    return undefined; // the read itself tells
  }
  try {
    const { size } = input;
    const window = Buffer.allocUnsafe(Math.min(size, SAMPLE_BYTES));
    const n = readAt(path, input, window, 0);
    const bom = n >= 3 && window[0] === 0xef && window[1] === 0xbb && window[2] === 0xbf ? 3 : 0;
    const delimiter = options.delimiter ?? pickDelimiter(basename(path), window, bom, n, undefined);
    const header = walkRecords(window, bom, n, delimiter, 1);
    if (header.records < 1 || header.lineBreakInQuotes) return undefined;
    const head = header.end;
    const sample = walkRecords(window, head, n, delimiter, options.sampleRows);
    // A quoted line break in the sample: the file may hold others, anywhere.
    if (sample.lineBreakInQuotes || sample.records === 0) return undefined;
    const rows = ((size - head) * sample.records) / (sample.end - head);
    // A range's rows are estimated: a little room, so that one seldom exceeds its share.
    const multiple = options.ranges === undefined ? Math.max(1, Math.floor(options.multipleOf ?? 1)) : 1;
    const most = Math.floor((size - head) / (options.minRangeBytes ?? MIN_RANGE_BYTES));
    const count = Math.min(
      options.ranges ?? Math.ceil((rows * 1.02) / rowsPerRange / multiple) * multiple,
      most >= multiple ? most - (most % multiple) : most,
    );
    if ((options.ranges === undefined && rows <= 2 * rowsPerRange) || count < 2) return undefined;
    const cuts = [head];
    for (let k = 1; k < count; k++) {
      const cut = cutAfter(path, input, head + Math.round(((size - head) * k) / count), delimiter);
      if (cut < size && cut > cuts.at(-1)!) cuts.push(cut);
    }
    if (cuts.length < 2) return undefined;
    return cuts.map((start, k) => ({ kind: 'csv', head, start, end: cuts[k + 1] ?? size }));
  } finally {
    closeSync(input.fd);
  }
}

/**
 * Just after the first LF at or after `offset` that ends a line which is not empty — not blank,
 * nor of delimiters, spaces and tabs only (a range never ends with an empty row: whether it ends
 * the file's rows is known only after it) — or the file's size when there is none.
 */
function cutAfter(path: string, input: InputFile, offset: number, delimiter: string): number {
  // The bytes an empty row may hold: a delimiter's (any of them, when it has several), a space, a tab, CR.
  const empty = new Uint8Array(256);
  for (const b of [...Buffer.from(delimiter, 'utf8'), SPACE, TAB, CR]) empty[b] = 1;
  let from = offset;
  const buf = Buffer.allocUnsafe(CUT_WINDOW_BYTES);
  for (;;) {
    const n = readAt(path, input, buf, from);
    for (let i = 0; i < n; i++) {
      if (buf[i] !== LF) continue;
      // Back over the line the LF ends: it is empty when only such bytes come after the LF before it.
      let k = i - 1;
      while (k >= 0 && empty[buf[k]!] === 1) k--;
      if (k >= 0 ? buf[k] !== LF : !emptyBefore(path, input, from, empty)) return from + i + 1;
    }
    if (n < buf.length) return input.size;
    from += n;
  }
}

/** Whether the bytes before file offset `at`, back to an LF (or the file's start), are all `empty` ones. */
function emptyBefore(path: string, input: InputFile, at: number, empty: Uint8Array): boolean {
  const buf = Buffer.allocUnsafe(4096);
  for (let end = at; end > 0; ) {
    const start = Math.max(0, end - buf.length);
    const n = readAt(path, input, buf.subarray(0, end - start), start);
    for (let k = n - 1; k >= 0; k--) {
      if (buf[k] === LF) return true;
      if (empty[buf[k]!] !== 1) return false;
    }
    end = start;
  }
  return true;
}

/**
 * Walks at most `most` records of `buf[from, to)` as the parser reads them (a quote opens a
 * quoted field only at a field's start, `""` inside it is a quote): where the last whole record
 * ends (after its LF), how many were whole, and whether a quoted field held a line break.
 */
function walkRecords(
  buf: Buffer,
  from: number,
  to: number,
  delimiter: string,
  most: number,
): { end: number; records: number; lineBreakInQuotes: boolean } {
  const d = Buffer.from(delimiter, 'utf8');
  let end = from;
  let records = 0;
  let lineBreakInQuotes = false;
  let fieldStart = true;
  let quoted = false;
  for (let i = from; i < to && records < most; i++) {
    const b = buf[i]!;
    if (quoted) {
      if (b === QUOTE) {
        if (buf[i + 1] === QUOTE) i++;
        else quoted = false;
      } else if (b === LF || b === CR) lineBreakInQuotes = true;
    } else if (b === LF) {
      records++;
      end = i + 1;
      fieldStart = true;
    } else if (fieldStart && b === QUOTE) {
      quoted = true;
      fieldStart = false;
    } else if (b === d[0] && d.every((x, k) => buf[i + k] === x)) {
      i += d.length - 1;
      fieldStart = true;
    } else fieldStart = false;
  }
  return { end, records, lineBreakInQuotes };
}

function* readOpen(
  path: string,
  input: InputFile,
  options: ReadCsvOptions,
  rowsPerShard: number,
  /** Rows only counted: no column stored (csvRowsBefore). */
  countOnly = false,
): Generator<EncodedTable, CsvEnd, undefined> {
  const file = options.name ?? basename(path);
  const chunk = Math.max(16, options.chunkBytes ?? READ_CHUNK_BYTES);
  const { range } = options;
  let source = bytesOf(path, input, range);
  // One byte more than the file so a single read also sees the end (a pipe reports size 0).
  let buf: Buffer = Buffer.allocUnsafeSlow(source.size > 0 ? Math.min(chunk, source.size + 1) : chunk);
  let filled = source.read(buf, 0, buf.length);
  let eof = filled < buf.length;

  checkTextStart(file, buf.subarray(0, filled), magicOf(path, input));
  // A UTF-8 BOM is not part of the first column's name (only the file's first one is dropped).
  let pos = filled >= 3 && buf[0] === 0xef && buf[1] === 0xbb && buf[2] === 0xbf ? 3 : 0;
  if (eof && pos >= filled) {
    throw new InputError(
      'E_INPUT_EMPTY',
      `${file}: the file is empty`,
      'expected a header row and data rows',
    );
  }
  // Detection looks at the whole header line: read on until it ends, up to a limit.
  let lineEnd: number;
  for (;;) {
    lineEnd = headerEnd(buf, pos, filled);
    if ((lineEnd < 0 ? filled : lineEnd) - pos > MAX_CSV_HEADER_BYTES) {
      const mib = MAX_CSV_HEADER_BYTES / (1024 * 1024);
      // A file without a header row (a hierarchy file) has no column names to shorten.
      throw options.headerless
        ? new LimitError(
            'E_LIMIT_COLUMNS',
            `${file} row 1: the first line is longer than ${mib} MiB (the limit for a file's first line)`,
            'a quote left open joins the lines after it to this one: close it, and give each row a line of its own',
          )
        : new LimitError(
            'E_LIMIT_COLUMNS',
            `${file} row 1: the header row is longer than ${mib} MiB (the limit)`,
            `release fewer columns with shorter names (at most ${MAX_INPUT_COLUMNS.toLocaleString('en')} columns, names of at most ${MAX_NAME_LENGTH.toLocaleString('en')} characters), and make sure the file's first row is its header`,
          );
    }
    // (A CR ending the bytes read: whether an LF follows it tells how the file's lines end.)
    if ((lineEnd >= 0 && (buf[lineEnd] === LF || lineEnd + 1 < filled)) || eof) break;
    buf = enlarged(buf, filled);
    const n = source.read(buf, filled, buf.length);
    filled += n;
    eof = filled < buf.length;
  }
  // A header ending in a lone CR: the lines end with CR alone, read as LF from here on.
  if (lineEnd >= 0 && buf[lineEnd] === CR && (lineEnd + 1 === filled || buf[lineEnd + 1] !== LF)) {
    const delimiter = Buffer.from(
      pickDelimiter(file, buf, pos, filled, options.delimiter, options.firstOf),
      'utf8',
    )[0]!;
    const lines = new CrLineEnds(file, delimiter, pos, source.at);
    lines.translate(buf, pos, filled);
    source = lines.over(source);
  }

  /** Offset in the source of buf[0]. */
  let base = 0;
  /** Bytes [pos, validEnd) are valid UTF-8 and end on a character boundary. */
  let validEnd = pos;
  let parser: CsvParser | undefined;
  for (;;) {
    const cut = eof ? filled : charBoundary(buf, validEnd, filled);
    let bad = -1;
    if (cut > validEnd && !isUtf8(buf.subarray(validEnd, cut))) {
      bad = Math.min(cut, validEnd + firstInvalidUtf8(buf.subarray(validEnd, cut)));
    }
    if (parser === undefined) {
      const delimiter = pickDelimiter(
        file,
        buf,
        pos,
        bad >= 0 ? bad : cut,
        options.delimiter,
        options.firstOf,
      );
      parser = new CsvParser(
        file,
        delimiter,
        options.delimiter !== undefined,
        source.size,
        rowsPerShard,
        options.omit,
        options.raw,
        {
          // A range ends right after a line break, and the file goes on (the last one ends the file).
          goesOn: range !== undefined && range.end < input.size,
          countOnly,
          ...(range?.firstRow !== undefined
            ? { firstRow: range.firstRow, firstLine: range.firstLine ?? range.firstRow + 2 }
            : {}),
        },
        Math.max(1, options.windowBytes ?? LOOKUP_WINDOW_BYTES),
        options.plainRows === undefined ? wasmPlainRows : options.plainRows,
        options.headerless,
      );
    }
    parser.base = base;
    if (bad >= 0) {
      // Parse the valid prefix so the error names the row and column of the bad bytes.
      parser.parse(buf, pos, bad, false);
      throw parser.encodingError(source.at(base + bad));
    }
    validEnd = cut;
    pos = parser.parse(buf, pos, validEnd, eof);
    // A full shard stops the parse at a row's start: hand it out, parse on in the same bytes.
    while (parser.full) {
      // How far through the file this shard ends (a pipe's size is unknown: no share).
      yield { ...parser.take(path), ...(source.size > 0 ? { progress: (base + pos) / source.size } : {}) };
      pos = parser.parse(buf, pos, validEnd, eof);
    }
    if (eof) break;
    // Keep the unfinished row (and a cut character), then read on behind it.
    const keep = filled - pos;
    if (keep * 2 > buf.length) buf = enlarged(buf, filled);
    buf.copyWithin(0, pos, filled);
    base += pos;
    validEnd -= pos;
    filled = keep;
    pos = 0;
    const want = buf.length - filled;
    const n = source.read(buf, filled, buf.length);
    filled += n;
    eof = n < want;
  }
  const end = parser.ended();
  // Rows counted only, or a range cut inside quotes (whose rows are not the file's): no table.
  if (countOnly || end.inQuotes) return end;
  const last = parser.finish(path);
  if (last.rowCount > 0) yield { ...last, progress: 1 };
  return end;
}

/**
 * Refuses a file whose first bytes show it is no UTF-8 text: UTF-16, by its byte order mark or,
 * without one, by the NUL bytes every other byte of ASCII text is in it; a binary format read as
 * CSV (format.type says so), a workbook too; a compressed file.
 * @throws InputError E_INPUT_ENCODING, E_INPUT_FORMAT or E_INPUT_COMPRESSED.
 */
function checkTextStart(file: string, head: Uint8Array, magic: InputMagic | undefined): void {
  const utf8 = `${file.replace(/(\.[^.]*)?$/, '-utf8$1')}`;
  if (
    head.length >= 2 &&
    ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff))
  ) {
    throw new InputError(
      'E_INPUT_ENCODING',
      `${file}: the file is UTF-16 (it starts with a UTF-16 ${head[0] === 0xff ? 'little' : 'big'}-endian byte order mark)`,
      `save it as UTF-8, e.g. \`iconv -f utf-16 -t utf-8 ${file} > ${utf8}\``,
    );
  }
  const order = utf16Order(head);
  if (order !== undefined) {
    throw new InputError(
      'E_INPUT_ENCODING',
      `${file}: the file is UTF-16 ${order === 'LE' ? 'little' : 'big'}-endian without a byte order mark (every other byte of its start is a NUL byte)`,
      `save it as UTF-8, e.g. \`iconv -f UTF-16${order} -t UTF-8 ${file} > ${utf8}\``,
    );
  }
  if (magic === 'arrow' || magic === 'parquet') {
    const name = magic === 'arrow' ? 'an Arrow IPC' : 'a Parquet';
    throw new InputError(
      'E_INPUT_FORMAT',
      `${file}: ${name} file (its first bytes say so), read as CSV because format.type is "csv"`,
      `set "format": { "type": "${magic}" }, or leave format.type out: a file is read as what its first bytes say`,
    );
  }
  // A ZIP named as a workbook reaches the CSV reader only when format.type says "csv".
  if (magic === 'zip' && /\.xls[xm]$/i.test(file)) {
    throw new InputError(
      'E_INPUT_FORMAT',
      `${file}: an Excel workbook (its name and first bytes say so), read as CSV because format.type is "csv"`,
      'set "format": { "type": "xlsx" }, or leave format.type out: a file named .xlsx or .xlsm is read as a workbook',
    );
  }
  if (magic === 'gzip' || magic === 'zip') {
    const plain = file.replace(/\.(gz|zip)$/i, '');
    throw new InputError(
      'E_INPUT_COMPRESSED',
      `${file}: the file is compressed (${magic === 'gzip' ? 'gzip' : 'a ZIP archive'}), not a CSV file`,
      magic === 'gzip'
        ? `decompress it and name the CSV file as the input, e.g. \`gzip -dc ${file} > ${plain === file ? `${file}.csv` : plain}\``
        : `extract it (e.g. \`unzip ${file}\`) and name the CSV file inside as the input; an Excel workbook (a ZIP archive too) is read as one when its name ends in .xlsx, or with "format": { "type": "xlsx" }`,
    );
  }
}

/**
 * The byte order of UTF-16 text without a byte order mark, told by its NUL bytes: in ASCII text
 * so encoded, every other byte is NUL (the odd ones little-endian, the even ones big-endian);
 * in UTF-8 text a NUL byte is rare (undefined: not so).
 */
function utf16Order(head: Uint8Array): 'LE' | 'BE' | undefined {
  const pairs = Math.min(head.length, UTF16_SNIFF_BYTES) >> 1;
  if (pairs < 2) return undefined;
  let even = 0;
  let odd = 0;
  for (let k = 0; k < pairs; k++) {
    if (head[2 * k] === 0) even++;
    if (head[2 * k + 1] === 0) odd++;
  }
  if (2 * odd > pairs && 4 * even < odd) return 'LE';
  if (2 * even > pairs && 4 * odd < even) return 'BE';
  return undefined;
}

/** Bytes of a file's start looked at for UTF-16 without a byte order mark. */
const UTF16_SNIFF_BYTES = 1024;

/** Where CrLineEnds' last byte left it: at a field's start, in an unquoted field, in quotes, after a quote in quotes. */
const AT_START = 0;
const IN_FIELD = 1;
const IN_QUOTES = 2;
const QUOTE_IN_QUOTES = 3;

/**
 * A file whose lines end with CR alone (as classic Mac OS wrote text: Excel's "CSV (Macintosh)")
 * read as LF: each CR outside quotes becomes an LF as the bytes are read, before the parser (and
 * its plain-rows kernel) sees them, so they read the file as its LF twin; a CR in a quoted field
 * is part of it. Quotes are followed as the parser does: one opens a quoted field at a field's
 * start (after the delimiter's first byte or a line break), `""` is a quote in it.
 */
class CrLineEnds {
  private state = AT_START;
  /** CRs outside quotes just before the next byte (CR CR LF ends lines with an extra CR). */
  private crs = 0;
  /** The source's offset of the next byte translated. */
  private next: number;

  constructor(
    private readonly file: string,
    /** The delimiter's first byte. */
    private readonly delimiter: number,
    /** The source's offset of the first byte translated. */
    first: number,
    private readonly offsetOf: (n: number) => number,
  ) {
    this.next = first;
  }

  /** `buf[from, to)`, the source's next bytes, with their line breaks made LF. */
  translate(buf: Buffer, from: number, to: number): void {
    let state = this.state;
    let crs = this.crs;
    const d = this.delimiter;
    for (let i = from; i < to; i++) {
      const b = buf[i]!;
      if (b === CR && state !== IN_QUOTES) {
        buf[i] = LF;
        state = AT_START;
        crs++;
        continue;
      }
      if (b === LF && state !== IN_QUOTES) throw this.mixed(this.next + i - from, crs);
      crs = 0;
      if (state === IN_QUOTES) {
        if (b === QUOTE) state = QUOTE_IN_QUOTES;
      } else if ((state === QUOTE_IN_QUOTES || state === AT_START) && b === QUOTE) state = IN_QUOTES;
      else state = b === d ? AT_START : IN_FIELD;
    }
    this.state = state;
    this.crs = crs;
    this.next += to - from;
  }

  /** `source` with the bytes it reads translated. */
  over(source: CsvBytes): CsvBytes {
    return {
      size: source.size,
      at: source.at,
      read: (buf, from, to) => {
        const n = source.read(buf, from, to);
        this.translate(buf, from, from + n);
        return n;
      },
    };
  }

  /**
   * An LF outside quotes at source offset `n`, after `crs` CRs: the file's lines end both
   * ways, or (two CRs or more) with CR CR LF, which a CR-only reading would make a blank line
   * after every row.
   */
  private mixed(n: number, crs: number): InputError {
    if (crs >= 2) {
      return new InputError(
        'E_CSV_LINE_ENDS',
        `${this.file}: each line ends with CR CR LF, an extra CR before the line break (first at byte offset ${this.offsetOf(n)}), as a file with CR LF line ends gets when its line ends are converted once more`,
        "end each line with CR LF or LF: re-export the file as CSV UTF-8, or drop the extra CR, e.g. `sed 's/\\r\\r$/\\r/' in.csv > out.csv`",
      );
    }
    return new InputError(
      'E_CSV_LINE_ENDS',
      `${this.file}: lines end with CR only (as classic Mac OS wrote text, e.g. Excel's "CSV (Macintosh)"), ` +
        `but a line ends with LF at byte offset ${this.offsetOf(n)}`,
      "end every line the same way: save the file as CSV UTF-8, or convert its CRs, e.g. `tr '\\r' '\\n' < in.csv > out.csv`",
    );
  }
}

/** A buffer twice as large holding the first `filled` bytes of `buf`. */
function enlarged(buf: Buffer, filled: number): Buffer {
  const next = Buffer.allocUnsafeSlow(buf.length * 2);
  buf.copy(next, 0, 0, filled);
  return next;
}

/** The end of the last whole UTF-8 character in `buf[from, to)` (`to` if none can be told). */
function charBoundary(buf: Buffer, from: number, to: number): number {
  for (let k = to - 1; k >= from && k >= to - 4; k--) {
    const b = buf[k]!;
    if (b < 0x80) return k + 1;
    // A lead byte: its sequence may be cut; it is validated with the next piece.
    if (b >= 0xc0) return k;
  }
  return to;
}

/** Offset of the header line's end (an LF or CR outside quotes), or -1 if it is not in `buf`. */
function headerEnd(buf: Buffer, start: number, end: number): number {
  let quoted = false;
  for (let i = start; i < end; i++) {
    const b = buf[i];
    if (b === QUOTE) quoted = !quoted;
    else if (!quoted && (b === LF || b === CR)) return i;
  }
  return -1;
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

/**
 * The explicit delimiter, or the candidate seen most often outside quotes in the header line
 * (with `firstOf`, the first of those it holds there: ReadCsvOptions.firstOf).
 */
function pickDelimiter(
  file: string,
  buf: Buffer,
  start: number,
  end: number,
  given: string | undefined,
  firstOf?: readonly string[],
): string {
  if (given !== undefined) {
    if (given.length !== 1 || given === '"' || given === '\r' || given === '\n') {
      throw new InputError(
        'E_CSV_DELIMITER',
        `${file}: the delimiter must be a single character other than a quote or a line break`,
        "use ';', ',', a tab or '|', or leave the delimiter out to detect it from the header",
      );
    }
    return given;
  }
  const candidates = firstOf ?? CANDIDATES;
  const counts = candidates.map(() => 0);
  const codes = candidates.map((d) => d.charCodeAt(0));
  let quoted = false;
  for (let i = start; i < end; i++) {
    const b = buf[i]!;
    if (b === QUOTE) quoted = !quoted;
    else if (!quoted) {
      if (b === LF || b === CR) break;
      const k = codes.indexOf(b);
      if (k >= 0) counts[k]!++;
    }
  }
  if (firstOf !== undefined) {
    const first = counts.findIndex((n) => n > 0);
    return firstOf[Math.max(first, 0)]!; // none held: the first
  }
  let best = 0;
  for (let k = 1; k < counts.length; k++) if (counts[k]! > counts[best]!) best = k;
  // No candidate at all: a single-column file; `;` is the tool's default delimiter.
  return counts[best]! > 0 ? CANDIDATES[best]! : ';';
}

/** Hash of the bytes the last `scanPlain` passed over. */
let plainHash = 0;

/**
 * Skips bytes that cannot end an unquoted field (anything but the delimiter's first byte, LF
 * and CR), hashing them into `plainHash`; returns where it stopped. Kept small so it is
 * optimized after a few calls, long before the parser around it.
 */
function scanPlain(buf: Buffer, from: number, end: number, d0: number): number {
  let h = HASH_SEED;
  let q = from;
  while (q < end) {
    const b = buf[q]!;
    if (b === d0 || b === 0x0a || b === 0x0d) break;
    h = Math.imul(h ^ b, FNV_PRIME);
    q++;
  }
  plainHash = h;
  return q;
}

/**
 * A raw column's rows while a shard is read: row r's bytes are `bytes[offsets[r], offsets[r + 1])`.
 * A row is written where the row before it ends, so a row parsed again (cut by the end of a
 * piece) overwrites itself; a shard's rows are copied out to exactly their size.
 */
class RawRows {
  offsets: Int32Array;
  private bytes = new Uint8Array(4096);

  constructor(rows: number) {
    this.offsets = new Int32Array(rows + 1);
  }

  set(row: number, src: Uint8Array, start: number, end: number): void {
    const at = this.offsets[row]!;
    const to = at + end - start;
    if (to > this.bytes.length) this.grow(row, at, to);
    const bytes = this.bytes;
    if (end - start > 32) bytes.set(src.subarray(start, end), at);
    else for (let k = start, j = at; k < end; k++, j++) bytes[j] = src[k]!;
    this.offsets[row + 1] = to;
  }

  /** Rows `row`… from `values` (offsets from 0), after the rows before. */
  append(row: number, values: RawValues): void {
    const n = values.offsets.length - 1;
    const at = this.offsets[row]!;
    const to = at + values.offsets[n]!;
    if (to > this.bytes.length) this.grow(row, at, to);
    this.bytes.set(values.bytes.subarray(0, to - at), at);
    const offsets = this.offsets;
    for (let j = 1; j <= n; j++) offsets[row + j] = at + values.offsets[j]!;
  }

  /**
   * Room for at least `to` bytes, the first `at` kept: for the rows the offsets have room for,
   * at the mean length so far (a shard's bytes are then copied about once, not at every
   * doubling), and a quarter more at least. Not twice the size: fresh memory is slow to page in,
   * and a buffer much larger than its rows is copied out again by `take`.
   */
  private grow(row: number, at: number, to: number): void {
    const rows = this.offsets.length - 1;
    const estimate = row > 0 ? Math.ceil((at / row) * rows * 1.05) : 0;
    const least = this.bytes.length + (this.bytes.length >> 2);
    const next = new Uint8Array(Math.max(least, to, Math.min(estimate, 2 ** 31 - 1)));
    next.set(this.bytes.subarray(0, at));
    this.bytes = next;
  }

  /** Room for `rows` rows, keeping the first `kept` (and the one being parsed). */
  reserve(rows: number, kept: number): void {
    if (rows + 1 <= this.offsets.length) return;
    const next = new Int32Array(rows + 1);
    next.set(this.offsets.subarray(0, Math.min(kept + 2, this.offsets.length)));
    this.offsets = next;
  }

  /**
   * The first `rows` rows, copied out; the next shard's rows start again at the buffer's start.
   * The `last` rows read are handed over without a copy when the buffer holds little more than
   * them (a copy would hold both at once and cost a pass over the bytes).
   */
  take(rows: number, last = false): RawValues {
    const used = this.offsets[rows]!;
    const keep = last && this.bytes.length - used <= used / 4;
    const bytes = keep ? this.bytes.subarray(0, used) : this.bytes.slice(0, used);
    const offsets =
      last && this.offsets.length - rows - 1 <= rows / 4
        ? this.offsets.subarray(0, rows + 1)
        : this.offsets.slice(0, rows + 1);
    if (last) {
      this.bytes = new Uint8Array(0);
      this.offsets = new Int32Array(1);
    }
    return { offsets, bytes };
  }
}

/** A column's cells waiting for their dictionary lookup: row, bytes `[start, end)` and hash. */
interface DeferredCells {
  readonly rows: Int32Array;
  readonly starts: Int32Array;
  readonly ends: Int32Array;
  readonly hashes: Int32Array;
  length: number;
}

/** Cells a column defers before they are looked up. */
const DEFERRED_CELLS = 2048;

function deferredCells(): DeferredCells {
  const words = () => new Int32Array(DEFERRED_CELLS);
  return { rows: words(), starts: words(), ends: words(), hashes: words(), length: 0 };
}

/** How the parser reads a range of a file (csvRanges), or only counts rows. */
interface CsvParserRange {
  /** The bytes end a range that the file goes on after: a quoted field open at the end is a wrong cut. */
  readonly goesOn: boolean;
  /** No column is stored: the rows are only counted (csvRowsBefore). */
  readonly countOnly: boolean;
  /** Rows of the file before the range, and the line its first row starts on (CsvRange). */
  readonly firstRow?: number;
  readonly firstLine?: number;
}

/** Rows parsed here after the plain-rows kernel found none, doubled after each miss up to the most. */
const MIN_PLAIN_BACKOFF = 16;
const MAX_PLAIN_BACKOFF = 4096;

/** Bytes of rows parsed before their cells are looked up: well within a core's cache. */
const LOOKUP_WINDOW_BYTES = 256 * 1024;

/** Field ends: a delimiter follows, or the row ends (line break or end of file). */
const END_FIELD = 0;
const END_ROW = 1;

/** emptyRowEnd: the row holds a value (or a quote, or a lone CR); the bytes end before that is known. */
const NOT_EMPTY = -1;
const MORE = -2;

/**
 * Consecutive empty rows of the same bytes (`line`, its line break left out: nothing, or
 * delimiters, spaces and tabs): `count` of them, of `fields` fields each. `bounds` and `hashes`
 * are its fields' places in `line` and hashes, once it is committed.
 */
interface EmptyRun {
  readonly line: Buffer;
  readonly fields: number;
  count: number;
  bounds?: Int32Array;
  hashes?: Int32Array;
}

/**
 * RFC 4180 parser over UTF-8 bytes. `parse` consumes whole rows and returns where the first
 * unfinished row starts; the caller hands those bytes in again with more behind them. A field
 * is encoded only once its end is seen, so parsing a row twice changes nothing.
 */
class CsvParser {
  /** File offset of the parse buffer's first byte (for capacity estimates). */
  base = 0;
  /** The delimiter's UTF-8 bytes: the first, and the whole sequence when it is longer. */
  private readonly d0: number;
  private readonly dBytes: Uint8Array;
  /** Fields completed in the unfinished row (for an encoding error inside it). */
  private fieldCount = 0;
  /**
   * Empty rows not yet committed (blank lines, and lines of delimiters, spaces and tabs only, as
   * a spreadsheet exports the empty rows of its used range), in runs of equal lines: dropped at
   * the end of the file, else rows (or errors).
   */
  private pending: EmptyRun[] = [];
  private pendingRows = 0;
  /** The first pending row's number and line (each empty row is one line). */
  private pendingRow = 0;
  private pendingLine = 0;
  /** Where the content of the empty row `emptyRowEnd` last found ends (before its line break). */
  private emptyEnd = 0;
  /** The header's fields while row 1 is parsed. */
  private headerFields: string[] = [];
  /** Whether the header's first field was quoted. */
  private headerQuoted = false;
  /** Column count (from the header). */
  private width = 0;
  /** 1-based row (record) being parsed; the header is row 1. */
  private row = 1;
  /** 1-based physical line the row being parsed starts on. */
  private line = 1;
  /** Unescaped bytes of a quoted field that contains `""`. */
  private scratch: Buffer = Buffer.allocUnsafeSlow(256);

  private names: string[] = [];
  /** Per column: left out of the tables (its cells are parsed, never interned). */
  private skip: boolean[] = [];
  /** Per column kept as bytes, its rows so far (undefined for the others). */
  private raws: (RawRows | undefined)[] = [];
  private dicts: ByteDictionary[] = [];
  private codes: Int32Array[] = [];
  /** Per coded column, its cells parsed but not yet looked up (`lookUp`); none for the others. */
  private deferred: (DeferredCells | undefined)[] = [];
  private capacity = 0;
  private rowCount = 0;
  /** A range that goes on in the file ended inside a quoted field (its rows are not the file's). */
  private inQuotes = false;

  constructor(
    private readonly file: string,
    private readonly delimiter: string,
    /** Whether the delimiter was given (not detected): a mismatch is then worth naming. */
    private readonly explicit: boolean,
    /** The file's size, to size the code arrays from the rows read so far. */
    private readonly size: number,
    /** Rows per shard: `parse` stops at the start of a row once a shard holds this many. */
    private readonly rowsPerShard = Number.POSITIVE_INFINITY,
    private readonly omit: ReadonlySet<string> = new Set(),
    private readonly raw: ReadonlySet<string> = new Set(),
    private readonly range: CsvParserRange = { goesOn: false, countOnly: false },
    private readonly windowBytes = LOOKUP_WINDOW_BYTES,
    /** The plain rows' kernel; null: every row parsed here. */
    private readonly plainKernel: PlainRowsKernel | null = wasmPlainRows,
    /** The file has no header row: row 1 is a row (ReadCsvOptions.headerless). */
    private readonly headerless?: HeaderlessNames,
  ) {
    const code = delimiter.charCodeAt(0);
    // A lone surrogate cannot occur in valid UTF-8: such a delimiter never matches.
    this.dBytes = code >= 0xd800 && code <= 0xdfff ? new Uint8Array(0) : Buffer.from(delimiter, 'utf8');
    this.d0 = this.dBytes.length > 0 ? this.dBytes[0]! : -1;
  }

  /** Whether the delimiter's later bytes follow its first byte at `at`. */
  private delimAt(buf: Buffer, at: number, end: number): boolean {
    const d = this.dBytes;
    if (at + d.length > end) return false;
    for (let k = 1; k < d.length; k++) if (buf[at + k] !== d[k]) return false;
    return true;
  }

  /**
   * Parses the rows in `buf[start, end)`; returns the offset of the first unfinished row (`end`
   * when all are done). With `eof`, the bytes end the file and every row finishes.
   */
  parse(buf: Buffer, start: number, end: number, eof: boolean): number {
    // A window of rows at a time: its cells' bytes are still in cache when they are looked up
    // (a chunk of wide rows read whole before would be read again from memory, a miss a cell).
    const window = this.windowBytes;
    let at = start;
    while (end - at > window && !this.full) {
      const next = this.parseRows(buf, at, at + window, false);
      this.lookUp(buf);
      if (next === at) break; // a row longer than the window (or a full shard): parsed below
      at = next;
    }
    if (this.full) return at;
    at = this.parseRows(buf, at, end, eof);
    this.lookUp(buf);
    return at;
  }

  /**
   * The cells deferred so far (of `buf`) looked up in their columns' dictionaries, a column at a
   * time, in the order they were parsed: each column's codes are the ones looking up every cell
   * as it was parsed gives. A column's lookups in a row miss the cache together (one for the
   * next cell need not wait for the one before), where a lookup between two cells' parsing waits
   * for its own miss.
   */
  private lookUp(buf: Buffer): void {
    for (let c = 0; c < this.deferred.length; c++) {
      const cells = this.deferred[c];
      if (cells === undefined || cells.length === 0) continue;
      this.dicts[c]!.codeMany(
        buf,
        cells.length,
        cells.rows,
        cells.starts,
        cells.ends,
        cells.hashes,
        this.codes[c]!,
      );
      cells.length = 0;
    }
  }

  private parseRows(buf: Buffer, start: number, end: number, eof: boolean): number {
    const d0 = this.d0;
    const multi = this.dBytes.length > 1;
    let pos = start;
    // Whether the kernel was just asked at `pos`: the row there is then parsed below.
    let asked = -1;
    for (;;) {
      if (pos >= end || this.full) return pos;
      if (
        this.plainKinds &&
        asked !== pos &&
        this.plainSkip === 0 &&
        this.pendingRows === 0 &&
        this.row > 1
      ) {
        asked = pos;
        pos = this.plainRows(buf, pos, end);
        continue;
      }
      const rowStart = pos;
      const header = this.row === 1;
      if (!header) {
        // An empty row waits: whether it is a row is known only from what follows it.
        const after = this.emptyRowEnd(buf, pos, end, eof);
        if (after === MORE) {
          this.fieldCount = 0;
          return rowStart;
        }
        if (after >= 0) {
          this.holdEmpty(buf, pos);
          pos = after;
          this.row++;
          this.line++;
          if (this.plainSkip > 0) this.plainSkip--;
          continue;
        }
        // A row with a value: the empty rows before it are rows (as far as the shard has room),
        // then it (in the next shard when they fill this one).
        if (this.pendingRows > 0 && (!this.commitPending(buf, this.base + pos) || this.full)) return rowStart;
      }
      // A header cut by the end of a piece is parsed again from its start.
      if (header) this.headerFields = [];
      else if (this.rowCount === this.capacity) {
        this.lookUp(buf);
        this.grow(this.base + pos);
      }
      const codes = this.codes;
      const dicts = this.dicts;
      const deferred = this.deferred;
      const raws = this.raws;
      const skip = this.skip;
      const width = this.width;
      const r = this.rowCount;
      let line = this.line;
      let fieldCount = 0;
      let ended = END_FIELD;
      while (ended === END_FIELD) {
        let s: number;
        let e: number;
        let h = HASH_SEED;
        let src: Buffer = buf;
        let quoted = false;
        if (pos >= end) {
          if (!eof) {
            this.fieldCount = fieldCount;
            return rowStart;
          }
          // The file ends right after a delimiter: the row's last field is empty.
          s = e = pos;
          ended = END_ROW;
        } else if (buf[pos] === QUOTE) {
          quoted = true;
          const quoteLine = line;
          let q = pos + 1;
          s = q;
          let escaped = false;
          for (;;) {
            if (q >= end) {
              if (!eof) {
                this.fieldCount = fieldCount;
                return rowStart;
              }
              // A range's end inside quotes: its cut was not at a row's end (readCsvShards tells).
              if (this.range.goesOn) {
                this.inQuotes = true;
                this.fieldCount = fieldCount;
                return rowStart;
              }
              throw this.unterminated(quoteLine, fieldCount);
            }
            const b = buf[q]!;
            if (b === QUOTE) {
              if (q + 1 < end && buf[q + 1] === QUOTE) {
                escaped = true;
                h = Math.imul(h ^ QUOTE, FNV_PRIME);
                q += 2;
                continue;
              }
              break;
            }
            if (b === LF) line++;
            h = Math.imul(h ^ b, FNV_PRIME);
            q++;
          }
          e = q;
          // After the closing quote: a delimiter, a line break or the end of the file.
          q++;
          if (q >= end) {
            if (!eof) {
              this.fieldCount = fieldCount;
              return rowStart;
            }
            ended = END_ROW;
          } else {
            const b = buf[q]!;
            if (b === d0 && (!multi || this.delimAt(buf, q, end))) q += this.dBytes.length;
            else if (b === LF) {
              q++;
              ended = END_ROW;
            } else if (b === CR) {
              if (q + 1 >= end) {
                if (!eof) {
                  this.fieldCount = fieldCount;
                  return rowStart;
                }
                q++;
              } else if (buf[q + 1] === LF) q += 2;
              else throw this.textAfterQuote(line, fieldCount);
              ended = END_ROW;
            } else throw this.textAfterQuote(line, fieldCount);
          }
          pos = q;
          if (escaped) {
            e = this.unescape(buf, s, e);
            s = 0;
            src = this.scratch;
          }
        } else {
          s = pos;
          let q = scanPlain(buf, pos, end, d0);
          h = plainHash;
          for (;;) {
            if (q >= end) {
              if (!eof) {
                this.fieldCount = fieldCount;
                return rowStart;
              }
              e = q;
              ended = END_ROW;
              break;
            }
            const b = buf[q]!;
            if (b === d0 && (!multi || this.delimAt(buf, q, end))) {
              e = q;
              q += this.dBytes.length;
              break;
            }
            if (b === LF) {
              e = q++;
              ended = END_ROW;
              break;
            }
            if (b === CR) {
              if (q + 1 >= end) {
                if (!eof) {
                  this.fieldCount = fieldCount;
                  return rowStart;
                }
                // A CR at the very end is a line end, not data.
                e = q++;
                ended = END_ROW;
                break;
              }
              if (buf[q + 1] === LF) {
                e = q;
                q += 2;
                ended = END_ROW;
                break;
              }
              // A lone CR is data.
            }
            h = Math.imul(h ^ b, FNV_PRIME);
            q++;
          }
          pos = q;
        }

        const c = fieldCount++;
        if (header) {
          if (c === 0) this.headerQuoted = quoted;
          // Limits before anything is sized per column (a code array and a dictionary each).
          if (c >= MAX_INPUT_COLUMNS)
            throw tooManyColumns(`${this.file} row 1`, this.headerless ? 'the row' : 'the header');
          const name = src.toString('utf8', s, e);
          if (!this.headerless) checkColumnName(`${this.file} row 1`, c, name);
          this.headerFields.push(name);
        } else if (c < width) {
          // Extra fields of a ragged row are only counted; the row fails at its end.
          const raw = raws[c];
          if (raw !== undefined) raw.set(r, src, s, e);
          else if (skip[c]) codes[c]![r] = 0;
          else if (src === buf) {
            // Looked up later with the column's other cells (lookUp); 0 until then.
            codes[c]![r] = 0;
            const cells = deferred[c]!;
            const k = cells.length++;
            cells.rows[k] = r;
            cells.starts[k] = s;
            cells.ends[k] = e;
            cells.hashes[k] = h;
            if (cells.length === DEFERRED_CELLS) this.lookUp(buf);
          } else {
            // An unescaped copy: looked up now, after the cells parsed before it.
            this.lookUp(buf);
            codes[c]![r] = dicts[c]!.code(src, s, e, h);
          }
        }
      }

      const rowLine = this.line;
      if (header) {
        if (this.headerless) this.firstRow(this.headerFields);
        else this.setHeader(this.headerFields);
        this.headerFields = [];
      } else {
        if (fieldCount !== width) throw this.ragged(this.row, rowLine, fieldCount, false);
        this.rowCount = r + 1;
      }
      this.fieldCount = 0;
      this.row++;
      this.line = line + 1;
      if (this.plainSkip > 0) this.plainSkip--;
      // A range's rows go on from the rows before it, once they are counted.
      if (header && this.range.firstRow !== undefined) {
        this.row = this.range.firstRow + 2;
        this.line = this.range.firstLine ?? this.row;
      }
    }
  }

  /** Where the parse ended: the next row's number and line, and whether inside quotes. */
  ended(): CsvEnd {
    return { row: this.row, line: this.line, inQuotes: this.inQuotes };
  }

  /**
   * Where the row at `pos` ends when it is empty — nothing, or only delimiters, spaces and tabs,
   * up to its line break (LF, CR LF, a CR that ends the file) or the end of the file — its
   * content's end set in `emptyEnd`; NOT_EMPTY when it holds anything else (a value, a quote, a
   * lone CR), MORE when the bytes end before that is known.
   */
  private emptyRowEnd(buf: Buffer, pos: number, end: number, eof: boolean): number {
    const d0 = this.d0;
    const length = this.dBytes.length;
    for (let q = pos; ; ) {
      if (q >= end) {
        if (!eof) return MORE;
        this.emptyEnd = q;
        return q;
      }
      const b = buf[q]!;
      if (b === d0) {
        if (length > 1) {
          if (q + length > end && !eof) return MORE;
          if (!this.delimAt(buf, q, end)) return NOT_EMPTY;
        }
        q += length;
      } else if (b === SPACE || b === TAB) q++;
      else if (b === LF) {
        this.emptyEnd = q;
        return q + 1;
      } else if (b === CR) {
        if (q + 1 >= end) {
          if (!eof) return MORE;
          this.emptyEnd = q;
          return q + 1;
        }
        if (buf[q + 1] !== LF) return NOT_EMPTY; // a lone CR is data
        this.emptyEnd = q;
        return q + 2;
      } else return NOT_EMPTY;
    }
  }

  /** The empty row at `buf[pos, emptyEnd)` (the one `emptyRowEnd` found) held until what follows tells. */
  private holdEmpty(buf: Buffer, pos: number): void {
    const line = buf.subarray(pos, this.emptyEnd);
    if (this.pendingRows++ === 0) {
      this.pendingRow = this.row;
      this.pendingLine = this.line;
    }
    const last = this.pending.at(-1);
    if (last?.line.equals(line)) {
      last.count++;
      return;
    }
    let fields = 1;
    for (let q = 0; q < line.length; q++)
      if (line[q] === this.d0 && this.delimAt(line, q, line.length)) {
        fields++;
        q += this.dBytes.length - 1;
      }
    this.pending.push({ line: Buffer.from(line), fields, count: 1 });
  }

  /**
   * The empty rows held (a row with a value follows them) made rows, in order, each field its
   * text (empty, or its blanks) — or an error for one that is not as wide as the header (a
   * blank line, in a file of more than one column); false when the shard fills first (the rest
   * follow in the next one). `consumed`: the file's bytes read so far, to size the arrays.
   */
  private commitPending(buf: Buffer, consumed: number): boolean {
    // The cells parsed before these are looked up first: a dictionary numbers values as they come.
    this.lookUp(buf);
    while (this.pending.length > 0) {
      const run = this.pending[0]!;
      if (run.fields !== this.width)
        throw this.ragged(this.pendingRow, this.pendingLine, run.fields, run.line.length === 0);
      const { bounds, hashes } = this.fieldsOf(run);
      for (; run.count > 0; run.count--) {
        if (this.rowCount >= this.rowsPerShard) return false;
        if (this.rowCount === this.capacity) this.grow(consumed);
        const r = this.rowCount++;
        for (let c = 0; c < this.width; c++) {
          const s = bounds[2 * c]!;
          const e = bounds[2 * c + 1]!;
          const raw = this.raws[c];
          if (raw !== undefined) raw.set(r, run.line, s, e);
          else if (!this.skip[c]) this.codes[c]![r] = this.dicts[c]!.code(run.line, s, e, hashes[c]!);
        }
        this.pendingRows--;
        this.pendingRow++;
        this.pendingLine++;
      }
      this.pending.shift();
    }
    return true;
  }

  /** An empty run's fields: their places in its line (start, end) and hashes. */
  private fieldsOf(run: EmptyRun): { bounds: Int32Array; hashes: Int32Array } {
    if (run.bounds && run.hashes) return { bounds: run.bounds, hashes: run.hashes };
    const { line, fields } = run;
    const bounds = new Int32Array(2 * fields);
    const hashes = new Int32Array(fields);
    let c = 0;
    let h = HASH_SEED;
    let q = 0;
    for (; q < line.length; q++) {
      if (line[q] === this.d0 && this.delimAt(line, q, line.length)) {
        bounds[2 * c + 1] = q;
        hashes[c++] = h;
        h = HASH_SEED;
        q += this.dBytes.length - 1;
        bounds[2 * c] = q + 1;
      } else h = Math.imul(h ^ line[q]!, FNV_PRIME);
    }
    bounds[2 * c + 1] = q;
    hashes[c] = h;
    run.bounds = bounds;
    run.hashes = hashes;
    return { bounds, hashes };
  }

  /** Unescapes a quoted field `buf[s, e)` that contains `""` into `scratch`; returns its length. */
  private unescape(buf: Buffer, s: number, e: number): number {
    if (this.scratch.length < e - s)
      this.scratch = Buffer.allocUnsafeSlow(Math.max(e - s, this.scratch.length * 2));
    const out = this.scratch;
    let n = 0;
    for (let k = s; k < e; k++) {
      const b = buf[k]!;
      out[n++] = b;
      if (b === QUOTE) k++;
    }
    return n;
  }

  /** Whether the current shard is full (empty rows held wait: they may end the file, or go on in the next shard). */
  get full(): boolean {
    return this.rowCount >= this.rowsPerShard;
  }

  /** Rows handed out in earlier shards. */
  private taken = 0;

  /** The full shard's rows as a table; the next shard starts empty with the same dictionaries. */
  take(source: string): EncodedTable {
    const n = this.rowCount;
    const columns: EncodedColumn[] = [];
    this.names.forEach((name, c) => {
      const raw = this.raws[c];
      if (raw) columns.push({ name, dictionary: [], codes: new Int32Array(0), raw: raw.take(n) });
      else if (!this.skip[c])
        columns.push({ name, dictionary: this.dicts[c]!.values.slice(), codes: this.codes[c]!.slice(0, n) });
    });
    this.rowCount = 0;
    this.taken += n;
    return this.table(source, n, columns);
  }

  /** Builds the table from the rows read (all of them: `parse` has seen the end of the file). */
  finish(source: string): EncodedTable {
    if (this.row === 1) {
      throw new InputError(
        'E_INPUT_EMPTY',
        `${this.file}: the file is empty`,
        'expected a header row and data rows',
      );
    }
    if (this.rowCount === 0 && this.taken === 0) {
      throw new InputError(
        'E_INPUT_NO_ROWS',
        `${this.file}: the header has no data rows below it`,
        'add data rows under the header row',
      );
    }
    const n = this.rowCount;
    const columns: EncodedColumn[] = [];
    for (let c = 0; c < this.width; c++) {
      const all = this.codes[c]!;
      // Copied one column at a time, each spare array dropped at once: the peak stays low.
      this.codes[c] = new Int32Array(0);
      if (this.skip[c]) continue;
      const raw = this.raws[c];
      if (raw) {
        columns.push({ name: this.names[c]!, dictionary: [], codes: all, raw: raw.take(n, true) });
        continue;
      }
      columns.push({
        name: this.names[c]!,
        dictionary: this.dicts[c]!.values,
        codes: all.length === n ? all : all.slice(0, n),
      });
    }
    return this.table(source, n, columns);
  }

  private table(source: string, rowCount: number, columns: EncodedColumn[]): EncodedTable {
    const omitted = this.names.filter((_, c) => this.skip[c]);
    const omittedAt = this.names.flatMap((_, c) => (this.skip[c] ? [c] : []));
    return {
      source,
      rowCount,
      columns,
      delimiter: this.delimiter,
      ...(omitted.length > 0 ? { omitted, omittedAt } : {}),
    };
  }

  /** The error for invalid UTF-8 at byte `offset`, named by the row and column being parsed. */
  encodingError(offset: number): InputError {
    return new InputError(
      'E_INPUT_ENCODING',
      `${this.where(this.row, this.line)}, ${this.columnLabel(this.fieldCount)}: ` +
        `bytes that are not valid UTF-8 (byte offset ${offset})`,
      'save the file as UTF-8, e.g. `iconv -f latin1 -t utf-8 in.csv > out.csv`',
    );
  }

  private ragged(row: number, line: number, count: number, blank: boolean): InputError {
    const names = this.headerless;
    return new InputError(
      'E_CSV_RAGGED',
      names
        ? `${this.where(row, line)}: ${blank ? 'the line is empty' : `${names.count(count)}, row 1 has ${this.width}`}`
        : `${this.where(row, line)}: ${count} field${count === 1 ? '' : 's'}, the header has ${this.width}` +
            (blank ? ' (the line is empty)' : ''),
      blank
        ? 'remove empty lines between rows'
        : `fields are split on ${delimiterName(this.delimiter)}; put fields that contain ` +
            `${delimiterName(this.delimiter)} or line breaks in double quotes` +
            (names ? '' : ', or set the right delimiter'),
    );
  }

  private setHeader(names: string[]): void {
    if (this.explicit && names.length === 1 && !this.headerQuoted) {
      const other = CANDIDATES.find((d) => d !== this.delimiter && names[0]!.includes(d));
      if (other !== undefined) {
        throw new InputError(
          'E_CSV_DELIMITER',
          `${this.file} row 1: the header is a single column when split on ${delimiterName(this.delimiter)} ` +
            `(the delimiter given), but it contains ${delimiterName(other)}`,
          `the file seems to be ${delimiterName(other)}-separated: give that delimiter ("format": { "delimiter": ` +
            `"${other === '\t' ? '\\t' : other}" } in a spec, --delimiter on the command line), or leave it out to detect it`,
        );
      }
    }
    // Excel writes (and reads) a first line `sep=;` naming the delimiter.
    if (/^sep=.?$/i.test(names.join(this.delimiter).trim())) {
      throw new InputError(
        'E_CSV_HEADER',
        `${this.file} row 1: a "sep=" line (a spreadsheet's note of the delimiter), not the header`,
        'delete that first line: the header must come first (ppdp detects the delimiter, or set "format": { "delimiter": … })',
      );
    }
    const seen = new Map<string, number>();
    for (let c = 0; c < names.length; c++) {
      const name = names[c]!;
      if (name.trim() === '') {
        const last = c === names.length - 1 && c > 0;
        throw new InputError(
          'E_CSV_HEADER',
          `${this.file} row 1: column ${c + 1} of ${names.length} has an empty name${last ? ' (the header ends with the delimiter)' : ''}`,
          last
            ? `if every row ends with ${delimiterName(this.delimiter)} (an empty last column, as some exports write), remove it from the end of each line; else give the column a name`
            : `give every column a name in the header row (fields are split on ${delimiterName(this.delimiter)})`,
        );
      }
      const first = seen.get(name);
      if (first !== undefined) {
        throw new InputError(
          'E_CSV_HEADER',
          `${this.file} row 1: columns ${first + 1} and ${c + 1} have the same name`,
          'rename one of the columns so every name in the header is unique (if the first row is a record, the file lacks its header row: add one)',
        );
      }
      seen.set(name, c);
    }
    this.setColumns(names);
  }

  /** The first row of a file without a header row: the columns, named by position, and their first row. */
  private firstRow(fields: string[]): void {
    this.setColumns(fields.map((_, c) => String(c + 1)));
    for (let c = 0; c < fields.length; c++) {
      const bytes = Buffer.from(fields[c]!, 'utf8');
      const raw = this.raws[c];
      if (raw !== undefined) raw.set(0, bytes, 0, bytes.length);
      else if (!this.skip[c]) this.codes[c]![0] = this.dicts[c]!.codeOf(bytes, 0, bytes.length);
    }
    this.rowCount = 1;
  }

  /** The columns, once row 1 has given their number (and names). */
  private setColumns(names: string[]): void {
    this.names = names;
    this.skip = names.map((n) => this.range.countOnly || this.omit.has(n));
    this.width = names.length;
    this.dicts = names.map(() => new ByteDictionary());
    this.capacity = 1024;
    this.raws = names.map((n, c) =>
      !this.skip[c] && this.raw.has(n) ? new RawRows(this.capacity) : undefined,
    );
    // A left-out or raw column holds no codes: writes past a typed array's end are dropped.
    this.codes = names.map((_, c) => new Int32Array(this.skip[c] || this.raws[c] ? 0 : this.capacity));
    this.deferred = names.map((_, c) => (this.skip[c] || this.raws[c] ? undefined : deferredCells()));
    // Plain rows are split by the kernel when one byte delimits them and a blank line cannot be
    // a row (it is one only in a one-column file).
    this.plainKinds =
      this.plainKernel &&
      this.dBytes.length === 1 &&
      this.d0 < 0x80 &&
      names.length >= 2 &&
      !this.range.countOnly
        ? names.map((_, c) => (this.skip[c] ? OMITTED : this.raws[c] ? RAW : CODED))
        : undefined;
  }

  /** Per column how the plain-rows kernel keeps its fields; undefined: the kernel is not used. */
  private plainKinds: number[] | undefined;
  /** Rows to parse here before the kernel is asked again, and how many after its next miss. */
  private plainSkip = 0;
  private plainBackoff = MIN_PLAIN_BACKOFF;

  /**
   * The whole plain rows at `buf[pos, end)` from the kernel (as many as the shard and the arrays
   * have room for), coded and stored as the loop below would; where they end (`pos`: none).
   */
  private plainRows(buf: Buffer, pos: number, end: number): number {
    const kinds = this.plainKinds!;
    const most = Math.min(this.capacity, this.rowsPerShard) - this.rowCount;
    if (most <= 0) return pos;
    // Cells parsed before these are looked up first: a dictionary numbers values as they come.
    this.lookUp(buf);
    const got = this.plainKernel!({ bytes: buf, start: pos, end, delimiter: this.d0, kinds, most });
    const n = got.rows;
    if (n === 0) {
      // A row the window cuts waits for the next window (the kernel takes it there).
      const lf = buf.indexOf(LF, pos);
      if (lf < 0 || lf >= end) return pos;
      // Rows the kernel leaves (a line break in quotes): the next ones parsed here, more after each miss,
      // so that a file of such rows does not copy its window into the kernel for every row.
      this.plainSkip = this.plainBackoff;
      this.plainBackoff = Math.min(2 * this.plainBackoff, MAX_PLAIN_BACKOFF);
      return pos;
    }
    this.plainBackoff = MIN_PLAIN_BACKOFF;
    const r = this.rowCount;
    const rows = rowNumbersUpTo(n);
    let coded = 0;
    let raw = 0;
    kinds.forEach((kind, c) => {
      if (kind === CODED) {
        const { starts, ends, hashes } = got.coded[coded++]!;
        this.dicts[c]!.codeMany(buf, n, rows, starts, ends, hashes, this.codes[c]!.subarray(r));
      } else if (kind === RAW) this.raws[c]!.append(r, got.raw[raw++]!);
    });
    this.rowCount = r + n;
    this.row += n;
    this.line += n;
    return got.end;
  }

  /**
   * Makes room for more rows: as many as the file's size suggests from the bytes read so far
   * (so a large file is sized once or twice, not by repeated doubling), at least 1/8 more.
   */
  private grow(consumed: number): void {
    const rows = this.rowCount;
    let capacity = this.capacity * 2;
    if (this.size > consumed && consumed > 0 && rows > 0) {
      const estimate = Math.ceil(((rows * this.size) / consumed) * 1.02) + 1024;
      capacity = Math.max(this.capacity + (this.capacity >> 3) + 1, estimate);
    }
    // A shard's rows are all the arrays ever hold (one-column blank lines may add a few).
    if (capacity > this.rowsPerShard) capacity = Math.max(this.rowsPerShard + 1, this.capacity + 1);
    this.capacity = capacity;
    for (const raw of this.raws) raw?.reserve(capacity, rows);
    this.codes = this.codes.map((old, c) => {
      if (this.skip[c] || this.raws[c]) return old;
      const next = new Int32Array(capacity);
      next.set(old.subarray(0, rows));
      return next;
    });
  }

  private unterminated(quoteLine: number, index: number): InputError {
    return new InputError(
      'E_CSV_QUOTE',
      `${this.where(this.row, quoteLine)}, ${this.columnLabel(index)}: a quoted field opened here is never closed`,
      'close the quote; a quote inside a quoted field is written as two quotes ("")',
    );
  }

  private textAfterQuote(line: number, index: number): InputError {
    return new InputError(
      'E_CSV_QUOTE',
      `${this.where(this.row, line)}, ${this.columnLabel(index)}: ` +
        `text follows the closing quote of a quoted field (the quote opened on row ${this.row})`,
      `a quoted field must end right before ${delimiterName(this.delimiter)} or a line break; ` +
        'write a quote inside a quoted field as two quotes ("")',
    );
  }

  /** "adult.csv row 17", plus the physical line when quoted line breaks make them differ. */
  private where(row: number, line: number): string {
    return `${this.file} row ${row}${line !== row ? ` (line ${line})` : ''}`;
  }

  /** By position: a header's names are not quoted (without a header row, a record is there). */
  private columnLabel(index: number): string {
    return this.headerless ? this.headerless.field(index) : `column ${index + 1}`;
  }
}

/** How released CSV cells are written beyond RFC 4180 (the spec's `format`). */
export interface CsvWriteOptions {
  /** Prefix `'` to every cell (header names and numbers too) that `escapeFormula` escapes. */
  readonly escapeFormulas?: boolean;
}

/**
 * First characters a spreadsheet reads as the start of a formula (`=`, `+`, `-`, `@`, tab,
 * CR), and the escape's own `'`: escaping a cell that already starts with one keeps the escape
 * reversible (reading back drops exactly one leading `'` from every cell that has one).
 */
const FORMULA_START = /^[=+\-@\t\r']/;

/** A cell as written with formula escaping on: `'` before a cell starting with `= + - @`, tab, CR or `'`. */
export function escapeFormula(cell: string): string {
  return FORMULA_START.test(cell) ? `'${cell}` : cell;
}

/**
 * A table read from a CSV written with formula escaping, as it was before: one leading `'`
 * dropped from every value and column name that has one (escaping is one-to-one, so the
 * dictionaries stay free of duplicates).
 */
export function unescapeFormulas(table: EncodedTable): EncodedTable {
  const strip = (s: string) => (s.startsWith("'") ? s.slice(1) : s);
  return {
    ...table,
    columns: table.columns.map((c) => ({ ...c, name: strip(c.name), dictionary: c.dictionary.map(strip) })),
  };
}

/**
 * Formats columns as CSV: a header, then one line per row, each ending in `\n`. A field is
 * quoted only when it contains the delimiter, a quote, CR or LF — or, in a one-column table,
 * when it is empty (`""`), so that it does not read back as a blank line. With
 * `escapeFormulas`, cells are escaped (`escapeFormula`) before they are quoted.
 */
export function formatCsv(columns: OutputColumn[], delimiter: string, options: CsvWriteOptions = {}): string {
  const bytes = encodeCsv(columns, delimiter, options);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');
}

/**
 * `formatCsv` as UTF-8 bytes, for writers: skips the final string (which cannot exceed
 * ~512 M characters). Each distinct cell is quoted and encoded once, with the delimiter or line
 * end that follows it (a column of values as bytes: each row's cell, from its bytes); rows are
 * then copied into one buffer of the exact size.
 */
export function encodeCsv(
  columns: OutputColumn[],
  delimiter: string,
  options: CsvWriteOptions = {},
): Uint8Array {
  return encodeCsvChunks(columns, delimiter, options, Number.POSITIVE_INFINITY)[0]!;
}

/**
 * `encodeCsv` as consecutive chunks of about `chunkBytes` each (whole rows; the header in the
 * first), for a writer that takes pieces: a part of 2·10⁶ rows is then a few buffers of the
 * size the allocator reuses, not one of hundreds of megabytes of newly mapped memory.
 */
export function encodeCsvChunks(
  columns: OutputColumn[],
  delimiter: string,
  options: CsvWriteOptions = {},
  chunkBytes = 16 * 1024 * 1024,
  kernel: CsvRowsKernel = wasmCsvKernel,
): Uint8Array[] {
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
  // In a one-column file an empty value would be a blank line, which readCsv drops at the end.
  const quoteEmpty = columns.length === 1;
  const asCell = options.escapeFormulas === true ? escapeFormula : (s: string) => s;
  const quote = (s: string): string => (quoteEmpty && s === '' ? '""' : quoteField(asCell(s), delimiter));
  const header = Buffer.from(
    `${columns.map((c, i) => quoteName(c.name, i, quote, quoteEmpty)).join(delimiter)}\n`,
    'utf8',
  );
  const width = columns.length;
  const rowCodes = sharedCodes(rowCount);
  // So would a row whose cells are all empty or blank (an empty row, which readCsv drops at the
  // end as a spreadsheet's used range): its first cell is quoted.
  const blank = blankRows(columns, quote, rowCount);
  const cells = columns.flatMap((col, c) => {
    const after = c + 1 < width ? delimiter : '\n';
    const quoted = c === 0 ? blank : NO_ROWS;
    if (col.kind === 'utf8')
      return rawCells(col.values, delimiter, after, quote, quoteEmpty, options, rowCodes, quoted);
    const table =
      col.kind === 'dictionary'
        ? cellTable(
            col.dictionary.map((d) => quote(d) + after),
            col.codes,
          )
        : numberCells(col.values, quoteEmpty, after, asCell);
    return quoted.length > 0 ? withQuotedRows(table, quoted, Buffer.byteLength(after)) : table;
  });

  // The exact size from how often each cell is used; then rows are copied in order.
  let total = header.length;
  let widestRow = 0;
  for (const table of cells) {
    // A raw column's tables: their codes are made here, in range, and say how often each cell
    // is used. A column of values is bounded (each value quoted, every byte a quote): the
    // writer quotes as it writes.
    const used =
      table.values === undefined
        ? usedBytes(rowCodes.uses(table.codes) ?? cellUses(table, rowCount), table.lengths)
        : { total: valuesBound(table.starts), widest: widestCell(table) };
    total += used.total;
    widestRow += used.widest;
  }
  const chunks: Uint8Array[] = [];
  let left = total;
  let row = 0;
  const writer = kernel.open(cells, rowCount, widestRow);
  try {
    do {
      const first = chunks.length === 0;
      const at = first ? header.length : 0;
      // Whole rows while the widest could still fit; the last chunk is cut to what is left.
      const size = Math.min(Math.max(chunkBytes, at + widestRow), left);
      const limit = size === left ? MAX_OFFSET : size - widestRow;
      // Spare bytes: a cell's last word may reach past the final byte.
      const out = Buffer.allocUnsafeSlow(size + SPARE_BYTES);
      if (first) header.copy(out, 0);
      const done = writer.write(row, out, at, limit);
      chunks.push(out.subarray(0, done.at));
      left -= done.at;
      row = done.row;
    } while (row < rowCount);
  } finally {
    writer.close();
  }
  return chunks;
}

/** A limit past any chunk's end (the kernel's are 32-bit). */
const MAX_OFFSET = 0x7fffffff;

const NO_ROWS = new Int32Array(0);

/** A cell written as nothing but spaces and tabs (or nothing): an empty row holds only such cells. */
const BLANK_CELL = /^[ \t]*$/;

/**
 * The rows whose every cell is written blank (`quote` gives each value's cell), in order: read
 * back unquoted they would be an empty row. Each column narrows the rows the one before left; a
 * column without a blank cell leaves none (the common case, found from its distinct values).
 */
function blankRows(
  columns: readonly OutputColumn[],
  quote: (s: string) => string,
  rowCount: number,
): Int32Array {
  let rows: Int32Array | undefined;
  for (const col of columns) {
    const blank = blankCells(col, quote);
    if (blank === undefined) return NO_ROWS;
    if (rows === undefined) {
      const all = new Int32Array(rowCount);
      let n = 0;
      for (let r = 0; r < rowCount; r++) if (blank(r)) all[n++] = r;
      rows = all.slice(0, n);
    } else rows = rows.filter((r) => blank(r));
    if (rows.length === 0) return NO_ROWS;
  }
  return rows ?? NO_ROWS;
}

/** Whether row r's cell of a column is written blank; undefined when none is. */
function blankCells(col: OutputColumn, quote: (s: string) => string): ((r: number) => boolean) | undefined {
  if (col.kind === 'dictionary') {
    const flags = Uint8Array.from(col.dictionary, (d) =>
      BLANK_CELL.test(d) && BLANK_CELL.test(quote(d)) ? 1 : 0,
    );
    if (!flags.includes(1)) return undefined;
    const codes = col.codes;
    return (r) => flags[codes[r]!] === 1;
  }
  if (col.kind === 'number') {
    // NaN is written empty (or "" alone in its file); any number holds a digit.
    if (!BLANK_CELL.test(quote(''))) return undefined;
    const values = col.values;
    return (r) => Number.isNaN(values[r]);
  }
  const { offsets, bytes } = col.values;
  return (r) => {
    for (let i = offsets[r]!; i < offsets[r + 1]!; i++)
      if (bytes[i] !== SPACE && bytes[i] !== TAB) return false;
    return BLANK_CELL.test(
      quote(Buffer.from(bytes.subarray(offsets[r]!, offsets[r + 1]!)).toString('latin1')),
    );
  };
}

/**
 * A table of distinct cells (each a value, then `after` bytes: its delimiter or line end) in
 * which `rows` take their cell quoted: a cell of their own, `"` value `"` then the same bytes
 * after (their values are blank: nothing in them to double).
 */
function withQuotedRows(table: CellTable, rows: Int32Array, after: number): CellTable {
  const codes = table.codes.slice();
  const size = table.lengths.length;
  /** Per cell its quoted cell's index, once one of the rows takes it. */
  const quoted = new Map<number, number>();
  for (const r of rows) {
    const k = codes[r]!;
    let q = quoted.get(k);
    if (q === undefined) {
      q = size + quoted.size;
      quoted.set(k, q);
    }
    codes[r] = q;
  }
  const starts = new Int32Array(size + quoted.size);
  const lengths = new Int32Array(size + quoted.size);
  starts.set(table.starts);
  lengths.set(table.lengths);
  let end = table.bytes.length;
  for (const [k, q] of quoted) {
    starts[q] = end;
    lengths[q] = lengths[k]! + 2;
    end += (lengths[q]! + 7) & ~7;
  }
  const bytes = new Uint8Array(end);
  bytes.set(table.bytes);
  for (const [k, q] of quoted) {
    const from = starts[k]!;
    const value = lengths[k]! - after;
    let at = starts[q]!;
    bytes[at++] = QUOTE;
    bytes.set(table.bytes.subarray(from, from + value), at);
    at += value;
    bytes[at++] = QUOTE;
    bytes.set(table.bytes.subarray(from + value, from + lengths[k]!), at);
  }
  return { bytes, starts, lengths, codes };
}

/** A column's distinct cells (see CellTable), each at a multiple of 8 bytes. */
function cellTable(texts: string[], codes: Int32Array): CellTable {
  const lengths = new Int32Array(texts.length);
  const starts = new Int32Array(texts.length);
  let end = 0;
  for (let k = 0; k < texts.length; k++) {
    lengths[k] = Buffer.byteLength(texts[k]!, 'utf8');
    starts[k] = end;
    end += (lengths[k]! + 7) & ~7;
  }
  // Encoded one by one: joined first, a lone surrogate could pair with its neighbour's.
  const bytes = Buffer.alloc(end);
  for (let k = 0; k < texts.length; k++) bytes.write(texts[k]!, starts[k]!, 'utf8');
  return { bytes, starts, lengths, codes };
}

/** Codes every raw column's tables share: each row its own cell, or every row cell 0. */
interface SharedCodes {
  readonly rows: () => Int32Array;
  readonly zeros: () => Int32Array;
  /** How often each cell is used, for codes given here (else undefined). */
  readonly uses: (codes: Int32Array) => Int32Array | undefined;
}

function sharedCodes(rowCount: number): SharedCodes {
  let rows: Int32Array | undefined;
  let zeros: Int32Array | undefined;
  return {
    rows: () => {
      if (!rows) {
        rows = new Int32Array(rowCount);
        for (let r = 0; r < rowCount; r++) rows[r] = r;
      }
      return rows;
    },
    zeros: () => (zeros ??= new Int32Array(rowCount)),
    uses: (codes) =>
      codes === rows
        ? new Int32Array(rowCount).fill(1)
        : codes === zeros
          ? Int32Array.of(rowCount)
          : undefined,
  };
}

/**
 * A column of values as bytes (src/data/raw.ts) as two tables: one cell per row, in row order,
 * then the delimiter or line end after it (one cell every row uses). A value that needs no
 * quoting is its bytes as they are (after a `'` when formula escaping escapes it); one that
 * holds the delimiter, a quote or a line break is quoted byte by byte (its quotes doubled: the
 * bytes are UTF-8 as read, so this is what quoting its text gives); any other goes through
 * `quote` as text, so the cells are those of the same values as strings. No value is looked up
 * one by one: such a column (a note, a timestamp) has about as many distinct values as rows,
 * and free text often holds a comma.
 */
function rawCells(
  values: RawValues,
  delimiter: string,
  after: string,
  quote: (s: string) => string,
  quoteEmpty: boolean,
  options: CsvWriteOptions,
  shared: SharedCodes,
  /** Rows whose value is quoted whatever it holds (blank ones, in an otherwise empty row). */
  quoted: Int32Array = NO_ROWS,
): CellTable[] {
  const { offsets, bytes } = values;
  const n = rawLength(values);
  const first = offsets[0]!;
  const end = offsets[n]!;
  const d = delimiter.length === 1 && delimiter.charCodeAt(0) < 0x80 ? delimiter.charCodeAt(0) : -1;
  // An escaped value gains a leading `'`: with `'` as the delimiter that needs quoting too.
  const escapes = options.escapeFormulas === true;
  const tail = Buffer.alloc((Buffer.byteLength(after) + 7) & ~7);
  const tailLength = tail.write(after, 'utf8');
  const tailTable: CellTable = {
    bytes: tail,
    starts: Int32Array.of(0),
    lengths: Int32Array.of(tailLength),
    codes: shared.zeros(),
  };
  // The common case: the values as they are, quoted by the writer as it writes each one.
  if (d >= 0 && !escapes && !quoteEmpty && quoted.length === 0) {
    const starts = first === 0 ? offsets : offsets.map((o) => o - first);
    const column = { bytes: bytes.subarray(first, end), starts, lengths: NO_LENGTHS, codes: shared.rows() };
    return [{ ...column, values: d }, tailTable];
  }
  /** Per row: PLAIN, ESCAPED (copied after a `'`), QUOTED (quoted byte by byte) or TEXT (through `quote`). */
  const form = new Uint8Array(n);
  /** Per row holding a quote (few do), how many: each is doubled in its quoted cell. */
  let quotes = new Map<number, number>();
  if (d < 0) form.fill(TEXT);
  else {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (const special of new Set([d, LF, CR])) markHolding(buffer, offsets, special, form);
    quotes = markQuotes(buffer, offsets, form);
    if (quoteEmpty) markEmpty(offsets, form);
    if (escapes) markFormulas(bytes, offsets, form, d !== APOSTROPHE);
  }
  // Blank: no quote to double, no formula to escape.
  for (const r of quoted) form[r] = QUOTED;
  // The other rows' cells go after the column's bytes (TEXT ones made here, the rest in place).
  const texts = new Map<number, Buffer>();
  let extra = addedBytes(offsets, form, quotes);
  for (let r = form.indexOf(TEXT); r >= 0; r = form.indexOf(TEXT, r + 1)) {
    const value = Buffer.from(bytes.buffer, bytes.byteOffset + offsets[r]!, offsets[r + 1]! - offsets[r]!);
    const cell = Buffer.from(quote(value.toString('utf8')), 'utf8');
    texts.set(r, cell);
    extra += cell.length;
  }
  const starts = new Int32Array(n);
  const lengths = new Int32Array(n);
  rowSpans(offsets, starts, lengths);
  let cells = bytes.subarray(first, end);
  if (extra > 0) {
    cells = new Uint8Array(end - first + extra);
    cells.set(bytes.subarray(first, end));
    let at = otherCells(bytes, offsets, form, quotes, cells, end - first, starts, lengths);
    for (const [r, cell] of texts) {
      cells.set(cell, at);
      starts[r] = at;
      lengths[r] = cell.length;
      at += cell.length;
    }
  }
  return [{ bytes: cells, starts, lengths, codes: shared.rows() }, tailTable];
}

const NO_LENGTHS = new Int32Array(0);

/** The row whose bytes hold byte `at` (offsets ascending; an empty row holds none). */
function rowHolding(offsets: Int32Array, at: number): number {
  let lo = 0;
  let hi = offsets.length - 2;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (offsets[mid]! <= at) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

const APOSTROPHE = 0x27;
const PLAIN = 0;
const ESCAPED = 1;
const QUOTED = 2;
const TEXT = 3;

// rawCells' loops, each a function of its own: the JIT optimizes each loop alone, where one
// function of many loops ran each new loop unoptimized again (it had no feedback yet) on its
// first calls in every worker.

/** Rows holding byte `special` marked QUOTED (found by searching the bytes: rows rarely hold one). */
function markHolding(buffer: Buffer, offsets: Int32Array, special: number, form: Uint8Array): void {
  const end = offsets[offsets.length - 1]!;
  for (let at = buffer.indexOf(special, offsets[0]!); at >= 0 && at < end; ) {
    const r = rowHolding(offsets, at);
    form[r] = QUOTED;
    at = buffer.indexOf(special, offsets[r + 1]!);
  }
}

/** Empty rows marked TEXT (a one-column file quotes them: an empty line would be dropped). */
function markEmpty(offsets: Int32Array, form: Uint8Array): void {
  for (let r = 0; r < form.length; r++) if (offsets[r] === offsets[r + 1]) form[r] = TEXT;
}

/** Rows opening with a formula byte: ESCAPED when plain and `'` can be prefixed, else TEXT. */
function markFormulas(bytes: Uint8Array, offsets: Int32Array, form: Uint8Array, prefixes: boolean): void {
  for (let r = 0; r < form.length; r++) {
    if (offsets[r] === offsets[r + 1] || FORMULA_BYTE[bytes[offsets[r]!]!] !== 1) continue;
    form[r] = form[r] === PLAIN && prefixes ? ESCAPED : TEXT;
  }
}

/** Rows holding a quote marked QUOTED: per such row, its quotes (found by searching the bytes). */
function markQuotes(buffer: Buffer, offsets: Int32Array, form: Uint8Array): Map<number, number> {
  const quotes = new Map<number, number>();
  const end = offsets[offsets.length - 1]!;
  for (let at = buffer.indexOf(QUOTE, offsets[0]!); at >= 0 && at < end; at = buffer.indexOf(QUOTE, at + 1)) {
    const r = rowHolding(offsets, at);
    form[r] = QUOTED;
    quotes.set(r, (quotes.get(r) ?? 0) + 1);
  }
  return quotes;
}

/** The bytes ESCAPED and QUOTED rows' cells add (a `'`; two quotes and each quote doubled). */
function addedBytes(offsets: Int32Array, form: Uint8Array, quotes: ReadonlyMap<number, number>): number {
  let extra = 0;
  for (let r = 0; r < form.length; r++) {
    const f = form[r]!;
    if (f === ESCAPED) extra += 1 + offsets[r + 1]! - offsets[r]!;
    else if (f === QUOTED) extra += 2 + offsets[r + 1]! - offsets[r]!;
  }
  // A row holding a quote that formula escaping sends through `quote` is counted there.
  for (const [r, k] of quotes) if (form[r] === QUOTED) extra += k;
  return extra;
}

/** Each row's cell as its bytes: where it starts among them, and its length. */
function rowSpans(offsets: Int32Array, starts: Int32Array, lengths: Int32Array): void {
  const first = offsets[0]!;
  for (let r = 0; r < starts.length; r++) {
    starts[r] = offsets[r]! - first;
    lengths[r] = offsets[r + 1]! - offsets[r]!;
  }
}

/**
 * ESCAPED and QUOTED rows' cells written to `cells` from `at` on, their starts and lengths
 * set: where they end.
 */
function otherCells(
  bytes: Uint8Array,
  offsets: Int32Array,
  form: Uint8Array,
  quotes: ReadonlyMap<number, number>,
  cells: Uint8Array,
  at: number,
  starts: Int32Array,
  lengths: Int32Array,
): number {
  for (let r = 0; r < form.length; r++) {
    const f = form[r]!;
    if (f !== ESCAPED && f !== QUOTED) continue;
    const from = offsets[r]!;
    const to = offsets[r + 1]!;
    starts[r] = at;
    if (f === ESCAPED) {
      cells[at] = APOSTROPHE;
      at = copyInto(bytes, from, to, cells, at + 1);
    } else {
      cells[at] = QUOTE;
      at = quotes.has(r)
        ? doubledInto(bytes, from, to, cells, at + 1)
        : copyInto(bytes, from, to, cells, at + 1);
      cells[at++] = QUOTE;
    }
    lengths[r] = at - starts[r]!;
  }
  return at;
}

/** `bytes[from, to)` to `cells` at `at`: where it ends. */
function copyInto(bytes: Uint8Array, from: number, to: number, cells: Uint8Array, at: number): number {
  for (let i = from; i < to; i++) cells[at++] = bytes[i]!;
  return at;
}

/** `bytes[from, to)` to `cells` at `at`, each quote doubled: where it ends. */
function doubledInto(bytes: Uint8Array, from: number, to: number, cells: Uint8Array, at: number): number {
  for (let i = from; i < to; i++) {
    const b = bytes[i]!;
    cells[at++] = b;
    if (b === QUOTE) cells[at++] = QUOTE;
  }
  return at;
}

/** First bytes of a cell that formula escaping escapes (see FORMULA_START). */
const FORMULA_BYTE = (() => {
  const table = new Uint8Array(256);
  for (const c of "=+-@\t\r'") table[c.charCodeAt(0)] = 1;
  return table;
})();

/**
 * How often each cell of a table is used; an out-of-range code, which would read another
 * cell's bytes, fails like indexing an array would.
 */
function cellUses({ codes, lengths }: CellTable, rowCount: number): Int32Array {
  const uses = new Int32Array(lengths.length);
  for (let r = 0; r < rowCount; r++) {
    const k = codes[r]!;
    if (!(k >= 0 && k < uses.length)) {
      throw new OutputError(
        'E_OUTPUT_CODES',
        `output row ${r + 1}: code ${k} is outside its dictionary of ${uses.length} values`,
        'this is a bug in ppdp: a released code must index its dictionary',
      );
    }
    uses[k]!++;
  }
  return uses;
}

/** The bytes cells used `uses[k]` times take, and the longest cell used (a loop of its own, for the JIT). */
function usedBytes(uses: Int32Array, lengths: Int32Array): { total: number; widest: number } {
  let total = 0;
  let widest = 0;
  for (let k = 0; k < uses.length; k++) {
    total += uses[k]! * lengths[k]!;
    if (uses[k]! > 0 && lengths[k]! > widest) widest = lengths[k]!;
  }
  return { total, widest };
}

/** A number column as distinct formatted cells (never quoted; NaN is empty; `asCell` may escape a `-`). */
function numberCells(
  values: Float64Array,
  quoteEmpty: boolean,
  after: string,
  asCell: (s: string) => string,
): CellTable {
  const index = new Map<number, number>();
  const texts: string[] = [];
  const codes = new Int32Array(values.length);
  for (let r = 0; r < values.length; r++) {
    const x = values[r]!;
    let k = index.get(x);
    if (k === undefined) {
      k = texts.length;
      texts.push((quoteEmpty && Number.isNaN(x) ? '""' : asCell(formatNumber(x))) + after);
      index.set(x, k);
    }
    codes[r] = k;
  }
  return cellTable(texts, codes);
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

function outputLength(col: OutputColumn): number {
  return col.kind === 'dictionary'
    ? col.codes.length
    : col.kind === 'utf8'
      ? rawLength(col.values)
      : col.values.length;
}

/** A cell as RFC 4180 writes it: quoted (inner quotes doubled) when it holds the delimiter, a quote or a line break. */
export function quoteField(s: string, delimiter: string): string {
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
