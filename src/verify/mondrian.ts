/**
 * Independent verification of a Mondrian release. It shares nothing with the partitioning:
 * it re-reads the staged files, reads ranges from the `_lo`/`_hi` columns and labels from the
 * hierarchy rows (strings), and checks
 * - the two files agree, the columns are as promised, every input row is released;
 * - every range label is `[lo-hi]` of its own `_lo`/`_hi` with lo ≤ hi (or, with both empty,
 *   the missing value — an empty label, which only a missing value matches — or `*`, which
 *   matches anything), every categorical label a label of its hierarchy;
 * - the released rows are the input rows, generalized: a one-to-one matching (a maximum flow
 *   over grouped rows) pairs each released row with an input row that has the same values
 *   outside the QIs, each numeric QI within [lo, hi] and each categorical QI under the
 *   released label;
 * - every class (rows sharing all released QI values) satisfies k-anonymity and every SA
 *   model, recomputed from the released SA column by src/verify/models.ts;
 * - the reported class count, smallest class and NCP.
 * Strings are compared through the files' dictionaries (each distinct value once), so the
 * checks stay linear in the rows. A release that fails any check is not published.
 */
import { modelOf } from '../catalogue/catalogue.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import type { VerificationCheck } from '../contracts/report.ts';
import type { EncodedColumn, EncodedTable } from '../data/table.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../release-spec/spec.ts';
import { widthOver } from '../util/extent.ts';
import { Int32s } from '../util/int32s.ts';
import { mix32 } from '../util/keys.ts';
import { positionsIn } from '../util/string-index.ts';
import { fail, releasedNames } from './common.ts';
import { checkClass, type SensitiveContext, type ValueCounts } from './models.ts';
import { asCsvEncoded, csvText } from './staged-csv.ts';

export interface MondrianObservations {
  readonly classes: number;
  readonly minClassSize: number;
  readonly ncp: number;
}

export interface MondrianVerifyInput {
  readonly input: EncodedTable;
  readonly attributes: readonly AttributeSpec[];
  readonly privacy: readonly PrivacyModelSpec[];
  /** QIs released as numeric ranges. */
  readonly numeric: readonly string[];
  /** Hierarchy rows `[value, level1, …]` of every categorical QI and of SAs that have one. */
  readonly hierarchyRows: ReadonlyMap<string, string[][]>;
  /** The staged files as read back (readArrow, readCsv). */
  readonly arrow: EncodedTable;
  readonly csv: EncodedTable;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  readonly escapeFormulas?: boolean;
  readonly claims: MondrianObservations;
}

/** The universal root a hierarchy gets when its top level has several labels. */
const ROOT = '*';

type Add = (name: string, passed: boolean, detail: string) => void;

/** What the first checks establish about the released table, for the later ones. */
interface Shape {
  readonly n: number;
  readonly out: (name: string) => EncodedColumn;
  /** A column's cells as data.csv holds them (unescaped), row by row. */
  readonly csvText: (name: string) => (row: number) => string;
  readonly inp: (name: string) => EncodedColumn;
  readonly qis: string[];
  readonly others: string[];
  readonly numericQis: string[];
  readonly categorical: string[];
}

type Ranges = Map<string, { lo: Float64Array; hi: Float64Array }>;

interface Labels {
  readonly coverOf: Map<string, Int32Array[]>;
  readonly coversCount: Map<string, Float64Array>;
  readonly distinct: Map<string, number>;
}

interface Classes {
  readonly classOf: Int32Array;
  readonly count: number;
  readonly sizes: Int32Array;
  readonly minSize: number;
}

/**
 * The checks, in order: the files agree, the columns, every row released, ranges, labels,
 * rows matched one to one with input rows they generalize, k, each SA model, the claims.
 */
export function verifyMondrian(args: MondrianVerifyInput): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const add: Add = (name, passed, detail) => checks.push({ name, passed, detail });
  const shape = checkShape(args, add);
  if (!shape) return fail(checks);
  const ranges = checkRanges(shape, add);
  const labels = checkLabels(args, shape, add);
  checkRowsGeneralizeInput(args, shape, ranges, labels, add);
  const classes = checkK(args, shape, add);
  checkSensitiveModels(args, shape, classes, add);
  checkClaims(args, shape, ranges, labels, classes, add);
  return checks.every((c) => c.passed) ? checks : fail(checks);
}

