/**
 * The verifier's t-closeness EMD walks only the values a class holds (and, for the hierarchical
 * distance, the labels above them): it must equal the sum over every value of the SA, which is
 * kept here as the reference (the verifier's former code), on random classes and domains for
 * the three distances, with the edge cases (one value, a class holding every value, a class as
 * distributed as the table, ties in the order, released values the input lacks).
 */
import { describe, expect, it } from 'vitest';
import { type ClassCounts, checkCounts, emd, type SaDomain, saDomain } from '../../src/verify/models.ts';

/** A fixed linear congruential stream in [0, 1). */
function stream(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

// ---- The reference: the verifier's quadratic EMD (every value of the SA, every label). ----

interface OldTree {
  readonly height: number;
  readonly levels: readonly { child: Int32Array; parent: Int32Array; parents: number }[];
}

function oldTreeOf(values: readonly string[], hierarchy: string[][] | undefined): OldTree | null {
  if (!hierarchy || hierarchy.length === 0) return null;
  const rows = new Map(hierarchy.map((r) => [r[0]!, r]));
  const height = hierarchy[0]!.length - 1;
  if (values.some((v) => (rows.get(v)?.length ?? 0) <= height)) return null;
  const levels: OldTree['levels'][number][] = [];
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

function quadraticEmd(
  distance: 'equal' | 'ordered' | 'hierarchical',
  counts: Float64Array,
  size: number,
  sa: SaDomain,
  tree: OldTree | null,
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

// ---- Random domains and classes. ----

interface Case {
  readonly table: Map<string, number>;
  readonly hierarchy: string[][] | undefined;
  /** The table's integer weights, by value index. */
  readonly weights: number[];
}

/**
 * `m` values (numbers with repeats such as `3` and `3.0` when `numeric`, else words), shares
 * from integer weights (some equal), and a hierarchy of height `height`: random groupings,
 * `shared` making some labels repeat under two parents (the first value's parent wins).
 */
function domainCase(m: number, numeric: boolean, height: number, next: () => number, shared = false): Case {
  const values: string[] = [];
  const seen = new Set<string>();
  while (values.length < m) {
    const n = Math.floor(next() * m * 2);
    const v = numeric ? (next() < 0.2 ? `${n}.0` : String(n)) : `w${n}`;
    if (seen.has(v)) continue;
    seen.add(v);
    values.push(v);
  }
  const weights = values.map(() => (next() < 0.3 ? 5 : 1 + Math.floor(next() * 20)));
  const total = weights.reduce((a, b) => a + b, 0);
  const table = new Map(values.map((v, i) => [v, weights[i]! / total]));
  let hierarchy: string[][] | undefined;
  if (height >= 0) {
    let groups = values.map((_, i) => i);
    const rows = values.map((v) => [v]);
    for (let l = 1; l <= height; l++) {
      const fan = 2 + Math.floor(next() * 4);
      groups = groups.map((g) => (l === height && next() < 0.8 ? 0 : Math.floor(g / fan)));
      values.forEach((_, i) => {
        const label = shared && next() < 0.1 ? `L${l}_${(groups[i]! + 1) % 3}` : `L${l}_${groups[i]!}`;
        rows[i]!.push(label);
      });
    }
    hierarchy = rows;
  }
  return { table, hierarchy, weights };
}

/** A class holding `held` values (some beyond the domain: released values the input lacks). */
function classOf(
  m: number,
  held: number,
  next: () => number,
  foreign = 0,
): { cls: ClassCounts; size: number } {
  const width = m + foreign;
  const counts = new Float64Array(width);
  const present: number[] = [];
  const take = (i: number, c: number) => {
    if (counts[i] === 0) present.push(i);
    counts[i] += c;
  };
  for (let k = 0; k < held; k++) take(Math.floor(next() * m), 1 + Math.floor(next() * 5));
  for (let k = 0; k < foreign; k++) take(m + k, 1 + Math.floor(next() * 3));
  // Present in any order, as the verifier's counters give them.
  present.reverse();
  const size = present.reduce((s, i) => s + counts[i]!, 0);
  return { cls: { counts, present: Int32Array.from(present), n: present.length }, size };
}

function everyValue(m: number, weight: (i: number) => number): { cls: ClassCounts; size: number } {
  const counts = Float64Array.from({ length: m }, (_, i) => weight(i));
  const present = Int32Array.from({ length: m }, (_, i) => m - 1 - i).filter((i) => counts[i]! > 0);
  return { cls: { counts, present, n: present.length }, size: counts.reduce((a, b) => a + b, 0) };
}

const DISTANCES = ['equal', 'ordered', 'hierarchical'] as const;

function expectSame(got: number, want: number, what: string): void {
  if (Number.isNaN(want)) {
    expect(got, what).toBeNaN();
    return;
  }
  // Both sums round differently (the one over every value a running sum of m terms): 1e-12
  // relative, and 1e-14 near 0 where a relative bound means nothing.
  expect(Math.abs(got - want), `${what}: ${got} vs ${want}`).toBeLessThanOrEqual(
    1e-12 * Math.max(Math.abs(want), 0.01),
  );
}

describe('verifier EMD over the values a class holds', () => {
  it('equals the sum over every value: random classes and domains, all three distances', () => {
    let checked = 0;
    for (const [seed, m, height] of [
      [1, 1, 1],
      [2, 2, 1],
      [3, 3, 2],
      [4, 10, 0],
      [5, 40, 2],
      [6, 200, 3],
      [7, 2000, 3],
      [8, 7, 4],
    ] as const) {
      for (const numeric of [true, false]) {
        for (const shared of [false, true]) {
          const next = stream(seed * 100 + (numeric ? 1 : 0) + (shared ? 2 : 0));
          const c = domainCase(m, numeric, height, next, shared);
          const context = { table: c.table, hierarchy: c.hierarchy };
          const sa = saDomain(context);
          const tree = oldTreeOf(sa.values, c.hierarchy);
          const classes = [
            ...Array.from({ length: 30 }, () => classOf(m, 1 + Math.floor(next() * Math.min(m, 8)), next)),
            classOf(m, 3, next, 2),
            // Every value, unevenly; and exactly as the table has them (EMD 0).
            everyValue(m, () => 1 + Math.floor(next() * 3)),
            everyValue(m, (i) => c.weights[i]!),
            everyValue(m, (i) => 3 * c.weights[i]!),
          ];
          for (const { cls, size } of classes) {
            for (const distance of DISTANCES) {
              const want = quadraticEmd(distance, cls.counts, size, sa, tree);
              expectSame(emd(distance, cls, size, sa), want, `${distance}, m=${m}, seed ${seed}`);
              checked++;
            }
          }
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('is 0 for a class distributed as the table, and the one-value domain', () => {
    const next = stream(9);
    const c = domainCase(50, true, 2, next);
    const sa = saDomain({ table: c.table, hierarchy: c.hierarchy });
    const { cls, size } = everyValue(50, (i) => 2 * c.weights[i]!);
    for (const distance of DISTANCES) expect(emd(distance, cls, size, sa)).toBeLessThan(1e-15);
    const one = saDomain({ table: new Map([['7', 1]]), hierarchy: [['7', '*']] });
    const single = { counts: Float64Array.of(4), present: Int32Array.of(0), n: 1 };
    for (const distance of DISTANCES) expect(emd(distance, single, 4, one)).toBe(0);
  });

  // At t equal to the class's EMD the integers decide (no tolerance): test/models/exact-bounds.test.ts.
  it('decides t-closeness as the sum over every value does, just above and below the threshold', () => {
    const next = stream(10);
    const c = domainCase(500, true, 3, next);
    const context = { table: c.table, hierarchy: c.hierarchy };
    const sa = saDomain(context);
    const tree = oldTreeOf(sa.values, c.hierarchy);
    for (let r = 0; r < 200; r++) {
      const { cls, size } = classOf(500, 1 + Math.floor(next() * 60), next);
      for (const distance of DISTANCES) {
        const want = quadraticEmd(distance, cls.counts, size, sa, tree);
        // t just above and just below the class's own EMD.
        for (const t of [want + 1e-9, want - 1e-9].filter((x) => x >= 0 && x <= 1)) {
          const got = checkCounts({ model: 't-closeness', attribute: 's', t, distance }, size, cls, sa);
          expect(got.holds, `${distance} t=${t} EMD=${want}`).toBe(want <= t);
        }
      }
    }
  });

  it("reads the SA's shares only at the values a class holds and the labels above them", () => {
    // 100,000 values, a class holding 3: the reads of the domain's arrays are counted.
    const m = 100_000;
    const next = stream(11);
    const c = domainCase(m, true, 3, next);
    const sa = saDomain({ table: c.table, hierarchy: c.hierarchy });
    let reads = 0;
    const counted = <T extends object>(array: T): T =>
      new Proxy(array, {
        get(target, key) {
          if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
          const value = Reflect.get(target, key);
          return typeof value === 'function' ? value.bind(target) : value;
        },
      });
    const tree = sa.tree as unknown as Record<string, unknown> | null;
    const watched = {
      ...Object.fromEntries(
        Object.entries(sa).map(([key, value]) => [key, ArrayBuffer.isView(value) ? counted(value) : value]),
      ),
      tree: tree && {
        ...tree,
        ...Object.fromEntries(
          Object.entries(tree).map(([key, value]) => [
            key,
            Array.isArray(value) ? value.map((x) => (ArrayBuffer.isView(x) ? counted(x) : x)) : value,
          ]),
        ),
      },
    } as unknown as SaDomain;
    const { cls, size } = classOf(m, 3, next);
    for (const distance of DISTANCES) {
      reads = 0;
      emd(distance, cls, size, watched);
      // log2(m) ≈ 17 steps of a binary search per gap, a few reads per label.
      expect(reads, distance).toBeLessThan(300);
    }
  });
});
