/**
 * The plan step's row shards: one Arrow IPC stream per release holding the encoded input —
 * every column as Dictionary<Utf8, Int32> with the input's own dictionary and codes — as one
 * record batch per shard. The schema and dictionaries come first, once; a shard worker reads
 * them and its own batch with two range requests, so shard data never travels in the state
 * payload and no worker reads more than its rows.
 */
import {
  type Data,
  Dictionary,
  Field,
  Int32,
  Message,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import type { EncodedColumn, EncodedTable } from '../data/table.ts';
import type { Store } from './storage/store.ts';

export interface ShardRange {
  /** Byte range of the shard's record batch message in the rows file. */
  readonly start: number;
  readonly end: number;
  /** Input rows [firstRow, firstRow + rows). */
  readonly firstRow: number;
  readonly rows: number;
}

export interface RowsLayout {
  readonly rowCount: number;
  /** Bytes [0, headerEnd): the schema and dictionary messages. */
  readonly headerEnd: number;
  readonly shards: ShardRange[];
  /** Facts of the input table that the codes do not carry. */
  readonly source: string;
  readonly delimiter: string;
}

/** Row bounds of `shards` balanced shards (the first ones one row longer when uneven). */
export function shardBounds(rowCount: number, shards: number): number[] {
  const n = Math.max(1, Math.min(shards, rowCount));
  return Array.from({ length: n + 1 }, (_, i) => Math.floor((i * rowCount) / n));
}

export function encodeRows(table: EncodedTable, shards: number): { bytes: Uint8Array; layout: RowsLayout } {
  const types = table.columns.map((_, i) => new Dictionary(new Utf8(), new Int32(), i, false));
  const fields = table.columns.map((c, i) => new Field(c.name, types[i]!, false));
  const schema = new Schema(fields);
  const dictionaries = table.columns.map((c) => vectorFromArray(c.dictionary, new Utf8()));
  const bounds = shardBounds(table.rowCount, shards);
  const batches: RecordBatch[] = [];
  for (let s = 0; s + 1 < bounds.length; s++) {
    const [lo, hi] = [bounds[s]!, bounds[s + 1]!];
    const children = table.columns.map((c, i) =>
      makeData({
        type: types[i]!,
        length: hi - lo,
        nullCount: 0,
        data: c.codes.subarray(lo, hi),
        dictionary: dictionaries[i]!,
      }),
    );
    batches.push(
      new RecordBatch(
        schema,
        makeData({ type: new Struct(fields), length: hi - lo, nullCount: 0, children }),
      ),
    );
  }
  const bytes = tableToIPC(new Table(schema, batches), 'stream');
  // Walk the messages: schema, dictionaries, then one record batch per shard.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let pos = 0;
  let headerEnd = -1;
  const ranges: ShardRange[] = [];
  while (pos + 8 <= bytes.length) {
    const metaLength = view.getInt32(pos + 4, true);
    if (metaLength === 0) break;
    const message = Message.decode(bytes.subarray(pos + 8, pos + 8 + metaLength));
    const end = pos + 8 + metaLength + Number(message.bodyLength);
    if (message.isRecordBatch()) {
      if (headerEnd < 0) headerEnd = pos;
      const s = ranges.length;
      ranges.push({ start: pos, end, firstRow: bounds[s]!, rows: bounds[s + 1]! - bounds[s]! });
    }
    pos = end;
  }
  if (ranges.length !== batches.length) throw new Error('rows file: record batches and shards disagree');
  return {
    bytes,
    layout: {
      rowCount: table.rowCount,
      headerEnd,
      shards: ranges,
      source: table.source,
      delimiter: table.delimiter,
    },
  };
}

const EOS = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0]);

/** Reads one shard (two range requests) as a table of its rows with the input's dictionaries. */
export async function readShard(
  store: Store,
  key: string,
  layout: RowsLayout,
  index: number,
): Promise<EncodedTable> {
  const range = layout.shards[index];
  if (!range) throw new RangeError(`shard ${index} is not in the plan (${layout.shards.length} shards)`);
  const [header, batch] = await Promise.all([
    store.getRange(key, 0, layout.headerEnd),
    store.getRange(key, range.start, range.end),
  ]);
  const stream = new Uint8Array(header.length + batch.length + EOS.length);
  stream.set(header, 0);
  stream.set(batch, header.length);
  stream.set(EOS, header.length + batch.length);
  return decode(stream, layout, range.rows);
}

/** Reads every row back (the merge and verification steps of methods that need the whole table). */
export async function readAllRows(store: Store, key: string, layout: RowsLayout): Promise<EncodedTable> {
  return decode(await store.get(key), layout, layout.rowCount);
}

function decode(bytes: Uint8Array, layout: RowsLayout, rowCount: number): EncodedTable {
  const table = tableFromIPC(bytes);
  const columns: EncodedColumn[] = table.schema.fields.map((f, i) => {
    const chunks = table.getChildAt(i)!.data as Data<Dictionary<Utf8, Int32>>[];
    const dictionary = chunks[0]!.dictionary!.toArray() as string[];
    let codes: Int32Array;
    if (chunks.length === 1) codes = (chunks[0]!.values as Int32Array).subarray(0, chunks[0]!.length);
    else {
      codes = new Int32Array(rowCount);
      let at = 0;
      for (const d of chunks) {
        codes.set((d.values as Int32Array).subarray(0, d.length), at);
        at += d.length;
      }
    }
    return { name: f.name, dictionary: Array.from(dictionary), codes };
  });
  if (columns.some((c) => c.codes.length !== rowCount))
    throw new Error('rows file: a shard has the wrong length');
  return { source: layout.source, rowCount, columns, delimiter: layout.delimiter };
}

/** Distinct tuples with counts (and optional per-tuple flags) as compact binary. */
export interface TupleColumns {
  readonly columns: Int32Array[];
  readonly counts: Int32Array;
}

export function encodeTuples(t: TupleColumns): Uint8Array {
  const n = t.counts.length;
  const m = t.columns.length;
  const out = new Int32Array(2 + n * (m + 1));
  out[0] = m;
  out[1] = n;
  out.set(t.counts, 2);
  for (const [i, c] of t.columns.entries()) out.set(c, 2 + n * (i + 1));
  return new Uint8Array(out.buffer);
}

export function decodeTuples(bytes: Uint8Array): TupleColumns {
  const words = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const m = words[0]!;
  const n = words[1]!;
  return {
    counts: words.subarray(2, 2 + n),
    columns: Array.from({ length: m }, (_, i) => words.subarray(2 + n * (i + 1), 2 + n * (i + 2))),
  };
}
