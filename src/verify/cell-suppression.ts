/**
 * Independent verification of a generalization release with cell suppression
 * (docs/definitions.md, "Cell suppression"). It shares nothing with the method: it re-reads the
 * staged files, generalizes every input row at the reported node from the hierarchy rows, and
 * checks under the wildcard reading, where a `*` cell matches every value:
 *
 * - every released row is an input row generalized at the node with some QI cells `*` (rows
 *   with every QI `*`, or removed, are the rows suppressed whole); the rows suppressed whole and
 *   those with a cell suppressed are within the spec's limit;
 * - for every input row whose generalized QI tuple v some released row (not suppressed whole)
 *   is consistent with, at least k such released rows are consistent with v. Each released
 *   row's true tuple is one of these, so no released record can be narrowed below k.
 */
import type { VerificationCheck } from '../contracts/report.ts';
import { readArrow } from '../data/arrow.ts';
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec } from '../release-spec/spec.ts';
import {
  checkReleasedColumns,
  checkStagedFiles,
  firstCodes,
  releasedCodesAtNode,
  UNMAPPED,
} from './at-node.ts';
import { type CodedTable, codedTable, fail } from './common.ts';
import { TupleCounts } from './tuples.ts';

/** The suppression token: a suppressed cell, and a wildcard. */
const STAR = '*';

export interface CellSuppressionClaims {
  readonly node: Readonly<Record<string, number>>;
  /** From the spec: the largest k, the suppression limit in rows, masked or removed rows. */
  readonly k: number;
  readonly maxSuppressedRows: number;
  readonly suppressed: 'mask' | 'remove';
  /** The method's observations. */
  readonly suppressedRows: number;
  readonly classes: number;
  readonly minClassSize: number;
  readonly cells: Readonly<Record<string, number>>;
}

export interface CellSuppressionVerifyInput {
  readonly input: EncodedTable;
  readonly attributes: readonly AttributeSpec[];
  /** Per QI, the hierarchy as string rows `[value, level1, …]`. */
  readonly hierarchyRows: ReadonlyMap<string, string[][]>;
  readonly arrow: string | EncodedTable;
  /** The staged CSV's path, read with the input's delimiter. */
  readonly csv?: string | undefined;
  readonly parquet?: string | undefined;
  readonly escapeFormulas?: boolean;
  readonly claims: CellSuppressionClaims;
}

type Add = (name: string, passed: boolean, detail: string) => void;

