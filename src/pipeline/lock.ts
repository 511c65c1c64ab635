/**
 * One execution per run. A run id is a digest of the spec and the input (release.ts
 * `runIdOf`), so a second start of the same release — the S3 event delivered twice, the spec
 * uploaded again, a schedule firing while the last run is still going — lands in the same work
 * area. Plan takes `lock.json` there before writing anything; a start that finds the lock held
 * stops with RunUnderWayError and touches nothing.
 *
 * The lock is free again once that run failed on ppdp's failure path (error.json written after
 * it) or once it is older than any execution can run (the state machine's 12-hour timeout). A
 * run that stopped elsewhere keeps it: redrive that execution (docs/deploy.md, Operations).
 * The lock names its execution by the X-Ray trace the state machine gives all its invocations,
 * so a retried Plan of the same execution takes it again.
 *
 * Deployed only (the stack sets PPDP_RUN_LOCK=on): local runs of the CLI may repeat a release.
 */
import { randomUUID } from 'node:crypto';
import { PpdpError } from '../errors.ts';
import { getJson, joinKey, type Store } from './storage/index.ts';

export const RUN_LOCK_ENV = 'PPDP_RUN_LOCK';
/** Longer than the state machine's timeout (12 h): no execution still holds a lock this old. */
export const STALE_LOCK_MS = 13 * 60 * 60 * 1000;

interface RunLock {
  readonly format: 'ppdp-lock/1';
  readonly runId: string;
  readonly at: string;
  /** Tells this start's write from a concurrent one's. */
  readonly token: string;
  /** The execution's X-Ray trace root, when traced. */
  readonly execution?: string;
}

/** The X-Ray trace root of this invocation: one per execution when Step Functions traces it. */
function executionTrace(): string | undefined {
  return /(?:^|;)Root=([^;]+)/.exec(process.env._X_AMZN_TRACE_ID ?? '')?.[1];
}

/** Another execution holds this run: this start is a duplicate. Not on the failure path. */
export class RunUnderWayError extends PpdpError {}

/** A store that can write an object only where there is none (S3 `If-None-Match: *`). */
interface ConditionalStore extends Store {
  putIfAbsent(key: string, body: Uint8Array | string): Promise<boolean>;
}

/**
 * Takes the run's lock in its work area (`work` is the folder key) when PPDP_RUN_LOCK=on.
 * @throws RunUnderWayError when another execution holds it.
 */
export async function lockRun(store: Store, work: string, runId: string, now = Date.now()): Promise<void> {
  if (process.env[RUN_LOCK_ENV] !== 'on') return;
  const key = joinKey(work, 'lock.json');
  const execution = executionTrace();
  const lock: RunLock = {
    format: 'ppdp-lock/1',
    runId,
    at: new Date(now).toISOString(),
    token: randomUUID(),
    ...(execution ? { execution } : {}),
  };
  const held = (await store.head(key)) === undefined ? undefined : await getJson<RunLock>(store, key);
  if (held && !(await released(store, work, held, now))) refuse(store, key, held);
  const body = `${JSON.stringify(lock, null, 2)}\n`;
  if (!held && 'putIfAbsent' in store) {
    if (!(await (store as ConditionalStore).putIfAbsent(key, body)))
      refuse(store, key, await getJson(store, key));
    return;
  }
  // Without a conditional write two starts can both write: the later write wins, and the
  // start that reads back the other's token stops. (A start whose read comes before the
  // other's write is not caught: the window is one write and one read.)
  await store.put(key, body);
  const after = await getJson<RunLock>(store, key);
  if (after.token !== lock.token) refuse(store, key, after);
}

/** The holder is this execution, failed (error.json written after its lock) or too old to run. */
async function released(store: Store, work: string, held: RunLock, now: number): Promise<boolean> {
  if (held.execution !== undefined && held.execution === executionTrace()) return true;
  const taken = Date.parse(held.at);
  if (!(now - taken < STALE_LOCK_MS)) return true;
  const errorKey = joinKey(work, 'error.json');
  if ((await store.head(errorKey)) === undefined) return false;
  const failed = await getJson<{ at?: string }>(store, errorKey);
  return Date.parse(failed.at ?? '') >= taken;
}

function refuse(store: Store, key: string, held: RunLock): never {
  throw new RunUnderWayError(
    'E_RUN_UNDER_WAY',
    `run ${held.runId} of this release was started at ${held.at} by another execution (${store.root}${key}); ` +
      'the same spec and input give the same release, so this start does nothing',
    'wait for that run; if it stopped, redrive its execution (docs/deploy.md, Operations) or delete lock.json to start afresh',
  );
}
