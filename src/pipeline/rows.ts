/**
 * The plan step's row shards: one Arrow IPC stream per shard (`rows/N.arrow` in the work area)
 * holding its rows encoded — every column as Dictionary<Utf8, Int32> with the dictionary the
 * input reader had built by the shard's end and the shard's codes. Dictionaries only grow, so
 * each shard's is a prefix of the next one's and a code means the same value in every shard:
 * the last shard's dictionaries are the input's. Shard data never travels in a state payload.
 */
import {
  type Data,
  Dictionary,
  Field,
  Int32,
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

export interface ShardRange {
  /** Input rows [firstRow, firstRow + rows). */
  readonly firstRow: number;
  readonly rows: number;
}

export interface RowsLayout {
  readonly rowCount: number;
  readonly shards: ShardRange[];
  /** Facts of the input table that the codes do not carry. */
  readonly source: string;
  readonly delimiter: string;
}

/** The work area's key of shard `index`'s rows. */
export function shardRowsKey(index: number): string {
  return `rows/${index}.arrow`;
}

/** The work area's key of the input's dictionaries (the last shard's, with no rows). */
export const DICTIONARIES_KEY = 'rows/dictionaries.arrow';

/** A shard's rows as one Arrow IPC stream (schema, dictionaries, one record batch). */
export function encodeShardRows(table: EncodedTable): Uint8Array {
  const types = table.columns.map((_, i) => new Dictionary(new Utf8(), new Int32(), i, false));
  const fields = table.columns.map((c, i) => new Field(c.name, types[i]!, false));
  const schema = new Schema(fields);
  const children = table.columns.map((c, i) =>
    makeData({
      type: types[i]!,
      length: table.rowCount,
      nullCount: 0,
      data: c.codes,
      dictionary: vectorFromArray(c.dictionary, new Utf8()),
    }),
  );
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(fields), length: table.rowCount, nullCount: 0, children }),
  );
  return tableToIPC(new Table(schema, [batch]), 'stream');
}

/** A shard's rows back from its bytes. */
export function decodeShardRows(bytes: Uint8Array, layout: RowsLayout, rowCount: number): EncodedTable {
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
