/**
 * Runs a release through the state machine. Two engines, one definition:
 * - `local` (the default): aws-local-stepfunctions executes the definition of definition.ts
 *   in this process, each Task bound to its phase function by state name, Distributed Maps
 *   rewritten to inline Maps fed by a lister Task. Retry and Catch behave as in AWS.
 * - `direct`: the same phase functions called in order without a state machine (a baseline
 *   for measuring the engine's overhead, and a fallback).
 * In AWS the same phases run as Lambda functions (functions/), started by Step Functions.
 */
import { randomUUID } from 'node:crypto';
import { readdir, rm } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { type ReleaseReport, readReport } from '../contracts/report.ts';
import { SCAN_BYTES_PER_ROW, WORKER_MIN_ROWS } from '../data/limits.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../kernels/groupby/wasm.ts';
import type { ReleaseMethod } from '../methods/method.ts';
import { ONE_MACHINE_RETAINED_BYTES, prewarmCore, retainCoresUpTo } from '../wasm/module.ts';
import {
  makeTemporaryFolder,
  removeTemporaryFolder,
  runStarts,
  stopIfSignalled,
  stopOnSignal,
} from './cleanup.ts';
import {
  type AslDefinition,
  distributedMaps,
  listerName,
  localDefinition,
  releaseDefinition,
  STATE_TASKS,
  TASKS,
  type TaskName,
} from './definition.ts';
import { forgetRun } from './memo.ts';
import type { Manifest } from './publish.ts';
import { StatePool } from './state-pool.ts';
import { STATES, WORKER_STATES } from './states/index.ts';
import { type FailedState, failureCause, reportFailure } from './states/report-failure.ts';
import type { LogEvent, PhaseEnv, PlanResult, ReleaseRequest } from './states/types.ts';
import { fileUrl, getJson, joinKey, type Store, storeResolver } from './storage/index.ts';
import type { S3StoreOptions } from './storage/s3.ts';

export type EngineName = 'local' | 'direct';

/** A state's handler: the Task's JSON input → its JSON output. */
export type StateHandler = (input: never) => Promise<unknown>;

export interface EngineOptions {
  readonly engine?: EngineName;
  readonly kernel?: GroupingKernel;
  /** Progress lines for a person. */
  readonly progress?: (line: string) => void;
  /** Structured log events (default: none). */
  readonly log?: (event: LogEvent) => void;
  /** S3 client settings (endpoint, credentials, attempts). */
  readonly s3?: S3StoreOptions;
  /** Wait before a Retry, in ms (default 250; AWS uses the definition's backoff). */
  readonly retryIntervalMs?: number;
  readonly rowsPerShard?: number;
  /**
   * Cuts shards as the deployed functions need them (fewer rows to a shard whose rows carry
   * pass-through bytes) rather than as this machine can hold them: the release is the same.
   */
  readonly shardsForFunctions?: boolean;
  /**
   * Worker threads for the map states (default: the cores, at most 4; below 2, none). They
   * are used for tables of `workerMinRows` rows or more (default 1,000,000).
   */
  readonly workers?: number;
  readonly workerMinRows?: number;
  /** Builds the release instead of the spec's method (`ppdp apply`), as one task. */
  readonly method?: ReleaseMethod;
  /** Wraps state handlers by state name (tests inject failures here). */
  readonly wrap?: (
    state: string,
    handler: (input: unknown) => Promise<unknown>,
  ) => (input: unknown) => Promise<unknown>;
}

export interface EngineResult {
  readonly plan: PlanResult;
  readonly manifest: Manifest;
  readonly report: ReleaseReport;
  /** Where the release was published (a store URL). */
  readonly release: string;
}

const polyfill = (): void => {
  // aws-local-stepfunctions 3 uses Promise.withResolvers (Node ≥ 22).
  const P = Promise as unknown as { withResolvers?: () => unknown };
  P.withResolvers ??= () => {
    let resolve!: (v: unknown) => void;
    let reject!: (e: unknown) => void;
    const promise = new Promise((a, b) => {
      resolve = a;
      reject = b;
    });
    return { promise, resolve, reject };
  };
};

/** Lambda-like ARNs for the local run: never called (every Task is bound in-process). */
const RELEASE_DEFINITION = releaseDefinition({
  resource: (task) => `arn:aws:lambda:us-east-1:000000000000:function:ppdp-${task}`,
});
export const LOCAL_DEFINITION: AslDefinition = localDefinition(RELEASE_DEFINITION);

