/**
 * The best-effort search on wide tables, against ARX 3.9.2's three best-effort searches run
 * live (genetic, bottom-up "Lightning", top-down), interleaved table by table: ppdp, then ARX's
 * three, each with the same time limit, k = 5, at most 2 % suppressed rows and Loss with the
 * arithmetic mean and gs-factor 0.5 (ppdp's `loss` with those settings is ARX's Loss to 10⁻⁹,
 * test/arx/loss.test.ts). ARX reads the hierarchies `ppdp hierarchy` writes from the spec.
 *
 * Tables (bench/wide-table.ts): the marketing-style table with 12 and 20 quasi-identifiers, its
 * survey-width form with 30 and 40, and the bank-marketing-shaped table (45,211 rows, 17
 * columns, every one quasi-identifying with the hierarchies `ppdp init` drafts), which also runs
 * through the CLI (`ppdp release`, default budgets) for its wall time and the longest wait
 * between two progress lines. ARX's Loss is read from ARX and checked against ppdp's Loss at
 * ARX's node. ppdp's time is preparation plus search (what ARX's `anonymize()` does on data it
 * has read), the search's time limit being what the preparation left of the budget; both run
 * under whatever load the machine has, recorded with the figures.
 *
 * Prints a table and writes bench/results/wide.json.
 * Run: `npm run bench:wide` (`-- --help` for the options). Needs java and javac 17 and ARX's
 * jars (`--arx-lib <dir>`, or $ARX_LIB); `--arx none` runs ppdp alone.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os, { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { prepareGeneralization, respecify, search } from '../src/methods/generalization/index.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../src/release-spec/spec.ts';
import { startArxHarness, writeArxHierarchies } from './arx-harness.ts';
import { machineInfo, table } from './scale.ts';
import { writeBankTable, writeWideTable } from './wide-table.ts';

const ROOT = resolve(new URL('..', import.meta.url).pathname);
const HELP = `Usage: npm run bench:wide [-- options]
  --rows N          rows of the generated wide tables (default 20000)
  --qis LIST        quasi-identifier counts of the wide tables, comma-separated (default 12,20,30,40)
  --time S          time limit of every search on the wide tables, in seconds (default 10)
  --bank N          rows of the bank-marketing-shaped table (default 45211; 0 skips it)
  --bank-time S     time limit of the searches on it, in seconds (default 30)
  --arx LIST        ARX's searches: genetic,bottom-up,top-down (default all three; none skips ARX)
  --arx-lib DIR     the folder of ARX 3.9.2's jars (default: $ARX_LIB)
  --out FILE        results file (default bench/results/wide.json)
`;
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '20000' },
    qis: { type: 'string', default: '12,20,30,40' },
    time: { type: 'string', default: '10' },
    bank: { type: 'string', default: '45211' },
    'bank-time': { type: 'string', default: '30' },
    arx: { type: 'string', default: 'genetic,bottom-up,top-down' },
    'arx-lib': { type: 'string', default: process.env.ARX_LIB ?? '' },
    out: { type: 'string', default: join(ROOT, 'bench/results/wide.json') },
    help: { type: 'boolean', short: 'h', default: false },
  },
});
if (values.help) {
  process.stdout.write(HELP);
  process.exit(0);
}

const LOSS = { aggregate: 'arithmetic', gsFactor: 0.5 };
const ALGORITHMS = values.arx === 'none' ? [] : values.arx.split(',');

interface Run {
  readonly tool: string;
  readonly loss: number;
  /** ppdp's Loss at the tool's node (for ARX: the check that both measure alike). */
  readonly ppdpLossAtNode?: number;
  readonly ms: number;
  readonly node: Record<string, number>;
  readonly lowerBound?: number;
  readonly nodesChecked?: number;
  readonly stoppedBy?: string;
  readonly loadAverage: number;
}

interface Table {
  readonly name: string;
  readonly rows: number;
  readonly qis: number;
  readonly latticeNodes: number;
  readonly timeLimitS: number;
  readonly runs: Run[];
  cli?: {
    seconds: number;
    /** The longest wait between two lines while the search runs, and over the whole run. */
    longestSearchGapS: number;
    longestGapS: number;
    verified: boolean;
    loss?: number;
  };
}

const parseNode = (text: string): Record<string, number> =>
  Object.fromEntries(
    text
      .split(',')
      .map((kv) => [kv.slice(0, kv.lastIndexOf('=')), Number(kv.slice(kv.lastIndexOf('=') + 1))]),
  );

const load1 = () => Math.round(os.loadavg()[0]! * 100) / 100;

/**
 * ppdp's best-effort search: preparation plus search, as ARX's anonymize(), within `seconds` in
 * all (the search's time limit is what the preparation left of it).
 */
