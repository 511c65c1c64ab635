/**
 * Publishing reads every published file back and compares it with what Verify verified (size
 * and SHA-256) before it writes the manifest; the message says which link broke.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { VerificationError } from '../../src/errors.ts';
import {
  claimFolder,
  MANIFEST,
  type ManifestEntry,
  type PublishSource,
  publishInto,
  storeFolder,
} from '../../src/pipeline/publish.ts';
import { FsStore } from '../../src/pipeline/storage/fs.ts';

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const entry = (name: string, body: string): ManifestEntry => ({
  name,
  bytes: Buffer.byteLength(body),
  sha256: createHash('sha256').update(body).digest('hex'),
});

/** Publishes `verified` into a fresh folder from a source that holds `source` and copies `copied`. */
async function publish(verified: string, source: string, copied: string) {
  dir = mkdtempSync(join(tmpdir(), 'ppdp-publish-'));
  const out = join(dir, 'release');
  const folder = storeFolder({ store: new FsStore(), key: `${out.slice(1)}/` });
  const claim = await claimFolder(folder);
  const from: PublishSource = {
    copyIn: async (f) => writeFileSync(join(out, f.name), copied),
    digest: async () => ({
      bytes: Buffer.byteLength(source),
      sha256: createHash('sha256').update(source).digest('hex'),
    }),
  };
  const run = publishInto(folder, [entry('data.csv', verified)], 'run', claim, from, () => {});
  return { run, out };
}

describe('publishing compares each published file with the verified one', () => {
  it('publishes when the bytes are the verified ones', async () => {
    const { run, out } = await publish('a;b\n1;2\n', 'a;b\n1;2\n', 'a;b\n1;2\n');
    await run;
    expect(JSON.parse(readFileSync(join(out, MANIFEST), 'utf8')).files).toEqual([
      entry('data.csv', 'a;b\n1;2\n'),
    ]);
  });

  it('refuses a copy that differs from the verified file (same size), writing no manifest', async () => {
    const { run, out } = await publish('a;b\n1;2\n', 'a;b\n1;2\n', 'a;b\n2;1\n');
    const e = await run.catch((x: unknown) => x);
    expect(e).toBeInstanceOf(VerificationError);
    expect(e).toMatchObject({ code: 'E_PUBLISH_MISMATCH' });
    expect((e as Error).message).toMatch(
      /release\/data\.csv: published 8 bytes, SHA-256 [0-9a-f]{16}…, but Verify verified 8 bytes.*\(the copy differs from the verified file\); nothing was published/,
    );
    expect(existsSync(join(out, MANIFEST))).toBe(false);
  });

  it('says so when the verified file itself changed after Verify', async () => {
    const { run, out } = await publish('a;b\n1;2\n', 'a;b\n2;1\n', 'a;b\n2;1\n');
    await expect(run).rejects.toThrow(/the verified file was changed after Verify/);
    expect(existsSync(join(out, MANIFEST))).toBe(false);
  });
});

describe("a secret sample's release of the same run (keep: 'sample')", () => {
  /** Publishes `first` as run 'run', then `second` (another sample) into the same folder. */
  async function twice(first: string, second: string, damage?: string) {
    dir = mkdtempSync(join(tmpdir(), 'ppdp-sample-'));
    const out = join(dir, 'release');
    const folder = storeFolder({ store: new FsStore(), key: `${out.slice(1)}/` });
    const into = async (body: string) => {
      const from: PublishSource = {
        copyIn: async (f) => writeFileSync(join(out, f.name), body),
        digest: async () => entry('data.csv', body),
      };
      return publishInto(
        folder,
        [entry('data.csv', body)],
        'run',
        await claimFolder(folder),
        from,
        () => {},
        'sample',
      );
    };
    await into(first);
    if (damage !== undefined) writeFileSync(join(out, 'data.csv'), damage);
    const manifest = await into(second);
    return { manifest, data: readFileSync(join(out, 'data.csv'), 'utf8') };
  }

  it('keeps the sample published, intact, whatever the new one holds', async () => {
    const { manifest, data } = await twice('a\n1\n', 'a\n2\n');
    expect(data).toBe('a\n1\n');
    expect(manifest.files).toEqual([entry('data.csv', 'a\n1\n')]);
  });

  it('replaces one whose file no longer has its SHA-256 (same size): no intact release to keep', async () => {
    const { manifest, data } = await twice('a\n1\n', 'a\n2\n', 'a\n3\n');
    expect(data).toBe('a\n2\n');
    expect(manifest.files).toEqual([entry('data.csv', 'a\n2\n')]);
  });
});

describe('the file store digests what it reads back', () => {
  it('gives the size and SHA-256 of small and large files, many at once (large ones in hashing threads)', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ppdp-digest-'));
    const store = new FsStore();
    // Over the size from which the main thread hands a file to a hashing thread, and under it.
    const bodies = [
      0,
      1,
      5_000,
      16 * 1024 * 1024,
      17 * 1024 * 1024 + 3,
      20 * 1024 * 1024,
      18 * 1024 * 1024,
    ].map((n, i) => Buffer.alloc(n, i + 1));
    const keys = bodies.map((body, i) => {
      const path = join(dir, `f${i}`);
      writeFileSync(path, body);
      return path.slice(1);
    });
    const got = await Promise.all(keys.map((k) => store.digest(k)));
    expect(got).toEqual(
      bodies.map((b) => ({ bytes: b.length, sha256: createHash('sha256').update(b).digest('hex') })),
    );
    await expect(store.digest(join(dir, 'missing').slice(1))).rejects.toMatchObject({
      code: 'E_STORE_MISSING',
    });
  });
});
