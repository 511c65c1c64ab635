/**
 * The lengths an Arrow IPC message declares, checked against the bytes that must hold them
 * before anything is sized from them (a stream of 10 rows declaring 200,000 once became a
 * release of 200,000 rows). A record batch declares its rows, each column (field node) its
 * values and nulls, and each buffer its place in the body; Arrow's reader takes them as they
 * are, and a buffer too short for its column reads as zeros. Checked, for every column at any
 * depth, in the order Arrow's own reader takes nodes and buffers:
 * - every top-level column has the batch's rows; a null count is at most the column's length;
 * - every buffer lies inside the message body;
 * - a validity bitmap holds a bit per value when the column has nulls, a Bool column a bit per
 *   value, a fixed-width column (ints, floats, dates, dictionary indices…) its width per value,
 *   an offsets buffer one offset more than the values;
 * - with the body at hand (`checkBody`), string and binary offsets start at 0 or later, never
 *   go backwards and end inside their data.
 * Dictionary indices are checked against their dictionary where they are read (the Arrow
 * reader's ColumnEncoder), every one of them, once these checks guarantee they are there.
 * Only numbers are named, never a value.
 */
import {
  type DataType,
  DateUnit,
  type Field,
  IntervalUnit,
  MetadataVersion,
  Precision,
  Type,
  UnionMode,
} from 'apache-arrow';
import type { RecordBatch as BatchHeader } from 'apache-arrow/ipc/metadata/message';
import { thousands } from '../util/format.ts';
import { shownName } from '../util/limits.ts';

/** Rows of a record batch, values of a column: Arrow's offsets and lengths are 32-bit. */
export const MAX_ARROW_LENGTH = 2 ** 31 - 1;

/** A declared length the bytes do not hold: what is wrong, in words naming numbers only. */
export class LayoutProblem extends Error {
  constructor(
    message: string,
    /** Not a corrupt file but one ppdp does not read: its error code and how to write it instead. */
    readonly unsupported?: { readonly code: string; readonly hint: string },
  ) {
    super(message);
  }
}

/** Arrow IPC with compressed buffers (pyarrow's Feather default): how to write it so ppdp reads it. */
const COMPRESSED = {
  code: 'E_ARROW_COMPRESSED',
  hint:
    'write the file uncompressed, e.g. with pyarrow `feather.write_feather(df, path, compression="uncompressed")` ' +
    '(or `ipc.new_file(path, schema, options=ipc.IpcWriteOptions(compression=None))`), or write Parquet, which ppdp reads compressed',
};

/**
 * Checks a record batch's (or a dictionary batch's) declared lengths against its buffers and
 * its body of `bodyLength` bytes; `body` also checks the offsets it holds. `columns` are the
 * batch's fields (one, the dictionary's values, for a dictionary batch: `subject` then names
 * it), `version` the schema's metadata version.
 * @throws LayoutProblem naming the first length the bytes do not hold.
 */
export function checkBatchLayout(
  header: BatchHeader,
  columns: readonly Pick<Field, 'name' | 'type'>[],
  bodyLength: number,
  version: MetadataVersion,
  body?: Uint8Array,
  subject?: string,
): void {
  if (header.compression != null) {
    throw new LayoutProblem('its buffers are compressed (LZ4 or ZSTD), which ppdp does not read', COMPRESSED);
  }
  const rows = header.length;
  if (!isLength(rows)) throw new LayoutProblem(`the batch declares ${count(rows)} rows`);
  const walk = new LayoutWalk(header, bodyLength, version, body);
  for (const column of columns) {
    walk.subject = subject ?? `column "${shownName(column.name)}"`;
    walk.field(column.type, rows);
  }
}

function isLength(n: number): boolean {
  return Number.isSafeInteger(n) && n >= 0 && n <= MAX_ARROW_LENGTH;
}

function count(n: number): string {
  return Number.isFinite(n) ? thousands(n) : String(n);
}

