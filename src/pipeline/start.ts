/**
 * Start: what the S3 event and the schedules call to start a release (deployed, the Start
 * function). It names the execution after the run — `<release name>-<run id>`, the run id being
 * Plan's (release.ts `runIdOf`: the spec's bytes and its input's digest, read here from the
 * store in ranged pieces) — so that Step Functions itself refuses a second execution of a run:
 * - no execution of that name: started, with input `{ spec, runId }` (Plan refuses to go on if
 *   the files no longer give that run id);
 * - one RUNNING or SUCCEEDED: a duplicate (the event delivered twice, the spec dropped again):
 *   nothing is touched;
 * - one that stopped (FAILED, TIMED_OUT, ABORTED) outside ppdp's failure path (a crash, a
 *   timeout, after the retries): redriven, so dropping the same spec again finishes the run
 *   from the state that failed, with no operator step;
 * - one that ended on ppdp's failure path (error.json written, the Fail state): a redrive
 *   would only fail again, so the next name, `<release name>-<run id>-2` (then -3, …), is
 *   tried: the files the spec names besides the input (a hierarchy) may have been fixed.
 * A spec or input Start cannot read starts an execution of its own name; Plan reports why.
 * A spec in a bucket is taken at `inbox/<name>/release.json` only (plan.ts `specKeyProblem`:
 * the EventBridge pattern `inbox/*` matches `inbox/evil/../victim/release.json` too): any other
 * key is refused with E_SPEC_PATH before anything is read, and no execution is started. The
 * refusal fails the invocation, so the event lands in the dead-letter queue, which alarms.
 */
import { randomBytes } from 'node:crypto';
import {
  DescribeExecutionCommand,
  RedriveExecutionCommand,
  SFNClient,
  StartExecutionCommand,
} from '@aws-sdk/client-sfn';
import { confineSpecPaths } from '../release-spec/spec.ts';
import { REPORTED_FAILURE } from './definition.ts';
import { runIdFrom, specReferences } from './release.ts';
import { openSpec, releaseNameOf } from './states/plan.ts';
import type { PhaseEnv } from './states/types.ts';
import { baseKey, dirKey, keyInside, type Location, utf8 } from './storage/index.ts';
import { storedInputDigest, storedInputFiles } from './stored-input.ts';

export const SFN_ENDPOINT_ENV = 'PPDP_SFN_ENDPOINT';
export const STATE_MACHINE_ENV = 'PPDP_STATE_MACHINE_ARN';

/** What the EventBridge rule and the schedules send. */
export interface StartEvent {
  readonly spec: string;
}

export interface StartResult {
  readonly outcome: 'started' | 'duplicate' | 'redriven';
  readonly execution: string;
  readonly runId: string | null;
}

/** Step Functions' limit on an execution's name. */
const MAX_NAME = 80;
/** Fresh executions of one run after failures on ppdp's failure path (…-2 to …-MAX_TRIES). */
const MAX_TRIES = 20;

/** The Step Functions calls Start makes, on the client the handler builds. */
type Sfn = Pick<SFNClient, 'send'>;

export async function startRelease(
  event: StartEvent,
  env: PhaseEnv,
  sfn: Sfn,
  stateMachineArn: string,
): Promise<StartResult> {
  const loc = await openSpec(event.spec, env);
  const name = releaseNameOf(loc).replace(/[^A-Za-z0-9_-]/g, '_');
  const runId = await runIdAt(loc).catch((e: unknown) => {
    env.log({ state: 'Start', runId: 'unknown', why: (e as Error).name });
    return null;
  });
  // Unreadable: Plan reads the same files and reports what is wrong with them.
  const base = `${name.slice(0, MAX_NAME - 20)}-${runId ?? randomBytes(8).toString('hex')}`;
  const input = JSON.stringify(runId ? { spec: event.spec, runId } : { spec: event.spec });
  for (let attempt = 1; attempt <= MAX_TRIES; attempt++) {
    const execution = attempt === 1 ? base : `${base}-${attempt}`;
    const result = (outcome: StartResult['outcome']): StartResult => {
      env.log({ state: 'Start', outcome, execution });
      return { outcome, execution, runId };
    };
    try {
      await sfn.send(new StartExecutionCommand({ stateMachineArn, name: execution, input }));
      return result('started');
    } catch (e) {
      if ((e as Error).name !== 'ExecutionAlreadyExists') throw e;
    }
    const executionArn = executionArnOf(stateMachineArn, execution);
    const found = await sfn.send(new DescribeExecutionCommand({ executionArn }));
    if (found.status === 'RUNNING' || found.status === 'SUCCEEDED' || found.status === 'PENDING_REDRIVE')
      return result('duplicate');
    if (found.error === REPORTED_FAILURE) continue;
    try {
      await sfn.send(new RedriveExecutionCommand({ executionArn, clientToken: redriveToken(found) }));
      return result('redriven');
    } catch (e) {
      // Another start redrove it first: a duplicate.
      if ((e as Error).name === 'ExecutionNotRedrivable') return result('duplicate');
      throw e;
    }
  }
  throw new Error(`${MAX_TRIES} executions of run ${base} failed; drop a changed spec to start afresh`);
}

/** One token per stop of an execution: two starts that redrive the same stop redrive it once. */
function redriveToken(found: { redriveCount?: number; stopDate?: Date }): string {
  return `redrive-${found.redriveCount ?? 0}-${found.stopDate?.getTime() ?? 0}`;
}

/** `arn:…:stateMachine:<machine>` → `arn:…:execution:<machine>:<execution>`. */
export function executionArnOf(stateMachineArn: string, execution: string): string {
  return `${stateMachineArn.replace(':stateMachine:', ':execution:')}:${execution}`;
}

/**
 * The run id Plan computes for the spec at `loc`: its bytes, and the digest of the input it
 * names, a file or a folder (read in ranged pieces, so memory holds one piece, whatever the
 * input's size).
 */
export async function runIdAt(loc: Location): Promise<string> {
  const specBytes = await loc.store.get(loc.key);
  const json = JSON.parse(utf8(specBytes).replace(/^\uFEFF/, '')) as { input?: unknown };
  // A hostile spec's input is read by no one, Start included: Plan then refuses it by name.
  confineSpecPaths(json, baseKey(loc.key), loc.store.root + dirKey(loc.key));
  const { input } = json;
  if (typeof input !== 'string') throw new TypeError('the spec names no input');
  const key = keyInside(dirKey(loc.key), input);
  if (key === undefined) throw new TypeError("the input leads out of the spec's folder");
  const files = await storedInputFiles(loc.store, key);
  if (files === undefined) throw new TypeError('the input is missing');
  // The files the spec names, as Plan reads them: a changed hierarchy file is another run.
  const references = await Promise.all(
    specReferences(json).map(async (ref) => {
      const at = keyInside(dirKey(loc.key), ref);
      return at === undefined || (await loc.store.stat(at)) === undefined ? undefined : loc.store.get(at);
    }),
  );
  return runIdFrom(specBytes, await storedInputDigest(loc.store, key, files), references);
}

/** The Step Functions client of the Start function (PPDP_SFN_ENDPOINT: a local endpoint). */
export function sfnFromEnv(): { sfn: SFNClient; stateMachineArn: string } {
  const stateMachineArn = process.env[STATE_MACHINE_ENV];
  if (!stateMachineArn) throw new Error(`${STATE_MACHINE_ENV} is not set: the stack sets it on Start`);
  const endpoint = process.env[SFN_ENDPOINT_ENV];
  return { sfn: new SFNClient(endpoint ? { endpoint } : {}), stateMachineArn };
}
