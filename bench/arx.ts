/**
 * ppdp against ARX 3.9.2, both measured here (a script, not a test). ARX runs as one
 * long-lived JVM (bench/arx/ArxRun.java, compiled into build/arx-harness) that reads a
 * configuration, then times one warm `anonymize()` per request; ppdp runs in this process.
 * For every configuration the two alternate run by run (ppdp, ARX, ppdp, ARX, …) so that load
 * on the machine falls on both alike, and the ratio ARX / ppdp of their medians is reported
 * with the node each chose.
 *
 * ppdp's timed work is what ARX's `anonymize()` does on data it has already read: preparation
 * (hierarchies, models, rows collapsed to distinct tuples) plus the lattice search. ARX gets
 * the same hierarchies as files: Adult's own, and for the registry-shaped table
 * (bench/registry-sample.ts) the ones `ppdp hierarchy` writes from the spec's builders.
 *
 * Metrics: discernibility is defined alike in both, so the optima must agree. ppdp's NCP is
 * compared with ARX's Loss (gs-factor 0.5, arithmetic mean), a different definition: the nodes
 * are reported as they fall. ppdp's node is also checked against exhaustive search (the golden
 * tables for Adult). Then, for ppdp alone, the cold CLI on Adult.
 * Writes bench/results/arx-comparison.json (`--suppression 0 --out <file>`: only the
 * configurations without suppression, to another file).
 *
 * `--ride-along`: the registry-shaped tables only, with their three ride-along columns (a free
 * text note, an amount, a timestamp: bench/registry-sample.ts, as `bench:scale --ride-along`),
 * released unchanged by ppdp and insensitive to ARX. Then ppdp's timed work is its whole CLI, a
 * fresh process (read, search, write, verify: `node bin/ppdp.mjs release`, spawn to exit),
 * against ARX's `anonymize()` alone on data it has already read, interleaved on the same
 * hierarchies, each configuration's nodes compared. Writes
 * bench/results/arx-registry-ride-along.json. Needs `npm run build`.
 *
 * Run: `npm run bench:arx` (`-- --help` for the options). Needs java and javac 17 and the ARX
 * library's jars: `--arx-lib <dir>` or the environment variable ARX_LIB.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization, search } from '../src/methods/generalization/index.ts';
import { exhaustiveSearch } from '../src/methods/generalization/search.ts';
import { readInput } from '../src/pipeline/release.ts';
import {
  loadSpec,
  type MetricName,
  type PrivacyModelSpec,
  type ReleaseSpec,
} from '../src/release-spec/spec.ts';
import {
  ADULT_SPEC,
  type GoldenRow,
  KS,
  METRICS,
  PRIVACY_CONFIGS,
  type PrivacyGoldenRow,
  SUPPRESSIONS,
} from '../test/golden/adult-configs.ts';
import { startArxHarness, writeArxHierarchies } from './arx-harness.ts';
import { timedRelease } from './cli-release.ts';
import { hostSpeed, hostSpeedLine } from './host-speed.ts';
import { RIDE_ALONG_COLUMNS, registrySample } from './registry-sample.ts';
import { machineInfo, median, table } from './scale.ts';

const HELP = `Usage: npm run bench:arx [-- options]
  --runs N          timed runs per configuration and tool, after the warm-ups (default 5)
  --warmup N        warm-up runs per configuration and tool (default 2)
  --registry LIST   registry-shaped table sizes, comma-separated (default 100000; 0 skips)
  --adult all|few   the whole Adult grid, or one configuration per privacy model (default all)
  --cli N           cold ppdp CLI runs on Adult, ppdp alone (default 7; 0 skips; needs npm run build)
  --suppression L   only the configurations with these suppression limits, comma-separated
                    (e.g. 0); such a partial run needs --out
  --out FILE        the results file in bench/results (default arx-comparison.json, the full run's)
  --arx-lib DIR     the folder of ARX 3.9.2's jars (default: $ARX_LIB)
  --arx-heap SIZE   the ARX JVM's -Xmx (default 6g; 12g for 3·10⁶ rows with --ride-along)
  --ride-along      registry tables only, with their three ride-along columns: ppdp's whole
                    CLI (a fresh process) against ARX's anonymize() alone (needs npm run build);
                    results in arx-registry-ride-along.json unless --out names another
`;
const { values } = parseArgs({
  options: {
    runs: { type: 'string', default: '5' },
    warmup: { type: 'string', default: '2' },
    registry: { type: 'string', default: '100000' },
    adult: { type: 'string', default: 'all' },
    cli: { type: 'string', default: '7' },
    suppression: { type: 'string', default: '' },
    out: { type: 'string', default: '' },
    'arx-lib': { type: 'string', default: process.env.ARX_LIB ?? '' },
    'arx-heap': { type: 'string', default: '6g' },
    'ride-along': { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}
const RUNS = Math.max(1, Number(values.runs));
const WARMUP = Math.max(0, Number(values.warmup));
const CLI_RUNS = Math.max(0, Number(values.cli));
const REGISTRY_SIZES = values.registry
  .split(',')
  .map(Number)
  .filter((n) => n > 0);
const SUPPRESSION_FILTER = values.suppression
  ? new Set(values.suppression.split(',').map(Number))
  : undefined;
// A partial run must not stand in for the full comparison in its file.
if (SUPPRESSION_FILTER && !values.out) {
  process.stderr.write('--suppression runs a part of the comparison: name its results file with --out\n');
  process.exit(2);
}
const RIDE_ALONG = values['ride-along'];
const OUT = values.out || (RIDE_ALONG ? 'arx-registry-ride-along.json' : 'arx-comparison.json');
const say = (line: string) => process.stdout.write(`${line}\n`);

interface Config {
  dataset: string;
  name: string;
  privacy: PrivacyModelSpec[];
  maxSuppression: number;
  metric: MetricName;
  /** Exhaustive search's node when a golden table holds it. */
  golden?: Record<string, number>;
  /** Whether to run exhaustive search when no golden node is known (small lattices and tables). */
  exhaustive: boolean;
}

