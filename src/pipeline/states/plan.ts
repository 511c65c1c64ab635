/**
 * The Plan state: reads the spec and the input, claims the release folder, writes the work area.
 */
import { closeSync, existsSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type Projection, ShardedAdmission } from '../../data/admission.ts';
import { readsFile } from '../../data/input.ts';
import { checkInputFits, stateBudgets } from '../../data/limits.ts';
import type { EncodedTable } from '../../data/table.ts';
import { InputError, PpdpError, SpecError } from '../../errors.ts';
import { methodFor } from '../../methods/registry.ts';
import {
  checkSpecFiles,
  confineSpecPaths,
  isPopulationModel,
  loadSpec,
  type ReleaseSpec,
} from '../../spec/spec.ts';
import { CellDigest } from '../../util/keys.ts';
import { lockRun, unlockRun } from '../lock.ts';
import { remember } from '../memo.ts';
import { type Claim, checkOutDir, claimFolder, storeFolder, unlock } from '../publish.ts';
import { readInputShards, runIdOf } from '../release.ts';
import { DICTIONARIES_KEY, encodeShardRows, type RowsLayout, shardRowsKey } from '../rows.ts';
import {
  baseKey,
  dirKey,
  joinKey,
  type Location,
  putJson,
  type Store,
  sealWork,
  unsealed,
  utf8,
} from '../storage/index.ts';
import {
  DEFAULT_ROWS_PER_PART,
  DEFAULT_ROWS_PER_SHARD,
  MAX_SHARDS,
  type PhaseEnv,
  type PlanEvent,
  type PlanResult,
  type ReleaseRequest,
} from './types.ts';
import { asFolder, ms, type PlanFile, scratch, timing, warner } from './work.ts';

export async function plan(event: PlanEvent, env: PhaseEnv): Promise<PlanResult> {
  const started = Date.now();
  const t0 = performance.now();
  const request = event?.request;
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
    const specPath = await materializeSpec(specLoc, downloads);
    return await planFrom(request, event.execution, env, specLoc, specPath, started, t0);
  } finally {
    rmSync(downloads, { recursive: true, force: true }); // Lambda keeps /tmp between invocations
  }
}

/** The spec's location; an S3 event's key may arrive URL-encoded. */
export async function openSpec(url: string, env: PhaseEnv): Promise<Location> {
  const loc = await env.stores.open(url);
  if (!loc.store.root.startsWith('s3://') || (await loc.store.head(loc.key)) !== undefined) return loc;
  const decoded = decodeURIComponent(loc.key.replace(/\+/g, ' '));
  return decoded !== loc.key && (await loc.store.head(decoded)) !== undefined
    ? { ...loc, key: decoded }
    : loc;
}

async function planFrom(
  request: ReleaseRequest,
  execution: string | undefined,
  env: PhaseEnv,
  specLoc: Location,
  specPath: string,
  started: number,
  t0: number,
): Promise<PlanResult> {
  for (const [field, v] of [
    ['shards', request.shards],
    ['rowsPerShard', request.rowsPerShard],
    ['rowsPerPart', request.rowsPerPart],
  ] as const) {
    if (v !== undefined && !(Number.isInteger(v) && v >= 1)) {
      throw new SpecError(
        'E_REQUEST',
        `the release request's ${field} must be a whole number ≥ 1`,
        `e.g. "${field}": ${field === 'shards' ? 4 : 1_000_000}`,
      );
    }
  }
  const bucketFolder = specFolderInStore(specLoc);
  const spec = loadSpec(specPath, bucketFolder);
  checkSpecFiles(spec, bucketFolder);
  const name = releaseName(specLoc.key);
  const runId = runIdOf(spec);
  if (request.runId !== undefined && request.runId !== runId) {
    throw new InputError(
      'E_RUN_CHANGED',
      `${basename(spec.file)} or its input changed after this release was started: it was started ` +
        `for run ${request.runId}, they now give run ${runId}; nothing was written`,
      'upload the input first and release.json last; drop release.json again to release what is there now',
    );
  }
  const releaseRoot = storeRootOf(request, 'releases');
  const workRoot = storeRootOf(request, 'work');
  const release = request.out ?? (releaseRoot ? `${releaseRoot}releases/${name}/${runId}/` : undefined);
  const workUrl = request.work ?? (workRoot ? `${workRoot}work/${name}/${runId}/` : undefined);
  if (!release || !workUrl) {
    throw new PpdpError(
      'E_USAGE',
      'the release request names no output',
      'give --out <dir> or --store s3://bucket/prefix (a request: "out" or "store")',
    );
  }
  const releaseLoc = await env.stores.open(asFolder(release));
  if (releaseLoc.store.root === 'file:///') checkOutDir(`/${releaseLoc.key}`, [spec.input, spec.file]);
  return planLocked({
    request,
    execution,
    env,
    spec,
    specPath,
    name,
    runId,
    releaseLoc,
    workUrl,
    started,
    t0,
  });
}

