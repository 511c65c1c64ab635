/**
 * Independent verification of a generalization release. It shares nothing with the search:
 * it re-reads the staged files (data.csv with its own reader, compared cell by cell with
 * data.arrow), regenerates every input row at the reported node straight from the hierarchy
 * rows, and checks the claims. A release that fails any check is not published.
 *
 * Strings are compared once per distinct value: each input value is mapped to its generalized
 * label through the hierarchy rows and then to the released dictionary's code, so the row
 * loops count integer tuples (src/verify/tuples.ts) and no per-row string or object is made.
 */

import type { VerificationCheck } from '../contracts/report.ts';
import { readArrow } from '../data/arrow.ts';
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../release-spec/spec.ts';
import {
  checkReleasedColumns,
  checkStagedFiles,
  firstCodes,
  releasedCodesAtNode,
  UNMAPPED,
  UNRELEASED,
} from './at-node.ts';
import { type CodedTable, codedTable, type DecodedTable, decodeTable, fail, SEP } from './common.ts';
import { checkDpClaims, type DpClaims, dpModelOf } from './differential-privacy.ts';
import {
  checkPersonClass,
  countPersons,
  entityColumn,
  type PersonCounts,
  personWeightedCounts,
  personWeightedTable,
} from './entity.ts';
import {
  attributeOf,
  type ClassCounts,
  checkCounts,
  forEachClassCounts,
  ModelTally,
  type SaDomain,
  type SensitiveContext,
  saDomain,
} from './models.ts';
import { checkReleaseModels, isReleaseModel, type ReleasedClass } from './population.ts';
import { grown, TupleCounts } from './tuples.ts';

export { type DecodedTable, decodeTable };

/**
 * What the checks hold the release to: the method's observations (node, suppressed rows,
 * classes) with the requirements (models, k, suppression limit and form) read from the spec.
 */
export interface GeneralizationClaims {
  readonly node: Readonly<Record<string, number>>;
  /** Every model of the spec: each released class must satisfy all of them. */
  readonly privacy: readonly PrivacyModelSpec[];
  readonly k: number;
  readonly maxSuppressedRows: number;
  readonly suppressedRows: number;
  readonly classes: number;
  readonly minClassSize: number;
  readonly suppressed: 'mask' | 'remove';
  /** With an entity column: the suppression limit in persons, read from the spec. */
  readonly maxSuppressedPersons?: number | undefined;
  /** With an entity column: the persons with a suppressed row and the fewest in a class, as claimed. */
  readonly entity?: { readonly suppressedPersons: number; readonly minClassPersons: number } | undefined;
  /** (ε, δ)-differential privacy: β, k and the rows sampled, as the method claims them. */
  readonly dp?: DpClaims['dp'];
}

type Add = (name: string, passed: boolean, detail: string) => void;

export interface GeneralizationVerifyInput {
  input: EncodedTable;
  attributes: readonly AttributeSpec[];
  hierarchyRows: ReadonlyMap<string, string[][]>;
  arrow: string | EncodedTable | DecodedTable;
  csv: string | DecodedTable;
  /** The staged Parquet file, when the spec asks for one: it must hold the Arrow file's rows. */
  parquet?: string;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  escapeFormulas?: boolean;
  claims: GeneralizationClaims;
  /** Per sensitive attribute a model names: its input distribution and hierarchy. */
  sensitive: ReadonlyMap<string, SensitiveContext>;
  /**
   * The population's records per generalized QI tuple at the node (src/verify/population.ts),
   * when a model names a population.
   */
  population?: ReadonlyMap<string, number> | undefined;
}

/** The released table's columns, and which of them are quasi-identifiers. */
interface Layout {
  readonly arrow: CodedTable;
  readonly names: string[];
  readonly isQi: boolean[];
  readonly qiIndex: number[];
  readonly otherIndex: number[];
  readonly releasedIndex: Map<string, number>[];
  /** Released codes lie in [0, dictionary size), mapped input codes also at -1 and -2. */
  readonly radix: number[];
}

