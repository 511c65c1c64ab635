/**
 * The release audit behind the amber verdict (docs/release-spec.md, "The verdict"): what a
 * verified release may still give away beyond its models, measured on the staged release and
 * the spec alone (never on what the method says about itself):
 * - the release keeps (almost) nothing: a single class, or a mean NCP ≥ KEEPS_NOTHING_NCP;
 * - a column released unchanged makes rows unique together with the quasi-identifiers as
 *   released (more than UNIQUE_ROWS_ALLOWED rows);
 * - a sensitive attribute no model names has a class where one value's share is ≥ REVEAL_SHARE.
 * Deterministic: a pure function of the spec, the input and the staged table.
 */

import { AVERAGE_RISK } from '../catalogue/average-risk.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import {
  DISTINCT_L_DIVERSITY,
  ENTROPY_L_DIVERSITY,
  RECURSIVE_CL_DIVERSITY,
} from '../catalogue/l-diversity.ts';
import { K_MAP } from '../catalogue/population.ts';
import type { Caution, ReleaseAudit, ReleaseReport, VerdictLevel } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import { labelLoss } from '../metrics/label-loss.ts';
import { isReleasedType, type ReleaseSpec } from '../release-spec/spec.ts';
import { byCodeUnits } from '../util/format.ts';
import type { CodedTable } from '../verify/common.ts';
import { verifierHierarchyRows } from '../verify/hierarchy.ts';
import { fmtNum, fmtPct, showBidi } from './format.ts';
import { methodLimits } from './limits.ts';

/** Mean NCP over the quasi-identifier cells at or above which the release keeps almost nothing. */
export const KEEPS_NOTHING_NCP = 0.9;
/** Rows unique on (quasi-identifiers, an unchanged column) a release may have without amber. */
export const UNIQUE_ROWS_ALLOWED = 0;
/** A class where one value of an unbounded sensitive attribute has this share reveals it. */
export const REVEAL_SHARE = 0.9;

const THRESHOLDS = {
  keepsNothingNcp: KEEPS_NOTHING_NCP,
  uniqueRowsAllowed: UNIQUE_ROWS_ALLOWED,
  revealShare: REVEAL_SHARE,
};

/** Methods whose released rows carry the quasi-identifiers next to the other columns, row by row. */
const ROW_METHODS = new Set(['generalization', 'mondrian']);

/**
 * The columns a method releases with the input's values: the insensitive ones, and the sensitive
 * ones next to generalized QIs; Anatomy and Slicing publish every value exactly (in buckets or
 * permuted within them); randomization keeps what its scenario does not randomize.
 */
export function unchangedColumns(spec: ReleaseSpec): string[] {
  const m = spec.method;
  const exact = (type: string): boolean => {
    if (type === 'insensitive') return true;
    if (m.name === 'anatomy' || m.name === 'slicing') return true;
    if (m.name === 'randomization')
      return (
        (m.scenario === 'rr-s' && type === 'quasi-identifying') ||
        (m.scenario === 'rr-qi' && type === 'sensitive')
      );
    return type === 'sensitive';
  };
  return spec.attributes.filter((a) => isReleasedType(a.type) && exact(a.type)).map((a) => a.name);
}

/**
 * A release not measured row by row (in parts, or by a method that does not release rows with
 * their quasi-identifiers): its unchanged columns named, and amber when a release in parts has some.
 */
export function unmeasuredAudit(spec: ReleaseSpec, why: 'parts' | 'method'): ReleaseAudit {
  const unchanged = unchangedColumns(spec);
  return {
    unchanged,
    measured: false,
    thresholds: THRESHOLDS,
    cautions: [
      ...identityCautions(spec),
      ...(why === 'parts' && unchanged.length > 0
        ? [
            {
              cause: 'not-audited',
              message: `not audited: a release of more than ${AUDIT_MAX_ROWS} rows in parts is not measured for rows the unchanged columns (${unchanged.join(', ')}) make unique`,
            } satisfies Caution,
          ]
        : []),
    ],
  };
}

/** Releases in parts up to this many rows are audited whole; past it, in partitions of about this many rows. */
export const AUDIT_MAX_ROWS = 1_000_000;

/**
 * The audit of a release from its staged table: `released` as read from data.arrow, or from
 * each part's Arrow file in order. `input` needs the columns' values (its dictionaries), not
 * its rows; `inputRows` counts them.
 */
