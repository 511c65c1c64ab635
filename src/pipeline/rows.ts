/**
 * The scan's row shards: one Arrow IPC stream per shard (`rows/P/J.arrow` in the work area: the
 * J-th shard of input piece P) holding its rows encoded — every column as Dictionary<Utf8> (its
 * indices as narrow as the dictionary allows) with the dictionary the piece's reader had built by
 * the shard's end and the shard's codes, but for the columns the method only carries to the
 * release (ShardSteps.passThrough, in a sharded release): those as plain Utf8, their rows' values
 * (RawShards), which no state codes or merges, in a file of their own beside it
 * (`rows/P/J.bytes.arrow`, read only by the states that need them). Within a piece dictionaries only grow, so each shard's is
 * a prefix of the next one's. The pieces are read apart, each with its own dictionaries; Combine
 * merges them, in piece order, into the input's (`rows/dictionaries.arrow`: a value's code is its
 * rank of first appearance in the input) and writes each piece's code map (`rows/P/codes.bin`:
 * per column, local code → input code), which the states apply as they load a shard
 * (`toInputCodes`). Shard data never travels in a state payload.
 */
import {
  type Data,
  DataType,
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
import { indicesAsCodes, ipcPieces, narrowIndices } from '../data/arrow.ts';
import { concatRaw, type RawValues, rawLength, rawOfCodes } from '../data/raw.ts';
import type { EncodedColumn, EncodedTable, RowOrigin } from '../data/table.ts';
import { utf8Buffers, utf8Vector, utf8VectorValues } from '../data/utf8.ts';
import { joinInt32s } from '../util/int32s.ts';
import { bytesHashes } from '../verify/fingerprint.ts';

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
  /** The shards' columns, in the input's order (Combine's). */
  readonly columns?: readonly string[];
  /** Facts of the input table that the codes do not carry. */
  readonly source: string;
  readonly delimiter: string;
  /**
   * Where the input's rows are (EncodedTable.origins, over the input's rows): each piece's
   * file and the row there its rows start from, and its sheet (Combine's). A shard's rows are
   * named by them in messages.
   */
  readonly origins?: readonly RowOrigin[];
}

/** The work area's key of the rows of the `inPiece`-th shard of input piece `piece`: its coded columns. */
export function shardRowsKey(piece: number, inPiece: number): string {
  return `rows/${piece}/${inPiece}.arrow`;
}

/**
 * The work area's key of the same shard's pass-through columns (its rows' bytes), apart from its
 * coded ones: the states that only count, search or apply (CountShard, ApplyShard) read the
 * codes alone, and cost the same with or without such columns; RouteShard and the shard's
 * verification slice read the bytes too.
 */
export function shardBytesKey(piece: number, inPiece: number): string {
  return `rows/${piece}/${inPiece}.bytes.arrow`;
}

/** A shard's coded columns and its pass-through ones (none: no bytes file), as stored apart. */
export function splitShardBytes(table: EncodedTable): { coded: EncodedTable; bytes?: EncodedTable } {
  if (!table.columns.some((c) => c.raw)) return { coded: table };
  return {
    coded: { ...table, columns: table.columns.filter((c) => !c.raw) },
    bytes: { ...table, columns: table.columns.filter((c) => c.raw) },
  };
}

/**
 * A shard's coded and pass-through columns together again, in the input's column order
 * (`names`): the verifier's hashes number the columns by their place.
 */
