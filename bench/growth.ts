/**
 * How the cost of the optimal generalization search grows (a script, not a test), in process
 * through the library as bench/adult.ts calls it (prepareGeneralization → openSearch →
 * optimalSearch, WASM kernel), k = 5, 2 % suppression, ncp, along three axes:
 *
 *   (a) rows N at (about) fixed distinct tuples: synthetic Adult rows sampled without
 *       perturbation (bench/synth.ts), N = 10⁴ … 3·10⁶;
 *   (b) distinct tuples at fixed N: perturbation levels p at N = 10⁶;
 *   (c) lattice size: the first 4, 5, 6, 7, 8 quasi-identifiers of examples/adult (Adult's
 *       own 30,162 rows; the other QIs insensitive), 60 … 4,320 nodes.
 *
 * Per point: prepare (hierarchies + collapsing rows to distinct tuples) and search (open a
 * grouping session + optimal search), medians of --reps; nodes checked; ms per node checked. Writes
 * bench/results/growth.json and bench/results/growth.svg (log-log) and prints tables with the
 * fitted growth exponents. Run: `npm run bench:growth` (`-- --help`).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { readCsv } from '../src/data/csv.ts';
import type { EncodedTable } from '../src/data/table.ts';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../src/methods/generalization/index.ts';
import { optimalSearch } from '../src/methods/generalization/search.ts';
import { loadSpec, type ReleaseSpec } from '../src/release-spec/spec.ts';
import { compact, PALETTE, powerOfTen, type Series, SvgChart } from './plot.ts';
import { machineInfo, median, ms, table } from './scale.ts';
import { ADULT_DIR, adultQis, parseCount, ROOT, specFor, synthesizeTable } from './synth.ts';

const HELP = `Usage: npm run bench:growth [-- options]
       tsx bench/growth.ts [options]

Measures the optimal generalization search (k = 5, 2 % suppression, ncp, WASM kernel) in process
against (a) rows at fixed distinct tuples, (b) distinct tuples at fixed rows, (c) lattice size.
Writes bench/results/growth.json and bench/results/growth.svg.

Options:
  --rows <list>       (a) sizes, sampled without perturbation (default 1e4,3e4,1e5,3e5,1e6,3e6)
  --tuples-rows <N>   (b) rows (default 1e6)
  --perturb <list>    (b) perturbation levels (default 0,0.01,0.02,0.05,0.1,0.2)
  --qis <list>        (c) numbers of Adult's QIs, in spec order (default 4,5,6,7,8)
  --reps <n>          searches per point, median reported (default 3; 1 when a search takes > 20 s)
  --quick             (a) up to 1e6, (b) at 3e5 rows, 1 repetition
  --seed <s>          synthetic data seed (default 1)
  -h, --help          this text
`;

const RESULT_JSON = join(ROOT, 'bench/results/growth.json');
const RESULT_SVG = join(ROOT, 'bench/results/growth.svg');

interface Point {
  rows: number;
  perturb?: number;
  qis: number;
  distinctTuples: number;
  latticeSize: number;
  nodesChecked: number;
  prepareMs: number;
  searchMs: number;
  /** searchMs / nodesChecked: the cost of one node evaluation plus its share of the bookkeeping. */
  msPerNode: number;
  searchRuns: number[];
  node: string;
}

const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    'tuples-rows': { type: 'string' },
    perturb: { type: 'string', default: '0,0.01,0.02,0.05,0.1,0.2' },
    qis: { type: 'string', default: '4,5,6,7,8' },
    reps: { type: 'string' },
    quick: { type: 'boolean', default: false },
    seed: { type: 'string', default: '1' },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const QUICK = values.quick;
const list = (s: string) => s.split(',').map(parseCount);
const ROWS = list(values.rows ?? (QUICK ? '1e4,3e4,1e5,3e5,1e6' : '1e4,3e4,1e5,3e5,1e6,3e6'));
const TUPLES_ROWS = parseCount(values['tuples-rows'] ?? (QUICK ? '3e5' : '1e6'));
const PERTURB = list(values.perturb);
const QIS = list(values.qis);
const REPS = Number(values.reps ?? (QUICK ? 1 : 3));
const SEED = Number(values.seed);
const ALL_QIS = adultQis();

const work = mkdtempSync(join(os.tmpdir(), 'ppdp-growth-'));
const machine = machineInfo();
const started = new Date();
console.log(
  `ppdp growth benchmark — ${started.toISOString()}; ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, ` +
    `load ${machine.loadAverage.join(' ')}`,
);

