/**
 * Independent re-checks of the privacy models on a released table's classes. Written apart
 * from src/models/ on purpose: it works on value strings and counts, not codes and
 * histograms, so a bug in the search's models cannot hide in its own verification.
 */
import type { PrivacyModelSpec } from '../spec/spec.ts';

/** One class's SA counts by value. */
export type ValueCounts = Map<string, number>;

export interface SensitiveContext {
  /** The SA's share of each value over the whole input. */
  readonly table: ReadonlyMap<string, number>;
  /** Hierarchy rows `[value, level1, …]` of the SA, when it has one. */
  readonly hierarchy: string[][] | undefined;
}

/** The model's value on one class (`k`, `l`, `c`-ratio, `t`, `δ`) and whether it holds. */
export function checkClass(
  model: PrivacyModelSpec,
  size: number,
  counts: ValueCounts | undefined,
  sa: SensitiveContext | undefined,
): { value: number; holds: boolean } {
  switch (model.model) {
    case 'k-anonymity':
      return { value: size, holds: size >= model.k };
    case 'distinct-l-diversity': {
      const value = [...counts!.values()].filter((c) => c > 0).length;
      return { value, holds: value >= model.l };
    }
    case 'entropy-l-diversity': {
      let h = 0;
      for (const c of counts!.values()) if (c > 0) h -= (c / size) * Math.log(c / size);
      return { value: Math.exp(h), holds: h >= Math.log(model.l) - 1e-12 };
    }
    case 'recursive-cl-diversity': {
      const sorted = [...counts!.values()].filter((c) => c > 0).sort((a, b) => b - a);
      const tail = sorted.slice(model.l - 1).reduce((a, b) => a + b, 0);
      const value = sorted.length < model.l || tail === 0 ? Number.POSITIVE_INFINITY : sorted[0]! / tail;
      return { value, holds: value < model.c };
    }
    case 't-closeness': {
      const value = emd(model.distance, counts!, size, sa!);
      return { value, holds: value <= model.t + 1e-12 };
    }
    case 'delta-disclosure': {
      let value = 0;
      for (const [v, c] of counts!)
        if (c > 0) value = Math.max(value, Math.abs(Math.log(c / size / sa!.table.get(v)!)));
      return { value, holds: value < model.delta };
    }
    default:
      return { value: Number.NaN, holds: false };
  }
}

function emd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  counts: ValueCounts,
  size: number,
  sa: SensitiveContext,
): number {
  const values = [...sa.table.keys()];
  const diff = new Map(values.map((v) => [v, (counts.get(v) ?? 0) / size - sa.table.get(v)!]));
  if (distance === 'equal') return [...diff.values()].reduce((s, d) => s + Math.abs(d), 0) / 2;
  if (distance === 'ordered') {
    const numeric = values.every((v) => v.trim() !== '' && Number.isFinite(Number(v)));
    const ordered = [...values].sort((a, b) =>
      numeric ? Number(a) - Number(b) : a < b ? -1 : a > b ? 1 : 0,
    );
    if (ordered.length < 2) return 0;
    let running = 0;
    let total = 0;
    for (const v of ordered) {
      running += diff.get(v)!;
      total += Math.abs(running);
    }
    return total / (ordered.length - 1);
  }
  // Hierarchical: walk the tree level by level; a node's cost is its height share times
  // the mass that must move between its children.
  const rows = new Map(sa.hierarchy!.map((r) => [r[0]!, r]));
  const height = sa.hierarchy![0]!.length - 1;
  if (height === 0) return 0;
  let extra = new Map<string, number>(diff);
  let path = new Map(values.map((v) => [v, v]));
  let cost = 0;
  for (let level = 1; level <= height; level++) {
    const pos = new Map<string, number>();
    const neg = new Map<string, number>();
    const next = new Map<string, number>();
    const seen = new Set<string>();
    for (const v of values) {
      const child = path.get(v)!;
      const parent = `${level}:${rows.get(v)![level]!}`;
      if (!seen.has(child)) {
        seen.add(child);
        const e = extra.get(child)!;
        if (e > 0) pos.set(parent, (pos.get(parent) ?? 0) + e);
        else neg.set(parent, (neg.get(parent) ?? 0) - e);
        next.set(parent, (next.get(parent) ?? 0) + e);
      }
    }
    for (const node of next.keys())
      cost += (level / height) * Math.min(pos.get(node) ?? 0, neg.get(node) ?? 0);
    path = new Map(values.map((v) => [v, `${level}:${rows.get(v)![level]!}`]));
    extra = next;
  }
  return cost;
}
