/**
 * The best-effort search on a wide table: bench/wide-table.ts's marketing-style
 * table with 12–24 quasi-identifiers, lattices of 10^6–10^13 nodes, searched by ppdp under a
 * node budget and a time limit; prints and writes (bench/results/wide.json) per width the
 * metric reached, the proved lower bound on the optimum, the nodes checked and the time.
 * (ARX's best-effort searches on the same table are not run here yet.)
 *
 * Run: `npm run bench:wide` (`-- --help` for the options).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { prepareGeneralization, search } from '../src/methods/generalization/index.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { writeWideTable } from './wide-table.ts';

const HELP = `Usage: npm run bench:wide [-- options]
  --rows N          rows of the generated table (default 20000)
  --qis LIST        quasi-identifier counts, comma-separated (default 12,17,24)
  --metric M        ncp or loss (default loss)
  --budget N        node budget of the search (default 20000)
  --time S          time limit of the search in seconds (default 30)
  --out FILE        results file (default bench/results/wide.json)
`;
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    qis: { type: 'string', default: '12,17,24' },
    metric: { type: 'string', default: 'loss' },
    budget: { type: 'string', default: '20000' },
    time: { type: 'string', default: '30' },
    out: { type: 'string', default: new URL('./results/wide.json', import.meta.url).pathname },
    help: { type: 'boolean', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const dir = mkdtempSync(join(tmpdir(), 'ppdp-wide-'));
const results: unknown[] = [];
try {
  for (const qis of values.qis.split(',').map(Number)) {
    const wide = writeWideTable(join(dir, String(qis)), Number(values.rows), qis, {
      metric: values.metric,
      nodeBudget: Number(values.budget),
      timeLimit: Number(values.time),
    });
    const spec = loadSpec(wide.spec);
    const t0 = performance.now();
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const r = search(prepared, wasmGroupingKernel);
    const seconds = (performance.now() - t0) / 1000;
    const row = {
      qis,
      rows: Number(values.rows),
      latticeNodes: prepared.problem.lattice.size,
      metric: values.metric,
      value: r.best.value,
      lowerBound: r.bestEffort?.lowerBound ?? r.best.value,
      nodesChecked: r.nodesChecked,
      stoppedBy: r.bestEffort?.stoppedBy ?? 'optimal',
      suppressedRows: r.best.suppressedRows,
      seconds: Number(seconds.toFixed(2)),
    };
    r.evaluator.dispose();
    results.push(row);
    console.log(
      `${qis} QIs, ${row.latticeNodes.toExponential(2)} nodes: ${values.metric} ${row.value.toFixed(4)} ` +
        `(optimum ≥ ${row.lowerBound.toFixed(4)}), ${row.nodesChecked} nodes, ${row.seconds} s, stopped by ${row.stoppedBy}`,
    );
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
writeFileSync(values.out, `${JSON.stringify({ date: new Date().toISOString(), results }, null, 2)}\n`);
