/**
 * The best-effort search's trajectory: a point each time its best value or its proved bound
 * improves, the last one its result. Monotone (the best value never rises, the bound never
 * falls, the bound never passes the best value), reproducible for a seed and a node budget but
 * for its wall times, capped in size, and carried into report.json (read back by the report's
 * contract) when a release searches best-effort.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readReport } from '../../src/contracts/report.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import {
  BestEffortSearch,
  TRAJECTORY_POINTS,
  type TrajectoryPoint,
  thinned,
} from '../../src/methods/generalization/best-effort.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { nearlyEqual } from '../../src/methods/generalization/lattice.ts';
import { readInput } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { adultSpec } from '../helpers/adult.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const base = adultSpec();
const table = readInput(base);

function run(privacy: unknown[], budget: number, seed = 1) {
  const spec = {
    ...base,
    privacy: privacy as ReleaseSpec['privacy'],
    method: { ...(base.method as object), metric: 'loss' } as ReleaseSpec['method'],
  };
  const evaluator = openSearch(prepareGeneralization(spec, table, wasmGroupingKernel), wasmGroupingKernel);
  try {
    return new BestEffortSearch(evaluator, {
      nodeBudget: budget,
      timeLimitMs: Number.POSITIVE_INFINITY,
      random: new Random(seed),
    }).run();
  } finally {
    evaluator.dispose();
  }
}

const atMost = (a: number, b: number) => a <= b || nearlyEqual(a, b);

function expectMonotone(points: readonly TrajectoryPoint[]): void {
  expect(points.length).toBeGreaterThan(0);
  for (const p of points) expect(atMost(p.bound, p.best), JSON.stringify(p)).toBe(true);
  for (let i = 1; i < points.length; i++) {
    const [a, b] = [points[i - 1]!, points[i]!];
    expect(atMost(b.best, a.best), `best rose at point ${i}`).toBe(true);
    expect(b.bound).toBeGreaterThanOrEqual(a.bound);
    expect(b.nodesChecked).toBeGreaterThanOrEqual(a.nodesChecked);
    expect(b.ms).toBeGreaterThanOrEqual(a.ms);
  }
}

describe('the best-effort search records its trajectory', () => {
  it('monotone, and its last point is the result', () => {
    for (const [privacy, budget] of [
      [[{ model: 'k-anonymity', k: 5 }], 150],
      [[{ model: 'k-anonymity', k: 10 }], 400],
      [
        [
          { model: 'k-anonymity', k: 5 },
          { model: 'distinct-l-diversity', attribute: 'occupation', l: 3 },
        ],
        300,
      ],
    ] as const) {
      const r = run(privacy as unknown as unknown[], budget);
      const points = r.trajectory;
      expectMonotone(points);
      const last = points.at(-1)!;
      expect(last.best).toBe(r.best.value);
      expect(last.bound).toBe(r.lowerBound);
      expect(last.nodesChecked).toBe(r.nodesChecked);
      // The best value improved along the way: more than the one point of the result.
      expect(points.length).toBeGreaterThan(1);
      expect(points.length).toBeLessThanOrEqual(TRAJECTORY_POINTS);
    }
  }, 120_000);

  it('is thinned evenly at its cap, keeping its first and last points', () => {
    const full = Array.from({ length: TRAJECTORY_POINTS }, (_, i) => i);
    const kept = thinned(full);
    expect(kept.length).toBeLessThanOrEqual(TRAJECTORY_POINTS / 2 + 1);
    expect(kept[0]).toBe(0);
    expect(kept.at(-1)).toBe(TRAJECTORY_POINTS - 1);
    // Evenly: no two kept points further apart than two.
    for (let i = 1; i < kept.length; i++) expect(kept[i]! - kept[i - 1]!).toBeLessThanOrEqual(2);
    expect(thinned([5, 6, 7])).toEqual([5, 6, 7]);
  });

  it('is the same for a seed and a budget, wall times aside', () => {
    const strip = (ps: readonly TrajectoryPoint[]) => ps.map(({ ms: _, ...rest }) => rest);
    const a = run([{ model: 'k-anonymity', k: 10 }], 200, 3);
    const b = run([{ model: 'k-anonymity', k: 10 }], 200, 3);
    expect(strip(b.trajectory)).toEqual(strip(a.trajectory));
  }, 60_000);

  it('a larger budget retraces the search and goes on (a continued search)', () => {
    const strip = (ps: readonly TrajectoryPoint[]) => ps.map(({ ms: _, ...rest }) => rest);
    const short = run([{ model: 'k-anonymity', k: 5 }], 60, 2);
    const long = run([{ model: 'k-anonymity', k: 5 }], 400, 2);
    // All but the short run's last point (its final bound, walked at the end) lie on the long run's path.
    const path = strip(short.trajectory).slice(0, -1);
    expect(path.length).toBeGreaterThan(0);
    expect(strip(long.trajectory).slice(0, path.length)).toEqual(path);
    expect(long.nodesChecked).toBeGreaterThan(short.nodesChecked);
    expect(atMost(long.best.value, short.best.value)).toBe(true);
  }, 60_000);

  it('goes into report.json when a release searches best-effort, and reads back', async () => {
    const ws = adultWorkspace(3000);
    ws.editSpec((s) => {
      (s.method as Record<string, unknown>).nodeBudget = 200;
    });
    const { report } = await releaseTo(ws.spec, join(ws.dir, 'out'));
    const g = report.generalization!;
    expect(g.search === 'best-effort' || g.search === 'optimal').toBe(true);
    const points = g.trajectory!;
    expectMonotone(points);
    expect(points.at(-1)!.best).toBe(report.utility.value);
    expect(points.at(-1)!.bound).toBe(g.lowerBound);
    const path = join(ws.dir, 'out', 'report.json');
    const again = readReport(JSON.parse(readFileSync(path, 'utf8')), path);
    expect(again.generalization!.trajectory).toEqual(points);
    // report.html draws it: both series, a mark per point each.
    const html = readFileSync(join(ws.dir, 'out', 'report.html'), 'utf8');
    const progress = html.slice(html.indexOf('<section id="search-progress">'));
    expect(progress.startsWith('<section id="search-progress">')).toBe(true);
    const section = progress.slice(0, progress.indexOf('</section>'));
    expect(section.match(/<polyline class="series"/g)).toHaveLength(2);
    expect(section.match(/<circle class="mark"/g)).toHaveLength(2 * points.length);
  }, 120_000);

  it('is absent when the search is the optimal one', async () => {
    const ws = adultWorkspace(1000);
    const { report } = await releaseTo(ws.spec, join(ws.dir, 'out'));
    expect(report.generalization!.search).toBe('optimal');
    expect(report.generalization!.trajectory).toBeUndefined();
    expect(readFileSync(join(ws.dir, 'out', 'report.html'), 'utf8')).not.toContain('search-progress');
  }, 120_000);
});
