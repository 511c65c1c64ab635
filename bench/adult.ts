/**
 * Adult benchmark (a script, not a test): optimal full-domain generalization of the bundled
 * Adult example for k ∈ {2,5,10,50} × maxSuppression ∈ {0, 0.02, 0.05} × metric ∈ {ncp,
 * discernibility}. Measures
 *
 *   1. the in-process search (open a grouping session + optimal search), both kernels,
 *      median of N repetitions after a warm-up, with nodes checked and the chosen node;
 *   2. the grouping kernel alone over all lattice nodes, WASM against the plain-TS reference;
 *   3. the whole process: a cold `node bin/ppdp.mjs release <spec> --out <tmp> --quiet`,
 *      median of 5 spawns, with the per-phase timings of each published report.json.
 *
 * Prints figures as it goes and writes bench/results/adult-generalization.json.
 * Run: `npm run bench` (`-- --quick` for fewer repetitions, `-- --help` for the options).
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { collapseRows } from '../src/data/tuples.ts';
import type { GroupingKernel, GroupingSession } from '../src/kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import type { NodeResult } from '../src/methods/generalization/evaluate.ts';
import { openSearch, prepareGeneralization } from '../src/methods/generalization/index.ts';
import { nearlyEqual } from '../src/methods/generalization/lattice.ts';
import type { Prepared } from '../src/methods/generalization/prepared.ts';
import { optimalSearch } from '../src/methods/generalization/search.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec, type MetricName, type ReleaseSpec } from '../src/release-spec/spec.ts';

const HELP = `Usage: npm run bench [-- --quick] [-- --skip-cli]
       tsx bench/adult.ts [--quick] [--skip-cli]

Benchmarks optimal generalization of examples/adult for k in {2,5,10,50} x maxSuppression in
{0, 0.02, 0.05} x metric in {ncp, discernibility}: in-process search time (WASM and TS kernels),
nodes checked, the grouping kernel alone (WASM vs TS, ms per node over the whole lattice), and
the wall time of a cold \`ppdp release\` process with its per-phase timings.

Writes bench/results/adult-generalization.json. The CLI part runs the built bundle
(dist/ppdp.cjs): run \`npm run build\` first.

Options:
  --quick      fewer repetitions (search: 3 runs instead of 1 warm-up + 5, kernel: 1 pass
               over the lattice instead of 3, CLI: 3 processes instead of 5)
  --skip-cli   skip the whole-process measurements (no build needed)
  -h, --help   this text
`;

const ROOT = new URL('../', import.meta.url).pathname;
const EXAMPLE_DIR = join(ROOT, 'examples/adult');
const BIN = join(ROOT, 'bin/ppdp.mjs');
const BUNDLE = join(ROOT, 'dist/ppdp.cjs');
const WASM = join(ROOT, 'build/ppdp.wasm');
const GOLDEN = join(ROOT, 'test/golden/adult-generalization.json');
const RESULT = join(ROOT, 'bench/results/adult-generalization.json');

const KS = [2, 5, 10, 50] as const;
const SUPPRESSIONS = [0, 0.02, 0.05] as const;
const METRICS: readonly MetricName[] = ['ncp', 'discernibility'];
const KERNELS: readonly GroupingKernel[] = [wasmGroupingKernel, tsGroupingKernel];

/** ARX's quoted timings (taken by a third party with ARX, not measured by this script). */
const ARX = {
  source:
    'ARX quoted timings, not measured here: ARX (Java) on Adult, 8 QIs, 4,320-node lattice, warm JVM, anonymize() only; ' +
    "taken by a third party on this kind of machine; ppdp's benchmark did not run ARX",
  searchMs: { k5: { '0': 55, '0.02': 309, '0.05': 244 } } as Record<string, Record<string, number>>,
  coldProcessMs: { kAnonymity: [2000, 2400] },
};

// ---------------------------------------------------------------------------------------------