/** The two files hold the same table; identifying columns dropped, numeric QIs with _lo and _hi; every row. */
function checkShape(args: MondrianVerifyInput, add: Add): Shape | undefined {
  const { input, attributes, arrow, csv } = args;
  const escaped = args.escapeFormulas === true;
  // A number the CSV writes in digits (1e21 and beyond) reads back from Arrow as `1e+21`.
  const numbers = new Set(args.numeric.flatMap((q) => [`${q}_lo`, `${q}_hi`]));
  const same = sameTable(asCsvEncoded(arrow, escaped), csv, numbers, escaped);
  add(
    'csv-equals-arrow',
    same,
    same ? 'data.csv and data.arrow hold the same rows' : 'data.csv and data.arrow differ',
  );
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const numeric = new Set(args.numeric);
  const released = releasedNames(input, attributes);
  const expectedNames = released.flatMap((n) => (numeric.has(n) ? [n, `${n}_lo`, `${n}_hi`] : [n]));
  const names = arrow.columns.map((c) => c.name);
  const namesOk = names.join('\u0000') === expectedNames.join('\u0000');
  add(
    'columns',
    namesOk,
    namesOk ? 'identifying columns dropped, all others released' : `released columns: ${names.join(', ')}`,
  );
  if (!namesOk || !same) return undefined;
  const n = input.rowCount;
  const rows = arrow.rowCount;
  add('row-count', rows === n, `${rows} rows released of ${n}`);
  if (rows !== n) return undefined;
  const qis = released.filter((q) => typeOf.get(q) === 'quasi-identifying');
  return {
    n,
    out: (name) => arrow.columns.find((c) => c.name === name)!,
    csvText: (name) => {
      const column = csv.columns.find((c) => c.name === (escaped ? csvText(name, true) : name))!;
      const texts = column.dictionary.map((t) => (escaped ? unescaped(t) : t));
      return (row) => texts[column.codes[row]!]!;
    },
    inp: (name) => input.columns.find((c) => c.name === name)!,
    qis,
    others: released.filter((q) => typeOf.get(q) !== 'quasi-identifying'),
    numericQis: qis.filter((q) => numeric.has(q)),
    categorical: qis.filter((q) => !numeric.has(q)),
  };
}

/** Ranges: `[lo-hi]` of their own columns, lo ≤ hi. lo/hi per row, parsed once per string. */
function checkRanges({ n, out, csvText, numericQis }: Shape, add: Add): Ranges {
  let badRanges = 0;
  const ranges: Ranges = new Map();
  for (const q of numericQis) {
    const label = out(q);
    const loCol = out(`${q}_lo`);
    const hiCol = out(`${q}_hi`);
    // The range's text is of the numbers as data.csv writes them.
    const loText = csvText(`${q}_lo`);
    const hiText = csvText(`${q}_hi`);
    const loValues = loCol.dictionary.map(parseNumber);
    const hiValues = hiCol.dictionary.map(parseNumber);
    const lo = new Float64Array(n);
    const hi = new Float64Array(n);
    for (let j = 0; j < n; j++) {
      const l = loCol.codes[j]!;
      const h = hiCol.codes[j]!;
      lo[j] = loValues[l]!;
      hi[j] = hiValues[h]!;
      const text = label.dictionary[label.codes[j]!]!;
      if (Number.isNaN(lo[j]!) && Number.isNaN(hi[j]!) && (text === '' || text === ROOT)) {
        // Missing (lo = hi = NaN matches only a missing value) or `*` (matches anything).
        if (text === ROOT) {
          lo[j] = Number.NEGATIVE_INFINITY;
          hi[j] = Number.POSITIVE_INFINITY;
        }
        continue;
      }
      if (!(lo[j]! <= hi[j]!) || text !== `[${loText(j)}-${hiText(j)}]`) badRanges++;
    }
    ranges.set(q, { lo, hi });
  }
  add(
    'ranges',
    badRanges === 0,
    badRanges === 0
      ? 'every range is [lo-hi] of its own lo and hi columns'
      : `${badRanges} range cells disagree with their lo/hi columns`,
  );
  return ranges;
}

