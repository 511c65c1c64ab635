/**
 * The serverless pipeline end to end against a real S3 server (s3rver on 127.0.0.1): the
 * Adult example dropped under inbox/adult/, the run started as the S3 event starts it (the
 * same definition, the local engine, S3 storage), and failures that publish nothing.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type Store, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { ADULT_DIR } from '../helpers/adult.ts';
import { arrowInBatches } from '../helpers/arrow.ts';
import { adultParquetFolder } from '../helpers/parquet.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const CLI = join(ROOT, 'bin/ppdp.mjs');
const SPEC = 's3://ppdp-test/inbox/adult/release.json';

const s3 = new LocalS3('ppdp-test');
const stores = storeResolver(s3.options());
let store: Store;
const direct = adultWorkspace();
const directOut = join(direct.dir, 'out', 'direct');

const text = async (key: string) => utf8(await store.get(key));
const keys = async (prefix: string) => (await store.list(prefix)).map((o) => o.key);

beforeAll(async () => {
  await s3.start();
  store = (await storeResolver(s3.options()).open('s3://ppdp-test/')).store;
  for (const f of readdirSync(ADULT_DIR).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
    await store.put(`inbox/adult/${f}`, readFileSync(join(ADULT_DIR, f)));
  }
  await releaseTo(direct.spec, directOut);
});

afterAll(async () => {
  stores.close();
  await s3.dispose();
});

describe('a release dropped in the bucket', () => {
  it('publishes a verified release under releases/adult/<runId>/, manifest last, equal to the filesystem run', async () => {
    // What the EventBridge rule sends: the spec's S3 URL, nothing else. The work area as the
    // search found it (before Verify), and after the run.
    let during: string[] = [];
    const result = await executeRelease(
      { spec: SPEC, shards: 3 },
      {
        s3: s3.options(),
        wrap: (state, handler) => async (input) => {
          if (state === 'Verify') during = await keys('work/adult/');
          return handler(input);
        },
      },
    );
    const prefix = `releases/adult/${result.plan.runId}/`;
    expect(result.release).toBe(`s3://ppdp-test/${prefix}`);
    expect(result.plan.work).toBe(`s3://ppdp-test/work/adult/${result.plan.runId}/`);
    expect(await keys(prefix)).toEqual(
      ['data.arrow', 'data.csv', 'manifest.json', 'report.html', 'report.json'].map((f) => prefix + f),
    );
    const manifest = JSON.parse(await text(`${prefix}manifest.json`));
    expect(manifest).toMatchObject({ format: 'ppdp-release/1', runId: result.plan.runId, verified: true });
    const { createHash } = await import('node:crypto');
    for (const f of manifest.files) {
      const bytes = await store.get(prefix + f.name);
      expect(createHash('sha256').update(bytes).digest('hex'), f.name).toBe(f.sha256);
    }
    for (const name of ['data.arrow', 'data.csv']) {
      const published = Buffer.from(await store.get(prefix + name));
      expect(published.equals(readFileSync(join(directOut, name))), name).toBe(true);
    }
    const strip = (json: string) => JSON.stringify({ ...JSON.parse(json), timings: undefined });
    expect(strip(await text(`${prefix}report.json`))).toBe(
      strip(readFileSync(join(directOut, 'report.json'), 'utf8')),
    );
    expect(result.report.verification.verified).toBe(true);
    // The rows never travelled in a state payload: they were in the work area, one file per shard.
    const work = `work/adult/${result.plan.runId}/`;
    expect(during.filter((k) => k.startsWith(`${work}rows/0/`) && /\/\d+\.arrow$/.test(k))).toHaveLength(3);
    expect(during).toContain(`${work}rows/dictionaries.arrow`);
    expect(during.filter((k) => k.startsWith(`${work}counts/`) && k.endsWith('.bin'))).toHaveLength(3);
    expect(during.some((k) => k.startsWith(`${work}staging/`))).toBe(true);
    // No copy of the rows stays once the run is over: the shards, the scans' dictionaries, the
    // staged release and the pieces are gone; the plan, the spec's bundle and the logs stay.
    const after = await keys(work);
    for (const folder of [
      'rows/',
      'scan/',
      'scatter/',
      'route/',
      'staging/',
      'seals/staging/',
      'verify/',
      'counts/',
    ])
      expect(
        after.filter((k) => k.startsWith(`${work}${folder}`)),
        folder,
      ).toEqual([]);
    expect(after).toContain(`${work}plan.json`);
    // The spec stays in the bundle; its copies of the hierarchy files (every value of each
    // quasi-identifier) go, with their seals.
    expect(after.filter((k) => k.startsWith(`${work}bundle/`))).toEqual([`${work}bundle/release.json`]);
    expect(after.filter((k) => k.startsWith(`${work}seals/bundle/`))).toEqual([
      `${work}seals/bundle/release.json`,
    ]);
    expect(during.some((k) => k.startsWith(`${work}bundle/h0/`))).toBe(true);
  });

  it('publishes a release in parts under data/, each part verified and hashed, the same rows as the filesystem run', async () => {
    const result = await executeRelease(
      {
        spec: SPEC,
        store: 's3://ppdp-test/parts',
        shards: 2,
        rowsPerPart: 10000,
        work: 's3://ppdp-test/parts/work/',
      },
      { s3: s3.options(), workers: 2, workerMinRows: 0 },
    );
    expect(result.plan.parts).toBe(4);
    const prefix = `parts/releases/adult/${result.plan.runId}/`;
    const names = (await keys(prefix)).map((k) => k.slice(prefix.length));
    expect(names.filter((n) => n.startsWith('data/part-'))).toHaveLength(8);
    const manifest = JSON.parse(await text(`${prefix}manifest.json`));
    const { createHash } = await import('node:crypto');
    for (const f of manifest.files)
      expect(
        createHash('sha256')
          .update(await store.get(prefix + f.name))
          .digest('hex'),
        f.name,
      ).toBe(f.sha256);
    const rows = async (files: string[], read: (name: string) => Promise<string>) =>
      (await Promise.all(files.map(async (n) => (await read(n)).split(/\r?\n/).slice(1))))
        .flat()
        .filter((l) => l !== '')
        .sort();
    const csvs = names.filter((n) => n.endsWith('.csv'));
    expect(await rows(csvs, (n) => text(prefix + n))).toEqual(
      await rows(['data.csv'], async (n) => readFileSync(join(directOut, n), 'utf8')),
    );
  });

  it('reads a folder of Parquet files dropped under the inbox as one table: the release the filesystem run makes', async () => {
    const ws = adultWorkspace(2000);
    adultParquetFolder(ws.dir, 'lake', ws.read('adult.csv'), [700, 701, 1500], 300);
    ws.write('lake/_SUCCESS', '');
    ws.editSpec((s) => {
      s.input = 'lake';
      delete s.format;
    });
    for (const f of readdirSync(ws.dir, { recursive: true, encoding: 'utf8' })) {
      if (f === 'adult.csv' || !statSync(join(ws.dir, f)).isFile()) continue;
      await store.put(`inbox/lake/${f}`, readFileSync(join(ws.dir, f)));
    }
    expect((await keys('inbox/lake/lake/')).filter((k) => k.endsWith('.parquet'))).toHaveLength(4);
    // A shard count would need every file's rows counted first: refused, naming the setting to give.
    const refused = await executeRelease(
      { spec: 's3://ppdp-test/inbox/lake/release.json', shards: 3 },
      { s3: s3.options() },
    ).then(
      () => undefined,
      (e: PpdpError) => e,
    );
    expect(refused?.code).toBe('E_REQUEST');
    expect(refused?.message).toBe(
      "the release request's shards cannot be counted out for a folder input in a bucket (4 files)",
    );
    expect(refused?.hint).toBe('give "rowsPerShard" instead of "shards"');
    const result = await executeRelease(
      { spec: 's3://ppdp-test/inbox/lake/release.json', rowsPerShard: 700 },
      { s3: s3.options() },
    );
    expect(result.report.verification.verified).toBe(true);
    const local = join(ws.dir, 'out', 'local');
    await releaseTo(ws.spec, local);
    const prefix = `releases/lake/${result.plan.runId}/`;
    for (const name of ['data.arrow', 'data.csv']) {
      const published = Buffer.from(await store.get(prefix + name));
      expect(published.equals(readFileSync(join(local, name))), name).toBe(true);
    }
  });

  it('reads one Arrow file in the bucket as ranges of its record batches, each fetched apart: the filesystem run’s release', async () => {
    const ws = adultWorkspace(2000);
    ws.editSpec((s) => {
      s.input = 'batches.arrow';
      delete s.format;
    });
    arrowInBatches(join(ws.dir, 'adult.csv'), join(ws.dir, 'batches.arrow'), [500, 1000, 1500]);
    for (const f of readdirSync(ws.dir)) {
      if (f === 'adult.csv' || !statSync(join(ws.dir, f)).isFile()) continue;
      await store.put(`inbox/batches/${f}`, readFileSync(join(ws.dir, f)));
    }
    const result = await executeRelease(
      { spec: 's3://ppdp-test/inbox/batches/release.json', rowsPerShard: 500 },
      { s3: s3.options(), workers: 2, workerMinRows: 0 },
    );
    expect(result.plan.pieces).toBe(4);
    expect(result.report.verification.verified).toBe(true);
    const local = join(ws.dir, 'out', 'local');
    await releaseTo(ws.spec, local);
    const prefix = `releases/batches/${result.plan.runId}/`;
    for (const name of ['data.arrow', 'data.csv']) {
      const published = Buffer.from(await store.get(prefix + name));
      expect(published.equals(readFileSync(join(local, name))), name).toBe(true);
    }
  });

  it('reads a folder in a bucket whose first file has no rows: Plan checks what it copied, the scan the rest', async () => {
    const ws = adultWorkspace(300);
    const [header, ...rows] = ws.read('adult.csv').trimEnd().split('\n');
    ws.editSpec((s) => (s.input = 'cut'));
    await store.put('inbox/cut/release.json', readFileSync(ws.spec));
    for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') && f !== 'adult.csv'))
      await store.put(`inbox/cut/${f}`, readFileSync(join(ws.dir, f)));
    // Plan copies only a.csv, which has its header and no row.
    await store.put('inbox/cut/cut/a.csv', Buffer.from(`${header}\n`));
    await store.put('inbox/cut/cut/b.csv', Buffer.from(`${[header, ...rows].join('\n')}\n`));
    const result = await executeRelease(
      { spec: 's3://ppdp-test/inbox/cut/release.json', rowsPerShard: 100 },
      { s3: s3.options() },
    );
    expect(result.report.verification.verified).toBe(true);
    expect(result.plan.pieces).toBe(2);
    expect(result.report.rows.input).toBe(300);
  });

  it('runs from the CLI with --store and --endpoint', () => {
    const r = spawnSync(
      process.execPath,
      [CLI, 'release', SPEC, '--store', 's3://ppdp-test/cli', '--endpoint', s3.endpoint, '--quiet'],
      { encoding: 'utf8', env: s3.cliEnv() },
    );
    expect(r.stderr).not.toMatch(/error/);
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /^verified release in s3:\/\/ppdp-test\/cli\/releases\/adult\/[0-9a-f]{16}\/: k = 5/,
    );
  });
});

describe('failures publish nothing', () => {
  it('an error injected in a state goes to the failure path: error.json written, no manifest', async () => {
    const ws = adultWorkspace(2000);
    const runSpec = 's3://ppdp-test/inbox/small/release.json';
    for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
      await store.put(`inbox/small/${f}`, readFileSync(join(ws.dir, f)));
    }
    let error: unknown;
    try {
      await executeRelease(
        { spec: runSpec, shards: 2 },
        {
          s3: s3.options(),
          wrap: (state, h) =>
            state === 'Assemble'
              ? async () => {
                  throw Object.assign(new Error('injected failure'), { name: 'InjectedError' });
                }
              : h,
        },
      );
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).toBe('InjectedError');
    const work = (await keys('work/small/')).find((k) => k.endsWith('/plan.json'))!.replace('plan.json', '');
    const report = JSON.parse(await text(`${work}error.json`));
    expect(report).toMatchObject({ format: 'ppdp-error/1', published: false, error: 'InjectedError' });
    // Nothing published; the failure recorded where the release's users look, until a re-run publishes.
    expect(await keys('releases/small/')).toEqual(['releases/small/error.json']);
    expect(JSON.parse(await text('releases/small/error.json'))).toEqual(report);
    const again = await executeRelease({ spec: runSpec, shards: 2 }, { s3: s3.options() });
    expect(await store.head(`releases/small/${again.plan.runId}/manifest.json`)).toBeGreaterThan(0);
    expect(await store.head('releases/small/error.json')).toBeUndefined();
  });

  it('the store going away mid-run fails the run clearly, writes no manifest, and a re-run succeeds', async () => {
    const runSpec = 's3://ppdp-test/inbox/outage/release.json';
    const ws = adultWorkspace(1500);
    for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
      await store.put(`inbox/outage/${f}`, readFileSync(join(ws.dir, f)));
    }
    let error: unknown;
    let outage = false;
    try {
      await executeRelease(
        { spec: runSpec, shards: 2 },
        {
          s3: s3.options({ maxAttempts: 1 }),
          retryIntervalMs: 10,
          wrap: (state, h) =>
            state === 'Search'
              ? async (input) => {
                  // The outage starts here (Search's retries find it under way).
                  if (!outage) await s3.stop();
                  outage = true;
                  return h(input);
                }
              : h,
        },
      );
    } catch (e) {
      error = e;
    }
    expect((error as Error).name).toBe('StoreUnavailableError');
    expect((error as Error).message).toMatch(/s3:\/\/ppdp-test\/.*the store is unavailable/);
    await s3.start();
    // Nothing published: only the folder's lock, which the outage kept ReportFailure from
    // removing and the re-run takes over (the same process, no longer holding it).
    expect((await keys('releases/outage/')).filter((k) => !k.endsWith('/.ppdp-lock'))).toEqual([]);
    const again = await executeRelease({ spec: runSpec, shards: 2 }, { s3: s3.options() });
    expect(await store.head(`releases/outage/${again.plan.runId}/manifest.json`)).toBeGreaterThan(0);
    const local = join(ws.dir, 'out', 'local');
    await releaseTo(ws.spec, local);
    const published = Buffer.from(await store.get(`releases/outage/${again.plan.runId}/data.csv`));
    expect(published.equals(readFileSync(join(local, 'data.csv')))).toBe(true);
  });
});
