/**
 * Parquet input, read one row group at a time and, within it, one column chunk and one page at
 * a time (hyparquet's synchronous page decoder): memory holds the shard's codes, the distinct
 * values and one column chunk's compressed bytes, never a whole column decoded.
 *
 * Cells are the strings the CSV and Arrow readers give for the same values (see
 * docs/release-spec.md, "Parquet input"): integers in decimal, floats as JavaScript prints them
 * (NaN is the missing value), booleans `true`/`false`, DATE as `YYYY-MM-DD`, TIMESTAMP as ISO
 * 8601, DECIMAL as its exact text (src/data/values.ts), strings as stored; a null is an error or, with `format.emptyCells: "value"`, the
 * missing value (an empty cell).
 */
/// <reference path="./lz4.d.ts" />
import { isUtf8 } from 'node:buffer';
import { closeSync } from 'node:fs';
import { basename } from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { TimeUnit as ArrowTimeUnit, DataType, DateUnit, Message, type Schema } from 'apache-arrow';
import { decompress as decompressZstd } from 'fzstd';
import type { ColumnMetaData, DecodedArray, FileMetaData, SchemaElement, SchemaTree } from 'hyparquet';
import { parquetHeader, readPage } from 'hyparquet/src/column.js';
import { convert, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import { decompressPage } from 'hyparquet/src/datapage.js';
import { readRleBitPackedHybrid } from 'hyparquet/src/encoding.js';
import { parquetMetadata, parquetSchema } from 'hyparquet/src/metadata.js';
import type { ColumnDecoder, CompressionCodec, DataReader, PageHeader } from 'hyparquet/src/types.js';
import { decompressLz4, decompressLz4Raw } from 'hyparquet-compressors/src/lz4.js';
import { InputError, LimitError } from '../errors.ts';
import { thousands } from '../util/format.ts';
import { shownName } from '../util/limits.ts';
import { type NullPolicy, nullError, valueString } from './arrow.ts';
import { ByteDictionary } from './dictionary.ts';
import { type InputFile, openInput, readAt } from './input.ts';
import {
  checkInputColumns,
  PARQUET_MAX_PAGE_BYTES,
  PARQUET_MAX_PAGE_RATIO,
  PARQUET_RATIO_FLOOR,
} from './limits.ts';
import type { RawValues } from './raw.ts';
import { ShardAssembler } from './shards.ts';
import { type EncodedTable, TYPED_INPUT_DELIMITER } from './table.ts';
import { firstInvalidUtf8Row, textEncodingError } from './utf8.ts';
import {
  dateRangeError,
  dayOf,
  formatDate,
  formatDecimal,
  formatTimestamp,
  signedBigEndian,
  TimeOutOfRange,
  type TimeUnit,
} from './values.ts';

const MAGIC = 0x31524150; // "PAR1", little-endian
const SUPPORTED =
  'BOOLEAN, INT32, INT64 (signed or unsigned), FLOAT, DOUBLE, BYTE_ARRAY strings (STRING, ENUM or unannotated), DATE, TIMESTAMP, INT96, DECIMAL';

/** How a column's raw values become cells. */
type Kind = 'string' | 'number' | 'bigint' | 'boolean' | 'date' | 'date-millis' | 'timestamp' | 'decimal';
type Unit = TimeUnit;

interface ColumnPlan {
  readonly name: string;
  /** Its column chunk's place among a row group's (a nested column before it has one per leaf). */
  readonly chunk: number;
  readonly kind: Kind;
  readonly unit: Unit;
  /** A TIMESTAMP adjusted to UTC ends in `Z`. */
  readonly utc: boolean;
  /** A DECIMAL's digits after the point. */
  readonly scale?: number;
  readonly decoder: Omit<ColumnDecoder, 'codec'>;
}

/** Raw values as they come: bytes for strings, days for dates, ticks for timestamps. */
const RAW_PARSERS = {
  ...DEFAULT_PARSERS,
  stringFromBytes: (bytes: Uint8Array) => bytes,
  dateFromDays: (days: number) => days,
  timestampFromMilliseconds: (t: bigint) => t,
  timestampFromMicroseconds: (t: bigint) => t,
  timestampFromNanoseconds: (t: bigint) => t,
} as unknown as typeof DEFAULT_PARSERS;

/** A page that inflates past the uncompressed size its header declares. */
class PageOverflow extends Error {}

/** Node's decompression of `input`, stopped past the `declared` bytes the page's header states. */
function bounded(decompress: typeof gunzipSync) {
  return (input: Uint8Array, declared: number) => {
    try {
      return new Uint8Array(decompress(input, { maxOutputLength: Math.max(1, declared) }));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') throw new PageOverflow();
      throw err;
    }
  };
}

/**
 * Codecs beyond SNAPPY (built into hyparquet, which inflates into a buffer of the declared
 * size): GZIP and BROTLI by Node, each stopped past the declared size; ZSTD (fzstd, the
 * decompressor of hyparquet-compressors) and LZ4 (hyparquet-compressors) into a buffer of the
 * declared size, which they never grow (ZSTD is not let size its window from the frame's own
 * claim). A page whose bytes do not decode is corrupt.
 */
const DECOMPRESSORS = {
  GZIP: bounded(gunzipSync),
  BROTLI: bounded(brotliDecompressSync),
  ZSTD: (input: Uint8Array, declared: number) => decompressZstd(input, new Uint8Array(declared)),
  LZ4: (input: Uint8Array, declared: number) => decompressLz4(input, declared),
  LZ4_RAW: (input: Uint8Array, declared: number) => decompressLz4Raw(input, declared),
};

/** The first sizing of a column chunk's or shard's codes: they grow with the rows read, never to a count the file only declares. */
const FIRST_ROWS = 1 << 16;
const CODECS = new Set(['UNCOMPRESSED', 'SNAPPY', 'GZIP', 'BROTLI', 'ZSTD', 'LZ4', 'LZ4_RAW']);

interface ParquetOptions {
  nulls?: NullPolicy;
  /** Columns given as their rows' UTF-8 bytes (EncodedColumn.raw), never coded (read.ts). */
  raw?: ReadonlySet<string>;
  /** Columns never read, whatever their type (identifying ones): listed in the tables' `omitted`. */
  omit?: ReadonlySet<string>;
  /** The tables' `delimiter` (the release CSV's): TYPED_INPUT_DELIMITER by default. */
  delimiter?: string;
}

/**
 * Reads a Parquet file as consecutive shards of `rowsPerShard` rows (the last one shorter; row
 * groups are split where a shard ends). Each shard's dictionaries are a prefix of the next one's.
 * @throws InputError with codes E_INPUT_MISSING, E_INPUT_EMPTY, E_INPUT_NO_ROWS, E_INPUT_NULL,
 *   E_PARQUET_CORRUPT, E_PARQUET_TYPE, E_PARQUET_SCHEMA, E_PARQUET_CODEC.
 */
export function* readParquetShards(
  path: string,
  rowsPerShard: number,
  options: ParquetOptions = {},
): Generator<EncodedTable, void, undefined> {
  const input = openInput(path);
  try {
    yield* readOpenParquet(path, input, rowsPerShard, options);
  } finally {
    closeSync(input.fd);
  }
}

/** The whole file as one table. */
export function readParquet(path: string, options: ParquetOptions = {}): EncodedTable {
  const [table] = readParquetShards(path, Number.POSITIVE_INFINITY, options);
  return table!;
}

function corruptFile(file: string): InputError {
  return new InputError(
    'E_PARQUET_CORRUPT',
    `${file}: not a readable Parquet file (corrupt, truncated or another format)`,
    'write the file again with a Parquet writer, or pass a CSV or Arrow file instead',
  );
}

/** The footer's metadata, read from the end of the file alone. */
function readMetadata(path: string, input: InputFile): FileMetaData {
  const file = basename(path);
  if (input.size === 0) {
    throw new InputError('E_INPUT_EMPTY', `${file}: the file is empty`, 'expected a Parquet file');
  }
  if (input.size < 12) throw corruptFile(file);
  const head = Buffer.alloc(4);
  const tail = Buffer.alloc(8);
  readAt(path, input, head, 0);
  readAt(path, input, tail, input.size - 8);
  const length = tail.readUInt32LE(0);
  if (head.readUInt32LE(0) !== MAGIC || tail.readUInt32LE(4) !== MAGIC || length > input.size - 12) {
    throw corruptFile(file);
  }
  const footer = Buffer.allocUnsafeSlow(length + 8);
  readAt(path, input, footer, input.size - 8 - length);
  let metadata: FileMetaData;
  try {
    metadata = parquetMetadata(footer);
  } catch {
    throw corruptFile(file);
  }
  // Row counts are claims: the file's must be its row groups' (each one's is checked against its pages).
  let rows = 0n;
  for (const group of metadata.row_groups) {
    if (!(group.num_rows >= 0n)) throw corruptFile(file);
    rows += group.num_rows;
  }
  if (rows !== metadata.num_rows) {
    throw new InputError(
      'E_PARQUET_CORRUPT',
      `${file}: the file declares ${bigThousands(metadata.num_rows)} rows, but its row groups hold ${bigThousands(rows)}`,
      'the file is corrupt or its metadata does not match its data: write it again with a Parquet writer',
    );
  }
  return metadata;
}

function bigThousands(n: bigint): string {
  return n <= BigInt(Number.MAX_SAFE_INTEGER) && n >= 0n ? thousands(Number(n)) : n.toString();
}

/** The kind of a flat column, or undefined when its type is not read. */
function kindOf(el: SchemaElement): Pick<ColumnPlan, 'kind' | 'unit' | 'utc' | 'scale'> | undefined {
  const c = el.converted_type;
  const l = el.logical_type;
  const plain = { unit: 'MILLIS' as Unit, utc: false };
  if (c === 'DECIMAL' || l?.type === 'DECIMAL') {
    const scale = l?.type === 'DECIMAL' ? l.scale : (el.scale ?? 0);
    const stored = ['INT32', 'INT64', 'FIXED_LEN_BYTE_ARRAY', 'BYTE_ARRAY'].includes(el.type ?? '');
    return stored && Number.isSafeInteger(scale) && scale >= 0 && scale <= 1000
      ? { kind: 'decimal', ...plain, scale }
      : undefined;
  }
  switch (el.type) {
    case 'BOOLEAN':
      return c === undefined && l === undefined ? { kind: 'boolean', ...plain } : undefined;
    case 'INT32':
      if (c === 'DATE' || l?.type === 'DATE') return { kind: 'date', ...plain };
      if (l === undefined || l.type === 'INTEGER') {
        if (c === undefined || /^U?INT_(8|16|32)$/.test(c)) return { kind: 'number', ...plain };
      }
      return undefined;
    case 'INT64':
      if (l?.type === 'TIMESTAMP') return { kind: 'timestamp', unit: l.unit, utc: l.isAdjustedToUTC };
      if (c === 'TIMESTAMP_MILLIS') return { kind: 'timestamp', unit: 'MILLIS', utc: true };
      if (c === 'TIMESTAMP_MICROS') return { kind: 'timestamp', unit: 'MICROS', utc: true };
      if (
        (l === undefined || l.type === 'INTEGER') &&
        (c === undefined || c === 'INT_64' || c === 'UINT_64')
      ) {
        return { kind: 'bigint', ...plain };
      }
      return undefined;
    case 'INT96':
      return c === undefined && l === undefined
        ? { kind: 'timestamp', unit: 'NANOS', utc: false }
        : undefined;
    case 'FLOAT':
    case 'DOUBLE':
      return c === undefined && l === undefined ? { kind: 'number', ...plain } : undefined;
    case 'BYTE_ARRAY':
      if (c === undefined || c === 'UTF8' || c === 'ENUM') {
        if (l === undefined || l.type === 'STRING' || l.type === 'ENUM') return { kind: 'string', ...plain };
      }
      return undefined;
    default:
      return undefined;
  }
}

function typeName(el: SchemaElement): string {
  if (el.num_children) return 'a nested group (struct, list or map)';
  const l = el.logical_type;
  const annotation = l ? ` (${l.type})` : el.converted_type ? ` (${el.converted_type})` : '';
  return `${el.type}${annotation}`;
}

/**
 * The Arrow schema an Arrow writer stores beside the Parquet one (`ARROW:schema`, base64 of an
 * IPC schema message), or undefined. Arrow writers (arrow-rs, so parquet-wasm and polars) store
 * an Arrow Date64 and a Timestamp in seconds as a plain INT64, Parquet having neither: the
 * Arrow schema tells how to read them back, as Arrow readers do.
 */
function arrowSchema(metadata: FileMetaData): Schema | undefined {
  const value = metadata.key_value_metadata?.find((kv) => kv.key === 'ARROW:schema')?.value;
  if (!value) return undefined;
  try {
    let bytes = Buffer.from(value, 'base64');
    if (bytes.length >= 8 && bytes.readInt32LE(0) === -1) bytes = bytes.subarray(8);
    const message = Message.decode(bytes);
    return message.isSchema() ? (message.header() as Schema) : undefined;
  } catch {
    return undefined;
  }
}

/** A plain INT64 column that its Arrow schema declares a Date64 or a Timestamp in seconds. */
function arrowKind(
  el: SchemaElement,
  field: { name: string; type: DataType } | undefined,
): Pick<ColumnPlan, 'kind' | 'unit' | 'utc'> | undefined {
  if (!field || field.name !== el.name || el.type !== 'INT64') return undefined;
  if (el.converted_type !== undefined || el.logical_type !== undefined) return undefined;
  const t = field.type;
  if (DataType.isDate(t) && t.unit === DateUnit.MILLISECOND)
    return { kind: 'date-millis', unit: 'MILLIS', utc: false };
  if (DataType.isTimestamp(t) && t.unit === ArrowTimeUnit.SECOND) {
    return { kind: 'timestamp', unit: 'SECONDS', utc: typeof t.timezone === 'string' && t.timezone !== '' };
  }
  return undefined;
}

/** A column's leaves: its column chunks in each row group. */
function leaves(node: SchemaTree): number {
  return node.children.length === 0 ? 1 : node.children.reduce((n, child) => n + leaves(child), 0);
}

/**
 * How each column is read but those to `omit` (`omitted`), which are neither read nor need a
 * type ppdp reads; the column chunks of a row group.
 */
function planColumns(
  file: string,
  metadata: FileMetaData,
  omit: ReadonlySet<string>,
): { plans: ColumnPlan[]; omitted: string[]; chunks: number } {
  let tree: SchemaTree;
  try {
    tree = parquetSchema(metadata);
  } catch {
    throw corruptFile(file);
  }
  if (tree.children.length === 0) throw corruptFile(file);
  checkInputColumns(
    file,
    tree.children.map((node) => node.element.name),
    'the schema',
  );
  const seen = new Set<string>();
  const arrow = arrowSchema(metadata);
  const arrowFields = arrow?.fields.length === tree.children.length ? arrow.fields : [];
  const plans: ColumnPlan[] = [];
  const omitted: string[] = [];
  let chunk = 0;
  for (const [i, node] of tree.children.entries()) {
    const el = node.element;
    if (el.name.trim() === '' || seen.has(el.name)) {
      throw new InputError(
        'E_PARQUET_SCHEMA',
        `${file}: column ${i + 1} ${el.name.trim() === '' ? 'has an empty name' : `"${shownName(el.name)}" appears twice`}`,
        'give every column a unique, non-empty name',
      );
    }
    seen.add(el.name);
    chunk += leaves(node);
    if (omit.has(el.name)) {
      omitted.push(el.name);
      continue;
    }
    const flat = node.children.length === 0 && el.repetition_type !== 'REPEATED';
    const kind = flat ? (arrowKind(el, arrowFields[i]) ?? kindOf(el)) : undefined;
    if (!kind) {
      throw new InputError(
        'E_PARQUET_TYPE',
        `${file} column "${shownName(el.name)}": Parquet type ${typeName(el)} is not supported`,
        `supported types are ${SUPPORTED}; cast the column to one of them (e.g. a string) before release`,
      );
    }
    plans.push({
      name: el.name,
      chunk: chunk - 1,
      ...kind,
      decoder: {
        pathInSchema: [el.name],
        type: el.type!,
        // A DECIMAL's unscaled integers (or big-endian bytes) as stored: its text is made exactly here.
        element: kind.kind === 'decimal' ? { ...el, converted_type: undefined, logical_type: undefined } : el,
        schemaPath: [tree, node],
        parsers: RAW_PARSERS,
        compressors: DECOMPRESSORS,
      },
    });
  }
  return { plans, omitted, chunks: chunk };
}

function* readOpenParquet(
  path: string,
  input: InputFile,
  rowsPerShard: number,
  { nulls = 'error', raw = new Set(), omit = new Set(), delimiter = TYPED_INPUT_DELIMITER }: ParquetOptions,
): Generator<EncodedTable, void, undefined> {
  const file = basename(path);
  const metadata = readMetadata(path, input);
  const { plans, omitted, chunks } = planColumns(file, metadata, omit);
  const typed = plans.filter((p) => p.kind !== 'string').map((p) => p.name);
  const marked = (t: EncodedTable): EncodedTable => ({
    ...t,
    ...(omitted.length > 0 ? { omitted } : {}),
    ...(typed.length > 0 ? { typed } : {}),
  });
  const encoders = plans.map(
    (plan) => new ColumnEncoder(file, plan, nulls === 'missing', raw.has(plan.name)),
  );
  const shards = new ShardAssembler(
    plans.map((p) => p.name),
    rowsPerShard,
    path,
    delimiter,
    // A sizing hint only: the rows the file declares are a claim its pages must bear out.
    Math.min(Number(metadata.num_rows), FIRST_ROWS),
    encoders.map((e) => e.dictionary),
  );
  let groupStart = 0;
  for (const [g, group] of metadata.row_groups.entries()) {
    const rows = Number(group.num_rows);
    if (rows === 0) continue;
    if (group.columns.length !== chunks) throw corruptFile(file);
    const codes = encoders.map((e, i) =>
      e.read(path, input, group.columns[plans[i]!.chunk]!, g, groupStart, rows),
    );
    for (const shard of shards.addCoded(codes, rows)) yield marked(shard);
    groupStart += rows;
  }
  const last = shards.finish();
  if (last) yield marked(last);
  else if (groupStart === 0) {
    throw new InputError(
      'E_INPUT_NO_ROWS',
      `${file}: the table has no rows`,
      'export the table with its rows',
    );
  }
}

type Key = number | bigint | boolean | string;

/**
 * Encodes one column, a column chunk (its part of a row group) at a time, to codes in order of
 * first appearance, or, for a column kept as bytes, to each row's cell text as UTF-8 bytes (no
 * dictionary: a column of distinct values costs its bytes).
 */
class ColumnEncoder {
  /** Strings by their bytes; other kinds by value. */
  private readonly strings = new ByteDictionary();
  private readonly entries: string[] = [];
  private readonly index = new Map<Key, number>();
  /** The last page's bytes as a Buffer, for the string dictionary's lookups. */
  private bytes: Buffer = Buffer.alloc(0);
  /** The chunk being read: its codes (grown as pages are read), its rows, rows filled, first row in the file (0-based). */
  private codes = new Int32Array(0);
  private rows = 0;
  private at = 0;
  private groupStart = 0;
  /** The page being read (1-based, dictionary pages counted). */
  private page = 0;
  /** The chunk's rows as bytes, for a column kept as bytes. */
  private raw: RawAppender | undefined;

  constructor(
    private readonly file: string,
    private readonly plan: ColumnPlan,
    private readonly nullsAsMissing: boolean,
    private readonly asBytes = false,
  ) {}

  /** The values by code (grows as chunks are read). */
  get dictionary(): string[] {
    return this.plan.kind === 'string' ? this.strings.values : this.entries;
  }

  /**
   * Reads a column chunk of `rows` rows (row group `group`, 0-based) from `groupStart` on, a
   * page at a time, to codes. Every size and count the chunk and its pages declare is checked
   * before anything is sized from it: the chunk inside the file, its values the row group's
   * rows, each page inside the chunk, its values within the rows left, its uncompressed size
   * within PARQUET_MAX_PAGE_BYTES and PARQUET_MAX_PAGE_RATIO of its compressed size, and what
   * it inflates to within that size; the codes grow with the values read.
   */
  read(
    path: string,
    input: InputFile,
    chunk: { meta_data?: ColumnMetaData; file_path?: string },
    group: number,
    groupStart: number,
    rows: number,
  ): Int32Array | RawValues {
    this.codes = new Int32Array(this.asBytes ? 0 : Math.min(rows, FIRST_ROWS));
    this.raw = this.asBytes ? new RawAppender(rows) : undefined;
    this.rows = rows;
    this.at = 0;
    this.page = 0;
    this.groupStart = groupStart;
    const meta = chunk.meta_data;
    if (!meta || chunk.file_path) throw this.corrupt();
    if (meta.num_values !== BigInt(rows)) {
      throw this.lie(
        `row group ${thousands(group + 1)}`,
        `the column chunk declares ${bigThousands(meta.num_values)} values, but the row group has ${thousands(rows)} rows`,
      );
    }
    if (!CODECS.has(meta.codec)) {
      throw new InputError(
        'E_PARQUET_CODEC',
        `${this.file} column "${shownName(this.plan.name)}" rows ${this.rowRange()}: compression ${meta.codec} is not supported`,
        'write the file with SNAPPY (the usual default), ZSTD, GZIP, BROTLI, LZ4 or no compression (LZO is not read)',
      );
    }
    const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
    const length = Number(meta.total_compressed_size);
    if (!(start >= 4 && length > 0 && start + length <= input.size - 8)) {
      throw this.lie(
        `row group ${thousands(group + 1)}`,
        `the column chunk (bytes ${thousands(start)}–${thousands(start + length)}) lies outside the file's ${thousands(input.size)} bytes`,
      );
    }
    const bytes = Buffer.allocUnsafeSlow(length);
    readAt(path, input, bytes, start);
    const decoder: ColumnDecoder = { ...this.plan.decoder, codec: meta.codec };
    const reader = { view: new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), offset: 0 };
    // Dictionary-encoded pages are read as indexes (decoded as plain INT32 values), each
    // dictionary entry coded once on first use, instead of one decoded value per row.
    const indexes: ColumnDecoder = {
      ...decoder,
      element: { ...decoder.element, type: 'INT32', converted_type: undefined, logical_type: undefined },
    };
    let entries: DecodedArray | undefined;
    let remap = new Int32Array(0);
    try {
      while (this.at < this.rows) {
        if (reader.offset >= bytes.length) {
          throw this.lie(
            `rows ${this.rowRange()}`,
            `the row group declares ${thousands(this.rows)} rows, but its pages hold ${thousands(this.at)}`,
          );
        }
        this.page++;
        const header = parquetHeader(reader);
        this.checkPage(header, bytes.length - reader.offset);
        if (header.type === 'INDEX_PAGE') {
          reader.offset += header.compressed_page_size;
        } else if (header.type === 'DICTIONARY_PAGE') {
          const page = readPage(reader, header, decoder, undefined, undefined, 0).data;
          if (!page) throw this.corrupt();
          entries = convert(page, decoder);
          remap = new Int32Array(entries.length).fill(-1);
        } else if (
          this.plan.kind === 'string' &&
          header.type === 'DATA_PAGE' &&
          header.data_page_header?.encoding === 'PLAIN'
        ) {
          this.addPlainStrings(reader, header, meta.codec);
        } else {
          const encoding = (header.data_page_header ?? header.data_page_header_v2)?.encoding ?? '';
          const coded = entries !== undefined && encoding.endsWith('_DICTIONARY');
          const page = readPage(reader, header, coded ? indexes : decoder, undefined, undefined, 0).data;
          if (!page || this.at + page.length > this.rows) throw this.corrupt();
          this.reserve(page.length);
          if (coded) this.addIndexes(page, entries!, remap);
          else this.add(page);
        }
      }
    } catch (err) {
      if (err instanceof InputError || err instanceof LimitError) throw err;
      if (err instanceof PageOverflow) {
        throw this.lie(
          `page ${thousands(this.page)}`,
          `the page inflates to more than the ${thousands(this.declared)} bytes its header declares`,
        );
      }
      throw this.corrupt();
    }
    if (this.raw) {
      const values = this.raw.values();
      // A string's bytes are copied as stored: the chunk's checked at once, row by row only when one is not UTF-8.
      const bad =
        this.plan.kind === 'string' ? firstInvalidUtf8Row(values.bytes, values.offsets, this.rows) : -1;
      if (bad >= 0) throw textEncodingError(this.file, this.plan.name, this.groupStart + bad);
      return values;
    }
    return this.codes.length === this.rows ? this.codes : this.codes.slice(0, this.rows);
  }

  /** The uncompressed size the page being read declares. */
  private declared = 0;

  /**
   * A page's header against what can hold it: its compressed bytes inside the chunk's
   * `left` bytes, its values within the row group's rows left, its uncompressed size within
   * PARQUET_MAX_PAGE_BYTES and, above PARQUET_RATIO_FLOOR, PARQUET_MAX_PAGE_RATIO times its
   * compressed size (checked before anything inflates it).
   */
  private checkPage(header: PageHeader, left: number): void {
    const compressed = header.compressed_page_size;
    const uncompressed = Number(header.uncompressed_page_size);
    this.declared = uncompressed;
    const page = `page ${thousands(this.page)}`;
    if (!(Number.isSafeInteger(compressed) && compressed >= 0 && compressed <= left)) {
      throw this.lie(
        page,
        `the page declares ${thousands(compressed)} bytes, but its column chunk has ${thousands(left)} left`,
      );
    }
    if (!(Number.isSafeInteger(uncompressed) && uncompressed >= 0)) throw this.corrupt();
    const values = (header.data_page_header ?? header.data_page_header_v2)?.num_values;
    if (values !== undefined && !(values >= 0 && values <= this.rows - this.at)) {
      throw this.lie(
        page,
        `the page declares ${thousands(values)} values, but its row group has ${thousands(this.rows - this.at)} rows left`,
      );
    }
    if (uncompressed > PARQUET_MAX_PAGE_BYTES) {
      throw this.tooLarge(
        page,
        `the page declares ${thousands(uncompressed)} uncompressed bytes, over the limit of ${PARQUET_MAX_PAGE_BYTES / (1024 * 1024)} MiB`,
      );
    }
    if (uncompressed > PARQUET_RATIO_FLOOR && uncompressed > PARQUET_MAX_PAGE_RATIO * compressed) {
      throw this.tooLarge(
        page,
        `the page inflates from ${compressed} to ${uncompressed} bytes (${Math.floor(uncompressed / Math.max(1, compressed))}×), over the limit of ${thousands(PARQUET_MAX_PAGE_RATIO)}×`,
      );
    }
  }

  /** Room for `n` more rows (doubling, up to the row group's rows). */
  private reserve(n: number): void {
    if (this.raw) return;
    const need = this.at + n;
    if (need <= this.codes.length) return;
    const next = new Int32Array(Math.min(this.rows, Math.max(need, this.codes.length * 2)));
    next.set(this.codes.subarray(0, this.at));
    this.codes = next;
  }

  private rowRange(): string {
    return `${thousands(this.groupStart + 1)}–${thousands(this.groupStart + this.rows)}`;
  }

  /** A size or count the column's bytes do not bear out, at `where` (a row group, rows or a page). */
  private lie(where: string, problem: string): InputError {
    return new InputError(
      'E_PARQUET_CORRUPT',
      `${this.file} column "${shownName(this.plan.name)}" ${where}: ${problem}`,
      'the file is corrupt or its metadata does not match its data: write it again with a Parquet writer',
    );
  }

  /** A page over the limits of PARQUET_MAX_PAGE_BYTES or PARQUET_MAX_PAGE_RATIO. */
  private tooLarge(where: string, problem: string): LimitError {
    return new LimitError(
      'E_LIMIT_PARQUET_PAGE',
      `${this.file} column "${shownName(this.plan.name)}" ${where}: ${problem}`,
      "write the file with SNAPPY (the usual default) or no compression and dictionary encoding, in pages of about 1 MiB (the writers' default), or pass a CSV or Arrow file instead",
    );
  }

  private corrupt(): InputError {
    return new InputError(
      'E_PARQUET_CORRUPT',
      `${this.file} column "${shownName(this.plan.name)}" rows ${this.rowRange()}: the column's data cannot be read (corrupt or truncated)`,
      'write the file again with a Parquet writer',
    );
  }

  /** The code of a non-string cell, by its raw value. */
  private code(value: Key): number {
    const key = this.keyOf(value);
    let code = this.index.get(key);
    if (code === undefined) {
      code = this.entries.push(this.text(key)) - 1;
      this.index.set(key, code);
    }
    return code;
  }

  /**
   * What a raw value is coded by, one key per cell text: NaN is the missing value's (as a
   * null's); a Date64 its day, the time of day being no part of its text.
   */
  private keyOf(value: Key): Key {
    if (value === '' || (typeof value === 'number' && Number.isNaN(value))) return '';
    return this.plan.kind === 'date-millis' ? dayOf(value as bigint) : value;
  }

  /** The cell text of a key (keyOf). */
  private text(v: Key): string {
    // The missing value is an empty cell whatever the column's type (never a date or time of 0).
    if (v === '') return '';
    switch (this.plan.kind) {
      case 'date':
      case 'date-millis':
        return formatDate(v as number);
      case 'timestamp':
        return formatTimestamp(v as bigint, this.plan.unit, this.plan.utc);
      case 'decimal':
        return formatDecimal(v as bigint, this.plan.scale ?? 0);
      default:
        return valueString(v);
    }
  }

  /** The code of a raw value of the chunk's row `i` (from `at`): a string's bytes, or a number, bigint or boolean. */
  private valueCode(v: Key | Uint8Array, i: number): number {
    if (this.plan.kind === 'decimal') {
      return this.code(v instanceof Uint8Array ? signedBigEndian(v) : BigInt(v as number | bigint));
    }
    if (!(v instanceof Uint8Array)) return this.code(v);
    if (v.buffer !== this.bytes.buffer) this.bytes = Buffer.from(v.buffer);
    return this.stringCode(this.bytes, v.byteOffset, v.byteOffset + v.length, i);
  }

  /**
   * The code of the string `bytes[start, end)` of the chunk's row `i` (from `at`): a value seen
   * for the first time must be UTF-8 (each distinct value checked once).
   */
  private stringCode(bytes: Buffer, start: number, end: number, i: number): number {
    const size = this.strings.size;
    const code = this.strings.codeOf(bytes, start, end);
    if (code === size && !isUtf8(bytes.subarray(start, end)))
      throw textEncodingError(this.file, this.plan.name, this.groupStart + this.at + i);
    return code;
  }

  private missing(i: number): number {
    if (!this.nullsAsMissing) throw nullError(this.file, this.plan.name, this.groupStart + this.at + i);
    if (this.raw) {
      this.raw.push(EMPTY, 0, 0);
      return 0;
    }
    return this.plan.kind === 'string' ? this.strings.codeOf(this.bytes, 0, 0) : this.code('');
  }

  private add(values: DecodedArray): void {
    const { codes, raw } = this;
    const at = this.at;
    let i = 0;
    try {
      for (; i < values.length; i++) {
        const v = values[i] as Key | Uint8Array | null | undefined;
        if (v === null || v === undefined) codes[at + i] = this.missing(i);
        else if (raw) this.pushValue(raw, v);
        else codes[at + i] = this.valueCode(v, i);
      }
    } catch (err) {
      throw this.placed(err, i);
    }
    this.at += values.length;
  }

  /** A value's cell text (the text its code would have) as bytes. */
  private pushValue(raw: RawAppender, v: Key | Uint8Array): void {
    if (this.plan.kind === 'string' && v instanceof Uint8Array) raw.push(v, 0, v.length);
    else if (this.plan.kind === 'decimal') {
      raw.pushText(this.text(v instanceof Uint8Array ? signedBigEndian(v) : BigInt(v as number | bigint)));
    } else raw.pushText(this.text(this.keyOf(v as Key)));
  }

  /**
   * A PLAIN page (version 1) of strings, read straight from its bytes: each value looked up by
   * its bytes, with no object made per value (the most common page of a column of distinct
   * strings).
   */
  private addPlainStrings(reader: DataReader, header: PageHeader, codec: CompressionCodec): void {
    const n = header.data_page_header!.num_values;
    if (this.at + n > this.rows) throw this.corrupt();
    this.reserve(n);
    const compressed = new Uint8Array(
      reader.view.buffer,
      reader.view.byteOffset + reader.offset,
      header.compressed_page_size,
    );
    reader.offset += header.compressed_page_size;
    const page = decompressPage(compressed, Number(header.uncompressed_page_size), codec, DECOMPRESSORS);
    const bytes = Buffer.from(page.buffer, page.byteOffset, page.byteLength);
    const levels = { view: new DataView(page.buffer, page.byteOffset, page.byteLength), offset: 0 };
    // A top-level OPTIONAL column: definition level 1 is a value, 0 a null.
    let defined: number[] | undefined;
    if (this.plan.decoder.element.repetition_type !== 'REQUIRED') {
      defined = new Array(n);
      readRleBitPackedHybrid(levels, 1, defined);
    }
    const codes = this.codes;
    let at = levels.offset;
    for (let i = 0; i < n; i++) {
      if (defined && defined[i] !== 1) {
        codes[this.at + i] = this.missing(i);
        continue;
      }
      if (at + 4 > bytes.length) throw this.corrupt();
      const end = at + 4 + bytes.readUInt32LE(at);
      if (end > bytes.length) throw this.corrupt();
      if (this.raw) this.raw.push(bytes, at + 4, end);
      else codes[this.at + i] = this.stringCode(bytes, at + 4, end, i);
      at = end;
    }
    this.at += n;
  }

  /** Rows of a dictionary-encoded page: indexes into `entries`, whose codes `remap` keeps. */
  private addIndexes(indexes: DecodedArray, entries: DecodedArray, remap: Int32Array): void {
    if (this.raw) {
      this.addIndexedBytes(this.raw, indexes, entries);
      return;
    }
    const codes = this.codes;
    const at = this.at;
    let i = 0;
    try {
      for (; i < indexes.length; i++) {
        const idx = indexes[i] as number | null | undefined;
        if (idx === null || idx === undefined) {
          codes[at + i] = this.missing(i);
          continue;
        }
        if (!(idx >= 0 && idx < remap.length)) throw this.corrupt();
        let code = remap[idx]!;
        if (code < 0) code = remap[idx] = this.valueCode(entries[idx] as Key | Uint8Array, i);
        codes[at + i] = code;
      }
    } catch (err) {
      throw this.placed(err, i);
    }
    this.at += indexes.length;
  }

  /** addIndexes for a column kept as bytes: each row gets its entry's cell text. */
  private addIndexedBytes(raw: RawAppender, indexes: DecodedArray, entries: DecodedArray): void {
    let i = 0;
    try {
      for (; i < indexes.length; i++) {
        const idx = indexes[i] as number | null | undefined;
        if (idx === null || idx === undefined) this.missing(i);
        else if (!(idx >= 0 && idx < entries.length)) throw this.corrupt();
        else this.pushValue(raw, entries[idx] as Key | Uint8Array);
      }
    } catch (err) {
      throw this.placed(err, i);
    }
    this.at += indexes.length;
  }

  /** A date or time out of range (TimeOutOfRange) at the page's value `i` as the error naming its row; any other error as it is. */
  private placed(err: unknown, i: number): unknown {
    return err instanceof TimeOutOfRange
      ? dateRangeError(this.file, this.plan.name, this.groupStart + this.at + i)
      : err;
  }
}