/**
 * The rest of Plan: the input's checks, then the run lock, then the release folder's claim,
 * then the work area. A refusal gives up the locks this Plan holds, never another run's.
 */
async function planLocked(p: {
  request: ReleaseRequest;
  execution: string | undefined;
  env: PhaseEnv;
  spec: ReleaseSpec;
  specPath: string;
  name: string;
  runId: string;
  releaseLoc: Location;
  workUrl: string;
  started: number;
  t0: number;
}): Promise<PlanResult> {
  const { request, execution, env, spec, specPath, runId, releaseLoc, workUrl, started } = p;
  const workLoc = sealWork(await env.stores.open(asFolder(workUrl)));
  const wk = (n: string) => joinKey(workLoc.key, n);

  env.say?.(`reading ${basename(spec.input)}`);
  const mode = methodFor(spec.method.name).shards && !env.method ? 'sharded' : 'single';
  // A single task holds the whole table: it must fit. Sharded, no state does: the shards read
  // so far project what each state will hold (its distinct values and tuples), and a release
  // that would not fit is refused after a shard or two.
  if (mode === 'single') checkInputFits(spec);
  const perShard = mode === 'single' ? Number.POSITIVE_INFINITY : rowsPerShard(request, env, spec);
  const admission =
    mode === 'sharded'
      ? new ShardedAdmission(
          new Set(spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name)),
          perShard,
          stateBudgets(spec),
        )
      : undefined;
  let projection: Projection | undefined;
  const shardsRead = readInputShards(spec, perShard);
  // The first shard checks the header and the columns against the spec before anything is written.
  let next = shardsRead.next();
  // Deployed, a duplicate start stops here: after the checks that can refuse the release as a
  // whole, before any write. The run lock comes first: a duplicate never touches the folder's.
  // Locks are written conditionally, not sealed: they go to the store as it is.
  const runLocked = await lockRun(unsealed(workLoc.store), workLoc.key, runId, execution);
  const folder = storeFolder(releaseLoc);
  let claim: Claim;
  try {
    claim = await claimFolder(folder, execution);
  } catch (e) {
    if (runLocked) await unlockRun(unsealed(workLoc.store), workLoc.key);
    throw e;
  }
  const layout: RowsLayout = { rowCount: 0, shards: [], source: spec.input, delimiter: ',' };
  const digest = new CellDigest();
  let parts = 1;
  let lastShard: EncodedTable | undefined;
  // Writes in flight: a refusal waits for them, so none lands (or fails) after Plan has ended.
  const writes: Promise<void>[] = [];
  try {
    writes.push(writeBundle(workLoc.store, wk('bundle/'), specPath, spec));
    for (; !next.done; next = shardsRead.next()) {
      const shard = next.value;
      const index = layout.shards.length;
      if (index >= MAX_SHARDS) {
        throw new SpecError(
          'E_REQUEST',
          `the input has more than ${MAX_SHARDS} shards of ${perShard} rows`,
          'start the release with a larger "rowsPerShard"',
        );
      }
      projection = admission?.observe(shard) ?? projection;
      digest.add(shard);
      layout.shards.push({ firstRow: shard.firstRow, rows: shard.rowCount });
      Object.assign(layout, { rowCount: shard.firstRow + shard.rowCount, delimiter: shard.delimiter });
      const { firstRow: _, ...table } = shard;
      lastShard = table;
      remember({ work: workUrlOf(workLoc), started }, shardRowsKey(index), table);
      // One shard's bytes in flight at a time: memory stays at about two shards.
      await Promise.all(writes.splice(0));
      writes.push(workLoc.store.put(wk(shardRowsKey(index)), encodeShardRows(table)));
      env.say?.(`read ${layout.rowCount} rows (${index + 1} shards)`);
    }
    parts = partsOf(request, layout.rowCount, mode);
    // The last shard's dictionaries hold every value: stored once, without rows, for the
    // states that need the values but not the table (Search, the verification slices).
    const dictionaries: EncodedTable = {
      ...lastShard!,
      rowCount: 0,
      columns: lastShard!.columns.map(({ name, dictionary }) => ({
        name,
        dictionary,
        codes: new Int32Array(0),
      })),
    };
    remember({ work: workUrlOf(workLoc), started }, DICTIONARIES_KEY, dictionaries);
    writes.push(
      workLoc.store.put(wk(DICTIONARIES_KEY), encodeShardRows(dictionaries)),
      putJson(
        workLoc.store,
        wk('shards.json'),
        layout.shards.map((_, index) => ({ index })),
      ),
      putJson(
        workLoc.store,
        wk('parts.json'),
        Array.from({ length: parts }, (_, index) => ({ index })),
      ),
      // The longest slices first (a part holds up to two shards' rows and two files), so
      // that the short ones fill in at the end when there are fewer workers than slices.
      putJson(workLoc.store, wk('checks.json'), [
        ...Array.from({ length: parts }, (_, index) => ({ kind: 'part', index })),
        ...layout.shards.map((_, index) => ({ kind: 'shard', index })),
      ]),
    );
    await Promise.all(writes);
    return await finishPlan({ ...p, workLoc, mode, layout, parts, claim, digest, projection });
  } catch (e) {
    await Promise.allSettled(writes);
    await unlock(folder, claim, warner(env));
    if (runLocked) await unlockRun(unsealed(workLoc.store), workLoc.key);
    throw e;
  }
}

