/**
 * Runs what is deployed, on this machine: the CloudFormation template the CDK stack
 * synthesizes (the state machine's definition string with its ARN substitutions, and each
 * Lambda function's handler, memory size, timeout and environment), executed by the local
 * Step Functions engine with
 * - every Task bound to its function's bundled handler (dist/lambda/*.mjs), each invocation
 *   in a fresh Node process (test/harness/lambda-runtime.mjs) with a Lambda-like event,
 *   context and environment, held to the function's configured memory (its resident memory is
 *   watched while it runs and the process killed the moment it passes the size, answering
 *   Runtime.OutOfMemory as Lambda does) and timeout (killed, Sandbox.Timedout);
 * - every Distributed Map read through its ItemReader: the items are the JSON array in the S3
 *   object the definition names, fetched with a real GetObject from the S3-protocol server.
 *   (The local engine has no Distributed Map: `localDefinition` turns it into that reader
 *   followed by an inline Map over the items, with the same ItemSelector and processor.)
 * - the stack's rule on failed executions: an execution that fails is sent, as the rule's
 *   EventBridge event, to the functions the rule targets (ReportFailure).
 * Nothing of ppdp runs in the test's own process but the engine and the S3 reads of items.
 *
 * Faults, for tests (all bounded, loopback only): an invocation killed or timed out (at a set
 * time, or at a set point of its work: once one of its requests to the store is done), a
 * state's memory or timeout overridden, S3 requests hung or answered 503 by a proxy in front of the
 * server (test/harness/s3-faults.ts), and a hook after a state completes (to alter work files).
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { bundleHandlers } from '../../infra/bundle.ts';
import { APP_CONTEXT } from '../../infra/config.ts';
import { ReleaseStack } from '../../infra/stacks/release-stack.ts';
import { type AslDefinition, type AslState, localDefinition, taskOf } from '../../src/pipeline/definition.ts';
import { localStateMachine, runBound } from '../../src/pipeline/engine.ts';
import { type Store, storeResolver } from '../../src/pipeline/storage/index.ts';
import type { S3StoreOptions } from '../../src/pipeline/storage/s3.ts';
import { LocalS3 } from '../e2e/serverless-s3rver.ts';
import { type S3FaultLog, S3FaultProxy, type S3FaultRule } from './s3-faults.ts';

const RUNTIME = new URL('./lambda-runtime.mjs', import.meta.url).pathname;
const ITEM_READER = 'arn:aws:states:::s3:getObject';

/** A Lambda function as the template configures it. */
export interface DeployedFunction {
  readonly logicalId: string;
  readonly handler: string;
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  readonly environment: Record<string, string>;
}

export interface DeployedApp {
  /** The state machine's definition with each Task's Resource a function ARN. */
  readonly definition: AslDefinition;
  /** Functions by the ARN the definition names them with. */
  readonly functions: ReadonlyMap<string, DeployedFunction>;
  /** The folder the functions' code asset was built from. */
  readonly codeDir: string;
  /** The stack's outputs (bucket names as the local buckets are named). */
  readonly outputs: Readonly<Record<string, string>>;
  /** Functions (by ARN) a rule sends the state machine's execution status changes to. */
  readonly onExecutionStatus: readonly string[];
}

/** One invocation of a function, as measured. */
export interface Invocation {
  /** The function's task (VerifySlice for both of the states that run it). */
  readonly state: string;
  /**
   * Which invocation of the task it is, counted from 1 in the order they start (as faults
   * count them); invocations are listed in the order they end.
   */
  readonly invocation: number;
  readonly function: string;
  readonly ms: number;
  readonly peakMiB: number;
  readonly memoryMiB: number;
  readonly ok: boolean;
  readonly errorType?: string;
  /** Why the harness killed the process: over its memory, past its timeout, or an injected fault. */
  readonly killed?: 'memory' | 'timeout' | 'fault';
  /** Whether the handler gave its answer (a process killed before it ends gives none). */
  readonly answered: boolean;
}

// biome-ignore lint/suspicious/noExplicitAny: CloudFormation template JSON
type Cfn = any;

const fakeArn = (logicalId: string) => `arn:aws:lambda:us-east-1:111111111111:function:${logicalId}`;

