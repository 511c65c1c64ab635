/**
 * Verification of a generalization release in pieces, so that no step holds the whole table:
 *
 * - each input shard (`expectShard`) regenerates its rows at the claimed node from the
 *   verifier's own hierarchy rows and sums, per class (the rows' generalized QI labels), the
 *   class's size, the fingerprint of its rows as released, and the fingerprint of the same
 *   rows masked (`*` in every QI), plus the shard's sensitive values;
 * - each output part (`summarizePart`) reads its staged Arrow file, checks its CSV against it,
 *   and sums per released class its size, its rows' fingerprint and its sensitive values;
 * - the reduce (`checkPieces`) compares the two sides class by class. A class released must
 *   match its input rows exactly; a class absent was suppressed, and with masking its rows'
 *   masked fingerprint must be among the `*` rows. Then the suppression limit, every model on
 *   every released class, and the claims, as the whole-table verifier checks them.
 *
 * Suppression is checked by whole classes, as ppdp suppresses: a class with some rows
 * released and others masked fails here (the whole-table verifier matches row by row and
 * accepts it).
 *
 * Fingerprints are order-free sums of row hashes (src/verify/fingerprint.ts): the pieces
 * merge in any order and any number of shards or parts give the same outcome.
 */
import { readArrow } from '../data/arrow.ts';
import type { EncodedTable } from '../data/table.ts';
import type { VerificationCheck } from '../report/types.ts';
import type { AttributeSpec } from '../spec/spec.ts';
import { fail, releasedNames, SEP } from './common.ts';
import {
  addInto,
  dictionaryHashes,
  type Fingerprint,
  fold,
  join,
  OTHER_SEED,
  QI_SEED,
  sameFingerprint,
  valueHash,
} from './fingerprint.ts';
import type { GeneralizationClaims } from './generalization.ts';
import { attributeOf, checkClass, ModelTally, type SensitiveContext } from './models.ts';
import { checkReleaseModels, isReleaseModel } from './population.ts';
import { asCsvCoded, csvHoldsTable } from './staged-csv.ts';
import { grown, TupleCounts } from './tuples.ts';

/**
 * What one input shard must be released as, per class (`keys[i]`, its QI labels joined):
 * `classes[5i … 5i+4]` = size, the rows' fingerprint as released (2 lanes), and masked (2 lanes).
 */
export interface ShardExpectation {
  readonly rows: number;
  /** Input cells whose QI value the hierarchy does not hold. */
  readonly unmapped: number;
  readonly keys: string[];
  readonly classes: number[];
  /** Per sensitive attribute a model names: its input values' counts. */
  readonly sensitive: Record<string, Record<string, number>>;
}

/**
 * What one output part holds, per class (`keys[i]`): `classes[3i … 3i+2]` = size and the
 * rows' fingerprint; per sensitive attribute a model names, its values and the triples
 * (class index, value index, count) of `cells`.
 */