export function auditRelease(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  released: EncodedTable | readonly EncodedTable[],
): ReleaseAudit {
  if (!ROW_METHODS.has(spec.method.name)) return unmeasuredAudit(spec, 'method');
  const coded = concatParts(Array.isArray(released) ? released : [released as EncodedTable]);
  return finish(spec, input, inputRows, tally(spec, coded));
}

/**
 * The same audit of a release in parts too large to hold at once, one partition at a time: the
 * rows of every part whose quasi-identifiers as released hash to the partition (a class never
 * spans two), measured together, and the partitions' tallies added up. `readPart` is called
 * once per part and partition; the figures are the ones `auditRelease` gives over all parts.
 */
export function auditReleaseInPartitions(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  parts: number,
  readPart: (part: number) => EncodedTable,
  partitions: number,
): ReleaseAudit {
  if (!ROW_METHODS.has(spec.method.name)) return unmeasuredAudit(spec, 'method');
  const qiNames = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  const tallies: Tally[] = [];
  for (let p = 0; p < partitions; p++) {
    const pieces: EncodedTable[] = [];
    for (let i = 0; i < parts; i++) pieces.push(rowsOfPartition(readPart(i), qiNames, p, partitions));
    tallies.push(tally(spec, concatParts(pieces)));
  }
  return finish(spec, input, inputRows, mergeTallies(tallies));
}

/**
 * A part's rows whose quasi-identifier labels hash to partition `p` of `partitions`: each label
 * hashed once per dictionary entry (not per row), so the same labels fall in the same partition
 * in every part.
 */
function rowsOfPartition(part: EncodedTable, qiNames: readonly string[], p: number, partitions: number) {
  const qis = part.columns.filter((c) => qiNames.includes(c.name));
  const labelHashes = qis.map((c) =>
    Int32Array.from(c.dictionary, (label) => {
      let h = 0x811c9dc5;
      for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193);
      return h;
    }),
  );
  const keep: number[] = [];
  for (let r = 0; r < part.rowCount; r++) {
    let h = 0x811c9dc5;
    for (let q = 0; q < qis.length; q++) h = Math.imul(h ^ labelHashes[q]![qis[q]!.codes[r]!]!, 0x01000193);
    if ((h >>> 0) % partitions === p) keep.push(r);
  }
  return {
    ...part,
    rowCount: keep.length,
    columns: part.columns.map((c) => ({ ...c, codes: Int32Array.from(keep, (r) => c.codes[r]!) })),
  } as EncodedTable;
}

/** What the audit counts over a set of whole classes; tallies of disjoint classes add up. */
interface Tally {
  rows: number;
  classes: number;
  /** Per quasi-identifier: rows per released label. */
  labels: Map<string, Map<string, number>>;
  /** Per linkable unchanged column: rows it alone makes unique with the class. */
  unique: Map<string, number>;
  /** Per unbounded sensitive column: the class where one value's share is largest. */
  worst: Map<string, { share: number; size: number }>;
  linkable: string[];
  linkage?: { uniqueRows: number; contributions: Record<string, number> };
}

function tally(spec: ReleaseSpec, coded: CodedTable): Tally {
  const at = (name: string) => coded.names.indexOf(name);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying' && at(a.name) >= 0);
  const rows = coded.rowCount;
  const { classOf, classes } = classesOf(
    qis.map((a) => coded.codes[at(a.name)]!),
    rows,
  );
  const labels = new Map<string, Map<string, number>>();
  for (const a of qis) {
    const dictionary = coded.dictionaries[at(a.name)]!;
    const perCode = new Float64Array(dictionary.length);
    for (const code of coded.codes[at(a.name)]!) perCode[code]!++;
    const counts = new Map<string, number>();
    dictionary.forEach((label, code) => {
      if (perCode[code]! > 0) counts.set(label, perCode[code]!);
    });
    labels.set(a.name, counts);
  }
  const bounded = boundedAttributes(spec);
  const unchanged = unchangedColumns(spec).filter((name) => at(name) >= 0);
  const typeOf = (name: string) => spec.attributes.find((a) => a.name === name)!.type;
  const linkable = unchanged.filter((name) => !(typeOf(name) === 'sensitive' && bounded.has(name)));
  const unique = new Map<string, number>();
  const worst = new Map<string, { share: number; size: number }>();
  for (const name of unchanged) {
    const column = coded.codes[at(name)]!;
    const width = coded.dictionaries[at(name)]!.length;
    const pairs = pairCounts(classOf, classes, column, width);
    if (linkable.includes(name)) {
      let n = 0;
      for (let r = 0; r < rows; r++) if (pairs.rows[pairs.of[r]!] === 1) n++;
      unique.set(name, n);
    }
    if (typeOf(name) === 'sensitive' && !bounded.has(name))
      worst.set(name, worstShare(classOf, classes, pairs));
  }
  const linkage = linkable.length > 0 ? jointUniqueness(coded, classOf, classes, linkable) : undefined;
  return { rows, classes, labels, unique, worst, linkable, ...(linkage ? { linkage } : {}) };
}

