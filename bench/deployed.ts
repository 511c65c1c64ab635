/**
 * The deployed path measured (a script, not a test): Adult-shaped or registry-shaped inputs of
 * N rows dropped in an s3rver bucket, released by the synthesized state machine with every Task
 * its bundled Lambda handler in its own process (test/harness/deployed.ts). Every function is
 * held to its configured memory as Lambda holds it (killed the moment its resident memory passes
 * the size: the state fails with Runtime.OutOfMemory); `--memory measure` lifts the limit to
 * measure what each state would need. Each state's peak resident memory and time are recorded
 * next to its configured memory, with the invocations killed; a run records whether memory was
 * enforced, whether it ended with a verified, published release, and its input (kind and files).
 * Writes bench/results/deployed.json (registry: deployed-registry.json).
 *
 * Run: `npm run bench:deployed -- [--rows 1000000,10000000] [--rows-per-shard 1000000]
 *   [--rows-per-part 2000000] [--shape adult|registry] [--input csv|parquet] [--files 16]
 *   [--rows-per-file 1000000] [--memory enforce|measure] [--output arrow,csv,parquet]
 *   [--ride-along] [--parquet-codec snappy|zstd|gzip|uncompressed] [--keep-inputs DIR]
 *   [--privacy dp [--epsilon 1] [--delta 1e-5] [--dp-node fixed|search]]`
 * (registry: the near-unique table of bench/registry-sample.ts, with `--ride-along` its three
 * insensitive columns that ride along as bench:scale writes them; `--input parquet` writes its
 * rows as `--files` Parquet files in one folder, which the spec's input names, compressed with
 * `--parquet-codec` (SNAPPY unless asked; `--keep-inputs` writes each sample once into DIR and
 * reuses it); without `--rows-per-part`, the plan sizes shards and parts for the rows' width
 * and the run records what it chose (`planned`); `--rows-per-file`
 * cuts the CSV into a folder of files of that many rows, each scanned by its own invocation,
 * so that the scan does the same work per item at every size; `--output` sets the
 * spec's output.formats). Runs are kept per size, part size, input (with its codec),
 * enforcement, output formats and ride-along columns; a run replaces only an earlier one of
 * the same six. `--privacy dp` releases Adult under (ε, δ)-differential privacy (the node
 * fixed in advance, or chosen by the private search): the sample is drawn shard by shard.
 */
import { createHash } from 'node:crypto';
import {
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { parseArgs } from 'node:util';
import { DEFAULT_ROWS_PER_PART } from '../src/pipeline/states/types.ts';
import { sealWork, utf8 } from '../src/pipeline/storage/index.ts';
import { deployLocally, type Invocation, runDeployed } from '../test/harness/deployed.ts';
import { ADULT_DP_LEVELS, sampled } from './adult-sample.ts';
import { helpIfAsked } from './help.ts';
import { PARQUET_CODECS, type ParquetCodec, registrySample } from './registry-sample.ts';
import { machineInfo, table } from './scale.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000,10000000' },
    'rows-per-shard': { type: 'string', default: '1000000' },
    'rows-per-part': { type: 'string' },
    shape: { type: 'string', default: 'adult' },
    input: { type: 'string', default: 'csv' },
    files: { type: 'string' },
    'rows-per-file': { type: 'string' },
    'keep-inputs': { type: 'string' },
    memory: { type: 'string', default: 'enforce' },
    output: { type: 'string' },
    'ride-along': { type: 'boolean', default: false },
    'parquet-codec': { type: 'string' },
    privacy: { type: 'string' },
    epsilon: { type: 'string', default: '1' },
    delta: { type: 'string', default: '1e-5' },
    'dp-node': { type: 'string', default: 'fixed' },
  },
});
if (values.shape !== 'adult' && values.shape !== 'registry') throw new Error('--shape is adult or registry');
if (values.input !== 'csv' && values.input !== 'parquet') throw new Error('--input is csv or parquet');
if (values.memory !== 'enforce' && values.memory !== 'measure')
  throw new Error('--memory is enforce or measure');
const inputKind = values.input;
const rowsPerFile = values['rows-per-file'] === undefined ? undefined : Number(values['rows-per-file']);
if (
  rowsPerFile !== undefined &&
  (inputKind !== 'csv' || !(Number.isInteger(rowsPerFile) && rowsPerFile >= 1))
)
  throw new Error('--rows-per-file is a whole number of rows, with --input csv');
