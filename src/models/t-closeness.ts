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
import { absBig, minBig, ratioAtMost } from '../util/exact.ts';
import { describeSpec } from './describe.ts';
import { type ClassCounts, type ClassSummary, entries, type PrivacyModel } from './model.ts';

export type Emd = (histogram: ClassCounts, size: number) => number;

/*
 * A class's histogram is as wide as the SA's values, but a class of an SA of many values (an
 * amount) holds few of them: each distance sums over the values the class holds, after one
 * pass over the counts that only looks for them, and over the values it lacks at once from the
 * table's shares (docs/definitions.md gives the sums over every value).
 */

/** ½·Σ|p − q|: each value the class lacks adds its share. */
export function equalEmd(table: Float64Array): Emd {
  let total = 0;
  for (const q of table) total += q;
  return (h, size) => {
    const { codes, counts, from, to } = entries(h);
    let d = 0;
    let covered = 0;
    let held = 0;
    for (let i = from; i < to; i++) {
      if (counts[i] === 0) continue;
      const s = codes ? codes[i]! : i;
      d += Math.abs(counts[i]! / size - table[s]!);
      covered += table[s]!;
      held++;
    }
    return (d + (held === table.length ? 0 : Math.max(0, total - covered))) / 2;
  };
}

/** The SA's values in order, with the table's running shares along it. */
export interface OrderedWalk {
  /** Codes by position, and positions by code. */
  readonly order: Int32Array;
  readonly position: Int32Array;
  /** `below[j]`: the table's share of positions 0 … j; `belowSum[j]`: Σ below[0 … j − 1]. */
  readonly below: Float64Array;
  readonly belowSum: Float64Array;
}

/** `order[i]` is the SA code at rank i. */
export function orderedWalk(order: ArrayLike<number>, table: ArrayLike<number>): OrderedWalk {
  const m = order.length;
  const position = new Int32Array(m);
  const below = new Float64Array(m);
  const belowSum = new Float64Array(m + 1);
  let share = 0;
  for (let j = 0; j < m; j++) {
    position[order[j]!] = j;
    share += table[order[j]!]!;
    below[j] = share;
    belowSum[j + 1] = belowSum[j]! + share;
  }
  return { order: Int32Array.from(order), position, below, belowSum };
}

/**
 * Ordered EMD: Σ |cumulative difference| / (m − 1), the cumulative difference walked in value
 * order, for a class holding `h[i]` of code `codes[i]` (every value, `h` by code, when
 * `h.length` is m). Over a run of values the class lacks, the difference only falls by their
 * table shares, so the run's sum is taken at once from the running shares (split where it
 * crosses zero). A count of 0 is a value the class lacks: however its counts are laid out, a
 * class gets the same figure, to the last bit.
 */
export function orderedDistance(
  codes: Int32Array,
  h: ArrayLike<number>,
  size: number,
  table: ArrayLike<number>,
  walk: OrderedWalk,
): number {
  const m = walk.order.length;
  if (m < 2) return 0;
  const dense = h.length === m;
  let entries = walk.order;
  if (!dense) {
    entries = Int32Array.from(codes.subarray(0, h.length).keys()).sort(
      (a, b) => walk.position[codes[a]!]! - walk.position[codes[b]!]!,
    );
  }
  let cumulative = 0;
  let d = 0;
  let next = 0;
  const { below, belowSum } = walk;
  // Σ_{j in [a, b)} |cumulative − (below[j] − below[a − 1])|: below rises, so the terms change sign once.
  const run = (a: number, b: number): number => {
    const level = cumulative + (a > 0 ? below[a - 1]! : 0);
    let lo = a;
    let hi = b;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (below[mid]! > level) hi = mid;
      else lo = mid + 1;
    }
    const sum =
      level * (lo - a) - (belowSum[lo]! - belowSum[a]!) + (belowSum[b]! - belowSum[lo]!) - level * (b - lo);
    cumulative = level - below[b - 1]!;
    return sum;
  };
  for (const i of entries) {
    if (h[i] === 0) continue;
    const s = dense ? i : codes[i]!;
    const at = walk.position[s]!;
    if (at > next) d += run(next, at);
    cumulative += h[i]! / size - table[s]!;
    d += Math.abs(cumulative);
    next = at + 1;
  }
  if (next < m) d += run(next, m);
  return d / (m - 1);
}

/** `order[i]` is the SA code at rank i. */
export function orderedEmd(table: Float64Array, order: readonly number[]): Emd {
  const walk = orderedWalk(order, table);
  // The codes a class holds and their counts, in code order (scratch reused across classes).
  const codes = new Int32Array(table.length);
  const counts = new Float64Array(table.length);
  return (h, size) => {
    const held = entries(h);
    let n = 0;
    for (let i = held.from; i < held.to; i++) {
      if (held.counts[i] === 0) continue;
      codes[n] = held.codes ? held.codes[i]! : i;
      counts[n++] = held.counts[i]!;
    }
    return orderedDistance(codes, counts.subarray(0, n), size, table, walk);
  };
}

