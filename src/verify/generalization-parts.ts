/**
 * Verification of a generalization release in pieces, so that no step holds the whole table:
 *
 * - each input shard (`expectShard`) regenerates its rows at the claimed node from the
 *   verifier's own hierarchy rows and sums, per class (the rows' generalized QI labels), the
 *   class's size, the fingerprint of its rows as released, and the fingerprint of the same
 *   rows masked (`*` in every QI), plus the shard's sensitive values;
 * - each output part (`summarizePart`) reads its staged Arrow file, checks its CSV against it,
 *   and sums per released class its size, its rows' fingerprint and its sensitive values;
 * - the reduce (`PiecesCheck`) compares the two sides class by class. A class released must
 *   match its input rows exactly; a class absent was suppressed, and with masking its rows'
 *   masked fingerprint must be among the `*` rows. Then the suppression limit, every model on
 *   every released class, and the claims, as the whole-table verifier checks them.
 *
 * Under (ε, δ)-differential privacy the shards hold the secret sample the scans drew: the
 * released rows are matched to the sample's, the sample is counted from the shards, and its
 * size weighed against the input's rows (src/verify/differential-privacy.ts).
 *
 * A class is named by its key: its QI labels' hashes folded in column order, 128 bits (four
 * 32-bit lanes, the first two being the QI hash of the rows' fingerprints), so both sides name
 * it alike without its labels. Each side's classes are split by key into partitions; the
 * reduce takes one partition of every slice at a time, so it never holds more than one
 * partition's classes, and a slice's memory follows its own rows.
 *
 * Suppression is checked by whole classes, as ppdp suppresses: a class with some rows
 * released and others masked fails here (the whole-table verifier matches row by row and
 * accepts it).
 *
 * Fingerprints are order-free sums of row hashes (src/verify/fingerprint.ts): the pieces
 * merge in any order and any number of shards or parts give the same outcome.
 */

import type { VerificationCheck } from '../contracts/report.ts';
import { readArrow } from '../data/arrow.ts';
import { rawStrings } from '../data/raw.ts';
import { type EncodedTable, presentCodes } from '../data/table.ts';
import { utf8Buffers } from '../data/utf8.ts';
import { VerificationError } from '../errors.ts';
import { type AttributeSpec, isReleasedType } from '../release-spec/spec.ts';
import { rowNumbers } from '../util/int32s.ts';
import { partitionOfLane } from '../util/keys.ts';
import { emptyRecord } from '../util/record.ts';
import {
  type ClassSumsKernel,
  ClassTable,
  KEY,
  PART_LANES,
  SHARD_LANES,
  type SummedClasses,
  wasmClassSums,
} from './class-sums.ts';
import { type CodedTable, fail, SEP } from './common.ts';
import { checkDpClaims, dpModelOf } from './differential-privacy.ts';
import {
  addInto,
  bytesHashes,
  dictionaryHashes,
  type Fingerprint,
  fold,
  KEY_SEED,
  QI_SEED,
  sameFingerprint,
} from './fingerprint.ts';
import type { GeneralizationClaims } from './generalization.ts';
import { attributeOf, checkClass, ModelTally, type SensitiveContext } from './models.ts';
import { checkReleaseModels, isReleaseModel, type ReleasedClass } from './population.ts';
import { asCsvCoded, type CsvTable, csvHoldsTable } from './staged-csv.ts';
import { parquetHoldsTable } from './staged-parquet.ts';

/** Input rows per partition of the classes: the reduce holds about this many rows' classes. */
export const ROWS_PER_PARTITION = 1 << 21;

/** The partitions of a release of `rows` input rows. */
export function partitionsOf(rows: number): number {
  return Math.max(1, Math.ceil(rows / ROWS_PER_PARTITION));
}

/**
 * A slice's classes, grouped by partition (partitionOfLane of key lane 2), in order of
 * first occurrence inside each: class `i` has key `keys[4i … 4i+3]` and sums `sums[lanes·i …]` (size, then the
 * fingerprint lanes); partition `p` holds classes [bounds[p], bounds[p+1]).
 */
export interface ClassEntries {
  readonly lanes: number;
  readonly keys: Uint32Array;
  readonly sums: Uint32Array;
  readonly bounds: Uint32Array;
  /** Per sensitive attribute of the part (none for a shard): (class, value, count) triples by class. */
  readonly cells: readonly Uint32Array[];
}

/** What one input shard must be released as: its facts (small, JSON) and its classes. */
export interface ShardFacts {
  readonly rows: number;
  /** Input cells whose QI value the hierarchy does not hold. */
  readonly unmapped: number;
  /** Per sensitive attribute a model names: its input values' counts. */
  readonly sensitive: Record<string, Record<string, number>>;
}
export interface ShardExpectation extends ShardFacts {
  readonly classes: ClassEntries;
}

/** What one output part holds: its facts (small, JSON) and its classes. */
export interface PartFacts {
  readonly rows: number;
  readonly names: string[];
  /** Whether the part's CSV holds exactly its Arrow file's rows. */
  readonly filesAgree: boolean;
  /** Whether the part's Parquet file holds exactly its Arrow file's rows (when it has one). */
  readonly parquetAgrees?: boolean;
  /** The sensitive attributes a model names that the part holds, in the order of its cells. */
  readonly attributes: string[];
  /** Per attribute, its values as the cells index them. */
  readonly values: string[][];
}
export interface PartSummary extends PartFacts {
  readonly classes: ClassEntries;
}

