/**
 * Integrity end to end, on the local store and on a real s3rver: every published byte is the
 * verified byte, and every work file is read as it was written.
 * - A staged file changed after Verify (two bytes swapped, same size) is refused at Publish
 *   (E_PUBLISH_MISMATCH): no manifest.
 * - A work file cut short or changed after it was written (a counts file before Search, a rows
 *   shard before ApplyShard, a staged part before VerifySlice, plan.json) is refused where it
 *   is read (E_WORK_CORRUPT, naming it).
 * - The sealing itself (src/pipeline/storage/sealed.ts): what is sealed how, and what stays plain.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import { FsStore } from '../../src/pipeline/storage/fs.ts';
import {
  fileUrl,
  type Location,
  SealedStore,
  type Store,
  StoreError,
  sealWork,
  storeResolver,
  utf8,
} from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const s3 = new LocalS3('ppdp-integrity');
let stores: ReturnType<typeof storeResolver>;

beforeAll(async () => {
  await s3.start();
  stores = storeResolver(s3.options());
});
afterAll(async () => {
  stores.close();
  await s3.dispose();
});

/** Two different bytes of the object swapped: same size, other content. */
async function swapBytes(store: Store, key: string): Promise<void> {
  const bytes = Buffer.from(await store.get(key));
  const i = Math.floor(bytes.length / 2);
  const j = bytes.findIndex((b, at) => at > i && b !== bytes[i]);
  [bytes[i], bytes[j]] = [bytes[j]!, bytes[i]!];
  await store.put(key, bytes);
}

/** The object cut to half its size. */
async function truncate(store: Store, key: string): Promise<void> {
  const bytes = await store.get(key);
  await store.put(key, bytes.subarray(0, Math.floor(bytes.length / 2)));
}

type Tamper = (store: Store, key: string) => Promise<void>;

interface When {
  /** Drop what the engine keeps between states, so that each reads the store (as in Lambda). */
  readonly forget?: boolean;
  /** After the state's first run instead of before it. */
  readonly after?: boolean;
}

interface Backend {
  /** Runs a 2-shard release of a small Adult, changing work file `name` (raw) at `state`. */
  run(
    state: string,
    name: string,
    tamper: Tamper,
    when?: When,
  ): Promise<{ error: unknown; published: string[] }>;
}

