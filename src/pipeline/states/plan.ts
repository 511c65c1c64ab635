/**
 * The Plan state: reads the spec and checks the input's first rows against it, claims the
 * release folder, and writes the work area: the spec's bundle and the input's pieces (its
 * files), which the scan reads side by side.
 */

import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drawsSecretSample } from '../../catalogue/catalogue.ts';
import { arrowRanges } from '../../data/arrow.ts';
import { csvRanges } from '../../data/csv.ts';
import { folderFiles, isFolder } from '../../data/input.ts';
import { checkInputFits } from '../../data/limits.ts';
import { formatOf } from '../../data/read.ts';
import type { EncodedTable } from '../../data/table.ts';
import { HierarchyError, InputError, PpdpError, SpecError } from '../../errors.ts';
import { dpPlan } from '../../methods/generalization/index.ts';
import { methodFor } from '../../methods/registry.ts';
import {
  checkSpecFiles,
  confineSpecPaths,
  entityOf,
  isPopulationModel,
  loadSpec,
  type ReleaseSpec,
} from '../../release-spec/spec.ts';
import { cannotRead } from '../../util/unreadable.ts';
import { lockRun, unlockRun } from '../lock.ts';
import { checkOut, specReads } from '../out-path.ts';
import { type Claim, claimFolder, storeFolder, unlock } from '../publish.ts';
import { readInputShards, referencedBytes, runIdFrom, runIdOf } from '../release.ts';
import {
  baseKey,
  dirKey,
  fileUrl,
  fileVersion,
  joinKey,
  keyInside,
  type Location,
  putJson,
  type Store,
  sealWork,
  unsealed,
  utf8,
} from '../storage/index.ts';
import { type StoredFile, storedInputDigest, storedInputFiles } from '../stored-input.ts';
import { PART_ITEM, passThroughBytesPerRow, rowsForWidth, SHARD_ITEM } from './item-rows.ts';
import {
  DEFAULT_ROWS_PER_PART,
  DEFAULT_ROWS_PER_SHARD,
  MAX_SHARDS,
  type PhaseEnv,
  type PlanEvent,
  type PlanResult,
  type ReleaseRequest,
} from './types.ts';
import type { InputPiece } from './work.ts';
import { asFolder, checkLocalPiece, downloadTo, ms, type PlanFile, scratch, timing, warner } from './work.ts';

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
    const { specPath, input } = await materializeSpec(specLoc, downloads);
    return await planFrom(request, event.execution, env, specLoc, specPath, input, started, t0);
  } finally {
    rmSync(downloads, { recursive: true, force: true }); // Lambda keeps /tmp between invocations
  }
}

/**
 * The spec's location. A spec in a bucket is taken at `inbox/<name>/release.json` only
 * (`bucketSpecKey`), checked before the store is asked anything; a local spec is a person's
 * own file, wherever it is.
 * @throws SpecError E_SPEC_PATH for a bucket spec at any other key.
 */
export async function openSpec(url: string, env: PhaseEnv): Promise<Location> {
  const loc = await env.stores.open(url);
  if (loc.store.root === 'file:///') return loc;
  return { ...loc, key: bucketSpecKey(loc.store.root, loc.key) };
}

/** The longest release name (a schedule's name is held to the same, infra/config.ts). */
export const MAX_RELEASE_NAME = 48;

/**
 * Why a bucket spec's key is not `inbox/<name>/release.json` with `<name>` one plain folder
 * (1 to MAX_RELEASE_NAME letters, digits, `.`, `_` or `-`, not `.` or `..`), or undefined
 * when it is. A key is data, never a path: Amazon S3 keeps `inbox/evil/../victim/…` or
 * `inbox/evil/inbox/victim/…` as written, and any reading of it as a path would hand one
 * tenant's spec another's folder or name. So nothing in a key is resolved: a key that is not
 * exactly this shape is refused, and the release's name is that one folder, as written.
 */
export function specKeyProblem(key: string): string | undefined {
  const parts = key.split('/');
  if (parts[0] !== 'inbox' || parts.length < 2) return 'is not under inbox/';
  const folders = parts.slice(1, -1);
  if (folders.includes('')) return 'has an empty folder (//)';
  if (folders.includes('..')) return "has a '..' folder";
  if (folders.includes('.')) return "has a '.' folder";
  if (folders.length !== 1) return `has ${folders.length} folders between inbox/ and release.json, not one`;
  if (parts.at(-1) !== 'release.json') return `names the file '${parts.at(-1)}', not release.json`;
  const name = folders[0]!;
  if (name.length > MAX_RELEASE_NAME)
    return `names a release of ${name.length} characters, more than ${MAX_RELEASE_NAME}`;
  if (!/^[A-Za-z0-9._-]+$/.test(name))
    return `names the release '${name}', with characters other than the letters A–Z and a–z, digits, '.', '_' and '-'`;
  return undefined;
}

