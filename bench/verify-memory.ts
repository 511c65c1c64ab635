/**
 * Memory of a sharded release's verification (a script, not a test): a registry-shaped table
 * (bench/registry-sample.ts) released through the sharded route on a filesystem store, every
 * state invocation in a fresh `node` running its bundled handler (infra/bundle.ts), as one
 * Lambda invocation runs. Per size: the peak RSS of the largest VerifySlice and of Verify, and
 * the bytes the slices write (verify/) per input row. Writes bench/results/verify-memory.json
 * (the runs of earlier commits are kept, so a change's before and after stand side by side).
 *
 * Run: `npx tsx bench/verify-memory.ts [--rows 1e6,3e6] [--rows-per-part 1e6] [--label after]`
 */
import { spawnSync } from 'node:child_process';
import {
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
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { bundleHandlers } from '../infra/bundle.ts';
import { HANDLER_FILES } from '../infra/stacks/release-stack.ts';
import type { TaskName } from '../src/pipeline/definition.ts';
import type { PlanResult } from '../src/pipeline/states/types.ts';
import { fileUrl } from '../src/pipeline/storage/index.ts';
import { helpIfAsked } from './help.ts';
import { registrySample } from './registry-sample.ts';
import { machineInfo } from './scale.ts';
import { parseCount, ROOT } from './synth.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1e6,3e6' },
    'rows-per-part': { type: 'string', default: '1e6' },
    label: { type: 'string', default: 'current' },
  },
});
const sizes = values.rows.split(',').map(parseCount);
const rowsPerPart = parseCount(values['rows-per-part']);

/** One invocation of a state's bundled handler in a fresh node: its output and peak RSS. */
function invoke(lambda: string, tmp: string, task: TaskName, input: unknown) {
  const out = join(tmp, 'invocation.json');
  const handler = pathToFileURL(join(lambda, `${HANDLER_FILES[task]}.mjs`)).href;
  const script = [
    "import { writeFileSync } from 'node:fs';",
    `const { handler } = await import(${JSON.stringify(handler)});`,
    'const t0 = performance.now();',
    `const output = await handler(${JSON.stringify(input)});`,
    'const ms = performance.now() - t0;',
    `writeFileSync(${JSON.stringify(out)}, JSON.stringify({ output, ms, maxRSS: process.resourceUsage().maxRSS }));`,
  ].join('\n');
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    encoding: 'utf8',
    env: { ...process.env, PPDP_LOG: 'off', PPDP_TMP: tmp },
  });
  if (r.status !== 0) throw new Error(`${task} failed:\n${r.stderr}`);
  const { output, ms, maxRSS } = JSON.parse(readFileSync(out, 'utf8'));
  return { output, ms: Math.round(ms), peakMiB: Math.round(maxRSS / 1024) };
}

/** The bytes of every file under `dir`. */
function bytesUnder(dir: string): number {
  if (!existsSync(dir)) return 0;
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .reduce((n, e) => n + statSync(join(e.parentPath, e.name)).size, 0);
}

const path = join(ROOT, 'bench/results/verify-memory.json');
const kept = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')).runs : [];
/** Writes the results so far (a long run keeps the sizes it finished). */
function save(runs: unknown[]): void {
  const output = {
    benchmark: 'verify-memory',
    settings: {
      data: 'bench/registry-sample.ts; 10^6 rows per shard',
      rowsPerPart,
      note: 'one fresh node per state invocation running its bundled handler (infra/bundle.ts) on a filesystem store; peak RSS = process.resourceUsage().maxRSS, the largest over a state’s invocations; sliceBytes = the files VerifySlice wrote under verify/',
    },
    runs: [...kept.filter((r: { label: string }) => r.label !== values.label), ...runs],
  };
  writeFileSync(path, `${JSON.stringify(output, null, 2)}\n`);
  console.log(`wrote ${path}`);
}

const work = mkdtempSync(join(os.tmpdir(), 'ppdp-verify-memory-'));
const runs: unknown[] = [];
try {
  const lambda = bundleHandlers(join(work, 'lambda'));
  const tmp = join(work, 'tmp');
  mkdirSync(tmp);
  for (const rows of sizes) {
    const data = await registrySample(rows);
    const storeDir = join(work, 'store');
    const store = fileUrl(storeDir, true);
    const peaks: Record<string, { peakMiB: number; ms: number; invocations: number }> = {};
    const run = (task: TaskName, input: unknown, label: string = task) => {
      const { output, ...m } = invoke(lambda, tmp, task, input);
      const seen = peaks[label];
      peaks[label] = {
        peakMiB: Math.max(seen?.peakMiB ?? 0, m.peakMiB),
        ms: Math.max(seen?.ms ?? 0, m.ms),
        invocations: (seen?.invocations ?? 0) + 1,
      };
      console.log(`${rows}  ${label.padEnd(16)} ${m.peakMiB} MiB  ${m.ms} ms`);
      return output;
    };
    const plan = run('Plan', {
      request: { spec: fileUrl(data.spec), store, rowsPerShard: 1_000_000, rowsPerPart },
    }) as PlanResult;
    const shard = (index: number) => ({ work: plan.work, index });
    for (let i = 0; i < plan.shards; i++) run('CountShard', shard(i));
    run('Search', { work: plan.work });
    for (let i = 0; i < plan.shards; i++) run('ApplyShard', shard(i));
    for (let index = 0; index < plan.parts; index++) run('Assemble', { work: plan.work, index });
    for (let i = 0; i < plan.shards; i++)
      run('VerifySlice', { ...shard(i), kind: 'shard' }, 'VerifySlice shard');
    for (let i = 0; i < plan.parts; i++)
      run('VerifySlice', { ...shard(i), kind: 'part' }, 'VerifySlice part');
    const sliceBytes = bytesUnder(join(new URL(plan.work).pathname, 'verify'));
    run('Verify', { work: plan.work });
    runs.push({
      label: values.label,
      rows,
      shards: plan.shards,
      parts: plan.parts,
      sliceBytes,
      sliceBytesPerRow: Math.round((sliceBytes / rows) * 10) / 10,
      states: Object.fromEntries(
        ['VerifySlice shard', 'VerifySlice part', 'Verify', 'Search'].map((s) => [s, peaks[s]]),
      ),
      machine: machineInfo(),
    });
    save(runs);
    rmSync(data.dir, { recursive: true, force: true });
    rmSync(storeDir, { recursive: true, force: true });
  }
} finally {
  rmSync(work, { recursive: true, force: true });
}