/**
 * Categorical labels: strings of the QI's hierarchy. For each QI: which released labels cover
 * each input value, and how many input values each released label covers.
 */
function checkLabels(args: MondrianVerifyInput, { out, inp, categorical }: Shape, add: Add): Labels {
  const coverOf = new Map<string, Int32Array[]>();
  const coversCount = new Map<string, Float64Array>();
  const distinct = new Map<string, number>();
  let badLabels = 0;
  for (const q of categorical) {
    const value = inp(q);
    const label = out(q);
    const present = presentValues(value);
    const rowsOf = new Map((args.hierarchyRows.get(q) ?? []).map((r) => [r[0]!, r]));
    const tops = new Set<string>();
    for (const v of present) {
      const r = rowsOf.get(v);
      if (r) tops.add(r[r.length - 1]!);
    }
    const labelCode = new Map(label.dictionary.map((s, c) => [s, c]));
    const count = new Float64Array(label.dictionary.length);
    const cover = value.dictionary.map((v) => {
      const r = rowsOf.get(v);
      const above = new Set<string>(r ?? []);
      if (r && tops.size > 1) above.add(ROOT);
      const codes: number[] = [];
      for (const s of above) {
        const c = labelCode.get(s);
        if (c !== undefined) codes.push(c);
      }
      if (present.has(v)) for (const c of codes) count[c]!++;
      return Int32Array.from(codes);
    });
    coverOf.set(q, cover);
    coversCount.set(q, count);
    distinct.set(q, present.size);
    const used = new Uint8Array(label.dictionary.length);
    for (const c of label.codes) used[c] = 1;
    used.forEach((u, c) => {
      if (u && count[c] === 0) badLabels++;
    });
  }
  add(
    'labels-in-hierarchy',
    badLabels === 0,
    badLabels === 0
      ? 'every categorical label is a label of its hierarchy'
      : `${badLabels} categorical labels are no label of their hierarchy above an input value`,
  );
  return { coverOf, coversCount, distinct };
}

/** One-to-one matching of released rows to input rows they generalize. */
function checkRowsGeneralizeInput(
  args: MondrianVerifyInput,
  { n, others, categorical, numericQis }: Shape,
  ranges: Ranges,
  labels: Labels,
  add: Add,
): void {
  const matching = matchRows(args, others, categorical, numericQis, ranges, labels.coverOf);
  add(
    'rows-generalize-input',
    matching.unmatched === 0,
    matching.unmatched === 0
      ? `every released row generalizes its own input row (${n} rows matched one to one; ${matching.rerouted} re-routed by augmenting paths)`
      : `${matching.unmatched} released rows cannot be paired with an input row they generalize`,
  );
}

/** Classes (rows sharing all released QI values), each at least k rows. */
function checkK(args: MondrianVerifyInput, { n, out, qis }: Shape, add: Add): Classes {
  let classOf: Int32Array = new Int32Array(n);
  let count = n > 0 ? 1 : 0;
  for (const q of qis) ({ ids: classOf, count } = refine(classOf, out(q).codes));
  const sizes = new Int32Array(count);
  for (let j = 0; j < n; j++) sizes[classOf[j]!]!++;
  let minSize = count > 0 ? Number.POSITIVE_INFINITY : 0;
  for (const s of sizes) minSize = Math.min(minSize, s);
  let k = 1;
  for (const m of args.privacy) if (m.model === K_ANONYMITY.name) k = Math.max(k, m.k);
  add(K_ANONYMITY.name, minSize >= k, `${count} classes, smallest ${minSize} rows (k = ${k})`);
  return { classOf, count, sizes, minSize };
}

