/**
 * Independent re-checks of the privacy models on a released table's classes. Written apart
 * from src/models/ on purpose: it starts from value strings (the input's SA distribution and
 * hierarchy rows, compiled once per attribute into a small domain) and per-class counts, not
 * from the search's codes and histograms, so a bug in the search's models cannot hide in its
 * own verification.
 */
import { findModel, type ModelName, type ModelsIn, type SpecNamed } from '../catalogue/catalogue.ts';
import { DELTA_DISCLOSURE } from '../catalogue/delta-disclosure.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import {
  DISTINCT_L_DIVERSITY,
  ENTROPY_L_DIVERSITY,
  RECURSIVE_CL_DIVERSITY,
} from '../catalogue/l-diversity.ts';
import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';
import { absBig, entropyRounding, minBig, ratioAtMost } from '../util/exact.ts';
import { allNumbers } from '../util/numbers.ts';

/** One class's SA counts by value. */
export type ValueCounts = Map<string, number>;

export interface SensitiveContext {
  /** The SA's share of each value over the whole input. */
  readonly table: ReadonlyMap<string, number>;
  /** Hierarchy rows `[value, level1, …]` of the SA, when it has one. */
  readonly hierarchy: string[][] | undefined;
  /**
   * The input's rows of each value and its rows, when the shares are rows over rows (not
   * weights over persons): t is then judged on the EMD's integers (exactTHolds).
   */
  readonly rows?: { readonly counts: ReadonlyMap<string, number>; readonly total: number };
}

/**
 * An SA's input values by index (the order of `SensitiveContext.table`), their shares, and the
 * orders the distances walk. Class counts index it; indices from `values.length` on stand for
 * released values the input does not have.
 */
export interface SaDomain {
  readonly values: readonly string[];
  readonly index: ReadonlyMap<string, number>;
  readonly share: Float64Array;
  /** Σ share (1 up to rounding). */
  readonly total: number;
  /** Value indices in the ordered distance's order (numeric when every value is a number). */
  readonly ordered: Int32Array;
  /** `rank[i]`: value i's place in `ordered`. */
  readonly rank: Int32Array;
  /** `below[j]`: the shares of the values at places 0 … j; `belowSum[j]`: Σ below[0 … j − 1]. */
  readonly below: Float64Array;
  readonly belowSum: Float64Array;
  /** The hierarchical distance's walk, or null without a (complete) hierarchy. */
  readonly tree: Tree | null;
  /** Each value's rows in the input and the input's rows, when known (`SensitiveContext.rows`). */
  readonly rows: { readonly counts: Float64Array; readonly total: number } | null;
}

/**
 * The hierarchy as a tree: per level 1 … height, each node's parent one level up (the first
 * seen in value order); per level 0 … height, each node's share of the input and its children.
 * Level 0's nodes are the value indices.
 */
interface Tree {
  readonly height: number;
  /** `parentOf[l − 1][node at l − 1]`: its node at level l. */
  readonly parentOf: readonly Int32Array[];
  /** `mass[l][node]`: the input's share under the node. */
  readonly mass: readonly Float64Array[];
  /** `children[l][node]`: how many nodes of level l − 1 it holds (level ≥ 1). */
  readonly children: readonly Int32Array[];
}

/** One class's SA counts: `counts[i]` for the `n` indices `present[0, n)` with a count > 0. */
export interface ClassCounts {
  readonly counts: Float64Array;
  readonly present: Int32Array;
  readonly n: number;
}

/**
 * Calls `visit(class, counts)` for each class in order with its counts of the value indices
 * `indexOf(row)` (in [0, width)), counted in row order. Rows are bucketed by class once (two
 * ints a row) and one buffer of counts is cleared after each class: time and memory grow with
 * the rows and the values, not with classes × values. A row of class −1 or index −1 is left out.
 */
