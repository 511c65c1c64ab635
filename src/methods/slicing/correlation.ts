/**
 * Slicing's attribute partitioning, part 1 (docs/definitions.md §4; Li, Li, Zhang, Molloy): correlations between
 * attributes and k-medoids clustering on them.
 *
 * - Numeric attributes are discretized first: by level 1 of their hierarchy when the spec gives
 *   one, else into (at most) 10 equal-frequency bins of their sorted values.
 * - φ²(A,B) = (1/(min(dA,dB) − 1)) · Σ_ij (f_ij − f_i·f_·j)² / (f_i·f_·j) over relative
 *   frequencies (the mean-square contingency coefficient, in [0, 1]); 0 when an attribute has
 *   a single value.
 * - PAM (Kaufman & Rousseeuw): BUILD then SWAP until no swap lowers the total distance, on the
 *   distance 1 − φ²; ties broken by the lower attribute index, so the result is deterministic.
 */
import { codeCounts, type EncodedColumn, isMissing } from '../../data/table.ts';
import type { Hierarchy } from '../../hierarchy/hierarchy.ts';
import { isNumber } from '../../util/numbers.ts';

export const EQUAL_FREQUENCY_BINS = 10;

/** Numeric: `"scale": "numeric"`, or (not ordinal) numbers and the missing value only, as Mondrian infers it. */
export function isNumericColumn(column: EncodedColumn, scale: string): boolean {
  if (scale === 'numeric') return true;
  if (scale === 'ordinal') return false;
  return column.dictionary.some(isNumber) && column.dictionary.every((v) => isNumber(v) || isMissing(v));
}

/** A numeric attribute's value as a number; the missing value is NaN, never Number('') = 0. */
export function numberOrNaN(value: string): number {
  return isMissing(value) ? Number.NaN : Number(value);
}

/** Code → sort key of a numeric column: its number, the missing value after every number. */
export function numberOrLast(column: EncodedColumn): (code: number) => number {
  return (code) => {
    const x = numberOrNaN(column.dictionary[code]!);
    return Number.isNaN(x) ? Number.POSITIVE_INFINITY : x;
  };
}

/** Codes of the attribute as φ² sees it: discretized when numeric. */
export function discretize(
  column: EncodedColumn,
  numeric: boolean,
  hierarchy: Hierarchy | undefined,
): { codes: Int32Array; domain: number; how: string } {
  if (!numeric) return { codes: column.codes, domain: column.dictionary.length, how: 'categories' };
  if (hierarchy && hierarchy.height >= 1) {
    const table = hierarchy.levelTables[1]!;
    return {
      codes: Int32Array.from(column.codes, (c) => table[c]!),
      domain: hierarchy.labels[1]!.length,
      how: 'hierarchy level 1',
    };
  }
  // Equal-frequency bins over the sorted numbers; equal values share a bin. The missing value
  // is a category of its own after the bins (as randomization bins it), never a number.
  const d = column.dictionary.length;
  const counts = codeCounts(column);
  const at = numberOrLast(column);
  const order = Array.from({ length: d }, (_, i) => i).sort((a, b) => at(a) - at(b) || a - b);
  const missing = order.filter((c) => isMissing(column.dictionary[c]!));
  const numbers = order.length - missing.length;
  let n = 0;
  for (let i = 0; i < numbers; i++) n += counts[order[i]!]!;
  const bins = Math.min(EQUAL_FREQUENCY_BINS, numbers);
  const binOf = new Int32Array(d);
  let seen = 0;
  let bin = 0;
  for (let i = 0; i < numbers; i++) {
    const code = order[i]!;
    binOf[code] = bin;
    seen += counts[code]!;
    while (bin < bins - 1 && seen >= ((bin + 1) * n) / bins) bin++;
  }
  for (const code of missing) binOf[code] = bins;
  // Renumber the bins that are used.
  const used = new Int32Array(bins + 1).fill(-1);
  let next = 0;
  for (const code of order) if (counts[code]! > 0 && used[binOf[code]!]! < 0) used[binOf[code]!] = next++;
  const withMissing = used[bins]! >= 0;
  return {
    codes: Int32Array.from(column.codes, (c) => used[binOf[c]!]!),
    domain: Math.max(1, next),
    how: `${next - (withMissing ? 1 : 0)} equal-frequency bins${withMissing ? ' and the missing value' : ''}`,
  };
}