const MASK = '*';

/**
 * One input shard's expectation. `hierarchyRows` holds each QI's rows `[value, level1, …]`
 * over the whole input's values (the shard's codes index the last shard's dictionaries, of
 * which each shard's are a prefix).
 */
export function expectShard(args: {
  shard: EncodedTable;
  attributes: readonly AttributeSpec[];
  hierarchyRows: ReadonlyMap<string, string[][]>;
  node: Readonly<Record<string, number>>;
  sensitive: readonly string[];
  partitions: number;
  /** The class sums' implementation (the WASM kernel unless a test names the reference). */
  classSums?: ClassSumsKernel;
  /**
   * The rows' hashes of columns held as bytes, hashed beside the search (`shardBytesHashes`),
   * by name: each stands for its column, which `shard` then lists without rows.
   */
  bytesHashed?: ReadonlyMap<string, Int32Array>;
}): ShardExpectation {
  const { shard, attributes, hierarchyRows, node } = args;
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const columns = shard.columns.filter((c) => isReleasedType(typeOf.get(c.name)));
  const hashed = columns.map((c) => args.bytesHashed?.get(c.name));
  hashed.forEach((h, c) => {
    if (h && h.length !== 2 * shard.rowCount)
      throw new RangeError(
        `column ${columns[c]!.name}: ${h.length / 2} rows hashed, the shard has ${shard.rowCount}`,
      );
  });
  const isQi = columns.map((c) => typeOf.get(c.name) === 'quasi-identifying');
  const passesThrough = columns.map((c) => typeOf.get(c.name) === 'insensitive');
  const qis = columns.flatMap((_, c) => (isQi[c] ? [c] : []));
  const others = columns.flatMap((_, c) => (isQi[c] ? [] : [c]));
  // Per QI, per input code: its label's key hash (4 lanes; 0 when the hierarchy lacks the value).
  const unplaced: Uint8Array[] = [];
  const codeHashes = qis.map((c, q) => {
    const { name, dictionary } = columns[c]!;
    const level = node[name]!;
    const rows = hierarchyRows.get(name) ?? [];
    // A builder's rows are the dictionary's values in order: each code's row is its own.
    const inOrder = rows.length === dictionary.length && dictionary.every((v, code) => rows[code]![0] === v);
    const generalize = inOrder ? undefined : new Map(rows.map((row) => [row[0]!, row[level]!]));
    const labelIds = new Map<string, number>();
    const labels: string[] = [];
    unplaced[q] = new Uint8Array(dictionary.length);
    const ids = new Int32Array(dictionary.length);
    for (let code = 0; code < dictionary.length; code++) {
      const label = generalize ? generalize.get(dictionary[code]!) : rows[code]![level];
      if (label === undefined) {
        unplaced[q]![code] = 1;
        ids[code] = -1;
        continue;
      }
      let id = labelIds.get(label);
      if (id === undefined) labelIds.set(label, (id = labels.push(label) - 1));
      ids[code] = id;
    }
    const labelHashes = dictionaryHashes(c, labels, KEY);
    const out = new Int32Array(KEY * dictionary.length);
    ids.forEach((id, code) => {
      if (id >= 0) out.set(labelHashes.subarray(KEY * id, KEY * id + KEY), KEY * code);
    });
    return out;
  });
  const n = shard.rowCount;
  let rowCodes: Int32Array | undefined;
  let unmapped = 0;
  qis.forEach((c, q) => {
    const codes = columns[c]!.codes;
    for (let r = 0; r < n; r++) unmapped += unplaced[q]![codes[r]!]!;
  });
  const table = (args.classSums ?? wasmClassSums).sum(
    n,
    { codes: qis.map((c) => columns[c]!.codes), hashes: codeHashes },
    {
      // A column held as its rows' bytes: each row its own entry, hashed from its bytes (one
      // list of row numbers for every such column).
      codes: others.map((c) =>
        columns[c]!.raw || hashed[c] ? (rowCodes ??= rowNumbers(n)) : columns[c]!.codes,
      ),
      // Only the values the shard's rows hold: a shard carries the input's whole dictionaries,
      // as many values as rows for a column of distinct values (a free-text note).
      hashes: others.map((c) => {
        const column = columns[c]!;
        if (hashed[c]) return hashed[c];
        if (column.raw) return bytesHashes(c, column.raw);
        const present = presentCodes(column);
        return passesThrough[c]
          ? bytesHashes(c, utf8Buffers(column.dictionary), present)
          : dictionaryHashes(c, column.dictionary, 2, present);
      }),
    },
    // A masked row's QI hash: `*` in every QI.
    starKey(qis),
  );
  return {
    rows: n,
    unmapped,
    sensitive: valueCounts(shard, args.sensitive),
    classes: entriesOf(table, args.partitions, []),
  };
}

/**
 * The rows' hashes of a shard's columns held as bytes (`bytes`, those columns alone), by name,
 * each under its number among the input's released columns (`names`, in order), as
 * `expectShard` hashes them. Nothing in them waits on the search's node: they are hashed
 * beside it, and the shard's expectation reads them in place of the bytes.
 */