/** The input rows generalized at the node, as a multiset of released-code tuples. */
interface Expected {
  readonly tuples: TupleCounts;
  /** The same rows' non-QI values, for masked rows (whose QIs say nothing). */
  readonly others: TupleCounts;
  /** Per distinct expected tuple, the id of its non-QI values. */
  readonly otherOf: Int32Array;
  /** Input cells whose value the hierarchy does not hold. */
  readonly unmapped: number;
  /** Per released column, input code → released code (negative: unmapped or not released). */
  readonly toReleased: Int32Array[];
}

/** What matching the released rows against the expected ones found. */
interface Matched {
  readonly classes: TupleCounts;
  /** Per class: the first released row in it. */
  readonly firstRow: number[];
  /** Each released row's class (-1 when masked), when a model needs per-class SA counts. */
  readonly classOf: Int32Array | undefined;
  readonly masked: number;
  readonly mismatched: number;
}

/**
 * Checks a release: the files agree, the columns, every released row an input row generalized
 * at the node (a multiset match), the suppression, every model on every class, the claims.
 * `hierarchyRows` holds, per QI, the hierarchy as string rows `[value, level1, …]`. `arrow`
 * and `csv` are the staged files' paths (the CSV is read with the input's delimiter), or
 * tables already read. Throws VerificationError listing the failed checks; returns all checks.
 */
export function verifyGeneralization(args: GeneralizationVerifyInput): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const add: Add = (name, passed, detail) => checks.push({ name, passed, detail });
  const arrow = codedTable(typeof args.arrow === 'string' ? readArrow(args.arrow) : args.arrow);
  checkStagedFiles(args.input, arrow, args, add);
  const layout = checkColumns(args, arrow, add);
  if (!layout) return fail(checks);
  const expected = expectedRows(args, layout);
  const matched = matchReleasedRows(args, layout, expected);
  const suppressed = checkRows(args, layout, expected, matched, add);
  const dp = dpModelOf(args.claims.privacy);
  if (dp) checkDpClaims(dp, args.claims, args.input.rowCount, suppressed, add);
  else checkSuppression(args.claims, suppressed, add);
  const persons = checkPersons(args, layout, expected, matched, add);
  const sizes = checkModels(args, layout, matched, add, persons);
  checkClaims(args.claims, matched.classes.size, sizes.minSize, add);
  return checks.every((c) => c.passed) ? checks : fail(checks);
}

/** No identifying column is released; every other input column is. */
function checkColumns(args: GeneralizationVerifyInput, arrow: CodedTable, add: Add): Layout | undefined {
  const typeOf = new Map(args.attributes.map((a) => [a.name, a.type]));
  const names = checkReleasedColumns(args.input, args.attributes, arrow, add);
  if (!names) return undefined;
  const isQi = names.map((n) => typeOf.get(n) === 'quasi-identifying');
  return {
    arrow,
    names,
    isQi,
    qiIndex: names.flatMap((_, c) => (isQi[c] ? [c] : [])),
    otherIndex: names.flatMap((_, c) => (isQi[c] ? [] : [c])),
    releasedIndex: arrow.dictionaries.map(firstCodes),
    radix: arrow.dictionaries.map((d) => d.length + 2),
  };
}

