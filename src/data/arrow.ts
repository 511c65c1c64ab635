/**
 * Arrow IPC input and output. Reading works on the record batches' buffers directly, each column
 * coded in order of first appearance, as a CSV of the same rows is (a null where it stands, a
 * dictionary column's entries as rows use them; its indices are copied as they are once they
 * are seen to be those codes): the same dictionaries whatever the format, batches or shards.
 */
import { closeSync } from 'node:fs';
import { basename } from 'node:path';
import {
  type Data,
  DataType,
  DateUnit,
  Dictionary,
  Field,
  Float64,
  Int8,
  Int16,
  Int32,
  Message,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  RecordBatchReader,
  type RecordBatchStreamReader,
  RecordBatchStreamWriter,
  Schema,
  Struct,
  Table,
  TimeUnit,
  tableToIPC,
  Utf8,
  util,
  type Vector,
} from 'apache-arrow';
import { Footer } from 'apache-arrow/ipc/metadata/file';
import type {
  RecordBatch as BatchHeader,
  DictionaryBatch as DictionaryHeader,
} from 'apache-arrow/ipc/metadata/message';
import { InputError, OutputError } from '../errors.ts';
import { thousands } from '../util/format.ts';
import { shownName } from '../util/limits.ts';
import { checkBatchLayout, LayoutProblem } from './arrow-check.ts';
import { ByteDictionary } from './dictionary.ts';
import { type InputFile, openInput, readAt } from './input.ts';
import { checkInputColumns } from './limits.ts';
import { type RawValues, rawLength, rawOfCodes } from './raw.ts';
import {
  type CodeArray,
  type EncodedColumn,
  type EncodedTable,
  type OutputColumn,
  TYPED_INPUT_DELIMITER,
} from './table.ts';
import {
  utf8Vector as bulkUtf8Vector,
  firstInvalidUtf8Row,
  invalidUtf8Row,
  textEncodingError,
  utf8Buffers,
  utf8Rows,
} from './utf8.ts';
import {
  dateRangeError,
  dayOf,
  formatDate,
  formatDecimal,
  formatTimestamp,
  signedLittleEndian,
  TimeOutOfRange,
  type TimeUnit as Unit,
} from './values.ts';

const MAGIC = 'ARROW1';
const SUPPORTED =
  'Utf8, LargeUtf8, Dictionary<Utf8, int>, Int*, Uint*, Float*, Bool, Date32, Date64, Timestamp (any unit and time zone), Decimal';

/**
 * Reads an Arrow IPC file (file or stream format) into a dictionary-encoded table, one IPC
 * message at a time: each record batch is read, encoded into the growing code arrays and
 * dropped, so memory holds the codes, the distinct values and one batch.
 * @throws InputError with codes E_INPUT_MISSING, E_INPUT_EMPTY, E_INPUT_NO_ROWS, E_INPUT_NULL,
 *   E_ARROW_CORRUPT, E_ARROW_TYPE, E_ARROW_SCHEMA.
 */
export function readArrow(
  path: string,
  options: {
    nulls?: NullPolicy;
    raw?: ReadonlySet<string>;
    omit?: ReadonlySet<string>;
    delimiter?: string;
  } = {},
): EncodedTable {
  const [table] = readArrowShards(path, Number.POSITIVE_INFINITY, options);
  return table!;
}

/**
 * Reads an Arrow IPC file as consecutive shards of `rowsPerShard` rows (the last one shorter;
 * record batches are sliced where a shard ends), holding one shard's codes at a time. Each
 * shard's columns carry the dictionaries read so far, each a prefix of the next shard's.
 * @throws InputError as readArrow.
 */
export function* readArrowShards(
  path: string,
  rowsPerShard: number,
  options: {
    nulls?: NullPolicy;
    omit?: ReadonlySet<string>;
    range?: ArrowRange;
    /**
     * Columns returned as their rows' UTF-8 bytes (`raw`, src/data/raw.ts; `dictionary` and
     * `codes` empty): no string and no dictionary entry per value, for a column of (nearly)
     * distinct values that is only compared or hashed.
     */
    raw?: ReadonlySet<string>;
    /** The tables' `delimiter` (the release CSV's): TYPED_INPUT_DELIMITER by default. */
    delimiter?: string;
  } = {},
): Generator<EncodedTable, void, undefined> {
  const input = openInput(path);
  try {
    yield* readOpenArrow(
      path,
      input,
      options.nulls ?? 'error',
      rowsPerShard,
      options.omit ?? new Set(),
      options.range,
      options.raw ?? new Set(),
      options.delimiter ?? TYPED_INPUT_DELIMITER,
    );
  } finally {
    closeSync(input.fd);
  }
}

/**
 * Consecutive record batches of one Arrow IPC file, read on their own (a scan reads a large
 * file as ranges side by side): the messages before the first record batch (schema and
 * dictionaries), then the batches in bytes [start, end).
 */
export interface ArrowRange {
  /** Where the first record batch starts: every message before it is read by every range. */
  readonly head: number;
  readonly start: number;
  readonly end: number;
  /** Rows of the file before the range: errors name rows of the file. */
  readonly firstRow: number;
  /** Rows in the range. */
  readonly rows: number;
  /** Where the file's messages end (its footer starts): a range also reads [0, head) and from here on. */
  readonly tail: number;
}

/**
 * A file's record batches grouped into ranges of at most `rowsPerRange` rows each (a batch
 * longer than that is a range of its own), to be read side by side; undefined when the file
 * is one range, or cannot be split: a dictionary message after the first record batch (a
 * delta or a replacement, which later batches depend on), or bytes the walk cannot read (the
 * whole read then reports them).
 */
export function arrowRanges(path: string, rowsPerRange: number): ArrowRange[] | undefined {
  let input: InputFile;
  try {
    input = openInput(path);
  } catch {
    return undefined;
  }
  try {
    const { start, end, footer } = messageBounds(path, input);
    const walk = new MessageWalk(path, input, [[start, end]], footer);
    const batches: { at: number; size: number; rows: number }[] = [];
    for (const { at, size, message } of walk.headers()) {
      if (message.isDictionaryBatch() && batches.length > 0) return undefined;
      if (message.isRecordBatch()) batches.push({ at, size, rows: message.header().length });
    }
    if (batches.length < 2) return undefined;
    const head = batches[0]!.at;
    const ranges: ArrowRange[] = [];
    let firstRow = 0;
    for (let b = 0; b < batches.length; ) {
      const from = batches[b]!;
      let rows = from.rows;
      let last = from;
      for (b++; b < batches.length && rows + batches[b]!.rows <= rowsPerRange; b++) {
        last = batches[b]!;
        rows += last.rows;
      }
      ranges.push({ head, start: from.at, end: last.at + last.size, firstRow, rows, tail: end });
      firstRow += rows;
    }
    return ranges.length > 1 ? ranges : undefined;
  } catch (err) {
    // A length the bytes do not hold is refused here, before a range is cut from it.
    if (err instanceof InputError && err.code === 'E_ARROW_CORRUPT') throw err;
    return undefined;
  } finally {
    closeSync(input.fd);
  }
}