const EMPTY = new Uint8Array(0);

/**
 * A column chunk's rows as bytes, row after row (RawValues once read): a string's bytes as
 * stored, another kind's cell text encoded as it comes. Encoding each text at once, rather than
 * holding the chunk's texts for utf8Buffers, measured about a sixth less CPU on a 625,000-row
 * chunk of timestamps and amounts.
 */
class RawAppender {
  private readonly offsets: Int32Array;
  private bytes = new Uint8Array(4096);
  private rows = 0;

  constructor(rows: number) {
    this.offsets = new Int32Array(rows + 1);
  }

  push(src: Uint8Array, start: number, end: number): void {
    const at = this.room(end - start);
    const bytes = this.bytes;
    for (let k = start, j = at; k < end; k++, j++) bytes[j] = src[k]!;
    this.offsets[++this.rows] = at + end - start;
  }

  /** A cell's text: ASCII byte by byte, anything else through the UTF-8 encoder. */
  pushText(text: string): void {
    const at = this.room(text.length);
    const bytes = this.bytes;
    for (let k = 0; k < text.length; k++) {
      const c = text.charCodeAt(k);
      if (c >= 0x80) {
        const encoded = Buffer.from(text, 'utf8');
        this.bytes.set(encoded, this.room(encoded.length));
        this.offsets[++this.rows] = at + encoded.length;
        return;
      }
      bytes[at + k] = c;
    }
    this.offsets[++this.rows] = at + text.length;
  }

  values(): RawValues {
    const end = this.offsets[this.rows]!;
    return { offsets: this.offsets.subarray(0, this.rows + 1), bytes: this.bytes.subarray(0, end) };
  }

  /** Where the next row's `length` bytes go, the buffer grown by doubling. */
  private room(length: number): number {
    const at = this.offsets[this.rows]!;
    if (at + length > this.bytes.length) {
      const next = new Uint8Array(Math.max(2 * this.bytes.length, at + length));
      next.set(this.bytes.subarray(0, at));
      this.bytes = next;
    }
    return at;
  }
}
