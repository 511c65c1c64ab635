/**
 * (ε, δ)-differential privacy by sampling and generalization, ppdp against ARX 3.9.2 (a script,
 * not a test): Adult and a larger public table, Fertility (254,654 rows of the 1980 US Census,
 * bench/fertility.ts; or Adult resampled to any size, bench/adult-sample.ts), the same
 * hierarchies, a few ε at δ = 1e-5, each with the node fixed in advance and with the private
 * search (a share of ε over a number of steps), repeated with fresh secret randomness in both
 * tools (`--seeds` repetitions: neither takes a seed). ARX runs as one long-lived JVM
 * (bench/arx/DpBench.java, compiled into build/dp-harness); ppdp runs in this process; the two
 * alternate run by run so that load on the machine falls on both alike.
 *
 * Compared: the Loss of the release over every input row (ARX's Loss with gs-factor 0.5 and the
 * arithmetic mean: a released cell costs its label's share of the hierarchy's rows at the chosen
 * level, a cell of a row not released costs 1), its mean and standard deviation over the
 * repetitions, and the time of one release, wall-clock and CPU (the machine is shared: under
 * load the CPU time is the steadier figure). CPU is counted two ways on each side, both stated:
 * the thread that releases (ppdp's main thread, from Linux's /proc/thread-self/schedstat; ARX's
 * calling thread, ThreadMXBean), and the whole process (ppdp's every thread, process.cpuUsage():
 * V8's parallel scavenger, concurrent marking and compiler threads too; ARX's every thread of
 * the JVM, each thread's own clock summed: its collector's and JIT compilers' too). Each tool's
 * release runs on its one thread (ppdp's starts no worker); the other threads are its runtime's.
 * `cpuMs` is ppdp's process against ARX's thread, the figure of earlier results. Both sides
 * start from the input already read (ARX's Data, ppdp's EncodedTable and its digest, made once
 * per table) and time, like for like, medians over the repetitions of:
 *
 *   - the release in memory (the headline): ARX's `anonymize()` (its derivation of β and k, its
 *     encoding of the data and hierarchies, the sample, the search if any, the suppression) and
 *     `getOutput()` (the released table, which ARX builds after `anonymize()`); ppdp's derivation of β and k
 *     plus its build up to the released columns (sample, hierarchies, encoding, search,
 *     suppression, report, the generalized and shuffled columns), without the files;
 *   - up to the node and its suppression: ARX's `anonymize()` alone; ppdp's the same less the
 *     released columns (its `apply` phase);
 *   - ppdp's whole build, the Arrow and CSV files written (its `write` phase) as well, which
 *     ARX never makes: shown so that nothing is left out.
 *
 * ppdp's derivation is `derive()` timed warm once per configuration (the median of nine calls
 * after as many as the configuration's warm-up runs, in each of which ARX derives) and added to
 * each run: the build itself reads derived pairs from memory, ARX derives them on every call. Both sides are the same input rows and hierarchies, every column but the
 * quasi-identifiers insensitive; each warms up (both JITs) before the timed runs. ARX holds its
 * hierarchies parsed (read once, with the data); ppdp reads each hierarchy file on every run and
 * keeps what the file's text makes with the column's dictionary (as any process releasing more
 * than once does), counting against its sample's rows on every run.
 *
 * Writes bench/results/dp.json (or `--out`). Run: `npm run bench:dp` (`-- --help` for the options). Needs
 * java and javac 17 and ARX's jars (`--arx-lib <dir>`, or $ARX_LIB).
 */

