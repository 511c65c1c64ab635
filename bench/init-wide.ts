/**
 * `ppdp init` on a wide table, released as drafted: bench/wide-table.ts's bank-marketing-shaped
 * 17-column survey (45,211 rows by default), every column drafted quasi-identifying (a lattice
 * of 8·10⁷ nodes), released with the default budget of the best-effort search (20,000 nodes,
 * 30 s).
 * Prints and writes (bench/results/init-wide.json) the lattice, why the search stopped, the
 * nodes checked, the metric and its proved bound, the trajectory's length and the search's wall
 * time, with the machine's load average (the figures depend on it).
 *
 * Run: `npm run bench:init-wide` (`-- --rows N` for another size, `-- --out FILE`).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { initCommand } from '../src/cli/init.ts';
import { executeRelease } from '../src/pipeline/engine.ts';
import { helpIfAsked } from './help.ts';
import { withStdout } from './stdout.ts';
import { writeBankTable } from './wide-table.ts';

helpIfAsked(import.meta.url);
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '45211' },
    out: { type: 'string', default: new URL('./results/init-wide.json', import.meta.url).pathname },
  },
});

const dir = mkdtempSync(join(tmpdir(), 'ppdp-init-wide-'));
try {
  const rows = Number(values.rows);
  const csv = writeBankTable(dir, rows);
  const spec = join(dir, 'release.json');
  const { printed } = withStdout(() => initCommand([csv, '--out', spec]));
  const loadBefore = loadavg().map((x) => Number(x.toFixed(2)));
  const t0 = performance.now();
  const { report } = await executeRelease({ spec, out: join(dir, 'out') });
  const seconds = (performance.now() - t0) / 1000;
  const g = report.generalization!;
  const result = {
    date: new Date().toISOString(),
    rows,
    latticeSize: g.latticeSize,
    strategy: g.strategy,
    stoppedBy: g.stoppedBy ?? 'optimal',
    nodesChecked: g.nodesChecked,
    metric: report.utility.metric,
    value: report.utility.value,
    lowerBound: g.lowerBound,
    trajectoryPoints: g.trajectory?.length ?? 0,
    searchSeconds: Number(((report.timings.search ?? 0) / 1000).toFixed(1)),
    releaseSeconds: Number(seconds.toFixed(1)),
    loadAverage: { before: loadBefore, after: loadavg().map((x) => Number(x.toFixed(2))) },
    initLattice: printed.split('\n').filter((l) => /lattice:|^ {4}×/.test(l)),
  };
  console.log(result.initLattice.join('\n'));
  console.log(
    `released: ${result.strategy}, stopped by ${result.stoppedBy} after ${result.nodesChecked} nodes; ` +
      `${result.metric} ${result.value.toFixed(4)} (optimum ≥ ${(result.lowerBound ?? result.value).toFixed(4)}); ` +
      `search ${result.searchSeconds} s, release ${result.releaseSeconds} s; load ${result.loadAverage.before.join(' ')}`,
  );
  writeFileSync(values.out!, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${values.out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
