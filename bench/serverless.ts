/**
 * Serverless pipeline benchmark (a script, not a test): the Adult spec over N synthetic rows
 * sampled from Adult (with a fixed seed; half of them take the age of another row), released through the local engine (the state
 * machine in-process, filesystem store) with 1, 2 and 4 row shards, plus the CLI's cold start
 * on Adult itself with both engines. Records each state's wall time from report.json, and
 * the sum and slowest shard of the shard states, so the Lambda fan-out can be projected
 * (docs/deploy.md). Writes bench/results/serverless.json.
 *
 * Run: `npx tsx bench/serverless.ts [--rows 1000000,5000000] [--shards 1,2,4] [--cold 5]`
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { executeRelease } from '../src/pipeline/engine.ts';
import { ADULT, sampled } from './adult-sample.ts';
import { helpIfAsked } from './help.ts';

helpIfAsked(import.meta.url);

const ROOT = new URL('../', import.meta.url).pathname;

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000,5000000' },
    shards: { type: 'string', default: '1,2,4' },
    cold: { type: 'string', default: '5' },
  },
});
const sizes = values.rows.split(',').map(Number);
const shardCounts = values.shards.split(',').map(Number);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const results: Record<string, unknown>[] = [];
for (const rows of sizes) {
  const input = await sampled(rows);
  for (const shards of shardCounts) {
    const out = join(input.dir, `out-${shards}`);
    const t0 = performance.now();
    const r = await executeRelease({ spec: input.spec, out, shards });
    const wall = Math.round(performance.now() - t0);
    const t = r.report.timings;
    const row = {
      rows,
      inputBytes: input.bytes,
      shards,
      wallMs: wall,
      states: {
        plan: t.plan,
        countSum: t.count,
        countMax: t.countMax,
        merge: t.merge,
        search: t.search,
        applySum: t.apply,
        applyMax: t.applyMax,
        assemble: t.assemble,
        verify: t.verify,
      },
      distinctTuples: r.report.generalization?.distinctTuples,
      utility: { metric: r.report.utility.metric, value: r.report.utility.value },
      node: r.report.generalization?.node,
    };
    results.push(row);
    console.log(JSON.stringify(row));
    rmSync(out, { recursive: true, force: true });
  }
  rmSync(input.dir, { recursive: true, force: true });
}

// The CLI's cold start on Adult: both engines, median of N spawns.
const cold: Record<string, number> = {};
const coldRuns = Number(values.cold);
if (coldRuns > 0) {
  const tmp = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-cold-'));
  for (const engine of ['local', 'direct']) {
    const times: number[] = [];
    for (let i = 0; i < coldRuns; i++) {
      const t0 = performance.now();
      const r = spawnSync(
        process.execPath,
        [
          join(ROOT, 'bin/ppdp.mjs'),
          'release',
          join(ADULT, 'release.json'),
          '--out',
          join(tmp, engine),
          '--quiet',
          '--engine',
          engine,
        ],
        { encoding: 'utf8' },
      );
      if (r.status !== 0) throw new Error(r.stderr);
      times.push(performance.now() - t0);
    }
    cold[engine] = Math.round(median(times));
  }
  rmSync(tmp, { recursive: true, force: true });
  console.log('cold CLI (median ms):', cold);
}

mkdirSync(join(ROOT, 'bench/results'), { recursive: true });
writeFileSync(
  join(ROOT, 'bench/results/serverless.json'),
  `${JSON.stringify(
    {
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        node: process.version,
        loadavg: os.loadavg(),
      },
      at: new Date().toISOString(),
      engine: 'local (aws-local-stepfunctions, filesystem store)',
      runs: results,
      coldCliMs: cold,
    },
    null,
    2,
  )}\n`,
);
