/**
 * The release's states as functions of (JSON input, environment) → JSON output: the one
 * implementation behind the Lambda handlers (functions/), the local engine and the direct
 * engine. Data moves through the store only; state payloads carry locations and small facts.
 *
 * Work area (`plan.work`, a store URL ending in `/`):
 *   bundle/          the spec and its hierarchy files, as the later states load them
 *   plan.json        the request, the plan and the rows file's layout
 *   rows.arrow       the encoded input, one record batch per shard (see rows.ts)
 *   shards.json      the shard items the Distributed Maps read
 *   counts/N.bin     per shard: distinct tuples with counts (CountShard); N.rows: each row's tuple
 *   search.json      node, claims and the method's report (Search); flags/N.bin per shard
 *   released/N.arrow per shard: released rows in input order (ApplyShard)
 *   built.json       single-shard methods: files, report and checks (Build)
 *   staging/         the release's files, verified before anything is published
 *   verified.json    names, sizes and SHA-256 of the verified files (Verify)
 *   timings/         per state (and shard) wall times, gathered into the report
 *   error.json       what failed, when a run fails (ReportFailure)
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { DataType, tableFromIPC } from 'apache-arrow';
import { encodeArrow } from '../data/arrow.ts';
import { encodeCsv } from '../data/csv.ts';
import { compactDictionary, type EncodedTable, type OutputColumn } from '../data/table.ts';
import { PpdpError, SpecError } from '../errors.ts';
import { buildHierarchy } from '../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../kernels/grouping.ts';
import { applyGeneralization } from '../methods/generalization/apply.ts';
import {
  collapseColumnNames,
  collapseRows,
  prepareGeneralization,
  type SearchClaims,
  searchStep,
  type TupleSet,
  verifyStep,
} from '../methods/generalization/index.ts';
import type { MethodReport } from '../methods/method.ts';
import { methodFor } from '../methods/registry.ts';
import { renderReportHtml } from '../report/html.ts';
import type { VerificationCheck } from '../report/types.ts';
import { checkSpecFiles, loadSpec, type ReleaseSpec } from '../spec/spec.ts';
import { byCodeUnits } from '../util/format.ts';
import { keyedRandom, tableDigest } from '../util/keys.ts';
import { REPORTED_FAILURE } from './definition.ts';
import { lockRun } from './lock.ts';
import { type RunKey, recall, remember } from './memo.ts';
import {
  type Claim,
  checkOutDir,
  claimFolder,
  type Manifest,
  type ManifestEntry,
  publishSteps,
  runAsync,
  storeFolder,
  unlock,
} from './publish.ts';
import { frameReport, readInput, runIdOf, streams } from './release.ts';
import {
  decodeTuples,
  encodeRows,
  encodeTuples,
  type RowsLayout,
  readAllRows,
  readShard,
  type ShardRange,
  type TupleColumns,
} from './rows.ts';
import {
  baseKey,
  dirKey,
  getJson,
  joinKey,
  type Location,
  putJson,
  type Store,
  type StoreResolver,
  utf8,
} from './storage/index.ts';

/** What a release run is asked to do (the execution input). */
export interface ReleaseRequest {
  /** release.json: a local path, file:///abs/path or s3://bucket/key. */
  readonly spec: string;
  /** Root of work/ and releases/ (default: the spec's bucket for an s3:// spec). */
  readonly store?: string;
  /** Publish here instead of `<store>/releases/<name>/<runId>/` (the CLI's --out). */
  readonly out?: string;
  /** Work area instead of `<store>/work/<name>/<runId>/`. */
  readonly work?: string;
  /** Row shards (default: one per `rowsPerShard` rows). */
  readonly shards?: number;
  readonly rowsPerShard?: number;
}

export interface PlanResult {
  readonly name: string;
  readonly runId: string;
  readonly work: string;
  readonly release: string;
  /** sharded: generalization over row shards; single: any method as one task. */
  readonly mode: 'sharded' | 'single';
  readonly method: string;
  readonly rows: number;
  readonly shards: number;
  /** Where the Distributed Maps read the shard items (bucket '' for the local filesystem). */
  readonly items: { readonly bucket: string; readonly key: string };
  /** The release folder's lock, taken by Plan and given up by Publish or ReportFailure. */
  readonly claim: Claim;
}

export interface ShardTask {
  readonly work: string;
  readonly index: number;
}

export interface WorkTask {
  readonly work: string;
}

/** One structured log line: names and numbers, never data values. */
export type LogEvent = Record<string, string | number | boolean | undefined>;

export interface PhaseEnv {
  readonly stores: StoreResolver;
  readonly kernel: GroupingKernel;
  /** Structured log (JSON lines in Lambda). */
  readonly log: (event: LogEvent) => void;
  /** Progress for a person (the CLI's stderr lines). */
  readonly say?: (line: string) => void;
  /** Local scratch folder (Lambda: /tmp). */
  readonly tmp?: string;
  readonly rowsPerShard?: number;
}