/**
 * EMD over a hierarchy whose level tables map SA codes to their ancestors: Σ over the labels N
 * of (level(N)/H)·min(positive extra, negative extra) of N's children. A label with no class
 * rows under it has no positive extra (it costs nothing) and its extra is minus its table
 * share, so only the labels above the values a class holds are walked: at each, the children
 * without class rows add their share (the label's less its other children's) to its negative
 * extras at once.
 */
export function hierarchicalEmd(table: Float64Array, hierarchy: Hierarchy): Emd {
  const H = hierarchy.height;
  // parentOf[l][label at l] = label at l + 1 (−1: a label no code maps to); share[l][label]:
  // the table's share under it; children[l][label]: its labels one level down.
  const parentOf: Int32Array[] = [];
  const share: Float64Array[] = [table];
  const children: Int32Array[] = [new Int32Array(table.length)];
  for (let level = 1; level <= H; level++) {
    const width = hierarchy.labels[level]!.length;
    const parent = new Int32Array(hierarchy.labels[level - 1]!.length).fill(-1);
    const below = hierarchy.levelTables[level - 1]!;
    const up = hierarchy.levelTables[level]!;
    for (let s = 0; s < table.length; s++) parent[below[s]!] = up[s]!;
    const under = new Float64Array(width);
    const count = new Int32Array(width);
    for (let c = 0; c < parent.length; c++) {
      if (parent[c]! < 0) continue;
      under[parent[c]!] += share[level - 1]![c]!;
      count[parent[c]!]++;
    }
    parentOf.push(parent);
    share.push(under);
    children.push(count);
  }
  // Scratch reused across classes (hot path), zero between classes: per level, each label's
  // extra, and (levels ≥ 1) its children's positive and negative extras, their share and number.
  const extra = share.map((x) => new Float64Array(x.length));
  const pos = share.map((x, l) => new Float64Array(l === 0 ? 0 : x.length));
  const neg = share.map((x, l) => new Float64Array(l === 0 ? 0 : x.length));
  const heldShare = share.map((x, l) => new Float64Array(l === 0 ? 0 : x.length));
  const heldChildren = share.map((x, l) => new Int32Array(l === 0 ? 0 : x.length));
  const labels = [new Int32Array(table.length), ...share.slice(1).map((x) => new Int32Array(x.length))];
  return (h, size) => {
    if (H === 0) return 0;
    const held = entries(h);
    let n = 0;
    const leaves = labels[0]!;
    for (let i = held.from; i < held.to; i++) {
      if (held.counts[i] === 0) continue;
      const s = held.codes ? held.codes[i]! : i;
      extra[0]![s] = held.counts[i]! / size - table[s]!;
      leaves[n++] = s;
    }
    let cost = 0;
    for (let level = 1; level <= H; level++) {
      const parent = parentOf[level - 1]!;
      const [from, into] = [labels[level - 1]!, labels[level]!];
      const [e, up, P, N, S, C] = [
        extra[level - 1]!,
        extra[level]!,
        pos[level]!,
        neg[level]!,
        heldShare[level]!,
        heldChildren[level]!,
      ];
      const lower = share[level - 1]!;
      let parents = 0;
      for (let k = 0; k < n; k++) {
        const c = from[k]!;
        const p = parent[c]!;
        const x = e[c]!;
        e[c] = 0;
        if (p < 0) continue;
        if (C[p] === 0) into[parents++] = p;
        if (x > 0) P[p] += x;
        else N[p] -= x;
        S[p] += lower[c]!;
        C[p]++;
      }
      const upper = share[level]!;
      const count = children[level]!;
      for (let k = 0; k < parents; k++) {
        const p = into[k]!;
        const rest = C[p] === count[p] ? 0 : Math.max(0, upper[p]! - S[p]!);
        cost += (level / H) * Math.min(P[p]!, N[p]! + rest);
        up[p] = P[p]! - N[p]! - rest;
        P[p] = N[p] = S[p] = 0;
        C[p] = 0;
      }
      n = parents;
    }
    for (let k = 0; k < n; k++) extra[H]![labels[H]![k]!] = 0;
    return cost;
  };
}

/**
 * The table's SA counts by code and its rows: with them a class's EMD is a ratio of integers,
 * which exactEmd gives (over persons the weights are fractions, and there is none).
 */
export interface TableCounts {
  readonly counts: ArrayLike<number>;
  readonly rows: number;
}

/** A class's EMD as `num / den`, exactly. */
export type ExactEmd = (histogram: ClassCounts, size: number) => { num: bigint; den: bigint };

/**
 * The EMD of each distance over integers: with class size n and table rows N, every share
 * difference c/n − T/N is (c·N − T·n)/(n·N), so each distance's sum is an integer over
 * 2·n·N (equal), (m − 1)·n·N (ordered) or H·n·N (hierarchical), which can pass 2^53: BigInt.
 * Dense over the SA's values: it only decides classes whose floating EMD is near t.
 */