/** The local bucket standing in for the template's bucket `logicalId` (create it before a run). */
export const localBucket = (logicalId: string) => `ppdp-${logicalId.toLowerCase()}`;

/**
 * A template value made concrete where the harness can: a function's ARN, a bucket's name
 * (`bucketOf` its logical id) and joins of these; undefined for anything else.
 */
function concrete(resources: Record<string, Cfn>, bucketOf: (logicalId: string) => string) {
  const value = (v: Cfn): string | undefined => {
    if (typeof v === 'string') return v;
    const ref = v?.Ref;
    if (typeof ref === 'string' && resources[ref]?.Type === 'AWS::S3::Bucket') return bucketOf(ref);
    const att = v?.['Fn::GetAtt'];
    if (Array.isArray(att) && att[1] === 'Arn' && resources[att[0]]?.Type === 'AWS::Lambda::Function')
      return fakeArn(att[0]);
    const join = v?.['Fn::Join'];
    if (Array.isArray(join)) {
      const parts = (join[1] as Cfn[]).map(value);
      return parts.every((p) => p !== undefined) ? parts.join(join[0]) : undefined;
    }
    return undefined;
  };
  return value;
}

/**
 * Synthesizes the stack over the bundled handlers in `codeDir` and reads what it deploys.
 * Its buckets become local buckets named by `bucketOf` (default `localBucket`).
 */
export function synthesizeDeployed(
  codeDir: string,
  bucketOf: (logicalId: string) => string = localBucket,
): DeployedApp {
  const app = new App({ context: APP_CONTEXT, outdir: mkdtempSync(join(tmpdir(), 'ppdp-cdk-')) });
  const stack = new ReleaseStack(app, 'Ppdp', {
    handlersDir: codeDir,
    env: { account: '111111111111', region: 'us-east-1' },
  });
  const template: Cfn = app.synth().getStackByName(stack.stackName).template;
  rmSync(app.outdir, { recursive: true, force: true });
  const resources = Object.entries<Cfn>(template.Resources);
  const value = concrete(template.Resources, bucketOf);
  const functions = new Map<string, DeployedFunction>();
  for (const [logicalId, r] of resources) {
    if (r.Type !== 'AWS::Lambda::Function' || !String(r.Properties.Handler).endsWith('.handler')) continue;
    const p = r.Properties;
    const environment: Record<string, string> = {};
    for (const [k, v] of Object.entries(p.Environment?.Variables ?? {})) {
      const set = value(v);
      if (set !== undefined) environment[k] = set;
    }
    functions.set(fakeArn(logicalId), {
      logicalId,
      handler: p.Handler,
      memoryMiB: p.MemorySize ?? 128,
      timeoutSeconds: p.Timeout ?? 3,
      environment,
    });
  }
  const machines = resources.filter(([, r]) => r.Type === 'AWS::StepFunctions::StateMachine');
  if (machines.length !== 1) throw new Error(`expected one state machine, found ${machines.length}`);
  const props = machines[0]![1].Properties;
  if (typeof props.DefinitionString !== 'string') throw new Error('the definition is not a plain string');
  let text: string = props.DefinitionString;
  for (const [name, v] of Object.entries<Cfn>(props.DefinitionSubstitutions ?? {})) {
    const arn = value(v);
    if (!arn?.startsWith('arn:aws:lambda:')) throw new Error(`substitution ${name} is not a function ARN`);
    text = text.split(`\${${name}}`).join(arn);
  }
  const outputs: Record<string, string> = {};
  for (const [name, o] of Object.entries<Cfn>(template.Outputs ?? {})) {
    const v = value(o.Value);
    if (v !== undefined) outputs[name] = v;
  }
  return {
    definition: JSON.parse(text) as AslDefinition,
    functions,
    codeDir,
    outputs,
    onExecutionStatus: statusTargets(resources, functions),
  };
}