type Machine = import('aws-local-stepfunctions').StateMachine;
let machine: Machine | undefined;

/**
 * The local state machine, built once per process. Validation (150–250 ms) is skipped here:
 * the definition is built in code and validated by the tests (test/e2e/serverless*.test.ts).
 */
export async function localMachine(): Promise<Machine> {
  machine ??= await localStateMachine(LOCAL_DEFINITION, false);
  return machine;
}

/** A local engine for a definition (Distributed Maps already rewritten by `localDefinition`). */
export async function localStateMachine(definition: AslDefinition, validate = true): Promise<Machine> {
  polyfill();
  const { StateMachine } = await import('aws-local-stepfunctions');
  return new StateMachine(definition as never, { validationOptions: { noValidate: !validate } });
}

/**
 * Runs one execution named `execution` (`$$.Execution.Name`; by default a new name, the engine's
 * own run) with each Task bound to a handler by state name (a Retry waits `retryIntervalMs`);
 * resolves with the execution's output, once every Task it started has settled.
 *
 * When a Parallel's branch fails, aws-local-stepfunctions aborts the other branches, but one
 * waiting to retry a Task retries it at once, even after the execution has ended; Step
 * Functions starts no Task of a stopped execution. So a Task started after the end fails at
 * once without running, and the execution's result waits for the Tasks still running: nothing
 * of a run reads or writes after its caller has its answer.
 */
export async function runBound(
  sm: Machine,
  input: unknown,
  handlers: Record<string, (input: unknown) => Promise<unknown>>,
  retryIntervalMs: number,
  execution = localExecutionName(),
): Promise<unknown> {
  let ended = false;
  const running = new Set<Promise<unknown>>();
  const guarded = Object.fromEntries(
    Object.entries(handlers).map(([state, handler]) => [
      state,
      (taskInput: unknown): Promise<unknown> => {
        if (ended) return Promise.reject(new Error(`${state} was started after the execution ended`));
        const call = handler(taskInput);
        running.add(call);
        const forget = () => running.delete(call);
        call.then(forget, forget);
        return call;
      },
    ]),
  );
  try {
    return await sm.run(input as never, {
      context: { Execution: { Name: execution } },
      overrides: {
        taskResourceLocalHandlers: guarded as never,
        retryIntervalOverrides: Object.fromEntries(Object.keys(handlers).map((s) => [s, retryIntervalMs])),
      },
    }).result;
  } finally {
    ended = true;
    await Promise.allSettled([...running]);
  }
}

/** The name a worker thread loads a kernel by (undefined: one it cannot load). */
function kernelNameOf(kernel: GroupingKernel): 'wasm' | 'ts' | undefined {
  return kernel === wasmGroupingKernel ? 'wasm' : kernel === tsGroupingKernel ? 'ts' : undefined;
}

/**
 * Runs one release. `request.work` defaults to a temporary folder (removed afterwards) when
 * the release goes to a local folder; with a store the work area is `<store>/work/…` and stays,
 * but for its copies of the input's values (removeStoreBulk), gone when the run ends.
 */