export function shardBytesHashes(
  names: readonly string[],
  attributes: readonly AttributeSpec[],
  bytes: EncodedTable,
): Map<string, Int32Array> {
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const released = names.filter((name) => isReleasedType(typeOf.get(name)));
  return new Map(
    bytes.columns.map((column) => {
      const c = released.indexOf(column.name);
      if (c < 0 || !column.raw)
        throw new RangeError(`column ${column.name} is not a released column held as bytes`);
      return [column.name, bytesHashes(c, column.raw)];
    }),
  );
}

/** Marks a file of a shard's bytes hashes (`PPBH`, little-endian), and its version. */
const BYTES_MAGIC = 0x48425050;

/**
 * A shard's bytes hashes as bytes (32-bit little-endian words): magic, version, rows, columns;
 * then each column's hashes (2 words a row) in `names` order.
 */
export function encodeBytesHashes(
  names: readonly string[],
  hashes: ReadonlyMap<string, Int32Array>,
  rows: number,
): Uint8Array[] {
  const columns = names.map((name) => {
    const h = hashes.get(name);
    if (h?.length !== 2 * rows) throw new RangeError(`column ${name}: not ${rows} rows' hashes`);
    return new Uint32Array(h.buffer, h.byteOffset, h.length);
  });
  return [Uint32Array.of(BYTES_MAGIC, VERSION, rows, names.length), ...columns].map(wordBytes);
}

/** A shard's bytes hashes back from their bytes, by name (`what` names the file in errors). */
export function decodeBytesHashes(
  bytes: Uint8Array,
  names: readonly string[],
  rows: number,
  what: string,
): Map<string, Int32Array> {
  // Words only of whole words: a file cut inside one is refused as the others are.
  const words =
    bytes.byteLength % 4 === 0
      ? new Int32Array(littleEndian(new Uint8Array(bytes)).buffer)
      : new Int32Array(0);
  if (
    words[0] !== BYTES_MAGIC ||
    words[1] !== VERSION ||
    words[2] !== rows ||
    words[3] !== names.length ||
    words.length !== 4 + 2 * rows * names.length
  )
    throw new VerificationError(
      'E_VERIFY',
      `${what}: not the hashes of ${rows} rows' columns ${names.join(', ')}`,
      'run the release again: a work file was changed or is from another version of ppdp',
    );
  return new Map(names.map((name, i) => [name, words.subarray(4 + 2 * rows * i, 4 + 2 * rows * (i + 1))]));
}

/** The key of the class whose labels are all `*`, over the QI columns `qis` (their numbers). */
function starKey(qis: readonly number[]): Uint32Array {
  return classKey(
    qis,
    qis.map(() => MASK),
  );
}

/** The key of the class with `labels` in the QI columns `qis` (their numbers), as rows are keyed. */
function classKey(qis: readonly number[], labels: readonly string[]): Uint32Array {
  const key = Uint32Array.of(QI_SEED[0], QI_SEED[1], KEY_SEED[0], KEY_SEED[1]);
  qis.forEach((c, i) => {
    const h = dictionaryHashes(c, [labels[i]!], KEY);
    for (let l = 0; l < KEY; l++) key[l] = fold(key[l]!, h[l]!);
  });
  return key;
}

/**
 * A slice's entries interned in the partition's table, each entry's `lanes` sums added to its
 * class's from sum `at` on: the entries' classes. (The merge's loops are functions of their own:
 * the JIT optimizes each alone, where one function of several loops ran each new one
 * unoptimized on its first calls.)
 */
function internEntries(table: ClassTable, slice: ClassEntries, lanes: number, at: number): Int32Array {
  const { keys, sums } = slice;
  const ids = new Int32Array(keys.length / KEY);
  const all = table.sums;
  for (let i = 0; i < ids.length; i++) {
    const id = table.intern(keys[KEY * i]!, keys[KEY * i + 1]!, keys[KEY * i + 2]!, keys[KEY * i + 3]!);
    ids[i] = id;
    const to = table.lanes * id + at;
    for (let l = 0; l < lanes; l++) all[to + l] = all[to + l]! + sums[lanes * i + l]!;
  }
  return ids;
}

/** Per class, its parts' entries as (part, entry) pairs in a run of `byClass`: class c's from `first[c]` on. */
function entriesByClass(
  classes: number,
  classOf: readonly Int32Array[],
): { first: Int32Array; byClass: Int32Array } {
  const first = new Int32Array(classes + 1);
  for (const ids of classOf) for (let i = 0; i < ids.length; i++) first[ids[i]! + 1]!++;
  for (let c = 0; c < classes; c++) first[c + 1]! += first[c]!;
  const byClass = new Int32Array(2 * first[classes]!);
  const next = first.slice(0, classes);
  for (const [p, ids] of classOf.entries())
    for (let i = 0; i < ids.length; i++) {
      const at = 2 * next[ids[i]!]!++;
      byClass[at] = p;
      byClass[at + 1] = i;
    }
  return { first, byClass };
}

/** A class key as a map key. */
function keyText(keys: Uint32Array, e: number): string {
  return `${keys[KEY * e]},${keys[KEY * e + 1]},${keys[KEY * e + 2]},${keys[KEY * e + 3]}`;
}