/** Each model on a sensitive attribute, per class, from the released SA column. */
function checkSensitiveModels(
  args: MondrianVerifyInput,
  { n, out, inp }: Shape,
  classes: Classes,
  add: Add,
): void {
  for (const model of args.privacy) {
    if (!('attribute' in model)) continue;
    const sa = out(model.attribute);
    const counts: ValueCounts[] = Array.from({ length: classes.count }, () => new Map());
    const byCode = new Map<number, number>();
    const width = sa.dictionary.length;
    for (let j = 0; j < n; j++) {
      const key = classes.classOf[j]! * width + sa.codes[j]!;
      byCode.set(key, (byCode.get(key) ?? 0) + 1);
    }
    for (const [key, c] of byCode) counts[Math.floor(key / width)]!.set(sa.dictionary[key % width]!, c);
    const original = inp(model.attribute);
    const table = new Map<string, number>();
    for (const code of original.codes) {
      const v = original.dictionary[code]!;
      table.set(v, (table.get(v) ?? 0) + 1);
    }
    const rows = { counts: new Map(table), total: n };
    for (const [v, c] of table) table.set(v, c / n);
    const context: SensitiveContext = { table, hierarchy: args.hierarchyRows.get(model.attribute), rows };
    const higherIsBetter = modelOf(model).measure.higherIsBetter;
    let failed = 0;
    let worst: number | undefined;
    counts.forEach((c, e) => {
      const r = checkClass(model, classes.sizes[e]!, c, context);
      if (!r.holds) failed++;
      if (worst === undefined || (higherIsBetter ? r.value < worst : r.value > worst)) worst = r.value;
    });
    add(
      model.model,
      failed === 0,
      `${failed} of ${classes.count} classes fail ${model.model} on '${model.attribute}' (worst class: ${worst ?? 0})`,
    );
  }
}

/** The report's claims: classes, the smallest class, NCP recomputed. */
function checkClaims(
  args: MondrianVerifyInput,
  { qis }: Shape,
  ranges: Ranges,
  labels: Labels,
  classes: Classes,
  add: Add,
): void {
  const { claims } = args;
  const claimOk = classes.count === claims.classes && classes.minSize === claims.minClassSize;
  add(
    'reported-classes',
    claimOk,
    `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${classes.count}, smallest ${classes.minSize}`,
  );
  const ncp = recomputeNcp(args, qis, ranges, labels.coversCount, labels.distinct);
  const ncpOk = Math.abs(ncp - claims.ncp) <= 1e-9 * Math.max(1, ncp);
  add('reported-ncp', ncpOk, `NCP recomputed ${ncp}, reported ${claims.ncp}`);
}

/**
 * A number cell of the release (or an input value) as a number, empty as NaN. Not `isNumber`:
 * a float column may hold ±Infinity, which must not compare equal to an empty cell.
 */
function parseNumber(s: string): number {
  return s.trim() === '' ? Number.NaN : Number(s);
}

function presentValues(column: EncodedColumn): Set<string> {
  const used = new Uint8Array(column.dictionary.length);
  for (const c of column.codes) used[c] = 1;
  return new Set(column.dictionary.filter((_, c) => used[c]));
}

/** A CSV cell's text before formula escaping (csvText adds one `'`). */
function unescaped(text: string): string {
  return text.startsWith("'") ? text.slice(1) : text;
}

/**
 * Same names, same rows, same strings (compared through the dictionaries); in the columns of
 * `numbers` (named as in `a`), the same numbers, whatever their text.
 */
function sameTable(
  a: EncodedTable,
  b: EncodedTable,
  numbers: ReadonlySet<string>,
  escaped: boolean,
): boolean {
  if (a.rowCount !== b.rowCount || a.columns.length !== b.columns.length) return false;
  const asNumber = (text: string) => parseNumber(escaped ? unescaped(text) : text);
  return a.columns.every((x, i) => {
    const y = b.columns[i]!;
    if (x.name !== y.name) return false;
    const number = numbers.has(escaped ? unescaped(x.name) : x.name);
    const equal = (u: string, v: string) => {
      if (!number) return u === v;
      const p = asNumber(u);
      const q = asNumber(v);
      return p === q || (Number.isNaN(p) && Number.isNaN(q));
    };
    // Pair codes once: x's code c must always meet the same y string.
    const seen = new Int32Array(x.dictionary.length).fill(-1);
    for (let j = 0; j < a.rowCount; j++) {
      const cx = x.codes[j]!;
      const cy = y.codes[j]!;
      if (seen[cx] === cy) continue;
      if (seen[cx] !== -1 || !equal(x.dictionary[cx]!, y.dictionary[cy]!)) return false;
      seen[cx] = cy;
    }
    return true;
  });
}

