/**
 * Scale benchmark (a script, not a test): end-to-end releases of 10⁵, 10⁶ and 10⁷ synthetic
 * Adult rows (bench/synth.ts) with generalization (k = 5, 2 % suppression, optimal, 8 QIs),
 * Mondrian (k = 5) and randomization (RR-Both as in examples/adult-randomization). Each
 * release runs the bundled CLI in its own child process; per release it records the phases of
 * the published report.json, the CLI's progress lines with their times, the wall time, the
 * child's peak RSS and CPU time, rows, distinct tuples, nodes checked and whether the release
 * verified.
 *
 * Writes bench/results/scale.json (results of earlier runs for other (method, rows) pairs
 * are kept unless --fresh) and prints a table. See docs/performance.md, "How cost grows".
 * Run: `npm run bench:scale` (`-- --quick` for 10⁵ and 10⁶ only, `-- --help` for the options).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import os from 'node:os';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { hostSpeed, hostSpeedLine } from './host-speed.ts';
import { registrySpec, writeRegistryCsv } from './registry-sample.ts';
import { parseCount, ROOT } from './synth.ts';

const HELP = `Usage: npm run bench:scale [-- options]
       tsx bench/scale.ts [options]

Generates synthetic Adult tables (bench/synth.ts) of each size and releases each with every
method through the bundled CLI, one child process per release, recording the per-phase
timings of report.json, wall time, peak RSS, distinct tuples, nodes checked and verification.
Writes bench/results/scale.json and prints a table. Run \`npm run build\` first.

Options:
  --rows <list>       sizes (default 1e5,1e6,1e7)
  --quick             sizes 1e5,1e6
  --methods <list>    of generalization, mondrian, randomization (default all three)
  --shape <shape>     adult (default) or registry: the near-unique table of bench/registry-sample.ts
                      (a unique id, age, sex, 5-digit postcode, exact birth date; generalization, mondrian)
  --ride-along        with --shape registry: three insensitive columns released unchanged (a
                      free-text note with one distinct value per row, a comma in one of five
                      and a quoted word in one of fifty; an amount; a timestamp);
                      its results are kept apart from the registry's without them
  --perturb <p>       perturbation of the synthetic rows (default 0.05: distinct tuples grow with N)
  --seed <s>          synthetic data seed (default 1)
  --cli <path>        the ppdp entry point to run (default bin/ppdp.mjs)
  --node-args <args>  extra node options for the releases, e.g. "--max-old-space-size=16384"
  --timeout <min>     per release, then the child is killed and the run recorded as failed
                      (default 90)
  --work <dir>        where the data and releases go (default a new folder in the temp dir)
  --note <text>       stored with each run of this invocation (e.g. what the build differs in)
  --repeat <n>        release each table n times (default 1): the run of the median wall time
                      is the result, and every run's wall time, peak and CPU are kept beside it
  --settle <s>        before each release, flush the files written so far to disk (sync) and
                      wait this long (default 3), so that the writes of the data or of the run
                      before are not timed with it; 0: neither
  --warm-input        after --settle, read the input's files once before each release, so that
                      every release finds them in the page cache (a kernel that evicts cold
                      pages, as this project's machines do, otherwise leaves a random share of a
                      large input on disk between runs, and the runs time the disk)
  --pair              with --shape registry: the registry without and with its ride-along columns,
                      released in turns (--repeat pairs, in the order ABBA…), so that a drift of a
                      shared host's speed weighs on both; the result adds each pair's ratios
                      (with / without: wall, CPU, peak) and their medians
  --keep              keep the work folder
  --fresh             drop the earlier results in scale.json instead of merging
  --result <path>     write there instead of bench/results/scale.json
  -h, --help          this text
`;

const RESULT = join(ROOT, 'bench/results/scale.json');

/**
 * Flushes what earlier steps wrote (the data, the run before) and waits: the disk's writing of
 * them in the background would otherwise be timed with the next release.
 */
export function settle(seconds: number): void {
  if (seconds === 0) return;
  spawnSync('sync');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, seconds * 1000);
}
/** Reads a file through once (into the page cache), a buffer at a time. */
export function readThrough(path: string): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(8 << 20);
    while (readSync(fd, buf, 0, buf.length, null) > 0);
  } finally {
    closeSync(fd);
  }
}

const METHODS = ['generalization', 'mondrian', 'randomization'] as const;