export const DEFAULT_ROWS_PER_SHARD = 1_000_000;
/** More shards than this only add overhead (the Distributed Map could take more). */
export const MAX_SHARDS = 10_000;

interface PlanFile {
  readonly request: ReleaseRequest;
  readonly plan: PlanResult;
  readonly layout: RowsLayout;
  /** The spec's file name inside bundle/. */
  readonly specName: string;
  readonly started: number;
  /** Hex SHA-256 of the input's cells: keys the random streams (src/util/keys.ts). */
  readonly digest: string;
}

/** A run's work area opened: its store, plan and spec (loaded from the bundle). */
interface Work {
  readonly loc: Location;
  readonly file: PlanFile;
  readonly spec: ReleaseSpec;
  key(name: string): string;
}

// ---------------------------------------------------------------------------------------------
// Plan

export async function plan(request: ReleaseRequest, env: PhaseEnv): Promise<PlanResult> {
  const started = Date.now();
  const t0 = performance.now();
  if (!request?.spec) {
    throw new SpecError(
      'E_REQUEST',
      'the release request names no spec',
      'start it with {"spec": "s3://bucket/inbox/<name>/release.json"}',
    );
  }
  const specLoc = await openSpec(request.spec, env);
  const downloads = scratch(env, `spec-${process.pid}-${started}`);
  try {
    return await planFrom(request, env, specLoc, await materializeSpec(specLoc, downloads), started, t0);
  } finally {
    rmSync(downloads, { recursive: true, force: true }); // Lambda keeps /tmp between invocations
  }
}

/** The spec's location; an S3 event's key may arrive URL-encoded. */
async function openSpec(url: string, env: PhaseEnv): Promise<Location> {
  const loc = await env.stores.open(url);
  if (!loc.store.root.startsWith('s3://') || (await loc.store.head(loc.key)) !== undefined) return loc;
  const decoded = decodeURIComponent(loc.key.replace(/\+/g, ' '));
  return decoded !== loc.key && (await loc.store.head(decoded)) !== undefined
    ? { ...loc, key: decoded }
    : loc;
}

async function planFrom(
  request: ReleaseRequest,
  env: PhaseEnv,
  specLoc: Location,
  specPath: string,
  started: number,
  t0: number,
): Promise<PlanResult> {
  for (const [field, v] of [
    ['shards', request.shards],
    ['rowsPerShard', request.rowsPerShard],
  ] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) {
      throw new SpecError(
        'E_REQUEST',
        `the release request's ${field} must be a whole number ≥ 1`,
        'e.g. "shards": 4',
      );
    }
  }
  const spec = loadSpec(specPath);
  checkSpecFiles(
    spec,
    specLoc.store.root === 'file:///' ? undefined : specLoc.store.root + dirKey(specLoc.key),
  );
  const name = releaseName(specLoc.key);
  const runId = runIdOf(spec);
  const root = request.store ?? (specLoc.store.root.startsWith('s3://') ? specLoc.store.root : undefined);
  const rootUrl = root === undefined ? undefined : root.endsWith('/') ? root : `${root}/`;
  const release = request.out ?? (rootUrl ? `${rootUrl}releases/${name}/${runId}/` : undefined);
  const workUrl = request.work ?? (rootUrl ? `${rootUrl}work/${name}/${runId}/` : undefined);
  if (!release || !workUrl) {
    throw new PpdpError(
      'E_USAGE',
      'the release request names no output',
      'give --out <dir> or --store s3://bucket/prefix (a request: "out" or "store")',
    );
  }
  const releaseLoc = await env.stores.open(asFolder(release));
  if (releaseLoc.store.root === 'file:///') checkOutDir(`/${releaseLoc.key}`, [spec.input, spec.file]);
  const folder = storeFolder(releaseLoc);
  const claim = await runAsync(claimFolder(folder));
  try {
    return await planClaimed({
      request,
      env,
      spec,
      specPath,
      name,
      runId,
      releaseLoc,
      workUrl,
      claim,
      started,
      t0,
    });
  } catch (e) {
    await runAsync(unlock(folder, claim, warner(env)));
    throw e;
  }
}