/**
 * What a null does: fail (E_INPUT_NULL, the default) or read as the missing value, the empty
 * string (with `format.emptyCells: "value"`).
 */
export type NullPolicy = 'error' | 'missing';

function* readOpenArrow(
  path: string,
  input: InputFile,
  nulls: NullPolicy,
  rowsPerShard: number,
  /** Columns never encoded (identifying ones): listed in the tables' `omitted`. */
  omit: ReadonlySet<string>,
  /** Only these record batches (arrowRanges); all of them when absent. */
  range: ArrowRange | undefined,
  /** Columns read as bytes (RawColumn). */
  raw: ReadonlySet<string>,
  delimiter: string,
): Generator<EncodedTable, void, undefined> {
  const file = basename(path);
  const corrupt = corruptError(file);
  const { start, end, footer } = messageBounds(path, input);
  // Some writers (Arrow JS among them) leave the schema message out of the file format's
  // stream: it is then made from the footer's schema.
  const spans: [number, number][] =
    range === undefined
      ? [[start, end]]
      : range.start === range.head
        ? [[start, range.end]]
        : [
            [start, range.head],
            [range.start, range.end],
          ];
  const walk = new MessageWalk(path, input, spans, footer);
  let reader: RecordBatchStreamReader;
  let batches: Iterator<RecordBatch>;
  try {
    reader = RecordBatchReader.from(walk.messages()) as RecordBatchStreamReader;
    reader.open();
    batches = reader[Symbol.iterator]();
  } catch (err) {
    // Arrow's own message is not passed on: it is about byte layouts, not a fix.
    if (err instanceof InputError) throw err;
    throw corrupt();
  }
  const schema = reader.schema as Schema | undefined;
  if (!schema || schema.fields.length === 0) throw corrupt();
  const fields = schema.fields;
  checkInputColumns(
    file,
    fields.map((f) => f.name),
    'the schema',
  );
  const seen = new Set<string>();
  for (const [i, f] of fields.entries()) {
    if (f.name.trim() === '' || seen.has(f.name)) {
      throw new InputError(
        'E_ARROW_SCHEMA',
        `${file}: column ${i + 1} ${f.name.trim() === '' ? 'has an empty name' : `"${shownName(f.name)}" appears twice`}`,
        'give every column a unique, non-empty name',
      );
    }
    seen.add(f.name);
    if (!omit.has(f.name)) checkType(file, f.name, f.type);
  }

  const kept = fields.flatMap((f, i) => (omit.has(f.name) ? [] : [i]));
  const omitted = fields.filter((f) => omit.has(f.name)).map((f) => f.name);
  const typed = kept
    .map((i) => fields[i]!)
    .filter((f) => !isText(f.type))
    .map((f) => f.name);
  const encoders = fields.map((f) =>
    raw.has(f.name)
      ? new RawColumn(file, f.name, nulls === 'missing', range?.firstRow ?? 0)
      : new ColumnEncoder(file, f.name, nulls === 'missing', range?.firstRow ?? 0),
  );
  let rowCount = 0;
  let total = 0;
  const counted = walk.countRows();
  let capacity = Math.max(0, Math.min(counted, rowsPerShard));
  for (const i of kept) encoders[i]!.reserve(capacity);
  const shard = (last: boolean): EncodedTable => {
    const columns: EncodedColumn[] = kept.map((i) => {
      const encoder = encoders[i]!;
      const name = fields[i]!.name;
      if (encoder instanceof RawColumn)
        return { name, dictionary: [], codes: new Int32Array(0), raw: encoder.take(rowCount) };
      return { name, dictionary: encoder.dictionary.slice(), codes: encoder.take(rowCount, last) };
    });
    const rows = rowCount;
    total += rowCount;
    rowCount = 0;
    return {
      source: path,
      rowCount: rows,
      columns,
      delimiter,
      ...(omitted.length > 0 ? { omitted } : {}),
      ...(typed.length > 0 ? { typed } : {}),
      ...(last ? { progress: 1 } : counted > 0 ? { progress: total / counted } : {}),
    };
  };
  for (;;) {
    let next: IteratorResult<RecordBatch>;
    try {
      next = batches.next();
    } catch (err) {
      if (err instanceof InputError) throw err;
      throw corrupt();
    }
    if (next.done) break;
    const batch = next.value;
    if (batch.numRows === 0) continue;
    if (batch.data.children.length !== fields.length) throw corrupt();
    // A batch may end a shard: its rows up to the shard's end go in, the rest start the next.
    for (let from = 0; from < batch.numRows; ) {
      const n = Math.min(batch.numRows - from, rowsPerShard - rowCount);
      const need = rowCount + n;
      if (need > capacity) {
        capacity = Math.min(rowsPerShard, Math.max(need, capacity * 2));
        for (const i of kept) encoders[i]!.reserve(capacity);
      }
      for (const i of kept) {
        const child = batch.data.children[i]!;
        encoders[i]!.add(from === 0 && n === batch.numRows ? child : child.slice(from, n));
      }
      rowCount = need;
      from += n;
      if (rowCount === rowsPerShard) yield shard(false);
    }
  }
  if (rowCount === 0 && total === 0) {
    throw new InputError(
      'E_INPUT_NO_ROWS',
      `${file}: the table has no rows`,
      'export the table with its rows',
    );
  }
  if (rowCount > 0) yield shard(true);
}

function corruptError(file: string): () => InputError {
  return () =>
    new InputError(
      'E_ARROW_CORRUPT',
      `${file}: not a readable Arrow IPC file (corrupt, truncated or another format)`,
      'write the file again with an Arrow IPC writer (file or stream format), or pass a CSV instead',
    );
}

/**
 * Where a file's IPC messages lie: the file format is the stream format between a leading
 * magic and a footer (a file that lost its tail may still parse partly: require the magic);
 * the footer's bytes, when there is one.
 */
