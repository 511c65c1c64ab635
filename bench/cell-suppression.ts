/**
 * Cell suppression against row suppression at the same k and the same node: on Adult (k = 5)
 * and on the wide tables of bench/wide-table.ts (12 to 40 quasi-identifiers, and the
 * bank-marketing-shaped table), the search picks its node as for row suppression (2 % of rows
 * at most), then the records of classes below k lose cells instead of their rows. Row
 * suppression's cost is its rows × the quasi-identifiers; cell suppression's, its cells plus the
 * rows it still suppresses whole × the quasi-identifiers. The wide tables' searches are
 * best-effort with a node budget (deterministic). Also times the cell suppression step, then
 * the descent the release makes from that node to the best node with cells suppressed (its NCP,
 * cells and rows suppressed whole), and, on Adult, the whole release through the engine (build,
 * verify, publish) with rows and with cells.
 *
 * Prints a table and writes bench/results/cell-suppression.json, with the machine's load.
 * Run: `npm run bench:cells` (`-- --help` for the options).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { cellDescent, suppressCells } from '../src/methods/generalization/cell-suppression.ts';
import { prepareGeneralization, search, searchRandom } from '../src/methods/generalization/index.ts';
import { requiredK } from '../src/models/index.ts';
import { executeRelease } from '../src/pipeline/engine.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { machineInfo, table } from './scale.ts';
import { writeBankTable, writeWideTable } from './wide-table.ts';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const HELP = `Usage: npm run bench:cells [-- options]
  --rows N        rows of the generated wide tables (default 20000)
  --qis LIST      quasi-identifier counts of the wide tables, comma-separated (default 12,20,30,40)
  --bank N        rows of the bank-marketing-shaped table (default 45211; 0 skips it)
  --budget N      node budget of the wide tables' best-effort searches (default 300)
  --out FILE      results file (default bench/results/cell-suppression.json)
`;
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    qis: { type: 'string', default: '12,20,30,40' },
    bank: { type: 'string', default: '45211' },
    budget: { type: 'string', default: '300' },
    out: { type: 'string', default: join(ROOT, 'bench/results/cell-suppression.json') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

interface Row {
  table: string;
  rows: number;
  qis: number;
  k: number;
  node: Record<string, number>;
  /** Row suppression at the node: rows in classes below k, and those rows × the QIs. */
  rowSuppressedRows: number;
  rowSuppressionCells: number;
  /** Cell suppression at the node. */
  cells: number;
  fallbackRows: number;
  cellSuppressionCost: number;
  /** cellSuppressionCost / rowSuppressionCells. */
  ratio: number;
  ncpRows: number;
  ncpCells: number;
  cellStepMs: number;
  /** The descent from the node (what the release does): its node, cells, whole rows, NCP. */
  descent: {
    node: Record<string, number>;
    nodesChecked: number;
    cells: number;
    fallbackRows: number;
    ncp: number;
    ms: number;
  };
}

function measure(name: string, specPath: string, method: Record<string, unknown> = {}): Row {
  const base = loadSpec(specPath);
  const spec = { ...base, method: { ...base.method, ...method, suppression: 'cells' as const } };
  const table = readInput(spec);
  const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
  const found = search(prepared, wasmGroupingKernel, undefined, { random: searchRandom(spec) });
  const k = requiredK(prepared.problem.models);
  const t0 = performance.now();
  const cells = suppressCells(prepared, found.best, k)!;
  const cellStepMs = performance.now() - t0;
  const metrics = prepared.problem.metrics;
  const ncpCells = metrics.values(found.best.levels, cells.released, 'ncp').ncp;
  // What the release takes: the descent from the node to the best node with cells suppressed.
  const t1 = performance.now();
  const descent = cellDescent(prepared, found.evaluator, found.best, false);
  const descentMs = performance.now() - t1;
  found.evaluator.dispose();
  const m = prepared.qis.length;
  const cost = cells.cells + cells.fallbackRows * m;
  return {
    table: name,
    rows: table.rowCount,
    qis: m,
    k,
    node: Object.fromEntries(prepared.qis.map((c, i) => [c.name, found.best.levels[i]!])),
    rowSuppressedRows: cells.smallRows,
    rowSuppressionCells: cells.smallRows * m,
    cells: cells.cells,
    fallbackRows: cells.fallbackRows,
    cellSuppressionCost: cost,
    ratio: cells.smallRows === 0 ? 1 : cost / (cells.smallRows * m),
    ncpRows: found.best.values.ncp,
    ncpCells,
    cellStepMs: Math.round(cellStepMs * 10) / 10,
    descent: {
      node: Object.fromEntries(prepared.qis.map((c, i) => [c.name, descent.node.levels[i]!])),
      nodesChecked: descent.nodesChecked,
      cells: descent.cells.cells,
      fallbackRows: descent.cells.fallbackRows,
      ncp: metrics.values(descent.node.levels, descent.cells.released, 'ncp').ncp,
      ms: Math.round(descentMs),
    },
  };
}