/**
 * A table's classes grouped by partition (partitionOfLane of key lane 2; a counting sort,
 * so in order of first occurrence inside each); per sensitive column (`codes`, values
 * 0 … width - 1) the (class, value, count) triples by class.
 */
function entriesOf(
  table: SummedClasses,
  partitions: number,
  sensitive: readonly { codes: Int32Array; width: number }[],
): ClassEntries {
  const { size, lanes } = table;
  const keys = table.keys.subarray(0, KEY * size);
  const sums = table.sums.subarray(0, lanes * size);
  const classOf = table.classOf ?? new Int32Array(0);
  // One partition: the classes are in place already.
  if (partitions === 1) {
    const cells = sensitive.map((s) => cellsOf(classOf, size, undefined, s));
    return { lanes, keys, sums, bounds: Uint32Array.of(0, size), cells };
  }
  const bounds = new Uint32Array(partitions + 1);
  for (let c = 0; c < size; c++) bounds[partitionOfLane(keys[KEY * c + 2]!, partitions) + 1]!++;
  for (let p = 0; p < partitions; p++) bounds[p + 1]! += bounds[p]!;
  const next = bounds.slice(0, partitions);
  // Each class's place, then the classes copied there: read in turn, written where they go (a
  // copy's writes do not wait on each other, where moving them in place, cycle by cycle, waits
  // for a cache miss a class).
  const rank = new Int32Array(size);
  for (let c = 0; c < size; c++) rank[c] = next[partitionOfLane(keys[KEY * c + 2]!, partitions)]!++;
  const placedKeys = new Uint32Array(KEY * size);
  const placedSums = new Uint32Array(lanes * size);
  for (let c = 0; c < size; c++) {
    const at = rank[c]!;
    for (let l = 0; l < KEY; l++) placedKeys[KEY * at + l] = keys[KEY * c + l]!;
    for (let l = 0; l < lanes; l++) placedSums[lanes * at + l] = sums[lanes * c + l]!;
  }
  return {
    lanes,
    keys: placedKeys,
    sums: placedSums,
    bounds,
    cells: sensitive.map((s) => cellsOf(classOf, size, rank, s)),
  };
}

/**
 * (class, value, count) triples by class of one sensitive column: `classOf` each row's class of
 * `size`, and `rank` a class's place (none: in place).
 */
function cellsOf(
  classOf: Int32Array,
  size: number,
  rank: Int32Array | undefined,
  s: { codes: Int32Array; width: number },
): Uint32Array {
  const placeOf = (r: number) => (rank ? rank[classOf[r]!]! : classOf[r]!);
  // The rows grouped by class (a counting sort), then each class's values tallied.
  const n = classOf.length;
  const starts = new Int32Array(size + 1);
  for (let r = 0; r < n; r++) starts[placeOf(r) + 1]!++;
  for (let c = 0; c < size; c++) starts[c + 1]! += starts[c]!;
  const next = starts.slice(0, size);
  const rows = new Int32Array(n);
  for (let r = 0; r < n; r++) rows[next[placeOf(r)]!++] = r;
  const tally = new Int32Array(s.width);
  const seen: number[] = [];
  // At most a triple a row; sized so (pages beyond the triples written are never mapped).
  const out = new Uint32Array(3 * n);
  let length = 0;
  for (let c = 0; c < size; c++) {
    for (let i = starts[c]!; i < starts[c + 1]!; i++) {
      const v = s.codes[rows[i]!]!;
      if (tally[v]!++ === 0) seen.push(v);
    }
    for (const v of seen) {
      out[length++] = c;
      out[length++] = v;
      out[length++] = tally[v]!;
      tally[v] = 0;
    }
    seen.length = 0;
  }
  return out.subarray(0, length);
}

function valueCounts(table: EncodedTable, names: readonly string[]): Record<string, Record<string, number>> {
  return Object.fromEntries(
    names.map((name) => {
      const column = table.columns.find((c) => c.name === name)!;
      const counts = new Int32Array(column.dictionary.length);
      for (let r = 0; r < column.codes.length; r++) counts[column.codes[r]!]!++;
      const byValue = emptyRecord<number>();
      column.dictionary.forEach((v, i) => {
        if (counts[i]! > 0) byValue[v] = (byValue[v] ?? 0) + counts[i]!;
      });
      return [name, byValue];
    }),
  );
}