/** With --pair: per pair of releases (without, with the ride-along columns), with / without. */
export interface PairResult {
  method: Method;
  rows: number;
  date: string;
  note?: string;
  ratios: { wall: number; cpu: number; peak: number }[];
  median: { wall: number; cpu: number; peak: number };
}

type Attempt = {
  run: { wallMs: number; peakRssMiB?: number; cpuSeconds?: { user: number; system: number } };
};

/** The ratios of each pair's runs (the i-th release with the columns over the i-th without). */
function pairOf(method: Method, rows: number, without: Attempt[], withColumns: Attempt[]): PairResult {
  const round = (x: number) => Math.round(x * 1000) / 1000;
  const cpu = (a: Attempt) =>
    a.run.cpuSeconds ? a.run.cpuSeconds.user + a.run.cpuSeconds.system : Number.NaN;
  const ratios = without.map((w, i) => {
    const c = withColumns[i]!;
    return {
      wall: round(c.run.wallMs / w.run.wallMs),
      cpu: round(cpu(c) / cpu(w)),
      peak: round((c.run.peakRssMiB ?? Number.NaN) / (w.run.peakRssMiB ?? Number.NaN)),
    };
  });
  const median = (pick: (r: (typeof ratios)[number]) => number) => {
    const sorted = ratios.map(pick).sort((a, b) => a - b);
    const m = sorted.length;
    return round(m % 2 === 1 ? sorted[(m - 1) / 2]! : (sorted[m / 2 - 1]! + sorted[m / 2]!) / 2);
  };
  return {
    method,
    rows,
    date: new Date().toISOString(),
    ratios,
    median: { wall: median((r) => r.wall), cpu: median((r) => r.cpu), peak: median((r) => r.peak) },
  };
}
type Method = (typeof METHODS)[number];

/** The examples whose specs each method runs (generalization: the spec synth.ts writes). */
const EXAMPLES: Record<Method, string | null> = {
  generalization: null,
  mondrian: join(ROOT, 'examples/adult-mondrian/release.json'),
  randomization: join(ROOT, 'examples/adult-randomization/release.json'),
};

export interface RunResult {
  method: Method;
  /** The table: synthetic Adult, or the near-unique registry (absent in runs before it was recorded: adult). */
  shape?: 'adult' | 'registry';
  /** --ride-along: the registry with its three insensitive columns (absent: without them). */
  rideAlong?: boolean;
  rows: number;
  perturb: number;
  seed: number;
  date: string;
  /** --note of the invocation that measured it. */
  note?: string;
  /** --warm-input: the input was read through once before each release (absent: it was not). */
  warmInput?: true;
  inputBytes: number;
  ok: boolean;
  exit: number | string;
  /** The CLI's last stderr lines when it failed (ppdp's errors carry no data values). */
  error?: string;
  wallMs: number;
  peakRssMiB?: number;
  cpuSeconds?: { user: number; system: number };
  /** report.json timings, ms (see docs/performance.md for what each covers). */
  timings: Record<string, number>;
  /** The CLI's progress lines: seconds since start, text. */
  progress: [number, string][];
  verified?: boolean;
  checks?: number;
  suppressedRows?: number;
  distinctTuples?: number;
  latticeSize?: number;
  nodesChecked?: number;
  node?: Record<string, number>;
  utility?: { metric: string; value: number };
  /** With --repeat: every release of this table, in the order they ran (the result is the median). */
  repeats?: {
    wallMs: number;
    peakRssMiB?: number;
    cpuSeconds?: { user: number; system: number };
    ok: boolean;
    verified?: boolean;
  }[];
}

// ---------------------------------------------------------------------------------------------
// Helpers shared with bench/growth.ts

export function machineInfo() {
  const git = (args: string[]) => {
    const r = spawnSync('git', args, { cwd: ROOT, encoding: 'utf8' });
    return r.status === 0 ? r.stdout : undefined;
  };
  return {
    node: process.version,
    cpu: os.cpus()[0]?.model.trim() ?? 'unknown',
    cores: os.cpus().length,
    memoryGiB: Math.round(os.totalmem() / 2 ** 30),
    loadAverage: os.loadavg().map((x) => Math.round(x * 100) / 100),
    commit: git(['rev-parse', '--short', 'HEAD'])?.trim(),
    uncommittedFiles: git(['status', '--porcelain'])
      ?.split('\n')
      .filter((l) => l.trim()).length,
  };
}