function messageBounds(path: string, input: InputFile): { start: number; end: number; footer?: Buffer } {
  const file = basename(path);
  const size = input.size;
  if (size === 0) {
    throw new InputError('E_INPUT_EMPTY', `${file}: the file is empty`, 'expected an Arrow IPC file');
  }
  const head = Buffer.alloc(Math.min(8, size));
  readAt(path, input, head, 0);
  if (!hasMagic(head, 0)) return { start: 0, end: size };
  const corrupt = corruptError(file);
  const tail = Buffer.alloc(10);
  if (size < 8 + tail.length || readAt(path, input, tail, size - tail.length) < tail.length) throw corrupt();
  const footerLength = tail.readInt32LE(0);
  if (!hasMagic(tail, 4) || footerLength <= 0 || size - tail.length - footerLength < 8) throw corrupt();
  const end = size - tail.length - footerLength;
  const footer = Buffer.allocUnsafeSlow(footerLength);
  readAt(path, input, footer, end);
  return { start: 8, end, footer };
}

/** A schema as an IPC message (continuation, length, metadata, padding; no body). */
function schemaMessage(schema: Schema): Uint8Array {
  const meta = Message.encode(Message.from(schema));
  const size = (8 + meta.length + 7) & ~7;
  const out = new Uint8Array(size);
  const view = new DataView(out.buffer);
  view.setInt32(0, -1, true);
  view.setInt32(4, size - 8, true);
  out.set(meta, 8);
  return out;
}

/**
 * The IPC messages of the spans `[start, end)` of a file, one span after another, read one
 * whole message (prefix, metadata and body) per piece, so Arrow's reader takes each body as it
 * is instead of joining pieces. Every record batch and dictionary batch is checked against its
 * schema before it is handed out (src/data/arrow-check.ts): its declared lengths against its
 * buffers, its buffers against its body, its body against the file; with the body read, its
 * string offsets too. Counting the rows, cutting ranges and reading all walk here.
 */
class MessageWalk {
  private readonly prefix = Buffer.alloc(8);
  private readonly file: string;
  /** The schema the batches are checked against: the stream's first message, or the footer's. */
  private schema: Schema | undefined;

  constructor(
    private readonly path: string,
    private readonly input: InputFile,
    private readonly spans: readonly (readonly [number, number])[],
    /** The file format's footer, whose schema is handed out first when the stream has none. */
    private readonly footer: Buffer | undefined,
  ) {
    this.file = basename(path);
  }

  /**
   * The schema, refused when a field has no name (Arrow's schema leaves it optional), before
   * anything reads its names.
   */
  private named(schema: Schema): Schema {
    const unnamed = schema.fields.findIndex((f) => typeof f.name !== 'string');
    if (unnamed >= 0) {
      throw new InputError(
        'E_ARROW_SCHEMA',
        `${this.file}: column ${unnamed + 1} has no name`,
        'give every column a unique, non-empty name',
      );
    }
    return schema;
  }

  /** The footer's schema (a plain Error when there is none: the stream then cannot be read). */
  private footerSchema(): Schema {
    if (!this.footer) throw new Error('no schema');
    return Footer.decode(this.footer).schema;
  }

  /**
   * The message at `at` (of a span ending at `end`): its prefix size, total size and decoded
   * metadata, or null at the end of the stream. Throws a plain Error when the bytes cannot be
   * a message.
   */
  private messageAt(at: number, end: number): { size: number; bodyAt: number; message: Message } | null {
    const prefix = this.prefix;
    const got = readAt(this.path, this.input, prefix.subarray(0, Math.min(8, end - at)), at);
    if (got < 4) throw new Error('truncated message');
    let length = prefix.readInt32LE(0);
    let skip = 4;
    // A continuation marker, then the length (the pre-0.15 layout has the length first).
    if (length === -1) {
      if (got < 8) throw new Error('truncated message');
      length = prefix.readInt32LE(4);
      skip = 8;
    }
    if (length === 0) return null;
    if (length < 0 || at + skip + length > end) throw new Error('truncated message');
    const meta = Buffer.allocUnsafeSlow(length);
    readAt(this.path, this.input, meta, at + skip);
    const message = Message.decode(meta);
    const size = skip + length + Number(message.bodyLength);
    if (!(size >= skip + length) || at + size > end) throw new Error('truncated message');
    return { size, bodyAt: skip + length, message };
  }

  /**
   * Each message's place, size and metadata, span after span, up to the end of the stream;
   * each batch checked against the schema (its lengths against its buffers and body).
   * @throws InputError E_ARROW_CORRUPT for a length the bytes do not hold; a plain Error for
   *   bytes that are not messages.
   */
  *headers(): Generator<{ at: number; size: number; bodyAt: number; message: Message; index: number }> {
    let batches = 0;
    let dictionaries = 0;
    for (const [start, end] of this.spans) {
      for (let at = start; at < end; ) {
        const next = this.messageAt(at, end);
        if (next === null) return;
        const { message } = next;
        if (message.isSchema()) this.schema = this.named(message.header() as Schema);
        else this.schema ??= this.named(this.footerSchema());
        const index = message.isRecordBatch() ? ++batches : message.isDictionaryBatch() ? ++dictionaries : 0;
        this.check(message, at, index);
        yield { at, ...next, index };
        at += next.size;
      }
    }
  }

  /** Checks a batch's declared lengths (`body`: and the offsets it holds). */
  private check(message: Message, at: number, index: number, body?: Uint8Array): void {
    const schema = this.schema!;
    try {
      if (message.isRecordBatch()) {
        checkBatchLayout(
          message.header() as BatchHeader,
          schema.fields,
          message.bodyLength,
          schema.metadataVersion,
          body,
        );
      } else if (message.isDictionaryBatch()) {
        const header = message.header() as DictionaryHeader;
        const type = schema.dictionaries.get(header.id);
        if (type === undefined)
          throw new LayoutProblem(`the dictionary's id ${header.id} is not in the schema`);
        checkBatchLayout(
          header.data,
          [{ name: '', type }],
          message.bodyLength,
          schema.metadataVersion,
          body,
          'the dictionary',
        );
      }
    } catch (err) {
      if (!(err instanceof LayoutProblem)) throw err;
      throw batchError(this.file, message, at, index, schema, err.message, err.unsupported);
    }
  }

