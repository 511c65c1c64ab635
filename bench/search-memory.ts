/**
 * Where the Search state's bytes and seconds per distinct tuple go (a script, not a test): a
 * registry-shaped table (bench/registry-sample.ts, ~99.9 % distinct quasi-identifier tuples) of
 * each size is planned and counted per shard by the real states on a filesystem store; then a
 * fresh `node` runs the Search state's work on it (src/pipeline/states/search.ts `searchWork`,
 * reading the shards' counts from the store as a Lambda does) while a worker thread samples
 * the process's RSS every few milliseconds. Per phase (the state's own timed phases; `read` is
 * everything before the first, `write` everything after the last): its time, the peak RSS
 * while it ran, and RSS / V8 heap / array buffers when it ended. Writes
 * bench/results/search-memory.json.
 *
 * With `--search-mb <MB>` the Search state's budget is that of a function of that memory (as
 * deployed): a budget without room for one WASM instance of every tuple groups them in parts
 * (src/kernels/groupby/chunked.ts); without it, the machine's memory is the budget.
 *
 * Run: `npx tsx bench/search-memory.ts [--rows 1e6,3e6] [--label after] [--search-mb 1536] [--ride-along]`
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { STATE_MEMORY_ENV } from '../src/data/limits.ts';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { forgetAll } from '../src/pipeline/memo.ts';
import { combine } from '../src/pipeline/states/combine.ts';
import { countShard } from '../src/pipeline/states/count-shard.ts';
import { plan } from '../src/pipeline/states/plan.ts';
import { scanPiece } from '../src/pipeline/states/scan-piece.ts';
import { searchWork } from '../src/pipeline/states/search.ts';
import type { PhaseEnv } from '../src/pipeline/states/types.ts';
import { openWork } from '../src/pipeline/states/work.ts';
import { fileUrl, getJson, storeResolver } from '../src/pipeline/storage/index.ts';
import { helpIfAsked } from './help.ts';
import { registrySample } from './registry-sample.ts';
import { machineInfo } from './scale.ts';
import { parseCount } from './synth.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1e6,3e6' },
    label: { type: 'string', default: 'current' },
    /** The Search function's memory (MB) the state's budget comes from; absent: the machine's. */
    'search-mb': { type: 'string' },
    /** Keep each sample's folder and work area (to run the child on it again). */
    keep: { type: 'boolean', default: false },
    /** The registry table with its ride-along columns, cut into shards as deployed (fewer rows a shard). */
    'ride-along': { type: 'boolean', default: false },
    /** A checkout of the code before (its bench/search-memory.ts): measured first, as `before`. */
    compare: { type: 'string' },
    /** Internal: run the Search state's work on this work area and print the figures. */
    child: { type: 'string' },
  },
});

const MiB = 2 ** 20;
const env = (): PhaseEnv => ({
  stores: storeResolver(),
  kernel: wasmGroupingKernel,
  log: () => {},
  rowsPerShard: 1_000_000,
});

interface Phase {
  readonly phase: string;
  readonly ms: number;
  readonly peakRssMiB: number;
  readonly endRssMiB: number;
  readonly endHeapMiB: number;
  readonly endArrayBuffersMiB: number;
}

