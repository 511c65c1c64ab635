/**
 * A failed Parallel stops its other branches: no Task of a run starts after the run has
 * ended, and the run answers only once its Tasks have settled. (The local engine's library
 * retries a waiting Task of an aborted branch at once, even after the execution has ended; a
 * test whose wrap stopped its S3 server at a Task was once hit by such a late retry after it
 * had started the server again.)
 */
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { StoreUnavailableError } from '../../src/pipeline/storage/store.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('a run whose Parallel fails', () => {
  it('starts no Task after it has ended and answers after its running Tasks settle', async () => {
    const ws = adultWorkspace(1500);
    const events: string[] = [];
    let reported!: () => void;
    const failureReported = new Promise<void>((resolve) => {
      reported = resolve;
    });
    const error = await executeRelease(
      { spec: ws.spec, out: join(ws.dir, 'out'), shards: 2 },
      {
        retryIntervalMs: 10,
        wrap: (state, h) => async (input) => {
          if (state === 'CountDistinct') {
            events.push('CountDistinct fails');
            throw new InputError('E_TEST', 'a refusal that is not retried');
          }
          if (state === 'Search') {
            events.push('Search starts');
            // Still running when the run's failure has been reported: its error is one the
            // definition retries, and its branch has been aborted.
            await failureReported;
            await new Promise((resolve) => setTimeout(resolve, 50));
            events.push('Search ends');
            throw new StoreUnavailableError('E_TEST', 'the store is unavailable (a test)');
          }
          if (state === 'ReportFailure') {
            const out = await h(input);
            events.push('ReportFailure ends');
            reported();
            return out;
          }
          return h(input);
        },
      },
    ).then(
      () => undefined,
      (e: unknown) => e,
    );
    events.push('run settled');
    await new Promise((resolve) => setTimeout(resolve, 200));
    // The caller gets the error the failure path reported, not one of a Task that ended later.
    expect((error as Error).message).toContain('a refusal that is not retried');
    // The branches start in either order; after the failure, Search's retry never starts.
    expect(events.slice(0, 2).sort()).toEqual(['CountDistinct fails', 'Search starts']);
    expect(events.slice(2)).toEqual(['ReportFailure ends', 'Search ends', 'run settled']);
  });
});