/** One output part's summary, read from its staged files (`delimiter`: the input's). */
export function summarizePart(args: {
  arrow: string;
  csv: string;
  /** The part's Parquet file, when the spec asks for one. */
  parquet?: string | undefined;
  delimiter: string;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  escapeFormulas?: boolean;
  attributes: readonly AttributeSpec[];
  sensitive: readonly string[];
  partitions: number;
  /** The class sums' implementation (the WASM kernel unless a test names the reference). */
  classSums?: ClassSumsKernel;
}): PartSummary {
  const typeOf = new Map(args.attributes.map((a) => [a.name, a.type]));
  // Columns released unchanged are read as their rows' bytes: no string a value.
  const passThrough = new Set(args.attributes.filter((a) => a.type === 'insensitive').map((a) => a.name));
  const part = readArrow(args.arrow, { raw: passThrough });
  const coded = { ...codedOf(part), raw: part.columns.map((c) => c.raw) };
  const filesAgree = csvHoldsTable(args.csv, args.delimiter, asCsvCoded(coded, args.escapeFormulas === true));
  const parquetAgrees =
    args.parquet === undefined ? undefined : parquetHoldsTable(args.parquet, decodedRaw(coded));
  const names = part.columns.map((c) => c.name);
  const qis = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [c] : []));
  const others = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [] : [c]));
  const n = part.rowCount;
  let rowCodes: Int32Array | undefined;
  // (A released dictionary may list a value twice: both codes hash alike, one class.)
  const table = (args.classSums ?? wasmClassSums).sum(
    n,
    {
      codes: qis.map((c) => part.columns[c]!.codes),
      hashes: qis.map((c) => dictionaryHashes(c, part.columns[c]!.dictionary, KEY)),
    },
    {
      // A column read as bytes: each row its own entry (one list of row numbers for every such
      // column), hashed from its bytes, as the shards hash it.
      codes: others.map((c) =>
        part.columns[c]!.raw ? (rowCodes ??= rowNumbers(n)) : part.columns[c]!.codes,
      ),
      hashes: others.map((c) => {
        const column = part.columns[c]!;
        if (column.raw) return bytesHashes(c, column.raw);
        return typeOf.get(names[c]!) === 'insensitive'
          ? bytesHashes(c, utf8Buffers(column.dictionary))
          : dictionaryHashes(c, column.dictionary);
      }),
    },
  );
  const attributes = args.sensitive.filter((name) => names.includes(name));
  const columns = attributes.map((name) => part.columns[names.indexOf(name)]!);
  return {
    rows: n,
    names,
    filesAgree,
    ...(parquetAgrees === undefined ? {} : { parquetAgrees }),
    attributes,
    values: columns.map((c) => c.dictionary),
    classes: entriesOf(
      table,
      args.partitions,
      columns.map((c) => ({ codes: c.codes, width: c.dictionary.length })),
    ),
  };
}

/** A table's raw columns as one dictionary entry a row (the Parquet check compares strings). */
function decodedRaw(table: CsvTable): CodedTable {
  const raw = table.raw ?? [];
  return {
    ...table,
    dictionaries: table.dictionaries.map((d, c) => (raw[c] ? rawStrings(raw[c]) : d)),
    codes: table.codes.map((codes, c) => (raw[c] ? rowNumbers(table.rowCount) : codes)),
  };
}

function codedOf(table: EncodedTable) {
  return {
    names: table.columns.map((c) => c.name),
    rowCount: table.rowCount,
    dictionaries: table.columns.map((c) => c.dictionary),
    codes: table.columns.map((c) => c.codes),
  };
}

/** Marks a slice's partition file (`PPVC`, little-endian), and its version. */
const MAGIC = 0x43565050;
const VERSION = 1;

/**
 * Partition `p` of a slice's classes as bytes (32-bit little-endian words): magic, version,
 * lanes, classes n, attributes A, the A cell counts; then the n keys, the n sums, and per
 * attribute its triples, whose class numbers count from the partition's first class.
 */
export function encodePartition(entries: ClassEntries, p: number): Uint8Array {
  const chunks = partitionChunks(entries, p);
  const bytes = new Uint8Array(chunks.reduce((n, c) => n + c.length, 0));
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.length;
  }
  return bytes;
}

/**
 * The bytes of partition `p` (as `encodePartition`) in pieces, to be written one after the
 * other: on a little-endian host they are views of the classes themselves, not a copy (but for
 * the cells of a partition after the first, whose class numbers are rebased).
 */
export function partitionChunks(entries: ClassEntries, p: number): Uint8Array[] {
  const from = entries.bounds[p]!;
  const to = entries.bounds[p + 1]!;
  const cells = entries.cells.map((triples) => {
    const inside = triples.subarray(firstTriple(triples, from), firstTriple(triples, to));
    if (from === 0) return inside;
    const out = inside.slice();
    for (let i = 0; i < out.length; i += 3) out[i]! -= from;
    return out;
  });
  const head = Uint32Array.of(
    MAGIC,
    VERSION,
    entries.lanes,
    to - from,
    cells.length,
    ...cells.map((c) => c.length / 3),
  );
  return [
    head,
    entries.keys.subarray(KEY * from, KEY * to),
    entries.sums.subarray(entries.lanes * from, entries.lanes * to),
    ...cells,
  ].map(wordBytes);
}

/** Words as little-endian bytes: a view on a little-endian host, else a swapped copy. */
function wordBytes(words: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  return LITTLE_ENDIAN ? bytes : littleEndian(bytes.slice());
}

/** The first triple whose class is at least `c` (triples are sorted by class). */
function firstTriple(triples: Uint32Array, c: number): number {
  let lo = 0;
  let hi = triples.length / 3;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (triples[3 * mid]! < c) lo = mid + 1;
    else hi = mid;
  }
  return 3 * lo;
}

