/**
 * One execution per run. A run id is a digest of the spec and the input (release.ts
 * `runIdOf`), so a second start of the same release — the S3 event delivered twice, the spec
 * uploaded again, a schedule firing while the last run is still going — lands in the same work
 * area. Deployed, Start names the execution after the run (src/pipeline/start.ts), so Step
 * Functions itself refuses most duplicates; this lock stops the rest (an execution started by
 * hand under another name). Plan takes `lock.json` there before it claims the release folder
 * or writes anything; a start that finds the lock held stops with RunUnderWayError and touches
 * nothing.
 *
 * The lock names its execution (`$$.Execution.Name`): a retried or redriven Plan of the same
 * execution finds its own lock and goes on. For another execution it is free again once that
 * run failed on ppdp's failure path (error.json written after it) or once it is older than any
 * execution can run (the state machine's 12-hour timeout). A run that stopped elsewhere (a
 * crash, after its retries) keeps it: redrive that execution (docs/deploy.md, Operations).
 *
 * Every lock is a conditional write (Store.putIfAbsent, S3 `If-None-Match: *`): of two starts
 * exactly one creates it. Deployed only (the stack sets PPDP_RUN_LOCK=on): local runs of the
 * CLI may repeat a release.
 */
import { randomBytes } from 'node:crypto';
import { PpdpError } from '../errors.ts';
import { joinKey, type Store, type StoreError, utf8 } from './storage/index.ts';

export const RUN_LOCK_ENV = 'PPDP_RUN_LOCK';
/** Longer than the state machine's timeout (12 h): no execution still holds a lock this old. */
export const STALE_LOCK_MS = 13 * 60 * 60 * 1000;
export const RUN_LOCK = 'lock.json';

interface RunLock {
  readonly format: 'ppdp-lock/1';
  readonly runId: string;
  readonly at: string;
  /** Names this write among its contenders' (a takeover's mark is named after it). */
  readonly token: string;
  /** The execution's name, when the engine gives one. */
  readonly execution?: string;
}

/** Another execution holds this run: this start is a duplicate. Not on the failure path. */
export class RunUnderWayError extends PpdpError {}

/** Where a lock lives: files created exclusively, read, removed (a release folder, a work area). */
export interface LockPlace {
  /** Creates a file only if there is none: false when one exists. */
  create(name: string, body: string): Promise<boolean>;
  /** A file's bytes, or undefined when there is none. */
  read(name: string): Promise<Uint8Array | undefined>;
  remove(names: readonly string[]): Promise<void>;
}

/** What a lock found in place means for this contender. */
export type LockVerdict = 'ours' | 'free' | 'held';

/**
 * Takes the lock `name` in `place`, every write conditional. The lock found there is judged:
 * `ours` (this execution's own, from an earlier attempt) is kept and returned; `free` (its run
 * is over) is taken over by the one contender that creates the takeover mark
 * `<name>.<its token>`; `held` refuses (`refuse` throws). Returns the lock held afterwards:
 * `body`'s, or the execution's own earlier one.
 */
export async function takeLock<L extends { token: string }>(
  place: LockPlace,
  name: string,
  body: string,
  parse: (bytes: Uint8Array | undefined) => L | null | undefined,
  judge: (found: L) => Promise<LockVerdict> | LockVerdict,
  refuse: (found: L | null | undefined) => never,
): Promise<L> {
  const mine = parse(new TextEncoder().encode(body))!;
  for (let attempt = 0; attempt < 3; attempt++) {
    if (await place.create(name, body)) return mine;
    const found = parse(await place.read(name));
    if (found === undefined) continue; // given up in between
    const verdict = found ? await judge(found) : 'held'; // unreadable: being written
    if (verdict === 'ours') return found!;
    if (verdict === 'held') refuse(found);
    // A finished run's lock: only the contender that creates its takeover mark may remove it.
    const mark = `${name}.${found!.token}`;
    if (!(await place.create(mark, body))) {
      const taker = parse(await place.read(mark));
      if (!taker || (await judge(taker)) === 'held') refuse(found);
      await place.remove([mark]); // a contender that stopped while taking over
      continue;
    }
    try {
      if (parse(await place.read(name))?.token === found!.token) await place.remove([name]);
    } finally {
      await place.remove([mark]);
    }
  }
  refuse(parse(await place.read(name)));
}