/** The Adult spec (k = 5, 2 %, ncp) with only the first `qis` QIs quasi-identifying. */
function specWith(qis: number): ReleaseSpec {
  const json = specFor(work, 'adult.arrow');
  for (const name of ALL_QIS.slice(qis)) json.attributes[name] = { type: 'insensitive' };
  const path = join(work, `release-${qis}.json`);
  writeFileSync(path, JSON.stringify(json));
  return loadSpec(path);
}

function measure(spec: ReleaseSpec, data: EncodedTable, extra: { perturb?: number; qis: number }): Point {
  const prepareRuns: number[] = [];
  const runs: number[] = [];
  let prepared: ReturnType<typeof prepareGeneralization> | undefined;
  let outcome: ReturnType<typeof optimalSearch> | undefined;
  for (let i = 0; i < REPS; i++) {
    const t0 = performance.now();
    prepared = prepareGeneralization(spec, data, wasmGroupingKernel);
    prepareRuns.push(performance.now() - t0);
    const t = performance.now();
    outcome = optimalSearch(openSearch(prepared, wasmGroupingKernel));
    runs.push(performance.now() - t);
    if (runs[0]! > 20_000) break;
  }
  const point: Point = {
    rows: data.rowCount,
    ...extra,
    distinctTuples: prepared!.tuples.counts.length,
    latticeSize: prepared!.problem.lattice.size,
    nodesChecked: outcome!.nodesChecked,
    prepareMs: round(median(prepareRuns)),
    searchMs: round(median(runs)),
    msPerNode: round(median(runs) / outcome!.nodesChecked),
    searchRuns: runs.map(round),
    node: outcome!.best.levels.join(''),
  };
  console.log(
    `  rows ${point.rows.toLocaleString('en').padStart(10)}  tuples ${point.distinctTuples.toLocaleString('en').padStart(9)}  ` +
      `lattice ${String(point.latticeSize).padStart(5)}  prepare ${ms(point.prepareMs).padStart(7)}  ` +
      `search ${ms(point.searchMs).padStart(7)}  ${point.nodesChecked} nodes, ${ms(point.msPerNode)} ms per node`,
  );
  return point;
}

const full = specWith(ALL_QIS.length);
const adult = readCsv(join(ADULT_DIR, 'adult.csv'), { delimiter: ';' });
// Warm-up: JIT and WASM compilation before the first timed point.
for (let i = 0; i < 2; i++)
  optimalSearch(openSearch(prepareGeneralization(full, adult, wasmGroupingKernel), wasmGroupingKernel));

console.log(`\n(a) rows, sampled without perturbation (${ALL_QIS.length} QIs):`);
const byRows = ROWS.map((n) =>
  measure(full, synthesizeTable(n, { seed: SEED }), { perturb: 0, qis: ALL_QIS.length }),
);

console.log(`\n(b) distinct tuples: perturbation levels at ${TUPLES_ROWS.toLocaleString('en')} rows:`);
const byTuples = PERTURB.map((p) =>
  measure(full, synthesizeTable(TUPLES_ROWS, { seed: SEED, perturb: p }), {
    perturb: p,
    qis: ALL_QIS.length,
  }),
);

console.log(
  `\n(c) lattice size: the first ${QIS.join(', ')} QIs of Adult (${adult.rowCount.toLocaleString('en')} rows):`,
);
const byLattice = QIS.map((q) => measure(specWith(q), adult, { qis: q }));
rmSync(work, { recursive: true, force: true });

/** Least-squares slope of log y against log x: cost ∝ x^slope over the measured range. */
function exponent(points: Point[], x: (p: Point) => number, y: (p: Point) => number): number | null {
  const xs = points.map((p) => Math.log(x(p)));
  const ys = points.map((p) => Math.log(Math.max(y(p), 1e-3)));
  const n = xs.length;
  if (n < 2) return null;
  const mx = xs.reduce((a, b) => a + b, 0) / n;
  const my = ys.reduce((a, b) => a + b, 0) / n;
  const sxx = xs.reduce((a, v) => a + (v - mx) ** 2, 0);
  if (sxx === 0) return null;
  return round(xs.reduce((a, v, i) => a + (v - mx) * (ys[i]! - my), 0) / sxx);
}

const rowsOf = (p: Point) => p.rows;
const tuplesOf = (p: Point) => p.distinctTuples;
const latticeOf = (p: Point) => p.latticeSize;
const exponents = {
  rows: {
    search: exponent(byRows, rowsOf, (p) => p.searchMs),
    prepare: exponent(byRows, rowsOf, (p) => p.prepareMs),
  },
  tuples: {
    search: exponent(byTuples, tuplesOf, (p) => p.searchMs),
    msPerNode: exponent(byTuples, tuplesOf, (p) => p.msPerNode),
    prepare: exponent(byTuples, tuplesOf, (p) => p.prepareMs),
    nodesChecked: exponent(byTuples, tuplesOf, (p) => p.nodesChecked),
  },
  lattice: {
    search: exponent(byLattice, latticeOf, (p) => p.searchMs),
    nodesChecked: exponent(byLattice, latticeOf, (p) => p.nodesChecked),
  },
};

