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

import type { Caution, ReleaseAudit, ReleaseReport, VerdictLevel } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import { labelLoss } from '../metrics/label-loss.ts';
import type { ReleaseSpec } from '../spec/spec.ts';
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
  return spec.attributes.filter((a) => a.type !== 'identifying' && exact(a.type)).map((a) => a.name);
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
    cautions:
      why === 'parts' && unchanged.length > 0
        ? [
            {
              cause: 'not-audited',
              message: `not audited: a release of more than ${AUDIT_MAX_ROWS} rows in parts is not measured for rows the unchanged columns (${unchanged.join(', ')}) make unique`,
            },
          ]
        : [],
  };
}

/** Releases in parts up to this many rows are audited (all their rows are held at once). */
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
  const at = (name: string) => coded.names.indexOf(name);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying' && at(a.name) >= 0);
  const rows = coded.rowCount;
  const { classOf, classes } = classesOf(
    qis.map((a) => coded.codes[at(a.name)]!),
    rows,
  );
  const cautions: Caution[] = [];

  const ncp = meanNcp(spec, input, inputRows, coded);
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

  const bounded = new Set(spec.privacy.flatMap((m) => ('attribute' in m ? [m.attribute] : [])));
  const unchanged = unchangedColumns(spec).filter((name) => at(name) >= 0);
  for (const name of unchanged) {
    const column = coded.codes[at(name)]!;
    const width = coded.dictionaries[at(name)]!.length;
    const counts = pairCounts(classOf, column, width);
    const type = spec.attributes.find((a) => a.name === name)!.type;
    // A sensitive attribute a model names is what that model bounds; the others can link.
    if (!(type === 'sensitive' && bounded.has(name))) {
      let unique = 0;
      for (let r = 0; r < rows; r++) if (counts.get(pairKey(classOf[r]!, column[r]!, width)) === 1) unique++;
      if (unique > UNIQUE_ROWS_ALLOWED) {
        cautions.push({
          cause: 'unique-with-unchanged-column',
          column: name,
          value: unique / rows,
          rows: unique,
          message: `${name} is released unchanged and makes ${unique} of ${rows} rows (${fmtPct(unique / rows)}) unique together with the quasi-identifiers`,
        });
      }
    }
    if (type === 'sensitive' && !bounded.has(name)) {
      const worst = worstShare(classOf, classes, counts, width);
      if (worst.share >= REVEAL_SHARE) {
        cautions.push({
          cause: 'sensitive-revealed',
          column: name,
          value: worst.share,
          rows: worst.size,
          message: `${name} is sensitive and no privacy model bounds it: in a class of ${worst.size} rows one value has a share of ${fmtPct(worst.share)} (≥ ${fmtPct(REVEAL_SHARE)})`,
        });
      }
    }
  }
  return {
    unchanged: unchangedColumns(spec),
    measured: true,
    thresholds: THRESHOLDS,
    classes,
    ncp,
    cautions,
  };
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

const pairKey = (cls: number, code: number, width: number) => cls * width + code;

/** Rows per (class, value) pair. */
function pairCounts(classOf: Int32Array, column: Int32Array, width: number): Map<number, number> {
  const counts = new Map<number, number>();
  for (let r = 0; r < classOf.length; r++) {
    const k = pairKey(classOf[r]!, column[r]!, width);
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return counts;
}

/** The class where one value has the largest share (ties: the larger class). */
function worstShare(
  classOf: Int32Array,
  classes: number,
  counts: Map<number, number>,
  width: number,
): { share: number; size: number } {
  const size = new Int32Array(classes);
  for (let r = 0; r < classOf.length; r++) size[classOf[r]!]!++;
  const top = new Int32Array(classes);
  for (const [k, n] of counts) {
    const cls = Math.floor(k / width);
    if (n > top[cls]!) top[cls] = n;
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
 */
function meanNcp(
  spec: ReleaseSpec,
  input: Pick<EncodedTable, 'columns'>,
  inputRows: number,
  released: CodedTable,
): number {
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const rows = released.rowCount;
  if (qis.length === 0 || inputRows === 0) return 0;
  let total = (inputRows - rows) * qis.length;
  for (const a of qis) {
    const c = released.names.indexOf(a.name);
    const column = input.columns.find((x) => x.name === a.name);
    if (c < 0 || !column) {
      total += rows;
      continue;
    }
    // Rows per label, then summed in label order: the same figure whatever order the rows are
    // in (a release in parts holds them in another order than the release in one file).
    const cost = labelCost(column, a.hierarchy);
    const labels = released.dictionaries[c]!;
    const codes = released.codes[c]!;
    const perCode = new Float64Array(labels.length);
    for (let r = 0; r < rows; r++) perCode[codes[r]!]!++;
    const order = labels.map((_, i) => i).sort((x, y) => byCodeUnits(labels[x]!, labels[y]!));
    for (const code of order) if (perCode[code]! > 0) total += perCode[code]! * cost(labels[code]!);
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