const files = Number(values.files ?? (inputKind === 'parquet' ? 16 : 1));
if (!(Number.isInteger(files) && files >= 1))
  throw new Error('--files is a whole number of files, 1 or more');
if (inputKind === 'csv' && files !== 1)
  throw new Error('--files applies to --input parquet (the CSV is one file)');
if (inputKind === 'parquet' && values.shape !== 'registry')
  throw new Error('--input parquet needs --shape registry');
const rideAlong = values['ride-along'];
if (rideAlong && values.shape !== 'registry') throw new Error('--ride-along goes with --shape registry');
const parquetCodec = values['parquet-codec'] as ParquetCodec | undefined;
if (parquetCodec !== undefined && (inputKind !== 'parquet' || !PARQUET_CODECS.includes(parquetCodec)))
  throw new Error(`--parquet-codec is one of ${PARQUET_CODECS.join(', ')}, with --input parquet`);
const enforceMemory = values.memory === 'enforce';
if (values.privacy !== undefined && (values.privacy !== 'dp' || values.shape !== 'adult'))
  throw new Error('--privacy is dp, with --shape adult');
if (values['dp-node'] !== 'fixed' && values['dp-node'] !== 'search')
  throw new Error('--dp-node is fixed or search');
/** `--privacy dp`: the Adult spec under (ε, δ)-differential privacy, its node fixed or searched privately. */
const dp =
  values.privacy === 'dp'
    ? { epsilon: Number(values.epsilon), delta: Number(values.delta), node: values['dp-node'] }
    : undefined;
/** The spec's output.formats (e.g. arrow,csv,parquet), or the spec's own (Arrow and CSV). */
const outputFormats = values.output?.split(',');
const sample = (rows: number) =>
  values.shape === 'adult'
    ? sampled(rows)
    : registrySample(rows, {
        rideAlong,
        ...(inputKind === 'parquet' ? { parquetFiles: files, parquetCodec: parquetCodec ?? 'snappy' } : {}),
      });
const sizes = values.rows.split(',').map(Number);
const rowsPerShard = values['rows-per-shard'];
/** Rows per output part when asked; else the plan sizes parts for the rows' width (DEFAULT_ROWS_PER_PART for coded rows). */
const askedRowsPerPart = values['rows-per-part'] === undefined ? undefined : Number(values['rows-per-part']);
const rowsPerPart = askedRowsPerPart ?? DEFAULT_ROWS_PER_PART;

const { deployed, s3, store, dispose } = await deployLocally('ppdp-bench', { maxAttempts: 3 });

interface StateFigures {
  invocations: number;
  configuredMiB: number;
  peakMiB: number;
  maxMs: number;
  sumMs: number;
  fits: boolean;
  /** Invocations the harness killed for passing the function's memory. */
  killedForMemory: number;
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
      killedForMemory: 0,
    });
    s.invocations++;
    s.peakMiB = Math.max(s.peakMiB, Math.round(i.peakMiB));
    s.maxMs = Math.max(s.maxMs, Math.round(i.ms));
    s.sumMs += Math.round(i.ms);
    if (i.killed === 'memory') s.killedForMemory++;
    s.fits = s.peakMiB <= s.configuredMiB && s.killedForMemory === 0;
  }
  return out;
}

/** The files under `dir` a run drops in the inbox: the spec and its input (a file or a folder). */
function inputFiles(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...inputFiles(path));
    else if (/\.(csv|json|parquet)$/.test(e.name)) out.push(path);
  }
  return out;
}

/**
 * The published release of a run that ended well, read back: its manifest must say verified and
 * every file must have the digest the manifest lists. Returns the Arrow data's digest: data.arrow's,
 * or for a release in parts the SHA-256 of the parts' Arrow digests in part order (data.csv takes
 * the input's delimiter, so a CSV and a Parquet input of the same rows differ there).
 */