/** Checks a cell-suppressed release; throws VerificationError listing the failed checks. */
export function verifyCellSuppression(args: CellSuppressionVerifyInput): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const add: Add = (name, passed, detail) => checks.push({ name, passed, detail });
  const { input, claims } = args;
  const arrow = codedTable(typeof args.arrow === 'string' ? readArrow(args.arrow) : args.arrow);
  checkStagedFiles(input, arrow, args, add);
  const names = checkReleasedColumns(input, args.attributes, arrow, add);
  if (!names) return fail(checks);

  const typeOf = new Map(args.attributes.map((a) => [a.name, a.type]));
  const qiIndex = names.flatMap((n, c) => (typeOf.get(n) === 'quasi-identifying' ? [c] : []));
  const qiNames = qiIndex.map((c) => names[c]!);
  const width = names.length;
  const radix = arrow.dictionaries.map((d) => d.length + 2);
  const star = qiIndex.map((c) => arrow.dictionaries[c]!.indexOf(STAR));
  const expected = expectedTuples(args, arrow, names, qiIndex);

  // Released rows by the set of their QI cells reading `*` (a bit string over the QIs).
  const bySet = new Map<string, number[]>();
  const tuple = new Int32Array(width);
  for (let j = 0; j < arrow.rowCount; j++) {
    const set = qiIndex.map((c, q) => (arrow.codes[c]![j] === star[q] ? '1' : '0')).join('');
    let rows = bySet.get(set);
    if (!rows) bySet.set(set, (rows = []));
    rows.push(j);
  }
  const full = '1'.repeat(qiIndex.length);
  const sets = [...bySet.keys()].sort((a, b) => ones(a) - ones(b) || (a < b ? -1 : a > b ? 1 : 0));

  // Matching, fewest stars first: each released row takes an input row that agrees with it
  // wherever it shows no `*` (all other columns included).
  let mismatched = 0;
  // Released rows with a cell suppressed (a `*` where their input row's label is not `*`).
  let touched = 0;
  const cells = new Array<number>(qiIndex.length).fill(0);
  for (const set of sets) {
    const starred = qiIndex.filter((_, q) => set[q] === '1');
    const project = (t: Int32Array): Int32Array => {
      for (const c of starred) t[c] = star[qiIndex.indexOf(c)]!;
      return t;
    };
    const keys = new TupleCounts(width, radix);
    const members: number[][] = [];
    for (let id = 0; id < expected.tuples.size; id++) {
      if (expected.left[id] === 0) continue;
      const key = keys.intern(project(expected.tuple(id, tuple)));
      (members[key] ??= []).push(id);
    }
    for (const j of bySet.get(set)!) {
      for (let c = 0; c < width; c++) tuple[c] = arrow.codes[c]![j]!;
      const key = keys.find(tuple);
      const list = key < 0 ? undefined : members[key];
      while (list && list.length > 0 && expected.left[list[list.length - 1]!] === 0) list.pop();
      if (!list || list.length === 0) {
        mismatched++;
        continue;
      }
      const id = list[list.length - 1]!;
      expected.left[id]!--;
      if (set === full) continue;
      const source = expected.tuple(id, new Int32Array(width));
      let lost = false;
      starred.forEach((c) => {
        const q = qiIndex.indexOf(c);
        if (source[c] !== star[q]) {
          cells[q]!++;
          lost = true;
        }
      });
      if (lost) touched++;
    }
  }
  const masked = bySet.get(full)?.length ?? 0;
  const removed = input.rowCount - arrow.rowCount;
  const rowsOk =
    expected.unmapped === 0 &&
    mismatched === 0 &&
    (claims.suppressed === 'mask' ? removed === 0 : masked === 0);
  add(
    'rows-generalize-input',
    rowsOk,
    rowsOk
      ? 'every released row is an input row generalized at the reported node, some quasi-identifier cells suppressed'
      : `${mismatched} released rows match no input row at the node; ${expected.unmapped} input cells outside the hierarchies; ${removed} rows removed, ${masked} masked (suppressed rows are ${claims.suppressed === 'mask' ? 'masked' : 'removed'})`,
  );
  const suppressedRows = removed + masked;
  const supOk =
    suppressedRows === claims.suppressedRows && suppressedRows + touched <= claims.maxSuppressedRows;
  add(
    'suppression',
    supOk,
    `${suppressedRows} rows suppressed whole (claimed ${claims.suppressedRows}) and ${touched} with cells suppressed, limit ${claims.maxSuppressedRows} in all`,
  );
  const cellsOk = qiNames.every((n, q) => (claims.cells[n] ?? 0) === cells[q]);
  add(
    'cells-suppressed',
    cellsOk,
    `${cells.reduce((a, b) => a + b, 0)} cells suppressed (${qiNames.map((n, q) => `${n} ${cells[q]}`).join(', ')})` +
      (cellsOk ? '' : `; claimed ${JSON.stringify(claims.cells)}`),
  );

  // The wildcard check: per star set, the released rows (not suppressed whole) by their QI cells.
  const qiRadix = qiIndex.map((c) => radix[c]!);
  const patterns = new TupleCounts(qiIndex.length, qiRadix);
  const bySetCounts = sets
    .filter((s) => s !== full)
    .map((set) => {
      const counts = new TupleCounts(qiIndex.length, qiRadix);
      const qi = new Int32Array(qiIndex.length);
      for (const j of bySet.get(set)!) {
        qiIndex.forEach((c, q) => {
          qi[q] = arrow.codes[c]![j]!;
        });
        counts.counts[counts.intern(qi)]++;
        patterns.counts[patterns.intern(qi)]++;
      }
      return { starred: qiIndex.flatMap((_, q) => (set[q] === '1' ? [q] : [])), counts };
    });
  let exposed = 0;
  let exposedRows = 0;
  const v = new Int32Array(qiIndex.length);
  const w = new Int32Array(qiIndex.length);
  for (let id = 0; id < expected.qis.size; id++) {
    expected.qi(id, v);
    let consistent = 0;
    for (const { starred, counts } of bySetCounts) {
      w.set(v);
      for (const q of starred) w[q] = star[q]!;
      const at = counts.find(w);
      if (at >= 0) consistent += counts.counts[at]!;
    }
    if (consistent > 0 && consistent < claims.k) {
      exposed++;
      exposedRows += expected.qis.counts[id]!;
    }
  }
  add(
    'k-anonymity-wildcard',
    exposed === 0,
    exposed === 0
      ? `every released record has at least k = ${claims.k} released records consistent with its quasi-identifiers (* matching every value)`
      : `${exposed} generalized input tuples (${exposedRows} rows) have between 1 and ${claims.k - 1} consistent released records`,
  );
  let minSize = 0;
  for (let p = 0; p < patterns.size; p++) {
    if (minSize === 0 || patterns.counts[p]! < minSize) minSize = patterns.counts[p]!;
  }
  const claimOk = patterns.size === claims.classes && minSize === claims.minClassSize;
  add(
    'reported-classes',
    claimOk,
    `report claims ${claims.classes} classes, smallest ${claims.minClassSize}; found ${patterns.size}, smallest ${minSize}`,
  );
  return checks.every((c) => c.passed) ? checks : fail(checks);
}

