import { describe, expect, it } from 'vitest';
import type { GroupingKernel, GroupingResult, GroupingSession } from '../../src/kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { chunkedWasmKernel, wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { Random } from '../../src/util/random.ts';
import { prepareAdult } from '../helpers/adult.ts';

function same(a: GroupingResult, b: GroupingResult) {
  expect(a.groups).toBe(b.groups);
  expect(Array.from(a.groupOf)).toEqual(Array.from(b.groupOf));
  expect(Array.from(a.sizes)).toEqual(Array.from(b.sizes));
  expect(Array.from(a.reps)).toEqual(Array.from(b.reps));
}

/**
 * Grouping `upper` from the classes of `lower` (a rollup) gives exactly the groups of grouping
 * the tuples at `upper`: same ids, sizes and representatives, and the composed map.
 */
function rollsUp(session: GroupingSession, lower: ArrayLike<number>, upper: ArrayLike<number>) {
  const from = session.group(lower);
  const direct = session.group(upper);
  const r = session.rollup(upper, from);
  same({ ...r, groupOf: session.compose(from.groupOf, r.map!) }, direct);
  // Without its map the rollup still numbers the groups as grouping the tuples does.
  const bare = session.rollup(upper, from, false);
  expect(bare.map).toBeUndefined();
  same({ ...bare, groupOf: direct.groupOf }, direct);
}

/** A random node at or above `levels` (each level raised by a random amount within its height). */
function above(rng: Random, levels: readonly number[], heights: readonly number[]): number[] {
  return levels.map((l, i) => l + rng.below(heights[i]! - l + 1));
}

/** A random table: m columns over the given domains, n rows, and random level tables. */
function randomInput(rng: Random, n: number, domains: number[]) {
  const columns = domains.map((d) => Int32Array.from({ length: n }, () => rng.below(d)));
  const counts = Int32Array.from({ length: n }, () => 1 + rng.below(5));
  const tables = domains.map((d) => [
    Int32Array.from({ length: d }, (_, c) => c),
    Int32Array.from({ length: d }, (_, c) => c >> 1),
    new Int32Array(d),
  ]);
  return { columns, counts, tables, domains };
}

