/**
 * The ReportFailure state: what failed recorded as error.json; nothing is published.
 */
import { PpdpError } from '../../errors.ts';
import { DUPLICATE_ERROR, REPORTED_FAILURE } from '../definition.ts';
import { storeFolder, unlock } from '../publish.ts';
import { putJson } from '../storage/index.ts';
import { failureRecordOf, releaseNameOfUrl, storeRootOf } from './plan.ts';
import type { PhaseEnv, PlanResult, ReleaseRequest } from './types.ts';
import { asFolder, warner } from './work.ts';

/**
 * The failure path: records what failed in the work area (the run lock reads it) and, for a
 * release under a store, as `releases/<name>/error.json` where its users look. Never throws.
 * A spec in a bucket at a key that names no release (not `inbox/<name>/release.json`, plan.ts
 * `specKeyProblem`) was refused before anything was read, and its failure is recorded under
 * no name at all: any name taken from such a key (`inbox/evil/inbox/victim/…`) could be
 * another release's, whose record it would overwrite, and a shared place would be written by
 * anyone and read by no one. The refusal stays in the execution's error and the log.
 */
export async function reportFailure(
  input: FailedState | ExecutionStatusEvent,
  env: PhaseEnv,
): Promise<{ reported: string | null }> {
  const state = failedState(input);
  if (!state) return { reported: null };
  // A duplicate start was refused before it touched anything: the run under way is fine.
  if (state.error?.Error === DUPLICATE_ERROR) return { reported: null };
  const error = describeFailure(state.error);
  // Before Plan has named the work area (it failed), the release's own work folder stands in:
  // under the store, or else the spec's bucket, as Plan would have chosen it.
  const root = storeRootOf(state, 'work');
  const releaseRoot = storeRootOf(state, 'releases');
  const name = releaseNameOfUrl(state.spec ?? '');
  const work = state.plan?.work ?? state.work ?? (root && name ? `${root}work/${name}/failed/` : undefined);
  // Plan refused by the release folder's lock (`releases/<name>/<runId>/`): another run of the
  // same spec and input holds it, and publishes or records its own failure. This start's record
  // as releases/<name>/error.json would say that release failed: like a duplicate start's, it is
  // not written there (the work area's copy stays).
  const lockedOut = !state.plan && error.code === 'E_OUT_LOCKED';
  const forUsers = lockedOut
    ? undefined
    : (state.plan?.failureRecord ??
      (releaseRoot && name && state.out === undefined ? failureRecordOf(releaseRoot, name) : undefined));
  env.log({
    state: 'ReportFailure',
    error: error.error,
    code: error.code ?? undefined,
    ...(name === undefined ? { recordedUnder: 'no release name' } : {}),
  });
  // Plan took the release folder's lock: give it up (unlock never throws).
  if (state.plan?.claim) {
    const folder = storeFolder(await env.stores.open(asFolder(state.plan.release)));
    await unlock(folder, state.plan.claim, warner(env));
  }
  const record = {
    format: 'ppdp-error/1',
    runId: state.plan?.runId ?? null,
    // When the run started, if Plan named it: a later run's Publish removes only earlier runs' records.
    ...(state.plan?.started !== undefined ? { started: new Date(state.plan.started).toISOString() } : {}),
    published: false,
    ...error,
    at: new Date().toISOString(),
  };
  let reported: string | null = null;
  for (const url of [work && `${asFolder(work)}error.json`, forUsers]) {
    if (!url) continue;
    try {
      const loc = await env.stores.open(url);
      await putJson(loc.store, loc.key, record);
      reported ??= loc.store.root + loc.key;
    } catch (e) {
      env.log({ state: 'ReportFailure', reportWritten: false, why: (e as Error).name });
    }
  }
  return { reported };
}

/** What the failure path's Catch hands ReportFailure: the execution's state and the error. */
export type FailedState = ReleaseRequest & {
  plan?: PlanResult;
  error?: { Error?: string; Cause?: string };
};

/** EventBridge's "Step Functions Execution Status Change" event (the fields used here). */
export interface ExecutionStatusEvent {
  readonly 'detail-type': 'Step Functions Execution Status Change';
  readonly detail: {
    readonly status: string;
    /** The execution's input, as a JSON string. */
    readonly input?: string | null;
    readonly error?: string | null;
    readonly cause?: string | null;
  };
}