/** Every input row generalized at the node, in released codes; input values are mapped once each. */
function expectedRows(args: GeneralizationVerifyInput, layout: Layout): Expected {
  const { input, hierarchyRows, claims } = args;
  const { names, isQi, otherIndex, releasedIndex, radix } = layout;
  const width = names.length;
  const columnOf = new Map(input.columns.map((c) => [c.name, c]));
  const inputCodes = names.map((n) => columnOf.get(n)!.codes);
  const toReleased = releasedCodesAtNode(input, names, isQi, releasedIndex, claims.node, hierarchyRows);
  const tuple = new Int32Array(width);
  const other = new Int32Array(otherIndex.length);
  const tuples = new TupleCounts(width, radix);
  const others = new TupleCounts(
    otherIndex.length,
    otherIndex.map((c) => radix[c]!),
  );
  // Per distinct expected tuple, its other values' id (and later its class): looked up once,
  // not once per row.
  let otherOf: Int32Array = new Int32Array(1024);
  let unmapped = 0;
  for (let r = 0; r < input.rowCount; r++) {
    for (let c = 0; c < width; c++) {
      const v = toReleased[c]![inputCodes[c]![r]!]!;
      if (v === UNMAPPED) unmapped++;
      tuple[c] = v;
    }
    const known = tuples.size;
    // (intern may grow the arrays: look `counts` up after it)
    const id = tuples.intern(tuple);
    tuples.counts[id]++;
    if (id === known) {
      if (id === otherOf.length) otherOf = grown(otherOf, 2 * otherOf.length);
      for (let o = 0; o < other.length; o++) other[o] = tuple[otherIndex[o]!]!;
      otherOf[id] = others.intern(other);
    }
    others.counts[otherOf[id]!]++;
  }
  return { tuples, others, otherOf, unmapped, toReleased };
}

/**
 * Each released row taken from the expected multiset: a row masked to `*` in every QI takes
 * only its non-QI values (a suppressed row); any other row takes its whole tuple and counts in
 * its class.
 */
function matchReleasedRows(args: GeneralizationVerifyInput, layout: Layout, expected: Expected): Matched {
  const { claims, sensitive } = args;
  const { arrow, names, qiIndex, otherIndex, releasedIndex, radix } = layout;
  const width = names.length;
  const tuple = new Int32Array(width);
  const other = new Int32Array(otherIndex.length);
  const qiPart = new Int32Array(qiIndex.length);
  const takeOther = (otherId: number): boolean => {
    if (otherId < 0 || expected.others.counts[otherId] === 0) return false;
    expected.others.counts[otherId]--;
    return true;
  };
  const releasedRows = arrow.rowCount;
  const star = qiIndex.map((c) => releasedIndex[c]!.get('*') ?? UNRELEASED);
  const canMask = claims.suppressed === 'mask' && star.every((s) => s !== UNRELEASED);
  const classes = new TupleCounts(
    qiIndex.length,
    qiIndex.map((c) => radix[c]!),
  );
  const classOfTuple = new Int32Array(expected.tuples.size).fill(-1);
  const firstRow: number[] = [];
  const classOfRow = (id: number, j: number): number => {
    if (id >= 0 && classOfTuple[id]! >= 0) return classOfTuple[id]!;
    for (let q = 0; q < qiIndex.length; q++) qiPart[q] = tuple[qiIndex[q]!]!;
    const cls = classes.intern(qiPart);
    if (cls === firstRow.length) firstRow.push(j);
    if (id >= 0) classOfTuple[id] = cls;
    return cls;
  };
  const classOf = sensitive.size > 0 ? new Int32Array(releasedRows) : undefined;
  let masked = 0;
  let mismatched = 0;
  for (let j = 0; j < releasedRows; j++) {
    for (let c = 0; c < width; c++) tuple[c] = arrow.codes[c]![j]!;
    let isMasked = canMask;
    for (let q = 0; q < qiIndex.length && isMasked; q++) isMasked = tuple[qiIndex[q]!] === star[q];
    const id = expected.tuples.find(tuple);
    const left = id < 0 ? 0 : expected.tuples.counts[id]!;
    if (isMasked && left === 0) {
      masked++;
      for (let o = 0; o < other.length; o++) other[o] = tuple[otherIndex[o]!]!;
      if (!takeOther(expected.others.find(other))) mismatched++;
      if (classOf) classOf[j] = -1;
      continue;
    }
    if (left === 0) mismatched++;
    else {
      expected.tuples.counts[id]--;
      // Its other values are an input row's, unless masked rows took them first.
      if (!takeOther(expected.otherOf[id]!)) mismatched++;
    }
    const cls = classOfRow(id, j);
    classes.counts[cls]++;
    if (classOf) classOf[j] = cls;
  }
  return { classes, firstRow, classOf, masked, mismatched };
}