interface Dataset {
  name: string;
  spec: ReleaseSpec;
  /** ARX's `config` fields for the data and hierarchies. */
  arxFields: string[];
  configs: Config[];
}

// ---- ARX: the long-lived JVM ----

const startArx = () => startArxHarness(values['arx-lib'], 'ArxRun', values['arx-heap']);

/** ARX's fields for the privacy models, metric and suppression of a configuration. */
function arxModelFields(c: Config): string[] {
  const fields: string[] = [];
  for (const m of c.privacy) {
    switch (m.model) {
      case 'k-anonymity':
        fields.push(`model=k:${m.k}`);
        break;
      case 'distinct-l-diversity':
        fields.push(`model=distinct-l:${m.l}`);
        break;
      case 'entropy-l-diversity':
        fields.push(`model=entropy-l:${m.l}`);
        break;
      case 'recursive-cl-diversity':
        fields.push(`model=recursive-cl:${m.c}:${m.l}`);
        break;
      case 't-closeness':
        fields.push(`model=${m.distance === 'hierarchical' ? 'hierarchical' : 'equal'}-t:${m.t}`);
        break;
      case 'delta-disclosure':
        // ppdp's δ bounds a natural logarithm, ARX's a base-2 one (docs/definitions.md).
        fields.push(`model=delta:${m.delta / Math.LN2}`);
        break;
      default:
        throw new Error(`no ARX model for ${m.model}`);
    }
  }
  fields.push(
    `supp=${c.maxSuppression}`,
    `metric=${c.metric === 'discernibility' ? 'discernibility' : 'loss'}`,
  );
  return fields;
}

// ---- the datasets and their configurations ----

const golden = <T>(name: string): T[] =>
  JSON.parse(readFileSync(new URL(`../test/golden/${name}`, import.meta.url), 'utf8'));