export function forEachClassCounts(
  classOf: Int32Array,
  sizes: ArrayLike<number>,
  classCount: number,
  width: number,
  indexOf: (row: number) => number,
  visit: (g: number, counts: ClassCounts) => void,
): void {
  const start = new Int32Array(classCount + 1);
  for (let g = 0; g < classCount; g++) start[g + 1] = start[g]! + sizes[g]!;
  const fill = start.slice(0, classCount);
  const indices = new Int32Array(start[classCount]!);
  for (let j = 0; j < classOf.length; j++) {
    const g = classOf[j]!;
    if (g >= 0) indices[fill[g]!++] = indexOf(j);
  }
  const counts = new Float64Array(width);
  const present = new Int32Array(width);
  for (let g = 0; g < classCount; g++) {
    let n = 0;
    for (let x = start[g]!; x < start[g + 1]!; x++) {
      const i = indices[x]!;
      if (i < 0) continue;
      if (counts[i] === 0) present[n++] = i;
      counts[i]++;
    }
    visit(g, { counts, present, n });
    for (let k = 0; k < n; k++) counts[present[k]!] = 0;
  }
}

export function saDomain(sa: SensitiveContext): SaDomain {
  const values = [...sa.table.keys()];
  const index = new Map(values.map((v, i) => [v, i]));
  const share = Float64Array.from(values, (v) => sa.table.get(v)!);
  const numeric = allNumbers(values);
  const order = values.map((_, i) => i);
  order.sort((a, b) => {
    const x = values[a]!;
    const y = values[b]!;
    return numeric ? Number(x) - Number(y) : x < y ? -1 : x > y ? 1 : 0;
  });
  const m = values.length;
  const rank = new Int32Array(m);
  const below = new Float64Array(m);
  const belowSum = new Float64Array(m + 1);
  let total = 0;
  for (let j = 0; j < m; j++) {
    rank[order[j]!] = j;
    total += share[order[j]!]!;
    below[j] = total;
    belowSum[j + 1] = belowSum[j]! + total;
  }
  return {
    values,
    index,
    share,
    total,
    ordered: Int32Array.from(order),
    rank,
    below,
    belowSum,
    tree: treeOf(values, share, sa.hierarchy),
    rows: sa.rows
      ? { counts: Float64Array.from(values, (v) => sa.rows!.counts.get(v) ?? 0), total: sa.rows.total }
      : null,
  };
}

function treeOf(
  values: readonly string[],
  share: Float64Array,
  hierarchy: string[][] | undefined,
): Tree | null {
  if (!hierarchy || hierarchy.length === 0) return null;
  const rows = new Map(hierarchy.map((r) => [r[0]!, r]));
  const height = hierarchy[0]!.length - 1;
  if (values.some((v) => (rows.get(v)?.length ?? 0) <= height)) return null;
  const parentOf: Int32Array[] = [];
  const mass: Float64Array[] = [share];
  const children: Int32Array[] = [new Int32Array(values.length)];
  // Level 0 nodes are the values themselves.
  let nodeOf = Int32Array.from(values, (_, i) => i);
  let width = values.length;
  for (let level = 1; level <= height; level++) {
    const ids = new Map<string, number>();
    const next = Int32Array.from(values, (v) => {
      const label = rows.get(v)![level]!;
      let id = ids.get(label);
      if (id === undefined) ids.set(label, (id = ids.size));
      return id;
    });
    // Each node below goes up to the parent of the first value under it.
    const parent = new Int32Array(width).fill(-1);
    const under = new Float64Array(ids.size);
    const count = new Int32Array(ids.size);
    for (let i = 0; i < values.length; i++) {
      const c = nodeOf[i]!;
      if (parent[c] !== -1) continue;
      parent[c] = next[i]!;
      under[next[i]!] += mass[level - 1]![c]!;
      count[next[i]!]++;
    }
    parentOf.push(parent);
    mass.push(under);
    children.push(count);
    nodeOf = next;
    width = ids.size;
  }
  return { height, parentOf, mass, children };
}

