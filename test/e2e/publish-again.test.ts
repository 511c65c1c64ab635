/**
 * Publishing a release again, and a Publish that fails, against a real S3 server (s3rver, S3
 * writes refused through the fault proxy) and the local filesystem:
 * - a run whose folder already holds its release (the same spec and input: the same run id)
 *   leaves it as it is, byte for byte, even when S3 would refuse the writes of a re-publish;
 * - a Publish that fails removes what it wrote, and its error names the key it failed to write;
 * - a run that publishes removes the error.json of a run that started before it, never the
 *   record of one that started after it;
 * - a run refused because another run of the same spec and input holds its release folder
 *   writes no error.json beside that run's release (it used to, with no run id, where the
 *   publishing run never removed it).
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { runIdOf } from '../../src/pipeline/release.ts';
import { type Store, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/s3-fault-proxy.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const s3 = new LocalS3('ppdp-again');
let store: Store;
let proxy: FaultProxy;

const text = async (key: string) => utf8(await store.get(key));
const keys = async (prefix: string) => (await store.list(prefix)).map((o) => o.key);
/** Every object under a prefix and its bytes, as text. */
const snapshot = async (prefix: string) =>
  Object.fromEntries(await Promise.all((await keys(prefix)).map(async (k) => [k, await text(k)] as const)));

beforeAll(async () => {
  await s3.start();
  store = (await storeResolver(s3.options()).open(`s3://${s3.bucket}/`)).store;
  proxy = await startFaultProxy(s3.port);
});
afterEach(() => proxy.clear());
afterAll(async () => {
  await proxy.close();
  await s3.dispose();
});

/** Uploads a workspace's spec and data under inbox/<name>/, release.json last. */
async function drop(ws: Workspace, name: string): Promise<string> {
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv')))
    await store.put(`inbox/${name}/${f}`, readFileSync(join(ws.dir, f)));
  await store.put(`inbox/${name}/release.json`, readFileSync(ws.spec));
  return `s3://${s3.bucket}/inbox/${name}/release.json`;
}

/** A release through the proxy: one attempt per request, quick state retries. */
const release = (spec: string) =>
  executeRelease(
    { spec, shards: 2 },
    { s3: s3.options({ endpoint: proxy.endpoint, maxAttempts: 1 }), retryIntervalMs: 10 },
  );

const failure = (run: Promise<unknown>) =>
  run.then(
    () => undefined,
    (e: PpdpError) => e,
  );

describe('a release published again (the same spec and input: the same run id)', () => {
  it('is left as it is, byte for byte, however S3 would answer the writes of a re-publish', async () => {
    const spec = await drop(adultWorkspace(1200), 'again');
    const first = await release(spec);
    const folder = `releases/again/${first.plan.runId}/`;
    const before = await snapshot('releases/again/');
    expect(Object.keys(before)).toContain(`${folder}manifest.json`);
    // The same drop again, while S3 refuses every write of a release file.
    for (const f of ['data.csv', 'data.arrow', 'report.json', 'report.html', 'manifest.json'])
      proxy.inject({ method: 'PUT', path: `${folder}${f}`, action: '503' });
    const again = await release(spec);
    expect(again.plan.runId).toBe(first.plan.runId);
    expect(again.manifest).toEqual(JSON.parse(before[`${folder}manifest.json`]!));
    // Nothing rewritten (report.json keeps its timings), no lock left, no error.json.
    expect(await snapshot('releases/again/')).toEqual(before);
  });

  it('into a local --out folder: the same bytes, no file written again', async () => {
    const ws = adultWorkspace(800);
    const out = join(ws.dir, 'out', 'again');
    await releaseTo(ws.spec, out);
    const files = () => readdirSync(out).sort();
    const read = () => Object.fromEntries(files().map((f) => [f, readFileSync(join(out, f), 'utf8')]));
    const before = read();
    const written = statSync(join(out, 'data.csv')).mtimeMs;
    await releaseTo(ws.spec, out);
    expect(read()).toEqual(before);
    expect(statSync(join(out, 'data.csv')).mtimeMs).toBe(written);
  });
});