/** Plan's answer, and plan.json for the later states. */
async function finishPlan(p: {
  request: ReleaseRequest;
  env: PhaseEnv;
  spec: ReleaseSpec;
  name: string;
  runId: string;
  releaseLoc: Location;
  workLoc: Location;
  mode: 'sharded' | 'single';
  layout: RowsLayout;
  parts: number;
  claim: Claim;
  digest: CellDigest;
  projection: Projection | undefined;
  started: number;
  t0: number;
}): Promise<PlanResult> {
  const { request, env, spec, name, runId, releaseLoc, workLoc, mode, layout, parts, claim, digest } = p;
  const { started, t0, projection } = p;
  const wk = (n: string) => joinKey(workLoc.key, n);
  const specName = basename(spec.file);
  const root = storeRootOf(request, 'releases');
  const bucket = workLoc.store.root.startsWith('s3://') ? workLoc.store.root.slice(5, -1) : '';
  const result: PlanResult = {
    name,
    runId,
    work: workUrlOf(workLoc),
    release: releaseLoc.store.root + asFolder(releaseLoc.key),
    mode,
    method: spec.method.name,
    rows: layout.rowCount,
    shards: layout.shards.length,
    items: { bucket, key: wk('shards.json') },
    parts,
    partItems: { bucket, key: wk('parts.json') },
    checkItems: { bucket, key: wk('checks.json') },
    claim,
    ...(request.out === undefined && root ? { failureRecord: failureRecordOf(root, name) } : {}),
  };
  // The input's digest keys the release's random streams; it stays in the work area.
  const file: PlanFile = {
    request,
    plan: result,
    layout,
    specName,
    started,
    digest: Buffer.from(digest.digest()).toString('hex'),
  };
  await putJson(workLoc.store, wk('plan.json'), file);
  await timing(workLoc.store, workLoc.key, 'plan', performance.now() - t0);
  env.log({
    state: 'Plan',
    runId,
    mode,
    rows: layout.rowCount,
    shards: result.shards,
    ms: ms(t0),
    // The admission's projection for the whole input, in MiB (counts only, never values).
    ...(projection
      ? {
          projectedPlanMiB: mib(projection.needs.Plan),
          projectedShardMiB: mib(projection.needs.shard),
          projectedSearchMiB: mib(projection.needs.Search),
        }
      : {}),
  });
  return result;
}

function workUrlOf(loc: Location): string {
  return loc.store.root + asFolder(loc.key);
}

/**
 * Rows per shard: the request's, or its shard count over the input's rows (counted in a first
 * pass, one shard at a time), or the engine's setting, or one million.
 */
function rowsPerShard(request: ReleaseRequest, env: PhaseEnv, spec: ReleaseSpec): number {
  if (request.rowsPerShard !== undefined) return request.rowsPerShard;
  if (request.shards === undefined) return env.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD;
  let rows = 0;
  for (const shard of readInputShards(spec, DEFAULT_ROWS_PER_SHARD)) rows += shard.rowCount;
  return Math.max(1, Math.ceil(rows / request.shards));
}

/** Output parts: one per `rowsPerPart` input rows (a single task writes one). */
function partsOf(request: ReleaseRequest, rows: number, mode: 'sharded' | 'single'): number {
  const perPart = request.rowsPerPart ?? DEFAULT_ROWS_PER_PART;
  return mode === 'single' ? 1 : Math.max(1, Math.ceil(rows / perPart));
}

/** The deployment's settings (infra/stacks/release-stack.ts): the work and release buckets. */
export const ROOT_ENV = { work: 'PPDP_WORK_ROOT', releases: 'PPDP_RELEASE_ROOT' } as const;

/**
 * Root of work/ or releases/ (ending in `/`): the deployment's setting for it when there is
 * one, else the request's store, else an s3:// spec's bucket.
 */