const domains = new WeakMap<SensitiveContext, SaDomain>();
/** Per domain, one buffer of counts for every class (cleared after each): none as wide as the SA's values per class. */
const buffers = new WeakMap<SaDomain, Float64Array>();

/**
 * The model's value on one class (`k`, `l`, `c`-ratio, `t`, `δ`) and whether it holds, from
 * the class's counts by value string.
 */
export function checkClass(
  model: PrivacyModelSpec,
  size: number,
  counts: ValueCounts | undefined,
  sa: SensitiveContext | undefined,
): { value: number; holds: boolean } {
  const declared = Object.hasOwn(CLASS_CHECKS, model.model) ? undefined : findModel(model.model)?.check;
  if (declared) return declared(model, { size, counts });
  if (counts === undefined || sa === undefined) return checkCounts(model, size, undefined, undefined);
  let domain = domains.get(sa);
  if (!domain) domains.set(sa, (domain = saDomain(sa)));
  const width = domain.values.length + counts.size;
  let dense = buffers.get(domain);
  if (!dense || dense.length < width) buffers.set(domain, (dense = new Float64Array(width)));
  const present = new Int32Array(counts.size);
  let n = 0;
  let foreign = domain.values.length;
  try {
    for (const [v, c] of counts) {
      if (!(c > 0)) continue;
      const i = domain.index.get(v) ?? foreign++;
      dense[i] = c;
      present[n++] = i;
    }
    return checkCounts(model, size, { counts: dense, present, n }, domain);
  } finally {
    for (let k = 0; k < n; k++) dense[present[k]!] = 0;
  }
}

type ClassCheck<N extends ModelName> = (
  model: SpecNamed<N>,
  size: number,
  cls: ClassCounts | undefined,
  sa: SaDomain | undefined,
) => { value: number; holds: boolean };

/** The verifier's own check of every model judged class by class: one left out is a compile error. */
const CLASS_CHECKS: { readonly [N in ModelsIn<'class'>]: ClassCheck<N> } = {
  [K_ANONYMITY.name]: (model, size) => ({ value: size, holds: size >= model.k }),
  [DISTINCT_L_DIVERSITY.name]: (model, _, cls) => {
    const value = cls!.n;
    return { value, holds: value >= model.l };
  },
  [ENTROPY_L_DIVERSITY.name]: (model, size, cls) => {
    const { counts, present, n } = cls!;
    let h = 0;
    for (let k = 0; k < n; k++) {
      const c = counts[present[k]!]!;
      h -= (c / size) * Math.log(c / size);
    }
    // Logs are no ratios of integers: only rounding's slack (entropyRounding).
    const logL = Math.log(model.l);
    return { value: Math.exp(h), holds: h >= logL - entropyRounding(n, Math.max(h, logL)) };
  },
  [RECURSIVE_CL_DIVERSITY.name]: (model, _, cls) => {
    const { counts, present, n } = cls!;
    const sorted = Float64Array.from(present.subarray(0, n), (i) => counts[i]!)
      .sort()
      .reverse();
    let tail = 0;
    for (let k = model.l - 1; k < n; k++) tail += sorted[k]!;
    const value = n < model.l || tail === 0 ? Number.POSITIVE_INFINITY : sorted[0]! / tail;
    return { value, holds: value < model.c };
  },
  [T_CLOSENESS.name]: (model, size, cls, sa) => {
    const value = emd(model.distance, cls!, size, sa!);
    return { value, holds: tHolds(value, model, cls!, size, sa!) };
  },
  [DELTA_DISCLOSURE.name]: (model, size, cls, sa) => {
    const { counts, present, n } = cls!;
    let value = 0;
    for (let k = 0; k < n; k++) {
      const i = present[k]!;
      // A released value the input does not have has no share: the class fails.
      const share = i < sa!.values.length ? sa!.share[i]! : Number.NaN;
      value = Math.max(value, Math.abs(Math.log(counts[i]! / size / share)));
    }
    return { value, holds: value < model.delta };
  },
};