  *messages(): Generator<Uint8Array> {
    let first = true;
    for (const { at, size, bodyAt, message, index } of this.headers()) {
      if (first && !message.isSchema()) yield schemaMessage(this.schema!);
      first = false;
      const bytes = Buffer.allocUnsafeSlow(size);
      if (readAt(this.path, this.input, bytes, at) < size) throw new Error('truncated message');
      if (message.isRecordBatch() || message.isDictionaryBatch())
        this.check(message, at, index, bytes.subarray(bodyAt));
      yield bytes;
    }
    // A file of no messages (Arrow JS writes a table without batches so) has its schema in the
    // footer alone: read, it is a table without rows.
    if (first) yield schemaMessage(this.named(this.footerSchema()));
  }

  /**
   * The rows of the spans' record batches, from their metadata alone (bodies are skipped), so
   * the code arrays are sized once; -1 when the messages cannot be walked (the read then fails).
   * Every batch's lengths are checked against its buffers first: a count here is one the bytes hold.
   */
  countRows(): number {
    let rows = 0;
    try {
      for (const { message } of this.headers()) if (message.isRecordBatch()) rows += message.header().length;
    } catch (err) {
      if (err instanceof InputError) throw err;
      return -1;
    }
    return rows;
  }
}

/** A batch whose declared lengths its bytes do not hold: named by file, batch, place and column. */
function batchError(
  file: string,
  message: Message,
  at: number,
  index: number,
  schema: Schema,
  problem: string,
  unsupported?: { readonly code: string; readonly hint: string },
): InputError {
  let where = `record batch ${thousands(index)} (at byte ${thousands(at)})`;
  if (message.isDictionaryBatch()) {
    const id = (message.header() as DictionaryHeader).id;
    const field = schema.fields.find((f) => DataType.isDictionary(f.type) && f.type.id === id);
    where = `dictionary batch ${thousands(index)} (at byte ${thousands(at)})${field ? ` of column "${shownName(field.name)}"` : ''}`;
  }
  return new InputError(
    unsupported?.code ?? 'E_ARROW_CORRUPT',
    `${file} ${where}: ${problem}`,
    unsupported?.hint ??
      'the file is corrupt or its metadata does not match its data: write the file again with an Arrow IPC writer (file or stream format); ppdp reads no length its bytes do not hold',
  );
}

function hasMagic(bytes: Uint8Array, at: number): boolean {
  if (at < 0 || at + MAGIC.length > bytes.length) return false;
  for (let k = 0; k < MAGIC.length; k++) if (bytes[at + k] !== MAGIC.charCodeAt(k)) return false;
  return true;
}

function isScalar(t: DataType): boolean {
  return (
    DataType.isUtf8(t) ||
    DataType.isLargeUtf8(t) ||
    DataType.isInt(t) ||
    DataType.isFloat(t) ||
    DataType.isBool(t)
  );
}

/** Text, not a typed value: Utf8, LargeUtf8, or a dictionary of them. */
function isText(t: DataType): boolean {
  const v = DataType.isDictionary(t) ? t.dictionary : t;
  return DataType.isUtf8(v) || DataType.isLargeUtf8(v);
}

/** Types read as their text (dates, timestamps, decimals: see values.ts), not as dictionary values. */
function isTextual(t: DataType): boolean {
  return DataType.isDate(t) || DataType.isTimestamp(t) || DataType.isDecimal(t);
}

function checkType(file: string, name: string, type: DataType): void {
  const ok = DataType.isDictionary(type)
    ? isScalar(type.dictionary) && DataType.isInt(type.indices)
    : isScalar(type) || isTextual(type);
  if (!ok) {
    throw new InputError(
      'E_ARROW_TYPE',
      `${file} column "${shownName(name)}": Arrow type ${String(type)} is not supported`,
      `supported types are ${SUPPORTED}; cast the column to one of them (e.g. a string) before release`,
    );
  }
}

/** The string a value is released as; the same for CSV, Arrow and Parquet input. */
export function valueString(v: unknown): string {
  if (typeof v === 'string') return v;
  if (typeof v === 'bigint') return v.toString();
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  // NaN is the missing value, as a released CSV writes it (an empty cell).
  if (typeof v === 'number' && Number.isNaN(v)) return '';
  return String(v);
}

type Key = string | number | bigint | boolean;

/** Encodes one column's record batches into one code array and a shared dictionary. */
class ColumnEncoder {
  /** Entries of numbers, bools and Arrow dictionaries (keyed by value in `index`). */
  private readonly entries: string[] = [];
  /** Entries of a Utf8 column, looked up by their bytes: no string per row. */
  private strings: ByteDictionary | undefined;
  private codes = new Int32Array(0);
  private readonly index = new Map<Key, number>();
  /** Dictionary-column remaps by Arrow dictionary vector (an entry's code is given on first use). */
  private readonly remaps = new Map<Vector, Remap>();
  /** Rows filled since the last take. */
  private base = 0;
  /** Rows taken before (row numbers in errors count from the file's start). */
  private taken: number;

  constructor(
    private readonly file: string,
    private readonly name: string,
    /** Nulls read as the missing value (the empty string) instead of failing. */
    private readonly nullsAsMissing: boolean,
    /** Rows of the file before the first one read here. */
    firstRow: number,
  ) {
    this.taken = firstRow;
  }

  get dictionary(): string[] {
    return this.strings ? this.strings.values : this.entries;
  }

  /** Makes room for `capacity` rows. */
  reserve(capacity: number): void {
    const next = new Int32Array(capacity);
    next.set(this.codes.subarray(0, this.base));
    this.codes = next;
  }

  /** The codes of the `rows` rows read since the last take; the next rows fill the same array. */
  take(rows: number, last: boolean): Int32Array {
    const codes = this.codes;
    this.taken += this.base;
    this.base = 0;
    if (!last) return codes.slice(0, rows);
    this.codes = new Int32Array(0);
    return codes.length === rows ? codes : codes.slice(0, rows);
  }

  add(data: Data): void {
    const type = data.type;
    const nulls = data.nullCount > 0;
    if (nulls && !this.nullsAsMissing) {
      for (let i = 0; i < data.length; i++) if (!data.getValid(i)) throw this.nullError(i);
    }
    if (DataType.isDictionary(type)) this.addDictionary(data);
    else if (DataType.isUtf8(type) || DataType.isLargeUtf8(type)) this.addStrings(data);
    else if (DataType.isBool(type)) this.addBools(data);
    else if (isTextual(type)) this.addTextual(data);
    else this.addNumbers(data);
    this.base += data.length;
  }

  /**
   * The missing value's code, which a null row gets where it stands: coded where first met, as
   * a CSV reader codes an empty cell, so the dictionary's order (and every sum taken in it) does
   * not depend on the batches' or shards' cuts.
   */
  private missing(): number {
    return this.strings ? this.strings.codeOf(NO_BYTES, 0, 0) : this.code('', '');
  }