export async function executeRelease(
  request: ReleaseRequest,
  options: EngineOptions = {},
): Promise<EngineResult> {
  prewarmCore();
  runStarts();
  const retained = retainCoresUpTo(ONE_MACHINE_RETAINED_BYTES);
  const stores = storeResolver(options.s3);
  const tmp = makeTemporaryFolder('ppdp-run-');
  const workers = options.workers ?? Math.min(4, availableParallelism());
  const minRows = options.workerMinRows ?? WORKER_MIN_ROWS;
  // An input of several pieces (or ranges) goes to the workers by its bytes before its rows are known.
  const minScanBytes = minRows * SCAN_BYTES_PER_ROW;
  const env: PhaseEnv = {
    stores,
    kernel: options.kernel ?? wasmGroupingKernel,
    log: options.log ?? (() => {}),
    say: options.progress,
    tmp,
    rowsPerShard: options.rowsPerShard,
    onOneMachine: options.shardsForFunctions !== true,
    workers: kernelNameOf(options.kernel ?? wasmGroupingKernel)
      ? { threads: workers, minScanBytes }
      : undefined,
    method: options.method,
  };
  const localWork = !request.work && !request.store && !request.spec.startsWith('s3://');
  const req: ReleaseRequest = localWork ? { ...request, work: fileUrl(join(tmp, 'work'), true) } : request;
  let planned: PlanResult | undefined;
  let bulkGone: Promise<void> | undefined;
  let piecesGone: Promise<void> | undefined;
  /** The states under way: a signal waits for them before it removes what they wrote. */
  const running = new Set<Promise<unknown>>();
  const record: EngineOptions['wrap'] = (state, handler) => async (input) => {
    stopIfSignalled(); // once a signal stops the run, no state starts (its failure path neither)
    // Every part is assembled once a part's slice or the audit starts: the pieces Assemble read
    // go while the parts are verified, rather than all the bulk after Verify.
    if ((state === 'VerifyPart' || state === 'Audit') && localWork)
      piecesGone ??= removeDirs(['scatter', 'route'].map((name) => join(tmp, 'work', name)));
    const call = handler(input);
    running.add(call);
    const out = await call.finally(() => running.delete(call));
    if (state === 'Plan' || state === 'Combine') planned = out as PlanResult;
    // No state after Verify reads the bulk of a temporary work area: it goes while Publish copies.
    if (state === 'Verify' && localWork) bulkGone = removeBulk(join(tmp, 'work'));
    return out;
  };
  const wrap: EngineOptions['wrap'] = (state, handler) =>
    record(state, options.wrap ? options.wrap(state, handler) : handler);
  // Map items run in worker threads once the plan shows a table worth it (and a kernel a
  // worker can load by name); until then, and for small tables, in this thread.
  const kernelName = kernelNameOf(env.kernel);
  let pool: StatePool | undefined;
  let unstop = () => {};
  const poolFor = (): StatePool | undefined => {
    if (!planned || !kernelName || workers < 2) return undefined;
    // Plan's answer has no rows yet: the scan of more than one file may go to the workers.
    const worth =
      planned.rows > 0 ? planned.rows >= minRows : planned.pieces > 1 && planned.bytes >= minScanBytes;
    if (!worth) return undefined;
    if (!pool) {
      const created = new StatePool(
        workers,
        { kernel: kernelName, s3: options.s3, tmp },
        { say: env.say, log: env.log },
      );
      pool = created;
      unstop = stopOnSignal(() => created.close());
      forgetRun(planned.work); // the workers read the work area; what Plan kept here would only sit
    }
    return pool;
  };
  // A work area in a store that this run chose (no request named one) keeps no copy of the
  // rows once the run is over, whatever its end: nothing runs it again from there.
  const removesBulk = () => planned !== undefined && !localWork && !request.work;
  // On a signal too (the CLI exits from its handler, and this `finally` never runs): the
  // copies go at once, and again once the states under way, which may still write, have ended.
  let signalled: Promise<void> | undefined;
  const unstopBulk = stopOnSignal(
    () =>
      (signalled ??= (async () => {
        if (removesBulk()) await removeStoreBulk(stores, planned!.work, env.say);
        await pool?.close();
        await Promise.allSettled([...running]);
        if (removesBulk()) await removeStoreBulk(stores, planned!.work, env.say);
      })()),
  );
  try {
    const out =
      (options.engine ?? 'local') === 'local'
        ? await runLocal(req, env, poolFor, { ...options, wrap })
        : await runDirect(req, env, poolFor, { ...options, wrap });
    const release = await stores.open(out.published.release);
    const reportKey = joinKey(release.key, 'report.json');
    const report = readReport(await getJson<unknown>(release.store, reportKey), reportKey);
    const { release: where, ...manifest } = out.published;
    return { plan: out.plan, manifest, report, release: where };
  } finally {
    // The folder goes whatever the steps before it throw.
    try {
      if (planned) forgetRun(planned.work);
      unstop();
      unstopBulk();
      await pool?.close();
      await signalled; // before the stores close
      if (removesBulk()) await removeStoreBulk(stores, planned!.work, env.say);
      stores.close();
      await piecesGone;
      await bulkGone;
    } finally {
      removeTemporaryFolder(tmp);
      retainCoresUpTo(retained);
    }
  }
}