/** The model's value on one class and whether it holds, from the class's counts by SA index. */
export function checkCounts(
  model: PrivacyModelSpec,
  size: number,
  cls: ClassCounts | undefined,
  sa: SaDomain | undefined,
): { value: number; holds: boolean } {
  const check = (CLASS_CHECKS as Readonly<Record<string, ClassCheck<ModelName>>>)[model.model];
  if (check) return check(model as never, size, cls, sa);
  // A model declared at run time: its declaration's check, on the class's counts by value.
  const declared = findModel(model.model)?.check;
  if (!declared) return { value: Number.NaN, holds: false };
  let counts: Map<string, number> | undefined;
  if (cls && sa) {
    counts = new Map();
    for (let k = 0; k < cls.n; k++) {
      const i = cls.present[k]!;
      counts.set(sa.values[i] ?? `\u0000${i}`, cls.counts[i]!);
    }
  }
  return declared(model, { size, counts });
}

/**
 * Earth mover's distance between the class's SA distribution and the input's, in time that
 * grows with the values the class holds (`present`), not with the SA's values: the values a
 * class lacks are summed at once from the input's shares (docs/definitions.md gives the sums
 * over every value). Released values the input lacks (indices from `values.length` on) are
 * left out, as every value's sum leaves them out.
 */
export function emd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  { counts, present, n }: ClassCounts,
  size: number,
  sa: SaDomain,
): number {
  const m = sa.values.length;
  if (distance === 'equal') {
    // ½·Σ|p − q|: each lacking value adds its share.
    let s = 0;
    let covered = 0;
    let held = 0;
    for (let k = 0; k < n; k++) {
      const i = present[k]!;
      if (i >= m) continue;
      s += Math.abs(counts[i]! / size - sa.share[i]!);
      covered += sa.share[i]!;
      held++;
    }
    return (s + (held === m ? 0 : Math.max(0, sa.total - covered))) / 2;
  }
  if (distance === 'ordered') return orderedEmd(counts, present, n, size, sa);
  const tree = sa.tree;
  if (!tree) return Number.NaN;
  if (tree.height === 0) return 0;
  return hierarchicalEmd(counts, present, n, size, sa, tree);
}

/**
 * (1/(m − 1))·Σ_j |P_j − Q_j| over the places j in order, P and Q the class's and the input's
 * shares of places 0 … j. Between two places the class holds, P stays put while Q rises, so
 * the terms change sign once: each such run is summed at once from Q's running sums, split
 * where it crosses zero (a binary search).
 */
function orderedEmd(
  counts: Float64Array,
  present: Int32Array,
  n: number,
  size: number,
  sa: SaDomain,
): number {
  const m = sa.values.length;
  if (m < 2) return 0;
  const { rank, ordered, below, belowSum } = sa;
  const places: number[] = [];
  for (let k = 0; k < n; k++) if (present[k]! < m) places.push(rank[present[k]!]!);
  places.sort((a, b) => a - b);
  let held = 0;
  let d = 0;
  let next = 0;
  // Σ_{j in [a, b)} |level − below[j]|.
  const run = (a: number, b: number, level: number): number => {
    let lo = a;
    let hi = b;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (below[mid]! > level) hi = mid;
      else lo = mid + 1;
    }
    return (
      level * (lo - a) - (belowSum[lo]! - belowSum[a]!) + (belowSum[b]! - belowSum[lo]!) - level * (b - lo)
    );
  };
  for (const j of places) {
    if (j > next) d += run(next, j, held / size);
    held += counts[ordered[j]!]!;
    d += Math.abs(held / size - below[j]!);
    next = j + 1;
  }
  if (next < m) d += run(next, m, held / size);
  return d / (m - 1);
}