import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, openSync, readFileSync, readSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { dpSplit } from '../src/catalogue/differential-privacy.ts';
import { derive, dpParameters } from '../src/catalogue/dp-parameters.ts';
import { tableDigest } from '../src/data/digest.ts';
import type { EncodedTable, OutputColumn } from '../src/data/table.ts';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { buildGeneralization } from '../src/methods/generalization/index.ts';
import { readInput, streams } from '../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../src/release-spec/spec.ts';
import { ADULT, ADULT_DP_LEVELS, sampled } from './adult-sample.ts';
import { type ArxHarness, startArxHarness } from './arx-harness.ts';
import { FERTILITY_DP_LEVELS, unpackFertility } from './fertility.ts';
import { machineInfo, median, table } from './scale.ts';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const HELP = `Usage: npm run bench:dp [-- options]
  --seeds N         repetitions per configuration and tool (default 30)
  --epsilons LIST   ε values, comma-separated (default 0.5,1,2)
  --delta D         δ (default 1e-5)
  --share S         the search's share of ε (default 0.1)
  --steps N         the search's steps (default 20)
  --tables LIST     adult, fertility (a larger public table: 254,654 rows of the 1980 US
                    Census) and adult-shaped (Adult resampled to --rows rows), comma-separated
                    (default adult,fertility)
  --rows N          rows of the Adult-shaped table (default 100000)
  --modes LIST      fixed, search or both, comma-separated (default fixed,search)
  --arx-lib DIR     the folder of ARX 3.9.2's jars (default: $ARX_LIB)
  --isolate         each (ε, node) pair in its own processes (a fresh node and a fresh JVM), both
                    tables in each, the results gathered into one file: no configuration runs in a
                    heap or a JIT state that another left behind
  --out FILE        where the results go (default bench/results/dp.json)
`;
const { values } = parseArgs({
  options: {
    seeds: { type: 'string', default: '30' },
    epsilons: { type: 'string', default: '0.5,1,2' },
    delta: { type: 'string', default: '1e-5' },
    share: { type: 'string', default: '0.1' },
    steps: { type: 'string', default: '20' },
    tables: { type: 'string', default: 'adult,fertility' },
    rows: { type: 'string', default: '100000' },
    modes: { type: 'string', default: 'fixed,search' },
    'arx-lib': { type: 'string', default: process.env.ARX_LIB ?? '' },
    out: { type: 'string', default: join(ROOT, 'bench/results/dp.json') },
    isolate: { type: 'boolean', default: false },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

/** A table both tools release: its CSV (`;`-separated), a hierarchy file per QI, the node the fixed mode takes. */
interface BenchTable {
  readonly name: string;
  readonly dir: string;
  readonly csv: string;
  /** The release spec the benchmark's are made from (its QIs, their hierarchies, the input). */
  readonly spec: string;
  readonly hierarchy: (qi: string) => string;
  readonly levels: Readonly<Record<string, number>>;
  /** Files besides the CSV and the QIs' hierarchies that the spec names. */
  readonly extra: readonly string[];
}

const TABLE_NAMES = ['adult', 'fertility', 'adult-shaped'] as const;
const tableNames = values.tables.split(',');
for (const t of tableNames)
  if (!(TABLE_NAMES as readonly string[]).includes(t))
    throw new Error(`--tables names ${t}: the tables are ${TABLE_NAMES.join(', ')}`);

/** Adult's shape: the example's files (or a resampled copy's), occupation insensitive. */
function adultTable(name: string, dir: string): BenchTable {
  return {
    name,
    dir,
    csv: 'adult.csv',
    spec: join(ADULT, 'release.json'),
    hierarchy: (q) => `adult_hierarchy_${q}.csv`,
    levels: ADULT_DP_LEVELS,
    extra: ['adult_hierarchy_occupation.csv'],
  };
}

/** The tables `--tables` names, in its order, each in a folder (Fertility's unpacked under `work`). */
async function benchTables(work: string): Promise<BenchTable[]> {
  const out: BenchTable[] = [];
  for (const t of tableNames) {
    if (t === 'adult') out.push(adultTable('adult', ADULT));
    if (t === 'adult-shaped')
      out.push(adultTable(`adult-shaped ${values.rows}`, (await sampled(Number(values.rows))).dir));
    if (t === 'fertility') {
      const dir = unpackFertility(join(work, 'fertility-data'));
      out.push({
        name: 'fertility',
        dir,
        csv: 'fertility.csv',
        spec: join(dir, 'release.json'),
        hierarchy: (q) => `hierarchy_${q}.csv`,
        levels: FERTILITY_DP_LEVELS,
        extra: [],
      });
    }
  }
  return out;
}

const seeds = Number(values.seeds);
/**
 * Runs per configuration and tool before the timed ones; more before the first configuration,
 * where V8's optimizing compiler had not yet reached ppdp's build with five.
 */
const WARM_UPS = 5;
const FIRST_WARM_UPS = 30;
/** Timed calls of the derivation per configuration, after its warm-up calls (their median is charged to every run). */
const DERIVATIONS_TIMED = 9;
const epsilons = values.epsilons.split(',').map(Number);
const delta = Number(values.delta);
const share = Number(values.share);
const steps = Number(values.steps);
const modes = (['fixed', 'search'] as const).filter((m) => values.modes.split(',').includes(m));
if (modes.length === 0) throw new Error(`--modes names neither fixed nor search: ${values.modes}`);

/** Wall-clock and CPU time, ms. */
interface Timing {
  readonly ms: number;
  /** ppdp's process (every thread); ARX's calling thread. */
  readonly cpuMs: number;
  /** The releasing thread alone: ppdp's main thread (absent off Linux); ARX's calling thread. */
  readonly threadCpuMs?: number;
  /** The whole process, every thread: ppdp's (= `cpuMs`); ARX's JVM (absent off HotSpot). */
  readonly processCpuMs?: number;
}

/** One release; its own `ms` and `cpuMs` are the release in memory (ARX: anonymize() and getOutput()). */
interface Run extends Timing {
  /** Up to the node and its suppression (ARX: anonymize() alone). */
  readonly anonymize: Timing;
  /** ppdp: the whole build, its Arrow and CSV files written. */
  readonly withFiles?: Timing;
  /** ppdp: wall-clock and CPU per phase of its build (`write` is the Arrow and CSV files, which ARX does not make). */
  readonly phases?: Record<string, number>;
  readonly phasesCpu?: Record<string, number>;
  readonly phasesThreadCpu?: Record<string, number>;
  readonly loss: number;
  readonly released: number;
  readonly sampled: number;
  readonly node: string;
}

// ---- ARX: the long-lived JVM ----

function startArx(): ArxHarness {
  // DpBench reads the JVM's internal threads' CPU times (its process CPU) through HotSpot's own bean.
  return startArxHarness(values['arx-lib'], 'DpBench', '4g', [
    '--add-exports',
    'java.management/sun.management=ALL-UNNAMED',
  ]);
}

// ---- ppdp ----

/** Per QI, label → rows of its hierarchy under it at each level, and the hierarchy's rows. */
function hierarchyShares(t: BenchTable): Map<string, { under: Map<string, number>[]; rows: number }> {
  return new Map(
    Object.keys(t.levels).map((q) => {
      const rows = readFileSync(join(t.dir, t.hierarchy(q)), 'utf8')
        .split(/\r?\n/)
        .filter((l) => l !== '')
        .map((l) => l.split(';'));
      const under = rows[0]!.map((_, l) => {
        const m = new Map<string, number>();
        for (const r of rows) m.set(r[l]!, (m.get(r[l]!) ?? 0) + 1);
        return m;
      });
      return [q, { under, rows: rows.length }];
    }),
  );
}

/**
 * The Loss over every input row of a release whose released columns (`columns`, what its files
 * encode, as ARX's is taken from its output in memory) hold the QIs at `node`, summed row by
 * row from each QI's codes. Nothing is parsed: reading the files back (the CSV file's cells as
 * strings, or the Arrow file) in the same process as ppdp's timed runs was seen to raise their
 * process CPU at 10^5 rows.
 */
function releaseLoss(
  columns: readonly OutputColumn[],
  node: Readonly<Record<string, number>>,
  shares: ReturnType<typeof hierarchyShares>,
  inputRows: number,
): { loss: number; released: number } {
  let rows = -1;
  let loss = 0;
  for (const [q, h] of shares) {
    const column = columns.find((c) => c.name === q);
    if (column?.kind !== 'dictionary') throw new Error(`the release has no dictionary column ${q}`);
    const { codes, dictionary } = column;
    rows = codes.length;
    const under = h.under[node[q]!]!;
    // Per label, its share of the hierarchy's rows (NaN: not a label of the hierarchy's level).
    const share = Float64Array.from(dictionary, (label) => (under.get(label) ?? Number.NaN) / h.rows);
    let sum = inputRows - rows;
    for (let r = 0; r < rows; r++) {
      const cell = share[codes[r]!]!;
      if (Number.isNaN(cell)) throw new Error(`a released label of ${q} is not in its hierarchy`);
      sum += cell;
    }
    const least = inputRows / h.rows;
    loss += (inputRows > least ? Math.max(0, (sum - least) / (inputRows - least)) : 0) / shares.size;
  }
  return { loss, released: rows };
}

function specFor(t: BenchTable, dir: string, model: Record<string, unknown>): ReleaseSpec {
  const spec = JSON.parse(readFileSync(t.spec, 'utf8'));
  spec.privacy = [model];
  // As ARX's side holds it (DpBench.java): every column but the QIs insensitive, so that
  // neither side measures disclosure of a sensitive column it was not asked for.
  for (const [name, a] of Object.entries(spec.attributes as Record<string, { type: string }>))
    if (a.type !== 'quasi-identifying') spec.attributes[name] = { type: 'insensitive' };
  spec.method = { name: 'generalization', metric: 'loss', maxSuppression: 1, suppressed: 'remove' };
  const file = join(dir, `dp-${Object.keys(model).join('-')}.json`);
  writeFileSync(file, JSON.stringify(spec));
  return loadSpec(file);
}

/** The main thread's schedstat, opened once (on the main thread: /proc/thread-self names the opener), or -1 off Linux. */
const schedstat = (() => {
  try {
    return openSync('/proc/thread-self/schedstat', 'r');
  } catch {
    return -1;
  }
})();
const schedstatBytes = Buffer.alloc(64);

/**
 * CPU time so far, ms: the process's (every thread) and the main thread's (schedstat's first
 * field, ns on CPU; undefined off Linux). The kernel brings a running thread's schedstat up to
 * date only at a tick (4 ms steps here) or a switch, but getrusage() (process.cpuUsage())
 * brings the caller's up to date first: read after it, the thread's time is exact to a few µs.
 * One reading costs about 3 µs (the file held open, read again from offset 0).
 */
function cpuNow(): { process: number; thread: number | undefined } {
  const c = process.cpuUsage();
  const processMs = (c.user + c.system) / 1000;
  if (schedstat < 0) return { process: processMs, thread: undefined };
  const n = readSync(schedstat, schedstatBytes, 0, schedstatBytes.length, 0);
  let ns = 0;
  for (let i = 0; i < n && schedstatBytes[i]! >= 0x30 && schedstatBytes[i]! <= 0x39; i++)
    ns = ns * 10 + schedstatBytes[i]! - 0x30;
  return { process: processMs, thread: ns / 1e6 };
}

/** The CPU time from `from` to now, as Timing's fields (ppdp: `cpuMs` is the process's). */
function cpuSince(from: ReturnType<typeof cpuNow>): {
  cpuMs: number;
  threadCpuMs?: number;
  processCpuMs: number;
} {
  const to = cpuNow();
  const cpuMs = to.process - from.process;
  return to.thread === undefined || from.thread === undefined
    ? { cpuMs, processCpuMs: cpuMs }
    : { cpuMs, threadCpuMs: to.thread - from.thread, processCpuMs: cpuMs };
}

function ppdpRun(
  spec: ReleaseSpec,
  input: EncodedTable,
  digest: Uint8Array,
  shares: ReturnType<typeof hierarchyShares>,
  derivation: Timing,
): Run {
  const phases: Record<string, number> = {};
  const phasesCpu: Record<string, number> = {};
  const phasesThreadCpu: Record<string, number> = {};
  let columns: OutputColumn[] | undefined;
  const c0 = cpuNow();
  const t0 = performance.now();
  const built = buildGeneralization({
    spec,
    table: input,
    kernel: wasmGroupingKernel,
    time: (phase, work) => {
      const p0 = performance.now();
      const pc0 = cpuNow();
      const result = work();
      phases[phase] = (phases[phase] ?? 0) + performance.now() - p0;
      const pc = cpuSince(pc0);
      phasesCpu[phase] = (phasesCpu[phase] ?? 0) + pc.cpuMs;
      if (pc.threadCpuMs !== undefined)
        phasesThreadCpu[phase] = (phasesThreadCpu[phase] ?? 0) + pc.threadCpuMs;
      // The released columns, what the files encode: the Loss is taken from them (releaseLoss).
      if (phase === 'apply') columns = result as OutputColumn[];
      return result;
    },
    say: () => {},
    random: streams(spec, input, digest),
  });
  const ms = performance.now() - t0;
  const cpu = cpuSince(c0);
  const withFiles = plus({ ms, ...cpu }, derivation);
  const sumOf = (times: Record<string, number>, names: string[]) =>
    names.reduce((s, n) => s + (times[n] ?? 0), 0);
  const less = (t: Timing, ...names: string[]): Timing => ({
    ms: t.ms - sumOf(phases, names),
    cpuMs: t.cpuMs - sumOf(phasesCpu, names),
    processCpuMs: t.cpuMs - sumOf(phasesCpu, names),
    ...(t.threadCpuMs === undefined ? {} : { threadCpuMs: t.threadCpuMs - sumOf(phasesThreadCpu, names) }),
  });
  const released = less(withFiles, 'write');
  const anonymize = less(withFiles, 'write', 'apply');
  const claims = built.claims as { node: Record<string, number>; dp: { sampledRows: number } };
  if (!columns) throw new Error('the build had no apply phase');
  const { loss, released: releasedRows } = releaseLoss(columns, claims.node, shares, input.rowCount);
  const node = Object.entries(claims.node)
    .map(([q, l]) => `${q}=${l}`)
    .join(',');
  return {
    ...released,
    anonymize,
    withFiles,
    phases,
    phasesCpu,
    phasesThreadCpu,
    loss,
    released: releasedRows,
    sampled: claims.dp.sampledRows,
    node,
  };
}

/** Two timings' sum, field by field (a field absent from either is absent). */
function plus(a: Timing, b: Timing): Timing {
  const both = (x: number | undefined, y: number | undefined) =>
    x === undefined || y === undefined ? undefined : x + y;
  const threadCpuMs = both(a.threadCpuMs, b.threadCpuMs);
  const processCpuMs = both(a.processCpuMs, b.processCpuMs);
  return {
    ms: a.ms + b.ms,
    cpuMs: a.cpuMs + b.cpuMs,
    ...(threadCpuMs === undefined ? {} : { threadCpuMs }),
    ...(processCpuMs === undefined ? {} : { processCpuMs }),
  };
}

// ---- the runs ----

const fixed = (x: number | null) => (x === null ? '-' : x.toFixed(0));
const times = (x: number | null) => (x === null ? '-' : `×${x.toFixed(1)}`);
const mean = (xs: readonly number[]) => xs.reduce((s, x) => s + x, 0) / xs.length;
const sd = (xs: readonly number[]) => {
  const m = mean(xs);
  return Math.sqrt(xs.reduce((s, x) => s + (x - m) ** 2, 0) / Math.max(1, xs.length - 1));
};

interface Result {
  table: string;
  rows: number;
  epsilon: number;
  delta: number;
  mode: 'fixed' | 'search';
  searchShare?: number;
  steps?: number;
  beta: number;
  k: number;
  /** Medians: `msMedian`, `cpuMsMedian` the release in memory, `anonymize` up to the node, `withFiles` ppdp's files written too. */
  ppdp: Summary & { derivation: Timing; withFiles: Timing };
  arx: Summary & { beta: number; k: number };
  lossDifference: number;
  /** ARX's median over ppdp's, the release in memory, wall-clock and CPU time (`cpuSpeedup`: ARX's thread over ppdp's process). */
  speedup: number;
  cpuSpeedup: number;
  /** Like for like, the release in memory: ARX's calling thread over ppdp's main thread (null off Linux). */
  threadCpuSpeedup: number | null;
  /** Like for like, the release in memory: ARX's whole JVM over ppdp's whole process (null off HotSpot). */
  processCpuSpeedup: number | null;
  /** ARX's anonymize() over ppdp's build up to the node and its suppression, CPU time. */
  anonymizeCpuSpeedup: number;
  /** ARX's release in memory over ppdp's build with its files written, CPU time. */
  withFilesCpuSpeedup: number;
}

interface Summary {
  lossMean: number;
  lossSd: number;
  msMedian: number;
  cpuMsMedian: number;
  /** The releasing thread's and the whole process's CPU (null where not measured). */
  threadCpuMsMedian: number | null;
  processCpuMsMedian: number | null;
  anonymize: Timing;
  runs: Run[];
}

function summary(runs: Run[]): Summary {
  const all = medians(runs);
  return {
    lossMean: mean(runs.map((x) => x.loss)),
    lossSd: sd(runs.map((x) => x.loss)),
    msMedian: all.ms,
    cpuMsMedian: all.cpuMs,
    threadCpuMsMedian: all.threadCpuMs ?? null,
    processCpuMsMedian: all.processCpuMs ?? null,
    anonymize: medians(runs.map((x) => x.anonymize)),
    runs,
  };
}

/** The median of each field; a field missing (or NaN) from any run is left out. */
function medians(ts: readonly Timing[]): Timing {
  const of = (field: 'threadCpuMs' | 'processCpuMs') => {
    const xs = ts.map((t) => t[field]);
    return xs.every((x): x is number => x !== undefined && !Number.isNaN(x)) ? { [field]: median(xs) } : {};
  };
  return {
    ms: median(ts.map((t) => t.ms)),
    cpuMs: median(ts.map((t) => t.cpuMs)),
    ...of('threadCpuMs'),
    ...of('processCpuMs'),
  };
}

/** ARX's figure over ppdp's, or null where either is missing. */
const ratio = (arx: number | null | undefined, ppdp: number | null | undefined) =>
  arx == null || ppdp == null ? null : arx / ppdp;

/**
 * Each (ε, node) pair in a child run of this script (its own node process and JVM), one after
 * another, their results gathered in order: ε, then the node, then the table, as one run has them.
 */
function isolated(): void {
  const uptimeBefore = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  console.log(`load before: ${uptimeBefore}`);
  const results: Result[] = [];
  const work = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-dp-isolated-'));
  try {
    for (const epsilon of epsilons) {
      for (const mode of modes) {
        const out = join(work, `${epsilon}-${mode}.json`);
        const args = [
          ...process.execArgv,
          new URL(import.meta.url).pathname,
          ...['--seeds', values.seeds, '--epsilons', String(epsilon), '--modes', mode],
          ...['--delta', values.delta, '--share', values.share, '--steps', values.steps],
          ...['--tables', values.tables, '--rows', values.rows, '--arx-lib', values['arx-lib'], '--out', out],
        ];
        console.log(`ε = ${epsilon}, ${mode}: its own processes`);
        const child = spawnSync(process.execPath, args, { stdio: ['ignore', 'inherit', 'inherit'] });
        if (child.status !== 0)
          throw new Error(`the run of ε = ${epsilon}, ${mode} failed (exit ${child.status})`);
        results.push(...(JSON.parse(readFileSync(out, 'utf8')) as { results: Result[] }).results);
        save(results, uptimeBefore, 'partial');
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  finish(results, uptimeBefore);
}

async function main(): Promise<void> {
  const uptimeBefore = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  console.log(`load before: ${uptimeBefore}`);
  const arx = startArx();
  const results: Result[] = [];
  const work = join(os.tmpdir(), `ppdp-bench-dp-${process.pid}`);
  mkdirSync(work, { recursive: true });
  try {
    for (const t of await benchTables(work)) {
      const qis = Object.keys(t.levels);
      const qiFields = qis.map((q) => `qi=${q}=${join(t.dir, t.hierarchy(q))}`);
      await arx.ask(['data', `file=${join(t.dir, t.csv)}`, 'delim=;', ...qiFields].join('\t'));
      const shares = hierarchyShares(t);
      const specDir = join(work, t.name.replace(/\W+/g, '-'));
      mkdirSync(specDir, { recursive: true });
      for (const f of [t.csv, ...qis.map(t.hierarchy), ...t.extra])
        writeFileSync(join(specDir, f), readFileSync(join(t.dir, f)));
      let input: EncodedTable | undefined;
      let digest: Uint8Array | undefined;
      for (const epsilon of epsilons) {
        for (const mode of modes) {
          const model =
            mode === 'fixed'
              ? { model: 'differential-privacy', epsilon, delta, levels: t.levels }
              : { model: 'differential-privacy', epsilon, delta, searchBudget: share, steps };
          const spec = specFor(t, specDir, model);
          const split = dpSplit(model as Parameters<typeof dpSplit>[0]);
          const { beta, k } = dpParameters(split.epsilonAnon, delta);
          // The derivation warm, as ARX's in its long-lived JVM (where each warm-up run derives
          // too): the median of nine after as many calls as the configuration's warm-up runs.
          const warmUps = results.length === 0 ? FIRST_WARM_UPS : WARM_UPS;
          const derivations = Array.from({ length: warmUps + DERIVATIONS_TIMED }, (): Timing => {
            const c0 = cpuNow();
            const t0 = performance.now();
            derive(split.epsilonAnon, delta);
            const ms = performance.now() - t0;
            return { ms, ...cpuSince(c0) };
          });
          const derivation = medians(derivations.slice(warmUps));
          // Read after the derivation is timed: the collection of what reading a table leaves
          // behind falls in the untimed warm-up runs, not in the derivation's calls.
          input ??= readInput(spec);
          // The pipeline has the input's digest from reading it: the shuffle's stream is keyed by it.
          digest ??= tableDigest(input);
          const arxLine = [
            'run',
            `eps=${epsilon}`,
            `delta=${delta}`,
            ...(mode === 'fixed'
              ? [`levels=${qis.map((q) => `${q}=${t.levels[q]}`).join(',')}`]
              : [`search=${split.epsilonSearch}`, `steps=${steps}`]),
          ].join('\t');
          // Warm-ups each (both JITs, ppdp's kernels), alternating and not counted.
          for (let w = 0; w < warmUps; w++) {
            ppdpRun(spec, input, digest, shares, { ms: 0, cpuMs: 0, threadCpuMs: 0, processCpuMs: 0 });
            await arx.ask(arxLine);
          }
          const ours: Run[] = [];
          const theirs: Run[] = [];
          let arxBeta = 0;
          let arxK = 0;
          for (let s = 0; s < seeds; s++) {
            ours.push(ppdpRun(spec, input, digest, shares, derivation));
            const f = (await arx.ask(arxLine)).split('\t');
            arxBeta = Number(f[6]);
            arxK = Number(f[7]);
            // ARX's CPU: its calling thread's (`cpuMs`, as ever) and its JVM's (NaN off HotSpot).
            const anonymize = {
              ms: Number(f[1]),
              cpuMs: Number(f[8]),
              threadCpuMs: Number(f[8]),
              processCpuMs: Number(f[11]),
            };
            theirs.push({
              ...plus(anonymize, {
                ms: Number(f[9]),
                cpuMs: Number(f[10]),
                threadCpuMs: Number(f[10]),
                processCpuMs: Number(f[12]),
              }),
              anonymize,
              node: f[2]!,
              loss: Number(f[3]),
              released: Number(f[4]),
              sampled: Number(f[5]),
            });
          }
          const r: Result = {
            table: t.name,
            rows: input.rowCount,
            epsilon,
            delta,
            mode,
            ...(mode === 'search' ? { searchShare: share, steps } : {}),
            beta,
            k,
            ppdp: { ...summary(ours), derivation, withFiles: medians(ours.map((x) => x.withFiles!)) },
            arx: { ...summary(theirs), beta: arxBeta, k: arxK },
            lossDifference: 0,
            speedup: 0,
            cpuSpeedup: 0,
            threadCpuSpeedup: null,
            processCpuSpeedup: null,
            anonymizeCpuSpeedup: 0,
            withFilesCpuSpeedup: 0,
          };
          r.lossDifference = r.ppdp.lossMean - r.arx.lossMean;
          r.speedup = r.arx.msMedian / r.ppdp.msMedian;
          r.cpuSpeedup = r.arx.cpuMsMedian / r.ppdp.cpuMsMedian;
          r.threadCpuSpeedup = ratio(r.arx.threadCpuMsMedian, r.ppdp.threadCpuMsMedian);
          r.processCpuSpeedup = ratio(r.arx.processCpuMsMedian, r.ppdp.processCpuMsMedian);
          r.anonymizeCpuSpeedup = r.arx.anonymize.cpuMs / r.ppdp.anonymize.cpuMs;
          r.withFilesCpuSpeedup = r.arx.cpuMsMedian / r.ppdp.withFiles.cpuMs;
          results.push(r);
          save(results, uptimeBefore, 'partial');
          console.log(
            `${t.name} ε=${epsilon} ${mode}: Loss ppdp ${r.ppdp.lossMean.toFixed(4)} ± ${r.ppdp.lossSd.toFixed(4)}, ARX ${r.arx.lossMean.toFixed(4)} ± ${r.arx.lossSd.toFixed(4)}; ` +
              `median ms ppdp ${r.ppdp.msMedian.toFixed(0)}, ARX ${r.arx.msMedian.toFixed(0)} (×${r.speedup.toFixed(1)}); ` +
              `CPU ms, thread: ppdp ${fixed(r.ppdp.threadCpuMsMedian)}, ARX ${fixed(r.arx.threadCpuMsMedian)} (${times(r.threadCpuSpeedup)}), ` +
              `process: ppdp ${fixed(r.ppdp.processCpuMsMedian)}, ARX ${fixed(r.arx.processCpuMsMedian)} (${times(r.processCpuSpeedup)}), ` +
              `ARX thread / ppdp process ×${r.cpuSpeedup.toFixed(1)}; ` +
              `to the node ${r.ppdp.anonymize.cpuMs.toFixed(0)} / ${r.arx.anonymize.cpuMs.toFixed(0)} (×${r.anonymizeCpuSpeedup.toFixed(1)}); ` +
              `ppdp with files ${r.ppdp.withFiles.cpuMs.toFixed(0)} (×${r.withFilesCpuSpeedup.toFixed(1)}); β ${beta} / ${arxBeta}, k ${k} / ${arxK}`,
          );
        }
      }
      input = undefined;
    }
  } finally {
    arx.stop();
    rmSync(work, { recursive: true, force: true });
  }
  finish(results, uptimeBefore);
}

/** The load after, the table of every configuration, and the results written. */
function finish(results: readonly Result[], uptimeBefore: string): void {
  const uptimeAfter = spawnSync('uptime', { encoding: 'utf8' }).stdout.trim();
  console.log(`load after: ${uptimeAfter}\n`);
  console.log(
    table(
      [
        'table',
        'ε',
        'node',
        'β',
        'k',
        'Loss ppdp',
        'Loss ARX',
        'Δ',
        'ms ppdp',
        'ms ARX',
        'ARX/ppdp',
        'CPU ppdp thread',
        'CPU ARX thread',
        'ARX/ppdp',
        'CPU ppdp process',
        'CPU ARX process',
        'ARX/ppdp',
        'ARX thread/ppdp process',
        'to node ppdp',
        'anonymize() ARX',
        'ARX/ppdp',
        'ppdp + files',
        'ARX/ppdp',
      ],
      results.map((r) => [
        r.table,
        String(r.epsilon),
        r.mode === 'fixed' ? 'fixed' : `search ${r.searchShare}·ε, ${r.steps} steps`,
        r.beta.toFixed(4),
        String(r.k),
        `${r.ppdp.lossMean.toFixed(4)} ± ${r.ppdp.lossSd.toFixed(4)}`,
        `${r.arx.lossMean.toFixed(4)} ± ${r.arx.lossSd.toFixed(4)}`,
        r.lossDifference.toFixed(4),
        r.ppdp.msMedian.toFixed(0),
        r.arx.msMedian.toFixed(0),
        `×${r.speedup.toFixed(1)}`,
        fixed(r.ppdp.threadCpuMsMedian),
        fixed(r.arx.threadCpuMsMedian),
        times(r.threadCpuSpeedup),
        fixed(r.ppdp.processCpuMsMedian),
        fixed(r.arx.processCpuMsMedian),
        times(r.processCpuSpeedup),
        `×${r.cpuSpeedup.toFixed(1)}`,
        r.ppdp.anonymize.cpuMs.toFixed(0),
        r.arx.anonymize.cpuMs.toFixed(0),
        `×${r.anonymizeCpuSpeedup.toFixed(1)}`,
        r.ppdp.withFiles.cpuMs.toFixed(0),
        `×${r.withFilesCpuSpeedup.toFixed(1)}`,
      ]),
      3,
    ),
  );
  console.log(`\nwrote ${save(results, uptimeBefore, uptimeAfter)}`);
}

/** Writes the results so far (after each configuration, so that a stopped run leaves them). */
function save(results: readonly Result[], uptimeBefore: string, uptimeAfter: string): string {
  const out = resolve(values.out);
  const settings = {
    seeds,
    warmUps: WARM_UPS,
    firstWarmUps: FIRST_WARM_UPS,
    derivationsTimed: DERIVATIONS_TIMED,
    epsilons,
    delta,
    share,
    steps,
    tables: tableNames,
    rows: Number(values.rows),
    modes,
    isolated: values.isolate,
  };
  writeFileSync(
    out,
    `${JSON.stringify({ date: new Date().toISOString(), machine: machineInfo(), uptimeBefore, uptimeAfter, settings, results }, null, 1)}\n`,
  );
  return out;
}

if (values.isolate) isolated();
else await main();