/** The Adult release through the engine, rows then cells: wall time of build + verify + publish. */
async function adultReleases(dir: string) {
  const out: Record<string, number> = {};
  for (const suppression of ['rows', 'cells'] as const) {
    const base = JSON.parse(readFileSync(join(ROOT, 'examples/adult/release.json'), 'utf8'));
    base.input = join(ROOT, 'examples/adult', base.input);
    for (const a of Object.values(base.attributes) as { hierarchy?: string }[]) {
      if (typeof a.hierarchy === 'string') a.hierarchy = join(ROOT, 'examples/adult', a.hierarchy);
    }
    base.method.suppression = suppression;
    const spec = join(dir, `adult-${suppression}.json`);
    writeFileSync(spec, JSON.stringify(base));
    const t0 = performance.now();
    await executeRelease({ spec, out: join(dir, `out-${suppression}`) });
    out[suppression] = Math.round(performance.now() - t0);
  }
  return out;
}

/** The bank-marketing-shaped table with the spec `ppdp init` drafts (every column quasi-identifying). */
function bankSpec(dir: string, rows: number): string {
  const csv = writeBankTable(dir, rows);
  const specFile = join(dir, 'release.json');
  const init = spawnSync('node', [join(ROOT, 'bin/ppdp.mjs'), 'init', csv, '--out', specFile], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`ppdp init failed (npm run build first): ${init.stderr}`);
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  spec.method = { ...spec.method, maxSuppression: 0.02 };
  writeFileSync(specFile, JSON.stringify(spec));
  return specFile;
}

const dir = mkdtempSync(join(tmpdir(), 'ppdp-cells-'));
try {
  const load = machineInfo().loadAverage;
  const results: Row[] = [measure('adult', join(ROOT, 'examples/adult/release.json'))];
  const budget = { nodeBudget: Number(values.budget), timeLimit: 600 };
  for (const q of values.qis.split(',').map(Number)) {
    const wide = writeWideTable(join(dir, `wide-${q}`), Number(values.rows), q);
    results.push(measure(`wide-${q}`, wide.spec, budget));
  }
  if (Number(values.bank) > 0)
    results.push(measure('bank', bankSpec(join(dir, 'bank'), Number(values.bank)), budget));
  const releaseMs = await adultReleases(dir);
  const machine = { ...machineInfo(), loadAverageBefore: load };
  process.stdout.write(
    `${table(
      [
        'table',
        'rows',
        'QIs',
        'rows < k',
        'row cells',
        'cells',
        'rows whole',
        'cell cost',
        'ratio',
        'NCP rows',
        'NCP cells',
        'ms',
        'descent: NCP',
        'cells',
        'rows whole',
        'nodes',
        'ms',
      ],
      results.map((r) => [
        r.table,
        String(r.rows),
        String(r.qis),
        String(r.rowSuppressedRows),
        String(r.rowSuppressionCells),
        String(r.cells),
        String(r.fallbackRows),
        String(r.cellSuppressionCost),
        r.ratio.toFixed(3),
        r.ncpRows.toFixed(4),
        r.ncpCells.toFixed(4),
        String(r.cellStepMs),
        r.descent.ncp.toFixed(4),
        String(r.descent.cells),
        String(r.descent.fallbackRows),
        String(r.descent.nodesChecked),
        String(r.descent.ms),
      ]),
    )}\nAdult release through the engine (ms): rows ${releaseMs.rows}, cells ${releaseMs.cells}\nload average ${machine.loadAverage.join(' ')} (before: ${load.join(' ')}) on ${machine.cores} cores\n`,
  );
  writeFileSync(values.out, `${JSON.stringify({ machine, results, adultReleaseMs: releaseMs }, null, 2)}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