/** The functions EventBridge rules on Step Functions execution status changes invoke. */
function statusTargets(resources: [string, Cfn][], functions: ReadonlyMap<string, DeployedFunction>) {
  const out: string[] = [];
  for (const [, r] of resources) {
    const detail = r.Properties?.EventPattern?.['detail-type'];
    if (r.Type !== 'AWS::Events::Rule' || !detail?.includes('Step Functions Execution Status Change'))
      continue;
    for (const t of r.Properties.Targets ?? []) {
      const target = t.Arn?.['Fn::GetAtt']?.[0];
      if (target && functions.has(fakeArn(target))) out.push(fakeArn(target));
    }
  }
  return out;
}

/** Every Task state of a definition (Map processors included), by state name. */
function taskStates(states: Record<string, AslState>, out = new Map<string, AslState>()) {
  for (const [name, st] of Object.entries(states)) {
    if (st.Type === 'Task') out.set(name, st);
    const inner = st.ItemProcessor?.States ?? st.Iterator?.States;
    if (inner) taskStates(inner, out);
    for (const branch of st.Branches ?? []) taskStates(branch.States, out);
  }
  return out;
}

/** A fault in one invocation of a state. */
export interface InvocationFault {
  /** Which invocation of the state, counted from 1 over the execution (retries included). */
  readonly invocation: number;
  /** SIGKILL the process this long after it starts (0: at once): Runtime.ExitError. */
  readonly killAfterMs?: number;
  /**
   * SIGKILL the process once its n-th write to the store (PUT, POST or DELETE, counted from 1)
   * is done by the server, before the answer reaches it: Runtime.ExitError, at that point of
   * its work whatever the machine's speed.
   */
  readonly killAtWrite?: number;
  /** The same once its n-th request of any kind (reads too) is done: for a state that writes nothing. */
  readonly killAtRequest?: number;
  /**
   * Keep the server's answer to the process's n-th write from it, for good: the invocation
   * waits there, still running, until its timeout or a kill ends it (the store client's own
   * request timeout, 30 s by default, must be the longer).
   */
  readonly holdAtWrite?: number;
  /** This invocation's timeout instead of the function's: Sandbox.Timedout past it. */
  readonly timeoutMs?: number;
}

/** The requests that write to the store. */
const WRITES = ['PUT', 'POST', 'DELETE'];

/** The request a fault holds (the n-th of its methods, counted from 1), and whether it kills there. */
function heldRequest(fault: InvocationFault | undefined) {
  if (fault?.killAtRequest !== undefined) return { n: fault.killAtRequest, method: undefined, kill: true };
  if (fault?.killAtWrite !== undefined) return { n: fault.killAtWrite, method: WRITES, kill: true };
  if (fault?.holdAtWrite !== undefined) return { n: fault.holdAtWrite, method: WRITES, kill: false };
  return undefined;
}

/** What a hook after a state is told: the work area and the state's output. */
export interface StateDone {
  /** The run's work area (`plan.work`, an s3:// URL ending in `/`). */
  readonly work: string;
  readonly output: unknown;
}

export interface DeployedRunOptions {
  /** The S3-protocol server every function and item reader talks to. */
  readonly s3: S3StoreOptions;
  /** Extra environment for every function (e.g. PPDP_LOG=off). */
  readonly env?: Record<string, string>;
  /** Concurrent inline-Map iterations (default 2: this machine's cores). */
  readonly mapConcurrency?: number;
  /** Wait before a Retry, in ms (default 50). */
  readonly retryIntervalMs?: number;
  /**
   * Kill an invocation the moment its resident memory passes its function's size, as Lambda
   * would (default true). A benchmark turns it off to measure what each state would need.
   */
  readonly enforceMemory?: boolean;
  /** The execution's name (`$$.Execution.Name`; default: a new one), as Step Functions gives it. */
  readonly executionName?: string;
  /** Per state: its function's memory (MiB) or timeout (s) instead of the template's. */
  readonly functionOverrides?: Record<string, { memoryMiB?: number; timeoutSeconds?: number }>;
  /** Per state: faults in given invocations. */
  readonly faults?: Record<string, InvocationFault | readonly InvocationFault[]>;
  /** S3 requests of the functions hung or refused, through a proxy in front of the server. */
  readonly s3Faults?: readonly S3FaultRule[];
  /**
   * Per top-level state (a Map state's name for the whole map): awaited after the state
   * completes, before the next starts.
   */
  readonly afterState?: Record<string, (done: StateDone) => Promise<void>>;
}