/**
 * Refines group ids by one more column: rows share a new id iff they shared an id and a code,
 * the new ids numbered by first appearance. The (id, code) pairs are kept in an open-addressing
 * table of typed arrays: a Map of millions of keys (a column of distinct values passed through)
 * cost seconds and its garbage.
 */
function refine(ids: Int32Array, codes: ArrayLike<number>): { ids: Int32Array; count: number } {
  const n = ids.length;
  let size = 16;
  while (size < 2 * n) size *= 2;
  const mask = size - 1;
  // Slot s holds the pair (pairId[s], pairCode[s]) and its new id + 1 (0: empty).
  const pairId = new Int32Array(size);
  const pairCode = new Int32Array(size);
  const newId = new Int32Array(size);
  const next = new Int32Array(n);
  let count = 0;
  for (let i = 0; i < n; i++) {
    const id = ids[i]!;
    const code = codes[i]!;
    let at = mix32(Math.imul(id, 0x9e3779b1) ^ code) & mask;
    for (;;) {
      const held = newId[at]!;
      if (held === 0) {
        pairId[at] = id;
        pairCode[at] = code;
        newId[at] = ++count;
        next[i] = count - 1;
        break;
      }
      if (pairId[at] === id && pairCode[at] === code) {
        next[i] = held - 1;
        break;
      }
      at = (at + 1) & mask;
    }
  }
  return { ids: next, count };
}

function recomputeNcp(
  args: MondrianVerifyInput,
  qis: string[],
  ranges: ReadonlyMap<string, { lo: Float64Array; hi: Float64Array }>,
  coversCount: ReadonlyMap<string, Float64Array>,
  distinct: ReadonlyMap<string, number>,
): number {
  const n = args.input.rowCount;
  if (n === 0 || qis.length === 0) return 0;
  let sum = 0;
  for (const q of qis) {
    const range = ranges.get(q);
    if (range) {
      const values = args.input.columns.find((c) => c.name === q)!;
      const used = new Uint8Array(values.dictionary.length);
      for (const c of values.codes) used[c] = 1;
      let min = Number.POSITIVE_INFINITY;
      let max = Number.NEGATIVE_INFINITY;
      values.dictionary.forEach((v, c) => {
        const x = parseNumber(v);
        if (!used[c] || Number.isNaN(x)) return;
        min = Math.min(min, x);
        max = Math.max(max, x);
      });
      // A missing cell is exact (0), `*` costs 1, a range its width over the numbers' span.
      for (let j = 0; j < n; j++) {
        const lo = range.lo[j]!;
        if (lo === Number.NEGATIVE_INFINITY) sum += 1;
        else if (max > min && !Number.isNaN(lo)) {
          const [width, span] = widthOver(lo, range.hi[j]!, min, max);
          sum += width / span;
        }
      }
    } else {
      const d = distinct.get(q)!;
      if (d <= 1) continue;
      const count = coversCount.get(q)!;
      const label = args.arrow.columns.find((c) => c.name === q)!;
      for (let j = 0; j < n; j++) sum += ((count[label.codes[j]!] || d) - 1) / (d - 1);
    }
  }
  return sum / (n * qis.length);
}

interface TrieNode {
  readonly children: Map<number, TrieNode>;
  readonly groups: number[];
}

/**
 * Pairs released rows with input rows, one to one. Equal rows are interchangeable, so rows
 * are grouped; an input group may feed a released group when the values outside the QIs are
 * equal, every categorical QI's label covers the value and every numeric QI's range holds it.
 * Candidates come from a trie over (other values, categorical labels) walked with each
 * value's covering labels, or, where one released group alone has its other values, from that
 * group checked directly. The edges lie in typed arrays, a's edges in a run of their own. Greedy assignment, most constrained input groups first, then
 * augmenting paths for what greedy left over: a maximum flow, so `unmatched` is 0 exactly
 * when a perfect matching exists.
 */