/** The rest of Plan, once the release folder is claimed (Plan gives the claim up if this fails). */
async function planClaimed(p: {
  request: ReleaseRequest;
  env: PhaseEnv;
  spec: ReleaseSpec;
  specPath: string;
  name: string;
  runId: string;
  releaseLoc: Location;
  workUrl: string;
  claim: Claim;
  started: number;
  t0: number;
}): Promise<PlanResult> {
  const { request, env, spec, specPath, name, runId, releaseLoc, workUrl, claim, started, t0 } = p;
  const workLoc = await env.stores.open(asFolder(workUrl));
  const wk = (n: string) => joinKey(workLoc.key, n);

  env.say?.(`reading ${basename(spec.input)}`);
  const table = readInput(spec);
  const mode = spec.method.name === 'generalization' ? 'sharded' : 'single';
  const perShard = request.rowsPerShard ?? env.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD;
  const wanted = request.shards ?? Math.ceil(table.rowCount / perShard);
  const shards = mode === 'single' ? 1 : Math.min(MAX_SHARDS, Math.max(1, wanted));
  const { bytes, layout } = encodeRows(table, shards);
  const specName = basename(spec.file);
  // Deployed, a duplicate start stops here: after every check that can refuse the release (a
  // refusal in Plan writes no error.json, so it must not leave the lock held), before any write.
  await lockRun(workLoc.store, workLoc.key, runId);
  await Promise.all([
    workLoc.store.put(wk('rows.arrow'), bytes),
    writeBundle(workLoc.store, wk('bundle/'), specPath, spec),
    putJson(
      workLoc.store,
      wk('shards.json'),
      layout.shards.map((_, index) => ({ index })),
    ),
  ]);
  const result: PlanResult = {
    name,
    runId,
    work: workLoc.store.root + asFolder(workLoc.key),
    release: releaseLoc.store.root + asFolder(releaseLoc.key),
    mode,
    method: spec.method.name,
    rows: table.rowCount,
    shards: layout.shards.length,
    items: {
      bucket: workLoc.store.root.startsWith('s3://') ? workLoc.store.root.slice(5, -1) : '',
      key: wk('shards.json'),
    },
    claim,
  };
  // The input's digest keys the release's random streams; it stays in the work area.
  const digest = Buffer.from(tableDigest(table)).toString('hex');
  const file: PlanFile = { request, plan: result, layout, specName, started, digest };
  await putJson(workLoc.store, wk('plan.json'), file);
  remember({ work: result.work, started }, 'rows', table);
  await timing(workLoc.store, workLoc.key, 'plan', performance.now() - t0);
  env.log({ state: 'Plan', runId, mode, rows: table.rowCount, shards: result.shards, ms: ms(t0) });
  return result;
}

/** The release's name: `<name>` for `inbox/<name>/release.json`, else the spec's folder. */
export function releaseName(specKey: string): string {
  const parts = specKey.split('/');
  const i = parts.lastIndexOf('inbox');
  const raw = i >= 0 && i + 2 < parts.length ? parts[i + 1]! : (parts.at(-2) ?? 'release');
  return raw.replace(/[^A-Za-z0-9._-]/g, '_') || 'release';
}

/** A local path for the spec and the files it names (downloaded when the store is S3). */
async function materializeSpec(loc: Location, dir: string): Promise<string> {
  if (loc.store.root === 'file:///') return `/${loc.key}`;
  const local = (key: string) => join(dir, loc.store.root.slice(5), key);
  const text = await loc.store.get(loc.key);
  const specPath = local(loc.key);
  mkdirSync(dirname(specPath), { recursive: true });
  writeFileSync(specPath, text);
  let json: { input?: unknown; attributes?: Record<string, { hierarchy?: unknown }> };
  try {
    json = JSON.parse(utf8(text));
  } catch {
    return specPath; // loadSpec names the JSON error
  }
  const refs = [json.input, ...Object.values(json.attributes ?? {}).map((a) => a?.hierarchy)].filter(
    (r): r is string => typeof r === 'string',
  );
  await Promise.all(
    refs.map(async (ref) => {
      const key = joinKey(dirKey(loc.key), ref);
      const size = await loc.store.head(key);
      if (size === undefined) return; // loadSpec / readInput / the hierarchy name it
      const path = local(key);
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await loc.store.get(key));
    }),
  );
  return specPath;
}

/**
 * The spec and its hierarchy files under bundle/, with hierarchy paths rewritten to
 * `h<i>/<file name>`: later states load the same spec from any machine.
 */
async function writeBundle(store: Store, prefix: string, specPath: string, spec: ReleaseSpec): Promise<void> {
  const { readFileSync } = await import('node:fs');
  const json = JSON.parse(readFileSync(specPath, 'utf8').replace(/^\uFEFF/, '')) as {
    input: string;
    attributes: Record<string, { hierarchy?: unknown }>;
  };
  const puts: Promise<void>[] = [];
  let i = 0;
  for (const a of spec.attributes) {
    if (a.hierarchy?.kind !== 'file') continue;
    const rel = `h${i++}/${basename(a.hierarchy.path)}`;
    json.attributes[a.name]!.hierarchy = rel;
    if (existsSync(a.hierarchy.path))
      puts.push(store.put(joinKey(prefix, rel), readFileSync(a.hierarchy.path)));
  }
  json.input = basename(spec.input);
  puts.push(store.put(joinKey(prefix, basename(spec.file)), `${JSON.stringify(json, null, 2)}\n`));
  await Promise.all(puts);
}

// ---------------------------------------------------------------------------------------------
// Fan-out over row shards (generalization)