export interface DeployedRun {
  readonly ok: boolean;
  readonly output?: unknown;
  readonly error?: { name: string; message: string };
  readonly invocations: readonly Invocation[];
  /** Invocations by the rule on failed executions (after the execution ended). */
  readonly ruleInvocations: readonly Invocation[];
  /** The S3 requests the fault proxy saw, with what it did to each (when s3Faults were given). */
  readonly s3Log?: readonly S3FaultLog[];
}

const hookName = (state: string) => `HarnessAfter${state}`;

/**
 * Each after-state hook as a Task of its own between the state and its successor, at the top
 * level or in a Parallel state's branch.
 */
function withHooks<G extends { States: AslDefinition['States'] }>(def: G, hooks: readonly string[]): G {
  const states = { ...def.States };
  for (const [name, st] of Object.entries(states)) {
    if (st.Branches) states[name] = { ...st, Branches: st.Branches.map((b: G) => withHooks(b, hooks)) };
  }
  for (const name of hooks) {
    const st = states[name];
    if (!st) continue;
    if (!st.Next) throw new Error(`afterState: ${name} is not a state with a successor`);
    states[hookName(name)] = {
      Type: 'Task',
      Resource: fakeArn(hookName(name)),
      ResultPath: null,
      Next: st.Next,
    };
    states[name] = { ...st, Next: hookName(name) };
  }
  return { ...def, States: states };
}

/** An X-Ray trace header, as Step Functions gives every invocation of one traced execution. */
function traceHeader(): string {
  const time = Math.floor(Date.now() / 1000).toString(16);
  return `Root=1-${time}-${randomBytes(12).toString('hex')};Parent=${randomBytes(8).toString('hex')};Sampled=1`;
}