export interface PartSummary {
  readonly rows: number;
  readonly names: string[];
  /** Whether the part's CSV holds exactly its Arrow file's rows. */
  readonly filesAgree: boolean;
  readonly keys: string[];
  readonly classes: number[];
  readonly sensitive: Record<string, { readonly values: string[]; readonly cells: number[] }>;
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
}): ShardExpectation {
  const { shard, attributes, hierarchyRows, node } = args;
  const names = releasedNames(shard, attributes);
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const columns = names.map((n) => shard.columns.find((c) => c.name === n)!);
  const qis = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [c] : []));
  // Per QI: input code → label id (-1 when the hierarchy lacks the value), and the labels.
  const labels: string[][] = [];
  const labelOf = qis.map((c, q) => {
    const name = names[c]!;
    const level = node[name]!;
    const generalize = new Map((hierarchyRows.get(name) ?? []).map((row) => [row[0]!, row[level]!]));
    const ids = new Map<string, number>();
    labels[q] = [];
    return Int32Array.from(columns[c]!.dictionary, (v) => {
      const label = generalize.get(v);
      if (label === undefined) return -1;
      let id = ids.get(label);
      if (id === undefined) ids.set(label, (id = labels[q]!.push(label) - 1));
      return id;
    });
  });
  // Value hashes: QIs by label, the others by value.
  const isQi = names.map((_, c) => qis.includes(c));
  const others = names.flatMap((_, c) => (isQi[c] ? [] : [c]));
  const labelHashes = qis.map((c, q) => dictionaryHashes(c, labels[q]!));
  const otherHashes = others.map((c) => dictionaryHashes(c, columns[c]!.dictionary));
  const otherCodes = others.map((c) => columns[c]!.codes);
  const qiCodes = qis.map((c) => columns[c]!.codes);
  // A masked row's QI hash: `*` in every QI.
  let mask0 = QI_SEED[0];
  let mask1 = QI_SEED[1];
  for (const c of qis) {
    const [a, b] = valueHash(c, MASK);
    mask0 = fold(mask0, a);
    mask1 = fold(mask1, b);
  }
  const classes = new ClassSums(
    labels.map((l) => l.length + 2),
    (q, l, lane) => (l < 0 ? 0 : labelHashes[q]![2 * l + lane]!),
    [mask0, mask1],
  );
  const tuple = new Int32Array(qis.length);
  let unmapped = 0;
  for (let r = 0; r < shard.rowCount; r++) {
    for (let q = 0; q < qis.length; q++) {
      const id = labelOf[q]![qiCodes[q]![r]!]!;
      if (id < 0) unmapped++;
      tuple[q] = id;
    }
    let o0 = OTHER_SEED[0];
    let o1 = OTHER_SEED[1];
    for (let k = 0; k < others.length; k++) {
      const code = otherCodes[k]![r]!;
      o0 = fold(o0, otherHashes[k]![2 * code]!);
      o1 = fold(o1, otherHashes[k]![2 * code + 1]!);
    }
    classes.add(tuple, o0, o1);
  }
  return {
    rows: shard.rowCount,
    unmapped,
    keys: classes.tuples.map((t) => t.map((l, q) => (l < 0 ? '\u0001unmapped' : labels[q]![l]!)).join(SEP)),
    classes: classes.flat(),
    sensitive: valueCounts(shard, args.sensitive),
  };
}

/**
 * Classes (QI tuples) with, per class, its size and its rows' fingerprint (2 lanes), and
 * with a mask's QI hash, the fingerprint of the same rows masked (2 more lanes). A class's QI
 * hash is computed once, when it first occurs; each row brings the hash of its other cells.
 */
class ClassSums {
  private readonly classes: TupleCounts;
  readonly tuples: number[][] = [];
  private readonly lanes: number;
  private qiHash = new Int32Array(2 * 1024);
  private sums: Float64Array;

  constructor(
    radices: readonly number[],
    /** The hash of value `v` of QI `q`, one lane. */
    private readonly hashOf: (q: number, v: number, lane: number) => number,
    private readonly mask?: Fingerprint,
  ) {
    this.classes = new TupleCounts(radices.length, radices);
    this.lanes = mask ? 5 : 3;
    this.sums = new Float64Array(this.lanes * 1024);
  }

  /** Adds a row of class `tuple` whose other cells hash to (o0, o1); returns its class id. */
  add(tuple: Int32Array, o0: number, o1: number): number {
    const known = this.classes.size;
    const id = this.classes.intern(tuple);
    if (id === known) {
      this.tuples.push(Array.from(tuple));
      if (2 * id + 2 > this.qiHash.length) {
        this.qiHash = grown(this.qiHash, 2 * this.qiHash.length);
        this.sums = grown(this.sums, 2 * this.sums.length);
      }
      let h0 = QI_SEED[0];
      let h1 = QI_SEED[1];
      for (let q = 0; q < tuple.length; q++) {
        h0 = fold(h0, this.hashOf(q, tuple[q]!, 0));
        h1 = fold(h1, this.hashOf(q, tuple[q]!, 1));
      }
      this.qiHash[2 * id] = h0;
      this.qiHash[2 * id + 1] = h1;
    }
    const sums = this.sums;
    const at = this.lanes * id;
    sums[at]!++;
    sums[at + 1] = (sums[at + 1]! + join(this.qiHash[2 * id]!, o0, 0)) % 2 ** 32;
    sums[at + 2] = (sums[at + 2]! + join(this.qiHash[2 * id + 1]!, o1, 1)) % 2 ** 32;
    if (this.mask) {
      sums[at + 3] = (sums[at + 3]! + join(this.mask[0], o0, 0)) % 2 ** 32;
      sums[at + 4] = (sums[at + 4]! + join(this.mask[1], o1, 1)) % 2 ** 32;
    }
    return id;
  }

