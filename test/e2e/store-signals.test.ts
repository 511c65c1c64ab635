/**
 * `ppdp release --store s3://…` signalled at a chosen request (s3rver behind the fault proxy,
 * which holds that request until the signal has been handled):
 * - before Publish (a staged file being written), SIGINT: the work area's copies of the rows
 *   (rows/, scan/, staging/, counts/ …) go as at the end of a run, its plan stays; exit 130;
 * - during Publish (a data file being copied into a new release folder), SIGTERM: the files
 *   already copied go, as a failed publish removes them, and so does the lock: nothing is left
 *   in the folder; exit 143;
 * - while manifest.json is written, or after (the old error.json being looked up), SIGTERM:
 *   the release is published, and the run finishes and exits 0 as a published run does.
 * Before, the signal left the copies of the rows in the work area, and data files without a
 * manifest in the release folder, and exited 143 ("publishing nothing") over a complete release.
 */
import { spawn } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { runIdOf } from '../../src/pipeline/release.ts';
import { type Store, storeResolver } from '../../src/pipeline/storage/index.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { until } from '../helpers/cli-run.ts';
import { type FaultProxy, startFaultProxy } from '../helpers/s3-fault-proxy.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const s3 = new LocalS3('ppdp-signals');
let store: Store;
let proxy: FaultProxy;

beforeAll(async () => {
  await s3.start();
  store = (await storeResolver(s3.options()).open(`s3://${s3.bucket}/`)).store;
  proxy = await startFaultProxy(s3.port, 600_000);
});
afterEach(() => proxy.clear());
afterAll(async () => {
  await proxy.close();
  await s3.dispose();
});

const keys = async (prefix: string) => (await store.list(prefix)).map((o) => o.key);

/** Uploads a small Adult release under inbox/<name>/ (release.json last); its run id. */
async function drop(name: string): Promise<{ spec: string; runId: string }> {
  const ws = adultWorkspace(600);
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv')))
    await store.put(`inbox/${name}/${f}`, readFileSync(join(ws.dir, f)));
  await store.put(`inbox/${name}/release.json`, readFileSync(ws.spec));
  return { spec: `s3://${s3.bucket}/inbox/${name}/release.json`, runId: runIdOf(loadSpec(ws.spec)) };
}

/**
 * Runs the CLI on `spec` through the proxy, holding the first request `hold` matches; once it
 * is held, sends `signal`, and lets it go on once the CLI has said it received the signal.
 */
async function signalledAt(
  spec: string,
  hold: { method: string; path: string },
  signal: NodeJS.Signals,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  proxy.inject({ ...hold, action: 'hold', times: 1 });
  const from = proxy.seen.length;
  const child = spawn(
    process.execPath,
    [CLI, 'release', spec, '--store', `s3://${s3.bucket}`, '--endpoint', proxy.endpoint],
    { env: s3.cliEnv(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (d) => {
    stdout += String(d);
  });
  child.stderr!.on('data', (d) => {
    stderr += String(d);
  });
  const exit = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
  try {
    await until(() => {
      if (child.exitCode !== null) throw new Error(`ended before the request was held:\n${stderr}`);
      return proxy.seen.slice(from).some((r) => r.outcome === 'hold');
    }, 120_000);
    child.kill(signal);
    await until(() => stderr.includes(`${signal} received`), 30_000);
    proxy.release();
    return { code: await exit, stdout, stderr };
  } finally {
    proxy.release();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

/** The work area's folders that hold the input's values or the released rows. */
const BULK = ['rows/', 'scan/', 'route/', 'scatter/', 'staging/', 'verify/', 'counts/', 'flags/'];

describe('ppdp release --store stopped by a signal', () => {
  it('before Publish: the work area keeps no copy of the rows, only its plan; exit 130', async () => {
    const { spec, runId } = await drop('sigwork');
    const work = `work/sigwork/${runId}/`;
    const run = await signalledAt(spec, { method: 'PUT', path: `${work}staging/` }, 'SIGINT');
    expect(run.code, run.stderr).toBe(130);
    const left = await keys(work);
    expect(left).toContain(`${work}plan.json`);
    expect(left.filter((k) => BULK.some((folder) => k.startsWith(`${work}${folder}`)))).toEqual([]);
    expect(await keys('releases/sigwork/')).toEqual([]);
  }, 180_000);

  it('during Publish into a new folder: no data file, no lock left in it; exit 143', async () => {
    const { spec, runId } = await drop('sigpub');
    const folder = `releases/sigpub/${runId}/`;
    const run = await signalledAt(spec, { method: 'PUT', path: `${folder}data.csv` }, 'SIGTERM');
    expect(run.code, run.stderr).toBe(143);
    expect(run.stderr).toContain('SIGTERM received: stopping');
    expect(await keys('releases/sigpub/')).toEqual([]);
  }, 180_000);

  it.each([
    [
      'while manifest.json is written',
      (folder: string) => ({ method: 'PUT', path: `${folder}manifest.json` }),
    ],
    ['after the release was published', () => ({ method: 'GET', path: 'releases/sigdone/error.json' })],
  ])(
    '%s: the run finishes and exits 0, its release published',
    async (when, hold) => {
      await store.delete(await keys('releases/sigdone/'));
      const { spec, runId } = await drop('sigdone');
      const folder = `releases/sigdone/${runId}/`;
      const run = await signalledAt(spec, hold(folder), 'SIGTERM');
      expect(run.code, run.stderr).toBe(0);
      expect(run.stderr).toContain(`SIGTERM received ${when}: the run finishes`);
      expect(run.stdout).toMatch(/^verified release in s3:\/\//);
      expect((await keys(folder)).sort()).toEqual(
        ['data.arrow', 'data.csv', 'manifest.json', 'report.html', 'report.json'].map((f) => `${folder}${f}`),
      );
    },
    180_000,
  );
});