function mergeTallies(tallies: readonly Tally[]): Tally {
  const [first, ...rest] = tallies;
  const merged: Tally = {
    rows: 0,
    classes: 0,
    labels: new Map(),
    unique: new Map(),
    worst: new Map(),
    linkable: first?.linkable ?? [],
    ...(first?.linkage ? { linkage: { uniqueRows: 0, contributions: {} } } : {}),
  };
  for (const t of [first!, ...rest]) {
    merged.rows += t.rows;
    merged.classes += t.classes;
    for (const [qi, counts] of t.labels) {
      const into = merged.labels.get(qi) ?? new Map<string, number>();
      for (const [label, n] of counts) into.set(label, (into.get(label) ?? 0) + n);
      merged.labels.set(qi, into);
    }
    for (const [c, n] of t.unique) merged.unique.set(c, (merged.unique.get(c) ?? 0) + n);
    for (const [c, w] of t.worst) {
      const m = merged.worst.get(c);
      if (!m || w.share > m.share || (w.share === m.share && w.size > m.size)) merged.worst.set(c, w);
    }
    if (merged.linkage && t.linkage) {
      merged.linkage.uniqueRows += t.linkage.uniqueRows;
      for (const [c, n] of Object.entries(t.linkage.contributions))
        merged.linkage.contributions[c] = (merged.linkage.contributions[c] ?? 0) + n;
    }
  }
  return merged;
}

/** The audit from its tally: the cautions in a fixed order, the same whatever the partitions. */
function finish(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  t: Tally,
): ReleaseAudit {
  const { rows, classes } = t;
  const cautions: Caution[] = identityCautions(spec);
  const ncp = meanNcp(spec, input, inputRows, rows, t.labels);
  if (rows > 1 && classes === 1) {
    cautions.push({
      cause: 'keeps-nothing',
      value: ncp,
      rows,
      message: `the release keeps almost nothing: all ${rows} released rows form a single class (mean NCP ${fmtNum(ncp)})`,
    });
  } else if (rows === 0 || ncp >= KEEPS_NOTHING_NCP) {
    cautions.push({
      cause: 'keeps-nothing',
      value: ncp,
      rows,
      message:
        rows === 0
          ? 'the release keeps nothing: no row was released'
          : `the release keeps almost nothing: mean NCP ${fmtNum(ncp)} ≥ ${KEEPS_NOTHING_NCP} over the quasi-identifiers`,
    });
  }
  for (const name of unchangedColumns(spec)) {
    const unique = t.unique.get(name);
    // A sensitive attribute a model names is what that model bounds; the others can link.
    if (unique !== undefined && unique > UNIQUE_ROWS_ALLOWED) {
      cautions.push({
        cause: 'unique-with-unchanged-column',
        column: name,
        value: unique / rows,
        rows: unique,
        message: `${name} is released unchanged and makes ${unique} of ${rows} rows (${fmtPct(unique / rows)}) unique together with the quasi-identifiers`,
      });
    }
    const worst = t.worst.get(name);
    if (worst && worst.share >= REVEAL_SHARE) {
      cautions.push({
        cause: 'sensitive-revealed',
        column: name,
        value: worst.share,
        rows: worst.size,
        message: `${name} is sensitive and no privacy model bounds it: in a class of ${worst.size} rows one value has a share of ${fmtPct(worst.share)} (≥ ${fmtPct(REVEAL_SHARE)})`,
      });
    }
  }
  // What an attacker sees: every linkable unchanged column at once, next to the quasi-identifiers.
  const linkage = t.linkage
    ? {
        columns: [...t.linkable],
        uniqueRows: t.linkage.uniqueRows,
        share: rows > 0 ? t.linkage.uniqueRows / rows : 0,
        contributions: Object.fromEntries(t.linkable.map((c) => [c, t.linkage!.contributions[c] ?? 0])),
      }
    : undefined;
  if (linkage && t.linkable.length > 1 && linkage.uniqueRows > UNIQUE_ROWS_ALLOWED) {
    const parts = t.linkable.map((c) => `${c} ${linkage.contributions[c]}`).join(', ');
    cautions.push({
      cause: 'unique-with-unchanged-columns',
      value: linkage.share,
      rows: linkage.uniqueRows,
      message: `together, the columns released unchanged (${t.linkable.join(', ')}) make ${linkage.uniqueRows} of ${rows} rows (${fmtPct(linkage.share)}) unique with the quasi-identifiers; rows that stop being unique when one column alone is left out: ${parts}`,
    });
  }
  return {
    unchanged: unchangedColumns(spec),
    measured: true,
    thresholds: THRESHOLDS,
    classes,
    ncp,
    ...(linkage ? { linkage } : {}),
    cautions,
  };
}