/** One partition of a slice back from its bytes (`what` names the file in errors). */
export function decodePartition(bytes: Uint8Array, what: string): ClassEntries {
  const bad = (why: string) =>
    new VerificationError(
      'E_VERIFY',
      `${what}: not a verification slice's partition (${why})`,
      'run the release again: a work file was changed or is from another version of ppdp',
    );
  if (bytes.byteLength % 4 !== 0 || bytes.byteLength < 20) throw bad('its length');
  // A copy (a Buffer's `slice` would share its pool), aligned for the words.
  const words = new Uint32Array(littleEndian(new Uint8Array(bytes)).buffer);
  const [magic, version, lanes = 0, n = 0, attributes = 0] = words;
  if (magic !== MAGIC || version !== VERSION) throw bad('its header');
  const counts = words.subarray(5, 5 + attributes);
  const size = 5 + attributes + (KEY + lanes) * n + 3 * counts.reduce((s, m) => s + m, 0);
  if (lanes < 1 || words.length !== size) throw bad('its length');
  let at = 5 + attributes;
  const take = (length: number) => words.subarray(at, (at += length));
  const keys = take(KEY * n);
  const sums = take(lanes * n);
  const cells = Array.from(counts, (m) => take(3 * m));
  if (cells.some((c) => c.some((x, i) => i % 3 === 0 && x >= n))) throw bad('a class out of range');
  return { lanes, keys, sums, bounds: Uint32Array.of(0, n), cells };
}

const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

/** Bytes as little-endian words, on any host (a copy is swapped in place on a big-endian one). */
function littleEndian(bytes: Uint8Array): Uint8Array {
  if (LITTLE_ENDIAN) return bytes;
  for (let i = 0; i < bytes.length; i += 4) bytes.subarray(i, i + 4).reverse();
  return bytes;
}

/** One partition of every slice. */
export interface Partition {
  readonly shards: readonly ClassEntries[];
  readonly parts: readonly ClassEntries[];
}

/** Partition `p` of a slice's classes on its own, as Verify reads it back. */
export function partitionOf(entries: ClassEntries, p: number): ClassEntries {
  return decodePartition(encodePartition(entries, p), `partition ${p}`);
}

/**
 * The reduce: the shards' expectations against the parts' summaries, one partition at a time
 * (`add`), then the checks (`finish`). `names` are the released columns, `sensitive` each
 * model's attribute with the input's shares (merged from the shards) and hierarchy rows.
 * `finish` throws VerificationError listing the failed checks; it returns all checks.
 */
export class PiecesCheck {
  private readonly checks: VerificationCheck[] = [];
  private readonly namesOk: boolean;
  private readonly star: Uint32Array;
  private readonly mask: boolean;
  private readonly tally: ModelTally;
  /** The models checked class by class; the release-wide ones (population, average risk) at the end. */
  private readonly models: GeneralizationClaims['privacy'];
  /** The population's records per class key, when a model names a population. */
  private readonly population: Map<string, number> | undefined;
  /** Every released class, kept only when a release-wide model needs them all. */
  private readonly released: ReleasedClass[] | undefined;
  /** Per part, per model's attribute: its index among the part's attributes (-1: none). */
  private readonly attributeAt: number[][];
  private readonly attributes: (string | undefined)[];
  private mismatched = 0;
  private suppressed = 0;
  private classes = 0;
  private minSize = Number.POSITIVE_INFINITY;
  private readonly starExpected = { n: 0, f: [0, 0] as Fingerprint };
  private starClass: { n: number; f: Fingerprint } | undefined;
  private starReleased = { n: 0, f: [0, 0] as Fingerprint };
  private starCounts: Map<string, number>[] = [];

