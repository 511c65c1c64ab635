/**
 * Independent verification of a Slicing release. It shares no code with the partitioning: it
 * re-reads the staged table as strings, parses the tuple-valued columns back into attributes,
 * and recomputes the l-diverse check of docs/definitions.md §4 from scratch, from the released table alone,
 * for every original tuple of the input:
 *   f(t,B) = Π_C (share of B's C-values equal to t[C]) — the SA's column compared on its other
 *   attributes only; p(t,B) = f(t,B)/Σ_B' f(t,B'); D(t,B) = the SA distribution in B among the
 *   rows whose SA-column values match t on those attributes; p(t,s) = Σ_B p(t,B)·D(t,B)[s] ≤ 1/l.
 *
 * Truthfulness uses the builder's witness (each input row's bucket, kept in memory, never
 * published): in every bucket, each column's released values must be exactly the values of the
 * input rows the witness puts there — i.e. each column is a per-bucket permutation of the
 * input's values. No witness passes for a release that is not.
 */

import type { VerificationCheck } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec } from '../release-spec/spec.ts';
import type { StagedPair } from './anatomy.ts';
import { bump, type DecodedTable, fail, releasedNames, SEP, sameTable } from './common.ts';
import { asCsvDecoded } from './staged-csv.ts';

export interface SlicingObservations {
  readonly buckets: number;
  /** Input row → released bucket id (the witness). */
  readonly bucketOfRow: Int32Array;
  /** Attribute names per released column, in release order. */
  readonly columns: readonly (readonly string[])[];
}

/** Relative tolerance of p(t,s) ≤ 1/l, for floating-point rounding. */
const TOLERANCE = 1e-9;

export interface SlicingVerifyInput {
  input: EncodedTable;
  attributes: readonly AttributeSpec[];
  sensitive: string;
  l: number;
  data: StagedPair;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  escapeFormulas?: boolean;
  claims: SlicingObservations;
}

type Add = (name: string, passed: boolean, detail: string) => void;

/** The released table's sliced columns, as the checks read them. */
interface Context {
  readonly table: DecodedTable;
  /** Each sliced column's attributes. */
  readonly groups: string[][];
  readonly rows: number;
  readonly bucketCol: string[];
  readonly inputValue: (name: string) => (r: number) => string;
  /** An input row's value in sliced column j, as the release writes it. */
  readonly project: (j: number, r: number) => string;
}

/**
 * The checks, in order: CSV and Arrow agree, the columns, every value splits into its
 * column's attributes, the per-bucket permutations, the l-diverse check, the claims.
 */
export function verifySlicing(args: SlicingVerifyInput): VerificationCheck[] {
  const checks: VerificationCheck[] = [];
  const add: Add = (name, passed, detail) => checks.push({ name, passed, detail });
  const table: DecodedTable = args.data.arrow;
  const same = sameTable(asCsvDecoded(table, args.escapeFormulas === true), args.data.csv);
  add(
    'csv-equals-arrow',
    same,
    same ? 'data.csv and data.arrow hold the same rows' : 'data.csv and data.arrow differ',
  );
  const ctx = checkColumns(args, table, add);
  if (!ctx) return fail(checks);
  checkPermutations(args, ctx, add);
  const buckets = checkLDiverse(args, ctx, add);
  const claimOk = buckets === args.claims.buckets;
  add('reported-buckets', claimOk, `report claims ${args.claims.buckets} buckets; found ${buckets}`);
  return checks.every((x) => x.passed) ? checks : fail(checks);
}

/**
 * Columns: each names its attributes joined with '+'; together they are the released
 * attributes, each once; then `bucket`. Every value splits into its column's attributes.
 */
function checkColumns(args: SlicingVerifyInput, table: DecodedTable, add: Add): Context | undefined {
  const { input, attributes, claims } = args;
  const released = releasedNames(input, attributes);
  const header = table.names;
  const groups = header.slice(0, -1).map((name) => name.split('+'));
  const flat = groups.flat();
  const columnsOk =
    header.at(-1) === 'bucket' &&
    flat.length === released.length &&
    new Set(flat).size === flat.length &&
    flat.every((a) => released.includes(a)) &&
    groups.length === claims.columns.length &&
    groups.every((g, i) => g.join('+') === claims.columns[i]!.join('+'));
  add(
    'columns',
    columnsOk,
    columnsOk
      ? `${groups.length} sliced columns (${header.slice(0, -1).join(', ')}) cover the released attributes once; identifying columns dropped`
      : `released columns: ${header.join(', ')}`,
  );
  if (!columnsOk) return undefined;

  const rows = table.columns[0]?.length ?? 0;
  const bucketCol = table.columns[groups.length]!;
  const c = groups.length;
  // Each value splits into its column's attributes.
  let malformed = 0;
  for (let j = 0; j < c; j++) {
    for (const v of table.columns[j]!) if (v.split('|').length !== groups[j]!.length) malformed++;
  }
  add(
    'values',
    malformed === 0,
    malformed === 0
      ? "every value splits into its column's attributes"
      : `${malformed} values do not split into their column's attributes`,
  );
  if (malformed > 0) return undefined;
  const inputValue = (name: string) => {
    const col = input.columns.find((x) => x.name === name)!;
    return (r: number) => col.dictionary[col.codes[r]!]!;
  };
  const getters = groups.map((g) => g.map(inputValue));
  return {
    table,
    groups,
    rows,
    bucketCol,
    inputValue,
    project: (j, r) => getters[j]!.map((f) => f(r)).join('|'),
  };
}

