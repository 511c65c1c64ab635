/**
 * A release of N rows on Lambda, projected from the deployed path measured at three or more
 * sizes of one shape of table (`npm run bench:deployed -- --shape adult|registry`, results in
 * bench/results/deployed.json and deployed-registry.json):
 * - a state that sees the whole release (Plan, Combine, Search, Verify, Publish) has its peak memory and
 *   slowest invocation fitted as a + b·rows by least squares over every measured size (b ≥ 0):
 *   what it holds (distinct values, tuples, classes) grows at most with the rows, so the line
 *   through sizes where it still grows bounds it from above;
 * - a shard, part or slice state does the same work per invocation whatever the table's size:
 *   its largest measurement stands, and its spread over the sizes is reported (flat within
 *   15 % is the claim the projection rests on);
 * its invocations counted from the plan (one per shard, part or slice), its memory the stack's
 * size or, where the peak passes it, the size a deployment sets with ppdp:memoryMb (a tenth
 * spare, up to Lambda's 10,240 MB), its time scaled to the CPU that memory gets (Lambda gives
 * one vCPU per 1,769 MB; the code is single-threaded and the measurement had a core), and its
 * cost priced at Lambda's, Step Functions' and S3's list prices. Only runs of a CSV input with
 * the default outputs that ended with a published release count, the latest of each size: one
 * file, or with `--rows-per-file F` a folder of files of F rows, whose scan (ScanPiece, one
 * invocation per file) is then a per-item state, projected for a folder of such files.
 * With `--ride-along` (registry), the runs of the table with its ride-along columns
 * (bench:deployed --ride-along): shards and parts counted at the rows per shard and part those
 * runs' plans cut (fewer than the defaults: their rows carry the columns' bytes), and the Audit
 * state, which sees the whole release, fitted as the other single states.
 * Prints the table and writes bench/results/projection-<shape>[-ride-along][-files].json.
 *
 * Run: `npm run bench:projection -- [--shape adult|registry] [--ride-along] [--rows 100000000] [--rows-per-file 1000000]`
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { DEFAULT_ROWS_PER_PART, DEFAULT_ROWS_PER_SHARD } from '../src/pipeline/states/types.ts';
import { helpIfAsked } from './help.ts';
import { table } from './scale.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000000' },
    shape: { type: 'string', default: 'adult' },
    'rows-per-file': { type: 'string' },
    'ride-along': { type: 'boolean', default: false },
  },
});
const rideAlong = values['ride-along'];
const rows = Number(values.rows);
const shape = values.shape;
/** Rows per input file (a folder of files), or undefined for one file. */
const rowsPerFile = values['rows-per-file'] === undefined ? undefined : Number(values['rows-per-file']);

interface Measured {
  invocations: number;
  configuredMiB: number;
  peakMiB: number;
  maxMs: number;
  sumMs: number;
}
interface Run {
  rows: number;
  rowsPerShard: number;
  rowsPerPart?: number;
  /** The input's kind (csv when absent) and the spec's output formats (Arrow and CSV when absent). */
  input?: string;
  outputFormats?: string[];
  /** Whether the run ended with a verified, published release (absent in older runs). */
  ok?: boolean;
  /** A CSV cut into a folder of files of this many rows (absent: one file). */
  rowsPerFile?: number;
  at?: string;
  /** Runs of the registry table with its ride-along columns, and the rows their plans cut. */
  rideAlong?: boolean;
  planned?: { rowsPerShard: number; rowsPerPart: number };
  states: Record<string, Measured>;
  machine?: { commit?: string };
}
const measured = JSON.parse(
  readFileSync(
    new URL(`./results/deployed${shape === 'adult' ? '' : `-${shape}`}.json`, import.meta.url),
    'utf8',
  ),
) as { runs: Run[] };
const partsOf = (r: Run) => r.rowsPerPart ?? DEFAULT_ROWS_PER_PART;
// Runs at the default part size (what a deployment uses; the others only show flatness) of one
// CSV input with the default outputs that ended well, the latest per size.
/** Runs of the deployed sizing (default shards, one CSV input, default outputs) that ended well, the latest per size and part size. */
function comparable(): Run[] {
  const latest = new Map<string, Run>();
  for (const r of measured.runs) {
    if (
      r.rowsPerShard !== DEFAULT_ROWS_PER_SHARD ||
      (r.input ?? 'csv') !== 'csv' ||
      r.outputFormats ||
      r.ok === false ||
      r.rowsPerFile !== rowsPerFile ||
      (r.rideAlong ?? false) !== rideAlong ||
      (rideAlong && (!r.planned || !r.states.Audit)) ||
      // Runs from before the scan was its own state.
      !r.states.ScanPiece
    )
      continue;
    const key = `${r.rows}/${partsOf(r)}`;
    const was = latest.get(key);
    if (!was || (r.at ?? '') >= (was.at ?? '')) latest.set(key, r);
  }
  return [...latest.values()].sort((a, b) => a.rows - b.rows);
}
const runs = comparable().filter((r) => partsOf(r) === DEFAULT_ROWS_PER_PART);
if (new Set(runs.map((r) => r.rows)).size < 3) {
  throw new Error(
    `the ${shape} measurements need three sizes or more (bench:deployed -- --shape ${shape} --rows …)`,
  );
}
const large = runs.at(-1)!;

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

