/**
 * The pieces of the Lambda runtime that a whole deployed run (test/e2e/deployed.test.ts)
 * cannot single out: the SDK's exports found however the bundle wrapped them, store errors
 * classified by their cause, and a warm function that keeps nothing of the last run.
 */
import { describe, expect, it } from 'vitest';
import { stateHandler } from '../../functions/commons/state-handler.ts';
import { recall, remember } from '../../src/pipeline/memo.ts';
import { StoreError, StoreUnavailableError } from '../../src/pipeline/storage/index.ts';
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