function matchRows(
  args: MondrianVerifyInput,
  others: string[],
  categorical: string[],
  numericQis: string[],
  ranges: ReadonlyMap<string, { lo: Float64Array; hi: Float64Array }>,
  coverOf: ReadonlyMap<string, Int32Array[]>,
): { unmatched: number; rerouted: number } {
  const n = args.input.rowCount;
  const out = (name: string) => args.arrow.columns.find((c) => c.name === name)!;
  const inp = (name: string) => args.input.columns.find((c) => c.name === name)!;

  // Values outside the QIs, released and input rows in one id space (released strings mapped
  // to input codes; a string the input column never had matches nothing).
  let otherIds: Int32Array = new Int32Array(2 * n);
  let otherCount = 1;
  const orphan = new Uint8Array(n);
  for (const name of others) {
    const o = out(name);
    const i = inp(name);
    const mapped = positionsIn(o.dictionary, i.dictionary);
    const codes = new Int32Array(2 * n);
    for (let j = 0; j < n; j++) {
      const c = mapped[o.codes[j]!]!;
      if (c < 0) orphan[j] = 1;
      codes[j] = Math.max(c, 0);
      codes[n + j] = i.codes[j]!;
    }
    ({ ids: otherIds, count: otherCount } = refine(otherIds, codes));
  }

  // Released groups: other values + categorical labels + numeric labels.
  let relIds: Int32Array = otherIds.subarray(0, n);
  let relGroups = otherCount;
  for (const q of [...categorical, ...numericQis]) {
    const o = out(q);
    ({ ids: relIds, count: relGroups } = refine(relIds, o.codes));
  }
  const relCount = new Int32Array(relGroups);
  const relRow = new Int32Array(relGroups).fill(-1);
  for (let j = 0; j < n; j++) {
    if (orphan[j]) continue;
    const g = relIds[j]!;
    relCount[g]!++;
    if (relRow[g] === -1) relRow[g] = j;
  }
  // Released groups by their values outside the QIs. An id of one group (a column of distinct
  // values passed through makes most so) is checked against it directly; an id of several
  // through a trie of their categorical labels, its groups in increasing order.
  const perOther = new Int32Array(otherCount);
  for (let g = 0; g < relGroups; g++) if (relRow[g]! >= 0) perOther[otherIds[relRow[g]!]!]!++;
  const onlyGroup = new Int32Array(otherCount).fill(-1);
  const root = new Map<number, TrieNode>();
  const catCols = categorical.map(out);
  for (let g = 0; g < relGroups; g++) {
    const j = relRow[g]!;
    if (j < 0) continue;
    if (perOther[otherIds[j]!] === 1) {
      onlyGroup[otherIds[j]!] = g;
      continue;
    }
    let node: TrieNode | undefined = root.get(otherIds[j]!);
    if (!node) root.set(otherIds[j]!, (node = { children: new Map(), groups: [] }));
    for (const c of catCols) {
      const label = c.codes[j]!;
      let next: TrieNode | undefined = node.children.get(label);
      if (!next) node.children.set(label, (next = { children: new Map(), groups: [] }));
      node = next;
    }
    node.groups.push(g);
  }
  const relLo = numericQis.map((q) => ranges.get(q)!.lo);
  const relHi = numericQis.map((q) => ranges.get(q)!.hi);

  // Input groups: other values + every QI's value.
  let inIds: Int32Array = otherIds.subarray(n);
  let inGroups = otherCount;
  for (const q of [...categorical, ...numericQis]) {
    const i = inp(q);
    ({ ids: inIds, count: inGroups } = refine(inIds, i.codes));
  }
  const inCount = new Int32Array(inGroups);
  const inRow = new Int32Array(inGroups).fill(-1);
  for (let r = 0; r < n; r++) {
    const g = inIds[r]!;
    inCount[g]!++;
    if (inRow[g] === -1) inRow[g] = r;
  }
  const inCat = categorical.map((q) => inp(q).codes);
  const covers = categorical.map((q) => coverOf.get(q)!);
  const inValue = numericQis.map((q) => {
    const i = inp(q);
    const parsed = i.dictionary.map(parseNumber);
    return Float64Array.from(i.codes, (c) => parsed[c]!);
  });
  /** Whether released group g's numeric ranges hold input row r's values. */
  const fits = (g: number, r: number): boolean => {
    const j = relRow[g]!;
    for (let x = 0; x < inValue.length; x++) {
      const v = inValue[x]![r]!;
      const lo = relLo[x]![j]!;
      // A missing input value (NaN) fits a missing cell (lo NaN) or `*` (lo −∞) only.
      const ok = Number.isNaN(v)
        ? Number.isNaN(lo) || lo === Number.NEGATIVE_INFINITY
        : v >= lo && v <= relHi[x]![j]!;
      if (!ok) return false;
    }
    return true;
  };
  /** Whether each of released group g's categorical labels covers input row r's value. */
  const covered = (g: number, r: number): boolean => {
    const j = relRow[g]!;
    for (let depth = 0; depth < catCols.length; depth++)
      if (!covers[depth]![inCat[depth]![r]!]!.includes(catCols[depth]!.codes[j]!)) return false;
    return true;
  };
  // Edges (input group a → released group b), unbounded each: a's edges are edgeB[edgeStart[a] …
  // edgeStart[a + 1]), in the order the trie's walk meets them.
  const edges = new Edges(inGroups);
  const walk = (node: TrieNode, depth: number, r: number, a: number): void => {
    if (depth === categorical.length) {
      for (const g of node.groups) if (fits(g, r)) edges.add(a, g);
      return;
    }
    for (const label of covers[depth]![inCat[depth]![r]!]!) {
      const next = node.children.get(label);
      if (next) walk(next, depth + 1, r, a);
    }
  };
  for (let a = 0; a < inGroups; a++) {
    const r = inRow[a]!;
    const other = otherIds[n + r]!;
    if (perOther[other] === 1) {
      const g = onlyGroup[other]!;
      if (covered(g, r) && fits(g, r)) edges.add(a, g);
    } else {
      const start = root.get(other);
      if (start) walk(start, 0, r, a);
    }
    edges.end(a);
  }
  const { edgeStart, edgeA, edgeB } = edges.done();
  // Each released group's edges, in edge order.
  const bStart = new Int32Array(relGroups + 1);
  for (let e = 0; e < edgeB.length; e++) bStart[edgeB[e]! + 1]!++;
  for (let b = 0; b < relGroups; b++) bStart[b + 1]! += bStart[b]!;
  const bEdges = new Int32Array(edgeB.length);
  const fill = bStart.slice(0, relGroups);
  for (let e = 0; e < edgeB.length; e++) bEdges[fill[edgeB[e]!]!++] = e;

  const flow = new Float64Array(edgeB.length);
  const supply = Float64Array.from(inCount);
  const capacity = Float64Array.from(relCount);
  // Input groups by their number of edges, then by id (a counting sort: the same order as a sort).
  const degree = (a: number) => edgeStart[a + 1]! - edgeStart[a]!;
  let most = 0;
  for (let a = 0; a < inGroups; a++) most = Math.max(most, degree(a));
  const byDegree = new Int32Array(most + 2);
  for (let a = 0; a < inGroups; a++) byDegree[degree(a) + 1]!++;
  for (let d = 0; d <= most; d++) byDegree[d + 1]! += byDegree[d]!;
  const byConstraint = new Int32Array(inGroups);
  for (let a = 0; a < inGroups; a++) byConstraint[byDegree[degree(a)]!++] = a;
  for (const a of byConstraint) {
    for (let e = edgeStart[a]!; e < edgeStart[a + 1]!; e++) {
      if (supply[a] === 0) break;
      const f = Math.min(supply[a]!, capacity[edgeB[e]!]!);
      if (f > 0) {
        flow[e]! += f;
        supply[a]! -= f;
        capacity[edgeB[e]!]! -= f;
      }
    }
  }
  const graph = { edgeStart, edgeA, edgeB, bStart, bEdges, flow, supply, capacity };
  const search = new PathSearch(inGroups, relGroups);
  let rerouted = 0;
  let unmatched = 0;
  for (const a of byConstraint) {
    while (supply[a]! > 0) {
      const pushed = search.augment(a, graph);
      if (pushed === 0) {
        unmatched += supply[a]!;
        break;
      }
      rerouted += pushed;
    }
  }
  return { unmatched, rerouted };
}