  constructor(
    private readonly args: {
      names: readonly string[];
      attributes: readonly AttributeSpec[];
      shards: readonly ShardFacts[];
      parts: readonly PartFacts[];
      claims: GeneralizationClaims;
      sensitive: ReadonlyMap<string, SensitiveContext>;
      /** The population's records per class (QI labels in released order joined by SEP). */
      population?: ReadonlyMap<string, number> | undefined;
      /** Whether the spec asks for Parquet files: each part's must hold its Arrow file's rows. */
      parquet?: boolean;
      /**
       * The input's rows when the shards hold a secret sample of them ((ε, δ)-differential
       * privacy): the shards' rows are the sample, weighed against these.
       */
      inputRows?: number;
    },
  ) {
    const { parts, claims } = args;
    const add = (name: string, passed: boolean, detail: string) => this.checks.push({ name, passed, detail });
    /** Every part's `kind` file holds its Arrow file's rows: one check, `failing` parts not. */
    const agreeWithArrow = (name: string, kind: string, file: string, failing: number, how: string) =>
      add(
        name,
        failing === 0,
        failing === 0
          ? parts.length === 1
            ? `${file} and data.arrow hold the same rows`
            : `each of the ${parts.length} parts' ${kind} and Arrow files hold the same rows`
          : `${failing} of ${parts.length} parts' ${kind} and Arrow files ${how}`,
      );
    agreeWithArrow(
      'csv-equals-arrow',
      'CSV',
      'data.csv',
      parts.filter((p) => !p.filesAgree).length,
      'differ',
    );
    if (args.parquet) {
      const failing = parts.filter((p) => p.parquetAgrees !== true).length;
      agreeWithArrow('parquet-equals-arrow', 'Parquet', 'data.parquet', failing, 'differ or are missing');
    }
    const same = (p: PartFacts) =>
      p.names.length === args.names.length && p.names.every((n, i) => n === args.names[i]);
    this.namesOk = parts.every(same);
    add(
      'columns',
      this.namesOk,
      this.namesOk
        ? 'identifying columns dropped, all others released'
        : `released columns: ${parts.find((p) => !same(p))!.names.join(', ')}`,
    );
    const typeOf = new Map(args.attributes.map((a) => [a.name, a.type]));
    const qis = args.names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [c] : []));
    this.star = starKey(qis);
    this.mask = claims.suppressed === 'mask';
    this.models = claims.privacy.filter((model) => !isReleaseModel(model));
    this.released = this.models.length < claims.privacy.length ? [] : undefined;
    this.population =
      args.population &&
      new Map([...args.population].map(([labels, n]) => [keyText(classKey(qis, labels.split(SEP)), 0), n]));
    this.tally = new ModelTally(this.models);
    this.attributes = this.models.map(attributeOf);
    this.attributeAt = parts.map((p) =>
      this.attributes.map((a) => (a === undefined ? -1 : p.attributes.indexOf(a))),
    );
  }

  /** One partition: every shard's and every part's classes in it, in the order of the facts. */
  add({ shards, parts }: Partition): void {
    if (!this.namesOk) return;
    if (shards.length !== this.args.shards.length || parts.length !== this.args.parts.length)
      throw new RangeError('a partition must hold every slice');
    if (shards.some((s) => s.lanes !== SHARD_LANES) || parts.some((p) => p.lanes !== PART_LANES))
      throw new VerificationError(
        'E_VERIFY',
        'verification slices of the wrong kind',
        'run the release again: a work file was changed',
      );
    // Per class of the partition: the shards' size and fingerprints, then the parts'.
    const R = SHARD_LANES;
    const entries = [...shards, ...parts].reduce((n, s) => n + s.keys.length / KEY, 0);
    const table = new ClassTable(SHARD_LANES + PART_LANES, entries);
    for (const s of shards) internEntries(table, s, SHARD_LANES, 0);
    const classOf = parts.map((p) => internEntries(table, p, PART_LANES, R));
    // Per class, its parts' entries (part, entry) in a run of `byClass` (a counting sort).
    const { first, byClass } = entriesByClass(table.size, classOf);
    // Per part, per attribute: where each class's cells start.
    const cellStarts = parts.map((p) => p.cells.map((triples) => starts(triples, p.keys.length / KEY)));
    const sums = table.sums;
    for (let c = 0; c < table.size; c++) {
      const at = table.lanes * c;
      const expected = { n: sums[at]!, f: [sums[at + 1]!, sums[at + 2]!] as Fingerprint };
      const masked: Fingerprint = [sums[at + 3]!, sums[at + 4]!];
      const released = { n: sums[at + R]!, f: [sums[at + R + 1]!, sums[at + R + 2]!] as Fingerprint };
      // Every entry holds a row: a side with none has no entry of the class.
      const hasExpected = expected.n > 0;
      const hasReleased = released.n > 0;
      const run = byClass.subarray(2 * first[c]!, 2 * first[c + 1]!);
      const counts = () => this.counts(run, parts, cellStarts);
      if (this.isStar(table.keys, c)) {
        if (hasExpected) this.starClass = expected;
        if (hasReleased) {
          this.starReleased = released;
          this.starCounts = counts();
        }
        continue;
      }
      // Classes released whole match their input rows; classes absent were suppressed.
      if (hasExpected && !hasReleased) {
        this.suppressed += expected.n;
        if (this.mask) {
          this.starExpected.n += expected.n;
          addInto(this.starExpected.f, masked[0], masked[1]);
        }
      } else if (hasExpected && (released.n !== expected.n || !sameFingerprint(released.f, expected.f)))
        this.mismatched += Math.max(released.n, 1);
      else if (!hasExpected) this.mismatched += released.n;
      if (hasReleased) this.checkModels(released.n, counts(), table.keys, c);
    }
  }

  /** Whether entry `e` of `keys` is the `*` class's. */
  private isStar(keys: Uint32Array, e: number): boolean {
    for (let l = 0; l < KEY; l++) if (keys[KEY * e + l] !== this.star[l]) return false;
    return true;
  }

  /** Per model, the released class's sensitive counts (its entries `run`: part, class pairs). */
  private counts(
    run: Int32Array,
    parts: readonly ClassEntries[],
    cellStarts: readonly (readonly Uint32Array[])[],
  ): Map<string, number>[] {
    return this.attributes.map((attribute, m) => {
      const counts = new Map<string, number>();
      if (attribute === undefined) return counts;
      for (let j = 0; j < run.length; j += 2) {
        const p = run[j]!;
        const a = this.attributeAt[p]![m]!;
        if (a < 0) continue;
        const triples = parts[p]!.cells[a]!;
        const values = this.args.parts[p]!.values[a]!;
        const bounds = cellStarts[p]![a]!;
        for (let t = bounds[run[j + 1]!]!; t < bounds[run[j + 1]! + 1]!; t += 3) {
          const value = values[triples[t + 1]!]!;
          counts.set(value, (counts.get(value) ?? 0) + triples[t + 2]!);
        }
      }
      return counts;
    });
  }

  /** Every model on one released class. */
  /** A released class's checks (its key, entry `c` of `keys`, kept when a release-wide model needs it). */
  private checkModels(
    size: number,
    counts: readonly Map<string, number>[],
    keys: Uint32Array,
    c: number,
  ): void {
    this.classes++;
    this.minSize = Math.min(this.minSize, size);
    this.released?.push({ key: keyText(keys, c), size });
    this.models.forEach((model, m) => {
      const attribute = this.attributes[m];
      if (attribute === undefined) this.tally.record(m, checkClass(model, size, undefined, undefined));
      else if (this.args.sensitive.has(attribute))
        this.tally.record(m, checkClass(model, size, counts[m]!, this.args.sensitive.get(attribute)));
    });
  }

  finish(): VerificationCheck[] {
    const { checks, mask } = this;
    const { shards, parts, claims } = this.args;
    if (!this.namesOk) return fail(checks);
    const add = (name: string, passed: boolean, detail: string) => checks.push({ name, passed, detail });
    const inputRows = shards.reduce((n, s) => n + s.rows, 0);
    const unmapped = shards.reduce((n, s) => n + s.unmapped, 0);
    const releasedRows = parts.reduce((n, p) => n + p.rows, 0);
    // The `*` rows: the class whose labels are all `*` (at the top of every hierarchy), and masked rows.
    const { starClass, starReleased, starExpected } = this;
    let starClassReleased = false;
    if (starClass && !mask && starReleased.n === 0) this.suppressed += starClass.n;
    else if (starClass) {
      starExpected.n += starClass.n;
      addInto(starExpected.f, starClass.f[0], starClass.f[1]);
      starClassReleased = true;
    }
    if (starReleased.n !== starExpected.n || !sameFingerprint(starReleased.f, starExpected.f))
      this.mismatched += Math.max(starReleased.n, 1);
    // As the whole-table verifier counts them: every input row not released as a class row.
    const maskedRows = starReleased.n - (starClassReleased ? starClass!.n : 0);
    const suppressed = Math.max(this.suppressed, inputRows - (releasedRows - maskedRows));
    const rowsOk = unmapped === 0 && this.mismatched === 0 && (mask ? releasedRows === inputRows : true);
    add(
      'rows-generalize-input',
      rowsOk,
      rowsOk
        ? `every released row is an input row generalized at the reported node (${inputRows - suppressed} retained)`
        : `${this.mismatched} released rows match no input row at the node; ${unmapped} input cells outside the hierarchies`,
    );
    const supOk = suppressed === claims.suppressedRows && suppressed <= claims.maxSuppressedRows;
    add(
      'suppression',
      supOk,
      `${suppressed} rows suppressed (claimed ${claims.suppressedRows}, limit ${claims.maxSuppressedRows})`,
    );
    // A secret sample: the shards hold it, so the sample is counted here and the rows not
    // released are the input's less the released ones (the sample's accounting, one task's).
    const dp = dpModelOf(claims.privacy);
    if (dp) {
      const read = this.args.inputRows ?? inputRows;
      checkDpClaims(dp, claims, read, read - (releasedRows - maskedRows), add, inputRows);
    }
    // Every model on every released class (masked rows are no class).
    if (starClassReleased) this.checkModels(starClass!.n, this.starCounts, this.star, 0);
    if (this.released) checkReleaseModels(claims.privacy, this.released, this.population, inputRows, add);
    this.tally.add(this.classes, (attribute) => this.args.sensitive.has(attribute), add);
    const minSize = this.classes === 0 ? 0 : this.minSize;
    const claimOk = this.classes === claims.classes && minSize === claims.minClassSize;
    add(
      'reported-classes',
      claimOk,
      `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${this.classes}, smallest ${minSize}`,
    );
    return checks.every((c) => c.passed) ? checks : fail(checks);
  }
}

