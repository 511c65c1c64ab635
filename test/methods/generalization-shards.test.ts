/**
 * The search over row shards: the shards' tuples merged as grouping their concatenation would,
 * one shard at a time, none held once merged.
 */
import { describe, expect, it } from 'vitest';
import type { EncodedTable } from '../../src/data/table.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { prepareGeneralization, searchStep } from '../../src/methods/generalization/index.ts';
import { ConcatMerge, TupleMerge } from '../../src/methods/generalization/merge.ts';
import { generalizationShards } from '../../src/methods/generalization/shards.ts';
import type { ShardTuples } from '../../src/methods/method.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { Random } from '../../src/util/random.ts';
import { adultSpec } from '../helpers/adult.ts';

const quiet = { time: <T>(_: string, work: () => T) => work(), say: () => {} };

function shardsOf(table: EncodedTable, rows: number): EncodedTable[] {
  const out: EncodedTable[] = [];
  for (let at = 0; at < table.rowCount; at += rows) {
    const end = Math.min(table.rowCount, at + rows);
    out.push({
      ...table,
      rowCount: end - at,
      columns: table.columns.map((c) => ({ ...c, codes: c.codes.slice(at, end) })),
    });
  }
  return out;
}

const copy = (t: Pick<ShardTuples, 'columns' | 'counts'>) => ({
  columns: t.columns.map((c) => c.slice()),
  counts: t.counts.slice(),
});

describe('TupleMerge', () => {
  // Tuples pack into one number when the domains' product is at most 2^53; wider domains are
  // compared column by column. Both must merge alike.
  // Large shards into a large table are probed region by region; their ids must not change.
  for (const [wide, large] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ])
    it(`gives the ids, counts and tuples that grouping the shards concatenated gives (${wide ? 'wide domains' : 'packed'}${large ? ', large shards' : ''})`, () => {
      const random = new Random(3);
      const domains = large ? [97, 3, 5000] : [7, 3, 500];
      // Four shards of distinct tuples each, many shared between shards.
      const parts = (large ? [60_000, 1, 20_000, 80_000] : [900, 1, 2500, 1200]).map((n) => {
        const seen = new Set<string>();
        const columns = domains.map(() => new Int32Array(n));
        let t = 0;
        while (t < n) {
          const tuple = domains.map((d) => random.below(d));
          if (seen.has(tuple.join())) continue;
          seen.add(tuple.join());
          tuple.forEach((v, i) => {
            columns[i]![t] = v;
          });
          t++;
        }
        return { columns, counts: Int32Array.from({ length: n }, () => 1 + random.below(4)) };
      });
      // The same codes, declared in domains whose product passes 2^53 (2^60 · 10^6).
      const merge = new TupleMerge(wide ? domains.map((d, i) => (i === 0 ? 2 ** 60 : d)) : domains);
      const groupOf = parts.map((p) => merge.add(p));
      const merged = merge.done();

      const concat = (pick: (p: (typeof parts)[number]) => Int32Array) => {
        const out = new Int32Array(parts.reduce((n, p) => n + p.counts.length, 0));
        let at = 0;
        for (const p of parts) {
          out.set(pick(p), at);
          at += p.counts.length;
        }
        return out;
      };
      const session = wasmGroupingKernel.open(
        {
          columns: domains.map((_, i) => concat((p) => p.columns[i]!)),
          counts: concat((p) => p.counts),
          domains,
        },
        domains.map(() => []),
      );
      const grouped = session.group(null);
      expect(merged.counts).toEqual(grouped.sizes);
      expect(merged.columns).toEqual(session.keys(grouped.groups));
      expect(concat((p) => groupOf[parts.indexOf(p)]!)).toEqual(grouped.groupOf);
      session.dispose();
    });
});

describe('ConcatMerge', () => {
  it('gives the ids, counts and tuples TupleMerge gives, packed or wide, the arrays grown past what it expected', () => {
    const random = new Random(11);
    for (const domains of [
      [97, 3, 5000],
      [40_000, 50_000, 3_000_000, 9],
    ]) {
      // Nearly distinct shards with some tuples shared between them, one of a single tuple.
      // (A shard's tuples are distinct: the pool's are.)
      const pool = [
        ...new Map(
          Array.from({ length: 30_000 }, () => domains.map((d) => random.below(d))).map((t) => [t.join(), t]),
        ).values(),
      ];
      const parts = [12_000, 1, 9_000, 15_000].map((n) => {
        const picked = new Set<number>();
        while (picked.size < Math.min(n, pool.length)) picked.add(random.below(pool.length));
        const tuples = [...picked].map((i) => pool[i]!);
        return {
          columns: domains.map((_, i) => Int32Array.from(tuples, (t) => t[i]!)),
          counts: Int32Array.from(tuples, () => 1 + random.below(3)),
        };
      });
      const tuple = new TupleMerge(domains);
      const expected = parts.map((p) => tuple.add(p));
      const want = tuple.done();
      // Room for fewer tuples than come: the concatenation grows.
      const concat = new ConcatMerge(domains, 1000, wasmGroupingKernel);
      for (const p of parts) concat.add(p);
      const got = concat.done();
      expect(got.merged.counts).toEqual(want.counts);
      expect(got.merged.columns).toEqual(want.columns);
      expect(got.groupOf).toEqual(expected);
    }
  });

  it("refuses a code outside its column's domain", () => {
    const concat = new ConcatMerge([4, 5], 2, wasmGroupingKernel);
    concat.add({ columns: [Int32Array.of(0, 3), Int32Array.of(1, 5)], counts: Int32Array.of(1, 1) });
    expect(() => concat.done()).toThrow(/code outside \[0, 5\)/);
  });
});

