/**
 * Peak memory of each state as Lambda runs it (a script, not a test): a synthetic Adult table
 * (bench/synth.ts) released through the sharded route, every state invocation in a fresh
 * `node` running its bundled handler (infra/bundle.ts) against a filesystem store, the way one
 * Lambda invocation runs; peak RSS from process.resourceUsage() at exit. The stack sizes its
 * functions from these figures (docs/deploy.md, Operations). Writes
 * bench/results/state-memory.json.
 *
 * Run: `npm run bench:state-memory [-- --runs 1e6:1e6,4e6:1e6,8e6:1e6,4e6:2e6]` (rows:rows per shard)
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleHandlers } from '../infra/bundle.ts';
import { HANDLER_FILES } from '../infra/stacks/release-stack.ts';
import type { TaskName } from '../src/pipeline/definition.ts';
import type { PlanResult } from '../src/pipeline/states/types.ts';
import { fileUrl } from '../src/pipeline/storage/index.ts';
import { helpIfAsked } from './help.ts';
import { machineInfo } from './scale.ts';
import { parseCount, ROOT, writeSynthetic } from './synth.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: { runs: { type: 'string', default: '1e6:1e6,4e6:1e6,8e6:1e6,4e6:2e6' } },
});
const pairs = values.runs.split(',').map((p) => p.split(':').map(parseCount) as [number, number]);

interface Invocation {
  readonly peakRssMiB: number;
  readonly ms: number;
  /** CPU time (user + system): near `ms` when the state is bound by one core. */
  readonly cpuMs: number;
}

/** One invocation of a state's bundled handler in a fresh node; its output and peak RSS. */
function invoke(
  lambda: string,
  tmp: string,
  task: TaskName,
  input: unknown,
  rowsPerShard = 1_000_000,
): Invocation & { output: unknown } {
  const out = join(tmp, 'invocation.json');
  const handler = pathToFileURL(join(lambda, `${HANDLER_FILES[task]}.mjs`)).href;
  const script = [
    "import { writeFileSync } from 'node:fs';",
    `const { handler } = await import(${JSON.stringify(handler)});`,
    'const t0 = performance.now();',
    'const cpu0 = process.cpuUsage();',
    `const output = await handler(${JSON.stringify(input)});`,
    'const ms = performance.now() - t0;',
    'const cpu = process.cpuUsage(cpu0);',
    'const cpuMs = (cpu.user + cpu.system) / 1000;',
    `writeFileSync(${JSON.stringify(out)}, JSON.stringify({ output, ms, cpuMs, maxRSS: process.resourceUsage().maxRSS }));`,
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: {
      ...process.env,
      PPDP_LOG: 'off',
      PPDP_TMP: tmp,
      PPDP_ROWS_PER_SHARD: String(rowsPerShard),
    },
  });
  if (r.status !== 0) throw new Error(`${task} failed:\n${r.stderr}`);
  const { output, ms, cpuMs, maxRSS } = JSON.parse(readFileSync(out, 'utf8'));
  return { output, ms: Math.round(ms), cpuMs: Math.round(cpuMs), peakRssMiB: Math.round(maxRSS / 1024) };
}

const work = mkdtempSync(join(os.tmpdir(), 'ppdp-state-memory-'));
try {
  const lambda = bundleHandlers(join(work, 'lambda'));
  const tmp = join(work, 'tmp');
  mkdirSync(tmp);
  // The bundle loaded and nothing run: what every function pays before its work.
  const idle = invoke(lambda, tmp, 'ReportFailure', {});
  const runs = [];
  for (const [rows, rowsPerShard] of pairs) {
    const data = await writeSynthetic(join(work, 'in'), { rows, perturb: 0.05, seed: 1 });
    const store = fileUrl(join(work, 'store'), true);
    const states: Partial<Record<TaskName, Invocation & { invocations: number }>> = {};
    const run = (task: TaskName, input: unknown) => {
      const { output, ...measured } = invoke(lambda, tmp, task, input, rowsPerShard);
      const seen = states[task];
      states[task] = {
        peakRssMiB: Math.max(seen?.peakRssMiB ?? 0, measured.peakRssMiB),
        ms: Math.max(seen?.ms ?? 0, measured.ms),
        cpuMs: Math.max(seen?.cpuMs ?? 0, measured.cpuMs),
        invocations: (seen?.invocations ?? 0) + 1,
      };
      const m = measured;
      console.log(
        `${rows}/${rowsPerShard}  ${task.padEnd(10)} ${m.peakRssMiB} MiB  ${m.ms} ms  cpu ${m.cpuMs} ms`,
      );
      return output;
    };
    const plan = run('Plan', { request: { spec: fileUrl(data.spec), store } }) as PlanResult;
    const shard = (index: number) => ({ work: plan.work, index });
    for (let i = 0; i < plan.shards; i++) run('CountShard', shard(i));
    run('Search', { work: plan.work });
    for (let i = 0; i < plan.shards; i++) run('ApplyShard', shard(i));
    for (let index = 0; index < plan.parts; index++) run('Assemble', { work: plan.work, index });
    run('Verify', { work: plan.work });
    run('Publish', { work: plan.work, release: plan.release });
    runs.push({ rows, shards: plan.shards, rowsPerShard, states });
    rmSync(join(work, 'in'), { recursive: true, force: true });
    rmSync(new URL(store), { recursive: true, force: true });
  }
  const output = {
    benchmark: 'state-memory',
    date: new Date().toISOString(),
    machine: machineInfo(),
    settings: {
      data: 'bench/synth.ts, perturb 0.05, seed 1; the sharded (generalization) route',
      note: 'one fresh node per state invocation running its bundled handler (infra/bundle.ts) on a filesystem store; peak RSS = process.resourceUsage().maxRSS; ms and cpuMs = the handler call (wall, user+system); per state the largest over its invocations',
    },
    idleHandlerMiB: idle.peakRssMiB,
    runs,
  };
  const path = join(ROOT, 'bench/results/state-memory.json');
  writeFileSync(path, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`idle handler ${idle.peakRssMiB} MiB; wrote ${path}`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