/**
 * A bucket spec's key as `specKeyProblem` accepts it, as written: never URL-decoded, which would
 * read another key (`inbox/victim%2Frelease.json` as `inbox/victim/release.json`). An S3 event
 * needs no decoding: S3 encodes none of the characters an accepted key holds. Checked before
 * the store is asked anything.
 * @throws SpecError E_SPEC_PATH naming the key, the rule and why it fails it.
 */
export function bucketSpecKey(root: string, key: string): string {
  const problem = specKeyProblem(key);
  if (problem === undefined) return key;
  throw new SpecError(
    'E_SPEC_PATH',
    `${root}${key}: a spec in a bucket is read only at inbox/<name>/release.json, <name> one folder ` +
      `of at most ${MAX_RELEASE_NAME} ASCII letters, digits, '.', '_' or '-' (not '.' or '..'), which names ` +
      `the release; this key ${problem}, so nothing was read and nothing written`,
    // The key's shape is right and only its folder's name is not: say how to name it.
    /^names (a|the) release /.test(problem)
      ? `rename the folder with the letters A–Z and a–z, digits, '.', '_' or '-' only (no spaces or accents), at most ${MAX_RELEASE_NAME} of them, e.g. inbox/survey_2026/release.json`
      : 'put release.json and its files in one folder right under inbox/, e.g. inbox/adult/release.json ' +
          'beside inbox/adult/adult.csv: no further folders, and no ".", ".." or empty folder in the key',
  );
}

