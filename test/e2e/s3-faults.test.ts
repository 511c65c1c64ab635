/**
 * The S3 store against a real s3rver behind a fault-injecting proxy (test/helpers/s3-fault-proxy.ts):
 * a request that is never answered, or whose answer stops, fails within the request timeout as
 * StoreUnavailableError (the class the state machine retries); a burst of 503 is ridden out by
 * the SDK's retries; every write carries the SHA-256 of its bytes.
 */
import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { S3Store, type S3StoreOptions } from '../../src/pipeline/storage/s3.ts';
import { StoreError, StoreUnavailableError, utf8 } from '../../src/pipeline/storage/store.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/s3-fault-proxy.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const s3 = new LocalS3('ppdp-faults');
let proxy: FaultProxy;
const stores: S3Store[] = [];

beforeAll(async () => {
  await s3.start();
  proxy = await startFaultProxy(s3.port);
});
afterEach(() => proxy.clear());
afterAll(async () => {
  for (const s of stores) s.destroy();
  await proxy.close();
  await s3.dispose();
});

/** A store that talks to s3rver through the proxy, with short timeouts. */
function store(extra: Partial<S3StoreOptions> = {}): S3Store {
  const s = new S3Store(s3.bucket, s3.options({ endpoint: proxy.endpoint, requestTimeoutMs: 300, ...extra }));
  stores.push(s);
  return s;
}

const sha256 = (b: Uint8Array, enc: 'hex' | 'base64' = 'hex') => createHash('sha256').update(b).digest(enc);
const since = (t0: number) => performance.now() - t0;

