/**
 * Slicing's membership measures (docs/definitions.md §4 step 6, the slicing paper's second experiment) and the
 * analyst's estimate of the joint distribution from a sliced table.
 *
 * A tuple g *matches* bucket B when each of its column values appears in B's column. Within a
 * bucket, every combination of one value per column is a tuple the release could stand for;
 * a combination that is no original tuple is a *fake tuple*. A fake tuple is a combination of
 * exactly the buckets it matches, so Σ over (bucket, fake combination) pairs of 1/matches(g)
 * counts distinct fake tuples. Reported:
 * - fake tuples (distinct, and as bucket–combination pairs), next to the original tuples;
 * - matching buckets per original record, and per distinct fake tuple, as distributions.
 * When the bucket–combination pairs exceed ENUMERATION_LIMIT, fake tuples are sampled (seeded,
 * SAMPLE_SIZE pairs drawn uniformly, weighted 1/matches) and the report says so.
 * The KL divergence of the full joint uses the estimate of bucket-estimator.ts.
 */
import type { Random } from '../../util/random.ts';
import { cellKeyer, countBins } from '../bucket-common.ts';
import type { TuplePartition } from './partition.ts';

export const ENUMERATION_LIMIT = 300_000;
export const SAMPLE_SIZE = 10_000;

export interface MembershipMeasures {
  originalTuples: number;
  originalRecords: number;
  /** Combinations of column values within a bucket, summed over buckets. */
  combinations: number;
  /** (bucket, combination) pairs that are no original tuple. */
  fakeCombinations: number;
  /** Distinct fake tuples (exact when enumerated, estimated when sampled). */
  fakeTuples: number;
  fakeSampled: boolean;
  fakeSampleSize: number;
  matchingBucketsOriginal: { mean: number; median: number; bins: { label: string; share: number }[] };
  matchingBucketsFake: { mean: number; median: number; bins: { label: string; share: number }[] };
}

/** The released column values of a partition: per column, row → code (full value, SA included). */
export interface SlicedColumns {
  readonly codes: readonly Int32Array[];
  readonly domains: readonly number[];
}

/** Per column and value: the buckets holding it (ascending) and how many times. */
class ValueIndex {
  readonly buckets: number[][][];
  readonly counts: number[][][];
  readonly sizes: Int32Array;

  constructor(partition: TuplePartition, columns: SlicedColumns) {
    this.buckets = columns.domains.map((d) => Array.from({ length: d }, () => []));
    this.counts = columns.domains.map((d) => Array.from({ length: d }, () => []));
    this.sizes = Int32Array.from(partition.buckets, (b) => b.end - b.start);
    partition.buckets.forEach((b, id) => {
      for (let i = b.start; i < b.end; i++) {
        const r = partition.rows[i]!;
        columns.codes.forEach((codes, j) => {
          const bs = this.buckets[j]![codes[r]!]!;
          const cs = this.counts[j]![codes[r]!]!;
          if (bs.at(-1) === id) cs[cs.length - 1]!++;
          else {
            bs.push(id);
            cs.push(1);
          }
        });
      }
    });
  }

  /** Buckets matching a tuple of values, with each column's count there: calls back per bucket. */
  forMatches(tuple: readonly number[], visit: (bucket: number, counts: number[]) => void): void {
    const c = tuple.length;
    let shortest = 0;
    for (let j = 1; j < c; j++) {
      if (this.buckets[j]![tuple[j]!]!.length < this.buckets[shortest]![tuple[shortest]!]!.length)
        shortest = j;
    }
    const lead = this.buckets[shortest]![tuple[shortest]!]!;
    const counts = new Array<number>(c).fill(0);
    outer: for (let x = 0; x < lead.length; x++) {
      const b = lead[x]!;
      for (let j = 0; j < c; j++) {
        const list = this.buckets[j]![tuple[j]!]!;
        const at = j === shortest ? x : search(list, b);
        if (at < 0) continue outer;
        counts[j] = this.counts[j]![tuple[j]!]![at]!;
      }
      visit(b, counts);
    }
  }
}

function search(list: readonly number[], x: number): number {
  let lo = 0;
  let hi = list.length - 1;
  while (lo <= hi) {
    const m = (lo + hi) >> 1;
    const v = list[m]!;
    if (v === x) return m;
    if (v < x) lo = m + 1;
    else hi = m - 1;
  }
  return -1;
}

/**
 * Membership measures and the KL divergence of the full joint (original tuples) from the
 * sliced table's estimate. `tuples`: the distinct original tuples (per column codes) with their
 * record counts.
 */
