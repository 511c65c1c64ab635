/**
 * Runs what is deployed, on this machine: the CloudFormation template the CDK stack
 * synthesizes (the state machine's definition string with its ARN substitutions, and each
 * Lambda function's handler, memory size, timeout and environment), executed by the local
 * Step Functions engine with
 * - every Task bound to its function's bundled handler (dist/lambda/*.mjs), each invocation
 *   in a fresh Node process (test/harness/lambda-runtime.mjs) with a Lambda-like event,
 *   context and environment, held to the function's configured memory (peak RSS over the
 *   size fails the invocation as Lambda's out-of-memory does) and timeout;
 * - every Distributed Map read through its ItemReader: the items are the JSON array in the S3
 *   object the definition names, fetched with a real GetObject from the S3-protocol server.
 *   (The local engine has no Distributed Map: `localDefinition` turns it into that reader
 *   followed by an inline Map over the items, with the same ItemSelector and processor.)
 * Nothing of ppdp runs in the test's own process but the engine and the S3 reads of items.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import { APP_CONTEXT } from '../../infra/config.ts';
import { ReleaseStack } from '../../infra/stacks/release-stack.ts';
import { type AslDefinition, type AslState, localDefinition } from '../../src/pipeline/definition.ts';
import { localStateMachine, runBound } from '../../src/pipeline/engine.ts';
import type { S3StoreOptions } from '../../src/pipeline/storage/s3.ts';

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
}

/** One invocation of a function, as measured. */
export interface Invocation {
  readonly state: string;
  readonly function: string;
  readonly ms: number;
  readonly peakMiB: number;
  readonly memoryMiB: number;
  readonly ok: boolean;
  readonly errorType?: string;
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
  return { definition: JSON.parse(text) as AslDefinition, functions, codeDir, outputs };
}

/** Every Task state of a definition (Map processors included), by state name. */
function taskStates(states: Record<string, AslState>, out = new Map<string, AslState>()) {
  for (const [name, st] of Object.entries(states)) {
    if (st.Type === 'Task') out.set(name, st);
    const inner = st.ItemProcessor?.States ?? st.Iterator?.States;
    if (inner) taskStates(inner, out);
  }
  return out;
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
   * Fail an invocation whose peak memory passes its function's size, as Lambda would (default
   * true). A benchmark turns it off to measure what each state would need.
   */
  readonly enforceMemory?: boolean;
  /** The execution's name (`$$.Execution.Name`; default: a new one), as Step Functions gives it. */
  readonly executionName?: string;
}

export interface DeployedRun {
  readonly ok: boolean;
  readonly output?: unknown;
  readonly error?: { name: string; message: string };
  readonly invocations: readonly Invocation[];
}

/** Starts an execution of the deployed state machine and waits for it to end. */
export async function runDeployed(
  deployed: DeployedApp,
  input: unknown,
  options: DeployedRunOptions,
): Promise<DeployedRun> {
  const local = localDefinition(deployed.definition, options.mapConcurrency ?? 2);
  const invocations: Invocation[] = [];
  const handlers: Record<string, (input: unknown) => Promise<unknown>> = {};
  const scratch = mkdtempSync(join(tmpdir(), 'ppdp-lambda-run-'));
  let requests = 0;
  for (const [state, st] of taskStates(local.States)) {
    if (st.Resource === ITEM_READER) {
      handlers[state] = (params) => readItems(params as { Bucket: string; Key: string }, options.s3);
      continue;
    }
    const fn = deployed.functions.get(st.Resource);
    if (!fn) throw new Error(`state ${state}: no function deploys ${st.Resource}`);
    handlers[state] = async (event) => {
      const answer = await invoke(deployed.codeDir, fn, event, options, scratch, `req-${++requests}`);
      invocations.push({
        state,
        function: fn.logicalId,
        ms: answer.ms,
        peakMiB: answer.peakMiB,
        memoryMiB: fn.memoryMiB,
        ok: answer.ok,
        ...(answer.ok ? {} : { errorType: answer.error.errorType }),
      });
      if (answer.ok) return answer.result;
      // Step Functions names a Lambda error by its errorType; the Cause is the JSON answer.
      const err = new Error(JSON.stringify(answer.error));
      err.name = answer.error.errorType;
      throw err;
    };
  }
  const machine = await localStateMachine(local);
  try {
    const output = await runBound(
      machine,
      input,
      handlers,
      options.retryIntervalMs ?? 50,
      options.executionName,
    );
    return { ok: true, output, invocations };
  } catch (e) {
    // The engine wraps the error the execution ended with (a Fail state's, or a Task's).
    const err = ((e as { cause?: Error }).cause ?? e) as Error;
    return { ok: false, error: { name: err.name, message: err.message }, invocations };
  } finally {
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
    const answer = await invoke(deployed.codeDir, fn, event, options, scratch, `call-${++calls}`);
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

type Answer =
  | { ok: true; result: unknown; peakMiB: number; ms: number }
  | {
      ok: false;
      error: { errorType: string; errorMessage: string; trace: string[] };
      peakMiB: number;
      ms: number;
    };

/** One invocation in a fresh process, held to the function's memory size and timeout. */
function invoke(
  codeDir: string,
  fn: DeployedFunction,
  event: unknown,
  options: DeployedRunOptions,
  scratch: string,
  requestId: string,
): Promise<Answer> {
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
    PPDP_HARNESS_TIMEOUT_MS: String(fn.timeoutSeconds * 1000),
    ...options.env,
  };
  // Lambda's Node runtime sizes the old space from the function's memory the same way.
  const heap = options.enforceMemory === false ? 16_384 : Math.floor(fn.memoryMiB * 0.9);
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
    const timer = setTimeout(() => child.kill('SIGKILL'), fn.timeoutSeconds * 1000);
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      const ms = performance.now() - t0;
      rmSync(tmp, { recursive: true, force: true });
      let answer: Omit<Answer, 'ms'> | undefined;
      try {
        answer = JSON.parse(readFileSync(answerFile, 'utf8'));
      } catch {
        answer = undefined;
      }
      if (!answer) {
        const timedOut = signal === 'SIGKILL' && ms >= fn.timeoutSeconds * 1000;
        const errorType = timedOut ? 'Sandbox.Timedout' : 'Runtime.ExitError';
        const errorMessage = timedOut
          ? `Task timed out after ${fn.timeoutSeconds} seconds`
          : `Runtime exited with ${signal ?? `code ${code}`}: ${stderr.trim().split('\n').slice(-3).join(' | ')}`;
        resolve({ ok: false, error: { errorType, errorMessage, trace: [] }, peakMiB: 0, ms });
        return;
      }
      if (answer.peakMiB > fn.memoryMiB && options.enforceMemory !== false) {
        resolve({
          ok: false,
          error: {
            errorType: 'Runtime.OutOfMemory',
            errorMessage: `peak memory ${Math.round(answer.peakMiB)} MiB above the function's ${fn.memoryMiB} MiB`,
            trace: [],
          },
          peakMiB: answer.peakMiB,
          ms,
        });
        return;
      }
      resolve({ ...answer, ms } as Answer);
    });
  });
}