  get size(): number {
    return this.classes.size;
  }

  /** Per class in order of first occurrence: size, then the fingerprint lanes. */
  flat(): number[] {
    return Array.from(this.sums.subarray(0, this.lanes * this.tuples.length), (x) => x >>> 0);
  }
}

function valueCounts(table: EncodedTable, names: readonly string[]): Record<string, Record<string, number>> {
  return Object.fromEntries(
    names.map((name) => {
      const column = table.columns.find((c) => c.name === name)!;
      const counts = new Int32Array(column.dictionary.length);
      for (let r = 0; r < column.codes.length; r++) counts[column.codes[r]!]!++;
      const byValue: Record<string, number> = {};
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
  delimiter: string;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  escapeFormulas?: boolean;
  attributes: readonly AttributeSpec[];
  sensitive: readonly string[];
}): PartSummary {
  const part = readArrow(args.arrow);
  const filesAgree = csvHoldsTable(
    args.csv,
    args.delimiter,
    asCsvCoded(codedOf(part), args.escapeFormulas === true),
  );
  const names = part.columns.map((c) => c.name);
  const typeOf = new Map(args.attributes.map((a) => [a.name, a.type]));
  const qis = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [c] : []));
  const others = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [] : [c]));
  const hashes = part.columns.map((c, i) => dictionaryHashes(i, c.dictionary));
  const codes = part.columns.map((c) => c.codes);
  const classes = new ClassSums(
    qis.map((c) => part.columns[c]!.dictionary.length + 2),
    (q, v, lane) => hashes[qis[q]!]![2 * v + lane]!,
  );
  const classOf = new Int32Array(part.rowCount);
  const tuple = new Int32Array(qis.length);
  for (let j = 0; j < part.rowCount; j++) {
    for (let q = 0; q < qis.length; q++) tuple[q] = codes[qis[q]!]![j]!;
    let o0 = OTHER_SEED[0];
    let o1 = OTHER_SEED[1];
    for (let k = 0; k < others.length; k++) {
      const c = others[k]!;
      const code = codes[c]![j]!;
      o0 = fold(o0, hashes[c]![2 * code]!);
      o1 = fold(o1, hashes[c]![2 * code + 1]!);
    }
    classOf[j] = classes.add(tuple, o0, o1);
  }
  // (A released dictionary may list a value twice: its codes are then two ids of one class,
  // merged by key in the reduce.)
  const keys = classes.tuples.map((t) =>
    t.map((code, q) => part.columns[qis[q]!]!.dictionary[code]!).join(SEP),
  );
  const sensitive: PartSummary['sensitive'] = {};
  for (const name of args.sensitive) {
    const c = names.indexOf(name);
    if (c < 0) continue;
    // Counted by (class, code), densely when that is small.
    const width = part.columns[c]!.dictionary.length;
    const column = codes[c]!;
    const pairs = new Map<number, number>();
    if (classes.size * width <= 1 << 24) {
      const counts = new Int32Array(classes.size * width);
      for (let j = 0; j < part.rowCount; j++) counts[classOf[j]! * width + column[j]!]!++;
      for (let at = 0; at < counts.length; at++) if (counts[at]! > 0) pairs.set(at, counts[at]!);
    } else
      for (let j = 0; j < part.rowCount; j++) {
        const at = classOf[j]! * width + column[j]!;
        pairs.set(at, (pairs.get(at) ?? 0) + 1);
      }
    const cells: number[] = [];
    for (const [at, n] of pairs) cells.push(Math.floor(at / width), at % width, n);
    sensitive[name] = { values: part.columns[c]!.dictionary, cells };
  }
  return { rows: part.rowCount, names, filesAgree, keys, classes: classes.flat(), sensitive };
}