export function membershipMeasures(
  partition: TuplePartition,
  columns: SlicedColumns,
  tuples: { keys: readonly Int32Array[]; counts: Int32Array },
  random: Random,
): { membership: MembershipMeasures; kl: number } {
  const index = new ValueIndex(partition, columns);
  const c = columns.codes.length;
  const n = partition.rows.length;
  const T = tuples.counts.length;
  const nb = partition.buckets.length;
  const originalsIn = new Float64Array(nb);
  const matchesOf = new Int32Array(T);
  const tuple = new Array<number>(c).fill(0);
  let kl = 0;
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < c; j++) tuple[j] = tuples.keys[j]![t]!;
    let estimate = 0;
    let matches = 0;
    index.forMatches(tuple, (b, counts) => {
      const size = index.sizes[b]!;
      let f = size / n;
      for (let j = 0; j < c; j++) f *= counts[j]! / size;
      estimate += f;
      matches++;
      originalsIn[b]!++;
    });
    matchesOf[t] = matches;
    const p = tuples.counts[t]! / n;
    kl += p * Math.log(p / estimate);
  }

  // Combinations per bucket: Π_C distinct values of C in the bucket.
  const distinct = columns.domains.map((d) => new Int32Array(d));
  const valuesIn: number[][][] = [];
  let combinations = 0;
  let fakeCombinations = 0;
  const combinationsOf = new Float64Array(nb);
  partition.buckets.forEach((b, id) => {
    const values = columns.codes.map((codes, j) => {
      const list: number[] = [];
      for (let i = b.start; i < b.end; i++) {
        const v = codes[partition.rows[i]!]!;
        if (distinct[j]![v] !== id + 1) {
          distinct[j]![v] = id + 1;
          list.push(v);
        }
      }
      return list.sort((x, y) => x - y);
    });
    valuesIn.push(values);
    const product = values.reduce((p, v) => p * v.length, 1);
    combinationsOf[id] = product;
    combinations += product;
    fakeCombinations += product - originalsIn[id]!;
  });

  // Fake tuples: enumerate, or sample (bucket, combination) pairs uniformly.
  const keyer = cellKeyer(columns.domains);
  const original = new Set<number | string>();
  for (let t = 0; t < T; t++) {
    for (let j = 0; j < c; j++) tuple[j] = tuples.keys[j]![t]!;
    original.add(keyer(tuple));
  }
  const fakeMatches: number[] = [];
  const matchCount = (g: number[]) => {
    let m = 0;
    index.forMatches(g, () => {
      m++;
    });
    return m;
  };
  const sampled = combinations > ENUMERATION_LIMIT;
  if (!sampled) {
    for (let id = 0; id < nb; id++) {
      const values = valuesIn[id]!;
      const at = new Array<number>(c).fill(0);
      for (let left = combinationsOf[id]!; left > 0; left--) {
        const g = at.map((x, j) => values[j]![x]!);
        if (!original.has(keyer(g))) fakeMatches.push(matchCount(g));
        for (let j = c - 1; j >= 0; j--) {
          if (++at[j]! < values[j]!.length) break;
          at[j] = 0;
        }
      }
    }
  } else if (fakeCombinations > 0) {
    const cumulative = new Float64Array(nb);
    let total = 0;
    for (let id = 0; id < nb; id++) cumulative[id] = total += combinationsOf[id]!;
    for (let attempts = 0; fakeMatches.length < SAMPLE_SIZE && attempts < 100 * SAMPLE_SIZE; attempts++) {
      const x = (random.nextU32() * 2 ** 32 + random.nextU32()) / 2 ** 64;
      let lo = 0;
      let hi = nb - 1;
      const target = x * total;
      while (lo < hi) {
        const m = (lo + hi) >> 1;
        if (cumulative[m]! > target) hi = m;
        else lo = m + 1;
      }
      const values = valuesIn[lo]!;
      const g = values.map((v) => v[random.below(v.length)]!);
      if (!original.has(keyer(g))) fakeMatches.push(matchCount(g));
    }
  }
  // Each distinct fake tuple appears once per bucket it matches: weight 1/matches.
  let weight = 0;
  for (const m of fakeMatches) weight += 1 / m;
  const fakeTuples = sampled
    ? fakeMatches.length > 0
      ? (fakeCombinations * weight) / fakeMatches.length
      : 0
    : Math.round(weight);

  return {
    membership: {
      originalTuples: T,
      originalRecords: n,
      combinations,
      fakeCombinations,
      fakeTuples: sampled ? Math.round(fakeTuples) : fakeTuples,
      fakeSampled: sampled,
      fakeSampleSize: fakeMatches.length,
      matchingBucketsOriginal: distribution(matchesOf, tuples.counts),
      matchingBucketsFake: distribution(
        fakeMatches,
        fakeMatches.map((m) => 1 / m),
      ),
    },
    kl,
  };
}

function distribution(
  values: ArrayLike<number>,
  weights: ArrayLike<number>,
): { mean: number; median: number; bins: { label: string; share: number }[] } {
  let total = 0;
  let sum = 0;
  const pairs: [number, number][] = [];
  for (let i = 0; i < values.length; i++) {
    total += weights[i]!;
    sum += values[i]! * weights[i]!;
    pairs.push([values[i]!, weights[i]!]);
  }
  if (total === 0) return { mean: 0, median: 0, bins: [] };
  pairs.sort((a, b) => a[0] - b[0]);
  let acc = 0;
  let median = pairs.at(-1)![0];
  for (const [v, w] of pairs) {
    acc += w;
    if (acc >= total / 2) {
      median = v;
      break;
    }
  }
  return {
    mean: sum / total,
    median,
    bins: countBins(values, weights).map((b) => ({ label: b.label, share: b.count / total })),
  };
}
