/**
 * Worker threads for the local engine's map states: the items of a Distributed Map are
 * independent, so on a machine with several cores they run in parallel, each in a worker
 * (src/pipeline/state-worker.ts) that reads and writes the work area as a Lambda would.
 * Errors come back as the same ppdp error classes, so the state machine routes them alike.
 */
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
import type { TaskName } from './definition.ts';
import { RunUnderWayError } from './lock.ts';
import type { WorkerSetup, WorkOutcome } from './state-worker.ts';
import { StoreError, StoreUnavailableError } from './storage/store.ts';

declare const __filename: string | undefined;

/** The worker's entry: the bundle itself when running bundled, else the sources through tsx. */
function entry(): string | URL {
  if (typeof __filename === 'string' && __filename.endsWith('.cjs')) return __filename;
  return new URL('./state-worker-main.mjs', import.meta.url);
}

export class StatePool {
  private readonly idle: Worker[] = [];
  private readonly workers: Worker[] = [];
  /** Items waiting for a worker; `background`, those taken only when no other one waits. */
  private readonly queue: ((w: Worker) => void)[] = [];
  private readonly background: ((w: Worker) => void)[] = [];
  private readonly pending = new Map<
    number,
    { resolve: (v: unknown) => void; reject: (e: unknown) => void }
  >();
  private next = 0;

  constructor(size: number, setup: WorkerSetup) {
    const file = entry();
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
   * does (work nothing waits on soon fills the time a worker would sit idle).
   */
  async run(state: TaskName, input: unknown, background = false): Promise<unknown> {
    const worker =
      this.idle.pop() ??
      (await new Promise<Worker>((take) => (background ? this.background : this.queue).push(take)));
    try {
      const id = this.next++;
      return await new Promise((resolve, reject) => {
        this.pending.set(id, { resolve, reject });
        worker.postMessage({ id, state, input });
      });
    } finally {
      const waiting = this.queue.shift() ?? this.background.shift();
      if (waiting) waiting(worker);
      else this.idle.push(worker);
    }
  }

  async close(): Promise<void> {
    await Promise.all(this.workers.map((w) => w.terminate()));
  }

  private settle(outcome: WorkOutcome): void {
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