/** Per tree, the scratch of the hierarchical walk: nodes touched at each level, cleared after each class. */
interface TreeScratch {
  /** Per level: each node's extra, positive and negative extras of its children, their mass and number. */
  readonly extra: Float64Array[];
  readonly pos: Float64Array[];
  readonly neg: Float64Array[];
  readonly held: Float64Array[];
  readonly heldChildren: Int32Array[];
}
const scratches = new WeakMap<Tree, TreeScratch>();

/**
 * Σ_N (ℓ(N)/H)·min(pos(N), neg(N)) over the nodes above the values the class holds: a node
 * with none under it has no positive extra (it costs nothing), and its extra is minus its
 * input share. So at a node, the children without class rows add their mass (the node's
 * mass less its other children's) to the negative extras, at once.
 */
function hierarchicalEmd(
  counts: Float64Array,
  present: Int32Array,
  n: number,
  size: number,
  sa: SaDomain,
  tree: Tree,
): number {
  const m = sa.values.length;
  const H = tree.height;
  let scratch = scratches.get(tree);
  if (!scratch) {
    const widths = tree.mass.map((x) => x.length);
    // (Level 0's nodes have no children: only their extras.)
    const above = widths.map((w, l) => (l === 0 ? 0 : w));
    scratch = {
      extra: widths.map((w) => new Float64Array(w)),
      pos: above.map((w) => new Float64Array(w)),
      neg: above.map((w) => new Float64Array(w)),
      held: above.map((w) => new Float64Array(w)),
      heldChildren: above.map((w) => new Int32Array(w)),
    };
    scratches.set(tree, scratch);
  }
  const { extra, pos, neg, held, heldChildren } = scratch;
  let nodes: number[] = [];
  for (let k = 0; k < n; k++) {
    const i = present[k]!;
    if (i >= m) continue;
    extra[0]![i] = counts[i]! / size - sa.share[i]!;
    nodes.push(i);
  }
  let cost = 0;
  for (let level = 1; level <= H; level++) {
    const parentOf = tree.parentOf[level - 1]!;
    const below = tree.mass[level - 1]!;
    const e = extra[level - 1]!;
    const [P, N, S, C] = [pos[level]!, neg[level]!, held[level]!, heldChildren[level]!];
    const parents: number[] = [];
    for (const c of nodes) {
      const p = parentOf[c]!;
      if (C[p] === 0) parents.push(p);
      const x = e[c]!;
      if (x > 0) P[p] += x;
      else N[p] -= x;
      S[p] += below[c]!;
      C[p]++;
      e[c] = 0;
    }
    const mass = tree.mass[level]!;
    const children = tree.children[level]!;
    const up = extra[level]!;
    for (const p of parents) {
      // The children without class rows: their extras are minus their shares.
      const rest = C[p] === children[p] ? 0 : Math.max(0, mass[p]! - S[p]!);
      cost += (level / H) * Math.min(P[p]!, N[p]! + rest);
      up[p] = P[p]! - N[p]! - rest;
      P[p] = N[p] = S[p] = 0;
      C[p] = 0;
    }
    nodes = parents;
  }
  for (const p of nodes) extra[H]![p] = 0;
  return cost;
}

/**
 * EMD ≤ t (docs/definitions.md), exactly when the input's rows are known: the floating EMD is
 * within a few ulps per value of the true one, so outside `margin` (many times that) it decides,
 * and inside it the EMD's integers do. Over persons (weights) the floating EMD decides, no slack.
 */
function tHolds(
  value: number,
  model: { distance: 'equal' | 'ordered' | 'hierarchical'; t: number },
  cls: ClassCounts,
  size: number,
  sa: SaDomain,
): boolean {
  const margin = Math.max(1e-9, 64 * sa.values.length * Number.EPSILON);
  if (!sa.rows || !(Math.abs(value - model.t) <= margin)) return value <= model.t;
  const exact = exactEmd(model.distance, cls, size, sa, sa.rows);
  return exact !== null && ratioAtMost(exact.num, exact.den, model.t);
}