/** The sensitive attributes a privacy model names. */
function boundedAttributes(spec: ReleaseSpec): Set<string> {
  return new Set(spec.privacy.flatMap((m) => ('attribute' in m ? [m.attribute] : [])));
}

/**
 * The models that bound identity disclosure (re-identification by linkage on the
 * quasi-identifiers): k-anonymity or k-map with k ≥ 2, an l-diversity with l ≥ 2 (a class then
 * holds at least 2 rows), average risk below 1. Undefined when none does.
 */
export function identityBoundBy(spec: Pick<ReleaseSpec, 'privacy'>): string | undefined {
  for (const m of spec.privacy as readonly { model: string; [p: string]: unknown }[]) {
    const n = (key: string) => (typeof m[key] === 'number' ? (m[key] as number) : 0);
    if ((m.model === K_ANONYMITY.name || m.model === K_MAP.name) && n('k') >= 2) return m.model;
    if (
      (m.model === DISTINCT_L_DIVERSITY.name ||
        m.model === ENTROPY_L_DIVERSITY.name ||
        m.model === RECURSIVE_CL_DIVERSITY.name) &&
      n('l') >= 2
    )
      return m.model;
    if (m.model === AVERAGE_RISK.name && typeof m.threshold === 'number' && m.threshold < 1) return m.model;
  }
  return undefined;
}

/** Amber for a row-releasing method whose models bound no re-identification (e.g. k = 1 alone). */
function identityCautions(spec: ReleaseSpec): Caution[] {
  if (!ROW_METHODS.has(spec.method.name) || identityBoundBy(spec)) return [];
  const models = spec.privacy.map((m) => m.model);
  return [
    {
      cause: 'identity-unbounded',
      message: `no privacy model bounds identity disclosure (${
        models.length > 0 ? models.join(', ') : 'no model'
      }${models.includes(K_ANONYMITY.name) ? ' with k = 1' : ''}): rows may be unique on the quasi-identifiers as released`,
    },
  ];
}

/**
 * Rows unique on (the row's class, every given column) at once, and each column's contribution:
 * the unique rows that stop being unique when that column alone is left out (docs/definitions.md).
 */
function jointUniqueness(
  coded: CodedTable,
  classOf: Int32Array,
  classes: number,
  names: readonly string[],
): { uniqueRows: number; contributions: Record<string, number> } {
  const rows = coded.rowCount;
  const cols = names.map((n) => ({
    codes: coded.codes[coded.names.indexOf(n)]!,
    width: coded.dictionaries[coded.names.indexOf(n)]!.length,
  }));
  // suffix[i]: ids over (columns ≥ i); the prefix over (class, columns < i) is rolled forward,
  // so each leave-one-out grouping is one pass and only the suffixes are held.
  const refine = (ids: { of: Int32Array; count: number }, col: (typeof cols)[number]) =>
    combine(ids, { of: col.codes, count: Math.max(1, col.width) }, rows);
  const suffix: { of: Int32Array; count: number }[] = new Array(cols.length + 1);
  suffix[cols.length] = { of: new Int32Array(rows), count: 1 };
  for (let i = cols.length - 1; i >= 0; i--) suffix[i] = refine(suffix[i + 1]!, cols[i]!);
  const all = uniqueRows(combine({ of: classOf, count: Math.max(1, classes) }, suffix[0]!, rows), rows);
  const contributions: Record<string, number> = {};
  let prefix = { of: classOf, count: Math.max(1, classes) };
  names.forEach((name, i) => {
    contributions[name] = all - uniqueRows(combine(prefix, suffix[i + 1]!, rows), rows);
    prefix = refine(prefix, cols[i]!);
  });
  return { uniqueRows: all, contributions };
}