  /** The code of a value by its key; NaN is keyed as the missing value it is released as (a null's). */
  private code(value: Key, text: string): number {
    const key = typeof value === 'number' && Number.isNaN(value) ? '' : value;
    let code = this.index.get(key);
    if (code === undefined) {
      code = this.entries.length;
      this.entries.push(text);
      this.index.set(key, code);
    }
    return code;
  }

  private addDictionary(data: Data): void {
    const dict = data.dictionary!;
    let remap = this.remaps.get(dict);
    if (remap === undefined) {
      const texts = utf8Entries(dict);
      remap = {
        dict,
        texts,
        invalid: texts ? invalidEntries(dict) : NO_ENTRIES,
        codes: new Int32Array(dict.length).fill(UNSEEN),
        unseen: dict.length,
        identity: true,
      };
      this.remaps.set(dict, remap);
    }
    const dictLength = dict.length;
    // `values` may be longer than the batch (padding): only the first `length` are indices.
    const indices = data.values as ArrayLike<number | bigint>;
    const codes = this.codes;
    const base = this.base;
    const n = data.length;
    const nulls = data.nullCount > 0;
    // Once every entry is met, each as its own index (a dictionary listed in order of first use,
    // as ppdp writes them), the rest of the batch's indices are its codes: copied in one go.
    const copies =
      !nulls &&
      (indices instanceof Int32Array || indices instanceof Int16Array || indices instanceof Int8Array);
    const big = indices instanceof BigInt64Array || indices instanceof BigUint64Array;
    const entryCodes = remap.codes;
    let i = 0;
    for (; i < n && !(copies && remap.unseen === 0 && remap.identity); i++) {
      if (nulls && !data.getValid(i)) {
        codes[base + i] = this.missing();
        continue;
      }
      const idx = big ? Number(indices[i]) : (indices[i] as number);
      if (!(idx >= 0 && idx < dictLength)) throw this.corruptIndex(i);
      let code = entryCodes[idx]!;
      if (code === UNSEEN) code = this.enter(remap, idx);
      if (code === NOT_UTF8) throw textEncodingError(this.file, this.name, this.taken + this.base + i);
      if (code < 0 && !this.nullsAsMissing) throw this.nullError(i);
      codes[base + i] = code < 0 ? this.missing() : code;
    }
    if (i === n) return;
    const rest = (indices as Int32Array | Int16Array | Int8Array).subarray(i, n);
    for (let j = 0; j < rest.length; j++) {
      const idx = rest[j]!;
      if (idx < 0 || idx >= dictLength) throw this.corruptIndex(i + j);
    }
    codes.set(rest, base + i);
  }

  /**
   * The code of a dictionary entry met for the first time, given then (in order of first use,
   * as a CSV's values are coded, not in the dictionary's order, which may list entries no row
   * uses). A null entry is -1 and one that is not UTF-8 NOT_UTF8: an error only if a row uses it.
   */
  private enter(remap: Remap, j: number): number {
    const v = remap.texts ? remap.texts[j]! : (remap.dict.get(j) as Key | null);
    const code = remap.invalid.has(j) ? NOT_UTF8 : v === null ? -1 : this.code(v, valueString(v));
    remap.codes[j] = code;
    remap.unseen--;
    if (code !== j) remap.identity = false;
    return code;
  }

  private addStrings(data: Data): void {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    const nulls = data.nullCount > 0;
    const skip = nulls ? (i: number) => !data.getValid(i) : undefined;
    const bad = firstInvalidUtf8Row(bytes, offsets, data.length, skip);
    if (bad >= 0) throw textEncodingError(this.file, this.name, this.taken + this.base + bad);
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const big = offsets instanceof BigInt64Array;
    const codes = this.codes;
    const base = this.base;
    this.strings ??= new ByteDictionary();
    const strings = this.strings;
    let start = big ? Number(offsets[0]) : (offsets[0] as number);
    for (let i = 0; i < data.length; i++) {
      const end = big ? Number(offsets[i + 1]) : (offsets[i + 1] as number);
      // A null slot's bytes are unspecified: never looked up, the row is the missing value.
      codes[base + i] = nulls && !data.getValid(i) ? this.missing() : strings.codeOf(buf, start, end);
      start = end;
    }
  }

  private addBools(data: Data): void {
    const bits = data.values as Uint8Array;
    const codes = this.codes;
    const base = this.base;
    const nulls = data.nullCount > 0;
    for (let i = 0; i < data.length; i++) {
      if (nulls && !data.getValid(i)) {
        codes[base + i] = this.missing();
        continue;
      }
      const pos = data.offset + i;
      const v = ((bits[pos >> 3]! >> (pos & 7)) & 1) === 1;
      codes[base + i] = this.code(v, v ? 'true' : 'false');
    }
  }

  private addNumbers(data: Data): void {
    const values = data.values as ArrayLike<number | bigint>;
    // Float16 is stored as raw half-precision bits.
    const half = DataType.isFloat(data.type) && values instanceof Uint16Array;
    const codes = this.codes;
    const base = this.base;
    const nulls = data.nullCount > 0;
    for (let i = 0; i < data.length; i++) {
      if (nulls && !data.getValid(i)) {
        codes[base + i] = this.missing();
        continue;
      }
      const raw = values[i]!;
      const v = half ? util.uint16ToFloat64(raw as number) : raw;
      codes[base + i] = this.code(v, valueString(v));
    }
  }

