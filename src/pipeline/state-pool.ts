/**
 * Worker threads for the local engine's map states: the items of a Distributed Map are
 * independent, so on a machine with several cores they run in parallel, each in a worker
 * (src/pipeline/state-worker.ts) that reads and writes the work area as a Lambda would.
 * Errors come back as the same ppdp error classes, so the state machine routes them alike.
 */
import { availableParallelism } from 'node:os';
import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import {
  HierarchyError,
  InputError,
  KernelError,
  LimitError,
  NoSolutionError,
  OutputError,
  PpdpError,
  SpecError,
  VerificationError,
} from '../errors.ts';
import { nodeFlagSet } from '../util/node-flags.ts';
import type { TaskName } from './definition.ts';
import { RunUnderWayError } from './lock.ts';
import type { WorkerSetup, WorkOutcome } from './state-worker.ts';
import type { LogEvent } from './states/types.ts';
import { StoreError, StoreUnavailableError } from './storage/store.ts';

declare const __filename: string | undefined;

/** The worker's entry: the bundle itself when running bundled, else the sources through tsx. */
function entry(): string | URL {
  if (typeof __filename === 'string' && __filename.endsWith('.cjs')) return __filename;
  return new URL('./state-worker-main.mjs', import.meta.url);
}

/**
 * How long other work must have been quiet before a background item takes a worker: the next
 * map's items come within milliseconds of the last one's end (a state transition, a listing),
 * and a background item taken in that gap would hold them back by its whole length.
 */
export const BACKGROUND_GRACE_MS = 50;

/**
 * Hands workers to the items waiting for one: an item at once, or as soon as a worker is free;
 * a background item (work nothing waits on soon) only when no other item waits and none has
 * started or ended for the grace period, nor a background item come (the states that start
 * background work start other work beside it).
 */
export class WorkerDispatch<W> {
  private readonly queue: ((w: W) => void)[] = [];
  private readonly background: ((w: W) => void)[] = [];
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** When an item other than a background one last started or ended. */
  private lastForeground = Number.NEGATIVE_INFINITY;
  /** When a background item last came. */
  private lastBackground = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly idle: W[],
    private readonly graceMs = BACKGROUND_GRACE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** A worker for the next item. */
  take(background: boolean): Promise<W> {
    if (!background) {
      this.lastForeground = this.now();
      const worker = this.idle.pop();
      if (worker !== undefined) return Promise.resolve(worker);
    }
    const waiting = new Promise<W>((go) => (background ? this.background : this.queue).push(go));
    if (background) {
      this.lastBackground = this.now();
      this.fill();
    }
    return waiting;
  }

  /** A worker back from an item (`background`: one taken as such). */
  give(worker: W, background: boolean): void {
    const next = this.queue.shift();
    // An item other than a background one ends, or starts on this worker.
    if (!background || next) this.lastForeground = this.now();
    if (next) {
      next(worker);
      return;
    }
    this.idle.push(worker);
    this.fill();
  }

  /** Background items to idle workers once other work has been quiet for the grace period. */
  private fill(): void {
    if (this.timer !== undefined) return;
    while (this.background.length > 0 && this.idle.length > 0) {
      const quiet = this.now() - Math.max(this.lastForeground, this.lastBackground);
      if (quiet < this.graceMs) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          this.fill();
        }, this.graceMs - quiet);
        return;
      }
      this.background.shift()!(this.idle.pop()!);
    }
  }
}

/**
 * Whether the workers' isolates should compile their optimized code on their own threads: when
 * `workers` fill the machine's `cores`. V8 otherwise optimizes a hot function on a background
 * thread while the caller runs on in slower code; with every core held by a worker that thread
 * waits for one, and the workers run the longer in slow code (a release of 3·10⁶ rows took about
 * 0.8 s and 2 s of CPU less in place, docs/performance.md). Not when the user set the flag.
 */
export function optimizesInPlace(
  workers: number,
  cores: number,
  execArgv: readonly string[] = process.execArgv,
  nodeOptions = process.env.NODE_OPTIONS,
): boolean {
  return workers >= cores && !nodeFlagSet(['concurrent-recompilation'], execArgv, nodeOptions);
}

export class StatePool {
  private readonly idle: Worker[] = [];
  private readonly workers: Worker[] = [];
  private readonly dispatch = new WorkerDispatch(this.idle);
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  private next = 0;

  constructor(
    size: number,
    setup: WorkerSetup,
    /** Where the items' progress lines and log events go (the engine's). */
    private readonly said: { say?: (line: string) => void; log?: (event: LogEvent) => void } = {},
  ) {
    const file = entry();
    // A flag each isolate reads as it is created: the workers below, not this thread's.
    if (optimizesInPlace(size, availableParallelism())) setFlagsFromString('--no-concurrent-recompilation');
    for (let i = 0; i < size; i++) {
      const worker = new Worker(file, { workerData: { ppdpStates: setup } });
      worker.on('message', (outcome: WorkOutcome) => this.settle(outcome));
      worker.on('error', (e) => this.failAll(e));
      worker.unref();
      this.workers.push(worker);
      this.idle.push(worker);
    }
  }

  /**
   * Runs one map item on the next free worker; a `background` one waits until no other item
   * does and none has for a moment (work nothing waits on soon fills the time a worker would
   * sit idle, not the gap between two maps).
   */
  async run(state: TaskName, input: unknown, background = false): Promise<unknown> {
    const worker = await this.dispatch.take(background);
    try {
      const id = this.next++;
      // An idle worker does not keep the process alive; one running an item does: a caller
      // awaiting nothing else (the direct engine) would otherwise see node exit mid-release.
      worker.ref();
      return await new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        worker.postMessage({ id, state, input });
      });
    } finally {
      worker.unref();
      this.dispatch.give(worker, background);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private settle(outcome: WorkOutcome): void {
    if ('say' in outcome) this.said.say?.(outcome.say);
    else if ('log' in outcome) this.said.log?.(outcome.log);
    else this.finish(outcome);
  }

  private finish(outcome: Extract<WorkOutcome, { output: unknown } | { error: unknown }>): void {
    const waiter = this.pending.get(outcome.id);
    if (!waiter) return;
    this.pending.delete(outcome.id);
    if ('output' in outcome) waiter.resolve(outcome.output);
    else waiter.reject(rebuild(outcome.error));
  }

  private failAll(e: unknown): void {
    for (const waiter of this.pending.values()) waiter.reject(e);
    this.pending.clear();
  }
}

type Thrown = Extract<WorkOutcome, { error: unknown }>['error'];

/** ppdp's error classes by name: a worker's error comes back as the class it was thrown as. */
const ERROR_CLASSES: Record<string, new (code: string, message: string, hint?: string) => PpdpError> = {
  PpdpError,
  SpecError,
  InputError,
  HierarchyError,
  NoSolutionError,
  VerificationError,
  OutputError,
  LimitError,
  StoreError,
  StoreUnavailableError,
  RunUnderWayError,
};

function rebuild(e: Thrown): Error {
  if (e.name === 'KernelError' && e.code !== undefined)
    return new KernelError(e.code, e.status ?? 0, e.message);
  const Class = ERROR_CLASSES[e.name];
  if (Class && e.code !== undefined) return new Class(e.code, e.message, e.hint);
  const error = new Error(e.message);
  error.name = e.name;
  return error;
}