async function checkPublished(output: unknown): Promise<{ verified: boolean; dataArrowSha256: string }> {
  const { published } = output as { published: { release: string } };
  const prefix = published.release.replace(/^s3:\/\/[^/]+\//, '');
  const manifest = JSON.parse(utf8(await store.get(`${prefix}manifest.json`))) as {
    verified: boolean;
    files: { name: string; sha256: string }[];
  };
  for (const f of manifest.files) {
    const sha = createHash('sha256')
      .update(await store.get(prefix + f.name))
      .digest('hex');
    if (sha !== f.sha256) throw new Error(`published ${f.name}: its digest is not the manifest's`);
  }
  const whole = manifest.files.find((f) => f.name === 'data.arrow');
  const parts = manifest.files
    .filter((f) => /^data\/part-\d+\.arrow$/.test(f.name))
    .sort((a, b) => a.name.localeCompare(b.name));
  if (!manifest.verified || (!whole && parts.length === 0))
    throw new Error('the published manifest does not say verified, or lists no Arrow data');
  const dataArrowSha256 =
    whole?.sha256 ??
    createHash('sha256')
      .update(parts.map((p) => p.sha256).join('\n'))
      .digest('hex');
  return { verified: manifest.verified, dataArrowSha256 };
}

/**
 * The Adult spec under (ε, δ)-differential privacy: the node fixed in advance (the levels the
 * DP tests fix) or chosen by a private search (a tenth of ε over 20 steps,
 * scored by Loss); every class under k suppressed and removed, as the model requires.
 */
function dpSpec(spec: Record<string, unknown>): Record<string, unknown> {
  const { epsilon, delta, node } = dp!;
  const levels = ADULT_DP_LEVELS;
  return {
    ...spec,
    privacy: [
      node === 'fixed'
        ? { model: 'differential-privacy', epsilon, delta, levels }
        : { model: 'differential-privacy', epsilon, delta, searchBudget: 0.1, steps: 20 },
    ],
    method: {
      name: 'generalization',
      metric: node === 'fixed' ? 'ncp' : 'loss',
      maxSuppression: 1,
      suppressed: 'remove',
    },
  };
}

/** The published report's (ε, δ)-differential privacy facts (β, k, rows sampled and suppressed). */
async function dpFacts(output: unknown): Promise<Record<string, unknown>> {
  const { published } = output as { published: { release: string } };
  const prefix = published.release.replace(/^s3:\/\/[^/]+\//, '');
  const report = JSON.parse(utf8(await store.get(`${prefix}report.json`))) as {
    sections?: { title: string; facts: [string, unknown][] }[];
  };
  return Object.fromEntries(
    report.sections?.find((x) => x.title.includes('differential privacy'))?.facts ?? [],
  );
}

/**
 * `--keep-inputs <dir>`: a registry sample is written once into <dir>/<what it holds>/ and
 * copied from there for each run (a run changes and removes its copy), so a rerun of 10^7
 * rows does not write them again.
 */
async function keptSample(rows: number): Promise<{ dir: string; spec: string; bytes: number }> {
  const keep = values['keep-inputs'];
  if (!keep || values.shape !== 'registry') return sample(rows);
  const what = [
    `registry-${rows}-${inputKind}`,
    ...(inputKind === 'parquet' ? [`${files}`, parquetCodec ?? 'snappy'] : []),
    ...(rideAlong ? ['ride-along'] : []),
  ].join('-');
  const kept = join(keep, what);
  const size = join(kept, 'sample.bytes');
  if (!existsSync(size)) {
    const made = await sample(rows);
    rmSync(kept, { recursive: true, force: true });
    mkdirSync(keep, { recursive: true });
    renameSync(made.dir, kept);
    writeFileSync(size, String(made.bytes));
  }
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-kept-'));
  cpSync(kept, dir, { recursive: true });
  return { dir, spec: join(dir, 'release.json'), bytes: Number(readFileSync(size, 'utf8')) };
}

/** The rows per shard and per part the run's plan chose, and how many of each it cut. */
async function plannedItems(): Promise<Record<string, number | null> | undefined> {
  const key = (await store.list('')).find(
    (o) => !o.key.startsWith('inbox/') && o.key.endsWith('/plan.json'),
  )?.key;
  if (!key) return undefined;
  const area = key.slice(0, -'plan.json'.length);
  const file = JSON.parse(utf8(await sealWork({ store, key: area }).store.get(key))) as {
    scan: { rowsPerShard: number | null };
    rowsPerPart?: number;
    plan: { shards: number; parts: number };
  };
  const { shards, parts } = file.plan;
  return { rowsPerShard: file.scan.rowsPerShard, rowsPerPart: file.rowsPerPart ?? null, shards, parts };
}

/** A failed run's releases/<name>/error.json (which state failed, and why), as ReportFailure wrote it. */
async function failureReport(): Promise<unknown> {
  const key = (await store.list('releases/')).find((o) => o.key.endsWith('/error.json'))?.key;
  return key ? JSON.parse(utf8(await store.get(key))) : undefined;
}

/**
 * Cuts the spec's CSV input into a folder of files of `rowsPerFile` rows each (the header
 * repeated), named so they sort in row order, and points the spec at the folder. The samples
 * have no quoted line breaks, so a row is a line. Returns the number of files.
 */
function splitCsvInput(specPath: string, rowsPerFile: number): number {
  const spec = JSON.parse(readFileSync(specPath, 'utf8')) as { input: string };
  const csv = join(dirname(specPath), spec.input);
  const folder = join(dirname(specPath), 'input');
  mkdirSync(folder, { recursive: true });
  const fd = openSync(csv, 'r');
  const chunk = Buffer.allocUnsafe(64 * 2 ** 20);
  let header: Buffer | undefined;
  let carry = Buffer.alloc(0);
  let out: number | undefined;
  let rowsIn = 0;
  let count = 0;
  const open = () => {
    out = openSync(join(folder, `part-${String(count++).padStart(5, '0')}.csv`), 'w');
    writeSync(out, header!);
    rowsIn = 0;
  };
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, null);
    let data = n > 0 ? Buffer.concat([carry, chunk.subarray(0, n)]) : carry;
    if (n === 0 && data.length > 0 && data[data.length - 1] !== 10)
      data = Buffer.concat([data, Buffer.from('\n')]);
    let at = 0;
    for (let nl = data.indexOf(10, at); nl >= 0; nl = data.indexOf(10, at)) {
      const line = data.subarray(at, nl + 1);
      at = nl + 1;
      if (!header) {
        header = Buffer.from(line);
        continue;
      }
      if (out === undefined || rowsIn === rowsPerFile) {
        if (out !== undefined) closeSync(out);
        open();
      }
      writeSync(out!, line);
      rowsIn++;
    }
    carry = Buffer.from(data.subarray(at));
    if (n === 0) break;
  }
  closeSync(fd);
  if (out !== undefined) closeSync(out);
  rmSync(csv);
  writeFileSync(specPath, JSON.stringify({ ...spec, input: 'input' }, null, 2));
  return count;
}