export async function countShard(task: ShardTask, env: PhaseEnv): Promise<{ tuples: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const shard = await shardRows(work, task.index);
  const columns = collapseColumnNames(work.spec).map((n) => shard.columns.find((c) => c.name === n)!);
  const tuples = remember(runOf(work), `counts/${task.index}`, collapseRows(env.kernel, columns));
  const rows = tuples.rowToTuple;
  await Promise.all([
    work.loc.store.put(work.key(`counts/${task.index}.bin`), encodeTuples(tuples)),
    // Each row's tuple, so ApplyShard need not collapse the shard again.
    work.loc.store.put(
      work.key(`counts/${task.index}.rows`),
      new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength),
    ),
  ]);
  await timing(work.loc.store, work.loc.key, `count-${task.index}`, performance.now() - t0);
  env.log({
    state: 'CountShard',
    shard: task.index,
    rows: shard.rowCount,
    tuples: tuples.counts.length,
    ms: ms(t0),
  });
  return { tuples: tuples.counts.length };
}

export async function search(task: WorkTask, env: PhaseEnv): Promise<{ node: Record<string, number> }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const [table, parts] = await Promise.all([
    allRows(work),
    Promise.all(
      Array.from(
        { length: shards },
        async (_, s) =>
          recall<TupleSet>(runOf(work), `counts/${s}`) ??
          decodeTuples(await store.get(work.key(`counts/${s}.bin`))),
      ),
    ),
  ]);
  // Merge the shards' distinct tuples in shard order: the merged tuples come out in order of
  // first appearance in the input, exactly as one collapse over every row would give them.
  const { merged, groupOf } = mergeTuples(parts, collapseColumnNames(work.spec), table, env.kernel);

  const timings: Record<string, number> = {};
  const time = timer(timings);
  const prepared = prepareGeneralization(work.spec, table, env.kernel, time, merged);
  const step = searchStep(prepared, env.kernel, time, env.say ?? (() => {}));
  // Each shard's flags: its local tuples → merged tuple → suppressed.
  let at = 0;
  await Promise.all(
    parts.map((p, s) => {
      const flags = new Uint8Array(p.counts.length);
      for (let t = 0; t < flags.length; t++) flags[t] = step.tupleSuppressed[groupOf[at + t]!]!;
      at += p.counts.length;
      return store.put(work.key(`flags/${s}.bin`), remember(runOf(work), `flags/${s}`, flags));
    }),
  );
  await putJson(store, work.key('search.json'), {
    node: step.node,
    claims: step.claims,
    report: step.report,
  });
  await timing(store, work.loc.key, 'merge', performance.now() - t0, timings);
  env.log({ state: 'Search', tuples: merged.counts.length, ms: ms(t0) });
  return { node: step.node };
}

export async function applyShard(task: ShardTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const run = runOf(work);
  const [shard, flags, found, rowToTuple] = await Promise.all([
    shardRows(work, task.index),
    recall<Uint8Array>(run, `flags/${task.index}`) ?? store.get(work.key(`flags/${task.index}.bin`)),
    getJson<{ node: Record<string, number> }>(store, work.key('search.json')),
    (async () => {
      const kept = recall<TupleSet>(run, `counts/${task.index}`);
      if (kept) return kept.rowToTuple;
      const bytes = await store.get(work.key(`counts/${task.index}.rows`));
      return new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    })(),
  ]);
  const spec = work.spec;
  const method = spec.method as Extract<ReleaseSpec['method'], { name: 'generalization' }>;
  if (rowToTuple.length !== shard.rowCount) throw new Error(`shard ${task.index}: counts and rows disagree`);
  const suppressedRow = new Uint8Array(shard.rowCount);
  for (let r = 0; r < shard.rowCount; r++) suppressedRow[r] = flags[rowToTuple[r]!]!;
  const hierarchies = new Map(
    spec.attributes
      .filter((a) => a.type === 'quasi-identifying')
      .map((a) => [
        a.name,
        buildHierarchy(shard.columns.find((c) => c.name === a.name)!, a.hierarchy!, true),
      ]),
  );
  const released = applyGeneralization({
    table: shard,
    attributes: spec.attributes,
    hierarchies,
    node: found.node,
    suppressedRow,
    suppressed: method.suppressed,
  });
  await store.put(work.key(`released/${task.index}.arrow`), encodeArrow(released));
  remember(run, `released/${task.index}`, released);
  await timing(store, work.loc.key, `apply-${task.index}`, performance.now() - t0);
  const rows = released[0] ? columnLength(released[0]) : 0;
  env.log({ state: 'ApplyShard', shard: task.index, rows, ms: ms(t0) });
  return { rows };
}

