/**
 * Publishing a verified release into its folder (any store: a local folder or S3), as the
 * Publish state runs it.
 *
 * - Claim, before any work: the folder must be missing, empty, or hold a ppdp release (a
 *   manifest.json ppdp wrote) or an interrupted ppdp publish (its lock); anything else is
 *   refused (E_OUT_NOT_RELEASE), so a release never lands beside files it does not list. The
 *   claim takes the folder's lock, `.ppdp-lock`, created exclusively (Store.putIfAbsent): a
 *   second run into the same folder fails (E_OUT_LOCKED) until the first has finished.
 * - A folder that already holds this run's release, complete (`publishedRelease`: every file
 *   its manifest lists there, of that size and SHA-256), is left as
 *   it is: the same spec and input give the same run id, and a re-run (a re-drop, a retry)
 *   neither rewrites it nor risks withdrawing it on a failed write. A release drawing a secret
 *   sample ((ε, δ)-differential privacy) keeps the one it holds whatever the new sample: each
 *   sample published would release the same people again (`keep: 'sample'`).
 * - Publish: the old manifest goes first (an older release is untrusted from the moment its
 *   files change), then each verified file is copied in and read back, its size and SHA-256
 *   compared with what Verify verified (any difference refuses the release, E_PUBLISH_MISMATCH),
 *   then every file the new manifest does not list is removed, then manifest.json is written
 *   last, then the lock is removed. Readers
 *   trust only a folder whose manifest lists matching files: a failure or a crash leaves no
 *   manifest or a complete release, never two releases mixed. A failed publish removes the
 *   files it wrote (best effort), so that a failed run leaves no released data behind.
 * - The lock records pid, host, time and the execution (its name, when the engine gives one).
 *   A run that fails after changing the folder leaves its lock marked released (the folder's
 *   mark: ppdp's, interrupted); a crashed run's lock, whose pid is dead on this host, is taken
 *   over by the next run; a retried or redriven execution takes its own lock back (a Lambda
 *   killed after the claim: another host, so no pid tells). The CLI stopped by a signal before
 *   the manifest is written leaves what a failed run leaves (the files it copied in go, the
 *   lock is given up); once the manifest is being written, a signal lets the run finish
 *   (cleanup.ts `finishOnSignal`). Every write of the lock is
 *   conditional (lock.ts `takeLock`).
 * */