export function joinShardBytes(
  coded: EncodedTable,
  bytes: EncodedTable,
  names: readonly string[],
): EncodedTable {
  const byName = new Map([...coded.columns, ...bytes.columns].map((c) => [c.name, c]));
  if (byName.size !== names.length || names.some((n) => !byName.has(n)))
    throw new Error("rows file: a shard's coded and pass-through columns are not the input's");
  return { ...coded, columns: names.map((n) => byName.get(n)!) };
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
  // By name: a shard read without its pass-through columns holds fewer than the input.
  const place = new Map(input.columns.map((c, i) => [c.name, i]));
  return {
    ...shard,
    columns: shard.columns.map((c) => {
      if (c.raw) return c; // values, not codes
      const i = place.get(c.name)!;
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

/** A field's metadata key: the column's distinct values, when its dictionary does not list them (a raw column's). */
const DISTINCT = 'ppdp.distinct';

/** The work area's key of the input's dictionaries (merged from the pieces', with no rows). */
export const DICTIONARIES_KEY = 'rows/dictionaries.arrow';

/** A shard's rows as one Arrow IPC stream (schema, dictionaries, one record batch). */
export function encodeShardRows(table: EncodedTable): Uint8Array {
  return tableToIPC(shardRowsTable(table), 'stream');
}

/** encodeShardRows' bytes as the writer's pieces, not joined (for a store's `put`). */
export function encodeShardRowsPieces(table: EncodedTable): Promise<Uint8Array[]> {
  return ipcPieces(shardRowsTable(table), 'stream');
}

/** A shard's rows as one Arrow table (encodeShardRows). */
function shardRowsTable(table: EncodedTable): Table {
  const indices = table.columns.map((c) => narrowIndices(c.codes, c.dictionary.length));
  // A column that passes through (raw) is a plain Utf8 column of its rows' values.
  const types = table.columns.map((c, i) =>
    c.raw ? new Utf8() : new Dictionary(new Utf8(), indices[i]!.type, i, false),
  );
  const fields = table.columns.map(
    (c, i) =>
      new Field(
        c.name,
        types[i]!,
        false,
        c.distinct === undefined ? undefined : new Map([[DISTINCT, String(c.distinct)]]),
      ),
  );
  const schema = new Schema(fields);
  const children = table.columns.map((c, i) =>
    c.raw
      ? makeData({
          type: new Utf8(),
          length: table.rowCount,
          nullCount: 0,
          valueOffsets: c.raw.offsets,
          data: c.raw.bytes,
        })
      : makeData({
          type: types[i] as Dictionary<Utf8>,
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
  return new Table(schema, [batch]);
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
    const distinct = f.metadata.get(DISTINCT);
    const counted = distinct === undefined ? {} : { distinct: Number(distinct) };
    if (DataType.isUtf8(f.type)) {
      const raw = concatRaw(
        (table.getChildAt(i)!.data as Data<Utf8>[]).map((d) => ({
          offsets: d.valueOffsets.subarray(0, d.length + 1),
          bytes: d.values,
        })),
      );
      return { name: f.name, dictionary: [], codes: new Int32Array(0), raw, ...counted };
    }
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
    return { name: f.name, dictionary, codes, ...counted };
  });
  if (columns.some((c) => (c.raw ? rawLength(c.raw) : c.codes.length) !== rowCount))
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

/**
 * Turns the columns named in `names` of a piece's shards into raw columns (their rows' values as
 * bytes, EncodedColumn.raw) as the shards are read, and counts each one's distinct values (its
 * `distinct`: of the piece so far). A column a reader already gives as bytes passes as it is;
 * one it gives coded has its dictionary encoded to bytes once, the values a shard adds to it as
 * they come (a shard's dictionary extends the one before), and each row's value copied from there.
 */
export class RawShards {
  private readonly encoded = new Map<
    string,
    { values: number; last: string | undefined; bytes: DictionaryBytes }
  >();
  /** Per raw column, its distinct values so far. */
  readonly distinct = new Map<string, DistinctHashes>();

  constructor(private readonly names: ReadonlySet<string>) {}

  convert(shard: EncodedTable): EncodedTable {
    if (this.names.size === 0) return shard;
    return {
      ...shard,
      columns: shard.columns.map((c) => {
        if (!this.names.has(c.name)) return c;
        const { name } = c;
        const raw = c.raw ?? this.rawOf(c);
        let set = this.distinct.get(name);
        if (!set) this.distinct.set(name, (set = new DistinctHashes()));
        set.addAll(raw);
        return {
          name,
          dictionary: [],
          codes: new Int32Array(0),
          raw,
          // Of the piece so far; listed hashes are not counted shard by shard (at most their rows).
          distinct: set.atMost,
        };
      }),
    };
  }

  /** A coded column's rows as bytes. */
  private rawOf(c: EncodedColumn): RawValues {
    let e = this.encoded.get(c.name);
    const { dictionary } = c;
    // A dictionary that does not extend the one before (a new file's) is encoded afresh.
    if (!e || dictionary.length < e.values || (e.values > 0 && dictionary[e.values - 1] !== e.last)) {
      e = { values: 0, last: undefined, bytes: new DictionaryBytes() };
      this.encoded.set(c.name, e);
    }
    e.bytes.append(dictionary, e.values);
    e.values = dictionary.length;
    e.last = dictionary[dictionary.length - 1];
    return rawOfCodes(e.bytes.view(), c.codes);
  }
}

/**
 * A set of values counted by a 64-bit hash of each one's UTF-8 bytes (the audit's: bytesHashes,
 * MurmurHash3 under two seeds), no bytes held: two values with the same hash count as one, a
 * risk docs/definitions.md states. An open-addressing table whose slots hold the hash itself
 * (two words side by side), so a lookup reads one cache line; the hash (0, 0) marks an empty
 * slot, so a value with that hash is counted apart. Filled up to three quarters (a column of
 * distinct values makes a large table, whose size costs more in cache misses than the longer
 * probes along a line): 11–22 bytes a value, nothing per row.
 *
 * Values nearly all distinct (a note, a timestamp: more than half of a first batch's sample)
 * are not placed at all: their hashes are kept as the batches gave them, 8 bytes a row, and
 * counted once when the count is asked for (distinctHashCount, in partitions that stay in
 * cache). Placing them row by row in a table of millions cost a cache miss a row, and over
 * an input of several pieces the count is made again from the pieces' hashes anyway.
 */
export class DistinctHashes {
  /** Slot i's hash is (slots[2i], slots[2i + 1]); (0, 0) is empty. */
  private slots = new Int32Array(2 * 64);
  private held = 0;
  /** Whether a value hashed to (0, 0). */
  private zero = false;
  /** The batches' hashes as they came, when the values are nearly all distinct (above). */
  private listed: Int32Array[] | undefined;
  /** The listed hashes' number, and their distinct number once counted since the last batch. */
  private listedRows = 0;
  private counted: number | undefined;

  /** The number of distinct values (of listed hashes: counted now, once per batch added). */
  get size(): number {
    if (this.listed) return (this.counted ??= distinctHashCount(this.listed));
    return this.held + (this.zero ? 1 : 0);
  }

  /** At least the number of distinct values, without counting listed hashes: their number. */
  get atMost(): number {
    return this.listed ? this.listedRows : this.size;
  }

  /** Empties the set, keeping its table's size (distinctHashCount's partitions reuse one). */
  clear(): void {
    this.slots.fill(0);
    this.held = 0;
    this.zero = false;
    this.listed = undefined;
    this.listedRows = 0;
    this.counted = undefined;
  }

  /** Every row's value of `raw`. */
  addAll(raw: RawValues): void {
    this.addHashes(bytesHashes(0, raw));
  }

  /** Values by their hashes, two lanes a value (as bytesHashes gives them). */
  addHashes(hashes: Int32Array): void {
    const n = hashes.length >>> 1;
    if (this.listed) {
      this.list(hashes);
      return;
    }
    const sample = Math.min(n, SAMPLE_ROWS);
    const before = this.size;
    this.insert(hashes, 0, sample);
    const added = this.size - before;
    // Values nearly all distinct in a large batch: listed from here on, the table's with them.
    if (n - sample >= REGION_BATCH && 2 * added > sample) {
      const placed = this.hashes();
      this.clear();
      this.listed = [];
      this.list(placed);
      this.list(hashes.subarray(2 * sample));
      return;
    }
    // A column of (nearly) distinct values: room for the rest of the rows at once, not by
    // doubling (each doubling moves every hash held).
    if (n > sample && 2 * added > sample)
      this.reserve(this.held + Math.ceil(((n - sample) * added) / sample));
    if (n - sample >= REGION_BATCH && this.slots.length >>> 1 >= REGION_TABLE)
      this.insert(byRegion(hashes.subarray(2 * sample), this.slots.length >>> 1), 0, n - sample);
    else this.insert(hashes, sample, n);
  }

  /**
   * The hashes held, two lanes a value, in the table's order, or the listed ones in the order
   * they came (then a value's hash may be there more than once); the same for the same values
   * added in the same order.
   */
  hashes(): Int32Array {
    if (this.listed) return joinInt32s(this.listed);
    const out = new Int32Array(2 * this.size);
    let at = 0;
    const slots = this.slots;
    for (let i = 0; i < slots.length; i += 2) {
      if ((slots[i]! | slots[i + 1]!) === 0) continue;
      out[at++] = slots[i]!;
      out[at++] = slots[i + 1]!;
    }
    // out's last pair stays (0, 0) when that hash was added.
    return out;
  }

  private list(hashes: Int32Array): void {
    this.listed!.push(hashes);
    this.listedRows += hashes.length >>> 1;
    this.counted = undefined;
  }

  private insert(hashes: Int32Array, from: number, to: number): void {
    let slots = this.slots;
    let mask = (slots.length >>> 1) - 1;
    for (let v = from; v < to; v++) {
      const lo = hashes[2 * v]!;
      const hi = hashes[2 * v + 1]!;
      if ((lo | hi) === 0) {
        this.zero = true;
        continue;
      }
      let i = lo & mask;
      for (;;) {
        const a = slots[2 * i]!;
        const b = slots[2 * i + 1]!;
        if ((a | b) === 0) {
          slots[2 * i] = lo;
          slots[2 * i + 1] = hi;
          if (4 * ++this.held > 3 * mask) {
            this.rehash(2 * (mask + 1));
            slots = this.slots;
            mask = (slots.length >>> 1) - 1;
          }
          break;
        }
        if (a === lo && b === hi) break;
        i = (i + 1) & mask;
      }
    }
  }

  /** Room for `values` hashes at a load of at most three quarters (sized once, not by doubling). */
  reserve(values: number): void {
    let size = this.slots.length >>> 1;
    while (3 * size < 4 * values + 4) size *= 2;
    if (size > this.slots.length >>> 1) this.rehash(size);
  }

  private rehash(size: number): void {
    const old = this.slots;
    const slots = new Int32Array(2 * size);
    const mask = size - 1;
    for (let k = 0; k < old.length; k += 2) {
      const lo = old[k]!;
      const hi = old[k + 1]!;
      if ((lo | hi) === 0) continue;
      let i = lo & mask;
      while ((slots[2 * i]! | slots[2 * i + 1]!) !== 0) i = (i + 1) & mask;
      slots[2 * i] = lo;
      slots[2 * i + 1] = hi;
    }
    this.slots = slots;
  }
}

/**
 * The number of distinct hashes (two lanes each, as bytesHashes gives them) over `lists`: what a
 * DistinctHashes of them all would hold. The hashes are first split by their high bits into
 * partitions of a few ten thousand, each then counted in a set small enough to stay in cache:
 * one set of millions of hashes costs a cache miss a hash.
 */
export function distinctHashCount(lists: readonly Int32Array[]): number {
  let n = 0;
  for (const list of lists) n += list.length >>> 1;
  let bits = 0;
  while (n >>> bits > PARTITION_HASHES) bits++;
  const partitions = 1 << bits;
  // A partition's number: the top `bits` bits of the second lane (the set's slots use the first).
  const { pairs: split, starts } = pairsByBucket(lists, partitions, 1, bits === 0 ? 0 : -1, 32 - bits);
  let largest = 0;
  for (let p = 0; p < partitions; p++) largest = Math.max(largest, starts[p + 1]! - starts[p]!);
  // One set, sized for the largest partition, emptied for each: the (0, 0) hash can only be in
  // partition 0 (its high bits are 0), so it is counted once.
  const set = new DistinctHashes();
  set.reserve(largest);
  let distinct = 0;
  for (let p = 0; p < partitions; p++) {
    set.clear();
    set.addHashes(split.subarray(2 * starts[p]!, 2 * starts[p + 1]!));
    distinct += set.size;
  }
  return distinct;
}

/**
 * Hashes (two lanes each) in the order of the regions of a table of `size` slots their first
 * slot falls in (a counting sort on the slot's top 8 bits), so that a batch inserted in that
 * order walks the table region by region, each region in cache, instead of missing the cache
 * at every hash of a table of millions.
 */
function byRegion(hashes: Int32Array, size: number): Int32Array {
  const mask = size - 1;
  const shift = Math.log2(size) - REGION_BITS;
  return pairsByBucket([hashes], 1 << REGION_BITS, 0, mask, shift).pairs;
}

/**
 * The hashes (two lanes each) of `lists` grouped by their bucket, in order inside each (a
 * counting sort); bucket b's pairs start at pair `starts[b]`. A hash's bucket is its lane
 * `lane` (0 or 1) masked with `mask`, shifted right by `shift`: below `buckets`. (Numbers, not
 * a function: a callback per hash, not inlined, cost several times the loop itself.)
 */
function pairsByBucket(
  lists: readonly Int32Array[],
  buckets: number,
  lane: 0 | 1,
  mask: number,
  shift: number,
): { pairs: Int32Array; starts: Int32Array } {
  let n = 0;
  for (const list of lists) n += list.length >>> 1;
  const starts = new Int32Array(buckets + 1);
  for (const list of lists)
    for (let v = lane; v < list.length; v += 2) starts[((list[v]! & mask) >>> shift) + 1]!++;
  for (let b = 0; b < buckets; b++) starts[b + 1]! += starts[b]!;
  const pairs = new Int32Array(2 * n);
  const next = starts.slice(0, buckets);
  for (const list of lists)
    for (let v = 0; v < list.length; v += 2) {
      const at = 2 * next[(list[v + lane]! & mask) >>> shift]!++;
      pairs[at] = list[v]!;
      pairs[at + 1] = list[v + 1]!;
    }
  return { pairs, starts };
}

/** Regions a large table's batch is sorted into (byRegion), and when: batches and tables this large. */
const REGION_BITS = 8;
const REGION_BATCH = 1 << 16;
const REGION_TABLE = 1 << 18;

/** Hashes per partition at most that distinctHashCount aims at (its set: 1 MiB at most). */
const PARTITION_HASHES = 1 << 15;

/** Rows a set looks at before it sizes itself for the rest of a shard. */
const SAMPLE_ROWS = 4096;

/**
 * Per column, a set of distinct values' hashes (a piece's raw columns' for Combine, DistinctHashes):
 * the count of columns, each one's count of hashes, then the hashes (two words each). No value's bytes.
 */
export function encodeDistinctHashes(columns: readonly Int32Array[]): Uint8Array {
  const out = new Int32Array(1 + columns.length + columns.reduce((n, c) => n + c.length, 0));
  out[0] = columns.length;
  let at = 1 + columns.length;
  for (const [i, c] of columns.entries()) {
    out[1 + i] = c.length >>> 1;
    out.set(c, at);
    at += c.length;
  }
  return new Uint8Array(out.buffer);
}

export function decodeDistinctHashes(bytes: Uint8Array): Int32Array[] {
  const words = new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
  const out: Int32Array[] = [];
  let at = 1 + words[0]!;
  for (let i = 0; i < words[0]!; i++) {
    const n = 2 * words[1 + i]!;
    out.push(words.subarray(at, at + n));
    at += n;
  }
  return out;
}

/** A dictionary's values as bytes (Utf8 offsets and data), grown by appending. */
class DictionaryBytes {
  private offsets = new Int32Array(1024);
  private bytes = new Uint8Array(16384);
  private size = 0;

  /** Appends `dictionary[from…]`. */
  append(dictionary: readonly string[], from: number): void {
    if (from >= dictionary.length) return;
    const added = utf8Buffers(from === 0 ? dictionary : dictionary.slice(from));
    const n = added.offsets.length - 1;
    const end = this.offsets[this.size]!;
    const total = end + added.bytes.length;
    if (this.size + n + 1 > this.offsets.length) {
      const next = new Int32Array(Math.max(2 * this.offsets.length, this.size + n + 1));
      next.set(this.offsets.subarray(0, this.size + 1));
      this.offsets = next;
    }
    if (total > this.bytes.length) {
      const next = new Uint8Array(Math.max(2 * this.bytes.length, total));
      next.set(this.bytes.subarray(0, end));
      this.bytes = next;
    }
    for (let j = 1; j <= n; j++) this.offsets[this.size + j] = end + added.offsets[j]!;
    this.bytes.set(added.bytes, end);
    this.size += n;
  }

  view(): RawValues {
    return {
      offsets: this.offsets.subarray(0, this.size + 1),
      bytes: this.bytes.subarray(0, this.offsets[this.size]!),
    };
  }
}
