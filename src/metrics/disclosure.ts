/**
 * Attribute-disclosure measures of a partition release (Brickell & Shmatikov),
 * computed for one sensitive attribute from per-class SA histograms, next to the two trivial
 * sanitizations as baselines (QIs withheld: one class of all rows; SA withheld).
 *
 * - l (distinct, entropy), t and δ (natural log) of the worst class; t is the EMD under the
 *   default rule of an attribute no model names (ordered when every value is a number, else
 *   equal: withColumnDefaults), given the SA's values, and says which (`tDistance`);
 * - knowledge gain A_know: mean over released rows of the Jensen–Shannon divergence (natural
 *   log) between the row's class SA distribution and the table's;
 * - accuracy gain A_acc = (1/N)·Σ_E |E|·max_s p(E,s) − max_s p(T,s);
 * - the accuracy of guessing each row's SA as its class's most frequent value, against the
 *   same guess with QIs withheld (the table's most frequent value), with the SA withheld (a
 *   uniform guess), and on the original table (each original QI tuple's most frequent value).
 */

import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import type { SensitiveDistribution } from '../contracts/report.ts';
import { orderedDistance, orderedWalk } from '../models/t-closeness.ts';
import { allNumbers } from '../util/numbers.ts';

/** The distance the disclosure measures' t is taken with. */
export type TDistance = 'equal' | 'ordered';

export interface DisclosureMeasures {
  attribute: string;
  /** Measures over the release's retained classes. */
  release: Measures;
  /** Baseline: the QIs withheld, every row in one class. */
  qisWithheld: Measures;
  /** Baseline: the SA withheld. */
  saWithheld: Measures;
  /** Accuracy of predicting the SA (Brickell & Shmatikov's utility). */
  accuracy: { release: number; qisWithheld: number; saWithheld: number; original: number };
  /** The distance t is measured with (see disclosureMeasures). */
  tDistance: TDistance;
  /** With an entity column: every figure is counted over persons, each weighing 1 (classes' weights). */
  over?: 'persons';
  note: string;
}

export interface Measures {
  distinctL: number | null;
  entropyL: number | null;
  t: number;
  delta: number;
  knowledgeGain: number;
  accuracyGain: number;
}

/**
 * Classes as histograms: `counts[g * width + s]`, only classes with `keep[g]` counted. With an
 * entity column the counts are person weights (a class's add up to its persons).
 */
export interface ClassHistogramSet {
  readonly groups: number;
  readonly width: number;
  readonly counts: Int32Array | Float64Array;
  readonly keep: (g: number) => boolean;
}

/**
 * Classes as sparse histograms, for an SA of many values (an amount): class `g` holds the
 * values `values[i]` (in code order) `counts[i]` times, for `i` from `offsets[g]` to
 * `offsets[g + 1]`. Memory grows with the rows, where the dense form's grows with classes × values.
 */
export interface SparseClassHistograms {
  readonly groups: number;
  readonly width: number;
  readonly offsets: Int32Array;
  readonly values: Int32Array;
  readonly counts: Int32Array | Float64Array;
  readonly keep: (g: number) => boolean;
}

/**
 * One class's entries: `codes[i]` holds `counts[i]`. Dense, every value of the SA (zeros
 * too); sparse, those the class holds.
 */
function entriesOf(
  classes: ClassHistogramSet | SparseClassHistograms,
  g: number,
  identity: Int32Array,
): { codes: Int32Array; counts: Int32Array | Float64Array } {
  if ('offsets' in classes) {
    const from = classes.offsets[g]!;
    const to = classes.offsets[g + 1]!;
    return { codes: classes.values.subarray(from, to), counts: classes.counts.subarray(from, to) };
  }
  return { codes: identity, counts: classes.counts.subarray(g * classes.width, (g + 1) * classes.width) };
}

/**
 * Per class, the counts of the SA codes its items hold, in code order: item `i` (a row, or a
 * tuple weighing `weights[i]` rows) is in class `groupOf[i]` and holds code `codes[i]` (−1
 * for either: not counted). When the classes × values matrix is no larger than the items, it is
 * counted and read off in one pass each; otherwise two counting sorts (by code, then stably by
 * class) put each class's items in code order: time and memory linear in the items, values and
 * classes, where the matrix is quadratic for an SA of many values (an amount per row).
 */