const runs: Record<string, unknown>[] = [];
try {
  for (const rows of sizes) {
    const w0 = performance.now();
    const input = await keptSample(rows);
    const name = `${values.shape}-${rows}`;
    const inputFileCount = rowsPerFile ? splitCsvInput(input.spec, rowsPerFile) : files;
    if (dp)
      writeFileSync(
        input.spec,
        JSON.stringify(dpSpec(JSON.parse(readFileSync(input.spec, 'utf8'))), null, 2),
      );
    if (outputFormats) {
      const spec = JSON.parse(readFileSync(input.spec, 'utf8'));
      writeFileSync(input.spec, JSON.stringify({ ...spec, output: { formats: outputFormats } }, null, 2));
    }
    for (const f of inputFiles(input.dir))
      await store.put(`inbox/${name}/${relative(input.dir, f)}`, readFileSync(f));
    rmSync(input.dir, { recursive: true, force: true });
    const prepareMs = Math.round(performance.now() - w0);
    process.stderr.write(
      `${rows} rows as ${inputKind === 'csv' ? `CSV (${inputFileCount} file${inputFileCount === 1 ? '' : 's'})` : `${files} Parquet files`} written and uploaded ` +
        `(${Math.round(input.bytes / 2 ** 20)} MiB, ${(prepareMs / 1000).toFixed(1)} s), running…\n`,
    );
    const t0 = performance.now();
    const result = await runDeployed(
      deployed,
      {
        spec: `s3://ppdp-bench/inbox/${name}/release.json`,
        ...(askedRowsPerPart === undefined ? {} : { rowsPerPart: askedRowsPerPart }),
      },
      {
        s3: s3.options({ maxAttempts: 3 }),
        env: { PPDP_ROWS_PER_SHARD: rowsPerShard, PPDP_LOG: 'off' },
        enforceMemory,
      },
    );
    const wallMs = Math.round(performance.now() - t0);
    const states = byState(result.invocations);
    const release = result.ok ? await checkPublished(result.output) : undefined;
    const failure = result.ok ? undefined : await failureReport();
    const items = await plannedItems();
    runs.push({
      shape: values.shape,
      rows,
      input: inputKind,
      files: inputFileCount,
      ...(inputKind === 'parquet' ? { parquetCodec: parquetCodec ?? 'snappy' } : {}),
      ...(rideAlong ? { rideAlong } : {}),
      ...(rowsPerFile ? { rowsPerFile } : {}),
      inputBytes: input.bytes,
      rowsPerShard: Number(rowsPerShard),
      rowsPerPart,
      ...(items ? { planned: items } : {}),
      memoryEnforced: enforceMemory,
      ...(outputFormats ? { outputFormats } : {}),
      ...(dp ? { privacy: { model: 'differential-privacy', ...dp } } : {}),
      ...(dp && release ? { dpFacts: await dpFacts(result.output) } : {}),
      ok: result.ok,
      ...(release ? { published: true, ...release } : { published: false, error: result.error, failure }),
      prepareMs,
      wallMs,
      states,
      machine: machineInfo(),
      at: new Date().toISOString(),
    });
    console.log(
      `\n${rows.toLocaleString('en')} rows (${inputKind}${parquetCodec ? ` ${parquetCodec}` : ''}, ${inputFileCount} file${inputFileCount === 1 ? '' : 's'}${rideAlong ? ', ride-along columns' : ''}, memory ` +
        `${enforceMemory ? 'enforced' : 'measured only'}${outputFormats ? `, output ${outputFormats.join(', ')}` : ''}), wall ${(wallMs / 1000).toFixed(1)} s: ` +
        (release ? 'verified and published' : `FAILED, ${result.error?.name}: ${result.error?.message}`),
    );
    if (failure) console.log(JSON.stringify(failure, null, 2));
    console.log(
      table(
        ['state', 'invocations', 'configured MiB', 'peak MiB', 'max s', 'killed (memory)', 'fits'],
        Object.entries(states).map(([state, s]) => [
          state,
          String(s.invocations),
          String(s.configuredMiB),
          String(s.peakMiB),
          (s.maxMs / 1000).toFixed(1),
          String(s.killedForMemory),
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

// Runs accumulate: a run replaces an earlier one of the same size, part size, input and
// enforcement and keeps the others, so runs measured at different times (each with its machine
// and commit) are read together. Runs from before inputs and enforcement were recorded read a
// CSV file with memory measured only, which they now say.
const resultFile = new URL(
  `./results/deployed${values.shape === 'adult' ? '' : `-${values.shape}`}.json`,
  import.meta.url,
);
const earlier = existsSync(resultFile)
  ? (JSON.parse(readFileSync(resultFile, 'utf8')) as { runs: Record<string, unknown>[] }).runs.map((r) => ({
      input: 'csv',
      files: 1,
      memoryEnforced: false,
      ...r,
    }))
  : [];
const sameRun = (a: Record<string, unknown>, b: Record<string, unknown>) =>
  a.rows === b.rows &&
  (a.rowsPerPart ?? DEFAULT_ROWS_PER_PART) === (b.rowsPerPart ?? DEFAULT_ROWS_PER_PART) &&
  a.input === b.input &&
  a.files === b.files &&
  a.memoryEnforced === b.memoryEnforced &&
  Boolean(a.rideAlong) === Boolean(b.rideAlong) &&
  (a.parquetCodec ?? 'snappy') === (b.parquetCodec ?? 'snappy') &&
  String(a.outputFormats ?? '') === String(b.outputFormats ?? '') &&
  JSON.stringify(a.privacy ?? null) === JSON.stringify(b.privacy ?? null);
const kept = earlier.filter((r) => !runs.some((n) => sameRun(n, r)));
const order = (r: Record<string, unknown>) => [Number(r.rows), String(r.input), Number(r.files)] as const;
const byRun = (a: Record<string, unknown>, b: Record<string, unknown>) => {
  const [x, y] = [order(a), order(b)];
  return x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0) || x[2] - y[2];
};
writeFileSync(
  resultFile,
  `${JSON.stringify({ shape: values.shape, harness: 'bundled handlers, one process per invocation, s3rver', runs: [...kept, ...runs].sort(byRun) }, null, 2)}\n`,
);
if (runs.some((r) => !r.ok)) process.exitCode = 1;
