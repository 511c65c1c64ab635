/**
 * The store interface, one body run against both implementations: the local filesystem and
 * S3 (a real s3rver on 127.0.0.1).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { releaseName as releaseNameOf } from '../../src/pipeline/states/plan.ts';
import {
  fileUrl,
  joinKey,
  type Location,
  StoreError,
  storeResolver,
  utf8,
} from '../../src/pipeline/storage/index.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const s3 = new LocalS3('ppdp-store');
const dir = mkdtempSync(join(tmpdir(), 'ppdp-store-'));
const stores = storeResolver({});
let s3Stores: ReturnType<typeof storeResolver>;

beforeAll(async () => {
  await s3.start();
  s3Stores = storeResolver(s3.options());
});
afterAll(async () => {
  stores.close();
  s3Stores.close();
  await s3.dispose();
  rmSync(dir, { recursive: true, force: true });
});

const backends: [string, () => Promise<Location>][] = [
  ['filesystem', () => stores.open(fileUrl(join(dir, 'root'), true))],
  ['s3', () => s3Stores.open('s3://ppdp-store/root/')],
];

describe.each(backends)('the %s store', (_, open) => {
  it('puts, gets, reads ranges, heads, copies, lists and deletes', async () => {
    const { store, key: root } = await open();
    const k = (name: string) => joinKey(root, name);
    await store.put(k('a/one.txt'), 'hello');
    const bytes = Uint8Array.from({ length: 4000 }, (_, i) => i % 251);
    await store.put(k('a/b/two.bin'), bytes);
    expect(utf8(await store.get(k('a/one.txt')))).toBe('hello');
    expect(Array.from(await store.getRange(k('a/b/two.bin'), 1000, 1010))).toEqual(
      Array.from(bytes.subarray(1000, 1010)),
    );
    expect(await store.head(k('a/b/two.bin'))).toBe(4000);
    expect(await store.head(k('nothing'))).toBeUndefined();
    await store.copy(k('a/one.txt'), k('c/one.txt'));
    expect(utf8(await store.get(k('c/one.txt')))).toBe('hello');
    expect((await store.list(k('a/'))).map((o) => o.key)).toEqual([k('a/b/two.bin'), k('a/one.txt')]);
    expect((await store.list(k('a/'))).map((o) => o.size)).toEqual([4000, 5]);
    await store.put(k('a/one.txt'), 'replaced');
    expect(utf8(await store.get(k('a/one.txt')))).toBe('replaced');
    await store.delete([k('c/one.txt'), k('never-there')]);
    expect(await store.head(k('c/one.txt'))).toBeUndefined();
    const missing = await store.get(k('missing.json')).catch((e) => e);
    expect(missing).toBeInstanceOf(StoreError);
    expect((missing as StoreError).code).toBe('E_STORE_MISSING');
  });
  it('reads a range of the version stat and list gave, and refuses one replaced or removed since', async () => {
    const { store, key: root } = await open();
    const key = joinKey(root, 'pinned/input.csv');
    await store.put(key, 'a,b\n1,2\n');
    const seen = await store.stat(key);
    expect(seen).toMatchObject({ key, size: 8 });
    expect(seen!.version).toBeTruthy();
    expect((await store.list(joinKey(root, 'pinned/')))[0]!.version).toBe(seen!.version);
    expect(utf8(await store.getRange(key, 4, 8, seen!.version))).toBe('1,2\n');
    expect(await store.stat(joinKey(root, 'pinned/none'))).toBeUndefined();
    // The same size, other bytes: another version.
    await store.put(key, 'a,b\n3,4\n');
    const stale = await store.getRange(key, 4, 8, seen!.version).catch((e) => e);
    expect(stale).toBeInstanceOf(StoreError);
    expect((stale as StoreError).code).toBe('E_INPUT_CHANGED');
    expect((stale as StoreError).message).toContain(`${store.root}${key}`);
    const now = (await store.stat(key))!.version;
    await store.delete([key]);
    expect(await store.getRange(key, 0, 4, now).catch((e) => (e as StoreError).code)).toBe('E_INPUT_CHANGED');
  });
  it('creates a file exclusively: of concurrent creates exactly one succeeds', async () => {
    const { store, key: root } = await open();
    const key = joinKey(root, 'locks/lock.json');
    const created = await Promise.all(
      Array.from({ length: 12 }, (_, i) => store.putIfAbsent(key, `{"contender":${i}}`)),
    );
    expect(created.filter(Boolean)).toHaveLength(1);
    expect(utf8(await store.get(key))).toBe(`{"contender":${created.indexOf(true)}}`);
    expect(await store.putIfAbsent(key, 'again')).toBe(false);
    await store.delete([key]);
    expect(await store.putIfAbsent(key, 'after')).toBe(true);
  });
});

describe('store keys and names', () => {
  it('joins keys without leaving the store', () => {
    expect(joinKey('inbox/adult/', '../shared/h.csv')).toBe('inbox/shared/h.csv');
    expect(joinKey('work/', 'x/')).toBe('work/x/');
    expect(() => joinKey('a/', '../../b')).toThrow(StoreError);
  });

  it('names a release after its inbox folder', () => {
    expect(releaseNameOf('inbox/adult/release.json')).toBe('adult');
    expect(releaseNameOf('prefix/inbox/my data/release.json')).toBe('my_data');
    expect(releaseNameOf('home/me/examples/adult/release.json')).toBe('adult');
  });

  it('refuses unknown schemes and bad bucket names', async () => {
    await expect(stores.open('ftp://x/y')).rejects.toThrow(/unsupported store/);
    await expect(stores.open('s3://Bad_Bucket/k')).rejects.toThrow(/bucket name/);
  });
});