describe('grouping kernel: WASM equals the TS reference', () => {
  const prepared = prepareAdult();
  const { tuples, hierarchies, qis, problem } = prepared;
  const open = (k: GroupingKernel) =>
    k.open(
      { columns: tuples.columns, counts: tuples.counts, domains: qis.map((c) => c.dictionary.length) },
      hierarchies.map((h) => h.levelTables),
    );

  it('on 200 random nodes of the Adult lattice, and on the identity', () => {
    const wasm = open(wasmGroupingKernel);
    const ts = open(tsGroupingKernel);
    same(wasm.group(null), ts.group(null));
    const rng = new Random(7);
    for (let i = 0; i < 200; i++) {
      const levels = problem.lattice.levels(rng.below(problem.lattice.size));
      same(wasm.group(levels), ts.group(levels));
    }
    // grouping the (QI + SA) tuples on their QIs gives the distinct QI tuples of the input
    const distinct = new Set(
      Array.from({ length: prepared.table.rowCount }, (_, r) => qis.map((c) => c.codes[r]).join(',')),
    );
    expect(wasm.group(null).groups).toBe(distinct.size);
  });

  it('a rollup from a lower node equals grouping the tuples, WASM and TS, on 200 random pairs', () => {
    const heights = hierarchies.map((h) => h.height);
    const rng = new Random(17);
    for (const kernel of [wasmGroupingKernel, tsGroupingKernel]) {
      const session = open(kernel);
      for (let i = 0; i < 100; i++) {
        const lower = problem.lattice.levels(rng.below(problem.lattice.size));
        rollsUp(session, lower, above(rng, lower, heights));
      }
    }
    // the bottom and the top, and a rollup onto the same node
    const session = open(wasmGroupingKernel);
    rollsUp(
      session,
      heights.map(() => 0),
      heights,
    );
    rollsUp(session, heights, heights);
  });

  it('rolls up from groupings kept aside, in any order, as from each one afresh', () => {
    // A search rolls up many nodes from one lower grouping, between rollups from others: the
    // sources left in the instance by one call must serve the next only when they are its own.
    const heights = hierarchies.map((h) => h.height);
    const rng = new Random(29);
    const wasm = open(wasmGroupingKernel);
    const ts = open(tsGroupingKernel);
    const kept = Array.from({ length: 4 }, () => problem.lattice.levels(rng.below(problem.lattice.size)));
    const froms = kept.map((levels) => ({ levels, wasm: wasm.group(levels), ts: ts.group(levels) }));
    for (let i = 0; i < 120; i++) {
      const from = froms[rng.below(froms.length)]!;
      const upper = above(rng, from.levels, heights);
      const a = wasm.rollup(upper, from.wasm);
      const b = ts.rollup(upper, from.ts);
      same(
        { ...a, groupOf: wasm.compose(from.wasm.groupOf, a.map!) },
        { ...b, groupOf: ts.compose(from.ts.groupOf, b.map!) },
      );
      // Now and then a grouping of the tuples between rollups.
      if (i % 7 === 0) same(wasm.group(upper), ts.group(upper));
    }
  });

  it('rejects a rollup source that names tuples outside the session', () => {
    for (const kernel of [wasmGroupingKernel, tsGroupingKernel]) {
      const session = open(kernel);
      const bad = { groups: 1, sizes: Int32Array.of(1), reps: Int32Array.of(tuples.counts.length) };
      expect(() => session.rollup(problem.lattice.levels(0), bad)).toThrow(/outside/);
      const n = tuples.counts.length;
      const tooMany = { groups: n + 1, sizes: new Int32Array(n + 1), reps: new Int32Array(n + 1) };
      expect(() => session.rollup(problem.lattice.levels(0), tooMany)).toThrow(/classes over/);
      // Found mid-way (after classes were counted, hashed or direct): the session still groups right.
      const bottom = session.group(problem.lattice.levels(0));
      for (const levels of [problem.lattice.levels(0), problem.lattice.levels(problem.lattice.top)]) {
        const late = { ...bottom, reps: Int32Array.from(bottom.reps, (t, g) => (g === 5 ? -3 : t)) };
        expect(() => session.rollup(levels, late)).toThrow(/outside/);
        rollsUp(session, problem.lattice.levels(0), levels);
      }
    }
  });

  it('collapsing Adult rows gives counts that sum to the row count', () => {
    expect(tuples.counts.reduce((a, b) => a + b, 0)).toBe(prepared.table.rowCount);
    // every row maps to a tuple with its own codes
    for (let r = 0; r < prepared.table.rowCount; r += 97) {
      const t = tuples.rowToTuple[r]!;
      qis.forEach((c, i) => {
        expect(tuples.columns[i]![t]).toBe(c.codes[r]);
      });
    }
  });

  it('on random tables, including n = 0, n = 1 and codes at the top of the domain', () => {
    const rng = new Random(11);
    for (const [n, domains] of [
      [0, [3, 4]],
      [1, [1]],
      [1, [5, 5, 5]],
      [50, [2, 1000]],
      [5000, [7, 3, 11, 2]],
      [3000, [2 ** 20, 2 ** 20, 2 ** 20, 2 ** 20]], // product beyond 2^53: the tuple-compare path
    ] as [number, number[]][]) {
      const input = randomInput(rng, n, domains);
      for (let i = 0; i < input.columns.length && n > 0; i++) input.columns[i]![0] = domains[i]! - 1;
      const wasm = wasmGroupingKernel.open(input, input.tables);
      const ts = tsGroupingKernel.open(input, input.tables);
      same(wasm.group(null), ts.group(null));
      expect(wasm.keys(wasm.group(null).groups).map((k) => Array.from(k))).toEqual(
        ts.keys(ts.group(null).groups).map((k) => Array.from(k)),
      );
      for (const level of [1, 2]) {
        const levels = domains.map(() => level);
        const a = wasm.group(levels);
        same(a, ts.group(levels));
        const values = Int32Array.from({ length: n }, () => rng.below(4));
        expect(Array.from(wasm.histogram(a.groupOf, a.groups, values, 4))).toEqual(
          Array.from(ts.histogram(a.groupOf, a.groups, values, 4)),
        );
        // from the level below: the rollup path (direct-addressed, hashed or tuple-compared)
        const from = wasm.group(domains.map(() => level - 1));
        const r = wasm.rollup(levels, from);
        const t = ts.rollup(levels, ts.group(domains.map(() => level - 1)));
        expect(Array.from(r.map!)).toEqual(Array.from(t.map!));
        same({ ...r, groupOf: wasm.compose(from.groupOf, r.map!) }, a);
      }
    }
  });

  it('a disposed session hands its instance to the next: sessions of every size still group right', () => {
    const rng = new Random(11);
    // Sizes around the direct table's 2^20 slots (n > 2^19 needs a larger table), up and down.
    for (const n of [3000, 600_000, 40, 700_000, 5000, 1]) {
      const input = randomInput(rng, n, [300, 300, 40]); // hashed: slots all over the table
      const wasm = wasmGroupingKernel.open(input, input.tables);
      const ts = tsGroupingKernel.open(input, input.tables);
      same(wasm.group(null), ts.group(null));
      same(wasm.group([1, 1, 1]), ts.group([1, 1, 1]));
      wasm.dispose();
      expect(() => wasm.group(null)).toThrow(/after dispose/);
    }
  });

  it('rejects codes outside their domain before they reach unchecked loops', () => {
    const input = { columns: [Int32Array.of(0, 3)], domains: [3] };
    expect(() => wasmGroupingKernel.open(input, [[]])).toThrow(/outside/);
    expect(() => tsGroupingKernel.open(input, [[]])).toThrow(/outside/);
  });
});

