/**
 * A spec read from a bucket reaches nothing outside its own folder: not another user's inbox
 * (`root`, `..`), not the work area, not the reading machine's files (absolute paths, `/proc`,
 * `file:` URLs). Each is refused with E_SPEC_PATH naming the field, before any file the spec
 * names is read, on the CLI-to-S3 path (the built CLI in its own process, and the engine it
 * runs); the deployed harness's cases are in deployed.test.ts. Locally the user's own spec
 * keeps absolute paths and `root`. The spec's own key (`inbox/evil/../victim/release.json`…)
 * is checked before its fields: attacks-keys.test.ts.
 */
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type Store, type StoreResolver, storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const BUCKET = 'ppdp-confined';
const s3 = new LocalS3(BUCKET);
let resolver: StoreResolver;
let store: Store;
const ws = adultWorkspace(300);

/** Hostile variants of the Adult spec, dropped at inbox/evil/; the victim's files are at inbox/victim/. */
const HOSTILE: { name: string; field: RegExp; edit: (s: Record<string, unknown>) => void }[] = [
  {
    name: 'root above the inbox, input in another inbox',
    field: /root is set/,
    edit: (s) => Object.assign(s, { root: '..', input: '../victim/adult.csv' }),
  },
  {
    name: 'input in another inbox',
    field: /input '\.\.\/victim\/adult\.csv' leads out/,
    edit: (s) => Object.assign(s, { input: '../victim/adult.csv' }),
  },
  {
    name: 'a way out through a subfolder',
    field: /leads out/,
    edit: (s) => Object.assign(s, { input: 'sub/../../victim/adult.csv' }),
  },
  {
    name: 'an absolute input',
    field: /input '\/etc\/passwd' is an absolute path/,
    edit: (s) => Object.assign(s, { input: '/etc/passwd' }),
  },
  {
    name: "the function's environment",
    field: /is an absolute path/,
    edit: (s) => Object.assign(s, { input: '/proc/self/environ' }),
  },
  { name: 'a file: URL', field: /is a URL/, edit: (s) => Object.assign(s, { input: 'file:///etc/passwd' }) },
  {
    name: 'another bucket',
    field: /is a URL/,
    edit: (s) => Object.assign(s, { input: `s3://${BUCKET}/inbox/victim/adult.csv` }),
  },
  {
    name: 'a population table in another inbox',
    field: /privacy\[0\]\.population '\.\.\/victim\/adult\.csv' leads out/,
    edit: (s) => Object.assign(s, { privacy: [{ model: 'k-map', k: 2, population: '../victim/adult.csv' }] }),
  },
  {
    name: 'an absolute hierarchy',
    field: /attributes\.age\.hierarchy '\/etc\/passwd' is an absolute path/,
    edit: (s) => {
      (s.attributes as Record<string, { hierarchy?: unknown }>).age!.hierarchy = '/etc/passwd';
    },
  },
];

async function upload(prefix: string, edit?: (s: Record<string, unknown>) => void): Promise<string> {
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
    let bytes: Uint8Array | string = readFileSync(join(ws.dir, f));
    if (f === 'release.json' && edit) {
      const spec = JSON.parse(bytes.toString());
      edit(spec);
      bytes = JSON.stringify(spec);
    }
    await store.put(`${prefix}${f}`, bytes);
  }
  return `s3://${BUCKET}/${prefix}release.json`;
}

/** What the hostile spec's runs left besides the failure records (error.json). */
async function startedFiles(): Promise<string[]> {
  const all = [...(await store.list('work/evil/')), ...(await store.list('releases/evil/'))];
  return all.map((o) => o.key).filter((k) => !k.endsWith('/error.json'));
}

beforeAll(async () => {
  await s3.start();
  resolver = storeResolver(s3.options());
  store = (await resolver.open(`s3://${BUCKET}/`)).store;
  await upload('inbox/victim/');
}, 60_000);

afterAll(async () => {
  resolver.close();
  await s3.dispose();
});