let runs = 0;
const backends: [string, Backend][] = [
  [
    'filesystem',
    {
      async run(state, name, tamper, when) {
        const ws = adultWorkspace(1200);
        const out = join(ws.dir, 'out');
        const error = await executeRelease(
          { spec: ws.spec, out, shards: 2 },
          { wrap: tampering(state, name, tamper, when) },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        let published: string[] = [];
        try {
          published = readdirSync(out, { recursive: true }) as string[];
        } catch {
          // no folder: nothing published
        }
        return { error, published };
      },
    },
  ],
  [
    's3',
    {
      async run(state, name, tamper, when) {
        const ws = adultWorkspace(1200);
        const inbox = `inbox/run-${++runs}/`;
        const { store } = await stores.open(`s3://${s3.bucket}/`);
        for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json')))
          await store.put(`${inbox}${f}`, readFileSync(join(ws.dir, f)));
        const error = await executeRelease(
          { spec: `s3://${s3.bucket}/${inbox}release.json`, shards: 2 },
          { s3: s3.options(), wrap: tampering(state, name, tamper, when) },
        ).then(
          () => undefined,
          (e: unknown) => e,
        );
        const published = (await store.list(`releases/run-${runs}/`)).map((o) => o.key);
        return { error, published };
      },
    },
  ],
];

/** A state wrapper that changes `name` in the work area (the raw store) once, at `state`. */
function tampering(state: string, name: string, tamper: Tamper, when: When = {}) {
  let done = false;
  return (s: string, handler: (input: unknown) => Promise<unknown>) =>
    async (input: unknown): Promise<unknown> => {
      if (when.forget) forgetAll();
      const change = async () => {
        if (s !== state || done) return;
        done = true;
        const work = await stores.open((input as { work: string }).work);
        await tamper(work.store, `${work.key.replace(/\/?$/, '/')}${name}`);
      };
      if (!when.after) await change();
      const out = await handler(input);
      if (when.after) await change();
      return out;
    };
}

/** The file store's own digest, before any spy replaces it. */
const readBack = FsStore.prototype.digest;

const codeOf = (e: unknown) => (e as StoreError).code;

describe.each(backends)('on the %s store', (_, backend) => {
  it('a staged file changed after Verify (two bytes swapped, same size) is refused at Publish: no manifest', async () => {
    const { error, published } = await backend.run('Publish', 'staging/data.csv', swapBytes);
    expect(codeOf(error)).toBe('E_PUBLISH_MISMATCH');
    expect((error as Error).name).toBe('VerificationError');
    expect((error as Error).message).toMatch(
      /data\.csv: published \d+ bytes.*the verified file was changed after Verify/,
    );
    expect(published.some((n) => n.endsWith('manifest.json'))).toBe(false);
  });

  it('a counts file cut short before Search is refused there, naming it (states reading the store, as in Lambda)', async () => {
    const { error, published } = await backend.run('Search', 'counts/1.bin', truncate, { forget: true });
    expect(codeOf(error)).toBe('E_WORK_CORRUPT');
    expect((error as Error).message).toMatch(/counts\/1\.bin: the work file is corrupt/);
    expect((error as StoreError).hint).toMatch(
      /changed or truncated after it was written; start the release again/,
    );
    expect(published.some((n) => n.endsWith('manifest.json'))).toBe(false);
  });

  it('a rows shard changed before ApplyShard is refused there (states reading the store, as in Lambda)', async () => {
    const { error } = await backend.run('ApplyShard', 'rows/0/0.arrow', swapBytes, { forget: true });
    expect(codeOf(error)).toBe('E_WORK_CORRUPT');
    expect((error as Error).message).toMatch(
      /rows\/0\/0\.arrow: the work file is corrupt \(its CRC-32 or length differs/,
    );
  });

  it('a staged part changed after Assemble wrote it is refused by VerifySlice before it is verified', async () => {
    // Assemble is the only writer of the one part; every Assemble ends before the parts' slices.
    const { error } = await backend.run('Assemble', 'staging/data.arrow', swapBytes, { after: true });
    expect(codeOf(error)).toBe('E_WORK_CORRUPT');
    expect((error as Error).message).toMatch(/staging\/data\.arrow: the work file is corrupt/);
  });

  it('plan.json cut short is refused by the next state', async () => {
    const { error } = await backend.run('CountShard', 'plan.json', truncate);
    expect(codeOf(error)).toBe('E_WORK_CORRUPT');
    expect((error as Error).message).toMatch(/plan\.json: the work file is corrupt \(its seal is missing/);
  });
});

describe('sealed work areas', () => {
  const areas: [string, () => Promise<Location>][] = [
    ['filesystem', () => stores.open(fileUrl(join(adultWorkspace(10).dir, 'work'), true))],
    ['s3', async () => stores.open(`s3://${s3.bucket}/sealed/${++runs}/`)],
  ];

  it.each(areas)(
    '%s: trailers and seals round-trip; item lists, locks and staged bytes stay as written',
    async (_, open) => {
      const raw = await open();
      const { store } = sealWork(raw);
      const k = (n: string) => `${raw.key}${n}`;
      await store.put(k('counts/0.bin'), Uint8Array.of(1, 2, 3));
      await store.put(k('shards.json'), '[{"index":0}]\n');
      await store.put(k('staging/data.csv'), 'a;b\n');
      expect(Array.from(await store.get(k('counts/0.bin')))).toEqual([1, 2, 3]);
      expect(await store.head(k('counts/0.bin'))).toBe(3);
      expect((await store.list(k('counts/'))).map((o) => o.size)).toEqual([3]);
      // On the store itself: the trailer after the bytes; item lists and staged files untouched.
      expect((await raw.store.get(k('counts/0.bin'))).length).toBe(3 + 20);
      expect(utf8(await raw.store.get(k('shards.json')))).toBe('[{"index":0}]\n');
      expect(utf8(await raw.store.get(k('staging/data.csv')))).toBe('a;b\n');
      expect(await store.digest(k('staging/data.csv'))).toMatchObject({ bytes: 4 });
      // Keys outside the area pass through.
      await store.put(`${raw.key.replace(/[^/]+\/$/, '')}elsewhere.txt`, 'x');
      expect(utf8(await raw.store.get(`${raw.key.replace(/[^/]+\/$/, '')}elsewhere.txt`))).toBe('x');
    },
  );

  it('filesystem: a staged file as it was sealed gives its seal without being hashed again; one written over is hashed', async () => {
    const raw = await areas[0]![1]();
    let hashed = 0;
    // The raw store, its digests counted.
    const counting = new Proxy(raw.store, {
      get(target, name) {
        if (name === 'digest')
          return (key: string) => {
            hashed++;
            return target.digest(key);
          };
        const value = Reflect.get(target, name, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const store = new SealedStore(counting, raw.key);
    const key = `${raw.key}staging/data.csv`;
    const body = 'a;b\n1;2\n';
    const sealed = { bytes: 8, sha256: createHash('sha256').update(body).digest('hex') };
    await store.put(key, body);
    expect(await store.digest(key)).toEqual(sealed);
    expect(hashed).toBe(0);
    // Written over with the same bytes: another file, hashed, and its bytes are the sealed ones.
    await raw.store.put(key, body);
    expect(await store.digest(key)).toEqual(sealed);
    expect(hashed).toBe(1);
    // Written over with other bytes of the same size: hashed, and refused.
    await raw.store.put(key, 'a;b\n1;3\n');
    const e = await store.digest(key).catch((x: unknown) => x);
    expect(codeOf(e)).toBe('E_WORK_CORRUPT');
    expect(hashed).toBe(2);
  });

  it('filesystem: a hard link to a staged file, both as sealed, gives the seal; a copy or a file written over does not', async () => {
    const raw = await areas[0]![1]();
    const store = new SealedStore(raw.store, raw.key);
    const staged = `${raw.key}staging/data.csv`;
    const body = 'a;b\n1;2\n';
    await store.put(staged, body);
    const linked = `${raw.key}release/data.csv`;
    await raw.store.copy(staged, linked); // a link: the store's copy within one file system
    const version = async (key: string) => (await raw.store.stat(key))?.version;
    const sealed = { bytes: 8, sha256: createHash('sha256').update(body).digest('hex') };
    expect(await store.sealedAt(staged, await version(linked))).toEqual(sealed);
    expect(await store.sealedAt(staged, undefined)).toBeUndefined();
    // A copy is another file; so is the link written over (same bytes): both are read back.
    const copied = `${raw.key}release/copy.csv`;
    await raw.store.put(copied, body);
    expect(await store.sealedAt(staged, await version(copied))).toBeUndefined();
    await raw.store.put(linked, body);
    expect(await store.sealedAt(staged, await version(linked))).toBeUndefined();
    // Only byte-exact files have seals that name a version.
    await store.put(`${raw.key}search.json`, '{}');
    expect(
      await store.sealedAt(`${raw.key}search.json`, await version(`${raw.key}search.json`)),
    ).toBeUndefined();
  });

  it('filesystem: a local release publishes its linked files by their seals, reading none of them back', async () => {
    const ws = adultWorkspace(600);
    const out = join(ws.dir, 'out');
    const read: string[] = [];
    const digest = vi.spyOn(FsStore.prototype, 'digest').mockImplementation(async function (
      this: FsStore,
      key: string,
    ) {
      read.push(key);
      return readBack.call(this, key);
    });
    try {
      await executeRelease({ spec: ws.spec, out, shards: 2 });
    } finally {
      digest.mockRestore();
    }
    expect(readdirSync(out)).toContain('manifest.json');
    expect(read.filter((k) => `/${k}`.startsWith(`${out}/`))).toEqual([]);
  });

  it.each(areas)('%s: a changed, cut or unsealed work file is refused on every read', async (_, open) => {
    const raw = await open();
    const { store } = sealWork(raw);
    const k = (n: string) => `${raw.key}${n}`;
    const refused = async (read: Promise<unknown>, why: RegExp) => {
      const e = await read.catch((x: unknown) => x);
      expect(e).toBeInstanceOf(StoreError);
      expect(codeOf(e)).toBe('E_WORK_CORRUPT');
      expect((e as Error).message).toMatch(why);
    };
    // (Long enough that the bytes swapped lie before the trailer.)
    await store.put(k('search.json'), '{"node":{"age":1,"sex":0}}\n');
    await swapBytes(raw.store, k('search.json'));
    await refused(store.get(k('search.json')), /search\.json: .*CRC-32 or length differs/);
    // A byte of the body gone, the trailer kept.
    await store.put(k('counts/1.bin'), Uint8Array.of(1, 2, 3, 4, 5, 6));
    const sealed = Buffer.from(await raw.store.get(k('counts/1.bin')));
    await raw.store.put(k('counts/1.bin'), Buffer.concat([sealed.subarray(0, 2), sealed.subarray(3)]));
    await refused(store.get(k('counts/1.bin')), /counts\/1\.bin: .*CRC-32 or length differs/);
    await store.put(k('staging/data.csv'), 'a;b\n1;2\n');
    await swapBytes(raw.store, k('staging/data.csv'));
    await refused(store.get(k('staging/data.csv')), /staging\/data\.csv: .*SHA-256 differs/);
    await refused(store.digest(k('staging/data.csv')), /SHA-256 differs/);
    await truncate(raw.store, k('staging/data.csv'));
    await refused(store.get(k('staging/data.csv')), /4 bytes, sealed with 8/);
    await raw.store.put(k('bundle/release.json'), '{}');
    await refused(store.get(k('bundle/release.json')), /has no seal/);
    await raw.store.put(k('timings/plan.json'), '{"ms":1}');
    await refused(store.get(k('timings/plan.json')), /seal is missing/);
    await expect(store.getRange(k('search.json'), 0, 2)).rejects.toThrow(/read whole/);
  });
});