import { randomBytes } from 'node:crypto';
import { existsSync, rmdirSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { OutputError, VerificationError } from '../errors.ts';
import { finishOnSignal, stopIfSignalled, stopOnSignal } from './cleanup.ts';
import { parseLock as parseLockFile, takeLock } from './lock.ts';
import { type Digest, joinKey, type Location, type StoreError, utf8 } from './storage/store.ts';

export interface ManifestEntry {
  name: string;
  bytes: number;
  sha256: string;
}

export interface Manifest {
  format: 'ppdp-release/1';
  runId: string;
  verified: true;
  files: ManifestEntry[];
}

export const MANIFEST = 'manifest.json';
export const LOCK = '.ppdp-lock';

/** One release folder's files, as the publish steps see them (names relative to the folder). */
export interface Folder {
  /** The folder as a person names it (a path or a URL), for messages. */
  readonly where: string;
  /** Every file in the folder, recursively; undefined when the (local) folder does not exist. */
  list(): Promise<string[] | undefined>;
  /** A file's bytes, or undefined when there is none. */
  read(name: string): Promise<Uint8Array | undefined>;
  size(name: string): Promise<number | undefined>;
  /** A file's size and SHA-256, read as a stream. */
  digest(name: string): Promise<Digest>;
  /** Writes a file whole: readers never see it partial. */
  write(name: string, body: string): Promise<void>;
  /** Creates a file only if there is none (exclusively): false when one exists. */
  create(name: string, body: string): Promise<boolean>;
  remove(names: readonly string[]): Promise<void>;
  /** Removes the folder itself if it is empty (a local folder; nothing on a store). */
  drop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------
// The lock

/** A claimed folder: the lock's token, and whether the claim created the (local) folder. */
export interface Claim {
  readonly token: string;
  readonly created: boolean;
}

interface LockFile {
  format: 'ppdp-lock/1';
  token: string;
  pid: number;
  host: string;
  /** This process among those that ever had its pid (pids are reused). */
  process: string;
  started: string;
  /** Set by a run that failed after changing the folder: free for the next run to take over. */
  released?: true;
  /** The execution that holds it, when the engine names one (`$$.Execution.Name`). */
  execution?: string;
}

const PROCESS = randomBytes(8).toString('hex');
/** The tokens this process holds: its own locks are stale exactly when not held. */
const held = new Set<string>();
/** Per claim held, what unregisters its unlock on a signal (cleanup.ts stopOnSignal). */
const onSignal = new Map<string, () => void>();
/** Per claim whose publish is copying files in: their names, and the publish's end. */
const copying = new Map<string, { names: string[]; done: Promise<unknown> }>();

function newLock(): LockFile {
  return {
    format: 'ppdp-lock/1',
    token: randomBytes(8).toString('hex'),
    pid: process.pid,
    host: hostname(),
    process: PROCESS,
    started: new Date().toISOString(),
  };
}

const lockText = (lock: LockFile): string => `${JSON.stringify(lock, null, 2)}\n`;

const parseLock = (bytes: Uint8Array | undefined) => parseLockFile<LockFile>(bytes);

/** Whether a lock's run is certainly over: released, or its process gone from this host. */
function isStale(lock: LockFile): boolean {
  if (lock.released) return true;
  if (lock.process === PROCESS) return !held.has(lock.token);
  if (lock.host !== hostname() || lock.pid === process.pid) return false;
  try {
    process.kill(lock.pid, 0);
    return false;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function lockedError(folder: Folder, lock: LockFile | null | undefined): OutputError {
  const holder = lock ? ` (pid ${lock.pid} on ${lock.host}, since ${lock.started})` : '';
  return new OutputError(
    'E_OUT_LOCKED',
    `${folder.where}: another release is publishing there${holder}`,
    `wait for it to finish, or use another folder; if no ppdp run is writing there any more (a ` +
      `crash on another machine), remove ${folder.where}/${LOCK} and run again`,
  );
}

/**
 * Takes the folder's lock (lock.ts `takeLock`: conditional writes only). A lock of the same
 * execution (a retried or redriven Plan) is this run's own: its token is the claim's.
 */
async function acquire(folder: Folder, execution: string | undefined): Promise<string> {
  const lock = { ...newLock(), ...(execution ? { execution } : {}) };
  held.add(lock.token); // from the start, so that no one in this process takes it for stale
  try {
    const taken = await takeLock(
      folder,
      LOCK,
      lockText(lock),
      parseLock,
      (found) =>
        execution !== undefined && found.execution === execution ? 'ours' : isStale(found) ? 'free' : 'held',
      (found) => {
        throw lockedError(folder, found);
      },
    );
    if (taken.token !== lock.token) {
      held.delete(lock.token);
      held.add(taken.token);
    }
    return taken.token;
  } catch (e) {
    held.delete(lock.token); // a lock this left behind is stale from now on
    throw e;
  }
}

/**
 * Gives the lock up if this run still holds it; never throws (a lock left behind is taken over
 * by the next run). After a failure that changed the folder, the lock stays, marked released,
 * as the mark of an interrupted ppdp publish; a local folder the claim created goes again.
 */
export async function unlock(folder: Folder, claim: Claim, warn: (line: string) => void): Promise<void> {
  try {
    const lock = parseLock(await folder.read(LOCK));
    if (lock?.token !== claim.token) return;
    const rest = ((await folder.list()) ?? []).filter((n) => !isLockName(n));
    if (rest.length > 0 && !rest.includes(MANIFEST)) {
      await folder.write(LOCK, lockText({ ...lock, released: true }));
      return;
    }
    await folder.remove([LOCK]);
    if (rest.length === 0 && claim.created) await folder.drop();
  } catch (e) {
    warn(
      `could not remove the lock ${folder.where}/${LOCK} (${(e as Error).message}); ` +
        'the next release into that folder takes it over',
    );
  } finally {
    held.delete(claim.token);
    onSignal.get(claim.token)?.();
    onSignal.delete(claim.token);
  }
}

function isLockName(name: string): boolean {
  return name === LOCK || name.startsWith(`${LOCK}.`);
}

// ---------------------------------------------------------------------------------------------
// Claim and publish

/**
 * Before any work: refuses a folder that holds anything but a ppdp release (nothing is
 * written then), and takes its lock.
 */
export async function claimFolder(folder: Folder, execution?: string): Promise<Claim> {
  const names = await folder.list();
  const created = names === undefined;
  const others = (names ?? []).filter((n) => !isLockName(n));
  const ours = others.length === 0 || names!.includes(LOCK) || (await holdsReleaseOrLock(folder));
  if (!ours) {
    throw new OutputError(
      'E_OUT_NOT_RELEASE',
      `${folder.where}: holds ${others.length} file${others.length === 1 ? '' : 's'} and no ppdp ` +
        `release (no manifest.json written by ppdp); the release would be published beside them`,
      'choose an empty or new folder for the release, or remove this one (ppdp replaces only a folder holding a ppdp release)',
    );
  }
  const claim = { token: await acquire(folder, execution), created };
  // The CLI stopped by a signal exits without its failure path: the lock would stay, in a folder
  // it made that holds nothing else, and the files a publish under way had copied in, with no
  // manifest. Leave what that path leaves: the copies go (now, and again once the publish, which
  // starts no copy after the signal, has ended), then the lock is given up.
  const warn = (line: string) => process.stderr.write(`ppdp: ${line}\n`);
  onSignal.set(
    claim.token,
    stopOnSignal(async () => {
      const publishing = copying.get(claim.token);
      if (publishing) {
        await folder.remove(publishing.names).catch(() => {});
        await publishing.done.catch(() => {});
      }
      await unlock(folder, claim, warn);
    }),
  );
  return claim;
}

/**
 * Whether the folder holds a ppdp manifest or lock, read directly. A listing is no snapshot: a
 * run finishing while it is taken (manifest written, then lock removed) can leave neither in it.
 * A ppdp folder always holds one of the two, so alternate reads find one unless runs keep
 * starting and ending in between.
 */
async function holdsReleaseOrLock(folder: Folder): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    if (isManifest(await folder.read(MANIFEST))) return true;
    if ((await folder.read(LOCK)) !== undefined) return true;
  }
  return false;
}

export function isManifest(bytes: Uint8Array | undefined): boolean {
  return readManifest(bytes) !== undefined;
}

/** A ppdp manifest's contents, or undefined when the bytes are none (not JSON, not ppdp's). */
function readManifest(bytes: Uint8Array | undefined): Manifest | undefined {
  try {
    const m = bytes === undefined ? undefined : (JSON.parse(utf8(bytes)) as Manifest);
    return m?.format === 'ppdp-release/1' ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The files a report of the run is in: their bytes hold the run's timings, not its release. */
const REPORT_FILES = new Set(['report.json', 'report.html']);

/**
 * Which release of this run a folder keeps: `same` one listing the data files verified now,
 * `sample` any intact one (a secret sample: the one published stays, whatever the new sample
 * holds), `never` none (`ppdp apply` replaces it).
 */
export type Keep = 'same' | 'sample' | 'never';

/**
 * The release of run `runId` the folder holds, complete and the same as the one verified now
 * (`files`): a ppdp manifest of that run id, verified, listing the same data files with the same
 * sizes and SHA-256s (a request's output parts change the files, not the run id; the reports
 * differ by their timings only), and every file it lists there with the size and SHA-256 it
 * lists, read again; undefined otherwise (the release is then published anew). Reading the
 * files costs less than the run that just rebuilt and verified them, and a file changed in
 * place after the manifest was written keeps its size.
 *
 * With `keep: 'sample'` its data files need not be the ones verified now (another secret sample
 * of the same input), and are kept only intact, as above.
 */
export async function publishedRelease(
  folder: Folder,
  runId: string,
  files: readonly ManifestEntry[],
  keep: Exclude<Keep, 'never'> = 'same',
): Promise<Manifest | undefined> {
  const m = readManifest(await folder.read(MANIFEST));
  if (m?.runId !== runId || m.verified !== true || !Array.isArray(m.files) || m.files.length === 0)
    return undefined;
  const data = (list: readonly ManifestEntry[]) =>
    list
      .filter((f) => !REPORT_FILES.has(f.name))
      .map((f) => `${f.name}\u0000${f.bytes}\u0000${f.sha256}`)
      .sort();
  const [held, verified] = [data(m.files), data(files)];
  if (keep === 'same' && (held.length !== verified.length || held.some((f, i) => f !== verified[i])))
    return undefined;
  let complete = true;
  await eachAtOnce(m.files, PUBLISH_CONCURRENCY, async (f) => {
    if (!complete) return;
    // The size first (no read), then the SHA-256: a file changed in place keeps its size.
    if ((await folder.size(f.name)) !== f.bytes) complete = false;
    else if ((await folder.digest(f.name)).sha256 !== f.sha256) complete = false;
  });
  return complete ? m : undefined;
}

/** Where the verified files are published from. */
export interface PublishSource {
  /** Copies one verified file into the folder, whole. */
  copyIn(file: ManifestEntry): Promise<void>;
  /** The size and SHA-256 of the file as it lies where it is copied from. */
  digest(name: string): Promise<Digest>;
  /**
   * The size and SHA-256 of a published file that is known, without reading it, to be the
   * verified file as it was sealed (a local hard link to it, unchanged since); undefined when it
   * must be read back.
   */
  unchanged?(file: ManifestEntry): Promise<Digest | undefined>;
}

/**
 * Files copied and read back at once: a release of hundreds of parts is published in minutes,
 * not in one copy after another (copies between buckets are server-side; the read-back streams).
 */
export const PUBLISH_CONCURRENCY = 8;

/**
 * Runs `work` over the items, `limit` at a time. The first failure stops new items from
 * starting and is thrown once the ones under way have settled: nothing lands after the caller
 * has given up.
 */
async function eachAtOnce<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
): Promise<void> {
  let next = 0;
  let failure: { error: unknown } | undefined;
  const lane = async () => {
    while (failure === undefined && next < items.length) {
      const item = items[next++]!;
      try {
        await work(item);
      } catch (error) {
        failure ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  if (failure) throw failure.error;
}

/**
 * Publishes verified files so that the folder holds exactly them and their manifest, then
 * gives the lock up; or, when the folder already holds this run's release as `keep` allows
 * (`publishedRelease`), gives the lock up and returns that release's manifest. See the file's comment.
 */
export async function publishInto(
  folder: Folder,
  files: readonly ManifestEntry[],
  runId: string,
  claim: Claim,
  source: PublishSource,
  warn: (line: string) => void,
  keep: Keep = 'same',
): Promise<Manifest> {
  const manifest: Manifest = { format: 'ppdp-release/1', runId, verified: true, files: [...files] };
  const text = `${JSON.stringify(manifest, null, 2)}\n`;
  if (parseLock(await folder.read(LOCK))?.token !== claim.token) {
    // A retried Publish whose first attempt finished: the folder already holds this release.
    const found = await folder.read(MANIFEST);
    if (found !== undefined && utf8(found) === text) return manifest;
    throw new OutputError(
      'E_OUT_LOCKED',
      `${folder.where}: this run no longer holds the folder's lock (it was removed or taken over), so it publishes nothing`,
      'make sure one release at a time writes to the folder, and run the release again',
    );
  }
  const before = (await folder.list()) ?? [];
  if (before.includes(MANIFEST)) {
    // This run's release, already published (a re-run of the same spec and input): kept as it
    // is, never withdrawn for a copy that would give the same data (or another secret sample).
    const kept = keep === 'never' ? undefined : await publishedRelease(folder, runId, files, keep);
    if (kept !== undefined) {
      finishOnSignal('published');
      await unlock(folder, claim, warn);
      return kept;
    }
    stopIfSignalled(); // the earlier release stays whole
    await folder.remove([MANIFEST]);
  }
  const done = copyIn(folder, files, text, before, source);
  copying.set(claim.token, { names: [...files.map((f) => f.name), MANIFEST], done });
  try {
    await done;
  } finally {
    copying.delete(claim.token);
  }
  await unlock(folder, claim, warn);
  return manifest;
}

/**
 * Copies the verified files in, each read back, removes the files the manifest does not list,
 * then writes the manifest (`text`); on a failure, or a signal before the manifest, removes
 * what it wrote and throws.
 */
async function copyIn(
  folder: Folder,
  files: readonly ManifestEntry[],
  text: string,
  before: readonly string[],
  source: PublishSource,
): Promise<void> {
  try {
    await eachAtOnce(files, PUBLISH_CONCURRENCY, async (f) => {
      stopIfSignalled();
      await source.copyIn(f).catch((e: unknown) => {
        // The store's error names the staged file it read; the write that failed is this one.
        if (e instanceof Error) e.message = `${folder.where}/${f.name}: not published: ${e.message}`;
        throw e;
      });
      await checkPublished(folder, f, source);
    });
    const listed = new Set(files.map((f) => f.name));
    const stale = before.filter((n) => n !== MANIFEST && n !== LOCK && !listed.has(n));
    if (stale.length > 0) await folder.remove(stale);
    // Past this point a signal no longer stops the run: the release is being published.
    finishOnSignal('writing');
    await folder.write(MANIFEST, text);
    finishOnSignal('published');
  } catch (e) {
    // A failed run publishes nothing: what this one wrote goes again (best effort: the folder
    // has no manifest, so nothing left is trusted, and the lock marks it for the next run).
    await folder.remove([...files.map((f) => f.name), MANIFEST]).catch(() => {});
    throw e;
  }
}

/**
 * A published file read back must be the verified one, byte for byte (size and SHA-256):
 * otherwise nothing is published (no manifest). The message says which link broke: the file
 * in the work area changed after Verify, or the copy differs from it.
 */
async function checkPublished(folder: Folder, f: ManifestEntry, source: PublishSource): Promise<void> {
  const got = (await source.unchanged?.(f)) ?? (await folder.digest(f.name));
  if (got.bytes === f.bytes && got.sha256 === f.sha256) return;
  const from = await source.digest(f.name).catch(() => undefined);
  const link =
    from !== undefined && from.bytes === f.bytes && from.sha256 === f.sha256
      ? 'the copy differs from the verified file'
      : 'the verified file was changed after Verify';
  const what = (d: Digest) => `${d.bytes} bytes, SHA-256 ${d.sha256.slice(0, 16)}…`;
  throw new VerificationError(
    'E_PUBLISH_MISMATCH',
    `${folder.where}/${f.name}: published ${what(got)}, but Verify verified ${what(f)} (${link}); nothing was published (no manifest.json)`,
    'something changed the bytes between verification and publishing (another writer in the work area or the release folder, or a faulty store): find it and start the release again',
  );
}

// ---------------------------------------------------------------------------------------------
// Folders

/** A folder in a store: `loc.key` ends with `/` (or is the store's root). */
export function storeFolder(loc: Location): Folder {
  const { store, key } = loc;
  const local = store.root === 'file:///' ? `/${key}`.replace(/\/$/, '') : undefined;
  const k = (name: string) => joinKey(key, name);
  return {
    where: local ?? `${store.root}${key}`.replace(/\/$/, ''),
    async list() {
      if (local !== undefined && !existsSync(local)) return undefined;
      return (await store.list(key)).map((o) => o.key.slice(key.length));
    },
    read: (name) =>
      store.get(k(name)).catch((e: unknown) => {
        if ((e as StoreError).code === 'E_STORE_MISSING') return undefined;
        throw e;
      }),
    size: (name) => store.head(k(name)),
    digest: (name) => store.digest(k(name)),
    write: (name, body) => store.put(k(name), body),
    create: (name, body) => store.putIfAbsent(k(name), body),
    async remove(names) {
      await store.delete(names.map(k));
      // A local subfolder the release made (data/ of a release in parts) goes with its last
      // file, as on S3, which has no folders; the release folder itself is drop()'s.
      if (local !== undefined)
        for (const name of names)
          for (let dir = dirname(name); dir !== '.'; dir = dirname(dir))
            if (!dropIfEmpty(join(local, dir))) break;
    },
    async drop() {
      if (local !== undefined) dropIfEmpty(local);
    },
  };
}

/** Removes a local folder if it is empty; false when it stays (not empty, or gone). */
function dropIfEmpty(dir: string): boolean {
  try {
    rmdirSync(dir);
    return true;
  } catch {
    return false;
  }
}