  /**
   * Dates as `YYYY-MM-DD` (a Date64's milliseconds floored to their day), timestamps as ISO 8601
   * with the fraction they have and `Z` when the column has a time zone (its values are UTC
   * instants), decimals as their exact text: each distinct stored value formatted once.
   */
  private addTextual(data: Data): void {
    const type = data.type as DataType;
    const codes = this.codes;
    const base = this.base;
    const nulls = data.nullCount > 0;
    // The key of row i (its stored value) and the text of a key, formatted once per distinct value.
    let key: (i: number) => Key;
    let text: (key: Key) => string;
    if (DataType.isDecimal(type)) {
      const words = data.values as Uint32Array;
      const width = type.bitWidth / 8;
      const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
      key = (i) => signedLittleEndian(bytes.subarray(i * width, (i + 1) * width));
      text = (k) => formatDecimal(k as bigint, type.scale);
    } else if (DataType.isDate(type)) {
      const values = data.values as ArrayLike<number | bigint>;
      const days = type.unit === DateUnit.DAY;
      key = (i) => (days ? Number(values[i]!) : dayOf(BigInt(values[i]!)));
      text = (k) => formatDate(k as number);
    } else {
      const t = type as DataType & { unit: TimeUnit; timezone?: string | null };
      const values = data.values as ArrayLike<bigint | number>;
      const unit = ARROW_UNITS[t.unit];
      const utc = typeof t.timezone === 'string' && t.timezone !== '';
      key = (i) => BigInt(values[i]!);
      text = (k) => formatTimestamp(k as bigint, unit, utc);
    }
    let i = 0;
    try {
      for (; i < data.length; i++) {
        if (nulls && !data.getValid(i)) {
          codes[base + i] = this.missing();
          continue;
        }
        const k = key(i);
        codes[base + i] = this.index.get(k) ?? this.code(k, text(k));
      }
    } catch (err) {
      if (err instanceof TimeOutOfRange)
        throw dateRangeError(this.file, this.name, this.taken + this.base + i);
      throw err;
    }
  }

  private nullError(i: number): InputError {
    return nullError(this.file, this.name, this.taken + this.base + i);
  }

  private corruptIndex(i: number): InputError {
    return new InputError(
      'E_ARROW_CORRUPT',
      `${this.file} column "${shownName(this.name)}" row ${this.taken + this.base + i + 1}: dictionary index out of range`,
      'the file is corrupt: write it again with an Arrow IPC writer',
    );
  }
}

/**
 * One column read as its rows' UTF-8 bytes (RawValues): a Utf8 column's buffers copied, a
 * Dictionary<Utf8> column's indices expanded to their entries' bytes, with no string or map
 * entry per value. Other types are coded as ColumnEncoder codes them, then written out as bytes.
 */
class RawColumn {
  private offsets = new Int32Array(1);
  private bytes = new Uint8Array(0);
  /** Rows filled since the last take. */
  private rows = 0;
  /** Rows taken before (row numbers in errors count from the file's start). */
  private taken: number;
  /** A dictionary vector's entries as bytes (null: a null entry), once per vector. */
  private readonly entries = new Map<
    Vector,
    { raw: RawValues; valid: Uint8Array; invalid: ReadonlySet<number> }
  >();
  /** For a column of another type than text. */
  private coded: ColumnEncoder | undefined;
  /**
   * A shard's first Utf8 batch, not yet copied: when the shard holds no other (a staged part is
   * one batch), its rows are views of the batch's own buffers, which its message was read into
   * alone; a second batch copies it first.
   */
  private held: RawValues | undefined;

  constructor(
    private readonly file: string,
    private readonly name: string,
    private readonly nullsAsMissing: boolean,
    firstRow: number,
  ) {
    this.taken = firstRow;
  }

  reserve(capacity: number): void {
    if (capacity + 1 > this.offsets.length) {
      const next = new Int32Array(capacity + 1);
      next.set(this.offsets.subarray(0, this.rows + 1));
      this.offsets = next;
    }
    this.coded?.reserve(capacity);
  }

  /** The rows read since the last take, as bytes. */
  take(rows: number): RawValues {
    let out: RawValues;
    if (this.held && rows === this.rows) {
      out = this.held;
      this.held = undefined;
    } else if (this.coded) {
      out = rawOfCodes(utf8Buffers(this.coded.dictionary), this.coded.take(rows, false));
    } else {
      this.copyHeld();
      const offsets = this.offsets.slice(0, rows + 1);
      out = { offsets, bytes: this.bytes.slice(0, offsets[rows]!) };
    }
    this.taken += this.rows;
    this.rows = 0;
    return out;
  }

  add(data: Data): void {
    const type = data.type;
    const text = DataType.isUtf8(type) || DataType.isLargeUtf8(type);
    const dictionary = DataType.isDictionary(type) && DataType.isUtf8(type.dictionary);
    const n = data.length;
    if (text) {
      const skip = data.nullCount > 0 ? (i: number) => !data.getValid(i) : undefined;
      const bad = firstInvalidUtf8Row(data.values as Uint8Array, data.valueOffsets, n, skip);
      if (bad >= 0) throw textEncodingError(this.file, this.name, this.taken + this.rows + bad);
    }
    const plain = data.nullCount === 0 && text && data.valueOffsets instanceof Int32Array;
    if (plain && !this.coded && this.rows === 0 && data.valueOffsets[0] === 0) {
      const offsets = data.valueOffsets.subarray(0, n + 1);
      this.held = { offsets, bytes: (data.values as Uint8Array).subarray(0, offsets[n]!) };
      this.rows = n;
      return;
    }
    this.copyHeld();
    if (this.coded || !(text || dictionary)) {
      if (!this.coded) {
        this.coded = new ColumnEncoder(this.file, this.name, this.nullsAsMissing, this.taken);
        this.coded.reserve(this.offsets.length - 1);
      }
      this.coded.add(data);
      this.rows += data.length;
      return;
    }
    if (this.offsets.length < this.rows + n + 1) this.reserve(2 * (this.rows + n));
    const nulls = data.nullCount > 0;
    if (plain) {
      this.appendUtf8(data.values as Uint8Array, data.valueOffsets as Int32Array, n);
      return;
    }
    const valid = (i: number) => !nulls || data.getValid(i);
    if (text) {
      const offsets = data.valueOffsets as ArrayLike<number | bigint>;
      const big = offsets instanceof BigInt64Array;
      const from = (i: number) => (big ? Number(offsets[i]) : (offsets[i] as number));
      this.append(data.values as Uint8Array, n, from, (i) => (valid(i) ? from(i + 1) : from(i)), valid);
    } else {
      const { raw, valid: entryValid, invalid } = this.entriesOf(data.dictionary!);
      const size = raw.offsets.length - 1;
      const indices = data.values as ArrayLike<number | bigint>;
      const big = indices instanceof BigInt64Array || indices instanceof BigUint64Array;
      const at = (i: number) => {
        const idx = big ? Number(indices[i]) : (indices[i] as number);
        if (!(idx >= 0 && idx < size)) throw this.corruptIndex(i);
        return idx;
      };
      // An entry that is not UTF-8 is an error only if a row uses it.
      for (let i = 0; invalid.size > 0 && i < n; i++)
        if (valid(i) && invalid.has(at(i)))
          throw textEncodingError(this.file, this.name, this.taken + this.rows + i);
      // A null row or a row on a null entry reads as the empty value (or fails, by the policy).
      const usable = (i: number) => valid(i) && entryValid[at(i)] === 1;
      this.append(
        raw.bytes,
        n,
        (i) => (usable(i) ? raw.offsets[at(i)]! : 0),
        (i) => (usable(i) ? raw.offsets[at(i) + 1]! : 0),
        usable,
      );
    }
  }