interface FlowGraph {
  /** Input group a's edges: edgeStart[a] … edgeStart[a + 1]. */
  readonly edgeStart: Int32Array;
  readonly edgeA: Int32Array;
  readonly edgeB: Int32Array;
  /** Released group b's edges: bEdges[bStart[b] … bStart[b + 1]). */
  readonly bStart: Int32Array;
  readonly bEdges: Int32Array;
  readonly flow: Float64Array;
  readonly supply: Float64Array;
  readonly capacity: Float64Array;
}

/** The edges of input groups added in order of group. */
class Edges {
  private readonly a = new Int32s();
  private readonly b = new Int32s();
  private readonly start: Int32Array;

  constructor(groups: number) {
    this.start = new Int32Array(groups + 1);
  }

  add(a: number, b: number): void {
    this.a.push(a);
    this.b.push(b);
  }

  /** Input group a's edges are all added. */
  end(a: number): void {
    this.start[a + 1] = this.b.length;
  }

  done(): { edgeStart: Int32Array; edgeA: Int32Array; edgeB: Int32Array } {
    return { edgeStart: this.start, edgeA: this.a.slice(), edgeB: this.b.slice() };
  }
}

/** Breadth-first augmenting paths in the residual graph, with visit stamps instead of sets. */
class PathSearch {
  private readonly viaA: Int32Array;
  private readonly viaB: Int32Array;
  private readonly seenA: Int32Array;
  private readonly seenB: Int32Array;
  private stamp = 0;