// Rows with ride-along columns are cut finer, as the largest run's plan cut them.
const shards = Math.ceil(rows / (large.planned?.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD));
const parts = Math.ceil(rows / (large.planned?.rowsPerPart ?? DEFAULT_ROWS_PER_PART));
const files = rowsPerFile ? Math.ceil(rows / rowsPerFile) : 1;
// A CSV file read in ranges (more scans than files at the largest size): a scan a range, each
// of about as many rows at any size, so a per-item state.
const scansPerFile =
  (large.states.ScanPiece?.invocations ?? 1) / (rowsPerFile ? Math.ceil(large.rows / rowsPerFile) : 1);
const ranged = scansPerFile > 1;
const scans = ranged ? Math.ceil((rows / large.rows) * large.states.ScanPiece!.invocations) : files;
const invocationsOf: Record<string, number> = {
  Plan: 1,
  ScanPiece: scans,
  Combine: 1,
  CountShard: shards,
  Search: 1,
  ApplyShard: shards,
  Assemble: parts,
  VerifySlice: shards + parts,
  ...(large.states.Audit ? { Audit: 1 } : {}),
  Verify: 1,
  Publish: 1,
};

/**
 * The states that hold one shard, part or slice: at the default sizes an invocation does the
 * same work at any table size, so the larger measurement (10 shards, 5 parts) stands for it.
 */
const PER_ITEM = new Set([
  'CountShard',
  'ApplyShard',
  'Assemble',
  'VerifySlice',
  // Each file the same size, or each range of one: a scan reads one at any table size.
  ...(rowsPerFile || ranged ? ['ScanPiece'] : []),
]);

/** a + b·n by least squares over every size (b ≥ 0); a per-item state's largest measurement. */
function projected(pick: (m: Measured) => number, state: string): (n: number) => number {
  const ys = runs.map((r) => pick(r.states[state]!));
  if (PER_ITEM.has(state)) return () => Math.max(...ys);
  const xs = runs.map((r) => r.rows);
  const mx = xs.reduce((s, x) => s + x, 0) / xs.length;
  const my = ys.reduce((s, y) => s + y, 0) / ys.length;
  const sxy = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0);
  const sxx = xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  const b = Math.max(0, sxy / sxx);
  const a = my - b * mx;
  // Never below the largest measurement: the line bounds what was seen, too.
  return (n) => Math.max(a + b * n, ys.at(-1)!);
}

/**
 * A per-item state's largest peak over its smallest across table sizes whose items are the
 * same size (the same rows per part: a table smaller than a part has smaller parts), over the
 * part size measured at the most table sizes.
 */
function spread(state: string): { spread: number; rowsPerPart: number; sizes: number } {
  const byPart = new Map<number, Run[]>();
  // Only tables of whole parts: a smaller one has a smaller part.
  for (const r of comparable().filter((x) => x.rows >= partsOf(x)))
    byPart.set(partsOf(r), [...(byPart.get(partsOf(r)) ?? []), r]);
  // The most sizes; among as many, the smallest parts (every table holds whole ones).
  const [rowsPerPart, same] = [...byPart].sort((a, b) => b[1].length - a[1].length || a[0] - b[0])[0]!;
  const peaks = same.map((r) => r.states[state]!.peakMiB);
  return { spread: Math.max(...peaks) / Math.min(...peaks), rowsPerPart, sizes: same.length };
}

