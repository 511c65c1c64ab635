/**
 * The deployed path measured (a script, not a test): Adult-shaped inputs of N rows dropped in
 * an s3rver bucket, released by the synthesized state machine with every Task its bundled
 * Lambda handler in its own process (test/harness/deployed.ts). Memory limits are measured,
 * not enforced: each state's peak resident memory and time are recorded next to the memory
 * its function is configured with, so the states that would not fit in Lambda show.
 * Writes bench/results/deployed.json.
 *
 * Run: `npm run bench:deployed -- [--rows 1000000,10000000] [--rows-per-shard 1000000]
 *   [--rows-per-part 2000000] [--shape adult|registry]` (runs are kept per size and part size)
 * (registry: the near-unique table of bench/registry-sample.ts; results in deployed-registry.json)
 */
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_ROWS_PER_PART } from '../src/pipeline/states/types.ts';
import { deployLocally, type Invocation, runDeployed } from '../test/harness/deployed.ts';
import { sampled } from './adult-sample.ts';
import { registrySample } from './registry-sample.ts';
import { machineInfo, table } from './scale.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000,10000000' },
    'rows-per-shard': { type: 'string', default: '1000000' },
    'rows-per-part': { type: 'string', default: String(DEFAULT_ROWS_PER_PART) },
    shape: { type: 'string', default: 'adult' },
  },
});
if (values.shape !== 'adult' && values.shape !== 'registry') throw new Error('--shape is adult or registry');
const sample = values.shape === 'registry' ? registrySample : sampled;
const sizes = values.rows.split(',').map(Number);
const rowsPerShard = values['rows-per-shard'];
const rowsPerPart = Number(values['rows-per-part']);

const { deployed, s3, store, dispose } = await deployLocally('ppdp-bench', { maxAttempts: 3 });

interface StateFigures {
  invocations: number;
  configuredMiB: number;
  peakMiB: number;
  maxMs: number;
  sumMs: number;
  fits: boolean;
}

function byState(invocations: readonly Invocation[]): Record<string, StateFigures> {
  const out: Record<string, StateFigures> = {};
  for (const i of invocations) {
    const s = (out[i.state] ??= {
      invocations: 0,
      configuredMiB: i.memoryMiB,
      peakMiB: 0,
      maxMs: 0,
      sumMs: 0,
      fits: true,
    });
    s.invocations++;
    s.peakMiB = Math.max(s.peakMiB, Math.round(i.peakMiB));
    s.maxMs = Math.max(s.maxMs, Math.round(i.ms));
    s.sumMs += Math.round(i.ms);
    s.fits = s.peakMiB <= s.configuredMiB;
  }
  return out;
}

const runs: Record<string, unknown>[] = [];
try {
  for (const rows of sizes) {
    const input = await sample(rows);
    const name = `${values.shape}-${rows}`;
    for (const f of readdirSync(input.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json')))
      await store.put(`inbox/${name}/${f}`, readFileSync(join(input.dir, f)));
    rmSync(input.dir, { recursive: true, force: true });
    process.stderr.write(`${rows} rows uploaded (${Math.round(input.bytes / 2 ** 20)} MiB), running…\n`);
    const t0 = performance.now();
    const result = await runDeployed(
      deployed,
      { spec: `s3://ppdp-bench/inbox/${name}/release.json`, rowsPerPart },
      {
        s3: s3.options({ maxAttempts: 3 }),
        env: { PPDP_ROWS_PER_SHARD: rowsPerShard, PPDP_LOG: 'off' },
        enforceMemory: false,
      },
    );
    const wallMs = Math.round(performance.now() - t0);
    if (!result.ok) throw new Error(`${rows} rows: ${result.error?.name}: ${result.error?.message}`);
    const states = byState(result.invocations);
    runs.push({
      shape: values.shape,
      rows,
      inputBytes: input.bytes,
      rowsPerShard: Number(rowsPerShard),
      rowsPerPart,
      wallMs,
      states,
      machine: machineInfo(),
      at: new Date().toISOString(),
    });
    console.log(`\n${rows.toLocaleString('en')} rows, wall ${(wallMs / 1000).toFixed(1)} s`);
    console.log(
      table(
        ['state', 'invocations', 'configured MiB', 'peak MiB', 'max s', 'fits'],
        Object.entries(states).map(([state, s]) => [
          state,
          String(s.invocations),
          String(s.configuredMiB),
          String(s.peakMiB),
          (s.maxMs / 1000).toFixed(1),
          s.fits ? 'yes' : 'NO',
        ]),
      ),
    );
    for (const o of await store.list('')) if (!o.key.startsWith('inbox/')) await store.delete([o.key]);
    await store.delete((await store.list(`inbox/${name}/`)).map((o) => o.key));
  }
} finally {
  await dispose();
}

// Runs accumulate per size: a run replaces an earlier one of the same size and keeps the others,
// so sizes measured at different times (each with its machine and commit) are fitted together.
const resultFile = new URL(
  `./results/deployed${values.shape === 'adult' ? '' : `-${values.shape}`}.json`,
  import.meta.url,
);
const earlier = existsSync(resultFile)
  ? (JSON.parse(readFileSync(resultFile, 'utf8')) as { runs: Record<string, unknown>[] }).runs
  : [];
const sameRun = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  a.rows === b.rows && (a.rowsPerPart ?? DEFAULT_ROWS_PER_PART) === (b.rowsPerPart ?? DEFAULT_ROWS_PER_PART);
const kept = earlier.filter((r) => !runs.some((n) => sameRun(n, r)));
writeFileSync(
  resultFile,
  `${JSON.stringify({ shape: values.shape, harness: 'bundled handlers, one process per invocation, s3rver', runs: [...kept, ...runs].sort((a, b) => Number(a.rows) - Number(b.rows)) }, null, 2)}\n`,
);