export function sparseClassHistograms(
  groupOf: ArrayLike<number>,
  groups: number,
  width: number,
  codes: ArrayLike<number>,
  keep: (g: number) => boolean,
  weights?: ArrayLike<number>,
): SparseClassHistograms {
  const n = groupOf.length;
  const counted = (i: number) =>
    groupOf[i]! >= 0 && codes[i]! >= 0 && (weights === undefined || weights[i] !== 0);
  if (groups * width <= Math.max(n, 1 << 16)) {
    // Dense counts, then each class's nonzero cells: two passes, no sort.
    const cells = new Int32Array(groups * width);
    for (let i = 0; i < n; i++)
      if (counted(i)) cells[groupOf[i]! * width + codes[i]!]! += weights === undefined ? 1 : weights[i]!;
    let nonzero = 0;
    for (let x = 0; x < cells.length; x++) if (cells[x] !== 0) nonzero++;
    const offsets = new Int32Array(groups + 1);
    const values = new Int32Array(nonzero);
    const counts = new Int32Array(nonzero);
    let at = 0;
    for (let g = 0, x = 0; g < groups; g++) {
      for (let c = 0; c < width; c++, x++) {
        if (cells[x] === 0) continue;
        values[at] = c;
        counts[at++] = cells[x]!;
      }
      offsets[g + 1] = at;
    }
    return { groups, width, offsets, values, counts, keep };
  }
  const code = new Int32Array(n);
  const byCodeEnd = new Int32Array(width + 1);
  for (let i = 0; i < n; i++) {
    const c = counted(i) ? codes[i]! : -1;
    code[i] = c;
    if (c >= 0) byCodeEnd[c + 1]!++;
  }
  for (let c = 0; c < width; c++) byCodeEnd[c + 1]! += byCodeEnd[c]!;
  const byCode = new Int32Array(byCodeEnd[width]!);
  for (let i = 0; i < n; i++) if (code[i]! >= 0) byCode[byCodeEnd[code[i]!]!++] = i;
  const start = new Int32Array(groups + 1);
  for (const i of byCode) start[groupOf[i]! + 1]!++;
  for (let g = 0; g < groups; g++) start[g + 1]! += start[g]!;
  const fill = start.slice(0, groups);
  const byClass = new Int32Array(byCode.length);
  for (const i of byCode) byClass[fill[groupOf[i]!]!++] = i;
  const offsets = new Int32Array(groups + 1);
  const values = new Int32Array(byClass.length);
  const counts = new Int32Array(byClass.length);
  const weightOf = (i: number) => (weights === undefined ? 1 : weights[i]!);
  let at = 0;
  for (let g = 0; g < groups; g++) {
    const first = at;
    for (let x = start[g]!; x < start[g + 1]!; x++) {
      const i = byClass[x]!;
      if (at > first && values[at - 1] === code[i]) counts[at - 1]! += weightOf(i);
      else {
        values[at] = code[i]!;
        counts[at++] = weightOf(i);
      }
    }
    offsets[g + 1] = at;
  }
  return { groups, width, offsets, values: values.subarray(0, at), counts: counts.subarray(0, at), keep };
}