/** The released rows are exactly the input rows generalized at the node, but suppressed ones. Returns how many were suppressed. */
function checkRows(
  { input, claims }: GeneralizationVerifyInput,
  { arrow }: Layout,
  expected: Expected,
  matched: Matched,
  add: Add,
): number {
  const releasedRows = arrow.rowCount;
  const retainedRows = releasedRows - matched.masked;
  const rowsOk =
    expected.unmapped === 0 &&
    matched.mismatched === 0 &&
    (claims.suppressed === 'mask' ? releasedRows === input.rowCount : matched.masked === 0);
  add(
    'rows-generalize-input',
    rowsOk,
    rowsOk
      ? `every released row is an input row generalized at the reported node (${retainedRows} retained)`
      : `${matched.mismatched} released rows match no input row at the node; ${expected.unmapped} input cells outside the hierarchies`,
  );
  return input.rowCount - retainedRows;
}

/** Suppression within the limit and as claimed. */
function checkSuppression(claims: GeneralizationClaims, suppressed: number, add: Add): void {
  const supOk = suppressed === claims.suppressedRows && suppressed <= claims.maxSuppressedRows;
  add(
    'suppression',
    supOk,
    `${suppressed} rows suppressed (claimed ${claims.suppressedRows}, limit ${claims.maxSuppressedRows})`,
  );
}

/** Every model on every released class, recomputed from the released values. */
function checkModels(
  { claims, sensitive, population, input }: GeneralizationVerifyInput,
  { arrow, names, qiIndex }: Layout,
  { classes, firstRow, classOf }: Matched,
  add: Add,
  /**
   * With an entity column: per class its persons, which k-anonymity counts instead of rows, and
   * the input rows by class, over which the models on a sensitive attribute weigh persons.
   */
  persons?: PersonCounts,
): { minSize: number } {
  const classCount = classes.size;
  const sizes = classes.counts;
  let minSize = Number.POSITIVE_INFINITY;
  for (let g = 0; g < classCount; g++) minSize = Math.min(minSize, sizes[g]!);
  if (classCount === 0) minSize = 0;
  // Whole-release and population models: from the classes' labels and sizes.
  const released: ReleasedClass[] = [];
  for (let g = 0; g < classCount; g++) {
    const labels = qiIndex.map((c) => arrow.dictionaries[c]![arrow.codes[c]![firstRow[g]!]!]!);
    released.push({ key: labels.join(SEP), size: sizes[g]! });
  }
  checkReleaseModels(claims.privacy, released, population, input.rowCount, add);
  const privacy = claims.privacy.filter((model) => !isReleaseModel(model));
  const tally = new ModelTally(privacy);
  const record = (m: number, r: { value: number; holds: boolean }): void => tally.record(m, r);
  privacy.forEach((model, m) => {
    if (attributeOf(model) !== undefined) return;
    const counted = persons?.perClass ?? sizes;
    for (let g = 0; g < classCount; g++) record(m, checkCounts(model, counted[g]!, undefined, undefined));
  });
  for (const name of sensitive.keys()) {
    const models = privacy.flatMap((model, m) => (attributeOf(model) === name ? [m] : []));
    if (models.length === 0) continue;
    if (persons) {
      const column = input.columns.find((x) => x.name === name);
      if (!column) {
        // The input lacks the attribute: its models fail every class.
        for (let g = 0; g < classCount; g++)
          for (const m of models) record(m, { value: Number.NaN, holds: false });
        continue;
      }
      const { codes, dictionary } = column;
      const cellOf = (r: number) => dictionary[codes[r]!]!;
      const weights = personWeightedCounts(persons, cellOf);
      // t and δ compare with the table's distribution over persons, not rows.
      // (Weights over persons: no rows to judge t on exactly.)
      const context = {
        ...sensitive.get(name)!,
        table: personWeightedTable(persons, cellOf),
        rows: undefined,
      };
      for (let g = 0; g < classCount; g++)
        for (const m of models) record(m, checkPersonClass(privacy[m]!, persons, g, weights[g]!, context));
      continue;
    }
    const c = names.indexOf(name);
    const domain = saDomain(sensitive.get(name)!);
    forEachClassSaCounts(classOf!, sizes, classCount, c < 0 ? undefined : arrow, c, domain, (g, counts) => {
      for (const m of models) record(m, checkCounts(privacy[m]!, sizes[g]!, counts, domain));
    });
  }
  tally.add(classCount, (attribute) => sensitive.has(attribute), add);
  return { minSize };
}

