/**
 * t-closeness (Li, Li, Venkatasubramanian 2007): the Earth Mover's Distance between a class's
 * SA distribution and the table's is at most t. Three ground distances (docs/definitions.md §2):
 * - equal: EMD = ½·Σ|p − q| (total variation);
 * - ordered: EMD = (1/(m−1))·Σ_i |Σ_{j≤i} (p_j − q_j)| over the values in order;
 * - hierarchical: over the SA's hierarchy, each internal node N costs
 *   (level(N)/H)·min(positive extra, negative extra) of its children.
 * EMD is convex in the class distribution, so a union of passing classes passes (monotonic
 * without suppression); with suppression a failing part can drag a union over t.
 */
import type { Hierarchy } from '../hierarchy/hierarchy.ts';
import { describeSpec } from './describe.ts';
import type { ClassSummary, PrivacyModel, SaCounts } from './model.ts';

export type Emd = (histogram: SaCounts, size: number) => number;

export function equalEmd(table: Float64Array): Emd {
  return (h, size) => {
    let d = 0;
    for (let s = 0; s < table.length; s++) d += Math.abs(h[s]! / size - table[s]!);
    return d / 2;
  };
}

/** `order[i]` is the SA code at rank i. */
export function orderedEmd(table: Float64Array, order: readonly number[]): Emd {
  const m = order.length;
  return (h, size) => {
    if (m < 2) return 0;
    let cumulative = 0;
    let d = 0;
    for (let i = 0; i < m; i++) {
      const s = order[i]!;
      cumulative += h[s]! / size - table[s]!;
      d += Math.abs(cumulative);
    }
    return d / (m - 1);
  };
}

/** EMD over a hierarchy whose level tables map SA codes to their ancestors. */
export function hierarchicalEmd(table: Float64Array, hierarchy: Hierarchy): Emd {
  const H = hierarchy.height;
  // parentOf[l][label at l−1] = label at l; scratch buffers reused across classes (hot path).
  const parentOf: Int32Array[] = [];
  for (let level = 1; level <= H; level++) {
    const parent = new Int32Array(hierarchy.labels[level - 1]!.length).fill(-1);
    const below = hierarchy.levelTables[level - 1]!;
    const up = hierarchy.levelTables[level]!;
    for (let s = 0; s < table.length; s++) parent[below[s]!] = up[s]!;
    parentOf.push(parent);
  }
  const widest = Math.max(table.length, ...hierarchy.labels.map((l) => l.length));
  let extra = new Float64Array(widest);
  let next = new Float64Array(widest);
  const pos = new Float64Array(widest);
  const neg = new Float64Array(widest);
  return (h, size) => {
    if (H === 0) return 0;
    for (let s = 0; s < table.length; s++) extra[s] = h[s]! / size - table[s]!;
    let width = table.length;
    let cost = 0;
    for (let level = 1; level <= H; level++) {
      const parent = parentOf[level - 1]!;
      const parents = hierarchy.labels[level]!.length;
      pos.fill(0, 0, parents);
      neg.fill(0, 0, parents);
      next.fill(0, 0, parents);
      for (let child = 0; child < width; child++) {
        const p = parent[child]!;
        if (p < 0) continue; // a label no code maps to
        const e = extra[child]!;
        if (e > 0) pos[p]! += e;
        else neg[p]! -= e;
        next[p]! += e;
      }
      for (let p = 0; p < parents; p++) cost += (level / H) * Math.min(pos[p]!, neg[p]!);
      [extra, next] = [next, extra];
      width = parents;
    }
    return cost;
  };
}

/**
 * The smallest class size whose best possible SA histogram is within equal-distance t of the
 * table's distribution (`rows` at most). For s rows the closest histogram in total variation
 * rounds s·p by largest remainders (the objective Σ|h_i − s·p_i| is separable and convex), so
 * every class smaller than the result fails t-closeness.
 */
export function smallestEqualClose(table: Float64Array, t: number, rows: number): number {
  const emd = equalEmd(table);
  const h = new Int32Array(table.length);
  const order = Array.from(table, (_, i) => i);
  // Sizes up to a cap are tried (a bound, not an answer, beyond it); the tolerance errs on the
  // permissive side so that rounding never makes the claim too strong.
  const cap = Math.min(rows, 10_000);
  for (let s = 1; s <= cap; s++) {
    let left = s;
    for (let i = 0; i < table.length; i++) left -= h[i] = Math.floor(s * table[i]!);
    const frac = (i: number) => s * table[i]! - Math.floor(s * table[i]!);
    order.sort((a, b) => frac(b) - frac(a) || a - b);
    for (let j = 0; j < left && j < order.length; j++) h[order[j]!]!++;
    if (emd(h, s) <= t + 1e-9) return s;
  }
  return cap === rows ? rows + 1 : cap;
}

export function tCloseness(
  attribute: string,
  t: number,
  distance: 'equal' | 'ordered' | 'hierarchical',
  emd: Emd,
  /** See smallestEqualClose (equal distance); 1 when unknown. */
  minClassSize = 1,
): PrivacyModel {
  return {
    spec: { model: 't-closeness', attribute, t, distance },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: true,
    minClassSize,
    holds: (cls: ClassSummary) => emd(cls.histogram!, cls.size) <= t + 1e-12,
    measure: (cls) => emd(cls.histogram!, cls.size),
    higherIsBetter: false,
    measureName: 't',
  };
}
