/**
 * An input replaced while its release runs is never released under the run id of the bytes Plan
 * digested: Plan records each input file's version (an S3 object's ETag, a local file's inode,
 * size and mtime) and every later read of it asks for that version (If-Match on S3, a stat
 * before and after a local read). A change between Plan and the scan is refused with
 * E_INPUT_CHANGED naming the file; nothing is published and error.json says why. On the
 * CLI-to-S3 path against a real s3rver (which, as Amazon S3, answers a GET's If-Match with 412),
 * and on the local path.
 */
import { readdirSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type Store, type StoreResolver, storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const BUCKET = 'ppdp-changed';
const s3 = new LocalS3(BUCKET);
let resolver: StoreResolver;
let store: Store;
const ws = adultWorkspace(300);
const original = readFileSync(join(ws.dir, 'adult.csv'));

/** The same rows, the other way round: a file of the same size, another input. */
function reordered(): Buffer {
  const [header, ...rows] = original.toString('utf8').trimEnd().split('\n');
  return Buffer.from(`${[header, ...rows.reverse()].join('\n')}\n`);
}

/** Longer: the original with rows appended (read by Plan's byte count, a prefix of it). */
function longer(): Buffer {
  const rows = original.toString('utf8').trimEnd().split('\n').slice(1, 21);
  return Buffer.concat([original, Buffer.from(`${rows.join('\n')}\n`)]);
}

/** Runs `change` once, before the first piece's scan reads the input. */
function beforeScan(change: () => Promise<void> | void) {
  let done = false;
  return (state: string, handler: (input: unknown) => Promise<unknown>) => async (input: unknown) => {
    if (state === 'ScanPiece' && !done) {
      done = true;
      await change();
    }
    return handler(input);
  };
}

beforeAll(async () => {
  await s3.start();
  resolver = storeResolver(s3.options());
  store = (await resolver.open(`s3://${BUCKET}/`)).store;
}, 60_000);

afterAll(async () => {
  resolver.close();
  await s3.dispose();
});

describe('an input object replaced in the bucket after Plan', () => {
  it.each([
    ['of the same size', reordered],
    ['longer', longer],
  ])(
    'is refused when the replacement is %s: nothing published, error.json says why',
    async (_, replacement) => {
      expect(reordered().length).toBe(original.length);
      const name = `swap-${replacement.name}`;
      const prefix = `inbox/${name}/`;
      for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv')))
        await store.put(`${prefix}${f}`, readFileSync(join(ws.dir, f)));
      await store.put(`${prefix}release.json`, readFileSync(ws.spec));
      const run = executeRelease(
        { spec: `s3://${BUCKET}/${prefix}release.json`, store: `s3://${BUCKET}/` },
        { s3: s3.options(), wrap: beforeScan(() => store.put(`${prefix}adult.csv`, replacement())) },
      );
      const e = (await run.catch((e: unknown) => e)) as { code?: string; message: string; hint?: string };
      expect(e.code).toBe('E_INPUT_CHANGED');
      expect(e.message).toContain(`s3://${BUCKET}/${prefix}adult.csv`);
      expect(e.message).toMatch(/changed after this release started.*nothing is published/);
      expect(e.hint).toMatch(/start the release again once the upload/);
      // Nothing under releases/ but the failure's record, which names the code.
      const published = (await store.list(`releases/${name}/`)).map((o) => o.key);
      expect(published).toEqual([`releases/${name}/error.json`]);
      const record = JSON.parse(Buffer.from(await store.get(published[0]!)).toString('utf8'));
      expect(record).toMatchObject({ code: 'E_INPUT_CHANGED', published: false });
    },
  );
});

describe('a local input file changed after Plan', () => {
  it.each([
    [
      'rewritten in place (same size, a later mtime)',
      (path: string) => {
        const { mtime } = statSync(path);
        writeFileSync(path, reordered());
        // The write lands later than Plan's stat: said outright, not left to the clock's tick.
        utimesSync(path, mtime, new Date(mtime.getTime() + 2000));
      },
    ],
    [
      'replaced by a rename (another file, the same size and mtime)',
      (path: string) => {
        const { atime, mtime } = statSync(path);
        writeFileSync(`${path}.new`, reordered());
        utimesSync(`${path}.new`, atime, mtime);
        renameSync(`${path}.new`, path);
      },
    ],
  ])('is refused when %s: nothing published, error.json says why', async (_, change) => {
    const local = adultWorkspace(300);
    const input = join(local.dir, 'adult.csv');
    const out = join(local.dir, 'store');
    const run = executeRelease({ spec: local.spec, store: out }, { wrap: beforeScan(() => change(input)) });
    const e = (await run.catch((e: unknown) => e)) as { code?: string; message: string };
    expect(e.code).toBe('E_INPUT_CHANGED');
    expect(e.message).toContain(input);
    const releases = join(out, 'releases');
    const [name] = readdirSync(releases);
    expect(readdirSync(join(releases, name!))).toEqual(['error.json']);
    const record = JSON.parse(readFileSync(join(releases, name!, 'error.json'), 'utf8'));
    expect(record).toMatchObject({ code: 'E_INPUT_CHANGED', published: false });
  });
});