function ones(set: string): number {
  let n = 0;
  for (let i = 0; i < set.length; i++) if (set[i] === '1') n++;
  return n;
}

/** The input rows generalized at the node in released codes: whole tuples, and QI tuples alone. */
function expectedTuples(
  { input, hierarchyRows, claims }: CellSuppressionVerifyInput,
  arrow: CodedTable,
  names: readonly string[],
  qiIndex: readonly number[],
) {
  const width = names.length;
  const radix = arrow.dictionaries.map((d) => d.length + 2);
  const columnOf = new Map(input.columns.map((c) => [c.name, c]));
  const isQi = names.map((_, c) => qiIndex.includes(c));
  const releasedIndex = arrow.dictionaries.map(firstCodes);
  const toReleased = releasedCodesAtNode(input, names, isQi, releasedIndex, claims.node, hierarchyRows);
  const inputCodes = names.map((n) => columnOf.get(n)!.codes);
  const tuples = new TupleCounts(width, radix);
  const qis = new TupleCounts(
    qiIndex.length,
    qiIndex.map((c) => radix[c]!),
  );
  const rows: number[] = [];
  const qiRows: number[] = [];
  const tuple = new Int32Array(width);
  const qi = new Int32Array(qiIndex.length);
  let unmapped = 0;
  for (let r = 0; r < input.rowCount; r++) {
    for (let c = 0; c < width; c++) {
      const value = toReleased[c]![inputCodes[c]![r]!]!;
      if (value === UNMAPPED) unmapped++;
      tuple[c] = value;
    }
    const id = tuples.intern(tuple);
    if (tuples.counts[id] === 0) rows[id] = r;
    tuples.counts[id]++;
    qiIndex.forEach((c, q) => {
      qi[q] = tuple[c]!;
    });
    const q = qis.intern(qi);
    if (qis.counts[q] === 0) qiRows[q] = r;
    qis.counts[q]++;
  }
  const left = tuples.counts.slice(0, tuples.size);
  return {
    tuples,
    qis,
    left,
    unmapped,
    /** Distinct tuple `id` written into `out`. */
    tuple(id: number, out: Int32Array): Int32Array {
      const r = rows[id]!;
      for (let c = 0; c < width; c++) out[c] = toReleased[c]![inputCodes[c]![r]!]!;
      return out;
    },
    /** Distinct QI tuple `id` (of `qis`) written into `out`. */
    qi(id: number, out: Int32Array): Int32Array {
      const r = qiRows[id]!;
      qiIndex.forEach((c, q) => {
        out[q] = toReleased[c]![inputCodes[c]![r]!]!;
      });
      return out;
    },
  };
}