/** The child: the Search state's work, its phases timed and its RSS sampled. */
async function child(workUrl: string): Promise<void> {
  const sampler = new Worker(
    `const { parentPort } = require('node:worker_threads');
     const samples = [];
     const tick = setInterval(() => samples.push(Date.now(), process.memoryUsage.rss()), 2);
     parentPort.on('message', () => { clearInterval(tick); parentPort.postMessage(samples); });`,
    { eval: true },
  );
  const e = env();
  const work = await openWork(workUrl, e);
  const marks: { phase: string; start: number; end: number; mem: NodeJS.MemoryUsage }[] = [];
  const t0 = Date.now();
  const cpu0 = process.cpuUsage();
  await searchWork(work, e, (phase, run) => {
    const start = Date.now();
    try {
      return run();
    } finally {
      marks.push({ phase, start, end: Date.now(), mem: process.memoryUsage() });
    }
  });
  const t1 = Date.now();
  const cpu = process.cpuUsage(cpu0);
  const endMem = process.memoryUsage();
  const samples = await new Promise<number[]>((resolve) => {
    sampler.once('message', resolve);
    sampler.postMessage('stop');
  });
  await sampler.terminate();
  // Phases as they ran, gaps between the timed ones included in the next (read) or the last (write).
  const spans: { phase: string; start: number; end: number; mem: NodeJS.MemoryUsage }[] = [];
  let at = t0;
  for (const m of [...marks, { phase: 'write', start: t1, end: t1, mem: endMem }]) {
    // Untimed work between two phases: named after the phase it comes before.
    if (m.start - at > 2)
      spans.push({
        phase: spans.length === 0 ? 'read' : `before ${m.phase}`,
        start: at,
        end: m.start,
        mem: m.mem,
      });
    if (m.end > m.start || m.phase !== 'write') spans.push(m);
    at = m.end;
  }
  const peakIn = (start: number, end: number) => {
    let peak = 0;
    for (let i = 0; i < samples.length; i += 2)
      if (samples[i]! >= start && samples[i]! <= end) peak = Math.max(peak, samples[i + 1]!);
    return peak;
  };
  const round = (x: number) => Math.round(x * 10) / 10;
  const phases: Phase[] = spans.map((s) => ({
    phase: s.phase,
    ms: s.end - s.start,
    peakRssMiB: round(peakIn(s.start, s.end) / MiB),
    endRssMiB: round(s.mem.rss / MiB),
    endHeapMiB: round(s.mem.heapUsed / MiB),
    endArrayBuffersMiB: round(s.mem.arrayBuffers / MiB),
  }));
  const search = await getJson<{ report: { generalization: { distinctTuples: number } } }>(
    work.loc.store,
    work.key('search.json'),
  );
  process.stdout.write(
    JSON.stringify({
      ms: t1 - t0,
      cpuMs: Math.round((cpu.user + cpu.system) / 1000),
      peakRssMiB: round(process.resourceUsage().maxRSS / 1024),
      distinctTuples: search.report.generalization.distinctTuples,
      phases,
    }),
  );
}