/**
 * A failure as ReportFailure records it. Deployed, errors other than ppdp's own refusals stop
 * the execution where they happen (so it can be redriven) and reach ReportFailure through the
 * execution-status rule instead of a Catch: the event carries the execution's input and its
 * error, but not Plan's result, so the error goes to the release's `failed/` work folder.
 * An execution that ended through the failure path was reported already: undefined.
 */
export function failedState(input: FailedState | ExecutionStatusEvent): FailedState | undefined {
  if (!('detail-type' in input)) return input;
  const { status, input: request, error, cause } = input.detail;
  if (error === REPORTED_FAILURE) return undefined;
  let parsed: ReleaseRequest;
  try {
    parsed = JSON.parse(request ?? '{}') as ReleaseRequest;
  } catch {
    return undefined; // not an execution ppdp started
  }
  return {
    ...parsed,
    error: { Error: error ?? `States.${status}`, Cause: cause ?? `the execution ended ${status}` },
  };
}

/**
 * The Catch output as {error, code, message, hint}: Lambda sends a JSON Cause, the local engine
 * a message. ppdp's own errors carry their code and hint; any other (a crash, a timeout, the
 * platform's) gets one of FAILURE_CODES by its name.
 */
export function describeFailure(error: { Error?: string; Cause?: string } | undefined): {
  error: string;
  code: string;
  message: string;
  hint: string;
} {
  const name = error?.Error ?? 'Error';
  let message = error?.Cause ?? 'unknown failure';
  let code: string | undefined;
  let hint: string | undefined;
  try {
    const cause = JSON.parse(message) as { errorMessage?: string; code?: string; hint?: string };
    message = cause.errorMessage ?? message;
    code = cause.code ?? undefined;
    hint = cause.hint ?? undefined;
  } catch {
    // a plain message
  }
  // ppdp's own error, as failureCause wrote it: its code and hint on lines of their own.
  const own = /\n {2}code: (E_[A-Z0-9_]+)$/.exec(message);
  if (own) {
    message = message.slice(0, own.index);
    code ??= own[1];
    const at = message.lastIndexOf('\n  hint: ');
    if (at >= 0) {
      hint ??= message.slice(at + '\n  hint: '.length);
      message = message.slice(0, at);
    }
    return { error: name, code: code!, message, hint: hint ?? OWN_HINT };
  }
  if (code !== undefined) return { error: name, code, message, hint: hint ?? OWN_HINT };
  const other = otherFailure(name);
  return { error: name, code: other.code, message, hint: other.hint };
}

/**
 * An error as the state machine carries it (its Cause): the message, then ppdp's own errors'
 * hint and code on lines of their own, which describeFailure reads back into error.json.
 * Lambda reports an error's name and message only.
 */
export function failureCause(e: Error): string {
  if (!(e instanceof PpdpError) || /\n {2}code: E_[A-Z0-9_]+$/.test(e.message)) return e.message;
  return `${e.describe()}\n  code: ${e.code}`;
}

const OWN_HINT = 'fix what the message names, then drop release.json again';

const REDRIVE =
  'drop release.json again (the same spec and input redrive the stopped execution from the state that failed) or redrive it yourself (docs/deploy.md, Operations)';

/** Codes and hints of failures that are not ppdp's own, by the error's name. */
export const FAILURE_CODES = {
  outOfMemory: {
    code: 'E_OUT_OF_MEMORY',
    hint: `a state ran out of memory: raise the memory setting of its function (or lower ppdp:rowsPerShard), deploy, then ${REDRIVE}`,
  },
  timeout: {
    code: 'E_STATE_TIMEOUT',
    hint: `a state ran out of time: lower ppdp:rowsPerShard (more, smaller shards) or raise the function's timeout, deploy, then ${REDRIVE}`,
  },
  aborted: {
    code: 'E_ABORTED',
    hint: `the execution was stopped from outside ppdp; to finish the release, ${REDRIVE}`,
  },
  failed: {
    code: 'E_STATE_FAILED',
    hint: `a state stopped without an error of ppdp's own (a crash, or the platform), after its retries: ${REDRIVE}; if it fails the same way again, report it with this error.json`,
  },
} as const;

function otherFailure(name: string): { code: string; hint: string } {
  if (/OutOfMemory/i.test(name)) return FAILURE_CODES.outOfMemory;
  if (/Timedout|Timeout|TIMED_OUT/i.test(name)) return FAILURE_CODES.timeout;
  if (/ABORTED/.test(name)) return FAILURE_CODES.aborted;
  return FAILURE_CODES.failed;
}