function adultDataset(): Dataset {
  const spec = loadSpec(ADULT_SPEC);
  const dir = resolve(ADULT_SPEC, '..');
  const foundation = golden<GoldenRow>('adult-generalization.json');
  const privacy = golden<PrivacyGoldenRow>('adult-privacy.json');
  const configs: Config[] = [];
  const few = values.adult === 'few';
  for (const k of few ? [5] : KS)
    for (const maxSuppression of few ? [0.02] : SUPPRESSIONS)
      for (const metric of METRICS)
        configs.push({
          dataset: 'adult',
          name: `k=${k}`,
          privacy: [{ model: 'k-anonymity', k }],
          maxSuppression,
          metric,
          golden: foundation.find(
            (g) => g.k === k && g.maxSuppression === maxSuppression && g.metric === metric,
          )?.node,
          exhaustive: true,
        });
  const seen = new Set<string>();
  for (const [i, c] of PRIVACY_CONFIGS.entries()) {
    const kind = `${c.model.model} ${'distance' in c.model ? c.model.distance : ''}`;
    if (few && seen.has(kind)) continue;
    seen.add(kind);
    configs.push({
      dataset: 'adult',
      name: `k=5 + ${c.name}`,
      privacy: [{ model: 'k-anonymity', k: 5 }, c.model as PrivacyModelSpec],
      maxSuppression: c.maxSuppression,
      metric: 'ncp',
      golden: privacy[i]?.node,
      exhaustive: true,
    });
  }
  const arxFields = [`data=${join(dir, 'adult.csv')}`, `delim=${spec.format?.delimiter ?? ';'}`];
  for (const a of spec.attributes) {
    if (a.hierarchy?.kind !== 'file') continue;
    if (a.type === 'quasi-identifying') arxFields.push(`qi=${a.name}=${a.hierarchy.path}`);
    else if (a.type === 'sensitive') arxFields.push(`sa=${a.name}`, `sah=${a.hierarchy.path}`);
  }
  return { name: 'adult', spec, arxFields, configs };
}

async function registryDataset(rows: number, scratch: string[]): Promise<Dataset> {
  const { dir, spec: file } = await registrySample(rows, { rideAlong: RIDE_ALONG });
  scratch.push(dir);
  const spec = loadSpec(file);
  // ARX gets ppdp's builders' hierarchies as files, written by `ppdp hierarchy`.
  const hierarchies = join(dir, 'hierarchies');
  writeArxHierarchies(file, hierarchies);
  const arxFields = [`data=${join(dir, 'registry.csv')}`, `delim=${spec.format?.delimiter ?? ','}`];
  for (const a of spec.attributes) {
    if (a.type === 'quasi-identifying') arxFields.push(`qi=${a.name}=${join(hierarchies, `${a.name}.csv`)}`);
    else if (a.type === 'sensitive') arxFields.push(`sa=${a.name}`);
    else if (a.type === 'identifying') arxFields.push(`ident=${a.name}`);
  }
  const name = `registry ${rows.toLocaleString('en-US')}${RIDE_ALONG ? ' + ride-along' : ''}`;
  const configs: Config[] = [];
  const k5 = { model: 'k-anonymity', k: 5 } as PrivacyModelSpec;
  // With the ride-along columns: the spec's k = 5 and 2 %, under each metric (discernibility's
  // nodes must agree with ARX's), ppdp as its whole CLI.
  if (RIDE_ALONG) {
    for (const metric of ['discernibility', 'ncp'] as const)
      configs.push({
        dataset: name,
        name: 'k=5',
        privacy: [k5],
        maxSuppression: 0.02,
        metric,
        exhaustive: false,
      });
    return { name, spec, arxFields, configs };
  }
  // Past 10^5 rows only the spec's 2 % (ARX takes seconds a run there).
  for (const metric of METRICS)
    for (const maxSuppression of rows > 100_000 ? [0.02] : [0, 0.02])
      configs.push({
        dataset: name,
        name: 'k=5',
        privacy: [k5],
        maxSuppression,
        metric,
        exhaustive: rows <= 100_000,
      });
  if (rows <= 100_000)
    configs.push({
      dataset: name,
      name: 'k=5 + distinct l=3',
      privacy: [k5, { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 3 } as PrivacyModelSpec],
      maxSuppression: 0.02,
      metric: 'ncp',
      exhaustive: rows <= 100_000,
    });
  return { name, spec, arxFields, configs };
}

// ---- measuring ----

/** Exhaustive search's node (every node evaluated): the optimum a configuration must reach. */
function exhaustiveNode(prepared: ReturnType<typeof prepareGeneralization>): Record<string, number> {
  const evaluator = openSearch(prepared, wasmGroupingKernel);
  const { best } = exhaustiveSearch(evaluator);
  evaluator.dispose();
  return Object.fromEntries(prepared.qis.map((q, i) => [q.name, best.levels[i]!]));
}

function parseNode(text: string): Record<string, number> | null {
  if (text === 'none') return null;
  return Object.fromEntries(
    text
      .split(',')
      .map((kv) => [kv.slice(0, kv.lastIndexOf('=')), Number(kv.slice(kv.lastIndexOf('=') + 1))]),
  );
}