/**
 * Removes what only the states up to Verify read from a work area: the rows' shards (not the
 * input's dictionaries, which opening the work area may read), their counts, the scattered and
 * routed pieces and the verification slices. Never fails: the temporary folder goes whole at
 * the end.
 */
async function removeBulk(work: string): Promise<void> {
  const shards = await readdir(join(work, 'rows'), { withFileTypes: true }).catch(() => []);
  await removeDirs([
    ...['scatter', 'route', 'counts', 'verify'].map((name) => join(work, name)),
    ...shards.filter((e) => e.isDirectory()).map((e) => join(work, 'rows', e.name)),
  ]);
}

/**
 * The work area's folders that hold the input's values, or the released rows: the shards and
 * the scans' dictionaries, the pieces routed and scattered, the staged release (published by
 * now, or refused), and the verification slices and counts beside them.
 */
const STORE_BULK = [
  'rows/',
  'scan/',
  'route/',
  'scatter/',
  'staging/',
  'seals/staging/',
  'verify/',
  'counts/',
  'flags/',
];

/**
 * Removes STORE_BULK from a work area in a store (`work`, its URL); a local one's folders go
 * whole, with the hidden temporary file of a write a signal cut short. Never fails: a store
 * that refuses is reported (`say`), and the run's own outcome stands.
 */
async function removeStoreBulk(
  stores: ReturnType<typeof storeResolver>,
  work: string,
  say: ((line: string) => void) | undefined,
): Promise<void> {
  try {
    const loc = await stores.open(work);
    const listed = await Promise.all(STORE_BULK.map((folder) => loc.store.list(joinKey(loc.key, folder))));
    const copies = await bundledCopies(loc.store, loc.key);
    const keys = [...listed.flat().map((o) => o.key), ...copies];
    for (let i = 0; i < keys.length; i += 1000) await loc.store.delete(keys.slice(i, i + 1000));
    if (loc.store.root === 'file:///') {
      const copyDirs = new Set(copies.map((key) => `/${key.slice(0, key.lastIndexOf('/') + 1)}`));
      await removeDirs([...STORE_BULK.map((folder) => `/${joinKey(loc.key, folder)}`), ...copyDirs]);
    }
  } catch (e) {
    say?.(`could not remove the copies of the rows in the work area ${work}: ${(e as Error).message}`);
  }
}

/**
 * The bundle's copies of the files the spec names (hierarchy files under `h<i>/`, a population
 * table under `p/`) and their seals: they hold the input's values too. The spec itself stays.
 */
async function bundledCopies(store: Store, work: string): Promise<string[]> {
  const keys: string[] = [];
  for (const folder of ['bundle/', 'seals/bundle/']) {
    const prefix = joinKey(work, folder);
    for (const o of await store.list(prefix)) if (o.key.slice(prefix.length).includes('/')) keys.push(o.key);
  }
  return keys;
}

/** Removes folders and what they hold; never fails (the temporary folder goes whole at the end). */
async function removeDirs(dirs: readonly string[]): Promise<void> {
  await Promise.all(dirs.map((dir) => rm(dir, { recursive: true, force: true }).catch(() => {})));
}

interface RunOutput {
  plan: PlanResult;
  published: Manifest & { release: string };
}

function handlers(
  env: PhaseEnv,
  pool: () => StatePool | undefined,
): Record<string, (input: never) => Promise<unknown>> {
  const stateHandlers = Object.fromEntries(
    TASKS.map((task) => {
      const inProcess = (input: never) => STATES[task](input, env);
      if (!WORKER_STATES.includes(task)) return [task, inProcess];
      return [
        task,
        (input: never) => pool()?.run(task, input, fillsIdleTime(task, input)) ?? inProcess(input),
      ];
    }),
  ) as Record<TaskName, (input: never) => Promise<unknown>>;
  const listItems = async (i: { Bucket: string; Key: string }) => {
    const loc = await env.stores.open(i.Bucket ? `s3://${i.Bucket}/${i.Key}` : `file:///${i.Key}`);
    return getJson<unknown[]>(loc.store, loc.key);
  };
  return {
    ...stateHandlers,
    ...Object.fromEntries(Object.entries(STATE_TASKS).map(([state, task]) => [state, stateHandlers[task]])),
    ...Object.fromEntries(distributedMaps(RELEASE_DEFINITION).map((map) => [listerName(map), listItems])),
  };
}

