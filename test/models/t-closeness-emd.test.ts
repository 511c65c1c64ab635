/**
 * The builder's t-closeness EMD sums over the values a class holds (and the labels above
 * them), the values it lacks at once: it must equal the sum over every value, kept here as
 * the reference (the former code of src/models/t-closeness.ts), on random classes, domains and
 * hierarchies, with the edge cases (one value, a class holding every value, a class as
 * distributed as the table, ties, person weights, labels no value maps to). Every class model
 * reads a class's sparse counts (the values it holds) to the same figure as its dense ones.
 */
import { describe, expect, it } from 'vitest';
import type { Hierarchy } from '../../src/hierarchy/hierarchy.ts';
import { deltaDisclosure } from '../../src/models/delta-disclosure.ts';
import { distinctLDiversity, entropyLDiversity, recursiveClDiversity } from '../../src/models/l-diversity.ts';
import type { SaCounts } from '../../src/models/model.ts';
import { type Emd, equalEmd, hierarchicalEmd, orderedEmd, tCloseness } from '../../src/models/t-closeness.ts';

/** A fixed linear congruential stream in [0, 1). */
function stream(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

// ---- The reference: the former EMD over every value of the SA and every label. ----

/** The reference reads dense counts only. */
type DenseEmd = (histogram: SaCounts, size: number) => number;

function quadraticEqual(table: Float64Array): DenseEmd {
  return (h, size) => {
    let d = 0;
    for (let s = 0; s < table.length; s++) d += Math.abs(h[s]! / size - table[s]!);
    return d / 2;
  };
}

function quadraticOrdered(table: Float64Array, order: readonly number[]): DenseEmd {
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

function quadraticHierarchical(table: Float64Array, hierarchy: Hierarchy): DenseEmd {
  const H = hierarchy.height;
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
        if (p < 0) continue;
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

// ---- Random tables, hierarchies and classes. ----

/** Shares from integer weights (some equal, some 0: a dictionary value no row holds). */
function tableOf(m: number, next: () => number): { table: Float64Array; weights: number[] } {
  const weights = Array.from({ length: m }, (): number =>
    next() < 0.3 ? 5 : next() < 0.05 ? 0 : 1 + Math.floor(next() * 20),
  );
  if (!weights.some((w) => w > 0)) weights[0] = 1;
  const total = weights.reduce((a, b) => a + b, 0);
  return { table: Float64Array.from(weights, (w) => w / total), weights };
}

/** An order of the codes with no relation to them (a shuffle). */
function orderOf(m: number, next: () => number): number[] {
  const order = Array.from({ length: m }, (_, s) => s);
  for (let i = m - 1; i > 0; i--) {
    const j = Math.floor(next() * (i + 1));
    [order[i], order[j]] = [order[j]!, order[i]!];
  }
  return order;
}

/**
 * A hierarchy of `height` levels over m codes, each level grouping the one below, the top
 * level into one or a few labels; each level lists labels no code maps to besides.
 */
function hierarchyOf(m: number, height: number, next: () => number): Hierarchy {
  const levelTables = [Int32Array.from({ length: m }, (_, s) => s)];
  const labels = [Array.from({ length: m }, (_, s) => `v${s}`)];
  let group = Array.from({ length: m }, (_, s) => s);
  for (let l = 1; l <= height; l++) {
    const fan = 2 + Math.floor(next() * 4);
    group = group.map((g) => (l === height && next() < 0.8 ? 0 : Math.floor(g / fan)));
    const ids = new Map<number, number>();
    // An unused label first, then the groups in order of first use.
    const names = [`unused${l}`];
    const table = Int32Array.from(group, (g) => {
      let id = ids.get(g);
      if (id === undefined) ids.set(g, (id = names.push(`L${l}_${g}`) - 1));
      return id;
    });
    levelTables.push(table);
    labels.push(names);
  }
  const zeros = labels.map((l) => new Int32Array(l.length));
  return {
    attribute: 'sa',
    height,
    levelTables,
    labels,
    leaves: zeros,
    domain: m,
    rows: m,
    rowsUnder: zeros,
    source: 'test',
  };
}

/** A class holding `held` values, counts or person weights, dense over the m codes. */
function classOf(
  m: number,
  held: number,
  next: () => number,
  weighted: boolean,
): { h: SaCounts; size: number } {
  const h = weighted ? new Float64Array(m) : new Int32Array(m);
  for (let k = 0; k < held; k++)
    h[Math.floor(next() * m)]! += weighted ? 0.25 + next() : 1 + Math.floor(next() * 5);
  let size = 0;
  for (const c of h) size += c;
  return { h, size };
}

function expectSame(got: number, want: number, what: string): void {
  // Both sums round differently (the one over every value a running sum of m terms): 1e-12
  // relative, and 1e-14 near 0 where a relative bound means nothing.
  expect(Math.abs(got - want), `${what}: ${got} vs ${want}`).toBeLessThanOrEqual(
    1e-12 * Math.max(Math.abs(want), 0.01),
  );
}

describe("builder's EMD over the values a class holds", () => {
  it('equals the sum over every value: random classes, domains and hierarchies, all three distances', () => {
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
      const next = stream(seed);
      const { table, weights } = tableOf(m, next);
      const order = orderOf(m, next);
      const hierarchy = hierarchyOf(m, height, next);
      const pairs: [string, Emd, DenseEmd][] = [
        ['equal', equalEmd(table), quadraticEqual(table)],
        ['ordered', orderedEmd(table, order), quadraticOrdered(table, order)],
        ['hierarchical', hierarchicalEmd(table, hierarchy), quadraticHierarchical(table, hierarchy)],
      ];
      const every = (h: Int32Array) => ({ h, size: h.reduce((a, b) => a + b, 0) });
      const classes = [
        ...Array.from({ length: 40 }, (_, r) =>
          classOf(m, 1 + Math.floor(next() * Math.min(m, 8)), next, r % 4 === 3),
        ),
        // Every value, unevenly; and exactly as the table has them (EMD 0).
        every(Int32Array.from({ length: m }, () => 1 + Math.floor(next() * 3))),
        every(Int32Array.from(weights)),
        every(Int32Array.from(weights, (w) => 3 * w)),
      ];
      for (const { h, size } of classes) {
        for (const [distance, emd, reference] of pairs) {
          expectSame(emd(h, size), reference(h, size), `${distance}, m=${m}, seed ${seed}`);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('gives every model the same figure, to the bit, from a class’s sparse counts as from its dense ones', () => {
    let checked = 0;
    for (const [seed, m, height] of [
      [21, 1, 1],
      [22, 2, 1],
      [23, 9, 2],
      [24, 300, 3],
      [25, 3000, 2],
    ] as const) {
      const next = stream(seed);
      const { table } = tableOf(m, next);
      const order = orderOf(m, next);
      const hierarchy = hierarchyOf(m, height, next);
      const models = [
        tCloseness('sa', 0.2, 'equal', equalEmd(table)),
        tCloseness('sa', 0.2, 'ordered', orderedEmd(table, order)),
        tCloseness('sa', 0.2, 'hierarchical', hierarchicalEmd(table, hierarchy)),
        distinctLDiversity('sa', 2),
        entropyLDiversity('sa', 1.7),
        recursiveClDiversity('sa', 2.5, 2),
        deltaDisclosure('sa', 1, table),
      ];
      const classes = [
        ...Array.from({ length: 30 }, (_, r) =>
          classOf(m, 1 + Math.floor(next() * Math.min(m, 12)), next, r % 3 === 2),
        ),
        // Every value held (the ordered distance's dense walk).
        (() => {
          const h = Int32Array.from({ length: m }, () => 1 + Math.floor(next() * 3));
          return { h: h as SaCounts, size: h.reduce((a, b) => a + b, 0) };
        })(),
      ];
      for (const { h, size } of classes) {
        // The held entries in place inside larger arrays, as a set's CSR arrays hold them.
        const held = [...h.keys()].filter((s) => h[s] !== 0);
        const codes = Int32Array.from([7, ...held, 3]);
        const counts =
          h instanceof Float64Array ? new Float64Array(held.length + 2) : new Int32Array(held.length + 2);
        held.forEach((s, i) => {
          counts[i + 1] = h[s]!;
        });
        const sparse = { codes, counts, from: 1, to: 1 + held.length };
        for (const model of models) {
          const [a, b] = [model.measure({ size, histogram: h }), model.measure({ size, histogram: sparse })];
          expect(Object.is(a, b), `${model.spec.model} m=${m}: ${a} vs ${b}`).toBe(true);
          expect(model.holds({ size, histogram: sparse })).toBe(model.holds({ size, histogram: h }));
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(1000);
  });

  it('reads the table only at the values a class holds', () => {
    // 100,000 values, a class holding 3: the reads of the table's shares are counted.
    const m = 100_000;
    const next = stream(12);
    const plain = tableOf(m, next).table;
    let reads = 0;
    const table = new Proxy(plain, {
      get(target, key) {
        if (typeof key === 'string' && /^\d+$/.test(key)) reads++;
        const value = Reflect.get(target, key);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const emds: [string, Emd][] = [
      ['equal', equalEmd(table)],
      ['ordered', orderedEmd(table, orderOf(m, next))],
      ['hierarchical', hierarchicalEmd(table, hierarchyOf(m, 3, next))],
    ];
    const { h, size } = classOf(m, 3, next, false);
    for (const [distance, emd] of emds) {
      reads = 0;
      emd(h, size);
      expect(reads, distance).toBeLessThanOrEqual(6);
    }
  });
});