export function storeRootOf(
  request: Pick<ReleaseRequest, 'spec' | 'store'>,
  area: keyof typeof ROOT_ENV,
): string | undefined {
  const root =
    (process.env[ROOT_ENV[area]] || undefined) ??
    request.store ??
    (request.spec?.startsWith('s3://') ? request.spec.slice(0, request.spec.indexOf('/', 5) + 1) : undefined);
  return root === undefined || root === '' ? undefined : asFolder(root);
}

/** Where a release's failure is recorded for its users, beside its run folders. */
export function failureRecordOf(rootUrl: string, name: string): string {
  return `${rootUrl}releases/${name}/error.json`;
}

/** The release's name: `<name>` for `inbox/<name>/release.json`, else the spec's folder. */
export function releaseName(specKey: string): string {
  const parts = specKey.split('/');
  const i = parts.lastIndexOf('inbox');
  const raw = i >= 0 && i + 2 < parts.length ? parts[i + 1]! : (parts.at(-2) ?? 'release');
  return raw.replace(/[^A-Za-z0-9._-]/g, '_') || 'release';
}

/** The folder of a spec read from a bucket (its paths are confined to it); undefined for a local spec. */
function specFolderInStore(loc: Location): string | undefined {
  return loc.store.root === 'file:///' ? undefined : loc.store.root + dirKey(loc.key);
}

/**
 * A local path for the spec and the files it names (downloaded when the store is S3, after
 * the spec's paths are checked to stay inside its folder: nothing else is read before).
 */
async function materializeSpec(loc: Location, dir: string): Promise<string> {
  const folder = specFolderInStore(loc);
  if (folder === undefined) return `/${loc.key}`;
  const local = (key: string) => join(dir, loc.store.root.slice(5), key);
  const text = await loc.store.get(loc.key);
  const specPath = local(loc.key);
  mkdirSync(dirname(specPath), { recursive: true });
  writeFileSync(specPath, text);
  let json: {
    input?: unknown;
    attributes?: Record<string, { hierarchy?: unknown }>;
    privacy?: { population?: unknown }[];
  };
  try {
    json = JSON.parse(utf8(text));
  } catch {
    return specPath; // loadSpec names the JSON error
  }
  confineSpecPaths(json, baseKey(loc.key), folder);
  const refs = [
    json.input,
    ...Object.values(json.attributes ?? {}).map((a) => a?.hierarchy),
    ...(Array.isArray(json.privacy) ? json.privacy.map((m) => m?.population) : []),
  ].filter((r): r is string => typeof r === 'string');
  await Promise.all(
    refs.map(async (ref) => {
      const key = joinKey(dirKey(loc.key), ref);
      const size = await loc.store.head(key);
      if (size !== undefined) return download(loc.store, key, size, local(key));
      // No such object: a folder input, its files under `<key>/` (else the reader names it missing).
      await downloadFolder(loc.store, key, local);
    }),
  );
  return specPath;
}

/**
 * A folder input's files (every object directly under `<key>/` the reader reads), one at a
 * time; a deeper key only makes its subfolder, which the reader refuses by name.
 */
async function downloadFolder(store: Store, key: string, local: (key: string) => string): Promise<void> {
  const prefix = `${key.replace(/\/$/, '')}/`;
  for (const o of await store.list(prefix)) {
    const rest = o.key.slice(prefix.length);
    if (rest === '') continue; // a folder marker
    const slash = rest.indexOf('/');
    if (slash >= 0) mkdirSync(local(prefix + rest.slice(0, slash)), { recursive: true });
    else if (readsFile(rest)) await download(store, o.key, o.size, local(o.key));
  }
}

/** Bytes per range request when downloading: memory holds one piece, not the input. */
const DOWNLOAD_PIECE_BYTES = 64 * 1024 * 1024;

/** Copies an object to a local file a piece at a time. */
async function download(store: Store, key: string, size: number, path: string): Promise<void> {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'w');
  try {
    for (let at = 0; at < size; at += DOWNLOAD_PIECE_BYTES) {
      const piece = await store.getRange(key, at, Math.min(size, at + DOWNLOAD_PIECE_BYTES));
      writeSync(fd, piece);
    }
  } finally {
    closeSync(fd);
  }
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
    privacy: { population?: string }[];
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
  // The population table (one for every model naming it) under p/, by its own name.
  const population = spec.privacy.find(isPopulationModel)?.population;
  if (population !== undefined) {
    const rel = `p/${basename(population)}`;
    for (const [i, m] of spec.privacy.entries()) if (isPopulationModel(m)) json.privacy[i]!.population = rel;
    if (existsSync(population)) puts.push(store.put(joinKey(prefix, rel), readFileSync(population)));
  }
  json.input = basename(spec.input);
  puts.push(store.put(joinKey(prefix, basename(spec.file)), `${JSON.stringify(json, null, 2)}\n`));
  await Promise.all(puts);
}

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);
