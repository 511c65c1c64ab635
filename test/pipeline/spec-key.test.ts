/**
 * A bucket spec's key is data: `inbox/<name>/release.json` only, the release named after that
 * one folder as written; any other key is refused before the store is asked anything, and a
 * failure under such a key is recorded under no release name. A local spec keeps its freedoms.
 * (The attacks themselves, end to end: test/e2e/attacks-keys.test.ts.)
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import {
  bucketSpecKey,
  openSpec,
  releaseName,
  releaseNameOf,
  releaseNameOfUrl,
  specKeyProblem,
} from '../../src/pipeline/states/plan.ts';
import { reportFailure } from '../../src/pipeline/states/report-failure.ts';
import type { PhaseEnv } from '../../src/pipeline/states/types.ts';
import { keyInside, type Store, storeResolver } from '../../src/pipeline/storage/index.ts';

const REFUSED: [string, RegExp][] = [
  ['inbox/evil/../victim/release.json', /'\.\.' folder/],
  ['inbox/evil/inbox/victim/release.json', /3 folders/],
  ['inbox/./x/release.json', /'\.' folder/],
  ['inbox/../release.json', /'\.\.' folder/],
  ['inbox//release.json', /empty folder/],
  ['inbox/a//release.json', /empty folder/],
  ['inbox/a/b/release.json', /2 folders/],
  ['inbox/release.json', /0 folders/],
  ['prefix/inbox/a/release.json', /not under inbox/],
  ['/inbox/a/release.json', /not under inbox/],
  ['Inbox/a/release.json', /not under inbox/],
  ['inbox/a/spec.json', /'spec\.json', not release\.json/],
  ['inbox/a/release.json/', /2 folders/],
  [`inbox/${'n'.repeat(49)}/release.json`, /49 characters, more than 48/],
  ['inbox/my data/release.json', /characters other than/],
  ['inbox/a%2F..%2Fvictim/release.json', /characters other than/],
  ['inbox/evil%2F..%2Fvictim/release.json', /characters other than/],
];

describe('a bucket spec key', () => {
  it.each(REFUSED)('%s is refused: %s', (key, why) => {
    expect(specKeyProblem(key)).toMatch(why);
    const refusal = (() => {
      try {
        bucketSpecKey('s3://b/', key);
      } catch (e) {
        return e as SpecError;
      }
    })();
    expect(refusal).toBeInstanceOf(SpecError);
    expect(refusal!.code).toBe('E_SPEC_PATH');
    expect(refusal!.message).toContain(
      `s3://b/${key}: a spec in a bucket is read only at inbox/<name>/release.json`,
    );
    expect(releaseNameOfUrl(`s3://b/${key}`)).toBeUndefined();
  });

  it('whose folder name alone is wrong is told to rename the folder, in ASCII letters', () => {
    for (const key of [
      'inbox/émoji/release.json',
      'inbox/my data/release.json',
      `inbox/${'n'.repeat(49)}/release.json`,
    ]) {
      const refusal = (() => {
        try {
          bucketSpecKey('s3://b/', key);
        } catch (e) {
          return e as SpecError;
        }
      })()!;
      expect(refusal.hint, key).toMatch(/^rename the folder with the letters A–Z and a–z, digits/);
    }
    expect(specKeyProblem('inbox/émoji/release.json')).toMatch(/other than the letters A–Z and a–z/);
    // A key of the wrong shape keeps the hint about the shape.
    try {
      bucketSpecKey('s3://b/', 'inbox/a/b/release.json');
    } catch (e) {
      expect((e as SpecError).hint).toMatch(/^put release\.json and its files in one folder/);
    }
  });

  it.each([
    ['inbox/adult/release.json', 'adult'],
    ['inbox/a.b_c-1/release.json', 'a.b_c-1'],
    ['inbox/inbox/release.json', 'inbox'],
    ['inbox/...x/release.json', '...x'],
    [`inbox/${'n'.repeat(48)}/release.json`, 'n'.repeat(48)],
  ])('%s names the release %s', (key, name) => {
    expect(specKeyProblem(key)).toBeUndefined();
    expect(bucketSpecKey('s3://b/', key)).toBe(key);
    expect(releaseNameOfUrl(`s3://b/${key}`)).toBe(name);
  });

  it('is taken as written, never URL-decoded into another key', () => {
    for (const [key, why] of [
      ['inbox/victim%2Frelease.json', /0 folders/],
      ['inbox/a%2Eb/release.json', /other than/],
      ['inbox/%2E%2E/release.json', /other than/],
      ['inbox/x%2Finbox%2Fvictim/release.json', /other than/],
      ['inbox/bad%zz/release.json', /other than/],
      ['inbox/my+data/release.json', /other than/],
    ] as const) {
      expect(() => bucketSpecKey('s3://b/', key), key).toThrow(why);
      expect(releaseNameOfUrl(`s3://b/${key}`), key).toBeUndefined();
    }
  });

  it('is refused before the store is asked anything', async () => {
    const asked: string[] = [];
    const store = new Proxy({ root: 's3://b/' } as Store, {
      get: (target, p) =>
        p === 'root' ? target.root : (...args: unknown[]) => asked.push(`${String(p)} ${args}`),
    });
    const env = { stores: { open: async (url: string) => ({ store, key: url.slice(7) }), close() {} } };
    await expect(
      openSpec('s3://b/inbox/evil/../victim/release.json', env as unknown as PhaseEnv),
    ).rejects.toThrow(SpecError);
    const loc = await openSpec('s3://b/inbox/fine/release.json', env as unknown as PhaseEnv);
    expect(releaseNameOf(loc)).toBe('fine');
    expect(asked).toEqual([]);
  });
});

describe('a local spec keeps its freedoms', () => {
  it('is named after its folder, wherever it is', async () => {
    expect(releaseName('home/me/inbox/evil/inbox/victim/release.json')).toBe('victim');
    expect(releaseName('home/me/examples/adult/spec.json')).toBe('adult');
    expect(releaseName('home/me/my data/release.json')).toBe('my_data');
    expect(releaseName('home/me/../release.json')).toBe('release');
    expect(releaseName('release.json')).toBe('release');
    const env = { stores: storeResolver() } as unknown as PhaseEnv;
    const loc = await openSpec('/tmp/a/../b/release.json', env);
    expect(releaseNameOf(loc)).toBe('b');
    expect(releaseNameOfUrl('file:///x/inbox/a/b/release.json')).toBe('b');
  });
});

describe('keyInside: a path resolved against a folder, checked after resolving', () => {
  it.each([
    ['inbox/a/', 'data.csv', 'inbox/a/data.csv'],
    ['inbox/a/', './sub//x.csv', 'inbox/a/sub/x.csv'],
    ['inbox/a/', 'sub/../x.csv', 'inbox/a/x.csv'],
    ['inbox/a/', '../a/x.csv', 'inbox/a/x.csv'],
    ['inbox/a/', '../b/x.csv', undefined],
    ['inbox/a/', '../../../x', undefined],
    ['inbox/a/', '.', undefined],
    ['inbox/a/', 'sub/..', undefined],
    ['inbox/evil/../victim/', 'x.csv', undefined],
    ['inbox/./x/', 'x.csv', undefined],
    ['inbox//', 'x.csv', undefined],
    ['inbox/a', 'x.csv', undefined],
  ])('%s + %s → %s', (folder, path, key) => {
    expect(keyInside(folder, path)).toBe(key);
  });
});

describe('ReportFailure under a key that names no release', () => {
  it('records the failure under no name; under a valid key, under its own', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ppdp-spec-key-'));
    const logs: Record<string, unknown>[] = [];
    const env = {
      stores: storeResolver(),
      log: (e: Record<string, unknown>) => logs.push(e),
    } as unknown as PhaseEnv;
    const error = { Error: 'SpecError', Cause: '{"errorMessage":"refused","code":"E_SPEC_PATH"}' };
    try {
      for (const spec of [
        's3://b/inbox/evil/inbox/victim/release.json',
        's3://b/inbox/evil/../victim/release.json',
        's3://b/inbox//release.json',
      ]) {
        const out = await reportFailure({ spec, store: `file://${dir}/`, error }, env);
        expect(out.reported, spec).toBeNull();
      }
      expect(readdirSync(dir)).toEqual([]);
      expect(logs.filter((l) => l.recordedUnder === 'no release name')).toHaveLength(3);
      const out = await reportFailure(
        { spec: 's3://b/inbox/evil/release.json', store: `file://${dir}/`, error },
        env,
      );
      expect(out.reported).toBe(`file://${dir}/work/evil/failed/error.json`);
      expect(readdirSync(join(dir, 'releases'))).toEqual(['evil']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