/** Starts an execution of the deployed state machine and waits for it to end. */
export async function runDeployed(
  deployed: DeployedApp,
  input: unknown,
  options: DeployedRunOptions,
): Promise<DeployedRun> {
  const hooks = options.afterState ?? {};
  const local = withHooks(
    localDefinition(deployed.definition, options.mapConcurrency ?? 2),
    Object.keys(hooks),
  );
  const hooked = taskStates(local.States);
  for (const name of Object.keys(hooks))
    if (!hooked.has(hookName(name))) throw new Error(`afterState: the state machine has no state ${name}`);
  const invocations: Invocation[] = [];
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const scratch = mkdtempSync(join(tmpdir(), 'ppdp-lambda-run-'));
  const proxy = options.s3Faults
    ? await S3FaultProxy.start(options.s3.endpoint ?? '', options.s3Faults)
    : undefined;
  const started = new Map<string, number>();
  // A failed Map item ends the execution while its siblings still run, as in AWS, where an
  // invocation runs to its end whatever becomes of the execution: the run ends with them.
  const running = new Set<Promise<Answer>>();
  const settle = async () => {
    while (running.size > 0) await Promise.allSettled([...running]);
  };
  let requests = 0;
  // Invocations, faults and overrides go by the function a state runs (two states run VerifySlice).
  const call = (
    taskState: string,
    fn: DeployedFunction,
    event: unknown,
    trace: string,
    into: Invocation[],
  ) => {
    const state = taskOf(taskState);
    const n = (started.get(state) ?? 0) + 1;
    started.set(state, n);
    const faults = options.faults?.[state];
    const fault = (Array.isArray(faults) ? faults : [faults]).find((f) => f?.invocation === n);
    const o = options.functionOverrides?.[state];
    const sized = { ...fn, ...(o?.memoryMiB ? { memoryMiB: o.memoryMiB } : {}) };
    const timeoutMs = fault?.timeoutMs ?? (o?.timeoutSeconds ?? fn.timeoutSeconds) * 1000;
    const held = heldRequest(fault);
    const requestId = `req-${++requests}`;
    const invocation = (async () => {
      // Through a proxy of this invocation's own, in front of the run's.
      let done: () => void = () => {};
      const heldDone = new Promise<void>((resolve) => {
        done = resolve;
      });
      const own =
        held === undefined
          ? undefined
          : await S3FaultProxy.start(
              proxy?.endpoint ?? options.s3.endpoint ?? '',
              [{ method: held.method, skip: held.n - 1, count: 1, fault: 'hold' }],
              undefined,
              done,
            );
      const endpoint = own?.endpoint ?? proxy?.endpoint;
      const run: InvocationRun = {
        fn: sized,
        timeoutMs,
        killAfterMs: fault?.killAfterMs,
        killWhen: held?.kill ? heldDone : undefined,
        requestId,
        env: {
          _X_AMZN_TRACE_ID: trace,
          ...(endpoint ? { PPDP_S3_ENDPOINT: endpoint } : {}),
        },
      };
      try {
        return await invoke(deployed.codeDir, event, options, scratch, run);
      } finally {
        await own?.stop();
      }
    })().then((answer) => {
      into.push({
        state,
        invocation: n,
        function: fn.logicalId,
        ms: answer.ms,
        peakMiB: answer.peakMiB,
        memoryMiB: sized.memoryMiB,
        ok: answer.ok,
        ...(answer.ok ? {} : { errorType: answer.error.errorType }),
        ...(answer.killed ? { killed: answer.killed } : {}),
        answered: answer.answered,
      });
      return answer;
    });
    running.add(invocation);
    return invocation.finally(() => running.delete(invocation));
  };
  const trace = traceHeader();
  for (const [state, st] of taskStates(local.States)) {
    if (st.Resource === ITEM_READER) {
      handlers[state] = (params) => readItems(params as { Bucket: string; Key: string }, options.s3);
      continue;
    }
    const hook = Object.keys(hooks).find((h) => hookName(h) === state);
    if (hook) {
      handlers[state] = async (output) => {
        await hooks[hook]!({ work: (output as { plan: { work: string } }).plan.work, output });
        return null;
      };
      continue;
    }
    const fn = deployed.functions.get(st.Resource);
    if (!fn) throw new Error(`state ${state}: no function deploys ${st.Resource}`);
    handlers[state] = async (event) => {
      const answer = await call(state, fn, event, trace, invocations);
      if (answer.ok) return answer.result;
      // Step Functions names a Lambda error by its errorType; the Cause is the JSON answer.
      const err = new Error(JSON.stringify(answer.error));
      err.name = answer.error.errorType;
      throw err;
    };
  }
  const machine = await localStateMachine(local);
  const ruleInvocations: Invocation[] = [];
  const s3Log = () => (proxy ? { s3Log: proxy.log } : {});
  try {
    const output = await runBound(
      machine,
      input,
      handlers,
      options.retryIntervalMs ?? 50,
      options.executionName,
    );
    await settle();
    return { ok: true, output, invocations, ruleInvocations, ...s3Log() };
  } catch (e) {
    // The engine wraps the error the execution ended with (a Fail state's, or a Task's).
    const err = ((e as { cause?: Error }).cause ?? e) as Error;
    await settle();
    // The stack's rule on failed executions sends each target the status change event.
    const event = {
      version: '0',
      source: 'aws.states',
      'detail-type': 'Step Functions Execution Status Change',
      detail: { status: 'FAILED', input: JSON.stringify(input), error: err.name, cause: err.message },
    };
    for (const arn of deployed.onExecutionStatus) {
      await call('OnExecutionFailed', deployed.functions.get(arn)!, event, traceHeader(), ruleInvocations);
    }
    return {
      ok: false,
      error: { name: err.name, message: err.message },
      invocations,
      ruleInvocations,
      ...s3Log(),
    };
  } finally {
    await settle();
    await proxy?.stop();
    rmSync(scratch, { recursive: true, force: true });
  }
}

/**
 * One invocation of a deployed function outside the state machine, in its own process as
 * Lambda would make it: Start as the S3 event or a schedule calls it, ReportFailure as the
 * execution-status rule does. `handler` names the function (e.g. `start.handler`).
 */