function codedOf(table: EncodedTable) {
  return {
    names: table.columns.map((c) => c.name),
    rowCount: table.rowCount,
    dictionaries: table.columns.map((c) => c.dictionary),
    codes: table.columns.map((c) => c.codes),
  };
}

/**
 * The reduce: the shards' expectations against the parts' summaries. `names` are the released
 * columns, `sensitive` each model's attribute with the input's shares (merged from the shards)
 * and hierarchy rows. Throws VerificationError listing the failed checks; returns all checks.
 */
export function checkPieces(args: {
  names: readonly string[];
  attributes: readonly AttributeSpec[];
  shards: readonly ShardExpectation[];
  parts: readonly PartSummary[];
  claims: GeneralizationClaims;
  sensitive: ReadonlyMap<string, SensitiveContext>;
  /** The population's records per class key (src/verify/population.ts), when a model names one. */
  population?: ReadonlyMap<string, number> | undefined;
}): VerificationCheck[] {
  const { shards, parts, claims } = args;
  const checks: VerificationCheck[] = [];
  const add = (name: string, passed: boolean, detail: string) => checks.push({ name, passed, detail });
  const differ = parts.filter((p) => !p.filesAgree).length;
  add(
    'csv-equals-arrow',
    differ === 0,
    differ === 0
      ? parts.length === 1
        ? 'data.csv and data.arrow hold the same rows'
        : `each of the ${parts.length} parts' CSV and Arrow files hold the same rows`
      : `${differ} of ${parts.length} parts' CSV and Arrow files differ`,
  );
  const namesOk = parts.every((p) => p.names.join(SEP) === args.names.join(SEP));
  add(
    'columns',
    namesOk,
    namesOk
      ? 'identifying columns dropped, all others released'
      : `released columns: ${parts.find((p) => p.names.join(SEP) !== args.names.join(SEP))!.names.join(', ')}`,
  );
  if (!namesOk) return fail(checks);

  const expected = new Map<string, { n: number; f: Fingerprint; g: Fingerprint }>();
  let inputRows = 0;
  let unmapped = 0;
  for (const s of shards) {
    inputRows += s.rows;
    unmapped += s.unmapped;
    s.keys.forEach((key, i) => {
      let e = expected.get(key);
      if (!e) expected.set(key, (e = { n: 0, f: [0, 0], g: [0, 0] }));
      const at = 5 * i;
      e.n += s.classes[at]!;
      addInto(e.f, s.classes[at + 1]!, s.classes[at + 2]!);
      addInto(e.g, s.classes[at + 3]!, s.classes[at + 4]!);
    });
  }
  const released = new Map<string, { n: number; f: Fingerprint }>();
  let releasedRows = 0;
  for (const p of parts) {
    releasedRows += p.rows;
    p.keys.forEach((key, i) => {
      let r = released.get(key);
      if (!r) released.set(key, (r = { n: 0, f: [0, 0] }));
      r.n += p.classes[3 * i]!;
      addInto(r.f, p.classes[3 * i + 1]!, p.classes[3 * i + 2]!);
    });
  }
  const qiCount = args.names.filter(
    (n) => args.attributes.find((a) => a.name === n)?.type === 'quasi-identifying',
  ).length;
  const star = Array.from({ length: qiCount }, () => MASK).join(SEP);
  const mask = claims.suppressed === 'mask';
  // Classes released whole match their input rows; classes absent were suppressed.
  let mismatched = 0;
  let suppressed = 0;
  const starExpected = { n: 0, f: [0, 0] as Fingerprint };
  for (const [key, e] of expected) {
    if (key === star) continue;
    const r = released.get(key);
    if (!r) {
      suppressed += e.n;
      if (mask) {
        starExpected.n += e.n;
        addInto(starExpected.f, e.g[0], e.g[1]);
      }
    } else if (r.n !== e.n || !sameFingerprint(r.f, e.f)) mismatched += Math.max(r.n, 1);
  }
  for (const [key, r] of released) if (key !== star && !expected.has(key)) mismatched += r.n;
  // The `*` rows: the class whose labels are all `*` (at the top of every hierarchy), and masked rows.
  const starClass = expected.get(star);
  const starReleased = released.get(star) ?? { n: 0, f: [0, 0] as Fingerprint };
  let starClassReleased = false;
  if (starClass && !mask && starReleased.n === 0) suppressed += starClass.n;
  else if (starClass) {
    starExpected.n += starClass.n;
    addInto(starExpected.f, starClass.f[0], starClass.f[1]);
    starClassReleased = true;
  }
  if (starReleased.n !== starExpected.n || !sameFingerprint(starReleased.f, starExpected.f))
    mismatched += Math.max(starReleased.n, 1);
  // As the whole-table verifier counts them: every input row not released as a class row.
  const maskedRows = starReleased.n - (starClassReleased ? starClass!.n : 0);
  suppressed = Math.max(suppressed, inputRows - (releasedRows - maskedRows));
  const rowsOk = unmapped === 0 && mismatched === 0 && (mask ? releasedRows === inputRows : true);
  add(
    'rows-generalize-input',
    rowsOk,
    rowsOk
      ? `every released row is an input row generalized at the reported node (${inputRows - suppressed} retained)`
      : `${mismatched} released rows match no input row at the node; ${unmapped} input cells outside the hierarchies`,
  );
  const supOk = suppressed === claims.suppressedRows && suppressed <= claims.maxSuppressedRows;
  add(
    'suppression',
    supOk,
    `${suppressed} rows suppressed (claimed ${claims.suppressedRows}, limit ${claims.maxSuppressedRows})`,
  );

  // Every model on every released class (masked rows are no class).
  const classes = [...released.entries()].flatMap(([key, r]) =>
    key !== star ? [{ key, size: r.n }] : starClassReleased ? [{ key, size: starClass!.n }] : [],
  );
  // Per attribute, per class key: the released values' counts over every part.
  const saByClass = new Map<string, Map<string, Map<string, number>>>();
  for (const attribute of args.sensitive.keys()) {
    const byClass = new Map<string, Map<string, number>>();
    for (const p of parts) {
      const { values, cells } = p.sensitive[attribute] ?? { values: [], cells: [] };
      for (let i = 0; i < cells.length; i += 3) {
        const key = p.keys[cells[i]!]!;
        let counts = byClass.get(key);
        if (!counts) byClass.set(key, (counts = new Map()));
        const value = values[cells[i + 1]!]!;
        counts.set(value, (counts.get(value) ?? 0) + cells[i + 2]!);
      }
    }
    saByClass.set(attribute, byClass);
  }
  const saCounts = (key: string, attribute: string): Map<string, number> =>
    saByClass.get(attribute)?.get(key) ?? new Map();
  checkReleaseModels(claims.privacy, classes, args.population, inputRows, add);
  const privacy = claims.privacy.filter((model) => !isReleaseModel(model));
  const tally = new ModelTally(privacy);
  for (const { key, size } of classes) {
    privacy.forEach((model, m) => {
      const attribute = attributeOf(model);
      if (attribute === undefined) tally.record(m, checkClass(model, size, undefined, undefined));
      else if (args.sensitive.has(attribute))
        tally.record(m, checkClass(model, size, saCounts(key, attribute), args.sensitive.get(attribute)));
    });
  }
  tally.add(classes.length, (attribute) => args.sensitive.has(attribute), add);
  const minSize = classes.reduce(
    (m, c) => Math.min(m, c.size),
    classes.length === 0 ? 0 : Number.POSITIVE_INFINITY,
  );
  const claimOk = classes.length === claims.classes && minSize === claims.minClassSize;
  add(
    'reported-classes',
    claimOk,
    `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${classes.length}, smallest ${minSize}`,
  );
  return checks.every((c) => c.passed) ? checks : fail(checks);
}