/** A deployment's memory for a state: its own, or raised (ppdp:memoryMb, 64 MB steps) to hold the peak with a tenth spare. */
const neededMiB = (peakMiB: number, configuredMiB: number) =>
  Math.max(configuredMiB, Math.ceil(peakMiB / 0.9 / 64) * 64);

const states = Object.keys(invocationsOf).map((state) => {
  const m = large.states[state]!;
  const peakMiB = projected((x) => x.peakMiB, state)(rows);
  const memoryMiB = neededMiB(peakMiB, m.configuredMiB);
  // The code is single-threaded: below one vCPU (1,769 MB) it runs that much slower, above it no faster.
  const slowestS = (projected((x) => x.maxMs, state)(rows) / 1000) * Math.max(1, MB_PER_VCPU / memoryMiB);
  // Each invocation's time: the per-invocation mean at the large run, scaled like the slowest.
  const meanS = (m.sumMs / m.invocations / m.maxMs) * slowestS;
  const invocations = invocationsOf[state]!;
  const gbSeconds = ((invocations * meanS * memoryMiB) / 1024) * 1;
  return {
    state,
    invocations,
    configuredMiB: m.configuredMiB,
    /** The memory the state needs set (ppdp:memoryMb) when its peak passes the stack's default. */
    ...(memoryMiB > m.configuredMiB ? { raiseToMiB: memoryMiB } : {}),
    peakMiB: Math.round(peakMiB),
    slowestS: Math.round(slowestS * 10) / 10,
    fits: memoryMiB <= LAMBDA_MAX_MB && slowestS <= LAMBDA_MAX_S,
    gbSeconds: Math.round(gbSeconds),
    ...(PER_ITEM.has(state) ? { peakSpread: spread(state) } : {}),
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
  `${shape}${rideAlong ? ' with its ride-along columns' : ''}, ${rows.toLocaleString('en')} rows${rowsPerFile ? ` in ${files} files` : ''}: ${shards} shards, ${parts} parts (fitted to ${runs.map((r) => r.rows.toLocaleString('en')).join(', ')} rows measured)`,
);
console.log(
  table(
    ['state', 'invocations', 'configured MiB', 'peak MiB', 'slowest s', 'fits', 'GB-s', 'per-item spread'],
    states.map((s) => [
      s.state,
      String(s.invocations),
      s.raiseToMiB ? `${s.configuredMiB} → ${s.raiseToMiB}` : String(s.configuredMiB),
      String(s.peakMiB),
      s.slowestS.toFixed(1),
      s.fits ? 'yes' : 'NO',
      String(s.gbSeconds),
      s.peakSpread === undefined
        ? ''
        : `×${s.peakSpread.spread.toFixed(2)} (${s.peakSpread.sizes} sizes, ${s.peakSpread.rowsPerPart.toLocaleString('en')} rows per part)`,
    ]),
  ),
);
console.log(
  `critical path ≈ ${Math.round(wallS)} s of state time; cost ≈ $${(cost.lambda + cost.stepFunctions + cost.s3).toFixed(2)} ` +
    `(Lambda $${cost.lambda.toFixed(2)}, Step Functions $${cost.stepFunctions.toFixed(2)}, S3 requests $${cost.s3.toFixed(2)})`,
);
writeFileSync(
  new URL(
    `./results/projection-${shape}${rideAlong ? '-ride-along' : ''}${rowsPerFile ? '-files' : ''}.json`,
    import.meta.url,
  ),
  `${JSON.stringify({ shape, rows, ...(rowsPerFile ? { rowsPerFile, files } : {}), shards, parts, from: runs.map((r) => ({ rows: r.rows, commit: r.machine?.commit })), states, transitions, s3: { puts: s3Puts, gets: s3Gets }, cost, criticalPathS: Math.round(wallS) }, null, 2)}\n`,
);
