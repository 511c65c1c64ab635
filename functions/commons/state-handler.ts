/**
 * How a state runs as a Lambda function: stores from the environment, logs, metrics and an
 * X-Ray subsegment through Powertools (observability.ts: names, counts and times; never data
 * values, never error messages — those can name a value of the input and go to error.json
 * instead), errors named for the state machine, and nothing kept in memory between states or
 * invocations. The
 * WASM core is provided by runtime.ts, the handlers' entry.
 */
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { keepNothing } from '../../src/pipeline/memo.ts';
import { failureCause } from '../../src/pipeline/states/report-failure.ts';
import type { PhaseEnv } from '../../src/pipeline/states/types.ts';
import { storeResolver } from '../../src/pipeline/storage/index.ts';
import { log, traced } from './observability.ts';

/** The phases' environment in Lambda: S3 (or PPDP_S3_ENDPOINT), /tmp, the WASM kernel. */
export function lambdaEnv(): PhaseEnv {
  const endpoint = process.env.PPDP_S3_ENDPOINT;
  const rows = Number(process.env.PPDP_ROWS_PER_SHARD);
  return {
    stores: storeResolver(endpoint ? { endpoint } : {}),
    kernel: wasmGroupingKernel,
    log: (event) => log('info', event),
    tmp: process.env.PPDP_TMP ?? '/tmp',
    ...(Number.isFinite(rows) && rows > 0 ? { rowsPerShard: rows } : {}),
  };
}

let env: PhaseEnv | undefined;

interface LambdaContext {
  readonly awsRequestId?: string;
}

/**
 * A Lambda handler for one state: runs the phase, logs its outcome, and rethrows errors with
 * their name (which the state machine's Retry and Catch match) and message (the Cause, which
 * ReportFailure writes to error.json).
 */
export function stateHandler<I, O>(
  state: string,
  phase: (input: I, env: PhaseEnv) => Promise<O>,
): (input: I, context?: LambdaContext) => Promise<O> {
  // Each state is its own function: nothing one state keeps could serve the next, and a
  // state that kept what it wrote (Plan, every shard) would hold the whole table.
  keepNothing();
  return traced(state, async (input: I, context?: LambdaContext) => {
    env ??= lambdaEnv();
    const t0 = performance.now();
    try {
      const out = await phase(input, env);
      log('info', {
        state,
        outcome: 'ok',
        ms: Math.round(performance.now() - t0),
        request: context?.awsRequestId,
      });
      return out;
    } catch (e) {
      const err = e as Error & { code?: string };
      log('error', {
        state,
        outcome: 'failed',
        error: err.name,
        code: err.code,
        ms: Math.round(performance.now() - t0),
        request: context?.awsRequestId,
      });
      // Lambda reports only the error's name and message: carry the hint and the code in the
      // message, so ReportFailure's error.json says what failed and how to fix it.
      (e as Error).message = failureCause(e as Error);
      throw e;
    }
  });
}
