/**
 * The scan's row shards: one Arrow IPC stream per shard (`rows/P/J.arrow` in the work area: the
 * J-th shard of input piece P) holding its rows encoded — every column as Dictionary<Utf8> (its
 * indices as narrow as the dictionary allows) with the dictionary the piece's reader had built by
 * the shard's end and the shard's codes. Within a piece dictionaries only grow, so each shard's is
 * a prefix of the next one's. The pieces are read apart, each with its own dictionaries; Combine
 * merges them, in piece order, into the input's (`rows/dictionaries.arrow`: a value's code is its
 * rank of first appearance in the input) and writes each piece's code map (`rows/P/codes.bin`:
 * per column, local code → input code), which the states apply as they load a shard
 * (`toInputCodes`). Shard data never travels in a state payload.
 */
import {
  type Data,
  Dictionary,
  Field,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableFromIPC,
  tableToIPC,
  Utf8,
} from 'apache-arrow';
import { indicesAsCodes, narrowIndices } from '../data/arrow.ts';
import type { EncodedColumn, EncodedTable } from '../data/table.ts';
import { utf8Vector, utf8VectorValues } from '../data/utf8.ts';

export interface ShardRange {
  /** Input rows [firstRow, firstRow + rows). */
  readonly firstRow: number;
  readonly rows: number;
  /** The input piece the shard was read from, and its place among that piece's shards. */
  readonly piece: number;
  readonly inPiece: number;
}

export interface RowsLayout {
  readonly rowCount: number;
  readonly shards: ShardRange[];
  /** Facts of the input table that the codes do not carry. */
  readonly source: string;
  readonly delimiter: string;
}

/** The work area's key of the rows of the `inPiece`-th shard of input piece `piece`. */
export function shardRowsKey(piece: number, inPiece: number): string {
  return `rows/${piece}/${inPiece}.arrow`;
}

/** The work area's key of a piece's code map (local code → input code, per column). */
export function pieceCodesKey(piece: number): string {
  return `rows/${piece}/codes.bin`;
}

/** Per column, each local code's input code. */
export type CodeMaps = readonly Int32Array[];

export function encodeCodeMaps(maps: CodeMaps): Uint8Array {
  const out = new Int32Array(1 + maps.length + maps.reduce((n, m) => n + m.length, 0));
  out[0] = maps.length;
  let at = 1 + maps.length;
  for (const [i, m] of maps.entries()) {
    out[1 + i] = m.length;
    out.set(m, at);
    at += m.length;
  }
  return new Uint8Array(out.buffer);
}

export function decodeCodeMaps(bytes: Uint8Array): CodeMaps {
  const words = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const maps: Int32Array[] = [];
  let at = 1 + words[0]!;
  for (let i = 0; i < words[0]!; i++) {
    const n = words[1 + i]!;
    maps.push(words.subarray(at, at + n));
    at += n;
  }
  return maps;
}

/**
 * A piece's shard in the input's codes, with the input's dictionaries: what every state after
 * the scan works on, the same whatever the pieces and shards.
 */
export function toInputCodes(shard: EncodedTable, maps: CodeMaps, input: EncodedTable): EncodedTable {
  return {
    ...shard,
    columns: shard.columns.map((c, i) => {
      const map = maps[i]!;
      const dictionary = input.columns[i]!.dictionary;
      // Pieces that list their values in the input's order (ranges of one Arrow file, whose
      // dictionaries every range reads whole) keep their codes.
      if (map.every((code, local) => code === local)) return { ...c, dictionary };
      const codes = new Int32Array(c.codes.length);
      for (let r = 0; r < codes.length; r++) codes[r] = map[c.codes[r]!]!;
      return { ...c, dictionary, codes };
    }),
  };
}

/** The work area's key of the input's dictionaries (merged from the pieces', with no rows). */
export const DICTIONARIES_KEY = 'rows/dictionaries.arrow';

/** A shard's rows as one Arrow IPC stream (schema, dictionaries, one record batch). */
export function encodeShardRows(table: EncodedTable): Uint8Array {
  const indices = table.columns.map((c) => narrowIndices(c.codes, c.dictionary.length));
  const types = table.columns.map((_, i) => new Dictionary(new Utf8(), indices[i]!.type, i, false));
  const fields = table.columns.map((c, i) => new Field(c.name, types[i]!, false));
  const schema = new Schema(fields);
  const children = table.columns.map((c, i) =>
    makeData({
      type: types[i]!,
      length: table.rowCount,
      nullCount: 0,
      data: indices[i]!.data,
      dictionary: utf8Vector(c.dictionary),
    }),
  );
  const batch = new RecordBatch(
    schema,
    makeData({ type: new Struct(fields), length: table.rowCount, nullCount: 0, children }),
  );
  return tableToIPC(new Table(schema, [batch]), 'stream');
}

/** A shard's rows back from its bytes. */
export function decodeShardRows(
  bytes: Uint8Array,
  layout: RowsLayout,
  rowCount: number,
  /** false: the dictionaries are left empty, for a caller that puts the input's in their place. */
  values = true,
): EncodedTable {
  const table = tableFromIPC(bytes);
  const columns: EncodedColumn[] = table.schema.fields.map((f, i) => {
    const chunks = table.getChildAt(i)!.data as Data<Dictionary<Utf8>>[];
    const dictionary = values ? utf8VectorValues(chunks[0]!.dictionary!) : [];
    let codes: Int32Array;
    if (chunks.length === 1) codes = indicesAsCodes(chunks[0]!);
    else {
      codes = new Int32Array(rowCount);
      let at = 0;
      for (const d of chunks) {
        codes.set(indicesAsCodes(d), at);
        at += d.length;
      }
    }
    return { name: f.name, dictionary, codes };
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
