/**
 * Special uniques and survey-weighted risk, per record (docs/risk.md):
 * - minimal sample uniques (MSUs): the smallest sets of quasi-identifiers, up to 3 of them, on
 *   which a record is the only one with its values, counted per record with a SUDA score;
 * - the individual risk of a survey sample whose records carry design weights, with the
 *   expected number of re-identifications.
 */
import { columnRows, type EncodedColumn, type RowNames } from '../data/table.ts';
import { collapseRows } from '../data/tuples.ts';
import { PpdpError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';

export interface SpecialUniques {
  /** Largest MSU size searched (3, or fewer quasi-identifiers). */
  maxSize: number;
  records: number;
  /** Records with at least one MSU, and their share. */
  recordsWithMsu: number;
  shareWithMsu: number;
  /** MSUs found, by size (index 0 = size 1). */
  msusBySize: number[];
  /** Per record: MSUs and SUDA score. */
  msuCount: Int32Array;
  score: Float64Array;
  maxScore: number;
  meanScore: number;
}

/**
 * MSUs up to `maxSize` attributes: a set S is an MSU of record r when r is alone on S's values
 * and on no subset of S (enough to check the subsets one smaller: uniqueness carries to
 * supersets). An MSU of size k scores Π_{i=k}^{m−1} (q − i) (q quasi-identifiers, m the
 * largest size searched): small MSUs weigh more.
 */
export function specialUniques(
  qis: readonly EncodedColumn[],
  kernel: GroupingKernel,
  maxSize = 3,
): SpecialUniques {
  const q = qis.length;
  const m = Math.min(maxSize, q);
  const n = qis[0]?.codes.length ?? 0;
  const msuCount = new Int32Array(n);
  const score = new Float64Array(n);
  const msusBySize = Array.from({ length: m }, () => 0);
  let previous = new Map<string, Uint8Array>();
  for (let k = 1; k <= m; k++) {
    let weight = 1;
    for (let i = k; i < m; i++) weight *= q - i;
    const current = new Map<string, Uint8Array>();
    for (const subset of combinations(q, k)) {
      const unique = aloneOn(
        subset.map((i) => qis[i]!),
        kernel,
      );
      const parents =
        k === 1 ? [] : subset.map((_, drop) => previous.get(subset.filter((__, j) => j !== drop).join())!);
      let found = 0;
      rows: for (let r = 0; r < n; r++) {
        if (unique[r] === 0) continue;
        for (let p = 0; p < parents.length; p++) if (parents[p]![r] === 1) continue rows;
        msuCount[r]!++;
        score[r]! += weight;
        found++;
      }
      msusBySize[k - 1]! += found;
      current.set(subset.join(), unique);
    }
    previous = current;
  }
  let withMsu = 0;
  let maxScore = 0;
  let sum = 0;
  for (let r = 0; r < n; r++) {
    if (msuCount[r]! > 0) withMsu++;
    maxScore = Math.max(maxScore, score[r]!);
    sum += score[r]!;
  }
  return {
    maxSize: m,
    records: n,
    recordsWithMsu: withMsu,
    shareWithMsu: n > 0 ? withMsu / n : 0,
    msusBySize,
    msuCount,
    score,
    maxScore,
    meanScore: n > 0 ? sum / n : 0,
  };
}

/** 1 for the rows alone on these columns' values: counted in a dense array when the value combinations are few, else grouped by the kernel. */
function aloneOn(columns: EncodedColumn[], kernel: GroupingKernel): Uint8Array {
  const n = columns[0]!.codes.length;
  const unique = new Uint8Array(n);
  const combinations = columns.reduce((p, c) => p * Math.max(1, c.dictionary.length), 1);
  if (combinations > 1 << 22) {
    const { counts, rowToTuple } = collapseRows(kernel, columns);
    for (let r = 0; r < n; r++) unique[r] = counts[rowToTuple[r]!] === 1 ? 1 : 0;
    return unique;
  }
  const key = new Int32Array(n);
  for (const c of columns) {
    const d = Math.max(1, c.dictionary.length);
    for (let r = 0; r < n; r++) key[r] = key[r]! * d + c.codes[r]!;
  }
  const counts = new Int32Array(combinations);
  for (let r = 0; r < n; r++) counts[key[r]!]!++;
  for (let r = 0; r < n; r++) unique[r] = counts[key[r]!] === 1 ? 1 : 0;
  return unique;
}

/** The k-subsets of 0..q−1 in lexicographic order. */
function* combinations(q: number, k: number): Generator<number[]> {
  const c = Array.from({ length: k }, (_, i) => i);
  while (true) {
    yield [...c];
    let i = k - 1;
    while (i >= 0 && c[i] === q - k + i) i--;
    if (i < 0) return;
    c[i]!++;
    for (let j = i + 1; j < k; j++) c[j] = c[j - 1]! + 1;
  }
}

export interface WeightedRisk {
  weight: string;
  records: number;
  /** Estimated population represented: the sum of the weights. */
  population: number;
  /** Σ over records of their individual risk. */
  expectedReidentifications: number;
  /** expectedReidentifications / records. */
  globalRisk: number;
  maxRisk: number;
  /** Records whose individual risk exceeds the threshold, and their share. */
  recordsAbove: number;
  shareAbove: number;
  threshold: number;
}

/**
 * The individual risk of each record of a class with f sample records whose weights sum to F
 * (p = f/F): p/(1−p)·ln(1/p) when f = 1; p/(1−p) − (p/(1−p))²·ln(1/p) when f = 2;
 * p/(f − (1 − p)) above. When F ≤ f (the class is its whole population) the risk is 1/f.
 */
export function classRisk(f: number, F: number): number {
  const p = f / F;
  if (!(p < 1)) return 1 / f;
  const odds = p / (1 - p);
  if (f === 1) return odds * Math.log(1 / p);
  if (f === 2) return odds - odds * odds * Math.log(1 / p);
  return p / (f - (1 - p));
}

/**
 * Survey-weighted risk over classes (`rowToClass`), with each record's weight read from `weight`
 * (`rows`: how its table's rows are named in messages).
 */
export function weightedRisk(
  rowToClass: Int32Array,
  keep: (row: number) => boolean,
  weight: EncodedColumn,
  threshold: number,
  rows: RowNames = columnRows,
): WeightedRisk {
  const value = weight.dictionary.map(Number);
  let classes = 0;
  for (const c of rowToClass) classes = Math.max(classes, c + 1);
  const f = new Float64Array(classes);
  const F = new Float64Array(classes);
  let records = 0;
  let population = 0;
  for (let r = 0; r < rowToClass.length; r++) {
    if (!keep(r)) continue;
    const w = value[weight.codes[r]!]!;
    if (!(Number.isFinite(w) && w > 0)) {
      throw new PpdpError(
        'E_WEIGHT',
        `${rows(weight.name, [r])}, weight column ${weight.name}: not a positive number`,
        'a design weight is the number of people a record stands for (≥ 1); fix the column or name another with --weight',
      );
    }
    f[rowToClass[r]!]!++;
    F[rowToClass[r]!]! += w;
    records++;
    population += w;
  }
  let expected = 0;
  let maxRisk = 0;
  let above = 0;
  for (let c = 0; c < classes; c++) {
    if (f[c] === 0) continue;
    const risk = classRisk(f[c]!, F[c]!);
    expected += f[c]! * risk;
    maxRisk = Math.max(maxRisk, risk);
    if (risk > threshold) above += f[c]!;
  }
  return {
    weight: weight.name,
    records,
    population,
    expectedReidentifications: expected,
    globalRisk: records > 0 ? expected / records : 0,
    maxRisk,
    recordsAbove: above,
    shareAbove: records > 0 ? above / records : 0,
    threshold,
  };
}