export async function invokeFunction(
  deployed: DeployedApp,
  handler: string,
  event: unknown,
  options: DeployedRunOptions,
): Promise<{ ok: boolean; result?: unknown; error?: { errorType: string; errorMessage: string } }> {
  const fn = [...deployed.functions.values()].find((f) => f.handler === handler);
  if (!fn) throw new Error(`no function deploys ${handler}`);
  const scratch = mkdtempSync(join(tmpdir(), 'ppdp-lambda-call-'));
  try {
    const answer = await invoke(deployed.codeDir, event, options, scratch, {
      fn,
      timeoutMs: fn.timeoutSeconds * 1000,
      killAfterMs: undefined,
      killWhen: undefined,
      requestId: `call-${++calls}`,
      env: {},
    });
    return answer.ok ? { ok: true, result: answer.result } : { ok: false, error: answer.error };
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
let calls = 0;

/** The ItemReader's GetObject: the JSON array of items in the named object. */
async function readItems(params: { Bucket: string; Key: string }, s3: DeployedRunOptions['s3']) {
  const { S3Client, GetObjectCommand } = await import('@aws-sdk/client-s3');
  const client = new S3Client({
    endpoint: s3.endpoint,
    forcePathStyle: true,
    region: s3.region ?? 'us-east-1',
    credentials: s3.credentials,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  try {
    const out = await client.send(new GetObjectCommand({ Bucket: params.Bucket, Key: params.Key }));
    const items = JSON.parse(await out.Body!.transformToString());
    if (!Array.isArray(items)) throw new Error(`s3://${params.Bucket}/${params.Key}: not a JSON array`);
    return items;
  } finally {
    client.destroy();
  }
}

/** What lambda-runtime.mjs writes: the handler's result or error, and its peak memory. */
type RuntimeAnswer = (
  | { ok: true; result: unknown }
  | { ok: false; error: { errorType: string; errorMessage: string; trace: string[] } }
) & { peakMiB: number };
type Answer = RuntimeAnswer & { ms: number; killed?: Invocation['killed']; answered: boolean };

/** One invocation as the harness makes it: the function (sized), its limits and faults. */
interface InvocationRun {
  readonly fn: DeployedFunction;
  readonly timeoutMs: number;
  readonly killAfterMs: number | undefined;
  /** SIGKILL the process when this settles (a fault at a point of its work). */
  readonly killWhen: Promise<void> | undefined;
  readonly requestId: string;
  /** Environment set by the service (trace header) or a fault (the S3 proxy's address). */
  readonly env: Record<string, string>;
}

/** Resident memory of a process in MiB (VmRSS), or undefined once it is gone. */
function residentMiB(pid: number): number | undefined {
  try {
    const m = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^VmRSS:\s+(\d+) kB/m);
    return m ? Number(m[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** How often a running invocation's resident memory is read. */
const MEMORY_POLL_MS = 10;

/**
 * One invocation in a fresh process, held to the function's memory size (polled, killed at
 * once past it) and timeout.
 */
function invoke(
  codeDir: string,
  event: unknown,
  options: DeployedRunOptions,
  scratch: string,
  run: InvocationRun,
): Promise<Answer> {
  const { fn, requestId, timeoutMs } = run;
  const eventFile = join(scratch, `${requestId}.event.json`);
  const answerFile = join(scratch, `${requestId}.answer.json`);
  const tmp = mkdtempSync(join(scratch, `${requestId}-tmp-`));
  writeFileSync(eventFile, JSON.stringify(event));
  const { endpoint, credentials, region } = options.s3;
  if (!endpoint) throw new Error('the harness needs the S3-protocol server endpoint');
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    ...fn.environment,
    LAMBDA_TASK_ROOT: codeDir,
    _HANDLER: fn.handler,
    AWS_LAMBDA_FUNCTION_NAME: fn.logicalId,
    AWS_LAMBDA_FUNCTION_MEMORY_SIZE: String(fn.memoryMiB),
    AWS_REGION: region ?? 'us-east-1',
    AWS_ACCESS_KEY_ID: credentials?.accessKeyId ?? 'local',
    AWS_SECRET_ACCESS_KEY: credentials?.secretAccessKey ?? 'local',
    PPDP_S3_ENDPOINT: endpoint,
    PPDP_TMP: tmp,
    PPDP_HARNESS_EVENT: eventFile,
    PPDP_HARNESS_ANSWER: answerFile,
    PPDP_HARNESS_REQUEST_ID: requestId,
    PPDP_HARNESS_TIMEOUT_MS: String(timeoutMs),
    ...run.env,
    ...options.env,
  };
  const enforce = options.enforceMemory !== false;
  // Lambda's Node runtime sizes the old space from the function's memory the same way.
  const heap = enforce ? Math.floor(fn.memoryMiB * 0.9) : 16_384;
  const t0 = performance.now();
  return new Promise<Answer>((resolve, reject) => {
    const child = spawn(process.execPath, [`--max-old-space-size=${heap}`, RUNTIME], {
      cwd: codeDir,
      env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr!.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    let killed: Invocation['killed'];
    const kill = (why: NonNullable<Invocation['killed']>) => {
      if (killed || child.exitCode !== null) return;
      killed = why;
      child.kill('SIGKILL');
    };
    // Lambda stops a function the moment it passes its memory: watched here, not judged after.
    let peakMiB = 0;
    const watch = setInterval(() => {
      const rss = child.pid === undefined ? undefined : residentMiB(child.pid);
      if (rss === undefined) return;
      peakMiB = Math.max(peakMiB, rss);
      if (enforce && rss > fn.memoryMiB) kill('memory');
    }, MEMORY_POLL_MS);
    const timer = setTimeout(() => kill('timeout'), timeoutMs);
    const faultTimer =
      run.killAfterMs === undefined ? undefined : setTimeout(() => kill('fault'), run.killAfterMs);
    void run.killWhen?.then(() => kill('fault'));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearInterval(watch);
      clearTimeout(timer);
      clearTimeout(faultTimer);
      const ms = performance.now() - t0;
      rmSync(tmp, { recursive: true, force: true });
      let answer: RuntimeAnswer | undefined;
      try {
        answer = JSON.parse(readFileSync(answerFile, 'utf8'));
      } catch {
        answer = undefined;
      }
      // The process's own high-water mark catches a peak between two reads.
      peakMiB = Math.max(peakMiB, answer?.peakMiB ?? 0);
      const answered = answer !== undefined;
      const failed = (errorType: string, errorMessage: string) =>
        resolve({ ok: false, error: { errorType, errorMessage, trace: [] }, peakMiB, ms, killed, answered });
      // Past the size between two reads, and yet ended: Lambda would have stopped it too.
      if (killed === 'memory' || (enforce && peakMiB > fn.memoryMiB)) {
        failed(
          'Runtime.OutOfMemory',
          `RequestId: ${requestId} Error: Runtime exited with error: signal: killed`,
        );
      } else if (answer) {
        resolve({ ...answer, peakMiB, ms, killed, answered });
      } else if (killed === 'timeout') {
        failed(
          'Sandbox.Timedout',
          `${requestId} Task timed out after ${(timeoutMs / 1000).toFixed(2)} seconds`,
        );
      } else {
        const how = signal ? `signal: ${signal === 'SIGKILL' ? 'killed' : signal}` : `exit status ${code}`;
        const last = stderr.trim().split('\n').slice(-3).join(' | ');
        failed(
          'Runtime.ExitError',
          `RequestId: ${requestId} Error: Runtime exited with error: ${how}${last ? ` (${last})` : ''}`,
        );
      }
    });
  });
}

/** The stack deployed on this machine: its functions bundled, its template read, s3rver started. */
export interface LocalDeployment {
  readonly deployed: DeployedApp;
  readonly s3: LocalS3;
  /** The bucket, as ppdp's store. */
  readonly store: Store;
  dispose(): Promise<void>;
}

export async function deployLocally(
  bucket: string,
  s3Options: Partial<S3StoreOptions> = {},
): Promise<LocalDeployment> {
  const codeDir = mkdtempSync(join(tmpdir(), 'ppdp-deployed-code-'));
  bundleHandlers(codeDir);
  // The stack's three buckets as one: what runs here is the states, not the bucket layout
  // (test/e2e/deployed.test.ts runs the three apart).
  const deployed = synthesizeDeployed(codeDir, () => bucket);
  const s3 = new LocalS3(bucket);
  await s3.start();
  const resolver = storeResolver(s3.options(s3Options));
  const { store } = await resolver.open(`s3://${bucket}/`);
  return {
    deployed,
    s3,
    store,
    async dispose() {
      resolver.close();
      await s3.dispose();
      rmSync(codeDir, { recursive: true, force: true });
    },
  };
}