const sameNode = (a: Record<string, number> | null, b: Record<string, number> | null) =>
  a !== null &&
  b !== null &&
  Object.keys(a).length === Object.keys(b).length &&
  Object.entries(a).every(([q, l]) => b[q] === l);

/** One timed ARX run, as ArxRun answers `run`. */
interface ArxRunResult {
  readonly ms: number;
  readonly node: Record<string, number> | null;
  readonly checked: number;
  readonly lattice: string;
}

async function arxRun(arx: ReturnType<typeof startArx>): Promise<ArxRunResult> {
  const [, ms, node, checked, lattice] = (await arx.ask('run')).split('\t');
  return { ms: Number(ms), node: parseNode(node!), checked: Number(checked), lattice: lattice! };
}

/** A result's configuration fields. */
function configurationFields(c: Config) {
  return {
    dataset: c.dataset,
    configuration: c.name,
    maxSuppression: c.maxSuppression,
    metric: c.metric,
    arxMetric: c.metric === 'discernibility' ? 'discernibility' : 'loss (gs 0.5, arithmetic mean)',
  };
}

/** ARX's side of a result: the median and samples, and the last run's node, checks and lattice. */
function arxSummary(runs: readonly ArxRunResult[]) {
  const last = runs.at(-1)!;
  return {
    medianMs: round(median(runs.map((r) => r.ms))),
    samplesMs: runs.map((r) => round(r.ms)),
    nodesChecked: last.checked,
    latticeSize: Number(last.lattice),
    node: last.node,
  };
}

async function measure(
  dataset: Dataset,
  input: ReturnType<typeof readInput>,
  c: Config,
  arx: ReturnType<typeof startArx>,
) {
  const spec = {
    ...dataset.spec,
    privacy: c.privacy,
    method: { ...dataset.spec.method, maxSuppression: c.maxSuppression, metric: c.metric },
  } as ReleaseSpec;
  const ppdpOnce = () => {
    let hierarchiesMs = 0;
    const t0 = performance.now();
    const prepared = prepareGeneralization(spec, input, wasmGroupingKernel, (phase, work) => {
      if (phase !== 'hierarchies') return work();
      const h0 = performance.now();
      const r = work();
      hierarchiesMs = performance.now() - h0;
      return r;
    });
    const t1 = performance.now();
    const outcome = search(prepared, wasmGroupingKernel);
    const t2 = performance.now();
    outcome.evaluator.dispose(); // as the release does once its report is made
    return { prepared, outcome, hierarchiesMs, prepareMs: t1 - t0, searchMs: t2 - t1 };
  };
  await arx.ask(['config', ...dataset.arxFields, ...arxModelFields(c)].join('\t'));
  const ppdp: ReturnType<typeof ppdpOnce>[] = [];
  const arxRuns: ArxRunResult[] = [];
  for (let i = 0; i < WARMUP + RUNS; i++) {
    const p = ppdpOnce();
    const a = await arxRun(arx);
    if (i < WARMUP) continue;
    ppdp.push(p);
    arxRuns.push(a);
  }
  const last = ppdp.at(-1)!;
  const node = Object.fromEntries(last.prepared.qis.map((q, i) => [q.name, last.outcome.best.levels[i]!]));
  const optimum = c.golden ?? (c.exhaustive ? exhaustiveNode(last.prepared) : undefined);
  const ppdpMs = median(ppdp.map((s) => s.prepareMs + s.searchMs));
  const arxMs = median(arxRuns.map((r) => r.ms));
  const arxNode = arxRuns.at(-1)!.node;
  return {
    ...configurationFields(c),
    ppdp: {
      medianMs: round(ppdpMs),
      hierarchiesMs: round(median(ppdp.map((s) => s.hierarchiesMs))),
      prepareMs: round(median(ppdp.map((s) => s.prepareMs))),
      searchMs: round(median(ppdp.map((s) => s.searchMs))),
      samplesMs: ppdp.map((s) => round(s.prepareMs + s.searchMs)),
      nodesChecked: last.outcome.nodesChecked,
      node,
      optimal: optimum ? sameNode(node, optimum) : null,
      optimumFrom: c.golden ? 'golden table' : optimum ? 'exhaustive search, this run' : 'not checked',
    },
    arx: arxSummary(arxRuns),
    ratio: round(arxMs / ppdpMs, 2),
    sameNode: sameNode(node, arxNode),
    nodesMustAgree: c.metric === 'discernibility',
  };
}