/**
 * Ids of the pairs (a[r], b[r]), numbered by first appearance: a direct table when the pairs'
 * span is small, else open addressing over typed arrays (a Map of 10⁶ numbers costs seconds).
 */
function combine(
  a: { of: Int32Array; count: number },
  b: { of: Int32Array; count: number },
  rows: number,
): { of: Int32Array; count: number } {
  const of = new Int32Array(rows);
  const span = a.count * b.count;
  let next = 0;
  if (span <= Math.max(4 * rows, 1 << 16)) {
    const ids = new Int32Array(span).fill(-1);
    for (let r = 0; r < rows; r++) {
      const key = a.of[r]! * b.count + b.of[r]!;
      let id = ids[key]!;
      if (id < 0) ids[key] = id = next++;
      of[r] = id;
    }
    return { of, count: Math.max(1, next) };
  }
  let capacity = 1024;
  while (capacity < 2 * rows) capacity *= 2;
  const mask = capacity - 1;
  const keys = new Float64Array(capacity);
  const ids = new Int32Array(capacity).fill(-1);
  for (let r = 0; r < rows; r++) {
    const x = a.of[r]!;
    const y = b.of[r]!;
    const key = x * b.count + y;
    let h = Math.imul(x, 0x9e3779b1) ^ Math.imul(y + 0x7f4a7c15, 0x85ebca77);
    h = Math.imul(h ^ (h >>> 15), 0x2c1b3c6d);
    let slot = (h ^ (h >>> 13)) & mask;
    while (ids[slot]! >= 0 && keys[slot] !== key) slot = (slot + 1) & mask;
    if (ids[slot]! < 0) {
      keys[slot] = key;
      ids[slot] = next++;
    }
    of[r] = ids[slot]!;
  }
  return { of, count: Math.max(1, next) };
}

function uniqueRows(ids: { of: Int32Array; count: number }, rows: number): number {
  const n = new Int32Array(ids.count);
  for (let r = 0; r < rows; r++) n[ids.of[r]!]!++;
  let unique = 0;
  for (let r = 0; r < rows; r++) if (n[ids.of[r]!] === 1) unique++;
  return unique;
}

/**
 * The verdict report.json states and report.html shows: red unless verified; amber when the
 * method leaves identity disclosure open (Anatomy, Slicing, randomization) or on a caution.
 */
export function verdictOf(report: Pick<ReleaseReport, 'verification' | 'privacy' | 'audit' | 'spec'>): {
  level: VerdictLevel;
  causes: string[];
} {
  if (!(report.verification.verified && report.privacy.satisfied))
    return { level: 'not-verified', causes: [] };
  const causes = [
    ...(methodLimits(report as ReleaseReport).identityOpen
      ? [
          `identity disclosure is not prevented: ${report.spec.method} leaves rows linkable on the values it publishes exactly`,
        ]
      : []),
    ...(report.audit?.cautions ?? []).map((c) => c.message),
  ];
  return { level: causes.length > 0 ? 'caution' : 'verified', causes };
}

/** Parts of one release (same columns) as one coded table: each part's codes mapped onto shared dictionaries. */
function concatParts(parts: readonly EncodedTable[]): CodedTable {
  const names = parts[0]?.columns.map((c) => c.name) ?? [];
  const rowCount = parts.reduce((n, p) => n + p.rowCount, 0);
  const dictionaries: string[][] = [];
  const codes = names.map((_, c) => {
    const index = new Map<string, number>();
    const dictionary: string[] = [];
    const out = new Int32Array(rowCount);
    let at = 0;
    for (const part of parts) {
      const column = part.columns[c]!;
      const remap = column.dictionary.map((v) => {
        let k = index.get(v);
        if (k === undefined) index.set(v, (k = dictionary.push(v) - 1));
        return k;
      });
      for (let r = 0; r < part.rowCount; r++) out[at++] = remap[column.codes[r]!]!;
    }
    dictionaries.push(dictionary);
    return out;
  });
  return { names, rowCount, dictionaries, codes };
}