export function exactEmd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  table: TableCounts,
  order: readonly number[],
  hierarchy: Hierarchy | undefined,
): ExactEmd {
  const m = table.counts.length;
  const N = BigInt(table.rows);
  const dense = new Float64Array(m);
  // c·N − T·n for every value, by code.
  const extras = (h: ClassCounts, n: bigint): bigint[] => {
    const { codes, counts, from, to } = entries(h);
    for (let i = from; i < to; i++) dense[codes ? codes[i]! : i] += counts[i]!;
    const e = Array.from(dense, (c, s) => BigInt(c) * N - BigInt(table.counts[s]!) * n);
    dense.fill(0);
    return e;
  };
  if (distance === 'equal') {
    return (h, size) => {
      const n = BigInt(size);
      return { num: extras(h, n).reduce((a, x) => a + absBig(x), 0n), den: 2n * n * N };
    };
  }
  if (distance === 'ordered') {
    return (h, size) => {
      const n = BigInt(size);
      if (m < 2) return { num: 0n, den: 1n };
      const e = extras(h, n);
      let cumulative = 0n;
      let num = 0n;
      for (const s of order) num += absBig((cumulative += e[s]!));
      return { num, den: BigInt(m - 1) * n * N };
    };
  }
  const H = hierarchy!.height;
  // parents[l − 1][label at l − 1] = its label at l (−1: a label no code maps to).
  const parents: Int32Array[] = [];
  for (let level = 1; level <= H; level++) {
    const parent = new Int32Array(hierarchy!.labels[level - 1]!.length).fill(-1);
    for (let s = 0; s < m; s++)
      parent[hierarchy!.levelTables[level - 1]![s]!] = hierarchy!.levelTables[level]![s]!;
    parents.push(parent);
  }
  return (h, size) => {
    const n = BigInt(size);
    if (H === 0) return { num: 0n, den: 1n };
    // Level 0's labels are the codes.
    let extra = extras(h, n);
    let num = 0n;
    for (let level = 1; level <= H; level++) {
      const width = hierarchy!.labels[level]!.length;
      const pos: bigint[] = new Array(width).fill(0n);
      const neg: bigint[] = new Array(width).fill(0n);
      parents[level - 1]!.forEach((p, c) => {
        if (p < 0) return;
        if (extra[c]! > 0n) pos[p] += extra[c]!;
        else neg[p] -= extra[c]!;
      });
      for (let p = 0; p < width; p++) num += BigInt(level) * minBig(pos[p]!, neg[p]!);
      extra = pos.map((x, p) => x - neg[p]!);
    }
    return { num, den: BigInt(H) * n * N };
  };
}

/**
 * Whether a class's EMD is at most t (docs/definitions.md), exactly when `exact` is given:
 * the floating EMD decides unless it lies within its rounding error of t (a few ulps per value
 * summed; `margin` bounds that many times over), and the integers decide there. Without
 * `exact` (weights over persons) the floating EMD decides, with no slack.
 */
export function withinT(emd: Emd, t: number, width: number, exact?: ExactEmd) {
  const margin = Math.max(1e-9, 64 * width * Number.EPSILON);
  return (h: ClassCounts, size: number): boolean => {
    const value = emd(h, size);
    if (!exact || Math.abs(value - t) > margin) return value <= t;
    const { num, den } = exact(h, size);
    return ratioAtMost(num, den, t);
  };
}

/**
 * The smallest class size whose best possible SA histogram is within equal-distance t of the
 * table's distribution (`rows` at most). For s rows the closest histogram in total variation
 * rounds s·p by largest remainders (the objective Σ|h_i − s·p_i| is separable and convex), so
 * every class smaller than the result fails t-closeness.
 */
export function smallestEqualClose(table: Float64Array, t: number, rows: number, exact?: ExactEmd): number {
  const within = withinT(equalEmd(table), t, table.length, exact);
  const h = new Int32Array(table.length);
  const order = Array.from(table, (_, i) => i);
  // Sizes up to a cap are tried (a bound, not an answer, beyond it).
  const cap = Math.min(rows, 10_000);
  for (let s = 1; s <= cap; s++) {
    let left = s;
    for (let i = 0; i < table.length; i++) left -= h[i] = Math.floor(s * table[i]!);
    const frac = (i: number) => s * table[i]! - Math.floor(s * table[i]!);
    order.sort((a, b) => frac(b) - frac(a) || a - b);
    for (let j = 0; j < left && j < order.length; j++) h[order[j]!]!++;
    if (within(h, s)) return s;
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
  /** The EMD over integers (see withinT); none over persons. */
  exact?: ExactEmd,
  /** The SA's values (the rounding error of `emd` grows with them). */
  width = 0,
): PrivacyModel {
  const within = withinT(emd, t, width, exact);
  return {
    spec: { model: 't-closeness', attribute, t, distance },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: true,
    minClassSize,
    holds: (cls: ClassSummary) => within(cls.histogram!, cls.size),
    measure: (cls) => emd(cls.histogram!, cls.size),
    higherIsBetter: false,
    measureName: 't',
  };
}
