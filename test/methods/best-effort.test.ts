/**
 * The best-effort search against the optimal search on lattices small enough to
 * enumerate: its proved lower bound is never above the optimum, it never reports a value below
 * it, and with a small node budget it finds the optimum's value on (nearly) every Adult
 * configuration. Also: deterministic for a seed, anytime (a larger budget is never worse), and
 * the release path switches to it past limits.maxLatticeNodes or when a budget is set. On a table
 * of 40 quasi-identifiers: a good feasible node within a small budget (the descent from the top),
 * and a stop on convergence when the budget is out of reach.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeWideTable } from '../../bench/wide-table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { BestEffortSearch } from '../../src/methods/generalization/best-effort.ts';
import {
  bestEffort,
  openSearch,
  prepareGeneralization,
  search,
} from '../../src/methods/generalization/index.ts';
import { nearlyEqual } from '../../src/methods/generalization/lattice.ts';
import { optimalSearch } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type MetricName, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { KS, PRIVACY_CONFIGS, SUPPRESSIONS } from '../golden/adult-configs.ts';
import { adultSpec } from '../helpers/adult.ts';

const base = adultSpec();
const table = readInput(base);
const BUDGET = 300;

function specOf(privacy: unknown[], maxSuppression: number, metric: MetricName): ReleaseSpec {
  return {
    ...base,
    privacy: privacy as ReleaseSpec['privacy'],
    method: { ...(base.method as object), maxSuppression, metric } as ReleaseSpec['method'],
  };
}

const configs: { name: string; privacy: unknown[]; s: number }[] = [
  ...KS.flatMap((k) =>
    SUPPRESSIONS.map((s) => ({ name: `k=${k}`, privacy: [{ model: 'k-anonymity', k }], s })),
  ),
  ...PRIVACY_CONFIGS.map((p) => ({
    name: `k=5 + ${p.name}`,
    privacy: [{ model: 'k-anonymity', k: 5 }, p.model],
    s: p.maxSuppression,
  })),
];

function bestEffortOn(spec: ReleaseSpec, budget: number, seed = 1) {
  const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
  const evaluator = openSearch(prepared, wasmGroupingKernel);
  const out = new BestEffortSearch(evaluator, {
    nodeBudget: budget,
    timeLimitMs: Number.POSITIVE_INFINITY,
    random: new Random(seed),
  }).run();
  evaluator.dispose();
  return out;
}

function optimumOf(spec: ReleaseSpec): number | undefined {
  const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
  const evaluator = openSearch(prepared, wasmGroupingKernel);
  try {
    return optimalSearch(evaluator).best.value;
  } catch {
    return undefined; // no solution
  } finally {
    evaluator.dispose();
  }
}

describe('best-effort search on Adult (every configuration of the acceptance grid)', () => {
  it(`bound ≤ optimum ≤ value, and the optimum found with ${BUDGET} nodes on ≥ 95 %`, () => {
    let found = 0;
    let runs = 0;
    const missed: string[] = [];
    for (const c of configs) {
      for (const metric of ['ncp', 'discernibility', 'loss'] as MetricName[]) {
        const spec = specOf(c.privacy, c.s, metric);
        const optimum = optimumOf(spec);
        if (optimum === undefined) continue;
        const r = bestEffortOn(spec, BUDGET);
        runs++;
        expect(r.best.feasible).toBe(true);
        // Never below the optimum, and the bound never above it.
        expect(r.best.value >= optimum || nearlyEqual(r.best.value, optimum)).toBe(true);
        expect(r.lowerBound <= optimum || nearlyEqual(r.lowerBound, optimum), `${c.name} ${metric}`).toBe(
          true,
        );
        expect(r.lowerBound <= r.best.value || nearlyEqual(r.lowerBound, r.best.value)).toBe(true);
        if (r.stoppedBy === 'optimal') expect(nearlyEqual(r.best.value, optimum)).toBe(true);
        if (nearlyEqual(r.best.value, optimum)) found++;
        else missed.push(`${c.name} s=${c.s} ${metric}`);
      }
    }
    expect(runs).toBeGreaterThanOrEqual(60);
    expect(found / runs, missed.join('; ')).toBeGreaterThanOrEqual(0.95);
  }, 600_000);

  it('is deterministic for a seed, and a larger budget is never worse', () => {
    const spec = specOf([{ model: 'k-anonymity', k: 10 }], 0.02, 'ncp');
    const a = bestEffortOn(spec, 60, 7);
    const b = bestEffortOn(spec, 60, 7);
    expect(b.best.levels).toEqual(a.best.levels);
    expect(b.nodesChecked).toBe(a.nodesChecked);
    expect(b.lowerBound).toBe(a.lowerBound);
    let previous = Number.POSITIVE_INFINITY;
    for (const budget of [20, 60, 200, 1000]) {
      const r = bestEffortOn(spec, budget, 7);
      expect(r.best.value <= previous || nearlyEqual(r.best.value, previous)).toBe(true);
      previous = r.best.value;
    }
  }, 120_000);
});

describe('best-effort search in slices (runAsync)', () => {
  const spec = specOf([{ model: 'k-anonymity', k: 10 }], 0.02, 'ncp');

  /** A search on a test's clock, one ms per reading, run whole or in slices of 5 ms. */
  async function searchOn(budget: number, timeLimitMs: number, sliced: boolean) {
    const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    let t = 0;
    let slices = 0;
    const search = new BestEffortSearch(evaluator, {
      nodeBudget: budget,
      timeLimitMs,
      random: new Random(7),
      now: () => t++,
    });
    try {
      const outcome = sliced
        ? await search.runAsync(5, (work) => {
            slices++;
            return work();
          })
        : search.run();
      return { outcome, slices };
    } finally {
      evaluator.dispose();
    }
  }

  it('gives run()’s result, its node budget ending both', async () => {
    const whole = await searchOn(60, Number.POSITIVE_INFINITY, false);
    const inSlices = await searchOn(60, Number.POSITIVE_INFINITY, true);
    expect(whole.outcome.stoppedBy).toBe('node budget');
    expect(inSlices.outcome.stoppedBy).toBe('node budget');
    expect(inSlices.outcome.best.levels).toEqual(whole.outcome.best.levels);
    expect(inSlices.outcome.nodesChecked).toBe(whole.outcome.nodesChecked);
    expect(inSlices.outcome.lowerBound).toBe(whole.outcome.lowerBound);
    // The slices follow the search's clock.
    expect(inSlices.slices).toBeGreaterThan(1);
  }, 120_000);

  it('ends at the time limit on the search’s clock, whole or in slices', async () => {
    for (const sliced of [false, true]) {
      const { outcome } = await searchOn(100_000, 40, sliced);
      expect(outcome.stoppedBy).toBe('time limit');
      expect(outcome.best.feasible).toBe(true);
    }
  }, 120_000);
});