/** Concatenates the released shards in input order, shuffles once with the seed, writes the files. */
export async function assemble(task: WorkTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const parts = await Promise.all(
    Array.from(
      { length: shards },
      async (_, s) =>
        recall<OutputColumn[]>(runOf(work), `released/${s}`) ??
        outputColumns(await store.get(work.key(`released/${s}.arrow`))),
    ),
  );
  const total = parts.reduce((n, p) => n + (p[0] ? columnLength(p[0]) : 0), 0);
  // The same stream build() shuffles with, over the same rows in input order.
  const order = keyedRandom(work.spec.seed, Buffer.from(work.file.digest, 'hex'), 'shuffle').permutation(
    total,
  );
  const columns: OutputColumn[] = parts[0]!.map((first, c) => {
    if (first.kind === 'number') {
      const concat = new Float64Array(total);
      let at = 0;
      for (const part of parts) {
        const values = (part[c] as OutputColumn & { kind: 'number' }).values;
        concat.set(values, at);
        at += values.length;
      }
      const values = new Float64Array(total);
      for (let j = 0; j < total; j++) values[j] = concat[order[j]!]!;
      return { name: first.name, kind: 'number', values };
    }
    // One dictionary over the shards' dictionaries, in order of first appearance.
    const { dictionary, codes: concat } = unionOfDictionaries(
      total,
      parts.map((part) => part[c] as OutputColumn & { kind: 'dictionary' }),
    );
    const codes = new Int32Array(total);
    for (let j = 0; j < total; j++) codes[j] = concat[order[j]!]!;
    return compactDictionary(first.name, dictionary, codes);
  });
  const timings: Record<string, number> = {};
  const time = timer(timings);
  const [arrow, csv] = time('write', () => [
    encodeArrow(columns),
    encodeCsv(columns, work.file.layout.delimiter),
  ]);
  await Promise.all([
    store.put(work.key('staging/data.arrow'), arrow),
    store.put(work.key('staging/data.csv'), csv),
  ]);
  await putJson(store, work.key('staging.json'), { files: ['data.arrow', 'data.csv'] });
  await timing(store, work.loc.key, 'assemble', performance.now() - t0, timings);
  env.log({ state: 'Assemble', rows: total, shards, ms: ms(t0) });
  return { rows: total };
}

// ---------------------------------------------------------------------------------------------
// Single task (methods that do not shard): build, stage, verify in one place

interface BuiltFile {
  readonly files: string[];
  readonly report: MethodReport;
  readonly checks: VerificationCheck[];
}

export async function build(task: WorkTask, env: PhaseEnv): Promise<{ files: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const table = await allRows(work);
  const timings: Record<string, number> = {};
  const time = timer(timings);
  const built = methodFor(work.spec.method.name).build({
    spec: work.spec,
    table,
    kernel: env.kernel,
    time,
    say: env.say ?? (() => {}),
    random: streams(work.spec, table, Buffer.from(work.file.digest, 'hex')),
  });
  for (const f of built.files) await store.put(work.key(`staging/${f.name}`), f.content);
  // The method's verify is a closure over what it built: it runs here, on the staged files
  // as read back from the store.
  env.say?.('verifying the release independently');
  const local = await stagedPaths(
    work,
    env,
    built.files.map((f) => f.name),
  );
  let checks: VerificationCheck[];
  try {
    checks = time('verify', () => built.verify(local));
  } finally {
    disposeStaged(work, env);
  }
  const out: BuiltFile = { files: built.files.map((f) => f.name), report: built.report, checks };
  await putJson(store, work.key('built.json'), out);
  await putJson(store, work.key('staging.json'), { files: out.files });
  await timing(store, work.loc.key, 'build', performance.now() - t0, timings);
  env.log({ state: 'Build', method: work.spec.method.name, files: out.files.length, ms: ms(t0) });
  return { files: out.files.length };
}

// ---------------------------------------------------------------------------------------------
// Verify, report, publish