if (values.child) {
  await child(values.child);
} else {
  const out = new URL('./results/search-memory.json', import.meta.url);
  const previous = existsSync(out) ? JSON.parse(readFileSync(out, 'utf8')) : { runs: [] };
  const runs: ({ label: string; rows: number } & Record<string, unknown>)[] = [];
  const searchMb = values['search-mb'] ? Number(values['search-mb']) : undefined;
  for (const rows of values.rows ? values.rows.split(',').map(parseCount) : []) {
    const sample = await registrySample(rows, { rideAlong: values['ride-along'] });
    const store = join(sample.dir, 'store');
    const e = env();
    const started = await plan({ request: { spec: fileUrl(sample.spec), store: fileUrl(store, true) } }, e);
    // As the engine runs them: the pieces scanned, then Combine's plan (its shards) replaces Plan's.
    for (let index = 0; index < started.pieces; index++) await scanPiece({ work: started.work, index }, e);
    const planned = await combine({ work: started.work }, e);
    let shardTuples = 0;
    for (let index = 0; index < planned.shards; index++)
      shardTuples += (await countShard({ work: planned.work, index }, e)).tuples;
    forgetAll();
    const variants: [string, string][] = [
      ...(values.compare
        ? [['before', join(values.compare, 'bench/search-memory.ts')] as [string, string]]
        : []),
      [values.label, fileURLToPath(import.meta.url)],
    ];
    for (const [label, script] of variants) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', script, '--child', planned.work], {
        encoding: 'utf8',
        maxBuffer: 64 * MiB,
        cwd: dirname(script),
        env: searchMb
          ? { ...process.env, [STATE_MEMORY_ENV]: JSON.stringify({ Search: searchMb }) }
          : process.env,
      });
      if (r.status !== 0) throw new Error(`the search child failed:\n${r.stderr}`);
      const measured = JSON.parse(r.stdout);
      const n = measured.distinctTuples as number;
      const run = {
        label,
        rows,
        ...(searchMb ? { searchMb } : {}),
        shards: planned.shards,
        shardTuples,
        ...measured,
        bytesPerTuple: Math.round((measured.peakRssMiB * MiB) / n),
        msPerMillionTuples: Math.round((measured.ms / n) * 1e6),
        cpuMsPerMillionTuples: Math.round((measured.cpuMs / n) * 1e6),
      };
      console.log(
        `${label} ${rows} rows (${n} distinct tuples, ${planned.shards} shards): peak ${measured.peakRssMiB} MiB ` +
          `(${run.bytesPerTuple} B/tuple), ${measured.ms} ms, cpu ${measured.cpuMs} ms (${run.cpuMsPerMillionTuples} ms per 10^6 tuples)`,
      );
      for (const p of measured.phases as Phase[])
        console.log(
          `  ${p.phase.padEnd(18)} ${String(p.ms).padStart(7)} ms  peak ${p.peakRssMiB} MiB  end rss ${p.endRssMiB} heap ${p.endHeapMiB} buffers ${p.endArrayBuffersMiB}`,
        );
      runs.push(run);
    }
    if (values.keep) console.log(`  kept: --child ${planned.work}`);
    else rmSync(sample.dir, { recursive: true, force: true });
  }
  const kept = (previous.runs as { label: string; rows: number }[]).filter(
    (r) => !runs.some((x) => x.label === r.label && x.rows === r.rows),
  );
  writeFileSync(
    out,
    `${JSON.stringify(
      {
        benchmark: 'search-memory',
        date: new Date().toISOString(),
        machine: machineInfo(),
        settings: {
          data: 'bench/registry-sample.ts (k = 5, 2 % suppression, NCP), 10^6 rows per shard',
          note: 'the Search state (searchWork) in a fresh node reading the counts from a filesystem store; peak RSS sampled every 2 ms by a worker thread and maxRSS at exit; bytes per tuple = peak RSS / distinct tuples (the node process itself included)',
        },
        runs: [...kept, ...runs],
        perTuple: perTuple([...kept, ...runs] as unknown as Measured[]),
      },
      null,
      2,
    )}\n`,
  );
}

interface Measured {
  label: string;
  distinctTuples: number;
  peakRssMiB: number;
  ms: number;
  cpuMs: number;
}

/**
 * Per label, between its smallest and largest run: bytes, wall and CPU time per distinct tuple
 * (the slope, which leaves out the process's fixed cost), and the peak and time those slopes
 * project for 10^8 distinct tuples, assuming both grow linearly in the distinct tuples.
 */
function perTuple(all: Measured[]) {
  const labels = [...new Set(all.map((r) => r.label))];
  return Object.fromEntries(
    labels.flatMap((label) => {
      const runs = all.filter((r) => r.label === label).sort((a, b) => a.distinctTuples - b.distinctTuples);
      const [lo, hi] = [runs[0]!, runs.at(-1)!];
      const dn = hi.distinctTuples - lo.distinctTuples;
      if (dn <= 0) return [];
      const bytes = ((hi.peakRssMiB - lo.peakRssMiB) * MiB) / dn;
      const cpuMs = (hi.cpuMs - lo.cpuMs) / dn;
      const ms = (hi.ms - lo.ms) / dn;
      const at = (x: number, slope: number) => x + slope * (1e8 - hi.distinctTuples);
      return [
        [
          label,
          {
            fromTuples: [lo.distinctTuples, hi.distinctTuples],
            bytesPerTuple: Math.round(bytes),
            cpuMsPerMillionTuples: Math.round(cpuMs * 1e6),
            msPerMillionTuples: Math.round(ms * 1e6),
            at1e8: {
              peakMiB: Math.round(at(hi.peakRssMiB, bytes / MiB)),
              cpuS: Math.round(at(hi.cpuMs, cpuMs) / 1000),
              wallS: Math.round(at(hi.ms, ms) / 1000),
            },
          },
        ],
      ];
    }),
  );
}