/** Per-bucket permutations of the input's values (against the witness). */
function checkPermutations({ input, claims }: SlicingVerifyInput, ctx: Context, add: Add): void {
  const { table, groups, rows, bucketCol, project } = ctx;
  const c = groups.length;
  const expected = new Map<string, number>();
  for (let r = 0; r < input.rowCount; r++) {
    const b = String(claims.bucketOfRow[r]!);
    for (let j = 0; j < c; j++) bump(expected, `${j}${SEP}${b}${SEP}${project(j, r)}`, 1);
  }
  let unmatched = 0;
  for (let i = 0; i < rows; i++) {
    for (let j = 0; j < c; j++) {
      if (!bump(expected, `${j}${SEP}${bucketCol[i]}${SEP}${table.columns[j]![i]}`, -1)) unmatched++;
    }
  }
  const permOk = rows === input.rowCount && unmatched === 0 && expected.size === 0;
  add(
    'bucket-permutations',
    permOk,
    permOk
      ? `every column is, within each bucket, a permutation of the input's values (${rows} rows)`
      : `${unmatched} released values match no input row of their bucket; ${rows} rows for ${input.rowCount} input rows`,
  );
}

/** The l-diverse check (docs/definitions.md), from the released table alone. Returns how many buckets there are. */
function checkLDiverse({ input, sensitive, l }: SlicingVerifyInput, ctx: Context, add: Add): number {
  const { table, groups, rows, bucketCol, inputValue, project } = ctx;
  const c = groups.length;
  const saCol = groups.findIndex((g) => g.includes(sensitive));
  const saPos = groups[saCol]!.indexOf(sensitive);
  const otherPart = (value: string) => {
    const parts = value.split('|');
    parts.splice(saPos, 1);
    return parts.join('|');
  };
  const size = new Map<string, number>();
  // Per column: value (SA column: its other attributes) → bucket → count.
  const index: Map<string, Map<string, number>>[] = groups.map(() => new Map());
  // SA column: bucket → other attributes → SA value → count.
  const saHist = new Map<string, Map<string, Map<string, number>>>();
  for (let i = 0; i < rows; i++) {
    const b = bucketCol[i]!;
    size.set(b, (size.get(b) ?? 0) + 1);
    for (let j = 0; j < c; j++) {
      const raw = table.columns[j]![i]!;
      const v = j === saCol ? otherPart(raw) : raw;
      let byBucket = index[j]!.get(v);
      if (!byBucket) index[j]!.set(v, (byBucket = new Map()));
      byBucket.set(b, (byBucket.get(b) ?? 0) + 1);
    }
    const raw = table.columns[saCol]![i]!;
    let inBucket = saHist.get(b);
    if (!inBucket) saHist.set(b, (inBucket = new Map()));
    const u = otherPart(raw);
    let h = inBucket.get(u);
    if (!h) inBucket.set(u, (h = new Map()));
    const s = raw.split('|')[saPos]!;
    h.set(s, (h.get(s) ?? 0) + 1);
  }
  // The original tuples, as the check sees them (the SA column without the SA).
  const tuples = new Set<string>();
  const saOthers = groups[saCol]!.filter((a) => a !== sensitive).map(inputValue);
  for (let r = 0; r < input.rowCount; r++) {
    const parts: string[] = [];
    for (let j = 0; j < c; j++) {
      parts.push(j === saCol ? saOthers.map((f) => f(r)).join('|') : project(j, r));
    }
    tuples.add(parts.join(SEP));
  }
  let worst = 0;
  let violations = 0;
  let unmatchedTuples = 0;
  for (const key of tuples) {
    const t = key.split(SEP);
    const maps = t.map((v, j) => index[j]!.get(v));
    if (maps.some((m) => m === undefined)) {
      unmatchedTuples++;
      continue;
    }
    let lead = 0;
    for (let j = 1; j < c; j++) if (maps[j]!.size < maps[lead]!.size) lead = j;
    let total = 0;
    const mass = new Map<string, number>();
    for (const b of maps[lead]!.keys()) {
      const n = size.get(b)!;
      let f = 1;
      for (let j = 0; j < c; j++) {
        const count = maps[j]!.get(b);
        if (count === undefined) {
          f = 0;
          break;
        }
        f *= count / n;
      }
      if (f === 0) continue;
      // f(t,B)·D(t,B)[s] = f(t,B) · count(u,s)/count(u) in B.
      const uCount = maps[saCol]!.get(b)!;
      total += f;
      for (const [s, count] of saHist.get(b)!.get(t[saCol]!)!) {
        mass.set(s, (mass.get(s) ?? 0) + (f * count) / uCount);
      }
    }
    for (const m of mass.values()) {
      const p = m / total;
      worst = Math.max(worst, p);
      if (p * l > 1 + TOLERANCE) violations++;
    }
  }
  const lOk = violations === 0 && unmatchedTuples === 0;
  add(
    'l-diverse',
    lOk,
    `${tuples.size} original tuples, ${size.size} buckets: max p(t,s) = ${worst.toFixed(6)} ` +
      `(1/l = ${(1 / l).toFixed(6)}); ${violations} (tuple, value) pairs above 1/l` +
      (unmatchedTuples > 0 ? `; ${unmatchedTuples} tuples match no bucket` : ''),
  );

  return size.size;
}
