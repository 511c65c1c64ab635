/**
 * A worker thread that runs map states for the local engine (src/pipeline/state-pool.ts):
 * each message names a state and its input; the state runs against the same store as the
 * main thread, and its JSON output (or its error, as name, code, message and hint) goes back,
 * after its progress lines and log events.
 * Nothing is kept between items (the memo is off, every item reads the work area) but the
 * WebAssembly instances of finished sessions, which the next item's session reuses.
 */
import { parentPort } from 'node:worker_threads';
import { tsGroupingKernel } from '../kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../kernels/groupby/wasm.ts';
import { ONE_MACHINE_RETAINED_BYTES, retainCoresUpTo } from '../wasm/module.ts';
import type { TaskName } from './definition.ts';
import { keepNothing } from './memo.ts';
import { STATES } from './states/index.ts';
import type { LogEvent, PhaseEnv } from './states/types.ts';
import { storeResolver } from './storage/index.ts';
import type { S3StoreOptions } from './storage/s3.ts';

export interface WorkerSetup {
  readonly kernel: 'wasm' | 'ts';
  readonly s3?: S3StoreOptions;
  readonly tmp: string;
}

export interface WorkItem {
  readonly id: number;
  readonly state: TaskName;
  readonly input: unknown;
}

export type WorkOutcome =
  | { readonly id: number; readonly output: unknown }
  /** A progress line or a log event of an item under way, for the main thread to pass on. */
  | { readonly id: number; readonly say: string }
  | { readonly id: number; readonly log: LogEvent }
  | {
      readonly id: number;
      readonly error: { name: string; message: string; code?: string; hint?: string; status?: number };
    };

/** Serves work items on the parent port until the pool closes it. */
export function serveStates(setup: WorkerSetup): void {
  const port = parentPort;
  if (!port) throw new Error('serveStates runs in a worker thread');
  keepNothing();
  retainCoresUpTo(ONE_MACHINE_RETAINED_BYTES);
  const env: PhaseEnv = {
    stores: storeResolver(setup.s3),
    kernel: setup.kernel === 'ts' ? tsGroupingKernel : wasmGroupingKernel,
    log: () => {},
    tmp: setup.tmp,
  };
  port.on('message', async (item: WorkItem) => {
    let outcome: WorkOutcome;
    // What the item says goes to the main thread's progress and log, as the state's would.
    const itemEnv: PhaseEnv = {
      ...env,
      log: (event) => port.postMessage({ id: item.id, log: event } satisfies WorkOutcome),
      say: (line) => port.postMessage({ id: item.id, say: line } satisfies WorkOutcome),
    };
    try {
      outcome = { id: item.id, output: await STATES[item.state](item.input as never, itemEnv) };
    } catch (e) {
      const err = e as Error & { code?: string; hint?: string; status?: number };
      outcome = {
        id: item.id,
        error: { name: err.name, message: err.message, code: err.code, hint: err.hint, status: err.status },
      };
    }
    port.postMessage(outcome);
  });
}