/**
 * ppdp's whole CLI (a fresh process: read, search, write, verify) against ARX's anonymize()
 * alone, interleaved run by run; ppdp's node from its report.
 */
async function measureCli(dataset: Dataset, c: Config, arx: ReturnType<typeof startArx>) {
  const base = JSON.parse(readFileSync(dataset.spec.file, 'utf8'));
  const specFile = join(resolve(dataset.spec.file, '..'), `release-${c.metric}.json`);
  writeFileSync(
    specFile,
    JSON.stringify({
      ...base,
      privacy: c.privacy,
      method: { ...base.method, maxSuppression: c.maxSuppression, metric: c.metric },
    }),
  );
  const tmp = mkdtempSync(join(os.tmpdir(), 'ppdp-arx-cli-'));
  const ppdpOnce = (i: number) => {
    const { ms, report } = timedRelease(specFile, join(tmp, `run-${i}`));
    const g = report.generalization as { node: Record<string, number>; nodesChecked: number };
    return { ms, node: g.node, nodesChecked: g.nodesChecked, timings: report.timings };
  };
  await arx.ask(['config', ...dataset.arxFields, ...arxModelFields(c)].join('\t'));
  const ppdp: ReturnType<typeof ppdpOnce>[] = [];
  const arxRuns: ArxRunResult[] = [];
  try {
    for (let i = 0; i < WARMUP + RUNS; i++) {
      const p = ppdpOnce(i);
      const a = await arxRun(arx);
      if (i < WARMUP) continue;
      ppdp.push(p);
      arxRuns.push(a);
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const last = ppdp.at(-1)!;
  const ppdpMs = median(ppdp.map((s) => s.ms));
  const arxMs = median(arxRuns.map((r) => r.ms));
  const arxNode = arxRuns.at(-1)!.node;
  const nodesAgree = ppdp.every((p) => sameNode(p.node, last.node));
  return {
    ...configurationFields(c),
    ppdp: {
      medianMs: round(ppdpMs),
      hierarchiesMs: round(median(ppdp.map((s) => s.timings.hierarchies ?? 0))),
      searchMs: round(median(ppdp.map((s) => s.timings.search ?? 0))),
      samplesMs: ppdp.map((s) => round(s.ms)),
      /** The last run's report timings (ms per state or phase). */
      timings: last.timings,
      nodesChecked: last.nodesChecked,
      node: last.node,
      sameNodeEveryRun: nodesAgree,
      optimal: null,
      optimumFrom: c.metric === 'discernibility' ? "ARX's node (the metric is defined alike)" : 'not checked',
    },
    arx: arxSummary(arxRuns),
    ratio: round(arxMs / ppdpMs, 2),
    sameNode: sameNode(last.node, arxNode),
    nodesMustAgree: c.metric === 'discernibility',
  };
}

// ---- the run ----

const machine = machineInfo();
say(
  `ppdp vs ARX 3.9.2, both measured here, interleaved run by run — ${WARMUP} warm-ups + ${RUNS} runs per configuration; load average ${machine.loadAverage.join(' ')} on ${machine.cores} cores`,
);
// Kept beside the figures: what the host itself gives (the ratio is of one host; the times are not).
const speed = await hostSpeed();
say(hostSpeedLine(speed));
const scratch: string[] = [];
const arx = startArx();
type Result = Awaited<ReturnType<typeof measure>> | Awaited<ReturnType<typeof measureCli>>;
const results: Result[] = [];
try {
  const datasets: (() => Promise<Dataset>)[] = [
    ...(RIDE_ALONG ? [] : [async () => adultDataset()]),
    ...REGISTRY_SIZES.map((rows) => () => registryDataset(rows, scratch)),
  ];
  for (const make of datasets) {
    const dataset = await make();
    // With --ride-along ppdp reads the input in its own process, each run.
    const input = RIDE_ALONG ? undefined : readInput(dataset.spec);
    say(`\n${dataset.name}${input ? `: ${input.rowCount.toLocaleString('en-US')} rows` : ''}`);
    for (const c of dataset.configs) {
      if (SUPPRESSION_FILTER && !SUPPRESSION_FILTER.has(c.maxSuppression)) continue;
      const r = input ? await measure(dataset, input, c, arx) : await measureCli(dataset, c, arx);
      results.push(r);
      say(
        `  ${c.name}, ${c.maxSuppression * 100} %, ${c.metric}: ppdp ${r.ppdp.medianMs} ms, ARX ${r.arx.medianMs} ms, ` +
          `ratio ${r.ratio}, same node ${r.sameNode ? 'yes' : 'NO'}, ppdp optimal ${r.ppdp.optimal ?? '-'}`,
      );
    }
  }
} finally {
  arx.stop();
  for (const dir of scratch) rmSync(dir, { recursive: true, force: true });
}

say(
  `\n${table(
    [
      'dataset',
      'configuration',
      'supp.',
      'metric',
      'ppdp ms',
      'of it hierarchies',
      'ARX ms',
      'ARX/ppdp',
      'ppdp nodes',
      'ARX nodes',
      'same node',
      'ppdp optimal',
    ],
    results.map((r) => [
      r.dataset,
      r.configuration,
      String(r.maxSuppression),
      r.metric,
      r.ppdp.medianMs.toFixed(1),
      r.ppdp.hierarchiesMs.toFixed(1),
      r.arx.medianMs.toFixed(1),
      `${r.ratio}×`,
      String(r.ppdp.nodesChecked),
      String(r.arx.nodesChecked),
      r.sameNode ? 'yes' : r.nodesMustAgree ? 'NO' : 'no (other metric)',
      r.ppdp.optimal === null ? '-' : r.ppdp.optimal ? 'yes' : 'NO',
    ]),
    2,
  )}`,
);
const ratios = results.map((r) => r.ratio);
say(
  `ARX / ppdp: min ${Math.min(...ratios)}×, median ${round(median(ratios), 2)}×, max ${Math.max(...ratios)}× over ${results.length} configurations`,
);

// ppdp alone, cold: a fresh node process for each run (ARX's cold start is not measured).
const cli: number[] = [];
if (CLI_RUNS > 0 && !RIDE_ALONG) {
  const tmp = mkdtempSync(join(os.tmpdir(), 'ppdp-arx-'));
  try {
    for (let i = 0; i <= CLI_RUNS; i++) {
      const { ms } = timedRelease(ADULT_SPEC, join(tmp, `run-${i}`));
      if (i > 0) cli.push(ms); // the first run only warms the file cache
    }
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  say(
    `ppdp alone, cold release of examples/adult (process start to verified release on disk): median ${round(median(cli))} ms ` +
      `of ${cli.length} (${cli.map((x) => Math.round(x)).join(', ')})`,
  );
}

const out = new URL(`./results/${OUT}`, import.meta.url);
writeFileSync(
  out,
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      machine: { ...machine, hostSpeed: speed, loadAverageAtEnd: os.loadavg().map((x) => round(x, 2)) },
      arx: {
        version: '3.9.2',
        measuredHere: true,
        how: 'one JVM (bench/arx/ArxRun.java), warm; each run one ARXAnonymizer.anonymize() on data already read; optimal Flash (heuristic search threshold at its maximum)',
      },
      warmup: WARMUP,
      runs: RUNS,
      ...(RIDE_ALONG
        ? {
            rideAlong: {
              columns: [...RIDE_ALONG_COLUMNS],
              arx: 'insensitive',
              ppdp: 'insensitive (released unchanged)',
            },
          }
        : {}),
      suppressionLimits: SUPPRESSION_FILTER ? [...SUPPRESSION_FILTER] : 'all',
      timed: {
        ppdp: RIDE_ALONG
          ? 'the whole CLI, a fresh process each run: spawn to exit of node bin/ppdp.mjs release <spec> --out <tmp> --quiet (read, search, write, verify, publish); median of the runs'
          : 'prepareGeneralization (hierarchies, models, rows collapsed to distinct tuples; input already read) + search; median of the runs',
        arx: 'ARXAnonymizer.anonymize(data, config) in a warm JVM; median of the runs',
        ratio: 'ARX median / ppdp median (above 1: ppdp faster)',
        interleaving: 'per configuration the runs alternate ppdp, ARX, ppdp, ARX, …',
        cliMs:
          'ppdp alone: spawn to exit of node bin/ppdp.mjs release examples/adult/release.json --out <tmp> --quiet',
      },
      results,
      cli:
        cli.length > 0
          ? { tool: 'ppdp only', medianMs: round(median(cli)), samplesMs: cli.map((x) => round(x)) }
          : null,
    },
    null,
    2,
  )}\n`,
);
say(`written ${out.pathname}`);

function round(x: number, digits = 1): number {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
}