const results = {
  benchmark: 'growth',
  date: started.toISOString(),
  durationSeconds: Math.round((Date.now() - started.getTime()) / 1000),
  machine: { ...machine, loadAverageAtEnd: os.loadavg().map(round) },
  settings: {
    privacy: 'k-anonymity k = 5',
    maxSuppression: 0.02,
    metric: 'ncp',
    kernel: 'wasm',
    repetitions: REPS,
    seed: SEED,
    quasiIdentifiers: ALL_QIS,
    note:
      'prepareMs = prepareGeneralization (hierarchies + collapse to distinct tuples over the QIs and the ' +
      'sensitive attribute), median of the repetitions; searchMs = openSearch + optimalSearch, median of the repetitions; ' +
      'exponents: least-squares slope of log cost against log x over the measured range',
  },
  exponents,
  byRows,
  byTuples: { rows: TUPLES_ROWS, points: byTuples },
  byLattice: { rows: adult.rowCount, points: byLattice },
};
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(RESULT_JSON, `${JSON.stringify(results, null, 2)}\n`);
writeFileSync(RESULT_SVG, chart());

const header = [
  'rows',
  'perturb',
  'QIs',
  'tuples',
  'lattice',
  'nodes',
  'prepare ms',
  'search ms',
  'ms/node',
  'node',
];
const line = (p: Point) => [
  p.rows.toLocaleString('en'),
  p.perturb === undefined ? '' : String(p.perturb),
  String(p.qis),
  p.distinctTuples.toLocaleString('en'),
  p.latticeSize.toLocaleString('en'),
  String(p.nodesChecked),
  ms(p.prepareMs),
  ms(p.searchMs),
  ms(p.msPerNode),
  p.node,
];
console.log(`\n(a) rows\n${table(header, byRows.map(line), 0)}`);
console.log(`\n(b) distinct tuples\n${table(header, byTuples.map(line), 0)}`);
console.log(`\n(c) lattice size\n${table(header, byLattice.map(line), 0)}`);
console.log(`\ngrowth exponents (cost ∝ x^e): ${JSON.stringify(exponents)}`);
console.log(
  `wrote ${RESULT_JSON.slice(ROOT.length)} and ${RESULT_SVG.slice(ROOT.length)} (${results.durationSeconds} s)`,
);

function chart(): string {
  const search = { name: 'search', color: PALETTE[0] };
  const prepare = { name: 'prepare (collapse)', color: PALETTE[2] };
  const nodes = { name: 'nodes checked', color: PALETTE[4] };
  const all = { name: 'all nodes (lattice)', color: PALETTE[5] };
  const of = (
    s: { name: string; color: string },
    points: Point[],
    x: (p: Point) => number,
    y: (p: Point) => number,
  ): Series => ({ ...s, points: points.map((p): [number, number] => [x(p), y(p)]) });
  const svg = new SvgChart(2, 2, { w: 380, h: 220 }, { l: 52, r: 14, t: 24, b: 30 });
  const lattice = 'lattice nodes (first 4–8 QIs)';
  const panels: [string, Series[], string, (x: number) => string][] = [
    [
      '(a) ms vs rows, no perturbation',
      [of(search, byRows, rowsOf, (p) => p.searchMs), of(prepare, byRows, rowsOf, (p) => p.prepareMs)],
      'rows',
      powerOfTen,
    ],
    [
      `(b) ms vs distinct tuples, ${compact(TUPLES_ROWS)} rows`,
      [
        of(search, byTuples, tuplesOf, (p) => p.searchMs),
        of(prepare, byTuples, tuplesOf, (p) => p.prepareMs),
      ],
      'distinct tuples',
      compact,
    ],
    [
      '(c) search ms vs lattice size, Adult',
      [of(search, byLattice, latticeOf, (p) => p.searchMs)],
      lattice,
      compact,
    ],
    [
      '(c) nodes checked vs lattice size',
      [
        of(nodes, byLattice, latticeOf, (p) => p.nodesChecked),
        of(all, byLattice, latticeOf, (p) => p.latticeSize),
      ],
      lattice,
      compact,
    ],
  ];
  panels.forEach(([title, series, xLabel, formatX], i) => {
    svg.panel(i, { title, series, xLabel, formatX, logX: true, logY: true });
  });
  svg.legend([search, prepare, nodes, all], 170);
  return svg.toString();
}

function round(x: number): number {
  return Math.round(x * 100) / 100;
}