describe('a Publish that fails', () => {
  it('removes what it wrote, and names the key S3 refused to write', async () => {
    const ws = adultWorkspace(900);
    const spec = await drop(ws, 'refused');
    const folder = `releases/refused/${runIdOf(loadSpec(ws.spec))}/`;
    proxy.inject({ method: 'PUT', path: `${folder}report.json`, action: '503' });
    const e = await failure(release(spec));
    expect(e?.name).toBe('StoreUnavailableError');
    expect(e?.message).toMatch(new RegExp(`^s3://${s3.bucket}/${folder}report\\.json: not published: `));
    // The other files were copied before the refusal was known: none is left, nor the lock.
    expect(await keys(folder)).toEqual([]);
    const record = JSON.parse(await text('releases/refused/error.json'));
    expect(record.message).toBe(e?.message);
    // With S3 back, the same drop publishes.
    proxy.clear();
    const again = await release(spec);
    expect(await store.head(`${folder}manifest.json`)).toBeGreaterThan(0);
    expect(again.manifest.files.map((f) => f.name).sort()).toEqual(
      ['data.arrow', 'data.csv', 'report.html', 'report.json'].sort(),
    );
  });
});

describe('error.json beside a newer release', () => {
  it('goes when a run that started after the failed one publishes; a later run’s record stays', async () => {
    const spec = 's3://ppdp-again/inbox/fixed/release.json';
    await drop(adultWorkspace(700), 'fixed');
    const e = await failure(
      executeRelease(
        { spec, shards: 2 },
        {
          s3: s3.options(),
          wrap: (state, h) =>
            state === 'Verify'
              ? async () => {
                  throw Object.assign(new Error('injected failure'), { name: 'InjectedError' });
                }
              : h,
        },
      ),
    );
    expect(e?.name).toBe('InjectedError');
    const failed = JSON.parse(await text('releases/fixed/error.json'));
    expect(failed.started).toMatch(/^\d{4}-\d\d-\d\dT/);
    // The input fixed and dropped again: another run id, which publishes.
    await drop(adultWorkspace(701), 'fixed');
    const fixed = await executeRelease({ spec, shards: 2 }, { s3: s3.options() });
    expect(fixed.plan.runId).not.toBe(failed.runId);
    expect(await keys('releases/fixed/')).not.toContain('releases/fixed/error.json');
    // A record of a run that started after this one (written while it ran) is that run's news.
    const later = {
      ...failed,
      runId: '0123456789abcdef',
      started: new Date(Date.now() + 3_600_000).toISOString(),
    };
    await store.put('releases/fixed/error.json', `${JSON.stringify(later)}\n`);
    await executeRelease({ spec, shards: 2 }, { s3: s3.options() });
    expect(JSON.parse(await text('releases/fixed/error.json'))).toEqual(later);
  });
});

describe('a run refused by the release folder’s lock', () => {
  it('records no error.json beside the release of the run that holds it', async () => {
    const ws = adultWorkspace(650);
    const spec = await drop(ws, 'twice');
    const folder = `releases/twice/${runIdOf(loadSpec(ws.spec))}/`;
    // The lock of a run of the same spec and input, under way in a live process of this host.
    const holder = {
      format: 'ppdp-lock/1',
      token: '0123456789abcdef',
      pid: process.pid,
      host: hostname(),
      process: 'another-process',
      started: new Date().toISOString(),
    };
    await store.put(`${folder}.ppdp-lock`, `${JSON.stringify(holder)}\n`);
    const e = await failure(release(spec));
    expect(e?.code).toBe('E_OUT_LOCKED');
    expect(await keys('releases/twice/')).toEqual([`${folder}.ppdp-lock`]);
    // The refusal is kept in the work area, where no reader of the release looks.
    expect(JSON.parse(await text('work/twice/failed/error.json')).code).toBe('E_OUT_LOCKED');
  });
});