it("refuses a code outside its column's domain (packed, it would stand for another tuple)", () => {
  for (const domains of [
    [4, 5],
    [2 ** 60, 5],
  ]) {
    const merge = new TupleMerge(domains);
    merge.add({ columns: [Int32Array.of(0, 3), Int32Array.of(1, 4)], counts: Int32Array.of(1, 1) });
    expect(() =>
      merge.add({ columns: [Int32Array.of(1), Int32Array.of(5)], counts: Int32Array.of(1) }),
    ).toThrow(/tuple 0 has code 5 in column 1, outside its 5 values/);
    expect(() =>
      merge.add({ columns: [Int32Array.of(-1), Int32Array.of(0)], counts: Int32Array.of(1) }),
    ).toThrow(/code -1 in column 0/);
  }
});

describe('the search over row shards', () => {
  // Shards of 5,000 rows repeat tuples (merged by TupleMerge); of 150 rows they are nearly
  // distinct (their concatenation grouped: ConcatMerge), unless the search's kernel cannot say
  // that one instance holds them (the TS reference: TupleMerge, with room made at once).
  it.each([
    [5000, 'wasm'],
    [150, 'wasm'],
    [150, 'ts'],
  ] as const)(
    'reads each shard once, in order, and holds none it has merged (shards of %i rows, the %s kernel)',
    async (rows, kernelName) => {
      const searchKernel = kernelName === 'ts' ? tsGroupingKernel : wasmGroupingKernel;
      const spec = adultSpec();
      const table = readInput(spec);
      const steps = generalizationShards;
      const counted = shardsOf(table, rows).map((s) => steps.count(spec, s, wasmGroupingKernel));
      expect(counted.length).toBeGreaterThan(4);
      const first = counted[0]!.counts;
      expect(first.length >= 0.9 * first.reduce((a, b) => a + b, 0)).toBe(rows < 1000);
      const ctx = { spec, table, kernel: searchKernel, ...quiet };

      const plain = await steps.search(ctx, {
        shards: counted.length,
        read: async (s) => copy(counted[s]!),
      });
      // The same search, but each read spoils every shard the search must be done with by then:
      // it holds at most the shard it merges and the one it reads next.
      const given: Pick<ShardTuples, 'columns' | 'counts'>[] = [];
      const reads: number[] = [];
      const spoiled = await steps.search(ctx, {
        shards: counted.length,
        read: async (s) => {
          reads.push(s);
          for (const old of given.slice(0, Math.max(0, s - 1))) {
            for (const c of old.columns) c.fill(0);
            old.counts.fill(0);
          }
          given[s] = copy(counted[s]!);
          return given[s]!;
        },
      });
      expect(reads).toEqual(counted.map((_, s) => s));
      expect(spoiled).toEqual(plain);

      // And it decides what one search over every row decides.
      const whole = searchStep(
        prepareGeneralization(spec, table, wasmGroupingKernel),
        wasmGroupingKernel,
        quiet.time,
        quiet.say,
      );
      expect(plain.node).toEqual(whole.node);
      expect(plain.claims).toEqual(whole.claims);
      const rowFlags = counted.flatMap((c, s) => Array.from(c.rowToTuple, (t) => plain.flags[s]![t]!));
      const wholeRows = prepareGeneralization(spec, table, wasmGroupingKernel).tuples.rowToTuple;
      expect(rowFlags).toEqual(Array.from(wholeRows, (t) => whole.tupleSuppressed[t]!));
    },
  );
});

describe("the report's accuracy on the input's own classes", () => {
  it('is the rows of each quasi-identifier tuple’s most frequent sensitive value over all rows', () => {
    const spec = adultSpec();
    const table = readInput(spec);
    const step = searchStep(
      prepareGeneralization(spec, table, wasmGroupingKernel),
      wasmGroupingKernel,
      quiet.time,
      quiet.say,
    );
    const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
    const column = (name: string) => table.columns.find((c) => c.name === name)!.codes;
    const sa = column('occupation');
    const byTuple = new Map<string, Map<number, number>>();
    for (let r = 0; r < table.rowCount; r++) {
      const key = qis.map((q) => column(q)[r]).join();
      const h = byTuple.get(key) ?? new Map<number, number>();
      h.set(sa[r]!, (h.get(sa[r]!) ?? 0) + 1);
      byTuple.set(key, h);
    }
    let correct = 0;
    for (const h of byTuple.values()) correct += Math.max(...h.values());
    const disclosure = step.report.privacy.disclosure as Record<string, { accuracy: { original: number } }>;
    expect(disclosure.occupation!.accuracy.original).toBe(correct / table.rowCount);
  });
});