/**
 * Work no other state waits on until Verify (an input shard's verification slice, which runs
 * beside the apply and assemble maps): the workers take it only when nothing else is waiting.
 */
function fillsIdleTime(task: TaskName, input: { kind?: unknown }): boolean {
  return task === 'VerifySlice' && input.kind === 'shard';
}

async function runLocal(
  request: ReleaseRequest,
  env: PhaseEnv,
  pool: () => StatePool | undefined,
  options: EngineOptions,
): Promise<RunOutput> {
  const sm = await localMachine();
  // The errors the Tasks threw, by the Cause the engine records: the caller gets the one the
  // failure path reported (a Task of an aborted branch may still fail after it).
  const thrown = new Map<string, unknown>();
  let failure: unknown;
  let reported: unknown;
  const bound: Record<string, (input: unknown) => Promise<unknown>> = {};
  for (const [state, h] of Object.entries(handlers(env, pool))) {
    const call = options.wrap ? options.wrap(state, h as (input: unknown) => Promise<unknown>) : h;
    bound[state] = async (input: unknown) => {
      if (state === 'ReportFailure') reported ??= thrown.get((input as FailedState).error?.Cause ?? '');
      try {
        return await (call as (input: unknown) => Promise<unknown>)(input);
      } catch (e) {
        if (state === 'ReportFailure') throw e;
        failure = e;
        // The engine records the error's name and message (the Cause): with ppdp's code and
        // hint in it, as Lambda's would be, so error.json has them. The caller gets `e` itself.
        const cause = failureCause(e as Error);
        thrown.set(cause, e);
        throw Object.assign(new Error(cause), { name: (e as Error).name });
      }
    };
  }
  try {
    const out = (await runBound(sm, request, bound, options.retryIntervalMs ?? 250)) as {
      plan: PlanResult;
      published: Manifest & { release: string };
    };
    return { plan: out.plan, published: out.published };
  } catch (e) {
    // The execution ended in the Failed state: surface the error that sent it there.
    throw reported ?? failure ?? e;
  }
}

/** A local run's execution name: its own, as Step Functions gives each execution one. */
export function localExecutionName(): string {
  return `local-${randomUUID()}`;
}

async function runDirect(
  request: ReleaseRequest,
  env: PhaseEnv,
  pool: () => StatePool | undefined,
  options: EngineOptions,
): Promise<RunOutput> {
  const h = handlers(env, pool) as unknown as Record<string, (input: unknown) => Promise<unknown>>;
  const call = (state: string, input: unknown) =>
    (options.wrap ? options.wrap(state, h[state]!) : h[state]!)(input);
  let plan: PlanResult | undefined;
  try {
    plan = (await call('Plan', { request, execution: localExecutionName() })) as PlanResult;
    const work = { work: plan.work };
    for (let index = 0; index < plan.pieces; index++) await call('ScanPiece', { ...work, index });
    plan = (await call('Combine', work)) as PlanResult;
    if (plan.mode === 'sharded') {
      for (let index = 0; index < plan.shards; index++) await call('CountShard', { ...work, index });
      await call('Search', work);
      await call('CountDistinct', { ...work, phase: 'distinct' });
      if (plan.routesBytes) {
        for (let index = 0; index < plan.shards; index++)
          await call('RouteShard', { ...work, index, phase: 'route' });
        for (let index = 0; index < plan.shards; index++)
          await call('VerifySlice', { ...work, index, kind: 'bytes' });
      }
      for (let index = 0; index < plan.shards; index++) await call('ApplyShard', { ...work, index });
      for (let index = 0; index < plan.parts; index++) await call('Assemble', { ...work, index });
      await call('Audit', work);
      for (let index = 0; index < plan.parts; index++)
        await call('VerifySlice', { ...work, index, kind: 'part' });
      for (let index = 0; index < plan.shards; index++)
        await call('VerifySlice', { ...work, index, kind: 'shard' });
    } else await call('Build', work);
    await call('Verify', work);
    const published = (await call('Publish', { ...work, release: plan.release })) as Manifest & {
      release: string;
    };
    return { plan, published };
  } catch (e) {
    await reportFailure(
      { ...request, plan, error: { Error: (e as Error).name, Cause: failureCause(e as Error) } },
      env,
    );
    throw e;
  }
}

export { TASKS };
