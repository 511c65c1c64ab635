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
import { allNumbers } from '../data/table.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';

/** One class's SA counts by value. */
export type ValueCounts = Map<string, number>;

export interface SensitiveContext {
  /** The SA's share of each value over the whole input. */
  readonly table: ReadonlyMap<string, number>;
  /** Hierarchy rows `[value, level1, …]` of the SA, when it has one. */
  readonly hierarchy: string[][] | undefined;
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
  /** Value indices in the ordered distance's order (numeric when every value is a number). */
  readonly ordered: Int32Array;
  /** The hierarchical distance's walk, or null without a (complete) hierarchy. */
  readonly tree: Tree | null;
}

/** Per level 1 … height: each distinct child node (first seen in value order) with its parent. */
interface Tree {
  readonly height: number;
  readonly levels: readonly { child: Int32Array; parent: Int32Array; parents: number }[];
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
  return { values, index, share, ordered: Int32Array.from(order), tree: treeOf(values, sa.hierarchy) };
}

function treeOf(values: readonly string[], hierarchy: string[][] | undefined): Tree | null {
  if (!hierarchy || hierarchy.length === 0) return null;
  const rows = new Map(hierarchy.map((r) => [r[0]!, r]));
  const height = hierarchy[0]!.length - 1;
  if (values.some((v) => (rows.get(v)?.length ?? 0) <= height)) return null;
  const levels: Tree['levels'][number][] = [];
  // Level 0 nodes are the values themselves.
  let nodeOf = Int32Array.from(values, (_, i) => i);
  for (let level = 1; level <= height; level++) {
    const ids = new Map<string, number>();
    const next = Int32Array.from(values, (v) => {
      const label = rows.get(v)![level]!;
      let id = ids.get(label);
      if (id === undefined) ids.set(label, (id = ids.size));
      return id;
    });
    const seen = new Set<number>();
    const child: number[] = [];
    const parent: number[] = [];
    for (let i = 0; i < values.length; i++) {
      if (seen.has(nodeOf[i]!)) continue;
      seen.add(nodeOf[i]!);
      child.push(nodeOf[i]!);
      parent.push(next[i]!);
    }
    levels.push({ child: Int32Array.from(child), parent: Int32Array.from(parent), parents: ids.size });
    nodeOf = next;
  }
  return { height, levels };
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
    return { value: Math.exp(h), holds: h >= Math.log(model.l) - 1e-12 };
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
    const value = emd(model.distance, cls!.counts, size, sa!);
    return { value, holds: value <= model.t + 1e-12 };
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

/** Earth mover's distance between the class's SA distribution and the input's. */
function emd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  counts: Float64Array,
  size: number,
  sa: SaDomain,
): number {
  const m = sa.values.length;
  const diff = new Float64Array(m);
  for (let i = 0; i < m; i++) diff[i] = counts[i]! / size - sa.share[i]!;
  if (distance === 'equal') {
    let s = 0;
    for (let i = 0; i < m; i++) s += Math.abs(diff[i]!);
    return s / 2;
  }
  if (distance === 'ordered') {
    if (m < 2) return 0;
    let running = 0;
    let total = 0;
    for (let k = 0; k < m; k++) {
      running += diff[sa.ordered[k]!]!;
      total += Math.abs(running);
    }
    return total / (m - 1);
  }
  // Hierarchical: walk the tree level by level; a node's cost is its height share times
  // the mass that must move between its children.
  const tree = sa.tree;
  if (!tree) return Number.NaN;
  if (tree.height === 0) return 0;
  let extra = diff;
  let cost = 0;
  tree.levels.forEach(({ child, parent, parents }, l) => {
    const level = l + 1;
    const pos = new Float64Array(parents);
    const neg = new Float64Array(parents);
    const next = new Float64Array(parents);
    const order: number[] = [];
    const touched = new Uint8Array(parents);
    for (let k = 0; k < child.length; k++) {
      const p = parent[k]!;
      const e = extra[child[k]!]!;
      if (e > 0) pos[p] += e;
      else neg[p] -= e;
      next[p] += e;
      if (!touched[p]) {
        touched[p] = 1;
        order.push(p);
      }
    }
    for (const p of order) cost += (level / tree.height) * Math.min(pos[p]!, neg[p]!);
    extra = next;
  });
  return cost;
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
