/**
 * What is deployed, run for real: the bundled Lambda handlers (dist/lambda-like, built here),
 * bound to the states of the synthesized template's state machine, each invocation in its
 * own Node process held to its function's memory size, the Distributed Maps reading their
 * items from S3, against a real S3-protocol server (s3rver) holding the stack's three buckets
 * (inbox, work, releases). A spec is dropped in the inbox and the execution starts with what
 * the EventBridge rule sends.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleHandlers } from '../../infra/bundle.ts';
import type { PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type Store, type StoreResolver, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { type DeployedApp, runDeployed, synthesizeDeployed } from '../harness/deployed.ts';
import { arrowStream, brotliBomb, csvColumns, declaring, lyingBatches } from '../helpers/lying-arrow.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

let s3: LocalS3;
let resolver: StoreResolver;
const codeDir = mkdtempSync(join(tmpdir(), 'ppdp-deployed-code-'));
let deployed: DeployedApp;
/** The stack's buckets, as the template's outputs name them. */
let bucket: { inbox: string; work: string; releases: string };
let store: Store;
let work: Store;
let releases: Store;

const ws = adultWorkspace(1500);
const ROWS_PER_SHARD = '600'; // 1,500 rows → 3 shards in each Distributed Map

async function drop(name: string, dir: string, edit?: (spec: Record<string, unknown>) => void) {
  for (const f of readdirSync(dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
    let bytes: Uint8Array | string = readFileSync(join(dir, f));
    if (f === 'release.json' && edit) {
      const spec = JSON.parse(utf8(bytes));
      edit(spec);
      bytes = JSON.stringify(spec);
    }
    await store.put(`inbox/${name}/${f}`, bytes);
  }
  return `s3://${bucket.inbox}/inbox/${name}/release.json`;
}

const run = (spec: string) =>
  runDeployed(
    deployed,
    { spec },
    { s3: s3.options(), env: { PPDP_ROWS_PER_SHARD: ROWS_PER_SHARD, PPDP_LOG: 'off' } },
  );

beforeAll(async () => {
  bundleHandlers(codeDir);
  deployed = synthesizeDeployed(codeDir);
  const { InboxBucketName, WorkBucketName, ReleaseBucketName } = deployed.outputs;
  bucket = { inbox: InboxBucketName!, work: WorkBucketName!, releases: ReleaseBucketName! };
  expect(new Set(Object.values(bucket)).size).toBe(3);
  s3 = new LocalS3(bucket.inbox, [bucket.work, bucket.releases]);
  await s3.start();
  resolver = storeResolver(s3.options());
  store = (await resolver.open(`s3://${bucket.inbox}/`)).store;
  work = (await resolver.open(`s3://${bucket.work}/`)).store;
  releases = (await resolver.open(`s3://${bucket.releases}/`)).store;
}, 120_000);

afterAll(async () => {
  resolver?.close();
  await s3?.dispose();
  rmSync(codeDir, { recursive: true, force: true });
});

describe('the deployed state machine, each state its bundled handler in its own process', () => {
  it('publishes a verified release equal to the in-process one, every shard state fanned out', async () => {
    const spec = await drop('adult', ws.dir);
    const result = await run(spec);
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);

    const count = (state: string) => result.invocations.filter((i) => i.state === state).length;
    expect(count('Plan')).toBe(1);
    expect(count('CountShard')).toBe(3);
    expect(count('ApplyShard')).toBe(3);
    for (const state of ['Search', 'Assemble', 'Verify', 'Publish']) expect(count(state), state).toBe(1);
    for (const i of result.invocations) {
      expect(i.ok, i.state).toBe(true);
      expect(i.peakMiB, i.state).toBeGreaterThan(0);
      expect(i.peakMiB, i.state).toBeLessThanOrEqual(i.memoryMiB);
    }

    const { published } = result.output as { published: { release: string; runId: string } };
    const prefix = `releases/adult/${published.runId}/`;
    expect(published.release).toBe(`s3://${bucket.releases}/${prefix}`);
    const manifest = JSON.parse(utf8(await releases.get(`${prefix}manifest.json`)));
    expect(manifest).toMatchObject({ format: 'ppdp-release/1', verified: true });
    for (const f of manifest.files as { name: string; sha256: string }[]) {
      const bytes = await releases.get(prefix + f.name);
      expect(createHash('sha256').update(bytes).digest('hex'), f.name).toBe(f.sha256);
    }

    // The same spec released in this process, on the filesystem: the same bytes.
    const localOut = join(ws.dir, 'out', 'local');
    await releaseTo(ws.spec, localOut);
    for (const name of ['data.arrow', 'data.csv']) {
      const remote = Buffer.from(await releases.get(prefix + name));
      expect(remote.equals(readFileSync(join(localOut, name))), name).toBe(true);
    }
    // The input's rows were copied to the work bucket only; the inbox holds only what was dropped.
    const keys = async (s: Store) => (await s.list('')).map((o) => o.key);
    expect(await keys(work)).toContain(`work/adult/${published.runId}/rows/0/0.arrow`);
    expect((await keys(store)).every((k) => k.startsWith('inbox/'))).toBe(true);
    expect((await keys(releases)).every((k) => k.startsWith('releases/adult/'))).toBe(true);
  }, 180_000);

  it('routes a column passed through as bytes beside the search, removed rows dropped: the in-process bytes', async () => {
    const edit = (s: Record<string, unknown>) => {
      (s.attributes as Record<string, unknown>)['native-country'] = { type: 'insensitive' };
      s.method = { name: 'generalization', maxSuppression: 0.05, metric: 'ncp', suppressed: 'remove' };
    };
    const spec = await drop('bytes', ws.dir, edit);
    const result = await run(spec);
    expect(result.error).toBeUndefined();
    expect(result.ok).toBe(true);
    // RouteShard runs in the ApplyShard function, a shard each.
    const count = (state: string) => result.invocations.filter((i) => i.state === state).length;
    expect(count('CountShard')).toBeGreaterThan(1);
    expect(count('ApplyShard')).toBe(2 * count('CountShard'));
    expect(count('Assemble')).toBe(1);
    // VerifySlice: an output part's slice, and per shard its slice and its bytes' hashes.
    expect(count('VerifySlice')).toBe(count('Assemble') + 2 * count('CountShard'));
    for (const i of result.invocations) {
      expect(i.ok, i.state).toBe(true);
      expect(i.peakMiB, i.state).toBeLessThanOrEqual(i.memoryMiB);
    }
    const { published } = result.output as { published: { runId: string } };
    const prefix = `releases/bytes/${published.runId}/`;
    const report = JSON.parse(utf8(await releases.get(`${prefix}report.json`)));
    expect(report.rows.suppressed).toBeGreaterThan(0);
    expect(report.verification.verified).toBe(true);
    const same = adultWorkspace(1500);
    same.editSpec(edit);
    const localOut = join(same.dir, 'out', 'local');
    await releaseTo(same.spec, localOut);
    for (const name of ['data.arrow', 'data.csv']) {
      const remote = Buffer.from(await releases.get(prefix + name));
      expect(remote.equals(readFileSync(join(localOut, name))), name).toBe(true);
    }
  }, 180_000);

  it('a spec that fails in Plan leaves error.json under releases/<name>/, publishes nothing, and is not retried', async () => {
    const spec = await drop('broken', ws.dir, (s) => {
      (s.privacy as { k?: number }[])[0]!.k = 0;
    });
    const result = await run(spec);
    expect(result.ok).toBe(false);
    expect(result.error?.name).toBe('ppdp.ReleaseFailed');
    const plans = result.invocations.filter((i) => i.state === 'Plan');
    expect(plans).toHaveLength(1); // a spec error is not worth a retry
    expect(plans[0]!.errorType).toBe('SpecError');
    expect(result.invocations.map((i) => i.state)).toEqual(['Plan', 'ReportFailure']);

    const errors = await work.list('work/broken/');
    expect(errors.map((o) => o.key)).toEqual(['work/broken/failed/error.json']);
    const error = JSON.parse(utf8(await work.get('work/broken/failed/error.json')));
    expect(error).toMatchObject({ format: 'ppdp-error/1', published: false, error: 'SpecError' });
    expect(error.message).toMatch(/privacy\[0\]\.k/);
    // Where the release's users look: the same record, and no release folder.
    expect((await releases.list('releases/broken/')).map((o) => o.key)).toEqual([
      'releases/broken/error.json',
    ]);
    expect(JSON.parse(utf8(await releases.get('releases/broken/error.json')))).toEqual(error);
  }, 120_000);

  it.each([
    ['root above the inbox and another inbox', { root: '..', input: '../adult/adult.csv' }],
    ["the function's own files", { input: '/proc/self/environ' }],
  ])(
    'a hostile spec naming %s is refused in Plan before anything is read',
    async (_, paths) => {
      const spec = await drop('evil', ws.dir, (s) => Object.assign(s, paths));
      const result = await run(spec);
      expect(result.ok).toBe(false);
      expect(result.invocations.map((i) => i.state)).toEqual(['Plan', 'ReportFailure']);
      const error = JSON.parse(utf8(await releases.get('releases/evil/error.json')));
      expect(error).toMatchObject({ error: 'SpecError', code: 'E_SPEC_PATH' });
      expect(error.message).toMatch(/may only name files inside that folder/);
      expect(error.hint).toMatch(/relative to release\.json/);
      // Nothing of the run but its failure records.
      const left = [...(await work.list('work/evil/')), ...(await releases.list('releases/evil/'))];
      expect(left.map((o) => o.key).filter((k) => !k.endsWith('error.json'))).toEqual([]);
    },
    120_000,
  );

  it('an Arrow file whose record batch declares 200,000 rows over 10 is refused in Plan, with error.json', async () => {
    const spec = await drop('lying', ws.dir, (s) => {
      s.input = 'lies.arrow';
      delete s.format;
    });
    const rows = csvColumns(ws.read('adult.csv'), 10);
    await store.put('inbox/lying/lies.arrow', lyingBatches(arrowStream(rows), declaring(200_000, true)));
    const result = await run(spec);
    expect(result.ok).toBe(false);
    expect(result.invocations.map((i) => i.state)).toEqual(['Plan', 'ReportFailure']);
    const error = JSON.parse(utf8(await releases.get('releases/lying/error.json')));
    expect(error).toMatchObject({ error: 'InputError', code: 'E_ARROW_CORRUPT', published: false });
    expect(error.message).toMatch(
      /^lies\.arrow record batch 1 \(at byte [\d,]+\): column "sex" declares 200,000 values/,
    );
    expect(error.hint).toMatch(/write the file again with an Arrow IPC writer/);
    const left = [...(await work.list('work/lying/')), ...(await releases.list('releases/lying/'))];
    expect(left.map((o) => o.key).filter((k) => !k.endsWith('error.json'))).toEqual([]);
  }, 120_000);

  it.each([
    ['bomb', 'bomb.parquet', 'LimitError', 'E_LIMIT_PARQUET_PAGE'],
    ['wide', 'wide.csv', 'LimitError', 'E_LIMIT_COLUMNS'],
  ] as const)(
    '%s: a file past a limit at the door (%s) is refused in Plan, with error.json',
    async (name, file, error, code) => {
      const spec = await drop(name, ws.dir, (s) => {
        s.input = file;
        delete s.format;
      });
      const columns = csvColumns(ws.read('adult.csv'), 10);
      // A Parquet page that inflates past 1,000×; a CSV header of 10⁶ columns.
      const bytes =
        name === 'bomb'
          ? brotliBomb(columns, 'occupation')
          : `${columns.names.join(';')};${Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(';')}\n`;
      await store.put(`inbox/${name}/${file}`, bytes);
      const result = await run(spec);
      expect(result.ok).toBe(false);
      expect(result.invocations.map((i) => i.state)).toEqual(['Plan', 'ReportFailure']);
      const record = JSON.parse(utf8(await releases.get(`releases/${name}/error.json`)));
      expect(record).toMatchObject({ error, code, published: false });
      const left = [...(await work.list(`work/${name}/`)), ...(await releases.list(`releases/${name}/`))];
      expect(left.map((o) => o.key).filter((k) => !k.endsWith('error.json'))).toEqual([]);
    },
    120_000,
  );

  it('on the CLI-to-S3 path the lying files and a header of 10⁶ columns are refused, and nothing is published', async () => {
    for (const [name, file, bytes, code] of [
      [
        'lying-cli',
        'lies.arrow',
        lyingBatches(arrowStream(csvColumns(ws.read('adult.csv'), 10)), declaring(200_000, true)),
        'E_ARROW_CORRUPT',
      ],
      [
        'bomb-cli',
        'bomb.parquet',
        brotliBomb(csvColumns(ws.read('adult.csv'), 10), 'occupation'),
        'E_LIMIT_PARQUET_PAGE',
      ],
      [
        // A header of 10⁶ columns, the spec listing the usual ones: refused at the header.
        'wide-cli',
        'wide.csv',
        `${ws.read('adult.csv').split('\n')[0]};${Array.from({ length: 1_000_000 }, (_, i) => `c${i}`).join(';')}\n`,
        'E_LIMIT_COLUMNS',
      ],
    ] as const) {
      const spec = await drop(name, ws.dir, (s) => {
        s.input = file;
        delete s.format;
      });
      await store.put(`inbox/${name}/${file}`, bytes);
      const refusal = (await executeRelease(
        { spec, store: `s3://${bucket.work}/` },
        { s3: s3.options() },
      ).then(
        () => undefined,
        (e: unknown) => e,
      )) as PpdpError | undefined;
      expect(refusal?.code).toBe(code);
      expect(refusal?.message).toMatch(new RegExp(`^${file.replace('.', '\\.')}`));
      const published = [
        ...(await releases.list(`releases/${name}/`)),
        ...(await work.list(`releases/${name}/`)),
      ];
      expect(published.map((o) => o.key).filter((k) => !k.endsWith('error.json'))).toEqual([]);
    }
  }, 120_000);

  it('a handler that cannot reach the store is retried as the definition says, then reported', async () => {
    const spec = await drop('unreachable', ws.dir);
    const result = await runDeployed(
      deployed,
      { spec },
      {
        s3: s3.options(),
        // Every function gets a dead endpoint: its S3 calls fail at the socket.
        env: { PPDP_S3_ENDPOINT: 'http://127.0.0.1:9', PPDP_LOG: 'off' },
      },
    );
    expect(result.ok).toBe(false);
    const plans = result.invocations.filter((i) => i.state === 'Plan');
    expect(plans.length).toBe(4); // the first attempt and three retries
    for (const p of plans) expect(p.errorType).toBe('StoreUnavailableError');
  }, 120_000);
});