class LayoutWalk {
  private node = 0;
  private buffer = 0;
  private variadic = 0;
  /** The top-level column being walked, as messages name it. */
  subject = '';

  constructor(
    private readonly header: BatchHeader,
    private readonly bodyLength: number,
    private readonly version: MetadataVersion,
    private readonly body: Uint8Array | undefined,
  ) {}

  /** Walks one field (and its children); a top-level one has the batch's `rows`. */
  field(type: DataType, rows?: number): void {
    const node = this.header.nodes[this.node++];
    if (node === undefined) {
      throw new LayoutProblem(
        `the batch lists ${this.header.nodes.length} field nodes, fewer than its columns need`,
      );
    }
    const { length, nullCount } = node;
    const what = this.subject;
    if (rows !== undefined && length !== rows) {
      throw new LayoutProblem(
        what.startsWith('column')
          ? `the batch declares ${count(rows)} rows, but ${what} declares ${count(length)}`
          : `the batch declares ${count(rows)} values, but ${what} declares ${count(length)}`,
      );
    }
    if (!isLength(length)) throw new LayoutProblem(`${what} declares ${count(length)} values`);
    if (!(Number.isSafeInteger(nullCount) && nullCount >= 0 && nullCount <= length)) {
      throw new LayoutProblem(`${what} declares ${count(nullCount)} nulls among ${count(length)} values`);
    }
    const validity = () => {
      const b = this.next();
      if (nullCount > 0) this.need(b, Math.ceil(length / 8), 'validity bitmap', length, nullCount);
    };
    switch (type.typeId) {
      case Type.Null:
        break;
      case Type.Bool:
        validity();
        this.need(this.next(), Math.ceil(length / 8), 'values', length);
        break;
      case Type.Int:
      case Type.Float:
      case Type.Decimal:
      case Type.Date:
      case Type.Time:
      case Type.Timestamp:
      case Type.Interval:
      case Type.Duration:
      case Type.FixedSizeBinary: {
        validity();
        const width = byteWidth(type);
        this.need(this.next(), length * width, 'values', length, undefined, width);
        break;
      }
      case Type.Dictionary: {
        validity();
        const width = byteWidth((type as DataType & { indices: DataType }).indices);
        this.need(this.next(), length * width, 'indices', length, undefined, width);
        break;
      }
      case Type.Utf8:
      case Type.Binary:
      case Type.LargeUtf8:
      case Type.LargeBinary: {
        validity();
        const width = type.typeId === Type.LargeUtf8 || type.typeId === Type.LargeBinary ? 8 : 4;
        const offsets = this.next();
        const data = this.next();
        if (length > 0) {
          this.need(offsets, (length + 1) * width, 'offsets', length + 1, undefined, width, true);
          this.offsets(offsets, data, length, width);
        }
        break;
      }
      case Type.Utf8View:
      case Type.BinaryView: {
        validity();
        this.need(this.next(), length * 16, 'views', length, undefined, 16);
        const n = this.header.variadicBufferCounts[this.variadic++] ?? 0;
        for (let k = 0; k < n; k++) this.next();
        break;
      }
      case Type.List:
      case Type.LargeList:
      case Type.Map: {
        validity();
        const width = type.typeId === Type.LargeList ? 8 : 4;
        const offsets = this.next();
        if (length > 0)
          this.need(offsets, (length + 1) * width, 'offsets', length + 1, undefined, width, true);
        this.field(type.children[0]!.type);
        break;
      }
      case Type.FixedSizeList:
        validity();
        this.field(type.children[0]!.type);
        break;
      case Type.Struct:
        validity();
        for (const child of type.children) this.field(child.type);
        break;
      case Type.Union: {
        if (this.version < MetadataVersion.V5) this.next();
        this.need(this.next(), length, 'type ids', length, undefined, 1);
        if ((type as DataType & { mode: UnionMode }).mode === UnionMode.Dense) {
          this.need(this.next(), length * 4, 'offsets', length, undefined, 4);
        }
        for (const child of type.children) this.field(child.type);
        break;
      }
      default:
        throw new LayoutProblem(`${what} has an Arrow type whose layout ppdp does not know`);
    }
  }