async function planFrom(
  request: ReleaseRequest,
  execution: string | undefined,
  env: PhaseEnv,
  specLoc: Location,
  specPath: string,
  stored: StoredInput | undefined,
  started: number,
  t0: number,
): Promise<PlanResult> {
  for (const [field, v] of [
    ['shards', request.shards],
    ['rowsPerShard', request.rowsPerShard],
    ['rowsPerPart', request.rowsPerPart],
  ] as const) {
    // Shards are checked against their limit here, before a row is counted.
    const most = field === 'shards' ? MAX_SHARDS : Number.MAX_SAFE_INTEGER;
    if (v !== undefined && !(Number.isInteger(v) && v >= 1 && v <= most)) {
      throw new SpecError(
        'E_REQUEST',
        `the release request's ${field} must be a whole number ${field === 'shards' ? `from 1 to ${MAX_SHARDS}` : '≥ 1'}`,
        `e.g. "${field}": ${field === 'shards' ? 4 : 1_000_000}`,
      );
    }
  }
  const bucketFolder = specFolderInStore(specLoc);
  const spec = loadSpec(specPath, bucketFolder);
  checkSpecFiles(spec, bucketFolder);
  const name = releaseNameOf(specLoc);
  // A folder in a bucket is digested where it lies (only its first file is copied here); a
  // file, copied whole for the checks, from its copy: the same bytes, read once.
  const folderInBucket =
    stored !== undefined && !(stored.files.length === 1 && stored.files[0]!.key === stored.key);
  // Each piece with the version of its file digested here (taken first: a local file changed
  // while it is digested is refused once Plan has read it, checkLocalPieces): every later read
  // of the input reads that version or fails.
  const pieces: InputPiece[] = stored
    ? stored.files.map((f) => ({
        url: stored.store.root + f.key,
        bytes: f.size,
        ...(f.version !== undefined ? { version: f.version } : {}),
      }))
    : (isFolder(spec.input) ? folderFiles(spec.input) : [spec.input]).map((path) => {
        const st = statSync(path);
        return { url: fileUrl(path), bytes: st.size, version: fileVersion(st) };
      });
  const runId = folderInBucket
    ? runIdFrom(
        readFileSync(spec.file),
        await storedInputDigest(stored.store, stored.key, stored.files),
        referencedBytes(spec),
      )
    : runIdOf(spec);
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
  if (releaseLoc.store.root === 'file:///') checkOut(`/${releaseLoc.key}`, specReads(spec), 'release');
  return planLocked({
    request,
    execution,
    env,
    spec,
    specPath,
    pieces,
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
 * then the work area: the bundle, plan.json and the pieces the scan reads.
 * A refusal gives up the locks this Plan holds, never another run's.
 */
async function planLocked(p: {
  request: ReleaseRequest;
  execution: string | undefined;
  env: PhaseEnv;
  spec: ReleaseSpec;
  specPath: string;
  pieces: InputPiece[];
  name: string;
  runId: string;
  releaseLoc: Location;
  workUrl: string;
  started: number;
  t0: number;
}): Promise<PlanResult> {
  const { request, execution, env, spec, specPath, pieces, name, runId, releaseLoc, workUrl, started, t0 } =
    p;
  const workLoc = sealWork(await env.stores.open(asFolder(workUrl)));
  const wk = (n: string) => joinKey(workLoc.key, n);

  env.say?.(`reading ${basename(spec.input)}`);
  // A spec with an entity column runs as one task (a person's rows may lie in several shards),
  // and so does one with cell suppression (its verifier reads the whole release). A model
  // sampling the input with a secret stream ((ε, δ)-differential privacy) runs as one task on a
  // small input, and over shards (each piece's scan drawing its own rows) when the input is
  // larger or the request asks for shards.
  const bytes = pieces.reduce((n, piece) => n + piece.bytes, 0);
  const sampledInOneTask =
    drawsSecretSample(spec.privacy) &&
    request.shards === undefined &&
    request.rowsPerShard === undefined &&
    pieces.length === 1 &&
    bytes <= DP_ONE_TASK_BYTES;
  const oneTask =
    sampledInOneTask ||
    entityOf(spec) !== undefined ||
    (spec.method.name === 'generalization' && spec.method.suppression === 'cells');
  const mode = methodFor(spec.method.name).shards && !env.method && !oneTask ? 'sharded' : 'single';
  // Over shards the spec's sampling is checked before any piece samples (one task: in Build).
  if (mode === 'sharded') dpPlan(spec);
  // A single task holds the whole table: it must fit. Sharded, no state does: each piece's
  // scan, and then Combine, project what each state will hold and refuse what would not fit.
  // (A folder in a bucket is here only in part: its size is its files' in the listing.)
  if (mode === 'single') checkInputFits(spec, process.env, bytes);
  // Of a folder in a bucket only the first file is copied here: the rest cannot be counted or checked.
  const onlyFirstHere = pieces.length > 1 && !pieces[0]!.url.startsWith('file:');
  if (request.shards !== undefined && onlyFirstHere) {
    throw new SpecError(
      'E_REQUEST',
      `the release request's shards cannot be counted out for a folder input in a bucket (${pieces.length} files)`,
      'give "rowsPerShard" instead of "shards"',
    );
  }
  const passThrough =
    mode === 'sharded' ? (methodFor(spec.method.name).shards?.passThrough?.(spec) ?? []) : [];
  if (pieces.length > MAX_SHARDS) {
    throw new SpecError(
      'E_REQUEST',
      `${basename(spec.input)} holds ${pieces.length} files, more than ${MAX_SHARDS}`,
      'merge the input into fewer, larger files',
    );
  }
  // The first rows check the header and the columns against the spec before anything is
  // written (each piece's scan checks its own file again), and tell how wide its rows are.
  const firstRows = checkFirstRows(spec, onlyFirstHere);
  const rawBytesPerRow =
    firstRows && passThrough.length > 0 ? passThroughBytesPerRow(firstRows, passThrough) : 0;
  const { perShard, scanned } =
    mode === 'single'
      ? { perShard: Number.POSITIVE_INFINITY, scanned: pieces }
      : shardLayout(pieces, spec, request, env, rawBytesPerRow);
  const perPart = request.rowsPerPart ?? rowsForWidth(DEFAULT_ROWS_PER_PART, rawBytesPerRow, PART_ITEM);
  // Plan has read the local input (its digest, its first rows, its ranges): still the version listed.
  for (const piece of pieces)
    if (piece.url.startsWith('file://')) checkLocalPiece(piece, piece.url.slice('file://'.length));
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
  try {
    await writeBundle(workLoc.store, wk('bundle/'), specPath, spec);
    const root = storeRootOf(request, 'releases');
    const bucket = workLoc.store.root.startsWith('s3://') ? workLoc.store.root.slice(5, -1) : '';
    // Rows, shards and parts are Combine's, once the pieces are read.
    const result: PlanResult = {
      name,
      runId,
      work: workUrlOf(workLoc),
      release: releaseLoc.store.root + asFolder(releaseLoc.key),
      mode,
      method: spec.method.name,
      rows: 0,
      shards: 0,
      pieces: scanned.length,
      bytes: pieces.reduce((n, piece) => n + piece.bytes, 0),
      pieceItems: { bucket, key: wk('pieces.json') },
      items: { bucket, key: wk('shards.json') },
      parts: 0,
      partItems: { bucket, key: wk('parts.json') },
      routesBytes: passThrough.length > 0,
      claim,
      started,
      ...(request.out === undefined && root ? { failureRecord: failureRecordOf(root, name) } : {}),
    };
    const file: PlanFile = {
      request,
      plan: result,
      layout: { rowCount: 0, shards: [], source: spec.input, delimiter: ',' },
      specName: basename(spec.file),
      started,
      digest: '',
      scan: { pieces: scanned, rowsPerShard: Number.isFinite(perShard) ? perShard : null },
      rowsPerPart: perPart,
    };
    await putJson(
      workLoc.store,
      wk('pieces.json'),
      scanned.map((_, index) => ({ index })),
    );
    await putJson(workLoc.store, wk('plan.json'), file);
    await timing(workLoc.store, workLoc.key, 'plan', performance.now() - t0);
    env.log({ state: 'Plan', runId, mode, files: pieces.length, pieces: scanned.length, ms: ms(t0) });
    return result;
  } catch (e) {
    await unlock(folder, claim, warner(env));
    if (runLocked) await unlockRun(unsealed(workLoc.store), workLoc.key);
    throw e;
  }
}

/**
 * Reads the input's first rows, which checks its header and columns against the spec, and
 * returns them. Of a folder in a bucket only the first file is here (`onlyFirst`): when it has
 * no rows, the scan checks the rest.
 */
function checkFirstRows(spec: ReleaseSpec, onlyFirst: boolean): EncodedTable | undefined {
  try {
    return readInputShards(spec, CHECK_ROWS).next().value ?? undefined;
  } catch (e) {
    if (onlyFirst && e instanceof InputError && e.code === 'E_INPUT_NO_ROWS') return undefined;
    throw e;
  }
}

/**
 * The pieces the scan reads side by side: each file, and a large Arrow file (which says where
 * its record batches lie) or CSV file as ranges of about a shard's rows, so that one file is
 * read by many functions at once. Only files here are split (a file in a bucket: its copy
 * here); a range of a stored file is fetched alone. The release does not depend on how the
 * input is split. A CSV file is cut at line breaks (csvRanges), not when the spec says its
 * quoted fields may hold some (`format.lineBreaksInQuotes`), nor when the request counts out
 * its shards (each range would end in a shard of its own).
 */
function inRanges(
  pieces: readonly InputPiece[],
  spec: ReleaseSpec,
  rowsPerShard: number,
  request: ReleaseRequest,
  env: PhaseEnv,
  /** A CSV file in so many ranges, whatever its rows. */
  csvCount?: number,
): InputPiece[] {
  // On one machine the ranges' count is a multiple of the workers that scan them.
  const multipleOf = env.onOneMachine ? env.workers?.threads : undefined;
  const here = (piece: InputPiece): string | undefined =>
    piece.url.startsWith('file:') ? fileURLToPath(piece.url) : pieces.length === 1 ? spec.input : undefined;
  const cutsCsv = !spec.format.lineBreaksInQuotes && request.shards === undefined;
  return pieces.flatMap((piece) => {
    const path = here(piece);
    if (path === undefined) return [piece];
    const format = spec.format.type ?? formatOf(path);
    const ranges =
      format === 'arrow'
        ? arrowRanges(path, rowsPerShard)
        : format === 'csv' && cutsCsv
          ? csvRanges(path, rowsPerShard, {
              delimiter: spec.format.delimiter,
              sampleRows: CHECK_ROWS,
              ranges: csvCount,
              multipleOf,
            })
          : undefined;
    return ranges ? ranges.map((range) => ({ ...piece, range })) : [piece];
  });
}

/**
 * The largest input (one file) whose secret sample one task draws, about half a million rows of
 * Adult's shape; a larger one is sampled shard by shard, each shard's rows by its own scan.
 */
export const DP_ONE_TASK_BYTES = 64 * 2 ** 20;

/** Rows Plan reads to check the input's header and columns. */
const CHECK_ROWS = 1000;

function workUrlOf(loc: Location): string {
  return loc.store.root + asFolder(loc.key);
}

/**
 * The pieces a sharded release scans and its rows per shard. Rows that carry pass-through bytes
 * come fewer to a shard, so that a shard function holds what it was sized for (rowsPerShard).
 * On one machine the states share its memory (admission checks it): a shard keeps the rows of
 * one without such bytes as long as the input is then still cut into ranges that the workers
 * scan side by side, since every range codes its own dictionaries, which Combine then merges.
 * One CSV file not cut at that size is read in a range per worker, side by side; an input not
 * cut into ranges at all (a small one, a file not read in ranges) keeps the functions' cut,
 * whose several shards the workers share. The release does not depend on the shards.
 */
function shardLayout(
  pieces: readonly InputPiece[],
  spec: ReleaseSpec,
  request: ReleaseRequest,
  env: PhaseEnv,
  rawBytesPerRow: number,
): { perShard: number; scanned: InputPiece[] } {
  // (A request's own shards or rows per shard are kept as given.)
  if (
    env.onOneMachine &&
    rawBytesPerRow > 0 &&
    request.rowsPerShard === undefined &&
    request.shards === undefined
  ) {
    const perShard = rowsPerShard(request, env, spec, 0);
    const scanned = inRanges(pieces, spec, perShard, request, env);
    if (scanned.length > pieces.length) return { perShard, scanned };
    // One file not cut at that size, large enough for the workers: a range per worker, each
    // read as one shard.
    const workers = env.workers;
    if (workers && workers.threads > 1 && pieces.length === 1 && pieces[0]!.bytes >= workers.minScanBytes) {
      const ranges = inRanges(pieces, spec, perShard, request, env, workers.threads);
      if (ranges.length > 1) return { perShard, scanned: ranges };
    }
  }
  const perShard = rowsPerShard(request, env, spec, rawBytesPerRow);
  return { perShard, scanned: inRanges(pieces, spec, perShard, request, env) };
}

/**
 * Rows per shard: the request's, or its shard count over the input's rows (counted in a first
 * pass, one shard at a time), or the engine's setting (or one million) for rows of coded cells,
 * fewer for rows that carry `rawBytesPerRow` bytes of pass-through columns (item-rows.ts).
 */
function rowsPerShard(
  request: ReleaseRequest,
  env: PhaseEnv,
  spec: ReleaseSpec,
  rawBytesPerRow: number,
): number {
  if (request.rowsPerShard !== undefined) return request.rowsPerShard;
  if (request.shards === undefined)
    return rowsForWidth(env.rowsPerShard ?? DEFAULT_ROWS_PER_SHARD, rawBytesPerRow, SHARD_ITEM);
  let rows = 0;
  for (const shard of readInputShards(spec, DEFAULT_ROWS_PER_SHARD)) rows += shard.rowCount;
  return Math.max(1, Math.ceil(rows / request.shards));
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

/**
 * A local spec's release name: its folder's (`inbox/<name>/release.json` → `<name>`), each
 * character other than a letter, digit, `.`, `_` or `-` as `_`; `release` for a folder named
 * none of these (``, `.`, `..`).
 */
export function releaseName(specKey: string): string {
  const name = (specKey.split('/').at(-2) ?? '').replace(/[^A-Za-z0-9._-]/g, '_');
  return name === '' || name === '.' || name === '..' ? 'release' : name;
}

/** The release's name: a bucket spec's `<name>` (`bucketSpecKey`), a local spec's folder. */
export function releaseNameOf(loc: Location): string {
  if (loc.store.root === 'file:///') return releaseName(loc.key);
  return bucketSpecKey(loc.store.root, loc.key).split('/')[1]!;
}

/**
 * The release name of the spec at `url`, for a record of its failure: undefined for a spec in
 * a bucket at a key that names no release (`specKeyProblem`), which was refused before
 * anything was read, and whose failure is recorded under no name.
 */
export function releaseNameOfUrl(url: string): string | undefined {
  if (!url.startsWith('s3://')) return releaseName(url);
  const slash = url.indexOf('/', 's3://'.length);
  if (slash < 0) return undefined;
  try {
    return bucketSpecKey(url.slice(0, slash + 1), url.slice(slash + 1)).split('/')[1];
  } catch {
    return undefined;
  }
}

/**
 * A path a bucket spec names (confineSpecPaths has checked it) as a key: resolved against the
 * spec's folder, and checked once more after resolving to lie inside it.
 * @throws SpecError E_SPEC_PATH when it does not.
 */
function specFileKey(loc: Location, path: string): string {
  const key = keyInside(dirKey(loc.key), path);
  if (key !== undefined) return key;
  throw new SpecError(
    'E_SPEC_PATH',
    `${baseKey(loc.key)}: '${path}' leads out of the folder; a spec read from ${loc.store.root}${dirKey(loc.key)} may only name files inside that folder`,
    'name each file relative to release.json, without ".." (e.g. "input": "data.csv"), and upload it to the same folder',
  );
}

/** The folder of a spec read from a bucket (its paths are confined to it); undefined for a local spec. */
function specFolderInStore(loc: Location): string | undefined {
  return loc.store.root === 'file:///' ? undefined : loc.store.root + dirKey(loc.key);
}

/** A spec read from a bucket: its input's objects, where they are. */
interface StoredInput {
  readonly store: Store;
  readonly key: string;
  readonly files: readonly StoredFile[];
}

/**
 * A local path for the spec and the files it names (downloaded when the store is S3, after
 * the spec's paths are checked to stay inside its folder: nothing else is read before). Of a
 * folder input only the first file is copied, for Plan's checks: the scan reads the files
 * where they are, each in its own function.
 */
async function materializeSpec(
  loc: Location,
  dir: string,
): Promise<{ specPath: string; input?: StoredInput }> {
  const folder = specFolderInStore(loc);
  if (folder === undefined) return { specPath: `/${loc.key}` };
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
    return { specPath }; // loadSpec names the JSON error
  }
  confineSpecPaths(json, baseKey(loc.key), folder);
  // Every key the spec names, resolved and checked before any is read.
  const inputKey = typeof json.input === 'string' ? specFileKey(loc, json.input) : undefined;
  const refKeys = [
    ...Object.values(json.attributes ?? {}).map((a) => a?.hierarchy),
    ...(Array.isArray(json.privacy) ? json.privacy.map((m) => m?.population) : []),
  ]
    .filter((r): r is string => typeof r === 'string')
    .map((ref) => specFileKey(loc, ref));
  let input: StoredInput | undefined;
  if (inputKey !== undefined) {
    const files = await storedInputFiles(loc.store, inputKey);
    if (files !== undefined) {
      input = { store: loc.store, key: inputKey, files };
      const first = files[0]!;
      await downloadTo(loc.store, first.key, first.size, local(first.key), undefined, first.version);
    }
  }
  // Each copied once, as one version (the bundle holds these copies for every later state).
  await Promise.all(
    refKeys.map(async (key) => {
      const o = await loc.store.stat(key);
      if (o !== undefined) await downloadTo(loc.store, key, o.size, local(key), undefined, o.version);
    }),
  );
  return { specPath, ...(input ? { input } : {}) };
}

/**
 * A file the spec names, read for the bundle. One that is there but cannot be read (a
 * permission) is named as such; one that is missing is left to the state that reads it.
 */
function bundled(path: string, what: string, error: (message: string, hint: string) => PpdpError): Buffer {
  try {
    return readFileSync(path);
  } catch (err) {
    const { message, hint } = cannotRead(what, basename(path), path, err);
    throw error(message, hint);
  }
}

/**
 * The spec and its hierarchy files under bundle/, with hierarchy paths rewritten to
 * `h<i>/<file name>`: later states load the same spec from any machine.
 */
async function writeBundle(store: Store, prefix: string, specPath: string, spec: ReleaseSpec): Promise<void> {
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
      puts.push(
        store.put(
          joinKey(prefix, rel),
          bundled(
            a.hierarchy.path,
            'hierarchy file',
            (m, h) => new HierarchyError('E_HIERARCHY_MISSING', m, h),
          ),
        ),
      );
  }
  // The population table (one for every model naming it) under p/, by its own name.
  const population = spec.privacy.find(isPopulationModel)?.population;
  if (population !== undefined) {
    const rel = `p/${basename(population)}`;
    for (const [i, m] of spec.privacy.entries()) if (isPopulationModel(m)) json.privacy[i]!.population = rel;
    if (existsSync(population))
      puts.push(
        store.put(
          joinKey(prefix, rel),
          bundled(population, 'population table', (m, h) => new InputError('E_INPUT_MISSING', m, h)),
        ),
      );
  }
  json.input = basename(spec.input);
  puts.push(store.put(joinKey(prefix, basename(spec.file)), `${JSON.stringify(json, null, 2)}\n`));
  await Promise.all(puts);
}