/** Where each of `n` classes' triples start (n + 1 offsets; triples sorted by class). */
function starts(triples: Uint32Array, n: number): Uint32Array {
  const out = new Uint32Array(n + 1);
  for (let t = 0; t < triples.length; t += 3) out[triples[t]! + 1]! += 3;
  for (let c = 0; c < n; c++) out[c + 1]! += out[c]!;
  return out;
}

/** The reduce over slices held whole: each partition in turn. */
export function checkPieces(
  args: Omit<ConstructorParameters<typeof PiecesCheck>[0], 'shards' | 'parts'> & {
    shards: readonly ShardExpectation[];
    parts: readonly PartSummary[];
  },
): VerificationCheck[] {
  return checkWhole(new PiecesCheck(args), args.shards, args.parts);
}

/** Feeds `check` every partition of slices held whole, then finishes it. */
export function checkWhole(
  check: PiecesCheck,
  shards: readonly ShardExpectation[],
  parts: readonly PartSummary[],
): VerificationCheck[] {
  const partitions = shards[0]!.classes.bounds.length - 1;
  if ([...shards, ...parts].some((s) => s.classes.bounds.length !== partitions + 1))
    throw new RangeError('every slice must be split into the same partitions');
  for (let p = 0; p < partitions; p++)
    check.add({
      shards: shards.map((s) => partitionOf(s.classes, p)),
      parts: parts.map((s) => partitionOf(s.classes, p)),
    });
  return check.finish();
}