  /** The batch held uncopied (add), copied in as the column's first rows. */
  private copyHeld(): void {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    const n = held.offsets.length - 1;
    this.rows = 0;
    if (this.offsets.length < n + 1) this.reserve(n);
    this.appendUtf8(held.bytes, held.offsets, n);
  }

  /** The common case, a Utf8 batch without nulls: its bytes copied at once, its offsets moved. */
  private appendUtf8(bytes: Uint8Array, offsets: Int32Array, n: number): void {
    const first = offsets[0]!;
    const at = this.offsets[this.rows]!;
    const total = at + offsets[n]! - first;
    this.ensureBytes(total);
    this.bytes.set(bytes.subarray(first, offsets[n]!), at);
    const to = this.offsets;
    for (let i = 1; i <= n; i++) to[this.rows + i] = at + offsets[i]! - first;
    this.rows += n;
  }

  /** Room for `total` bytes, the bytes so far kept. */
  private ensureBytes(total: number): void {
    if (total <= this.bytes.length) return;
    const next = new Uint8Array(Math.max(total, 2 * this.bytes.length));
    next.set(this.bytes.subarray(0, this.offsets[this.rows]!));
    this.bytes = next;
  }

  /** Appends `n` rows, row i being `bytes[start(i), end(i))`; a row not `valid` is a null. */
  private append(
    bytes: Uint8Array,
    n: number,
    start: (i: number) => number,
    end: (i: number) => number,
    valid: (i: number) => boolean,
  ): void {
    const offsets = this.offsets;
    let total = offsets[this.rows]!;
    for (let i = 0; i < n; i++) {
      if (!valid(i) && !this.nullsAsMissing)
        throw nullError(this.file, this.name, this.taken + this.rows + i);
      total += end(i) - start(i);
      offsets[this.rows + i + 1] = total;
    }
    this.ensureBytes(total);
    const to = this.bytes;
    for (let i = 0; i < n; i++) {
      const s = start(i);
      const length = offsets[this.rows + i + 1]! - offsets[this.rows + i]!;
      if (length > 32) to.set(bytes.subarray(s, s + length), offsets[this.rows + i]!);
      else for (let j = 0, at = offsets[this.rows + i]!; j < length; j++) to[at + j] = bytes[s + j]!;
    }
    this.rows += n;
  }

  private entriesOf(dict: Vector): { raw: RawValues; valid: Uint8Array; invalid: ReadonlySet<number> } {
    let e = this.entries.get(dict);
    if (e) return e;
    const size = dict.length;
    const offsets = new Int32Array(size + 1);
    const valid = new Uint8Array(size);
    const pieces: Uint8Array[] = [];
    let j = 0;
    let total = 0;
    for (const data of dict.data) {
      const o = data.valueOffsets as ArrayLike<number | bigint>;
      const big = o instanceof BigInt64Array;
      const bytes = data.values as Uint8Array;
      for (let i = 0; i < data.length; i++, j++) {
        const ok = data.nullCount === 0 || data.getValid(i);
        valid[j] = ok ? 1 : 0;
        const s = big ? Number(o[i]) : (o[i] as number);
        const t = big ? Number(o[i + 1]) : (o[i + 1] as number);
        if (ok) {
          pieces.push(bytes.subarray(s, t));
          total += t - s;
        }
        offsets[j + 1] = total;
      }
    }
    const bytes = new Uint8Array(total);
    let at = 0;
    for (const p of pieces) {
      bytes.set(p, at);
      at += p.length;
    }
    e = { raw: { offsets, bytes }, valid, invalid: invalidEntries(dict) };
    this.entries.set(dict, e);
    return e;
  }

  private corruptIndex(i: number): InputError {
    return new InputError(
      'E_ARROW_CORRUPT',
      `${this.file} column "${shownName(this.name)}" row ${this.taken + this.rows + i + 1}: dictionary index out of range`,
      'the file is corrupt: write it again with an Arrow IPC writer',
    );
  }
}

const ARROW_UNITS: Record<TimeUnit, Unit> = {
  [TimeUnit.SECOND]: 'SECONDS',
  [TimeUnit.MILLISECOND]: 'MILLIS',
  [TimeUnit.MICROSECOND]: 'MICROS',
  [TimeUnit.NANOSECOND]: 'NANOS',
};

/** A null where `nulls` is `error`: named by file, column and 0-based `row`. */
export function nullError(file: string, column: string, row: number): InputError {
  return new InputError(
    'E_INPUT_NULL',
    `${file} column "${shownName(column)}" row ${row + 1}: the value is null (missing)`,
    'set "format": { "emptyCells": "value" } to release a null as the missing value (an empty cell, ' +
      'kept up to the top of its hierarchy), or fill missing values in before release',
  );
}

/** A dictionary entry's code in a remap when its bytes are not UTF-8 (a null entry's is -1). */
const NOT_UTF8 = -2;
/** A dictionary entry no row has used yet: its code is given on first use. */
const UNSEEN = -3;

/** One Arrow dictionary's entries and the codes they were given (ColumnEncoder.addDictionary). */
interface Remap {
  readonly dict: Vector;
  /** A Utf8 dictionary's entries as stored (utf8Entries); null for other value types. */
  readonly texts: (string | null)[] | null;
  readonly invalid: ReadonlySet<number>;
  /** Per entry: its code, -1 (null), NOT_UTF8 or UNSEEN. */
  readonly codes: Int32Array;
  /** Entries not met yet. */
  unseen: number;
  /** Whether every entry met has its own index as code. */
  identity: boolean;
}
const NO_ENTRIES: ReadonlySet<number> = new Set();
const NO_BYTES = Buffer.alloc(0);

/** The entries of a Utf8 dictionary that are not valid UTF-8 (each chunk validated at once first). */
function invalidEntries(dict: Vector): ReadonlySet<number> {
  let invalid: Set<number> | undefined;
  let base = 0;
  for (const data of dict.data) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    const skip = data.nullCount > 0 ? (i: number) => !data.getValid(i) : undefined;
    if (!utf8Rows(bytes, offsets, data.length)) {
      for (let j = invalidUtf8Row(bytes, offsets, data.length, 0, skip); j >= 0; ) {
        (invalid ??= new Set()).add(base + j);
        j = invalidUtf8Row(bytes, offsets, data.length, j + 1, skip);
      }
    }
    base += data.length;
  }
  return invalid ?? NO_ENTRIES;
}