describe('grouping in chunks (sessions past one instance) equals one session', () => {
  it('on Adult: the identity, 40 random nodes, rollups, keys and histograms, in chunks of 997 tuples', () => {
    const prepared = prepareAdult();
    const { tuples, hierarchies, qis, problem } = prepared;
    const input = {
      columns: tuples.columns,
      counts: tuples.counts,
      domains: qis.map((c) => c.dictionary.length),
    };
    const tables = hierarchies.map((h) => h.levelTables);
    const one = tsGroupingKernel.open(input, tables);
    const chunked = chunkedWasmKernel(997).open(input, tables);
    const bottom = chunked.group(null);
    same(bottom, one.group(null));
    expect(chunked.keys(bottom.groups).map((k) => Array.from(k))).toEqual(
      one.keys(one.group(null).groups).map((k) => Array.from(k)),
    );
    const heights = hierarchies.map((h) => h.height);
    const rng = new Random(23);
    for (let i = 0; i < 40; i++) {
      const lower = problem.lattice.levels(rng.below(problem.lattice.size));
      const upper = above(rng, lower, heights);
      const a = chunked.group(upper);
      same(a, one.group(upper));
      expect(chunked.keys(a.groups).map((k) => Array.from(k))).toEqual(
        one.keys(a.groups).map((k) => Array.from(k)),
      );
      rollsUp(chunked, lower, upper);
      const values = Int32Array.from({ length: tuples.counts.length }, () => rng.below(6));
      expect(Array.from(chunked.histogram(a.groupOf, a.groups, values, 6))).toEqual(
        Array.from(one.histogram(a.groupOf, a.groups, values, 6)),
      );
    }
  });

  it('on random tables, packed and whole-tuple keys, chunks from 1 tuple up', () => {
    const rng = new Random(29);
    for (const [n, domains, chunk] of [
      [0, [3, 4], 5],
      [1, [5, 5, 5], 1],
      [100, [7, 3, 11, 2], 1],
      [5000, [7, 3, 11, 2], 64],
      [3000, [2 ** 14, 2 ** 14, 2 ** 14, 2 ** 14], 1000], // product beyond 2^53: whole tuples compared
      [9000, [300, 300, 40], 2048],
    ] as [number, number[], number][]) {
      const input = randomInput(rng, n, domains);
      const chunked = chunkedWasmKernel(chunk).open(input, input.tables);
      const ts = tsGroupingKernel.open(input, input.tables);
      same(chunked.group(null), ts.group(null));
      for (const level of [0, 1, 2]) {
        const levels = domains.map(() => level);
        same(chunked.group(levels), ts.group(levels));
        if (level > 0)
          rollsUp(
            chunked,
            domains.map(() => level - 1),
            levels,
          );
      }
    }
  });

  it('splits near-distinct tuples into parts by key, a class of many tuples merged in chunks within its part', () => {
    const rng = new Random(31);
    const n = 12_000;
    const input = randomInput(rng, n, [5000, 5000, 3]);
    // A fifth of the tuples alike: their part holds more than one chunk, at every level.
    for (let t = 0; t < n; t += 5) for (const col of input.columns) col[t] = 1;
    const ts = tsGroupingKernel.open(input, input.tables);
    for (const chunk of [256, 1000]) {
      const parts = chunkedWasmKernel(chunk).open(input, input.tables);
      same(parts.group(null), ts.group(null));
      for (const levels of [
        [0, 0, 0],
        [1, 0, 2],
        [1, 1, 1],
        [2, 2, 0],
      ]) {
        const r = parts.group(levels);
        same(r, ts.group(levels));
        expect(parts.keys(r.groups).map((k) => Array.from(k))).toEqual(
          ts.keys(r.groups).map((k) => Array.from(k)),
        );
      }
      rollsUp(parts, [0, 0, 0], [1, 0, 1]);
      rollsUp(parts, [1, 0, 0], [1, 1, 2]);
    }
  });

  it('rejects what one session rejects: codes outside their domain, rollup sources outside the tuples', () => {
    const input = { columns: [Int32Array.of(0, 3)], domains: [3] };
    expect(() => chunkedWasmKernel(1).open(input, [[]])).toThrow(/outside/);
    const ok = chunkedWasmKernel(1).open({ columns: [Int32Array.of(0, 2)], domains: [3] }, [[]]);
    expect(() => ok.rollup([0], { groups: 1, sizes: Int32Array.of(1), reps: Int32Array.of(2) })).toThrow(
      /outside/,
    );
  });
});