/** Right-aligned columns under a header, the first `left` columns left-aligned. */
export function table(header: string[], rows: string[][], left = 1): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i < left ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function median(xs: readonly number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

/** 1,234 ms; 12.3 s above ten seconds. */
export function ms(x: number | undefined): string {
  if (x === undefined) return '';
  if (x >= 10_000) return `${(x / 1000).toFixed(1)} s`;
  return x >= 100 ? Math.round(x).toLocaleString('en') : x.toFixed(1);
}

// ---------------------------------------------------------------------------------------------

/** The example's spec for the synthetic input: its hierarchies by file name from synth's spec. */
function adaptSpec(method: Method, synthSpec: string, shape: 'adult' | 'registry'): string {
  const synth = JSON.parse(readFileSync(synthSpec, 'utf8'));
  // The registry's own spec, its age a number Mondrian cuts (the other QIs' hierarchies kept).
  if (shape === 'registry') {
    if (method === 'generalization') return synthSpec;
    const spec = {
      ...synth,
      attributes: { ...synth.attributes, age: { type: 'quasi-identifying', scale: 'numeric' } },
      method: { name: 'mondrian', mode: 'relaxed' },
    };
    const path = join(dirname(synthSpec), `${method}.json`);
    writeFileSync(path, `${JSON.stringify(spec, null, 2)}\n`);
    return path;
  }
  const example = EXAMPLES[method];
  if (example === null) return synthSpec;
  const spec = JSON.parse(readFileSync(example, 'utf8'));
  const hierarchyDir = dirname(synth.attributes.sex.hierarchy as string);
  for (const a of Object.values(spec.attributes) as { hierarchy?: unknown }[]) {
    if (typeof a.hierarchy === 'string') a.hierarchy = join(hierarchyDir, basename(a.hierarchy));
  }
  // Mondrian as the issue asks for it: k = 5 alone (the example adds distinct 3-diversity).
  if (method === 'mondrian') spec.privacy = [{ model: 'k-anonymity', k: 5 }];
  const out = { ...spec, root: synth.root, input: synth.input, format: synth.format };
  const path = join(dirname(synthSpec), `${method}.json`);
  writeFileSync(path, `${JSON.stringify(out, null, 2)}\n`);
  return path;
}

/**
 * Runs the CLI with a hook (NODE_OPTIONS --import, which every node process of the release
 * inherits: a large release restarts itself with a tuned allocator, src/cli/allocator.ts) that
 * records each process's resource usage at its exit: the peak is the largest, the CPU the sum.
 */
export function release(
  cli: string,
  spec: string,
  out: string,
  work: string,
  nodeArgs: string[],
  timeoutMs: number,
  label: string,
  /** Each line the release's processes write to stdout (node's --trace-gc writes there). */
  onStdout?: (line: string) => void,
): Promise<Pick<RunResult, 'exit' | 'ok' | 'error' | 'wallMs' | 'peakRssMiB' | 'cpuSeconds' | 'progress'>> {
  const hook = join(work, 'rusage.mjs');
  const usageDir = mkdtempSync(join(work, 'usage-'));
  writeFileSync(
    hook,
    [
      "import { writeFileSync } from 'node:fs';",
      "import { join } from 'node:path';",
      "process.on('exit', () => {",
      '  const u = process.resourceUsage();',
      '  const file = join(process.env.PPDP_BENCH_USAGE, String(process.pid) + ".json");',
      '  writeFileSync(file, JSON.stringify({ maxRSS: u.maxRSS, user: u.userCPUTime, system: u.systemCPUTime }));',
      '});',
      '',
    ].join('\n'),
  );
  const t0 = performance.now();
  const child = spawn(process.execPath, [...nodeArgs, cli, 'release', spec, '--out', out], {
    cwd: ROOT,
    env: {
      ...process.env,
      PPDP_BENCH_USAGE: usageDir,
      NODE_OPTIONS: `${process.env.NODE_OPTIONS ?? ''} --import=${pathToFileURL(hook).href}`.trim(),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const progress: [number, string][] = [];
  const tail: string[] = [];
  createInterface({ input: child.stderr }).on('line', (line) => {
    const m = /^ppdp \[(\d+(?:\.\d+)?)s\] (.*)$/.exec(line);
    if (m) progress.push([Number(m[1]), m[2]!]);
    else tail.push(line);
    if (tail.length > 20) tail.shift();
    console.log(`  ${label} | ${line}`);
  });
  if (onStdout) createInterface({ input: child.stdout }).on('line', onStdout);
  else child.stdout.resume();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill('SIGKILL');
  }, timeoutMs);
  return new Promise((done) => {
    child.on('close', (code, signal) => {
      clearTimeout(timer);
      const wallMs = performance.now() - t0;
      let usage: { maxRSS: number; user: number; system: number } | undefined;
      for (const file of readdirSync(usageDir)) {
        const u = JSON.parse(readFileSync(join(usageDir, file), 'utf8'));
        usage = {
          maxRSS: Math.max(usage?.maxRSS ?? 0, u.maxRSS),
          user: (usage?.user ?? 0) + u.user,
          system: (usage?.system ?? 0) + u.system,
        };
      }
      rmSync(usageDir, { recursive: true, force: true });
      const ok = code === 0;
      done({
        exit: timedOut ? `timeout after ${timeoutMs / 60_000} min` : (code ?? signal ?? 'unknown'),
        ok,
        ...(ok ? {} : { error: tail.join('\n') || 'no output (killed?)' }),
        wallMs: Math.round(wallMs),
        ...(usage
          ? {
              peakRssMiB: Math.round(usage.maxRSS / 1024),
              cpuSeconds: {
                user: Math.round(usage.user / 1e4) / 100,
                system: Math.round(usage.system / 1e4) / 100,
              },
            }
          : {}),
        progress,
      });
    });
  });
}

/** What report.json says, for the results. */
function reportFacts(out: string): Partial<RunResult> {
  const path = join(out, 'report.json');
  if (!existsSync(path)) return { timings: {} };
  const r = JSON.parse(readFileSync(path, 'utf8'));
  const g = r.generalization;
  return {
    timings: r.timings ?? {},
    verified: r.verification?.verified,
    checks: r.verification?.checks?.length,
    suppressedRows: r.rows?.suppressed,
    utility: r.utility && { metric: r.utility.metric, value: r.utility.value },
    ...(g
      ? {
          distinctTuples: g.distinctTuples,
          latticeSize: g.latticeSize,
          nodesChecked: g.nodesChecked,
          node: g.node,
        }
      : {}),
  };
}

/**
 * Phase columns of the summary, from report.json's timings. Single-task methods (Mondrian,
 * randomization) run everything in `build` (their own phases and verify nested inside), so
 * only plan, build, verify and total apply to them.
 */
const PHASES: [string, (t: Record<string, number>) => number | undefined][] = [
  ['plan', (t) => t.plan],
  ['count', (t) => sharded(t, t.count)],
  ['search', (t) => sharded(t, t.search)],
  ['merge', (t) => sharded(t, t.merge)],
  ['apply', (t) => sharded(t, t.apply)],
  ['assemble', (t) => sharded(t, t.assemble)],
  // Verification in slices: the input shards' and the output parts' (summed over slices).
  ['check', (t) => sharded(t, (t['check-shard'] ?? 0) + (t['check-part'] ?? 0) || undefined)],
  ['build', (t) => t.build],
  ['verify', (t) => t.verify],
  // The audit (uniqueness with the unchanged columns, partitioned above 10^6 rows), inside verify.
  ['audit', (t) => t.audit],
  ['total', (t) => t.total],
];

function sharded(t: Record<string, number>, x: number | undefined): number | undefined {
  return t.build === undefined ? x : undefined;
}

export function summary(results: RunResult[]): string {
  const rows = [...results]
    .sort((a, b) => METHODS.indexOf(a.method) - METHODS.indexOf(b.method) || a.rows - b.rows)
    .map((r) => [
      r.shape === 'registry' ? `${r.method} (registry${r.rideAlong ? ' + ride-along' : ''})` : r.method,
      r.rows.toLocaleString('en'),
      r.distinctTuples?.toLocaleString('en') ?? '',
      r.nodesChecked === undefined ? '' : `${r.nodesChecked}/${r.latticeSize}`,
      ...PHASES.map(([, f]) => ms(f(r.timings))),
      ms(r.wallMs),
      r.peakRssMiB === undefined ? '' : r.peakRssMiB.toLocaleString('en'),
      r.ok ? (r.verified ? 'yes' : 'no') : `FAILED (${r.exit})`,
    ]);
  return table(
    [
      'method',
      'rows',
      'tuples',
      'nodes',
      ...PHASES.map(([name]) => name),
      'wall',
      'peak RSS MiB',
      'verified',
    ],
    rows,
  );
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      quick: { type: 'boolean', default: false },
      shape: { type: 'string', default: 'adult' },
      'ride-along': { type: 'boolean', default: false },
      methods: { type: 'string', default: METHODS.join(',') },
      perturb: { type: 'string', default: '0.05' },
      seed: { type: 'string', default: '1' },
      cli: { type: 'string', default: join(ROOT, 'bin/ppdp.mjs') },
      'node-args': { type: 'string', default: '' },
      timeout: { type: 'string', default: '90' },
      work: { type: 'string' },
      note: { type: 'string' },
      repeat: { type: 'string', default: '1' },
      settle: { type: 'string', default: '3' },
      'warm-input': { type: 'boolean', default: false },
      pair: { type: 'boolean', default: false },
      keep: { type: 'boolean', default: false },
      fresh: { type: 'boolean', default: false },
      result: { type: 'string', default: RESULT },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const sizes = (values.rows ?? (values.quick ? '1e5,1e6' : '1e5,1e6,1e7')).split(',').map(parseCount);
  const methods = values.methods.split(',') as Method[];
  for (const m of methods) if (!METHODS.includes(m)) throw new Error(`unknown method '${m}' (--methods)`);
  const shape = values.shape as 'adult' | 'registry';
  if (shape !== 'adult' && shape !== 'registry')
    throw new Error(`--shape is adult or registry, not '${shape}'`);
  if (shape === 'registry' && methods.some((m) => m === 'randomization'))
    throw new Error(
      '--shape registry releases with generalization and mondrian (--methods generalization,mondrian)',
    );
  const rideAlong = values['ride-along'];
  if (rideAlong && shape !== 'registry') throw new Error('--ride-along goes with --shape registry');
  const pair = values.pair;
  if (pair && (shape !== 'registry' || rideAlong))
    throw new Error('--pair goes with --shape registry, without --ride-along (it releases both tables)');
  const perturb = Number(values.perturb);
  const seed = Number(values.seed);
  const cli = values.cli;
  if (!existsSync(cli)) throw new Error(`${cli} not found`);
  const nodeArgs = values['node-args'].split(' ').filter((a) => a !== '');
  const timeoutMs = Number(values.timeout) * 60_000;
  const settleSeconds = Number(values.settle);
  if (!(settleSeconds >= 0)) throw new Error('--settle is a number of seconds, 0 or more');
  const repeat = Number(values.repeat);
  if (!(Number.isInteger(repeat) && repeat >= 1)) throw new Error(`--repeat is a whole number, 1 or more`);
  const work = values.work ?? mkdtempSync(join(os.tmpdir(), 'ppdp-scale-'));
  mkdirSync(work, { recursive: true });

  const machine = machineInfo();
  const started = new Date();
  console.log(
    `ppdp scale benchmark — ${started.toISOString()}; ${machine.cpu}, ${machine.cores} cores, ` +
      `${machine.memoryGiB} GiB, node ${machine.node}, load ${machine.loadAverage.join(' ')}`,
  );
  // Kept beside the figures: what the host itself gives, to tell its speed from the code's.
  const speed = await hostSpeed();
  console.log(hostSpeedLine(speed));
  console.log(`sizes ${sizes.join(', ')}; methods ${methods.join(', ')}; perturb ${perturb}; cli ${cli}`);

  const results: RunResult[] = [];
  const pairs: PairResult[] = [];
  const generation: { shape?: string; rows: number; ms: number; bytes: number }[] = [];
  // With --pair, the registry without and with its ride-along columns, released in turns.
  const tables = pair ? [false, true] : [rideAlong];
  const shapeNameOf = (ride: boolean) => `${shape}${ride ? '+ride-along' : ''}`;
  try {
    for (const rows of sizes) {
      const data = tables.map((ride) => {
        const dir = join(work, `${shape}${ride ? '-ride' : ''}-${rows}`);
        console.log(`\n${rows.toLocaleString('en')} ${shapeNameOf(ride)} rows: generating`);
        const made = generateApart({ shape, rideAlong: ride, dir, rows, perturb, seed });
        const bytes = statSync(join(dir, made.files[0]!)).size;
        generation.push({ shape: shapeNameOf(ride), rows, ms: Math.round(made.ms), bytes });
        console.log(`\n  ${(bytes / 2 ** 20).toFixed(0)} MiB in ${(made.ms / 1000).toFixed(1)} s`);
        return { ride, dir, bytes, ...made };
      });
      for (const method of methods) {
        const label = (ride: boolean) =>
          `${method} ${rows.toExponential(0).replace('+', '')}${pair && ride ? ' ride-along' : ''}`;
        const attempts = data.map(
          () =>
            [] as {
              run: Awaited<ReturnType<typeof release>>;
              facts: ReturnType<typeof reportFacts>;
            }[],
        );
        for (let i = 0; i < repeat; i++) {
          // Turns in the order ABBA…: a drift of the host's speed weighs on both tables alike.
          const order = i % 2 === 0 ? data.map((_, t) => t) : data.map((_, t) => t).reverse();
          for (const t of order) {
            const table = data[t]!;
            const spec = adaptSpec(method, table.spec, shape);
            const out = join(work, `out-${method}-${rows}${table.ride ? '-ride' : ''}`);
            if (i === 0)
              console.log(`  ${label(table.ride)}: node ${basename(cli)} release ${basename(spec)} --out …`);
            settle(settleSeconds);
            if (values['warm-input']) for (const file of table.files) readThrough(join(table.dir, file));
            const run = await release(cli, spec, out, work, nodeArgs, timeoutMs, label(table.ride));
            attempts[t]!.push({ run, facts: reportFacts(out) });
            rmSync(out, { recursive: true, force: true });
            if (repeat > 1)
              console.log(`  ${label(table.ride)}: run ${i + 1} of ${repeat}, wall ${ms(run.wallMs)}`);
          }
        }
        data.forEach((table, t) => {
          const tried = attempts[t]!;
          // On a shared host one run can be far off: the median run stands for the table.
          const median = [...tried].sort((a, b) => a.run.wallMs - b.run.wallMs)[Math.floor(repeat / 2)]!;
          const result: RunResult = {
            method,
            shape,
            ...(table.ride ? { rideAlong: true } : {}),
            rows,
            perturb,
            seed,
            date: new Date().toISOString(),
            ...(values.note ? { note: values.note } : {}),
            ...(values['warm-input'] ? { warmInput: true as const } : {}),
            inputBytes: table.bytes,
            ...median.run,
            timings: {},
            ...median.facts,
            ...(repeat > 1
              ? {
                  repeats: tried.map(({ run, facts }) => ({
                    wallMs: Math.round(run.wallMs),
                    peakRssMiB: run.peakRssMiB,
                    cpuSeconds: run.cpuSeconds,
                    ok: run.ok,
                    verified: facts.verified,
                  })),
                }
              : {}),
          };
          results.push(result);
          console.log(
            `  ${label(table.ride)}: ${result.ok ? (result.verified ? 'verified' : 'NOT verified') : `failed (${result.exit})`}, ` +
              `wall ${ms(result.wallMs)}, peak RSS ${result.peakRssMiB ?? '?'} MiB`,
          );
        });
        if (pair) {
          const paired = pairOf(method, rows, attempts[0]!, attempts[1]!);
          pairs.push(paired);
          console.log(
            `  ${label(false)}: with the ride-along columns, ×${paired.median.wall} the time (pairs ${paired.ratios
              .map((r) => r.wall)
              .join(', ')}), ×${paired.median.cpu} the CPU, ×${paired.median.peak} the peak`,
          );
        }
      }
      if (!values.keep) for (const table of data) rmSync(table.dir, { recursive: true, force: true });
    }
  } finally {
    if (!values.keep && !values.work) rmSync(work, { recursive: true, force: true });
  }

  const resultPath = values.result;
  const earlier = !values.fresh && existsSync(resultPath) ? JSON.parse(readFileSync(resultPath, 'utf8')) : {};
  const previous: RunResult[] = earlier.runs ?? [];
  const shapeOf = (r: RunResult) => `${r.shape ?? 'adult'}${r.rideAlong ? '+ride-along' : ''}`;
  const kept = previous.filter(
    (p) => !results.some((r) => r.method === p.method && r.rows === p.rows && shapeOf(r) === shapeOf(p)),
  );
  const generated = [
    ...((earlier.generation ?? []) as typeof generation).filter(
      (g) => !sizes.includes(g.rows) || !tables.map(shapeNameOf).includes(g.shape ?? 'adult'),
    ),
    ...generation,
  ].sort((a, b) => a.rows - b.rows);
  const runs = [...kept, ...results].sort(
    (a, b) =>
      METHODS.indexOf(a.method) - METHODS.indexOf(b.method) ||
      shapeOf(a).localeCompare(shapeOf(b)) ||
      a.rows - b.rows,
  );
  // Pairs of earlier invocations are kept per (method, rows), as runs are.
  const pairsKept = [
    ...((earlier.pairs ?? []) as PairResult[]).filter(
      (p) => !pairs.some((q) => q.method === p.method && q.rows === p.rows),
    ),
    ...pairs.map((p) => (values.note ? { ...p, note: values.note } : p)),
  ].sort((a, b) => a.rows - b.rows);
  const output = {
    benchmark: 'scale',
    date: started.toISOString(),
    durationSeconds: Math.round((Date.now() - started.getTime()) / 1000),
    machine: {
      ...machine,
      hostSpeed: speed,
      loadAverageAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100),
    },
    settings: {
      perturb,
      seed,
      cli: cli.startsWith(ROOT) ? cli.slice(ROOT.length) : cli,
      nodeArgs,
      note:
        'one child process per release (node <cli> release <spec> --out <dir>, which restarts itself with a ' +
        'tuned allocator for a large input); peak RSS (the largest) and CPU (the sum) from ' +
        'process.resourceUsage() at the exit of each node process of the release; timings from report.json ' +
        '(ms); runs of earlier invocations are kept per (method, rows) and carry their own date; ' +
        `before each release, sync and a pause of ${settleSeconds} s (--settle)` +
        (values['warm-input'] ? ', then the input read through once (--warm-input)' : ''),
    },
    /** Synthetic data: rows, generation time, Arrow file size. */
    generation: generated,
    runs,
    ...(pairsKept.length > 0 ? { pairs: pairsKept } : {}),
  };
  mkdirSync(dirname(resultPath), { recursive: true });
  writeFileSync(resultPath, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`\n${summary(runs)}\n\nms unless marked; wrote ${resultPath}`);
  if (results.some((r) => !r.ok || !r.verified)) process.exitCode = 1;
}

/** The registry table in `dir` as writeSynthetic gives its data: the spec, the input file, the time taken. */
/**
 * The table written by a child process: memory this process kept from writing it would be
 * held on the machine through every release timed after (on a virtual machine that makes the
 * releases' own memory slower to come by).
 */
function generateApart(args: {
  shape: string;
  rideAlong: boolean;
  dir: string;
  rows: number;
  perturb: number;
  seed: number;
}): {
  spec: string;
  files: string[];
  ms: number;
} {
  const script = [
    `const args = ${JSON.stringify(args)};`,
    `const { writeSynthetic } = await import(${JSON.stringify(new URL('./synth.ts', import.meta.url).href)});`,
    `const { registryData } = await import(${JSON.stringify(import.meta.url)});`,
    "const data = args.shape === 'registry' ? await registryData(args.dir, args.rows, args.rideAlong)",
    '  : await writeSynthetic(args.dir, { rows: args.rows, perturb: args.perturb, seed: args.seed });',
    'process.stdout.write(JSON.stringify({ spec: data.spec, files: data.files, ms: data.ms }));',
  ].join('\n');
  const child = spawnSync(process.execPath, [...process.execArgv, '--input-type=module', '-e', script], {
    cwd: ROOT,
    encoding: 'utf8',
    maxBuffer: 1 << 20,
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (child.status !== 0)
    throw new Error(`generating ${args.rows} ${args.shape} rows failed (exit ${child.status})`);
  return JSON.parse(child.stdout);
}

export async function registryData(
  dir: string,
  rows: number,
  rideAlong = false,
): Promise<{ spec: string; files: string[]; ms: number }> {
  const t0 = performance.now();
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'release.json'), `${JSON.stringify(registrySpec(rideAlong), null, 2)}\n`);
  await writeRegistryCsv(join(dir, 'registry.csv'), rows, rideAlong);
  return { spec: join(dir, 'release.json'), files: ['registry.csv'], ms: performance.now() - t0 };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
