import { describe, expect, it } from 'vitest';
import { bucketEstimator } from '../../src/methods/bucket-estimator.ts';
import { Random } from '../../src/util/random.ts';

/**
 * Four attributes in three columns (a and b share one), rows in random buckets: what an analyst
 * recovers, π̂(t) = Σ_B (|B|/N) · Π_columns (share of B's rows matching t there).
 */
describe('bucket estimator (Anatomy, Slicing)', () => {
  const rng = new Random(5);
  const n = 300;
  const domains = [5, 3, 7, 4];
  const columnOf = [0, 0, 1, 2];
  const codes = domains.map((d) => Int32Array.from({ length: n }, () => rng.below(d)));
  const bucketOf = Int32Array.from({ length: n }, () => rng.below(40));
  const rows = Int32Array.from(bucketOf.keys()).sort((x, y) => bucketOf[x]! - bucketOf[y]! || x - y);
  const start = new Int32Array(41);
  for (const b of bucketOf) start[b + 1]!++;
  for (let b = 0; b < 40; b++) start[b + 1]! += start[b]!;
  const estimator = bucketEstimator({ rows, start }, codes, domains, columnOf);

  function definition(attrs: number[], cell: number[]): number {
    let total = 0;
    for (let b = 0; b < 40; b++) {
      const members = rows.subarray(start[b]!, start[b + 1]!);
      if (members.length === 0) continue;
      let p = members.length / n;
      for (const column of new Set(attrs.map((a) => columnOf[a]!))) {
        const mine = attrs.map((a, j) => [a, cell[j]!]).filter(([a]) => columnOf[a!] === column);
        const match = Array.from(members).filter((r) => mine.every(([a, v]) => codes[a!]![r] === v)).length;
        p *= match / members.length;
      }
      total += p;
    }
    return total;
  }

  it('gives every cell of a pair in one pass, as its marginal and its definition', () => {
    for (let x = 0; x < 4; x++) {
      for (let y = x + 1; y < 4; y++) {
        const dy = domains[y]!;
        const cells = [
          Int32Array.from({ length: domains[x]! * dy }, (_, c) => Math.floor(c / dy)),
          Int32Array.from({ length: domains[x]! * dy }, (_, c) => c % dy),
        ];
        const joint = estimator.pair!(x, y)!;
        const marginal = estimator.marginal([x, y], cells)!;
        for (let c = 0; c < joint.length; c++) {
          expect(joint[c]).toBeCloseTo(marginal[c]!, 14);
          expect(joint[c]).toBeCloseTo(definition([x, y], [cells[0]![c]!, cells[1]![c]!]), 14);
        }
      }
    }
  });

  it('takes its steps from a budget, and refuses what would pass it without doing it', () => {
    const cells = [Int32Array.of(0, 1, 2), Int32Array.of(0, 1, 2), Int32Array.of(0, 1, 3)];
    const budget = { steps: 1e9 };
    const full = estimator.marginal([0, 2, 3], cells, budget)!;
    const used = 1e9 - budget.steps;
    expect(used).toBeGreaterThan(0);
    const short: { steps: number; needed?: number } = { steps: used - 1 };
    expect(estimator.marginal([0, 2, 3], cells, short)).toBeUndefined();
    expect(short).toEqual({ steps: used - 1, needed: used });
    expect(Array.from(estimator.marginal([0, 2, 3], cells, { steps: used })!)).toEqual(Array.from(full));

    const pairBudget = { steps: 1e9 };
    estimator.pair!(0, 3, pairBudget);
    expect(estimator.pair!(0, 3, { steps: 1e9 - pairBudget.steps - 1 })).toBeUndefined();
  });
});