/** φ² of two code columns of equal length. */
export function phiSquared(a: Int32Array, da: number, b: Int32Array, db: number): number {
  const n = a.length;
  if (n === 0) return 0;
  const fa = new Float64Array(da);
  const fb = new Float64Array(db);
  const joint = new Map<number, number>();
  for (let r = 0; r < n; r++) {
    fa[a[r]!]!++;
    fb[b[r]!]!++;
    const k = a[r]! * db + b[r]!;
    joint.set(k, (joint.get(k) ?? 0) + 1);
  }
  let presentA = 0;
  let presentB = 0;
  for (const x of fa) if (x > 0) presentA++;
  for (const x of fb) if (x > 0) presentB++;
  const m = Math.min(presentA, presentB);
  if (m < 2) return 0;
  // Σ (f_ij − e_ij)²/e_ij = Σ f_ij²/e_ij − 1 (over relative frequencies), summing only f_ij > 0.
  let sum = 0;
  for (const [k, c] of joint) {
    const i = Math.floor(k / db);
    const j = k - i * db;
    const f = c / n;
    const e = (fa[i]! / n) * (fb[j]! / n);
    sum += (f * f) / e;
  }
  return Math.min(1, Math.max(0, (sum - 1) / (m - 1)));
}

export interface Clustering {
  /** Medoid index of each cluster, clusters in order of their medoid index. */
  readonly medoids: number[];
  /** Item → cluster. */
  readonly clusterOf: number[];
  readonly cost: number;
}

/** PAM k-medoids over a symmetric distance matrix of `n` items into `k` clusters (1 ≤ k ≤ n). */
export function pam(distance: readonly (readonly number[])[], k: number): Clustering {
  const n = distance.length;
  const d = (i: number, j: number) => distance[i]![j]!;
  const costOf = (medoids: number[]) => {
    let total = 0;
    for (let i = 0; i < n; i++) {
      let best = Number.POSITIVE_INFINITY;
      for (const m of medoids) best = Math.min(best, d(i, m));
      total += best;
    }
    return total;
  };
  // BUILD: the most central item first, then greedily the one that lowers the cost most.
  const medoids: number[] = [];
  while (medoids.length < k) {
    let bestItem = -1;
    let bestCost = Number.POSITIVE_INFINITY;
    for (let i = 0; i < n; i++) {
      if (medoids.includes(i)) continue;
      const c = costOf([...medoids, i]);
      if (c < bestCost - 1e-12) {
        bestCost = c;
        bestItem = i;
      }
    }
    medoids.push(bestItem);
  }
  // SWAP: the best improving (medoid, non-medoid) exchange until none improves.
  let cost = costOf(medoids);
  for (let iteration = 0; iteration < 1000; iteration++) {
    let best: [number, number] | null = null;
    let bestCost = cost;
    for (let mi = 0; mi < medoids.length; mi++) {
      for (let o = 0; o < n; o++) {
        if (medoids.includes(o)) continue;
        const trial = medoids.slice();
        trial[mi] = o;
        const c = costOf(trial);
        if (c < bestCost - 1e-12) {
          bestCost = c;
          best = [mi, o];
        }
      }
    }
    if (!best) break;
    medoids[best[0]] = best[1];
    cost = bestCost;
  }
  medoids.sort((a, b) => a - b);
  const clusterOf = Array.from({ length: n }, (_, i) => {
    let best = 0;
    for (let c = 1; c < medoids.length; c++) if (d(i, medoids[c]!) < d(i, medoids[best]!) - 1e-12) best = c;
    return best;
  });
  // A medoid belongs to its own cluster even when another medoid is at distance 0.
  medoids.forEach((m, c) => {
    clusterOf[m] = c;
  });
  return { medoids, clusterOf, cost };
}