export function disclosureMeasures(
  attribute: string,
  classes: ClassHistogramSet | SparseClassHistograms,
  /** The input's own classes, or just their `ModeCounts`. */
  original: ClassHistogramSet | SparseClassHistograms | ModeCounts,
  table: Float64Array,
  /**
   * The SA's values by code: t is then measured with the default rule's distance (ordered, the
   * values sorted numerically, when every value is a number); without them, equal distance.
   */
  values?: readonly string[],
  /** The counts (and `table`) are person weights: the measures say they count persons. */
  overPersons = false,
): DisclosureMeasures {
  const width = classes.width;
  const order =
    values && values.length === width && allNumbers(values)
      ? orderedWalk(
          values.map((_, s) => s).sort((a, b) => Number(values[a]) - Number(values[b])),
          table,
        )
      : undefined;
  const identity = Int32Array.from({ length: width }, (_, s) => s);
  let tableMax = 0;
  let tableDistinct = 0;
  let tableEntropy = 0;
  let tableTotal = 0;
  for (const q of table) {
    tableMax = Math.max(tableMax, q);
    tableTotal += q;
    if (q > 0) {
      tableDistinct++;
      tableEntropy -= q * Math.log(q);
    }
  }
  let rows = 0;
  let distinctL = Number.POSITIVE_INFINITY;
  let entropyL = Number.POSITIVE_INFINITY;
  let t = 0;
  let delta = 0;
  let js = 0;
  let correct = 0;
  for (let g = 0; g < classes.groups; g++) {
    if (!classes.keep(g)) continue;
    const { codes, counts: h } = entriesOf(classes, g, identity);
    let size = 0;
    for (const c of h) size += c;
    if (size === 0) continue;
    rows += size;
    let distinct = 0;
    let entropy = 0;
    let tv = 0;
    let best = 0;
    let jsd = 0;
    let covered = 0;
    for (let i = 0; i < h.length; i++) {
      // A count of 0 is a value the class lacks, summed below with the others.
      if (!(h[i]! > 0)) continue;
      const p = h[i]! / size;
      const q = table[codes[i]!]!;
      covered += q;
      best = Math.max(best, h[i]!);
      distinct++;
      entropy -= p * Math.log(p);
      delta = Math.max(delta, Math.abs(Math.log(p / q)));
      // tv as equal t-closeness sums it (src/models/t-closeness.ts), so the two t agree.
      tv += Math.abs(p - q);
      const mid = (p + q) / 2;
      jsd += 0.5 * p * Math.log(p / mid);
      if (q > 0) jsd += 0.5 * q * Math.log(q / mid);
    }
    if (distinct < width) {
      // The values the class lacks (p = 0), dense or sparse, at once: each adds q to tv and
      // q·ln 2 / 2 to jsd. (Both layouts then give the same figures, to the last digit.)
      const rest = Math.max(0, tableTotal - covered);
      tv += rest;
      jsd += 0.5 * Math.LN2 * rest;
    }
    distinctL = Math.min(distinctL, distinct);
    entropyL = Math.min(entropyL, Math.exp(entropy));
    t = Math.max(t, order ? orderedDistance(codes, h, size, table, order) : tv / 2);
    js += size * jsd;
    correct += best;
  }
  const none = rows === 0;
  const release: Measures = {
    distinctL: none ? null : distinctL,
    entropyL: none ? null : entropyL,
    t,
    delta,
    knowledgeGain: none ? 0 : js / rows,
    accuracyGain: none ? 0 : correct / rows - tableMax,
  };
  const { correct: originalCorrect, rows: originalRows } =
    'counts' in original ? modeCounts(original) : original;
  const trivial = { t: 0, delta: 0, knowledgeGain: 0, accuracyGain: 0 };
  return {
    attribute,
    release,
    qisWithheld: { distinctL: tableDistinct, entropyL: Math.exp(tableEntropy), ...trivial },
    saWithheld: { distinctL: null, entropyL: null, ...trivial },
    accuracy: {
      release: none ? tableMax : correct / rows,
      qisWithheld: tableMax,
      saWithheld: tableDistinct > 0 ? 1 / tableDistinct : 0,
      original: originalRows > 0 ? originalCorrect / originalRows : 0,
    },
    tDistance: order ? 'ordered' : 'equal',
    ...(overPersons ? { over: 'persons' as const } : {}),
    note: overPersons
      ? 'Measures over the released (not suppressed) classes, counted over persons: each person weighs 1 ' +
        'in a class, split evenly over their rows’ values there, as the privacy models count them; ' +
        'δ and A_know use natural logarithms (ARX uses log2 for δ); A_know is the Jensen–Shannon ' +
        'divergence. Accuracy is that of guessing each person’s sensitive value as the most frequent ' +
        'one of what the release shows about it.'
      : 'Measures over the released (not suppressed) classes; δ and A_know use natural logarithms ' +
        '(ARX uses log2 for δ); A_know is the Jensen–Shannon divergence. Accuracy is that of guessing ' +
        'each row’s sensitive value as the most frequent one of what the release shows about it.',
  };
}