describe('best-effort search on a table of 40 quasi-identifiers (a lattice of 10^14 nodes)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-best-effort-wide-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const wide = writeWideTable(dir, 3000, 40, {
    metric: 'loss',
    loss: { aggregate: 'arithmetic', gsFactor: 0.5 },
  });

  function run(budget: number) {
    const spec = loadSpec(wide.spec);
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    const out = new BestEffortSearch(evaluator, {
      nodeBudget: budget,
      timeLimitMs: Number.POSITIVE_INFINITY,
      random: new Random(3),
    }).run();
    evaluator.dispose();
    return out;
  }

  it('finds a feasible node far below the top within a small budget, reproducibly', () => {
    // A climb from the bottom checks 40 successors per step: 150 checks would not reach a
    // feasible node, and the result would be the top (Loss 1). The descent from the top would.
    const a = run(150);
    expect(a.best.feasible).toBe(true);
    expect(a.best.value).toBeLessThan(0.9);
    expect(a.lowerBound).toBeLessThanOrEqual(a.best.value);
    expect(a.nodesChecked).toBeLessThanOrEqual(150);
    const b = run(150);
    expect(b.best.levels).toEqual(a.best.levels);
    // With a budget it never reaches, it stops once long without a better node.
    const more = run(100_000);
    expect(more.best.value <= a.best.value || nearlyEqual(more.best.value, a.best.value)).toBe(true);
    expect(more.stoppedBy).toBe('converged');
    expect(more.nodesChecked).toBeLessThan(100_000);
  }, 300_000);
});

describe('the release path', () => {
  it('keeps the optimal search on enumerable lattices, and switches past the limit or with a budget', () => {
    const spec = specOf([{ model: 'k-anonymity', k: 5 }], 0.02, 'ncp');
    const exact = prepareGeneralization(spec, table, wasmGroupingKernel);
    expect(bestEffort(exact)).toBe(false);
    const small = prepareGeneralization(
      { ...spec, limits: { ...spec.limits, maxLatticeNodes: 1000 } } as ReleaseSpec,
      table,
      wasmGroupingKernel,
    );
    expect(bestEffort(small)).toBe(true);
    const budget = prepareGeneralization(
      { ...spec, method: { ...spec.method, nodeBudget: 400 } } as ReleaseSpec,
      table,
      wasmGroupingKernel,
    );
    expect(bestEffort(budget)).toBe(true);
    const r = search(budget, wasmGroupingKernel);
    expect(r.bestEffort).toBeDefined();
    expect(r.nodesChecked).toBeLessThanOrEqual(400);
    expect(r.bestEffort!.lowerBound).toBeLessThanOrEqual(r.best.value);
    r.evaluator.dispose();
  }, 120_000);
});