export async function verify(task: WorkTask, env: PhaseEnv): Promise<{ verified: true; files: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const { files } = await getJson<{ files: string[] }>(store, work.key('staging.json'));
  const table = await allRows(work);
  let methodReport: MethodReport;
  let checks: VerificationCheck[];
  if (work.file.plan.mode === 'sharded') {
    env.say?.('verifying the release independently');
    const found = await getJson<{ claims: SearchClaims; report: MethodReport }>(
      store,
      work.key('search.json'),
    );
    const local = await stagedPaths(work, env, files);
    const t = performance.now();
    try {
      checks = verifyStep(work.spec, table, found.claims, local);
    } finally {
      disposeStaged(work, env);
    }
    await timing(store, work.loc.key, 'verify', performance.now() - t);
    methodReport = found.report;
  } else {
    const built = await getJson<BuiltFile>(store, work.key('built.json'));
    if (!built.checks.every((c) => c.passed)) {
      throw new PpdpError('E_VERIFY', 'verification failed, nothing was published');
    }
    methodReport = built.report;
    checks = built.checks;
  }
  const timings = await gatherTimings(store, work.loc.key);
  timings.total = Math.round((Date.now() - work.file.started) * 100) / 100;
  const report = frameReport(work.spec, table, work.file.plan.runId, methodReport, checks, timings);
  await Promise.all([
    store.put(work.key('staging/report.json'), `${JSON.stringify(report, null, 2)}\n`),
    store.put(work.key('staging/report.html'), renderReportHtml(report)),
  ]);
  // Hash exactly the bytes that were verified and will be published.
  const names = [...files, 'report.html', 'report.json'].sort(byCodeUnits);
  const entries: ManifestEntry[] = [];
  for (const name of names) {
    const bytes = await store.get(work.key(`staging/${name}`));
    entries.push({ name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
  }
  await putJson(store, work.key('verified.json'), { files: entries });
  env.log({ state: 'Verify', checks: checks.length, files: entries.length, ms: ms(t0) });
  return { verified: true, files: entries.length };
}

/**
 * Atomic publish (src/pipeline/publish.ts): the old manifest goes first, then each verified
 * file, then every file the new manifest does not list, then manifest.json last; then the lock
 * Plan took is given up.
 */
export async function publish(
  task: WorkTask & { release: string },
  env: PhaseEnv,
): Promise<Manifest & { release: string }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const release = await env.stores.open(asFolder(task.release));
  const { files } = await getJson<{ files: ManifestEntry[] }>(work.loc.store, work.key('verified.json'));
  const copyIn = async (name: string): Promise<void> => {
    const from = work.key(`staging/${name}`);
    const to = joinKey(release.key, name);
    if (release.store === work.loc.store) await release.store.copy(from, to);
    else await release.store.put(to, await work.loc.store.get(from));
  };
  const manifest = await runAsync(
    publishSteps(
      storeFolder(release),
      files,
      work.file.plan.runId,
      work.file.plan.claim,
      copyIn,
      warner(env),
    ),
  );
  env.log({ state: 'Publish', files: files.length, ms: ms(t0) });
  env.say?.(`published ${files.length} files and manifest.json to ${task.release}`);
  return { ...manifest, release: task.release };
}

/** A lock that could not be removed fails nothing: said to a person, logged without the message. */
function warner(env: PhaseEnv): (line: string) => void {
  return (line) => {
    env.log({ lockRemoved: false });
    env.say?.(line);
  };
}

/** The failure path: records what failed next to the work files. Never throws. */
export async function reportFailure(
  input: FailedState | ExecutionStatusEvent,
  env: PhaseEnv,
): Promise<{ reported: string | null }> {
  const state = failedState(input);
  if (!state) return { reported: null };
  const error = describeFailure(state.error);
  // Before Plan has named the work area (it failed), the release's own work folder stands in:
  // under the store, or else the spec's bucket, as Plan would have chosen it.
  const root =
    state.store ??
    (state.spec?.startsWith('s3://') ? state.spec.slice(0, state.spec.indexOf('/', 5) + 1) : undefined);
  const where =
    state.plan?.work ??
    state.work ??
    (root ? `${asFolder(root)}work/${releaseName(state.spec ?? '')}/failed/` : undefined);
  env.log({ state: 'ReportFailure', error: error.error, code: error.code ?? undefined });
  // Plan took the release folder's lock: give it up (unlock never throws).
  if (state.plan?.claim) {
    const folder = storeFolder(await env.stores.open(asFolder(state.plan.release)));
    await runAsync(unlock(folder, state.plan.claim, warner(env)));
  }
  if (!where) return { reported: null };
  try {
    const loc = await env.stores.open(asFolder(where));
    const key = joinKey(loc.key, 'error.json');
    await putJson(loc.store, key, {
      format: 'ppdp-error/1',
      runId: state.plan?.runId ?? null,
      published: false,
      ...error,
      at: new Date().toISOString(),
    });
    return { reported: loc.store.root + key };
  } catch (e) {
    env.log({ state: 'ReportFailure', reportWritten: false, why: (e as Error).name });
    return { reported: null };
  }
}

/** What the failure path's Catch hands ReportFailure: the execution's state and the error. */
export type FailedState = ReleaseRequest & {
  plan?: PlanResult;
  error?: { Error?: string; Cause?: string };
};

/** EventBridge's "Step Functions Execution Status Change" event (the fields used here). */
export interface ExecutionStatusEvent {
  readonly 'detail-type': 'Step Functions Execution Status Change';
  readonly detail: {
    readonly status: string;
    /** The execution's input, as a JSON string. */
    readonly input?: string | null;
    readonly error?: string | null;
    readonly cause?: string | null;
  };
}

/**
 * A failure as ReportFailure records it. Deployed, errors other than ppdp's own refusals stop
 * the execution where they happen (so it can be redriven) and reach ReportFailure through the
 * execution-status rule instead of a Catch: the event carries the execution's input and its
 * error, but not Plan's result, so the error goes to the release's `failed/` work folder.
 * An execution that ended through the failure path was reported already: undefined.
 */
export function failedState(input: FailedState | ExecutionStatusEvent): FailedState | undefined {
  if (!('detail-type' in input)) return input;
  const { status, input: request, error, cause } = input.detail;
  if (error === REPORTED_FAILURE) return undefined;
  let parsed: ReleaseRequest;
  try {
    parsed = JSON.parse(request ?? '{}') as ReleaseRequest;
  } catch {
    return undefined; // not an execution ppdp started
  }
  return {
    ...parsed,
    error: { Error: error ?? `States.${status}`, Cause: cause ?? `the execution ended ${status}` },
  };
}

/** The Catch output as {error, code, message, hint}: Lambda sends a JSON Cause, the local engine a message. */
export function describeFailure(error: { Error?: string; Cause?: string } | undefined): {
  error: string;
  code: string | null;
  message: string;
  hint: string | null;
} {
  let message = error?.Cause ?? 'unknown failure';
  let code: string | null = null;
  let hint: string | null = null;
  try {
    const cause = JSON.parse(message) as { errorMessage?: string; code?: string; hint?: string };
    message = cause.errorMessage ?? message;
    code = cause.code ?? null;
    hint = cause.hint ?? null;
  } catch {
    // a plain message
  }
  return { error: error?.Error ?? 'Error', code, message, hint };
}

// ---------------------------------------------------------------------------------------------
// Helpers

/**
 * The shards' distinct tuples merged in shard order: in order of first appearance in the
 * input, exactly as one collapse over every row would give them. `groupOf` maps each shard's
 * tuples, concatenated, to the merged ones. One shard's tuples are already that.
 */
function mergeTuples(
  parts: readonly TupleColumns[],
  names: readonly string[],
  table: EncodedTable,
  kernel: GroupingKernel,
): { merged: TupleSet; groupOf: Int32Array } {
  if (parts.length === 1) {
    const [only] = parts as [TupleColumns];
    return {
      merged: { columns: only.columns, counts: only.counts, rowToTuple: new Int32Array(0) },
      groupOf: Int32Array.from({ length: only.counts.length }, (_, t) => t),
    };
  }
  const total = parts.reduce((n, p) => n + p.counts.length, 0);
  const concat = (pick: (p: TupleColumns) => Int32Array) => {
    const out = new Int32Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(pick(p), at);
      at += p.counts.length;
    }
    return out;
  };
  const columns = names.map((_, c) => concat((p) => p.columns[c]!));
  const counts = concat((p) => p.counts);
  const domains = names.map((n) => table.columns.find((c) => c.name === n)!.dictionary.length);
  const session = kernel.open(
    { columns, counts, domains },
    names.map(() => []),
  );
  const { groups, groupOf, sizes } = session.group(null);
  const merged = { columns: session.keys(groups), counts: sizes, rowToTuple: new Int32Array(0) };
  session.dispose();
  return { merged, groupOf };
}