/**
 * With an entity column: every released class holds at least k persons (counted from the
 * input's entity column, which the release does not hold), the persons with a suppressed row
 * within the spec's limit, and both as claimed.
 */
function checkPersons(
  { input, attributes, claims }: GeneralizationVerifyInput,
  { qiIndex, names }: Layout,
  expected: Expected,
  matched: Matched,
  add: Add,
): PersonCounts | undefined {
  const entity = entityColumn(input, attributes);
  if (!entity) return undefined;
  if (!entity.codes) {
    add('persons', false, `the input holds no entity column ${entity.name}: persons cannot be counted`);
    return undefined;
  }
  const columnOf = new Map(input.columns.map((c) => [c.name, c]));
  const qiCodes = qiIndex.map((c) => {
    const codes = columnOf.get(names[c]!)!.codes;
    const to = expected.toReleased[c]!;
    return (r: number) => to[codes[r]!]!;
  });
  const counted = countPersons(
    entity.codes,
    input.rowCount,
    qiCodes,
    matched.classes,
    matched.classes.counts,
  );
  let fewest = counted.perClass.length === 0 ? 0 : Number.POSITIVE_INFINITY;
  for (const n of counted.perClass) fewest = Math.min(fewest, n);
  const kOk = counted.perClass.every((n) => n >= claims.k);
  add(
    'persons',
    kOk,
    kOk
      ? `every released class holds at least k=${claims.k} persons (the fewest: ${fewest})`
      : `${counted.perClass.filter((n) => n < claims.k).length} released classes hold fewer than k=${claims.k} persons`,
  );
  const max = claims.maxSuppressedPersons;
  const claimed = claims.entity;
  const supOk =
    max !== undefined && counted.suppressed <= max && claimed?.suppressedPersons === counted.suppressed;
  add(
    'suppressed-persons',
    supOk,
    `${counted.suppressed} of ${counted.persons} persons with a suppressed row (claimed ${claimed?.suppressedPersons ?? 'none'}, limit ${max ?? 'none'})`,
  );
  const minOk = claimed?.minClassPersons === fewest;
  add(
    'reported-persons',
    minOk,
    `report claims the fewest persons in a class is ${claimed?.minClassPersons ?? 'not stated'}; found ${fewest}`,
  );
  return counted;
}

/** The report's claims: how many classes, the smallest. */
function checkClaims(claims: GeneralizationClaims, classCount: number, minSize: number, add: Add): void {
  const claimOk = classCount === claims.classes && minSize === claims.minClassSize;
  add(
    'reported-classes',
    claimOk,
    `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${classCount}, smallest ${minSize}`,
  );
}

/**
 * Calls `visit(class, counts)` for each class in order with its SA counts (column `c` of
 * `table`, indexed by `domain`; values outside the input's come after its values), counted in
 * released row order.
 */
function forEachClassSaCounts(
  classOf: Int32Array,
  sizes: Int32Array,
  classCount: number,
  table: CodedTable | undefined,
  c: number,
  domain: SaDomain,
  visit: (g: number, counts: ClassCounts) => void,
): void {
  // Released SA code → domain index.
  const dictionary = table?.dictionaries[c] ?? [];
  let foreign = domain.values.length;
  const toDomain = Int32Array.from(dictionary, (v) => domain.index.get(v) ?? foreign++);
  const codes = table?.codes[c];
  // Without the column every row holds one value outside the input's.
  const absent = foreign;
  const indexOf = codes ? (j: number) => toDomain[codes[j]!]! : () => absent;
  forEachClassCounts(classOf, sizes, classCount, foreign + 1, indexOf, visit);
}
