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
import { fail, releasedNames } from './common.ts';
import { checkClass, type SensitiveContext, type ValueCounts } from './models.ts';
import { asCsvEncoded } from './staged-csv.ts';

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
  const same = sameTable(asCsvEncoded(arrow, args.escapeFormulas === true), csv);
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
    inp: (name) => input.columns.find((c) => c.name === name)!,
    qis,
    others: released.filter((q) => typeOf.get(q) !== 'quasi-identifying'),
    numericQis: qis.filter((q) => numeric.has(q)),
    categorical: qis.filter((q) => !numeric.has(q)),
  };
}

/** Ranges: `[lo-hi]` of their own columns, lo ≤ hi. lo/hi per row, parsed once per string. */
function checkRanges({ n, out, numericQis }: Shape, add: Add): Ranges {
  let badRanges = 0;
  const ranges: Ranges = new Map();
  for (const q of numericQis) {
    const label = out(q);
    const loCol = out(`${q}_lo`);
    const hiCol = out(`${q}_hi`);
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
      if (!(lo[j]! <= hi[j]!) || text !== `[${loCol.dictionary[l]}-${hiCol.dictionary[h]}]`) badRanges++;
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
  for (const q of qis) ({ ids: classOf, count } = refine(classOf, out(q).codes, out(q).dictionary.length));
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
    for (const [v, c] of table) table.set(v, c / n);
    const context: SensitiveContext = { table, hierarchy: args.hierarchyRows.get(model.attribute) };
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

function parseNumber(s: string): number {
  return s.trim() === '' ? Number.NaN : Number(s);
}

function presentValues(column: EncodedColumn): Set<string> {
  const used = new Uint8Array(column.dictionary.length);
  for (const c of column.codes) used[c] = 1;
  return new Set(column.dictionary.filter((_, c) => used[c]));
}

/** Same names, same rows, same strings (compared through the dictionaries). */
function sameTable(a: EncodedTable, b: EncodedTable): boolean {
  if (a.rowCount !== b.rowCount || a.columns.length !== b.columns.length) return false;
  return a.columns.every((x, i) => {
    const y = b.columns[i]!;
    if (x.name !== y.name) return false;
    // Pair codes once: x's code c must always meet the same y string.
    const seen = new Int32Array(x.dictionary.length).fill(-1);
    for (let j = 0; j < a.rowCount; j++) {
      const cx = x.codes[j]!;
      const cy = y.codes[j]!;
      if (seen[cx] === cy) continue;
      if (seen[cx] !== -1 || x.dictionary[cx] !== y.dictionary[cy]) return false;
      seen[cx] = cy;
    }
    return true;
  });
}

/** Refines group ids by one more column: rows share a new id iff they shared an id and a code. */
function refine(ids: Int32Array, codes: ArrayLike<number>, card: number): { ids: Int32Array; count: number } {
  const index = new Map<number, number>();
  const next = new Int32Array(ids.length);
  for (let i = 0; i < ids.length; i++) {
    const key = ids[i]! * card + codes[i]!;
    let g = index.get(key);
    if (g === undefined) index.set(key, (g = index.size));
    next[i] = g;
  }
  return { ids: next, count: index.size };
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
        else if (max > min && !Number.isNaN(lo)) sum += (range.hi[j]! - lo) / (max - min);
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
 * value's covering labels. Greedy assignment, most constrained input groups first, then
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
    const inputCode = new Map(i.dictionary.map((s, c) => [s, c]));
    const mapped = Int32Array.from(o.dictionary, (s) => inputCode.get(s) ?? -1);
    const codes = new Int32Array(2 * n);
    for (let j = 0; j < n; j++) {
      const c = mapped[o.codes[j]!]!;
      if (c < 0) orphan[j] = 1;
      codes[j] = Math.max(c, 0);
      codes[n + j] = i.codes[j]!;
    }
    ({ ids: otherIds, count: otherCount } = refine(otherIds, codes, Math.max(1, i.dictionary.length)));
  }

  // Released groups: other values + categorical labels + numeric labels.
  let relIds: Int32Array = otherIds.subarray(0, n);
  let relGroups = otherCount;
  for (const q of [...categorical, ...numericQis]) {
    const o = out(q);
    ({ ids: relIds, count: relGroups } = refine(relIds, o.codes, o.dictionary.length));
  }
  const relCount = new Int32Array(relGroups);
  const relRow = new Int32Array(relGroups).fill(-1);
  for (let j = 0; j < n; j++) {
    if (orphan[j]) continue;
    const g = relIds[j]!;
    relCount[g]!++;
    if (relRow[g] === -1) relRow[g] = j;
  }
  const root = new Map<number, TrieNode>();
  const catCols = categorical.map(out);
  for (let g = 0; g < relGroups; g++) {
    const j = relRow[g]!;
    if (j < 0) continue;
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
    ({ ids: inIds, count: inGroups } = refine(inIds, i.codes, i.dictionary.length));
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
  const edgesOf: number[][] = Array.from(inRow, (r) => {
    const found: number[] = [];
    const start = root.get(otherIds[n + r]!);
    if (!start) return found;
    const walk = (node: TrieNode, depth: number) => {
      if (depth === categorical.length) {
        for (const g of node.groups) {
          const j = relRow[g]!;
          let ok = true;
          for (let x = 0; x < inValue.length && ok; x++) {
            const v = inValue[x]![r]!;
            const lo = relLo[x]![j]!;
            // A missing input value (NaN) fits a missing cell (lo NaN) or `*` (lo −∞) only.
            ok = Number.isNaN(v)
              ? Number.isNaN(lo) || lo === Number.NEGATIVE_INFINITY
              : v >= lo && v <= relHi[x]![j]!;
          }
          if (ok) found.push(g);
        }
        return;
      }
      for (const label of covers[depth]![inCat[depth]![r]!]!) {
        const next = node.children.get(label);
        if (next) walk(next, depth + 1);
      }
    };
    walk(start, 0);
    return found;
  });

  // Flow on edges (input group a → released group b), unbounded per edge.
  const edgeA: number[] = [];
  const edgeB: number[] = [];
  const edgesOfB: number[][] = Array.from({ length: relGroups }, () => []);
  const edgeIds = edgesOf.map((bs, a) =>
    bs.map((b) => {
      const e = edgeA.length;
      edgeA.push(a);
      edgeB.push(b);
      edgesOfB[b]!.push(e);
      return e;
    }),
  );
  const flow = new Float64Array(edgeA.length);
  const supply = Float64Array.from(inCount);
  const capacity = Float64Array.from(relCount);
  const byConstraint = Array.from(inCount, (_, a) => a).sort(
    (x, y) => edgesOf[x]!.length - edgesOf[y]!.length || x - y,
  );
  for (const a of byConstraint) {
    for (const e of edgeIds[a]!) {
      if (supply[a] === 0) break;
      const f = Math.min(supply[a]!, capacity[edgeB[e]!]!);
      if (f > 0) {
        flow[e]! += f;
        supply[a]! -= f;
        capacity[edgeB[e]!]! -= f;
      }
    }
  }
  const graph = { edgeIds, edgeA, edgeB, edgesOfB, flow, supply, capacity };
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
  readonly edgeIds: number[][];
  readonly edgeA: number[];
  readonly edgeB: number[];
  readonly edgesOfB: number[][];
  readonly flow: Float64Array;
  readonly supply: Float64Array;
  readonly capacity: Float64Array;
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
        for (const e of g.edgeIds[a]!) {
          const b = g.edgeB[e]!;
          if (seenB[b] === stamp) continue;
          seenB[b] = stamp;
          viaB[b] = e;
          if (g.capacity[b]! > 0) {
            target = b;
            break search;
          }
          for (const back of g.edgesOfB[b]!) {
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