function ppdpRun(
  specFile: string,
  seconds: number,
): { run: Run; lossAt: (node: Record<string, number>) => number } {
  const spec = loadSpec(specFile);
  const input = readInput(spec);
  const t0 = performance.now();
  const prepared = prepareGeneralization(spec, input, wasmGroupingKernel);
  const left = seconds - (performance.now() - t0) / 1000;
  const timed = respecify(prepared, {
    ...spec,
    method: { ...spec.method, timeLimit: Math.max(0.1, left) },
  } as ReleaseSpec);
  const r = search(timed, wasmGroupingKernel);
  const ms = performance.now() - t0;
  r.evaluator.dispose();
  const run: Run = {
    tool: 'ppdp',
    loss: r.best.value,
    ms: Math.round(ms),
    node: Object.fromEntries(prepared.qis.map((q, i) => [q.name, r.best.levels[i]!])),
    lowerBound: r.bestEffort?.lowerBound ?? r.best.value,
    nodesChecked: r.nodesChecked,
    stoppedBy: r.bestEffort?.stoppedBy ?? 'optimal',
    loadAverage: load1(),
  };
  const lossAt = (node: Record<string, number>) => {
    const at = search(prepared, wasmGroupingKernel, node);
    at.evaluator.dispose();
    return at.best.values.loss!;
  };
  return { run, lossAt };
}

/** The spec's hierarchies as files (ppdp's own export) and ARX's config line. */
function arxConfig(specFile: string, dir: string): string {
  const spec: ReleaseSpec = loadSpec(specFile);
  const built = join(dir, 'hierarchies');
  const files = writeArxHierarchies(specFile, built);
  console.log(`  ARX reads ${files} hierarchy files, written by ppdp hierarchy`);
  const fields = [
    'config',
    `data=${resolve(specFile, '..', spec.input)}`,
    `delim=${spec.format?.delimiter ?? ','}`,
    'k=5',
    'supp=0.02',
  ];
  for (const a of spec.attributes) {
    if (a.type === 'quasi-identifying') fields.push(`qi=${a.name}=${join(built, `${a.name}.csv`)}`);
    if (a.type === 'identifying') fields.push(`ident=${a.name}`);
  }
  return fields.join('\t');
}

/** `ppdp release` through the CLI: wall time and the longest wait between two output lines. */
function cliRun(specFile: string, out: string): Table['cli'] {
  const t0 = performance.now();
  const run = spawnSync('node', [join(ROOT, 'bin/ppdp.mjs'), 'release', specFile, '--out', out], {
    encoding: 'utf8',
  });
  const seconds = (performance.now() - t0) / 1000;
  const lines = `${run.stderr}\n${run.stdout}`
    .split('\n')
    .map((l) => ({ line: l, at: /^ppdp \[(\d+(?:\.\d+)?)s\]/.exec(l)?.[1] }))
    .filter((l): l is { line: string; at: string } => l.at !== undefined);
  // The search runs from the line that announces it to the one that gives its node.
  const from = lines.findIndex((l) => l.line.endsWith('best-effort search'));
  const to = lines.findIndex((l) => l.line.includes('chosen node'));
  let gap = 0;
  let searchGap = 0;
  for (let i = 1; i < lines.length; i++) {
    const d = Number(lines[i]!.at) - Number(lines[i - 1]!.at);
    gap = Math.max(gap, d);
    if (i > from && i <= to) searchGap = Math.max(searchGap, d);
  }
  const loss = /loss = ([0-9.]+)/.exec(run.stdout)?.[1];
  return {
    seconds: Number(seconds.toFixed(2)),
    longestSearchGapS: Number(searchGap.toFixed(2)),
    longestGapS: Number(gap.toFixed(2)),
    verified: run.status === 0 && existsSync(join(out, 'manifest.json')),
    ...(loss ? { loss: Number(loss) } : {}),
  };
}

/** A spec set to Loss (arithmetic mean, gs-factor 0.5) with the time limit given. */
function setLoss(specFile: string, timeLimit?: number): void {
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  spec.method = { ...spec.method, metric: 'loss', loss: LOSS, ...(timeLimit ? { timeLimit } : {}) };
  writeFileSync(specFile, `${JSON.stringify(spec, null, 2)}\n`);
}

/** The bank-shaped table with the spec `ppdp init` drafts for it, set to Loss. */
function bankSpec(dir: string, rows: number): string {
  const csv = writeBankTable(dir, rows);
  const specFile = join(dir, 'release.json');
  const init = spawnSync('node', [join(ROOT, 'bin/ppdp.mjs'), 'init', csv, '--out', specFile], {
    encoding: 'utf8',
  });
  if (init.status !== 0) throw new Error(`ppdp init failed: ${init.stderr}`);
  const spec = JSON.parse(readFileSync(specFile, 'utf8'));
  const roles = Object.values(spec.attributes as Record<string, { type: string }>).map((a) => a.type);
  if (roles.some((t) => t !== 'quasi-identifying'))
    throw new Error('ppdp init drafted a column as not quasi-identifying');
  setLoss(specFile);
  return specFile;
}