function runOf(work: Work): RunKey {
  return { work: work.file.plan.work, started: work.file.started };
}

/** The encoded input: kept from the plan in this process, or read from rows.arrow. */
async function allRows(work: Work): Promise<EncodedTable> {
  return (
    recall<EncodedTable>(runOf(work), 'rows') ??
    readAllRows(work.loc.store, work.key('rows.arrow'), work.file.layout)
  );
}

/** One shard's rows: a view of the kept input, or its record batch read from rows.arrow. */
async function shardRows(work: Work, index: number): Promise<EncodedTable> {
  const range: ShardRange | undefined = work.file.layout.shards[index];
  const all = recall<EncodedTable>(runOf(work), 'rows');
  if (!all || !range) return readShard(work.loc.store, work.key('rows.arrow'), work.file.layout, index);
  const end = range.firstRow + range.rows;
  return {
    ...all,
    rowCount: range.rows,
    columns: all.columns.map((c) => ({ ...c, codes: c.codes.subarray(range.firstRow, end) })),
  };
}

/** A released shard's columns from its Arrow bytes (dictionary columns or numbers). */
function outputColumns(bytes: Uint8Array): OutputColumn[] {
  const table = tableFromIPC(bytes);
  return table.schema.fields.map((field, c) => {
    const chunks = table.getChildAt(c)!.data.filter((d) => d.length > 0);
    if (!DataType.isDictionary(field.type)) {
      const values = new Float64Array(table.numRows);
      let at = 0;
      for (const d of chunks) {
        values.set((d.values as Float64Array).subarray(0, d.length), at);
        at += d.length;
      }
      return { name: field.name, kind: 'number', values };
    }
    const { dictionary, codes } = unionOfDictionaries(
      table.numRows,
      chunks.map((d) => ({
        dictionary: d.dictionary!.toArray() as string[],
        codes: (d.values as Int32Array).subarray(0, d.length),
      })),
    );
    return { name: field.name, kind: 'dictionary', dictionary, codes };
  });
}