const { values: opts } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    'skip-cli': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (opts.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const QUICK = opts.quick;
/** Warm-up runs per configuration, after a global warm-up of every kernel's search. */
const SEARCH_WARMUP = QUICK ? 0 : 1;
const SEARCH_REPS = QUICK ? 3 : 5;
const KERNEL_PASSES = QUICK ? 1 : 3;
const CLI_REPS = QUICK ? 3 : 5;

if (!existsSync(WASM)) fail('build/ppdp.wasm is missing: run `npm run build` first.');
if (!opts['skip-cli'] && !existsSync(BUNDLE)) {
  fail('dist/ppdp.cjs is missing: run `npm run build` first (or pass --skip-cli).');
}
const staleness = opts['skip-cli'] ? [] : stalenessWarnings();
for (const w of staleness) console.log(`warning: ${w}`);

interface Samples {
  median: number;
  min: number;
  max: number;
  runs: number[];
}

interface SearchFigures {
  ms: Samples;
  nodesChecked: number;
}

interface ConfigResult {
  k: number;
  maxSuppression: number;
  metric: MetricName;
  latticeSize: number;
  nodesChecked: number;
  latticeShare: number;
  strategy: string;
  node: Record<string, number>;
  value: number;
  suppressedRows: number;
  golden: 'match' | 'differs' | 'absent';
  search: Record<string, SearchFigures>;
  /** One instrumented WASM run: where the search time goes. */
  breakdown: { openMs: number; groupMs: number; evaluateOtherMs: number; searchOtherMs: number };
  arx?: { searchMs: number; speedup: number };
  cli?: {
    wallMs: Samples;
    phasesMs: Record<string, number>;
    phaseRuns: Record<string, number>[];
    node: Record<string, number>;
  };
}

const started = new Date();
const builtAtStart = builtAt();
const uncommittedFiles = gitDirtyCount();
const machine = {
  node: process.version,
  v8: process.versions.v8,
  platform: `${os.platform()} ${os.release()} ${os.arch()}`,
  cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
  cores: os.cpus().length,
  availableParallelism: os.availableParallelism(),
  memoryGiB: Math.round((os.totalmem() / 2 ** 30) * 10) / 10,
  loadAverageAtStart: os.loadavg().map(round2),
  loadAverageAtEnd: [] as number[],
};
console.log(`ppdp Adult benchmark${QUICK ? ' (quick)' : ''} — ${started.toISOString()}`);
console.log(
  `node ${machine.node}, ${machine.cpu}, ${machine.cores} cores, load average ${machine.loadAverageAtStart.join(' ')}`,
);
console.log(
  `search: ${SEARCH_WARMUP} warm-up + ${SEARCH_REPS} runs per kernel; kernel: ${KERNEL_PASSES} pass(es) over the lattice; ` +
    `CLI: ${opts['skip-cli'] ? 'skipped' : `${CLI_REPS} cold processes`}`,
);

const baseSpec = loadSpec(join(EXAMPLE_DIR, 'release.json'));
const t0 = performance.now();
const table = readInput(baseSpec);
const readMs = performance.now() - t0;
const golden = existsSync(GOLDEN)
  ? (JSON.parse(readFileSync(GOLDEN, 'utf8')) as {
      k: number;
      maxSuppression: number;
      metric: string;
      node: Record<string, number>;
      value: number;
    }[])
  : [];

// --- Preparation (hierarchies + collapse to distinct tuples), once per kernel ------------------

const prepareMs: Record<string, Samples> = {};
let dataset = {
  rows: 0,
  quasiIdentifiers: [] as string[],
  /** Tuples the search groups: distinct over the QIs and the SAs the search carries. */
  distinctTuples: 0,
  /** Distinct over the QIs alone: all k-anonymity needs. */
  distinctQiTuples: 0,
  /** SAs whose per-class histograms every node evaluation computes. */
  sensitiveInSearch: [] as string[],
  latticeSize: 0,
};
console.log(
  `\nread + encode ${table.rowCount.toLocaleString('en')} rows: ${readMs.toFixed(1)} ms (first read)`,
);
for (const kernel of KERNELS) {
  const runs: number[] = [];
  const warmup = Math.max(1, SEARCH_WARMUP);
  for (let i = 0; i < warmup + SEARCH_REPS; i++) {
    const t = performance.now();
    const p = prepareGeneralization(baseSpec, table, kernel);
    if (i >= warmup) runs.push(performance.now() - t);
    dataset = {
      rows: table.rowCount,
      quasiIdentifiers: p.qis.map((c) => c.name),
      distinctTuples: p.tuples.counts.length,
      distinctQiTuples: collapseRows(kernel, p.qis).counts.length,
      sensitiveInSearch: p.problem.sensitive.map((s) => s.attribute),
      latticeSize: p.problem.lattice.size,
    };
  }
  prepareMs[kernel.name] = samples(runs);
  console.log(
    `prepare (hierarchies + distinct tuples), ${kernel.name}: ${fmt(prepareMs[kernel.name]!.median)} ms median`,
  );
}
console.log(
  `${dataset.rows.toLocaleString('en')} rows, ${dataset.quasiIdentifiers.length} QIs ` +
    `(${dataset.quasiIdentifiers.join(', ')}), ${dataset.distinctTuples.toLocaleString('en')} distinct tuples, ` +
    `lattice of ${dataset.latticeSize.toLocaleString('en')} nodes`,
);
if (dataset.distinctTuples !== dataset.distinctQiTuples || dataset.sensitiveInSearch.length > 0) {
  console.log(
    `note: the search groups ${dataset.distinctTuples.toLocaleString('en')} tuples, ` +
      `${dataset.distinctQiTuples.toLocaleString('en')} distinct over the QIs alone; per-class histograms of ` +
      `[${dataset.sensitiveInSearch.join(', ')}] are computed at every node (k-anonymity needs neither)`,
  );
}

// --- The grouping kernel alone, over every node ------------------------------------------------

console.log(`\ngrouping kernel alone, every one of the ${dataset.latticeSize} nodes:`);
const kernelFigures = benchKernels(prepareGeneralization(baseSpec, table, wasmGroupingKernel));
for (const name of Object.keys(kernelFigures.perKernel)) {
  const f = kernelFigures.perKernel[name]!;
  console.log(
    `  ${name.padEnd(4)} open ${fmt(f.openMs)} ms, ${fmt(f.passMs.median)} ms per pass, ${f.msPerNode.toFixed(4)} ms per node`,
  );
}
console.log(`  WASM speed-up over TS: ${kernelFigures.speedup.toFixed(2)}×`);

// --- In-process search, every configuration ------------------------------------------------------

console.log('\nin-process search (open session + optimal search), median ms:');
{
  // Global warm-up: the default configuration, twice per kernel, so the first timed runs
  // meet optimized code.
  const p = new Map(KERNELS.map((kernel) => [kernel.name, prepareGeneralization(baseSpec, table, kernel)]));
  for (let i = 0; i < 2; i++)
    for (const kernel of KERNELS) optimalSearch(openSearch(p.get(kernel.name)!, kernel));
}
const configs: ConfigResult[] = [];
for (const k of KS) {
  for (const maxSuppression of SUPPRESSIONS) {
    for (const metric of METRICS) {
      const spec = configSpec(baseSpec, k, maxSuppression, metric);
      const result = benchSearch(spec, k, maxSuppression, metric);
      configs.push(result);
      const arx = result.arx ? `, ARX ${result.arx.searchMs} ms → ${result.arx.speedup.toFixed(2)}×` : '';
      console.log(
        `  k=${String(k).padEnd(2)} supp=${String(maxSuppression).padEnd(4)} ${metric.padEnd(14)} ` +
          `wasm ${fmt(result.search.wasm!.ms.median).padStart(7)}  ts ${fmt(result.search.ts!.ms.median).padStart(7)}  ` +
          `${String(result.nodesChecked).padStart(4)} nodes (${pct(result.latticeShare)})  ` +
          `golden ${result.golden}${arx}`,
      );
    }
  }
}

// --- Whole process --------------------------------------------------------------------------------

let processBaseline: { nodeStartMs: Samples; ppdpHelpMs: Samples } | undefined;
if (!opts['skip-cli']) {
  console.log(
    `\nwhole process: node bin/ppdp.mjs release <spec> --out <tmp> --quiet, median of ${CLI_REPS}:`,
  );
  const work = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-'));
  try {
    const dir = join(work, 'adult');
    cpSync(EXAMPLE_DIR, dir, { recursive: true });
    processBaseline = {
      nodeStartMs: samples(times(CLI_REPS, () => run([process.execPath, '-e', '0']))),
      ppdpHelpMs: samples(times(CLI_REPS, () => run([process.execPath, BIN, '--help']))),
    };
    console.log(
      `  baseline: node -e 0 ${fmt(processBaseline.nodeStartMs.median)} ms, ` +
        `ppdp --help ${fmt(processBaseline.ppdpHelpMs.median)} ms (process start + module load)`,
    );
    let outCount = 0;
    const release = (specPath: string) => {
      const out = join(work, `out-${outCount++}`);
      const t = performance.now();
      run([process.execPath, BIN, 'release', specPath, '--out', out, '--quiet']);
      const wall = performance.now() - t;
      const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')) as {
        timings: Record<string, number>;
        generalization: { node: Record<string, number> };
      };
      rmSync(out, { recursive: true, force: true });
      return { wall, timings: report.timings, node: report.generalization.node };
    };
    // One unrecorded run so that every measured process meets the same (warm) file cache.
    release(join(dir, 'release.json'));
    for (const c of configs) {
      const specPath = join(dir, `bench-k${c.k}-s${c.maxSuppression}-${c.metric}.json`);
      const json = JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8'));
      json.privacy = [{ model: 'k-anonymity', k: c.k }];
      json.method = { ...json.method, maxSuppression: c.maxSuppression, metric: c.metric };
      writeFileSync(specPath, `${JSON.stringify(json, null, 2)}\n`);
      const runs = Array.from({ length: CLI_REPS }, () => release(specPath));
      const phases = Object.keys(runs[0]!.timings);
      c.cli = {
        wallMs: samples(runs.map((r) => r.wall)),
        phasesMs: Object.fromEntries(
          phases.map((p) => [p, round2(median(runs.map((r) => r.timings[p] ?? 0)))]),
        ),
        phaseRuns: runs.map((r) => r.timings),
        node: runs[0]!.node,
      };
      if (JSON.stringify(c.cli.node) !== JSON.stringify(c.node)) {
        console.log(
          `  warning: the CLI chose ${JSON.stringify(c.cli.node)}, in-process ${JSON.stringify(c.node)}`,
        );
      }
      console.log(
        `  k=${String(c.k).padEnd(2)} supp=${String(c.maxSuppression).padEnd(4)} ${c.metric.padEnd(14)} ` +
          `wall ${fmt(c.cli.wallMs.median).padStart(7)} ms  (in report: total ${fmt(c.cli.phasesMs.total ?? 0)}, ` +
          `search ${fmt(c.cli.phasesMs.search ?? 0)}, verify ${fmt(c.cli.phasesMs.verify ?? 0)})`,
      );
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// --- Results ---------------------------------------------------------------------------------------

machine.loadAverageAtEnd = os.loadavg().map(round2);
const finished = new Date();
const results = {
  benchmark: 'adult-generalization',
  date: started.toISOString(),
  durationSeconds: Math.round((finished.getTime() - started.getTime()) / 1000),
  commit: gitCommit(),
  /** Files differing from the commit when the benchmark started (others may be mid-change). */
  uncommittedFiles: uncommittedFiles,
  machine,
  settings: {
    quick: QUICK,
    searchWarmup: SEARCH_WARMUP,
    searchRepetitions: SEARCH_REPS,
    kernelPasses: KERNEL_PASSES,
    cliRepetitions: opts['skip-cli'] ? 0 : CLI_REPS,
    warnings: staleness,
    /** When the WASM module and the CLI bundle were built, seen at the start and at the end. */
    builtAt: { start: builtAtStart, end: builtAt() },
    note:
      'ms are medians; search = openSearch (fresh grouping session) + optimalSearch on a prepared problem; ' +
      'cli wall = spawn to exit of node bin/ppdp.mjs release --quiet (after one unrecorded run for the file cache)',
  },
  dataset: { ...dataset, firstReadMs: round2(readMs) },
  prepareMs: mapValues(prepareMs, roundSamples),
  kernel: {
    nodes: dataset.latticeSize,
    perKernel: mapValues(kernelFigures.perKernel, (f) => ({
      openMs: round2(f.openMs),
      passMs: roundSamples(f.passMs),
      msPerNode: Math.round(f.msPerNode * 1e5) / 1e5,
    })),
    speedup: round2(kernelFigures.speedup),
    identicalGroupCounts: kernelFigures.identical,
  },
  processBaseline: processBaseline && mapValues(processBaseline, roundSamples),
  configurations: configs.map((c) => ({
    ...c,
    latticeShare: Math.round(c.latticeShare * 1e4) / 1e4,
    search: mapValues(c.search, (s) => ({ ...s, ms: roundSamples(s.ms) })),
    breakdown: mapValues(c.breakdown, round2),
    cli: c.cli && { ...c.cli, wallMs: roundSamples(c.cli.wallMs) },
  })),
  arx: ARX,
};
mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(RESULT, `${JSON.stringify(results, null, 2)}\n`);

printSummary();
console.log(`\nwrote ${RESULT.slice(ROOT.length)} (${results.durationSeconds} s)`);
if (configs.some((c) => c.golden === 'differs')) {
  console.log('error: a chosen node differs from the golden table (see "golden" above)');
  process.exitCode = 1;
}

// ---------------------------------------------------------------------------------------------

function configSpec(base: ReleaseSpec, k: number, maxSuppression: number, metric: MetricName): ReleaseSpec {
  if (base.method.name !== 'generalization') fail('examples/adult/release.json is not a generalization spec');
  return {
    ...base,
    privacy: [{ model: 'k-anonymity', k }],
    method: { ...base.method, maxSuppression, metric },
  } as ReleaseSpec;
}

function benchSearch(spec: ReleaseSpec, k: number, maxSuppression: number, metric: MetricName): ConfigResult {
  const prepared = new Map(
    KERNELS.map((kernel) => [kernel.name, prepareGeneralization(spec, table, kernel)]),
  );
  const runs = new Map<string, number[]>(KERNELS.map((kernel) => [kernel.name, []]));
  const outcomes = new Map<string, { best: NodeResult; nodesChecked: number; strategy: string }>();
  // Kernels alternate within each repetition, so drifting load hits both alike.
  for (let i = 0; i < SEARCH_WARMUP + SEARCH_REPS; i++) {
    for (const kernel of KERNELS) {
      const p = prepared.get(kernel.name)!;
      const t = performance.now();
      const outcome = optimalSearch(openSearch(p, kernel));
      const ms = performance.now() - t;
      if (i >= SEARCH_WARMUP) runs.get(kernel.name)!.push(ms);
      const previous = outcomes.get(kernel.name);
      if (
        previous &&
        (previous.best.id !== outcome.best.id || previous.nodesChecked !== outcome.nodesChecked)
      ) {
        fail(`k=${k} supp=${maxSuppression} ${metric}: the ${kernel.name} search is not deterministic`);
      }
      outcomes.set(kernel.name, outcome);
    }
  }
  const wasm = outcomes.get('wasm')!;
  const ts = outcomes.get('ts')!;
  if (wasm.best.id !== ts.best.id || wasm.nodesChecked !== ts.nodesChecked) {
    fail(`k=${k} supp=${maxSuppression} ${metric}: the WASM and TS searches disagree`);
  }
  const p = prepared.get('wasm')!;
  const node = Object.fromEntries(p.qis.map((c, i) => [c.name, wasm.best.levels[i]!]));
  const g = golden.find((r) => r.k === k && r.maxSuppression === maxSuppression && r.metric === metric);
  const matches =
    g && JSON.stringify(g.node) === JSON.stringify(node) && nearlyEqual(g.value, wasm.best.value);
  const arxMs = metric === 'ncp' ? ARX.searchMs[`k${k}`]?.[String(maxSuppression)] : undefined;
  const search = Object.fromEntries(
    KERNELS.map((kernel) => [
      kernel.name,
      { ms: samples(runs.get(kernel.name)!), nodesChecked: outcomes.get(kernel.name)!.nodesChecked },
    ]),
  );
  return {
    k,
    maxSuppression,
    metric,
    latticeSize: p.problem.lattice.size,
    nodesChecked: wasm.nodesChecked,
    latticeShare: wasm.nodesChecked / p.problem.lattice.size,
    strategy: wasm.strategy,
    node,
    value: wasm.best.value,
    suppressedRows: wasm.best.suppressedRows,
    golden: g ? (matches ? 'match' : 'differs') : 'absent',
    search,
    breakdown: breakdown(p),
    ...(arxMs !== undefined
      ? { arx: { searchMs: arxMs, speedup: round2(arxMs / search.wasm!.ms.median) } }
      : {}),
  };
}

/** One instrumented WASM search: session opening, grouping, the rest of node evaluation, the rest. */
function breakdown(p: Prepared): ConfigResult['breakdown'] {
  let openMs = 0;
  let groupMs = 0;
  let evaluateMs = 0;
  const timed: GroupingKernel = {
    name: wasmGroupingKernel.name,
    open(input, tables) {
      const t = performance.now();
      const inner = wasmGroupingKernel.open(input, tables);
      openMs += performance.now() - t;
      const session: GroupingSession = {
        n: inner.n,
        domains: inner.domains,
        group(levels) {
          const t1 = performance.now();
          const r = inner.group(levels);
          groupMs += performance.now() - t1;
          return r;
        },
        rollup(levels, from, withMap) {
          const t1 = performance.now();
          const r = inner.rollup(levels, from, withMap);
          groupMs += performance.now() - t1;
          return r;
        },
        compose: (groupOf, map) => inner.compose(groupOf, map),
        histogram: (groupOf, groups, values, width) => inner.histogram(groupOf, groups, values, width),
        keys: (groups) => inner.keys(groups),
        dispose: () => inner.dispose(),
      };
      return session;
    },
  };
  const t = performance.now();
  const evaluator = openSearch(p, timed);
  const evaluate = evaluator.evaluate.bind(evaluator);
  evaluator.evaluate = (id: number) => {
    const t1 = performance.now();
    const r = evaluate(id);
    evaluateMs += performance.now() - t1;
    return r;
  };
  optimalSearch(evaluator);
  const total = performance.now() - t;
  return {
    openMs,
    groupMs,
    evaluateOtherMs: evaluateMs - groupMs,
    searchOtherMs: total - openMs - evaluateMs,
  };
}

function benchKernels(p: Prepared) {
  const lattice = p.problem.lattice;
  const input = {
    columns: p.tuples.columns,
    counts: p.tuples.counts,
    domains: p.qis.map((c) => c.dictionary.length),
  };
  const tables = p.hierarchies.map((h) => h.levelTables);
  const levels = Array.from({ length: lattice.size }, (_, id) => lattice.levels(id));
  const sessions = KERNELS.map((kernel) => {
    const t = performance.now();
    const session = kernel.open(input, tables);
    return { kernel, session, openMs: performance.now() - t, passes: [] as number[] };
  });
  const groupCounts = new Map<string, Int32Array>();
  for (const s of sessions) {
    // Warm-up: a slice of the lattice, so that the timed passes run optimized code.
    for (let id = 0; id < lattice.size; id += 10) s.session.group(levels[id]!);
  }
  for (let pass = 0; pass < KERNEL_PASSES; pass++) {
    for (const s of sessions) {
      const groups = new Int32Array(lattice.size);
      const t = performance.now();
      for (let id = 0; id < lattice.size; id++) groups[id] = s.session.group(levels[id]!).groups;
      s.passes.push(performance.now() - t);
      groupCounts.set(s.kernel.name, groups);
      process.stdout.write(
        `  pass ${pass + 1}/${KERNEL_PASSES} ${s.kernel.name}: ${fmt(s.passes.at(-1)!)} ms\n`,
      );
    }
  }
  for (const s of sessions) s.session.dispose();
  const a = groupCounts.get('wasm')!;
  const b = groupCounts.get('ts')!;
  const identical = a.every((v, i) => v === b[i]);
  if (!identical) console.log('  warning: the kernels disagree on group counts');
  const perKernel = Object.fromEntries(
    sessions.map((s) => {
      const passMs = samples(s.passes);
      return [s.kernel.name, { openMs: s.openMs, passMs, msPerNode: passMs.median / lattice.size }];
    }),
  );
  return {
    perKernel,
    speedup: perKernel.ts!.msPerNode / perKernel.wasm!.msPerNode,
    identical,
  };
}

function printSummary(): void {
  const qiOrder = dataset.quasiIdentifiers.join(', ');
  console.log('\n=== Summary ===');
  console.log(
    `${machine.cpu}, ${machine.cores} cores, node ${machine.node}; load average ` +
      `${machine.loadAverageAtStart.join(' ')} → ${machine.loadAverageAtEnd.join(' ')} (shared machine: expect noise)`,
  );
  console.log(`node = levels of [${qiOrder}]\n`);
  const header = [
    'k',
    'supp',
    'metric',
    'nodes',
    'share',
    'wasm ms',
    'ts ms',
    'ARX ms',
    'vs ARX',
    'cold ms',
    'node',
    'value',
    'golden',
  ];
  const rows = configs.map((c) => [
    String(c.k),
    String(c.maxSuppression),
    c.metric,
    String(c.nodesChecked),
    pct(c.latticeShare),
    fmt(c.search.wasm!.ms.median),
    fmt(c.search.ts!.ms.median),
    c.arx ? String(c.arx.searchMs) : '',
    c.arx ? `${c.arx.speedup.toFixed(2)}×` : '',
    c.cli ? fmt(c.cli.wallMs.median) : '',
    Object.values(c.node).join(''),
    c.metric === 'ncp' ? c.value.toFixed(4) : String(c.value),
    c.golden,
  ]);
  printTable(header, rows, ['node']);

  if (configs.some((c) => c.cli)) {
    const phases = [...new Set(configs.flatMap((c) => Object.keys(c.cli?.phasesMs ?? {})))];
    console.log('\nphases of the published report.json (median ms), cold process wall time:');
    printTable(
      ['k', 'supp', 'metric', ...phases, 'wall'],
      configs.map((c) => [
        String(c.k),
        String(c.maxSuppression),
        c.metric,
        ...phases.map((p) => fmt(c.cli?.phasesMs[p] ?? 0)),
        fmt(c.cli?.wallMs.median ?? 0),
      ]),
    );
  }

  console.log('\nwhere the in-process WASM search time goes (one instrumented run, ms):');
  printTable(
    ['k', 'supp', 'metric', 'open', 'grouping', 'rest of eval', 'search', 'total'],
    configs.map((c) => {
      const b = c.breakdown;
      return [
        String(c.k),
        String(c.maxSuppression),
        c.metric,
        fmt(b.openMs),
        fmt(b.groupMs),
        fmt(b.evaluateOtherMs),
        fmt(b.searchOtherMs),
        fmt(b.openMs + b.groupMs + b.evaluateOtherMs + b.searchOtherMs),
      ];
    }),
  );

  const w = kernelFigures.perKernel.wasm!;
  const t = kernelFigures.perKernel.ts!;
  console.log(
    `\ngrouping kernel over all ${dataset.latticeSize} nodes: WASM ${w.msPerNode.toFixed(4)} ms/node, ` +
      `TS ${t.msPerNode.toFixed(4)} ms/node → ${kernelFigures.speedup.toFixed(2)}× (group counts identical: ${kernelFigures.identical})`,
  );
  console.log(
    `prepare (hierarchies + distinct tuples): WASM ${fmt(prepareMs.wasm!.median)} ms, TS ${fmt(prepareMs.ts!.median)} ms`,
  );
  if (processBaseline) {
    console.log(
      `process baseline: node -e 0 ${fmt(processBaseline.nodeStartMs.median)} ms, ppdp --help ${fmt(processBaseline.ppdpHelpMs.median)} ms; ` +
        `cold ARX process (quoted, not measured here): 2,000–2,400 ms`,
    );
  }
}

/** Columns named in `left` (and the first three: k, supp, metric) are left-aligned. */
function printTable(header: string[], rows: string[][], left: readonly string[] = []): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const leftAligned = header.map((h, i) => i < 3 || left.includes(h));
  const line = (cells: string[]) =>
    cells.map((c, i) => (leftAligned[i] ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(line(header));
  console.log(widths.map((n) => '-'.repeat(n)).join('  '));
  for (const r of rows) console.log(line(r));
}

function run(argv: string[]): void {
  const r = spawnSync(argv[0]!, argv.slice(1), { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0) {
    fail(`${argv.slice(1, 3).join(' ')} exited with ${r.status ?? r.signal}:\n${r.stderr}`);
  }
}

function times(n: number, work: () => void): number[] {
  work(); // unrecorded: file cache
  return Array.from({ length: n }, () => {
    const t = performance.now();
    work();
    return performance.now() - t;
  });
}

function samples(runs: number[]): Samples {
  return { median: median(runs), min: Math.min(...runs), max: Math.max(...runs), runs };
}

function roundSamples(s: Samples): Samples {
  return { median: round2(s.median), min: round2(s.min), max: round2(s.max), runs: s.runs.map(round2) };
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
}

function mapValues<T, U>(o: Record<string, T>, f: (v: T) => U): Record<string, U> {
  return Object.fromEntries(Object.entries(o).map(([k, v]) => [k, f(v)]));
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

function fmt(ms: number): string {
  return ms >= 100 ? ms.toFixed(0) : ms.toFixed(1);
}

function pct(share: number): string {
  return `${(share * 100).toFixed(1)} %`;
}

/** The bundle runs what was built, not the sources: say so when the sources are newer. */
function stalenessWarnings(): string[] {
  const newest = (dir: string): number => {
    let t = 0;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      t = Math.max(t, e.isDirectory() ? newest(p) : statSync(p).mtimeMs);
    }
    return t;
  };
  const out: string[] = [];
  if (newest(join(ROOT, 'src')) > statSync(BUNDLE).mtimeMs) {
    out.push(
      'a file in src/ is newer than dist/ppdp.cjs: the CLI figures may be for older sources (`npm run build`)',
    );
  }
  if (newest(join(ROOT, 'assembly')) > statSync(WASM).mtimeMs) {
    out.push('assembly/ is newer than build/ppdp.wasm: run `npm run build`');
  }
  return out;
}

function gitCommit(): string | undefined {
  const r = spawnSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

function builtAt(): { wasm: string | null; cli: string | null } {
  const at = (p: string) => (existsSync(p) ? statSync(p).mtime.toISOString() : null);
  return { wasm: at(WASM), cli: at(BUNDLE) };
}

function gitDirtyCount(): number | undefined {
  const r = spawnSync('git', ['status', '--porcelain'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.split('\n').filter((l) => l.trim() !== '').length : undefined;
}

function fail(message: string): never {
  console.error(`bench: ${message}`);
  process.exit(1);
}
