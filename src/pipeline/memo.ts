/**
 * What a state wrote to the work area, kept decoded for the states after it in the same
 * process. The local engine runs every state in one process: each state still writes its
 * results to the store (the state machine's contract, and what a re-run or a Lambda reads),
 * but the next state takes the decoded object from here instead of reading and decoding the
 * bytes again. In Lambda, where states run apart, every lookup misses and the store is read.
 *
 * Entries are keyed by the object's URL in the work area and the run's start time, and are
 * dropped when the run ends (`forgetRun`). Staged release files are never kept here: the
 * verifier reads the bytes that will be published.
 */
import { isMainThread } from 'node:worker_threads';
import { forgetPerDictionary, keepPerDictionary } from '../util/per-dictionary.ts';

const entries = new Map<string, unknown>();

function key(run: RunKey, name: string): string {
  return `${run.work}\u0000${run.started}\u0000${name}`;
}

export interface RunKey {
  /** The work area's URL. */
  readonly work: string;
  /** The plan's start time: a re-run of the same work area never sees an older run's objects. */
  readonly started: number;
}

let keeping = true;

export function remember<T>(run: RunKey, name: string, value: T): T {
  if (keeping) entries.set(key(run, name), value);
  return value;
}

/**
 * Keeps nothing from now on (a worker thread: the main thread's states could not recall it; a
 * Lambda function: the next invocation is another state). A worker thread of the local engine
 * serves one run: it still keeps what the run's shards share per dictionary (the hierarchies),
 * a Lambda function not even that.
 */
export function keepNothing(): void {
  keeping = false;
  entries.clear();
  keepPerDictionary(!isMainThread);
}

export function recall<T>(run: RunKey, name: string): T | undefined {
  return entries.get(key(run, name)) as T | undefined;
}

/**
 * Drops every object of a work area (all its runs), and what was made per dictionary (the
 * hierarchies its shards shared): made again, if another run needs it.
 */
export function forgetRun(work: string): void {
  const prefix = `${work}\u0000`;
  for (const k of entries.keys()) if (k.startsWith(prefix)) entries.delete(k);
  forgetPerDictionary();
}

/** Drops everything kept (tests use it to make every state read the work area, as in Lambda). */
export function forgetAll(): void {
  entries.clear();
  forgetPerDictionary();
}