/**
 * Pieces of one column, each coded against its own dictionary, concatenated and coded against
 * one dictionary: the pieces' values in order of first appearance.
 */
function unionOfDictionaries(
  total: number,
  pieces: readonly { readonly dictionary: readonly string[]; readonly codes: Int32Array }[],
): { dictionary: string[]; codes: Int32Array } {
  const index = new Map<string, number>();
  const dictionary: string[] = [];
  const codes = new Int32Array(total);
  let at = 0;
  for (const piece of pieces) {
    const remap = Int32Array.from(piece.dictionary, (v) => {
      let code = index.get(v);
      if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
      return code;
    });
    for (let i = 0; i < piece.codes.length; i++) codes[at + i] = remap[piece.codes[i]!]!;
    at += piece.codes.length;
  }
  return { dictionary, codes };
}

const workCache = new Map<string, Work>();

/** Opens a work area: plan.json and the spec bundle (cached per process and work URL). */
async function openWork(url: string, env: PhaseEnv): Promise<Work> {
  const loc = await env.stores.open(asFolder(url));
  const cacheKey = `${loc.store.root}${loc.key}`;
  const key = (name: string) => joinKey(loc.key, name);
  const file = await getJson<PlanFile>(loc.store, key('plan.json'));
  const cached = workCache.get(cacheKey);
  if (cached && cached.file.started === file.started && cached.file.plan.runId === file.plan.runId)
    return cached;
  let specPath: string;
  if (loc.store.root === 'file:///') specPath = `/${key(`bundle/${file.specName}`)}`;
  else {
    const dir = scratch(env, `bundle-${createHash('sha256').update(cacheKey).digest('hex').slice(0, 12)}`);
    for (const o of await loc.store.list(key('bundle/'))) {
      const path = join(dir, o.key.slice(key('bundle/').length));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await loc.store.get(o.key));
    }
    specPath = join(dir, file.specName);
  }
  const work: Work = { loc, file, spec: loadSpec(specPath), key };
  workCache.set(cacheKey, work);
  if (workCache.size > 8) workCache.delete(workCache.keys().next().value!);
  return work;
}

/** Local paths of staged files for a verifier that reads paths (downloaded from S3). */
async function stagedPaths(work: Work, env: PhaseEnv, names: string[]): Promise<(name: string) => string> {
  if (work.loc.store.root === 'file:///') return (name) => `/${work.key(`staging/${name}`)}`;
  const dir = scratch(env, stagedDir(work));
  for (const name of names)
    writeFileSync(join(dir, name), await work.loc.store.get(work.key(`staging/${name}`)));
  return (name) => join(dir, name);
}

function stagedDir(work: Work): string {
  return `staged-${work.file.plan.runId}-${process.pid}`;
}

/** Removes downloaded staged files (Lambda keeps /tmp between invocations). */
function disposeStaged(work: Work, env: PhaseEnv): void {
  if (work.loc.store.root !== 'file:///')
    rmSync(scratch(env, stagedDir(work)), { recursive: true, force: true });
}

function scratch(env: PhaseEnv, name: string): string {
  const dir = join(env.tmp ?? tmpdir(), 'ppdp', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

function asFolder(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

function ms(t0: number): number {
  return Math.round((performance.now() - t0) * 100) / 100;
}

function timer(timings: Record<string, number>) {
  return <T>(phase: string, work: () => T): T => {
    const t = performance.now();
    try {
      return work();
    } finally {
      timings[phase] = (timings[phase] ?? 0) + Math.round((performance.now() - t) * 100) / 100;
    }
  };
}

async function timing(
  store: Store,
  workKey: string,
  state: string,
  msTaken: number,
  inner: Record<string, number> = {},
): Promise<void> {
  await putJson(store, joinKey(workKey, `timings/${state}.json`), {
    ms: Math.round(msTaken * 100) / 100,
    ...inner,
  });
}

/**
 * The report's timings: each state's wall time (shard states summed over shards, with the
 * slowest shard as `<state>Max`), and the method's own phases (search, write, …).
 */
async function gatherTimings(store: Store, workKey: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const prefix = joinKey(workKey, 'timings/');
  for (const o of await store.list(prefix)) {
    const name = baseKey(o.key).replace(/\.json$/, '');
    const t = await getJson<Record<string, number> & { ms: number }>(store, o.key);
    const shard = /^(.*)-(\d+)$/.exec(name);
    const state = shard ? shard[1]! : name;
    const round = (x: number) => Math.round(x * 100) / 100;
    out[state] = round((out[state] ?? 0) + t.ms);
    if (shard) out[`${state}Max`] = Math.max(out[`${state}Max`] ?? 0, t.ms);
    for (const [k, v] of Object.entries(t)) if (k !== 'ms') out[k] = round((out[k] ?? 0) + v);
  }
  return out;
}

function columnLength(c: OutputColumn): number {
  return c.kind === 'dictionary' ? c.codes.length : c.values.length;
}