describe('S3 timeouts', () => {
  it('a GET that is never answered fails within the timeout as StoreUnavailableError', async () => {
    const s = store({ maxAttempts: 2 });
    await s.put('hang/a.txt', 'hello');
    proxy.inject({ method: 'GET', path: 'hang/a.txt', action: 'hang' });
    const t0 = performance.now();
    const e = await s.get('hang/a.txt').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StoreUnavailableError);
    expect((e as StoreError).code).toBe('E_STORE_UNAVAILABLE');
    expect((e as Error).message).toContain('s3://ppdp-faults/hang/a.txt');
    // Two attempts of 300 ms each and the SDK's backoff between them: far below a state's time.
    expect(since(t0)).toBeLessThan(5_000);
    expect(proxy.seen.filter((r) => r.outcome === 'hang')).toHaveLength(2);
  });

  it('one swallowed GET is retried and the read succeeds', async () => {
    const s = store({ maxAttempts: 3 });
    await s.put('hang/b.txt', 'world');
    proxy.inject({ method: 'GET', path: 'hang/b.txt', action: 'hang', times: 1 });
    expect(utf8(await s.get('hang/b.txt'))).toBe('world');
    expect(
      proxy.seen.filter((r) => r.url.includes('hang/b.txt') && r.method === 'GET').map((r) => r.outcome),
    ).toEqual(['hang', 'pass']);
  });

  it('an answer that stops half-way fails as StoreUnavailableError (idle timeout on the body)', async () => {
    const s = store({ maxAttempts: 1 });
    const bytes = Uint8Array.from({ length: 200_000 }, (_, i) => i % 253);
    await s.put('stall/c.bin', bytes);
    proxy.inject({ method: 'GET', path: 'stall/c.bin', action: 'stall' });
    const t0 = performance.now();
    await expect(s.get('stall/c.bin')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(s.digest('stall/c.bin')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(since(t0)).toBeLessThan(5_000);
  });

  it('a server that accepts no connection at all fails as StoreUnavailableError', async () => {
    const gone = await startFaultProxy(s3.port);
    const endpoint = gone.endpoint;
    await gone.close();
    const s = store({ endpoint, maxAttempts: 2 });
    await expect(s.get('anything')).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it('takes its timeouts and attempts from the environment, and refuses a bad value', async () => {
    const saved = { ...process.env };
    try {
      process.env.PPDP_S3_REQUEST_TIMEOUT_MS = '250';
      process.env.PPDP_S3_MAX_ATTEMPTS = '1';
      const s = new S3Store(s3.bucket, {
        ...s3.options({ endpoint: proxy.endpoint }),
        maxAttempts: undefined,
      });
      stores.push(s);
      await s.put('env/a.txt', 'x');
      proxy.inject({ method: 'GET', path: 'env/a.txt', action: 'hang' });
      const t0 = performance.now();
      await expect(s.get('env/a.txt')).rejects.toBeInstanceOf(StoreUnavailableError);
      expect(since(t0)).toBeLessThan(2_000);
      expect(proxy.seen.filter((r) => r.url.includes('env/a.txt') && r.outcome === 'hang')).toHaveLength(1);
      process.env.PPDP_S3_REQUEST_TIMEOUT_MS = 'soon';
      expect(() => new S3Store(s3.bucket, {})).toThrow(/PPDP_S3_REQUEST_TIMEOUT_MS=soon/);
    } finally {
      process.env = saved;
    }
  });
});

describe('S3 retries', () => {
  it('a burst of 503 SlowDown is retried by default: the write and the read succeed', async () => {
    const s = store({ maxAttempts: undefined }); // the default number of attempts
    proxy.inject({ method: 'PUT', path: 'burst/d.txt', action: '503', times: 3 });
    proxy.inject({ method: 'GET', path: 'burst/d.txt', action: '503', times: 3 });
    await s.put('burst/d.txt', 'after the burst');
    expect(utf8(await s.get('burst/d.txt'))).toBe('after the burst');
    const outcomes = (m: string) =>
      proxy.seen.filter((r) => r.method === m && r.url.includes('burst/d.txt')).map((r) => r.outcome);
    expect(outcomes('PUT')).toEqual(['503', '503', '503', 'pass']);
    expect(outcomes('GET')).toEqual(['503', '503', '503', 'pass']);
  }, 30_000);

  it('503 on every attempt fails as StoreUnavailableError, naming the key', async () => {
    const s = store({ maxAttempts: 2 });
    proxy.inject({ method: 'PUT', path: 'burst/e.txt', action: '503' });
    const e = await s.put('burst/e.txt', 'never').catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StoreUnavailableError);
    expect((e as Error).message).toMatch(/s3:\/\/ppdp-faults\/burst\/e\.txt.*HTTP 503/);
  }, 30_000);
});

describe('S3 checksums', () => {
  it('every write carries the SHA-256 of its bytes (whole, and per part when in parts)', async () => {
    const s = store({ multipartThreshold: 1024 * 1024 });
    const small = Buffer.from('small object');
    await s.put('sum/small.txt', small);
    const big = Buffer.from(Uint8Array.from({ length: 1_500_000 }, (_, i) => (i * 7) % 256));
    await s.put('sum/big.bin', big);
    await s.putIfAbsent('sum/once.txt', 'once');
    const header = (m: string, path: string) =>
      proxy.seen
        .filter((r) => r.method === m && r.url.includes(path))
        .map((r) => r.headers['x-amz-checksum-sha256']);
    expect(header('PUT', 'sum/small.txt')).toEqual([sha256(small, 'base64')]);
    expect(header('PUT', 'sum/once.txt')).toEqual([sha256(Buffer.from('once'), 'base64')]);
    // One part of 1.5 MB (parts are 16 MiB): its checksum is the whole body's.
    expect(header('PUT', 'sum/big.bin?')).toEqual([sha256(big, 'base64')]);
    // The checksums change nothing stored (s3rver keeps the bytes as sent).
    expect(Buffer.from(await s.get('sum/big.bin')).equals(big)).toBe(true);
    expect(await s.digest('sum/big.bin')).toEqual({ bytes: big.length, sha256: sha256(big) });
    // A body in pieces (a CSV encoded in chunks) streams into the upload: the same bytes, summed.
    const pieces = [0, 1, 2].map((p) => Uint8Array.from({ length: 600_000 }, (_, i) => (i * 3 + p) % 256));
    const joined = Buffer.concat(pieces);
    await s.put('sum/pieces.bin', pieces);
    expect(header('PUT', 'sum/pieces.bin?')).toEqual([sha256(joined, 'base64')]);
    expect(Buffer.from(await s.get('sum/pieces.bin')).equals(joined)).toBe(true);
  });

  it('a copy asks for the new object’s SHA-256 and is readable as the same bytes', async () => {
    const s = store();
    await s.put('sum/src.txt', 'copied bytes');
    await s.copy('sum/src.txt', 'sum/dst.txt', sha256(Buffer.from('copied bytes')));
    const copy = proxy.seen.find((r) => r.method === 'PUT' && r.url.includes('sum/dst.txt'))!;
    expect(copy.headers['x-amz-checksum-algorithm']).toBe('SHA256');
    expect(utf8(await s.get('sum/dst.txt'))).toBe('copied bytes');
    await expect(s.digest('sum/none')).rejects.toMatchObject({ code: 'E_STORE_MISSING' });
  });

  it('a copy whose SHA-256, as S3 answers it, is not the expected one is refused', async () => {
    const s = store();
    const bytes = Buffer.from('copied bytes');
    await s.put('sum/src2.txt', bytes);
    // Amazon S3 answers a copy that asked for a checksum with it; s3rver does not, so it is added.
    const answering = (sum: Buffer) => (body: string) =>
      body.replace(
        '</CopyObjectResult>',
        `<ChecksumSHA256>${sum.toString('base64')}</ChecksumSHA256></CopyObjectResult>`,
      );
    const right = createHash('sha256').update(bytes).digest();
    proxy.inject({
      method: 'PUT',
      path: 'sum/dst2.txt',
      action: 'rewrite',
      rewrite: answering(right),
      times: 1,
    });
    await s.copy('sum/src2.txt', 'sum/dst2.txt', right.toString('hex'));
    const wrong = createHash('sha256').update('other bytes').digest();
    proxy.inject({
      method: 'PUT',
      path: 'sum/dst3.txt',
      action: 'rewrite',
      rewrite: answering(wrong),
      times: 1,
    });
    const e = await s.copy('sum/src2.txt', 'sum/dst3.txt', right.toString('hex')).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(StoreError);
    expect(e).toMatchObject({ code: 'E_STORE_COPY' });
    expect((e as Error).message).toContain(
      `s3://ppdp-faults/sum/dst3.txt: the copy of sum/src2.txt has SHA-256 ${wrong.toString('hex')}`,
    );
    expect(proxy.seen.filter((r) => r.outcome === 'rewrite')).toHaveLength(2);
  });
});