/** A store's folder as a lock's place. */
export function storePlace(store: Store, folder: string): LockPlace {
  return {
    create: (name, body) => store.putIfAbsent(joinKey(folder, name), body),
    read: (name) =>
      store.get(joinKey(folder, name)).catch((e: unknown) => {
        if ((e as StoreError).code === 'E_STORE_MISSING') return undefined;
        throw e;
      }),
    remove: (names) => store.delete(names.map((n) => joinKey(folder, n))),
  };
}

/** A lock's content: undefined when there is none, null when it is unreadable (being written). */
export function parseLock<L extends { format: 'ppdp-lock/1'; token: string }>(
  bytes: Uint8Array | undefined,
): L | null | undefined {
  if (bytes === undefined) return undefined;
  try {
    const lock = JSON.parse(utf8(bytes)) as L;
    return lock?.format === 'ppdp-lock/1' && typeof lock.token === 'string' ? lock : null;
  } catch {
    return null;
  }
}

/**
 * Takes the run's lock in its work area (`work` is the folder key) for `execution` when
 * PPDP_RUN_LOCK=on. Returns whether this call holds it (false when the setting is off).
 * @throws RunUnderWayError when another execution holds it.
 */
export async function lockRun(
  store: Store,
  work: string,
  runId: string,
  execution: string | undefined,
  now = Date.now(),
): Promise<boolean> {
  if (process.env[RUN_LOCK_ENV] !== 'on') return false;
  const lock: RunLock = {
    format: 'ppdp-lock/1',
    runId,
    at: new Date(now).toISOString(),
    token: randomBytes(8).toString('hex'),
    ...(execution ? { execution } : {}),
  };
  const key = joinKey(work, RUN_LOCK);
  await takeLock(
    storePlace(store, work),
    RUN_LOCK,
    `${JSON.stringify(lock, null, 2)}\n`,
    parseLock<RunLock>,
    async (held) => {
      if (execution !== undefined && held.execution === execution) return 'ours';
      return (await released(store, work, held, now)) ? 'free' : 'held';
    },
    (held) => refuse(store, key, held),
  );
  return true;
}

/** Gives the run lock up (Plan refused the run after taking it). */
export async function unlockRun(store: Store, work: string): Promise<void> {
  await store.delete([joinKey(work, RUN_LOCK)]);
}

/** The holder failed (error.json written after its lock) or is too old to run. */
async function released(store: Store, work: string, held: RunLock, now: number): Promise<boolean> {
  const taken = Date.parse(held.at);
  if (!(now - taken < STALE_LOCK_MS)) return true;
  const failed = parseAt(await storePlace(store, work).read('error.json'));
  return failed >= taken;
}

function parseAt(bytes: Uint8Array | undefined): number {
  if (bytes === undefined) return Number.NaN;
  try {
    return Date.parse((JSON.parse(utf8(bytes)) as { at?: string }).at ?? '');
  } catch {
    return Number.NaN;
  }
}

function refuse(store: Store, key: string, held: RunLock | null | undefined): never {
  const what = held
    ? `run ${held.runId} of this release was started at ${held.at} by another execution` +
      `${held.execution ? ` (${held.execution})` : ''}`
    : 'another execution is taking this run';
  throw new RunUnderWayError(
    'E_RUN_UNDER_WAY',
    `${what} (${store.root}${key}); the same spec and input give the same release, so this start does nothing`,
    'wait for that run; if it stopped, drop the spec again or redrive its execution (docs/deploy.md, Operations)',
  );
}
