/**
 * The pieces of the Lambda runtime that a whole deployed run (test/e2e/deployed.test.ts)
 * cannot single out: the SDK's exports found however the bundle wrapped them, store errors
 * classified by their cause, a warm function that keeps nothing of the last run, and the
 * failures that reach ReportFailure through the execution-status rule.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { stateHandler } from '../../functions/commons/state-handler.ts';
import { REPORTED_FAILURE } from '../../src/pipeline/definition.ts';
import { recall, remember } from '../../src/pipeline/memo.ts';
import { failedState, reportFailure } from '../../src/pipeline/states/report-failure.ts';
import { StoreError, StoreUnavailableError, storeResolver } from '../../src/pipeline/storage/index.ts';
import { namedExports, S3Store } from '../../src/pipeline/storage/s3.ts';

class Client {}

describe('the AWS SDK as a bundle loads it', () => {
  it('takes the named exports from the module or from its default export', () => {
    const direct = { S3Client: Client };
    expect(namedExports(direct, 'S3Client')).toBe(direct);
    // esbuild's ESM chunk around a CommonJS module: everything under `default`.
    expect(namedExports({ default: direct } as never, 'S3Client')).toBe(direct);
  });

  it('names a module without the export as a broken install, not an unavailable store', () => {
    let error: unknown;
    try {
      namedExports({ default: {} } as never, 'S3Client' as never);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreError).code).toBe('E_STORE_SDK');
  });
});

describe('store errors by their cause', () => {
  const options = {
    region: 'us-east-1',
    credentials: { accessKeyId: 'a', secretAccessKey: 'b' },
    maxAttempts: 1,
  };

  it('a refused connection is worth retrying', async () => {
    const store = new S3Store('ppdp-test', { ...options, endpoint: 'http://127.0.0.1:9' });
    const error = await store.get('k').catch((e: unknown) => e);
    store.destroy();
    expect(error).toBeInstanceOf(StoreUnavailableError);
    expect((error as Error).name).toBe('StoreUnavailableError');
  });

  it('a client that fails before any request is not', async () => {
    const store = new S3Store('ppdp-test', { ...options, endpoint: 'not a url' });
    const error = await store.get('k').catch((e: unknown) => e);
    store.destroy();
    expect(error).toBeInstanceOf(StoreError);
    expect(error).not.toBeInstanceOf(StoreUnavailableError);
    expect((error as StoreError).code).toBe('E_STORE_CLIENT');
  });
});

describe('a warm function', () => {
  it('keeps nothing of an invocation for the next one, whether it succeeded or failed', async () => {
    const run = { work: 'file:///tmp/ppdp-warm/', started: 1 };
    const ok = stateHandler('Test', async (input: { value: number }) => remember(run, 'rows', input.value));
    process.env.PPDP_LOG = 'off';
    try {
      expect(await ok({ value: 7 })).toBe(7);
      expect(recall(run, 'rows')).toBeUndefined();
      const failing = stateHandler('Test', async () => {
        remember(run, 'rows', 8);
        throw new Error('boom');
      });
      await expect(failing({})).rejects.toThrow('boom');
      expect(recall(run, 'rows')).toBeUndefined();
    } finally {
      delete process.env.PPDP_LOG;
    }
  });
});

describe('failures the definition does not catch, reported from the execution-status event', () => {
  const event = (detail: Record<string, unknown>) =>
    ({ 'detail-type': 'Step Functions Execution Status Change', detail }) as never;

  it('writes error.json in the release’s failed/ work folder and under releases/<name>/, with the error and its cause', async () => {
    const root = mkdtempSync(join(tmpdir(), 'ppdp-status-'));
    const env = {
      stores: storeResolver(),
      kernel: undefined as never,
      log: () => {},
    };
    try {
      const input = JSON.stringify({
        spec: `file://${root}/inbox/adult/release.json`,
        store: `file://${root}/`,
      });
      const out = await reportFailure(
        event({
          status: 'FAILED',
          input,
          error: 'Runtime.OutOfMemory',
          cause: '{"errorType":"Runtime.OutOfMemory","errorMessage":"out of memory"}',
        }),
        env,
      );
      const path = join(root, 'work/adult/failed/error.json');
      expect(out.reported).toBe(`file://${path}`);
      const written = JSON.parse(readFileSync(path, 'utf8'));
      expect(written).toMatchObject({
        format: 'ppdp-error/1',
        published: false,
        error: 'Runtime.OutOfMemory',
        message: 'out of memory',
      });
      expect(JSON.parse(readFileSync(join(root, 'releases/adult/error.json'), 'utf8'))).toEqual(written);
      // A timeout has no error of its own: the status names it.
      expect(failedState(event({ status: 'TIMED_OUT', input }))?.error).toEqual({
        Error: 'States.TIMED_OUT',
        Cause: 'the execution ended TIMED_OUT',
      });
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('skips executions the failure path already reported, and events of executions ppdp did not start', () => {
    expect(failedState(event({ status: 'FAILED', input: '{}', error: REPORTED_FAILURE }))).toBeUndefined();
    expect(failedState(event({ status: 'FAILED', input: 'not json' }))).toBeUndefined();
    const caught = { spec: 's3://b/inbox/x/release.json', error: { Error: 'SpecError', Cause: 'bad' } };
    expect(failedState(caught)).toBe(caught);
  });
});