/** Over a set of classes: the rows of each class's most frequent value, summed, and all rows. */
export interface ModeCounts {
  readonly correct: number;
  readonly rows: number;
}

/**
 * The mode counts of the input's own classes (rows with equal codes in every `qis` column),
 * for a method that releases no lattice node: the rows sorted by their QI codes, each run of
 * equal codes one class.
 */
export function inputModeCounts(
  qis: readonly ArrayLike<number>[],
  sensitive: ArrayLike<number>,
  width: number,
): ModeCounts {
  const rows = sensitive.length;
  const order = Int32Array.from({ length: rows }, (_, r) => r).sort((a, b) => {
    for (const codes of qis) if (codes[a] !== codes[b]) return codes[a]! - codes[b]!;
    return 0;
  });
  const same = (a: number, b: number) => qis.every((codes) => codes[a] === codes[b]);
  const histogram = new Int32Array(width);
  let correct = 0;
  for (let start = 0; start < rows; ) {
    let end = start;
    let best = 0;
    while (end < rows && same(order[start]!, order[end]!)) {
      const c = ++histogram[sensitive[order[end]!]!]!;
      if (c > best) best = c;
      end++;
    }
    for (let i = start; i < end; i++) histogram[sensitive[order[i]!]!] = 0;
    correct += best;
    start = end;
  }
  return { correct, rows };
}

export function modeCounts(classes: ClassHistogramSet | SparseClassHistograms): ModeCounts {
  const identity = new Int32Array(0); // (only the counts are read)
  let correct = 0;
  let rows = 0;
  for (let g = 0; g < classes.groups; g++) {
    let best = 0;
    for (const c of entriesOf(classes, g, identity).counts) {
      best = Math.max(best, c);
      rows += c;
    }
    correct += best;
  }
  return { correct, rows };
}

/**
 * A sensitive attribute's value shares over the table (`table`) and in the kept class with the
 * largest share of one value: what an attacker learns at worst, next to what everyone knows.
 * Values are ordered by their share of the table and not named. Null when no class is kept.
 */
export function sensitiveDistribution(
  attribute: string,
  classes: ClassHistogramSet | SparseClassHistograms,
  table: ArrayLike<number>,
  /** The SA's values by code: when every one is a number, the spread per class is summarized too. */
  values?: readonly string[],
): SensitiveDistribution | null {
  const { width } = classes;
  const identity = Int32Array.from({ length: width }, (_, s) => s);
  let worst = -1;
  let worstShare = -1;
  let worstSize = 0;
  for (let g = 0; g < classes.groups; g++) {
    if (!classes.keep(g)) continue;
    let size = 0;
    let top = 0;
    for (const c of entriesOf(classes, g, identity).counts) {
      size += c;
      top = Math.max(top, c);
    }
    if (size > 0 && top / size > worstShare) {
      worstShare = top / size;
      worst = g;
      worstSize = size;
    }
  }
  if (worst < 0) return null;
  const order = Array.from({ length: width }, (_, s) => s).sort((x, y) => table[y]! - table[x]! || x - y);
  // The worst class's counts by code (0 for the values it lacks).
  const shares = new Float64Array(width);
  const held = entriesOf(classes, worst, identity);
  for (let i = 0; i < held.codes.length; i++) shares[held.codes[i]!] = held.counts[i]! / worstSize;
  return {
    attribute,
    overall: order.map((s) => table[s]!),
    worstClass: order.map((s) => shares[s]!),
    // (Person weights add up to a class's persons, up to rounding.)
    worstClassSize: Math.round(worstSize),
    ...(values && values.length === width && allNumbers(values)
      ? { numeric: numericSpread(classes, table, values) }
      : {}),
  };
}

/**
 * A numeric sensitive attribute's spread, overall and per released class, as widths (never
 * values): the range (max − min) and the interquartile range, and over the classes the
 * narrowest range (what a class narrows a value to at worst, with that class's rows), the
 * median range and the smallest IQR. A class is walked over the values it holds.
 */
