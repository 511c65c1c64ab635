/**
 * error.json always names a code and a hint: ppdp's own errors carry theirs through the
 * state machine (Lambda reports only a name and a message), and any other failure — a crash,
 * a timeout, out of memory, an execution stopped from outside — gets one by its name.
 */
import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { describeFailure, failedState, failureCause } from '../../src/pipeline/states/report-failure.ts';

/** A Lambda error as Step Functions gives it to a Catch: the name, and a JSON Cause. */
const lambdaError = (errorType: string, errorMessage: string) => ({
  Error: errorType,
  Cause: JSON.stringify({ errorType, errorMessage, trace: [] }),
});

describe('the failure record', () => {
  it("keeps ppdp's own code, message and hint, from Lambda and from the local engine", () => {
    const e = new SpecError('E_SPEC_K', 'release.json: privacy[0].k must be ≥ 2', 'e.g. "k": 5');
    const expected = {
      error: 'SpecError',
      code: 'E_SPEC_K',
      message: 'release.json: privacy[0].k must be ≥ 2',
      hint: 'e.g. "k": 5',
    };
    expect(describeFailure(lambdaError('SpecError', failureCause(e)))).toEqual(expected);
    expect(describeFailure({ Error: 'SpecError', Cause: failureCause(e) })).toEqual(expected);
    expect(failureCause(Object.assign(new Error(failureCause(e)), { name: 'SpecError' }))).toBe(
      failureCause(e),
    );
  });

  it('gives failures that are not ppdp’s own a code and a hint saying what to do', () => {
    const cases: [string, string, RegExp][] = [
      [
        'Runtime.OutOfMemory',
        'E_OUT_OF_MEMORY',
        /raise the memory setting of its function.*drop release.json again/,
      ],
      ['Sandbox.Timedout', 'E_STATE_TIMEOUT', /ran out of time.*ppdp:rowsPerShard/],
      ['States.Timeout', 'E_STATE_TIMEOUT', /redrive/],
      ['Runtime.ExitError', 'E_STATE_FAILED', /drop release.json again.*redrive/],
      ['States.TaskFailed', 'E_STATE_FAILED', /after its retries/],
      ['TypeError', 'E_STATE_FAILED', /report it/],
    ];
    for (const [name, code, hint] of cases) {
      const record = describeFailure(
        lambdaError(name, 'RequestId: 1 Error: Runtime exited with error: signal: killed'),
      );
      expect(record.code, name).toBe(code);
      expect(record.hint, name).toMatch(hint);
    }
    // The execution-status rule's event: an execution that timed out, or was stopped.
    const stopped = (status: string) =>
      failedState({
        'detail-type': 'Step Functions Execution Status Change',
        detail: { status, input: '{"spec":"s3://b/inbox/x/release.json"}', error: null, cause: null },
      })!.error;
    expect(describeFailure(stopped('TIMED_OUT')).code).toBe('E_STATE_TIMEOUT');
    expect(describeFailure(stopped('ABORTED'))).toMatchObject({
      code: 'E_ABORTED',
      hint: /stopped from outside/,
    });
  });
});