  /** The next buffer, checked to lie inside the body. */
  private next(): { offset: number; length: number } {
    const index = this.buffer++;
    const b = this.header.buffers[index];
    if (b === undefined) {
      throw new LayoutProblem(
        `the batch lists ${this.header.buffers.length} buffers, fewer than its columns need`,
      );
    }
    const { offset, length } = b;
    if (
      !(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0) ||
      offset + length > this.bodyLength
    ) {
      throw new LayoutProblem(
        `${this.subject}: buffer ${index + 1} (bytes ${count(offset)}–${count(offset + length)}) lies outside the batch's body of ${count(this.bodyLength)} bytes`,
      );
    }
    return b;
  }

  /** `b` holds at least `bytes` bytes for `values` values (of `width` bytes, when fixed). */
  private need(
    b: { length: number },
    bytes: number,
    what: string,
    values: number,
    nulls?: number,
    width?: number,
    offsets = false,
  ): void {
    if (b.length >= bytes) return;
    const declared =
      nulls !== undefined
        ? `declares ${count(nulls)} null${nulls === 1 ? '' : 's'}`
        : `declares ${count(offsets ? values - 1 : values)} values`;
    const needs = width === undefined ? count(bytes) : `${count(values)} × ${width}`;
    throw new LayoutProblem(
      `${this.subject} ${declared}, but its ${what} ${what.endsWith('bitmap') ? '' : 'buffer '}holds ${count(b.length)} bytes, fewer than the ${needs} it needs`,
    );
  }

  /** With the body at hand: offsets from 0 on, never backwards, ending inside the data. */
  private offsets(
    offsets: { offset: number },
    data: { offset: number; length: number },
    length: number,
    width: number,
  ): void {
    const body = this.body;
    if (!body) return;
    const start = body.byteOffset + offsets.offset;
    const view = new DataView(body.buffer, start, (length + 1) * width);
    // Aligned 32-bit offsets (the writers' layout) are read as they are; others through the view.
    const ints = width === 4 && start % 4 === 0 ? new Int32Array(body.buffer, start, length + 1) : undefined;
    const at = (i: number) =>
      ints ? ints[i]! : width === 4 ? view.getInt32(i * 4, true) : Number(view.getBigInt64(i * 8, true));
    let previous = at(0);
    if (previous < 0) throw new LayoutProblem(`${this.subject}: value offsets start before its data`);
    for (let i = 1; i <= length; i++) {
      const next = at(i);
      if (next < previous)
        throw new LayoutProblem(`${this.subject}: value offsets go backwards at value ${thousands(i)}`);
      previous = next;
    }
    if (previous > data.length) {
      throw new LayoutProblem(
        `${this.subject}: value offsets run past its data (${count(data.length)} bytes)`,
      );
    }
  }
}

/** Bytes per value of a fixed-width type. */
function byteWidth(type: DataType): number {
  const t = type as DataType & {
    bitWidth?: number;
    precision?: Precision;
    unit?: number;
    byteWidth?: number;
  };
  switch (type.typeId) {
    case Type.Int:
    case Type.Time:
    case Type.Decimal:
      return (t.bitWidth ?? 128) / 8;
    case Type.Float:
      return t.precision === Precision.HALF ? 2 : t.precision === Precision.SINGLE ? 4 : 8;
    case Type.Date:
      return t.unit === DateUnit.DAY ? 4 : 8;
    case Type.Interval:
      return t.unit === IntervalUnit.YEAR_MONTH ? 4 : t.unit === IntervalUnit.DAY_TIME ? 8 : 16;
    case Type.FixedSizeBinary:
      return t.byteWidth ?? 0;
    default:
      return 8; // Timestamp, Duration
  }
}