function numericSpread(
  classes: ClassHistogramSet | SparseClassHistograms,
  table: ArrayLike<number>,
  values: readonly string[],
): NonNullable<SensitiveDistribution['numeric']> {
  const { width } = classes;
  const order = values.map((_, s) => s).sort((a, b) => Number(values[a]) - Number(values[b]));
  const position = new Int32Array(width);
  order.forEach((s, j) => {
    position[s] = j;
  });
  const numericOrder = Int32Array.from(order);
  const identity = Int32Array.from({ length: width }, (_, s) => s);
  /** Over codes `at(k)`, k < n, in numeric order, each weighing `weight(k)`. */
  const spread = (n: number, at: (k: number) => number, weight: (k: number) => number, total: number) => {
    let lo = Number.NaN;
    let hi = Number.NaN;
    let q1 = Number.NaN;
    let q3 = Number.NaN;
    let cumulative = 0;
    for (let k = 0; k < n; k++) {
      const w = weight(k);
      if (w <= 0) continue;
      const v = Number(values[at(k)]);
      if (Number.isNaN(lo)) lo = v;
      hi = v;
      cumulative += w;
      if (Number.isNaN(q1) && cumulative >= total * 0.25) q1 = v;
      if (Number.isNaN(q3) && cumulative >= total * 0.75) q3 = v;
    }
    return { range: hi - lo, iqr: q3 - q1 };
  };
  let tableTotal = 0;
  for (let s = 0; s < width; s++) tableTotal += table[s]!;
  const overall = spread(
    width,
    (k) => order[k]!,
    (k) => table[order[k]!]!,
    tableTotal,
  );
  const ranges: number[] = [];
  let narrowest = { range: Number.POSITIVE_INFINITY, size: 0 };
  let smallestIqr = Number.POSITIVE_INFINITY;
  for (let g = 0; g < classes.groups; g++) {
    if (!classes.keep(g)) continue;
    const { codes, counts } = entriesOf(classes, g, identity);
    let size = 0;
    for (const c of counts) size += c;
    if (size === 0) continue;
    // The class's entries in numeric order (dense: the values' order).
    const sorted =
      codes === identity
        ? numericOrder
        : Int32Array.from(codes.keys()).sort((a, b) => position[codes[a]!]! - position[codes[b]!]!);
    const c = spread(
      sorted.length,
      (k) => codes[sorted[k]!]!,
      (k) => counts[sorted[k]!]!,
      size,
    );
    ranges.push(c.range);
    if (c.range < narrowest.range || (c.range === narrowest.range && size > narrowest.size))
      narrowest = { range: c.range, size: Math.round(size) };
    smallestIqr = Math.min(smallestIqr, c.iqr);
  }
  ranges.sort((a, b) => a - b);
  const mid = ranges.length >> 1;
  return {
    range: overall.range,
    iqr: overall.iqr,
    classes: ranges.length,
    narrowestClassRange: narrowest.range,
    narrowestClassSize: narrowest.size,
    medianClassRange: ranges.length % 2 === 1 ? ranges[mid]! : (ranges[mid - 1]! + ranges[mid]!) / 2,
    smallestClassIqr: smallestIqr,
  };
}

/**
 * The one t a page shows for a sensitive attribute, with its distance: what a t-closeness model
 * on it achieved, under the model's distance; else the disclosure measures' t (default rule).
 */
export function attributeT(
  attribute: string,
  measures: { readonly release: { readonly t: number }; readonly tDistance?: string } | undefined,
  models: readonly {
    readonly model: string;
    readonly params: Readonly<Record<string, unknown>>;
    readonly achieved: Readonly<Record<string, number>>;
  }[],
): { t: number; distance: string } | undefined {
  const m = models.find(
    (x) =>
      x.model === T_CLOSENESS.name && x.params.attribute === attribute && typeof x.achieved.t === 'number',
  );
  if (m && typeof m.params.distance === 'string') return { t: m.achieved.t!, distance: m.params.distance };
  return measures ? { t: measures.release.t, distance: measures.tDistance ?? 'equal' } : undefined;
}