/** The amber verdict's causes as the CLI prints them after its verified line, one a line. */
export function cautionLines(report: Pick<ReleaseReport, 'verdict'>): string {
  // A cause names columns: their bidi controls are shown, not obeyed by the terminal.
  return (report.verdict?.causes ?? []).map((cause) => `  caution: ${showBidi(cause)}\n`).join('');
}

/** Each row's class (rows with equal codes in every column), and how many classes there are. */
function classesOf(columns: Int32Array[], rows: number): { classOf: Int32Array; classes: number } {
  const ids = new Map<string, number>();
  const classOf = new Int32Array(rows);
  for (let r = 0; r < rows; r++) {
    let key = '';
    for (const c of columns) key += `${c[r]},`;
    let id = ids.get(key);
    if (id === undefined) ids.set(key, (id = ids.size));
    classOf[r] = id;
  }
  return { classOf, classes: ids.size };
}

/** Each row's (class, value) pair, and per pair its class and its rows. */
interface Pairs {
  readonly of: Int32Array;
  readonly classOf: Int32Array;
  readonly rows: Int32Array;
}

function pairCounts(classOf: Int32Array, classes: number, column: Int32Array, width: number): Pairs {
  const rows = classOf.length;
  const pairs = combine(
    { of: classOf, count: Math.max(1, classes) },
    { of: column, count: Math.max(1, width) },
    rows,
  );
  const rowsOf = new Int32Array(pairs.count);
  const classOfPair = new Int32Array(pairs.count);
  for (let r = 0; r < rows; r++) {
    rowsOf[pairs.of[r]!]!++;
    classOfPair[pairs.of[r]!] = classOf[r]!;
  }
  return { of: pairs.of, classOf: classOfPair, rows: rowsOf };
}

/** The class where one value has the largest share (ties: the larger class). */
function worstShare(classOf: Int32Array, classes: number, pairs: Pairs): { share: number; size: number } {
  const size = new Int32Array(classes);
  for (let r = 0; r < classOf.length; r++) size[classOf[r]!]!++;
  const top = new Int32Array(classes);
  for (let p = 0; p < pairs.rows.length; p++) {
    const cls = pairs.classOf[p]!;
    if (pairs.rows[p]! > top[cls]!) top[cls] = pairs.rows[p]!;
  }
  let worst = { share: 0, size: 0 };
  for (let c = 0; c < classes; c++) {
    const share = top[c]! / size[c]!;
    if (share > worst.share || (share === worst.share && size[c]! > worst.size))
      worst = { share, size: size[c]! };
  }
  return worst;
}

/**
 * Mean NCP over the quasi-identifier cells of the input's rows: a released cell costs
 * (values its label covers − 1) / (the attribute's distinct values − 1), a `[lo-hi]` range
 * its width over the attribute's range, `*` costs 1; rows left out of the release cost 1 a cell.
 * From the rows per released label, summed in label order: the same figure whatever order the
 * rows are in (a release in parts holds them in another order than the release in one file).
 */
function meanNcp(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  rows: number,
  labels: ReadonlyMap<string, ReadonlyMap<string, number>>,
): number {
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  if (qis.length === 0 || inputRows === 0) return 0;
  let total = (inputRows - rows) * qis.length;
  for (const a of qis) {
    const counts = labels.get(a.name);
    const column = input.columns.find((x) => x.name === a.name);
    if (!counts || !column) {
      total += rows;
      continue;
    }
    const cost = labelCost(column, a.hierarchy);
    for (const label of [...counts.keys()].sort(byCodeUnits)) total += counts.get(label)! * cost(label);
  }
  return Math.min(1, total / (inputRows * qis.length));
}

/** The NCP of one released label of an input column (a label nothing explains: its own value). */
function labelCost(
  column: EncodedTable['columns'][number],
  hierarchy: ReleaseSpec['attributes'][number]['hierarchy'],
): (label: string) => number {
  // The input's dictionaries hold exactly the values its rows hold.
  const values = [...new Set(column.dictionary)];
  if (values.length <= 1) return () => 0;
  const loss = labelLoss(values, hierarchy ? verifierHierarchyRows(column, hierarchy) : undefined);
  return (label) => loss(label) ?? 0;
}