/**
 * A Utf8 dictionary's entries decoded as they are stored. `Vector.get` decodes with a
 * TextDecoder that drops a leading U+FEFF, so an entry starting with one would read back
 * differently from the same value in a CSV. Null for other dictionary value types.
 */
function utf8Entries(dict: Vector): (string | null)[] | null {
  if (!DataType.isUtf8(dict.type) && !DataType.isLargeUtf8(dict.type)) return null;
  const out: (string | null)[] = [];
  for (const data of dict.data) {
    const offsets = data.valueOffsets as ArrayLike<number | bigint>;
    const bytes = data.values as Uint8Array;
    const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    for (let i = 0; i < data.length; i++) {
      if (data.nullCount > 0 && !data.getValid(i)) {
        out.push(null);
        continue;
      }
      out.push(buf.toString('utf8', Number(offsets[i]), Number(offsets[i + 1])));
    }
  }
  return out;
}

/**
 * A dictionary column's index type and its codes in it: the narrowest signed integer that holds
 * every code of a dictionary of `size` values (Int8 up to 128, Int16 up to 32,768, else Int32).
 * A column of few values is a quarter of the bytes to write, seal and read back.
 */
export function narrowIndices(
  codes: Int32Array,
  size: number,
): { type: Int8 | Int16 | Int32; data: Int8Array | Int16Array | Int32Array } {
  if (size <= 128) return { type: new Int8(), data: Int8Array.from(codes) };
  if (size <= 32768) return { type: new Int16(), data: Int16Array.from(codes) };
  return { type: new Int32(), data: codes };
}

/** A dictionary column's first `length` indices as they are stored (ppdp's own index types): a view. */
export function indexArray(data: Data): CodeArray {
  const values: unknown = data.values;
  if (!(values instanceof Int32Array || values instanceof Int8Array || values instanceof Int16Array))
    throw new TypeError(`dictionary indices of type ${String(data.type)} are not ppdp's own`);
  return values.subarray(0, data.length);
}

/** A dictionary column's first `length` indices as Int32 codes (a view when they are Int32 already). */
export function indicesAsCodes(data: Data): Int32Array {
  const indices = indexArray(data);
  if (indices instanceof Int32Array) return indices;
  const codes = new Int32Array(indices.length);
  codes.set(indices);
  return codes;
}

/**
 * Encodes released columns as Arrow IPC file-format bytes. Dictionary columns become
 * Dictionary<Utf8, Int8 | Int16 | Int32> (`narrowIndices`) with their codes as indices; columns
 * of values as bytes (`utf8`: the pass-through columns) plain Utf8, their rows' values as they
 * are; number columns Float64.
 */
export function encodeArrow(columns: OutputColumn[]): Uint8Array {
  return tableToIPC(arrowTable(columns), 'file');
}

/** encodeArrow's bytes as the pieces the writer gives, not joined (for a store's `put`). */
export function encodeArrowPieces(columns: OutputColumn[]): Promise<Uint8Array[]> {
  return ipcPieces(arrowTable(columns), 'file');
}

/**
 * A table's Arrow IPC bytes as the writer's pieces, in order: views of the table's own buffers
 * between the writer's headers and padding. Joined, they are `tableToIPC`'s bytes; left as
 * pieces, a file of hundreds of megabytes is never copied into fresh memory (whose pages the
 * copy would fault in one by one) only to be written out.
 */
export async function ipcPieces(table: Table, format: 'file' | 'stream'): Promise<Uint8Array[]> {
  const writer =
    format === 'file' ? RecordBatchFileWriter.writeAll(table) : RecordBatchStreamWriter.writeAll(table);
  const pieces: Uint8Array[] = [];
  for await (const piece of writer) pieces.push(piece);
  return pieces;
}

/** The released columns as one Arrow table (encodeArrow). */
function arrowTable(columns: OutputColumn[]): Table {
  const rowCount = columns.length > 0 ? length(columns[0]!) : 0;
  const fields: Field[] = [];
  const children: Data[] = [];
  for (const [i, col] of columns.entries()) {
    if (length(col) !== rowCount) {
      throw new OutputError(
        'E_OUTPUT_SHAPE',
        `output column "${col.name}" has ${length(col)} rows, column "${columns[0]!.name}" has ${rowCount}`,
        'this is a bug in ppdp: every released column must have the same number of rows',
      );
    }
    if (col.kind === 'dictionary') {
      checkCodes(col.name, col.codes, col.dictionary.length);
      const indices = narrowIndices(col.codes, col.dictionary.length);
      // Explicit ids keep the bytes deterministic (Arrow otherwise draws ids from a global counter).
      const type = new Dictionary(new Utf8(), indices.type, i, false);
      children.push(
        makeData({
          type,
          length: rowCount,
          nullCount: 0,
          data: indices.data,
          dictionary: utf8Vector(col.dictionary),
        }),
      );
      fields.push(new Field(col.name, type, false));
    } else if (col.kind === 'utf8') {
      const type = new Utf8();
      const { offsets, bytes } = col.values;
      children.push(makeData({ type, length: rowCount, nullCount: 0, valueOffsets: offsets, data: bytes }));
      fields.push(new Field(col.name, type, false));
    } else {
      const type = new Float64();
      children.push(makeData({ type, length: rowCount, nullCount: 0, data: col.values }));
      fields.push(new Field(col.name, type, false));
    }
  }
  const schema = new Schema(fields);
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(fields), length: rowCount, nullCount: 0, children }),
  );
  return new Table(schema, [batch]);
}

function length(col: OutputColumn): number {
  return col.kind === 'dictionary'
    ? col.codes.length
    : col.kind === 'utf8'
      ? rawLength(col.values)
      : col.values.length;
}

/** An out-of-range code would write an Arrow file that readers reject or misread. */
function checkCodes(name: string, codes: Int32Array, size: number): void {
  for (let r = 0; r < codes.length; r++) {
    const c = codes[r]!;
    if (c < 0 || c >= size) {
      throw new OutputError(
        'E_OUTPUT_CODES',
        `output column "${name}" row ${r + 1}: code ${c} is outside its dictionary of ${size} values`,
        'this is a bug in ppdp: a released code must index its dictionary',
      );
    }
  }
}

/** A Utf8 vector built from one buffer of all entries, with no null bitmap. */
function utf8Vector(values: string[]): Vector<Utf8> {
  return bulkUtf8Vector(values);
}