const dir = mkdtempSync(join(tmpdir(), 'ppdp-wide-'));
const arx = ALGORITHMS.length > 0 ? startArxHarness(values['arx-lib'], 'BestEffortRun', '4g') : undefined;
const tables: Table[] = [];
try {
  const plan: { name: string; spec: string; rows: number; time: number; cli: boolean }[] = [];
  for (const qis of values.qis.split(',').filter(Boolean).map(Number)) {
    const wide = writeWideTable(join(dir, `wide-${qis}`), Number(values.rows), qis, {});
    setLoss(wide.spec, Number(values.time));
    plan.push({
      name: `wide-${qis}`,
      spec: wide.spec,
      rows: Number(values.rows),
      time: Number(values.time),
      cli: false,
    });
  }
  if (Number(values.bank) > 0)
    plan.push({
      name: 'bank',
      spec: bankSpec(join(dir, 'bank'), Number(values.bank)),
      rows: Number(values.bank),
      time: Number(values['bank-time']),
      cli: true,
    });
  let warm = false;
  for (const t of plan) {
    const { run, lossAt } = ppdpRun(t.spec, t.time);
    const prepared = prepareGeneralization(loadSpec(t.spec), readInput(loadSpec(t.spec)), wasmGroupingKernel);
    const entry: Table = {
      name: t.name,
      rows: t.rows,
      qis: prepared.qis.length,
      latticeNodes: prepared.problem.lattice.size,
      timeLimitS: t.time,
      runs: [run],
    };
    tables.push(entry);
    console.log(
      `${t.name}: ${entry.qis} QIs, ${entry.latticeNodes.toExponential(2)} nodes — ppdp Loss ${run.loss.toFixed(4)} ` +
        `(optimum ≥ ${run.lowerBound!.toFixed(4)}) in ${(run.ms / 1000).toFixed(1)} s, ${run.nodesChecked} nodes, ` +
        `stopped by ${run.stoppedBy} (load ${run.loadAverage})`,
    );
    if (arx) {
      await arx.ask(arxConfig(t.spec, join(dir, `${t.name}-arx`)));
      if (!warm) {
        // One short untimed run of each search, so that the JIT is warm for the timed ones.
        for (const a of ALGORITHMS) await arx.ask(`run\talgorithm=${a}\tms=1000`);
        warm = true;
      }
      for (const a of ALGORITHMS) {
        const [, ms, node, loss] = (await arx.ask(`run\talgorithm=${a}\tms=${t.time * 1000}`)).split('\t');
        const found = node !== 'none';
        const r: Run = {
          tool: `arx-${a}`,
          loss: found ? Number(loss) : Number.NaN,
          ...(found ? { ppdpLossAtNode: lossAt(parseNode(node!)) } : {}),
          ms: Math.round(Number(ms)),
          node: found ? parseNode(node!) : {},
          loadAverage: load1(),
        };
        entry.runs.push(r);
        console.log(
          `  ARX ${a}: Loss ${r.loss.toFixed(4)} (ppdp's Loss at its node ${r.ppdpLossAtNode?.toFixed(4)}) ` +
            `in ${(r.ms / 1000).toFixed(1)} s (load ${r.loadAverage})`,
        );
      }
    }
    if (t.cli) {
      entry.cli = cliRun(t.spec, join(dir, `${t.name}-out`));
      console.log(
        `  ppdp release (CLI, default budgets): ${entry.cli!.seconds} s, longest wait between two lines ` +
          `${entry.cli!.longestSearchGapS} s while searching (${entry.cli!.longestGapS} s in all), ` +
          `${entry.cli!.verified ? 'verified' : 'NOT verified'}, Loss ${entry.cli!.loss}`,
      );
    }
  }
} finally {
  arx?.stop();
  rmSync(dir, { recursive: true, force: true });
}

const f = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? '—' : x.toFixed(4));
console.log(
  `\n${table(
    [
      'table',
      'QIs',
      'lattice',
      ...['ppdp', ...ALGORITHMS.map((a) => `ARX ${a}`)].flatMap((t) => [`${t} Loss`, 's']),
      'ppdp bound',
    ],
    tables.map((t) => [
      t.name,
      String(t.qis),
      t.latticeNodes.toExponential(1),
      ...t.runs.flatMap((r) => [f(r.loss), (r.ms / 1000).toFixed(1)]),
      f(t.runs[0]!.lowerBound),
    ]),
  )}`,
);
writeFileSync(
  values.out,
  `${JSON.stringify({ date: new Date().toISOString(), machine: machineInfo(), loss: LOSS, k: 5, maxSuppression: 0.02, tables }, null, 2)}\n`,
);