describe('a spec read from a bucket names files inside its own folder only', () => {
  it.each(HOSTILE.map((h) => [h.name, h] as const))('refuses %s before reading anything', async (_, h) => {
    const spec = await upload('inbox/evil/', h.edit);
    const run = executeRelease({ spec, store: `s3://${BUCKET}/` }, { s3: s3.options() });
    await expect(run).rejects.toBeInstanceOf(SpecError);
    // The code, and the message read as a string (toMatchObject does not compare an error's message).
    const refusal = (await run.catch((e: unknown) => e)) as SpecError;
    expect(refusal.code).toBe('E_SPEC_PATH');
    expect(refusal.message).toMatch(h.field);
    expect(refusal.message).toMatch(/may only name files inside that folder/);
    // Nothing was started: no work files, no release folder; only the failure's record.
    expect(await startedFiles()).toEqual([]);
  });

  it('refuses on the command line too: a non-zero exit, the field and the folder named', async () => {
    const spec = await upload('inbox/evil/', HOSTILE[0]!.edit);
    const r = spawnSync(
      process.execPath,
      [CLI, 'release', spec, '--store', `s3://${BUCKET}`, '--endpoint', s3.endpoint, '--quiet'],
      { encoding: 'utf8', env: s3.cliEnv() },
    );
    expect(r.status, r.stderr).not.toBe(0);
    expect(r.stderr).toMatch(/E_SPEC_PATH|root is set/);
    expect(r.stderr).toMatch(/inbox\/evil\//);
    expect(await startedFiles()).toEqual([]);
  });

  it('a spec that stays inside its folder is released, its input one file or a folder of files', async () => {
    const spec = await upload('inbox/fine/');
    const { report, plan } = await executeRelease({ spec, store: `s3://${BUCKET}/` }, { s3: s3.options() });
    expect(report.verification.verified).toBe(true);
    // The same rows in two files under inbox/parts/data/: Plan downloads the folder's files.
    const [header, ...rows] = readFileSync(join(ws.dir, 'adult.csv'), 'utf8').trimEnd().split(/\r?\n/);
    const folderSpec = await upload('inbox/parts/', (s) => Object.assign(s, { input: 'data' }));
    await store.put('inbox/parts/data/a.csv', `${[header, ...rows.slice(0, 100)].join('\n')}\n`);
    await store.put('inbox/parts/data/b.csv', `${[header, ...rows.slice(100)].join('\n')}\n`);
    await store.put('inbox/parts/data/_SUCCESS', '');
    const parts = await executeRelease({ spec: folderSpec, store: `s3://${BUCKET}/` }, { s3: s3.options() });
    expect(parts.report.verification.verified).toBe(true);
    const bytes = async (release: string) =>
      Buffer.from(await store.get(`${release.slice(`s3://${BUCKET}/`.length)}data.csv`));
    expect((await bytes(parts.plan.release)).equals(await bytes(plan.release))).toBe(true);
  }, 90_000);
  it('a population table beside the spec is downloaded and bundled for every step', async () => {
    // The population: every input row twice, so each class holds half of its population.
    const [header, ...rows] = readFileSync(join(ws.dir, 'adult.csv'), 'utf8').trimEnd().split(/\r?\n/);
    const spec = await upload('inbox/population/', (s) =>
      Object.assign(s, {
        privacy: [
          { model: 'k-map', k: 6, population: 'people/population.csv' },
          { model: 'delta-presence', deltaMin: 0.4, deltaMax: 0.6, population: 'people/population.csv' },
        ],
      }),
    );
    await store.put('inbox/population/people/population.csv', `${[header, ...rows, ...rows].join('\n')}\n`);
    const { report } = await executeRelease({ spec, store: `s3://${BUCKET}/` }, { s3: s3.options() });
    expect(report.verification.verified).toBe(true);
    const names = report.verification.checks.filter((c) => c.passed).map((c) => c.name);
    expect(names).toEqual(expect.arrayContaining(['k-map', 'delta-presence']));
  }, 90_000);
});
