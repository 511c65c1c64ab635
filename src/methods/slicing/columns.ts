/**
 * Slicing's attribute partitioning, part 2: which attributes share a column.
 *
 * - `columnGroups` given: taken as they are (they must cover every released attribute once).
 * - `columns: c` (default 2): the attributes other than the SA are clustered into c columns by
 *   PAM on 1 − φ² (with c equal to the number of released attributes, each is its own
 *   column); the SA joins the column whose attributes it correlates with best (highest mean
 *   φ²).
 * - Tuple partitioning starts from the whole table as one bucket, where p(t,s) is the SA's
 *   distribution among the rows that share t's values of the SA column's other attributes.
 *   When that already exceeds 1/l, no partition from it can be l-diverse. Then (clustered
 *   columns only) the SA's column keeps, greedily in order of φ² with the SA, the attributes
 *   that leave it passing; the others move to the column they correlate with best (highest
 *   mean φ²). With the SA alone it passes whenever the table admits l-diversity at all. With
 *   given groups the release stops with a NoSolutionError instead.
 */
import { SpecError } from '../../errors.ts';
import { posteriorLimit } from '../../models/l-diversity.ts';
import { pam } from './correlation.ts';

export interface ColumnPlan {
  /** Attribute indices per column, ascending; columns ordered by their first attribute. */
  readonly columns: number[][];
  readonly saColumn: number;
  readonly source: 'clustered' | 'given';
  /** Attributes moved out of the SA's column for the single bucket to be l-diverse. */
  readonly moved: number[];
  /** Max p(t,s) over tuples with the whole table as one bucket, for the final plan. */
  readonly initialMaxP: number;
}

export interface AttributeData {
  readonly names: readonly string[];
  readonly codes: readonly Int32Array[];
  readonly domains: readonly number[];
  readonly sa: number;
}

/** max over tuples of p(t,s) with one bucket: the SA's largest share among rows sharing `others`. */
export function singleBucketMaxP(data: AttributeData, others: readonly number[]): number {
  const n = data.codes[0]?.length ?? 0;
  const sa = data.codes[data.sa]!;
  const width = data.domains[data.sa]!;
  const groups = new Map<string, Int32Array>();
  let maxP = 0;
  const sizes = new Map<string, number>();
  for (let r = 0; r < n; r++) {
    let key = '';
    for (const a of others) key += `${data.codes[a]![r]},`;
    let h = groups.get(key);
    if (!h) groups.set(key, (h = new Int32Array(width)));
    h[sa[r]!]!++;
    sizes.set(key, (sizes.get(key) ?? 0) + 1);
  }
  for (const [key, h] of groups) {
    const size = sizes.get(key)!;
    for (const c of h) maxP = Math.max(maxP, c / size);
  }
  return maxP;
}

export function planColumns(
  data: AttributeData,
  phi: readonly (readonly number[])[],
  l: number,
  request: { columns: number | undefined; columnGroups: string[][] | undefined },
  where: string,
): ColumnPlan {
  const m = data.names.length;
  const bound = posteriorLimit(l);
  const finish = (groups: number[][], source: ColumnPlan['source'], moved: number[]): ColumnPlan => {
    const columns = groups.map((g) => [...g].sort((a, b) => a - b)).sort((a, b) => a[0]! - b[0]!);
    const saColumn = columns.findIndex((g) => g.includes(data.sa));
    const others = columns[saColumn]!.filter((a) => a !== data.sa);
    return { columns, saColumn, source, moved, initialMaxP: singleBucketMaxP(data, others) };
  };

  if (request.columnGroups) {
    const index = new Map(data.names.map((name, i) => [name, i]));
    const seen = new Set<number>();
    const groups = request.columnGroups.map((g) =>
      g.map((name) => {
        const i = index.get(name);
        if (i === undefined || seen.has(i)) {
          throw new SpecError(
            'E_SPEC_VALUE',
            `${where}: method.columnGroups ${i === undefined ? `names '${name}', which is not released` : `lists '${name}' twice`}`,
            'list every released (non-identifying) attribute exactly once',
          );
        }
        seen.add(i);
        return i;
      }),
    );
    if (seen.size !== m) {
      const missing = data.names.filter((_, i) => !seen.has(i));
      throw new SpecError(
        'E_SPEC_VALUE',
        `${where}: method.columnGroups leaves out ${missing.join(', ')}`,
        'list every released (non-identifying) attribute exactly once',
      );
    }
    return finish(groups, 'given', []);
  }

  const c = request.columns ?? 2;
  if (c < 2 || c > m) {
    throw new SpecError(
      'E_SPEC_RANGE',
      `${where}: method.columns is ${c}, but slicing needs 2 to ${m} columns for ${m} released attributes`,
      'use "columns": 2 or 3, or give "columnGroups"',
    );
  }
  const others = data.names.map((_, i) => i).filter((i) => i !== data.sa);
  let groups: number[][];
  if (c === m) groups = data.names.map((_, i) => [i]);
  else {
    const distance = others.map((a) => others.map((b) => (a === b ? 0 : 1 - phi[a]![b]!)));
    const { clusterOf } = pam(distance, c);
    groups = Array.from({ length: c }, () => []);
    others.forEach((a, i) => {
      groups[clusterOf[i]!]!.push(a);
    });
    groups[bestColumn(phi, data.sa, groups, -1)]!.push(data.sa);
  }

  // Keep in the SA's column the attributes, most correlated with the SA first, that leave the
  // single-bucket table l-diverse; move the others to the column they correlate with best.
  const home = groups.findIndex((g) => g.includes(data.sa));
  const candidates = groups[home]!.filter((a) => a !== data.sa).sort(
    (a, b) => phi[data.sa]![b]! - phi[data.sa]![a]! || a - b,
  );
  const kept: number[] = [];
  const moved: number[] = [];
  if (candidates.length > 0 && singleBucketMaxP(data, candidates) > bound) {
    for (const a of candidates) {
      if (singleBucketMaxP(data, [...kept, a]) <= bound) kept.push(a);
      else moved.push(a);
    }
    groups[home] = [data.sa, ...kept];
    for (const a of moved) groups[bestColumn(phi, a, groups, home)]!.push(a);
  }
  return finish(groups, 'clustered', moved);
}

/** The column (other than `exclude`) whose attributes `a` has the highest mean φ² with. */
function bestColumn(
  phi: readonly (readonly number[])[],
  a: number,
  groups: readonly number[][],
  exclude: number,
): number {
  let best = -1;
  let bestMean = Number.NEGATIVE_INFINITY;
  groups.forEach((g, i) => {
    if (i === exclude) return;
    const members = g.filter((x) => x !== a);
    if (members.length === 0) return;
    const mean = members.reduce((s, x) => s + phi[a]![x]!, 0) / members.length;
    if (mean > bestMean + 1e-12) {
      bestMean = mean;
      best = i;
    }
  });
  return best < 0 ? (exclude === 0 ? 1 : 0) : best;
}
