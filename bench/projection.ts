/**
 * A release of N rows (default 10^8) on Lambda, projected from the deployed path measured at
 * two sizes (bench/results/deployed.json, `npm run bench:deployed`): a state that sees the
 * whole release (Plan, Search, Verify, Publish) has its peak memory and slowest invocation
 * fitted as a + b·rows through the two measurements (b ≥ 0); a shard, part or slice state
 * does the same work per invocation at any size, so its larger measurement stands; its invocations
 * counted from the plan (one per shard, part or slice), its time scaled to the CPU its
 * function gets (Lambda gives one vCPU per 1,769 MB; the measurement had a core), and its cost
 * priced at Lambda's, Step Functions' and S3's list prices. Prints the table and writes
 * bench/results/projection.json.
 *
 * Run: `npm run bench:projection -- [--rows 100000000]`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_ROWS_PER_PART, DEFAULT_ROWS_PER_SHARD } from '../src/pipeline/states/types.ts';
import { table } from './scale.ts';

const { values } = parseArgs({ options: { rows: { type: 'string', default: '100000000' } } });
const rows = Number(values.rows);

interface Measured {
  invocations: number;
  configuredMiB: number;
  peakMiB: number;
  maxMs: number;
  sumMs: number;
}
const measured = JSON.parse(readFileSync(new URL('./results/deployed.json', import.meta.url), 'utf8')) as {
  machine: { commit: string };
  runs: { rows: number; rowsPerShard: number; states: Record<string, Measured> }[];
};
const [small, large] = [...measured.runs].sort((a, b) => a.rows - b.rows) as [
  (typeof measured.runs)[number],
  (typeof measured.runs)[number],
];
if (!small || !large || small.rows === large.rows) throw new Error('deployed.json needs runs at two sizes');

/** Lambda's limits and list prices (us-east-1, x86). */
const LAMBDA_MAX_MB = 10_240;
const LAMBDA_MAX_S = 900;
const MB_PER_VCPU = 1_769;
const PRICE = {
  gbSecond: 0.0000166667,
  request: 0.2 / 1e6,
  transition: 0.025 / 1000,
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
};

const shards = Math.ceil(rows / DEFAULT_ROWS_PER_SHARD);
const parts = Math.ceil(rows / DEFAULT_ROWS_PER_PART);
const invocationsOf: Record<string, number> = {
  Plan: 1,
  CountShard: shards,
  Search: 1,
  ApplyShard: shards,
  Assemble: parts,
  VerifySlice: shards + parts,
  Verify: 1,
  Publish: 1,
};

/**
 * The states that hold one shard, part or slice: at the default sizes an invocation does the
 * same work at any table size, so the larger measurement (10 shards, 5 parts) stands for it.
 */
const PER_ITEM = new Set(['CountShard', 'ApplyShard', 'Assemble', 'VerifySlice']);

/** a + b·n through the two measurements, b ≥ 0; a per-item state's larger measurement. */
function projected(pick: (m: Measured) => number, state: string): (n: number) => number {
  if (PER_ITEM.has(state)) return () => pick(large.states[state]!);
  const y0 = pick(small.states[state]!);
  const y1 = pick(large.states[state]!);
  const b = Math.max(0, (y1 - y0) / (large.rows - small.rows));
  const a = y1 - b * large.rows;
  return (n) => a + b * n;
}

const states = Object.keys(invocationsOf).map((state) => {
  const m = large.states[state]!;
  const peakMiB = projected((x) => x.peakMiB, state)(rows);
  const slowestS =
    (projected((x) => x.maxMs, state)(rows) / 1000) * Math.max(1, MB_PER_VCPU / m.configuredMiB);
  // Each invocation's time: the per-invocation mean at the large run, scaled like the slowest.
  const meanS = (m.sumMs / m.invocations / m.maxMs) * slowestS;
  const invocations = invocationsOf[state]!;
  const gbSeconds = ((invocations * meanS * m.configuredMiB) / 1024) * 1;
  return {
    state,
    invocations,
    configuredMiB: m.configuredMiB,
    peakMiB: Math.round(peakMiB),
    slowestS: Math.round(slowestS * 10) / 10,
    fits: peakMiB <= m.configuredMiB && peakMiB <= LAMBDA_MAX_MB && slowestS <= LAMBDA_MAX_S,
    gbSeconds: Math.round(gbSeconds),
  };
});

// Requests: per shard its rows written and read, counts, flags, pieces of every part, a
// slice; per part its pieces read, two files, a slice; a few per state besides.
const s3Puts = shards * (1 + 2 + 1 + parts + 2) + parts * (2 + 2) + 20;
const s3Gets = shards * (2 + 3 + 2) + parts * (shards + 3) + (shards + parts) + 40;
const transitions = 12 + 2 * (2 * shards + parts + shards + parts);
const requests = states.reduce((n, s) => n + s.invocations, 0);
const gbSeconds = states.reduce((n, s) => n + s.gbSeconds, 0);
const cost = {
  lambda: gbSeconds * PRICE.gbSecond + requests * PRICE.request,
  stepFunctions: transitions * PRICE.transition,
  s3: s3Puts * PRICE.s3Put + s3Gets * PRICE.s3Get,
};
// The critical path: the single states, plus each map's slowest item (the maps run their
// items at once: 100 at a time by default).
const wallS = states.reduce((t, s) => t + s.slowestS * Math.ceil(s.invocations / 100), 0);

console.log(
  `${rows.toLocaleString('en')} rows: ${shards} shards, ${parts} parts (from ${small.rows} and ${large.rows} rows measured at ${measured.machine.commit})`,
);
console.log(
  table(
    ['state', 'invocations', 'configured MiB', 'peak MiB', 'slowest s', 'fits', 'GB-s'],
    states.map((s) => [
      s.state,
      String(s.invocations),
      String(s.configuredMiB),
      String(s.peakMiB),
      s.slowestS.toFixed(1),
      s.fits ? 'yes' : 'NO',
      String(s.gbSeconds),
    ]),
  ),
);
console.log(
  `critical path ≈ ${Math.round(wallS)} s of state time; cost ≈ $${(cost.lambda + cost.stepFunctions + cost.s3).toFixed(2)} ` +
    `(Lambda $${cost.lambda.toFixed(2)}, Step Functions $${cost.stepFunctions.toFixed(2)}, S3 requests $${cost.s3.toFixed(2)})`,
);
writeFileSync(
  new URL('./results/projection.json', import.meta.url),
  `${JSON.stringify({ rows, shards, parts, from: { commit: measured.machine.commit, rows: [small.rows, large.rows] }, states, transitions, s3: { puts: s3Puts, gets: s3Gets }, cost, criticalPathS: Math.round(wallS) }, null, 2)}\n`,
);