/**
 * The EMD as integers over integers: with class size n and input rows N each share difference
 * is (c·N − T·n)/(n·N), so the distance is an integer over 2·n·N (equal), (m − 1)·n·N
 * (ordered) or H·n·N (hierarchical); BigInt, as these pass 2^53. Over every value (it only
 * runs near t); released values the input lacks are left out, as in emd.
 */
function exactEmd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  { counts, present, n }: ClassCounts,
  size: number,
  sa: SaDomain,
  rows: NonNullable<SaDomain['rows']>,
): { num: bigint; den: bigint } | null {
  const m = sa.values.length;
  const N = BigInt(rows.total);
  const s = BigInt(size);
  const held = new Float64Array(m);
  for (let k = 0; k < n; k++) if (present[k]! < m) held[present[k]!] = counts[present[k]!]!;
  const extra = Array.from(held, (c, i) => BigInt(c) * N - BigInt(rows.counts[i]!) * s);
  if (distance === 'equal') return { num: extra.reduce((a, x) => a + absBig(x), 0n), den: 2n * s * N };
  if (distance === 'ordered') {
    if (m < 2) return { num: 0n, den: 1n };
    let below = 0n;
    let num = 0n;
    for (const i of sa.ordered) num += absBig((below += extra[i]!));
    return { num, den: BigInt(m - 1) * s * N };
  }
  const tree = sa.tree;
  if (!tree) return null;
  if (tree.height === 0) return { num: 0n, den: 1n };
  let e = extra;
  let num = 0n;
  for (let level = 1; level <= tree.height; level++) {
    const width = tree.mass[level]!.length;
    const pos: bigint[] = new Array(width).fill(0n);
    const neg: bigint[] = new Array(width).fill(0n);
    tree.parentOf[level - 1]!.forEach((p, c) => {
      if (p < 0) return;
      if (e[c]! > 0n) pos[p] += e[c]!;
      else neg[p] -= e[c]!;
    });
    for (let p = 0; p < width; p++) num += BigInt(level) * minBig(pos[p]!, neg[p]!);
    e = pos.map((x, p) => x - neg[p]!);
  }
  return { num, den: BigInt(tree.height) * s * N };
}

/** Which way a model's value gets worse: smaller for k and l, larger for the others (its declaration says). */
function smallerIsWorse(model: PrivacyModelSpec): boolean {
  return findModel(model.model)?.measure.higherIsBetter ?? false;
}

/**
 * Every model's outcome over the released classes: how many fail and the worst value, as the
 * checks report them (one check per model, named by the model).
 */
export class ModelTally {
  private readonly outcomes: { failing: number; worst: number | undefined }[];

  constructor(readonly models: readonly PrivacyModelSpec[]) {
    this.outcomes = models.map(() => ({ failing: 0, worst: undefined }));
  }

  record(m: number, r: { value: number; holds: boolean }): void {
    const o = this.outcomes[m]!;
    if (!r.holds) o.failing++;
    if (o.worst === undefined || (smallerIsWorse(this.models[m]!) ? r.value < o.worst : r.value > o.worst))
      o.worst = r.value;
  }

  /** One check per model; a model on an attribute without a context fails every class. */
  add(
    classCount: number,
    hasContext: (attribute: string) => boolean,
    add: (name: string, passed: boolean, detail: string) => void,
  ): void {
    this.models.forEach((model, m) => {
      const attribute = attributeOf(model);
      if (attribute !== undefined && !hasContext(attribute))
        for (let g = 0; g < classCount; g++) this.record(m, { value: Number.NaN, holds: false });
      const { failing, worst } = this.outcomes[m]!;
      add(
        model.model,
        failing === 0,
        `${classCount} classes, ${failing} failing; worst class: ${worst === undefined ? '—' : Number(worst.toPrecision(6))}${attribute ? ` (${attribute})` : ''}`,
      );
    });
  }
}

/** The sensitive attribute a model is about, if any. */
export function attributeOf(model: PrivacyModelSpec): string | undefined {
  return 'attribute' in model ? model.attribute : undefined;
}