  constructor(inGroups: number, relGroups: number) {
    this.viaA = new Int32Array(inGroups);
    this.viaB = new Int32Array(relGroups);
    this.seenA = new Int32Array(inGroups);
    this.seenB = new Int32Array(relGroups);
  }

  /** One augmenting path from input group `source`; the flow pushed along it (0: none). */
  augment(source: number, g: FlowGraph): number {
    const stamp = ++this.stamp;
    const { viaA, viaB, seenA, seenB } = this;
    // Residual moves: a → b over any edge; b → a' back over an edge carrying flow.
    seenA[source] = stamp;
    viaA[source] = -1;
    let queue = [source];
    let target = -1;
    search: while (queue.length > 0) {
      const next: number[] = [];
      for (const a of queue) {
        for (let e = g.edgeStart[a]!; e < g.edgeStart[a + 1]!; e++) {
          const b = g.edgeB[e]!;
          if (seenB[b] === stamp) continue;
          seenB[b] = stamp;
          viaB[b] = e;
          if (g.capacity[b]! > 0) {
            target = b;
            break search;
          }
          for (let k = g.bStart[b]!; k < g.bStart[b + 1]!; k++) {
            const back = g.bEdges[k]!;
            const a2 = g.edgeA[back]!;
            if (g.flow[back]! > 0 && seenA[a2] !== stamp) {
              seenA[a2] = stamp;
              viaA[a2] = back;
              next.push(a2);
            }
          }
        }
      }
      queue = next;
    }
    if (target < 0) return 0;
    let amount = Math.min(g.supply[source]!, g.capacity[target]!);
    for (let b = target; ; ) {
      const back = viaA[g.edgeA[viaB[b]!]!]!;
      if (back < 0) break;
      amount = Math.min(amount, g.flow[back]!);
      b = g.edgeB[back]!;
    }
    for (let b = target; ; ) {
      const e = viaB[b]!;
      g.flow[e]! += amount;
      const back = viaA[g.edgeA[e]!]!;
      if (back < 0) break;
      g.flow[back]! -= amount;
      b = g.edgeB[back]!;
    }
    g.supply[source]! -= amount;
    g.capacity[target]! -= amount;
    return amount;
  }
}
