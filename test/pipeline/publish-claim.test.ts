/**
 * Claiming a release folder while another run finishes publishing there. A folder listing is
 * no snapshot: it can be taken while the other run still holds its lock and has not yet written
 * its manifest, and each file checked after the run wrote the manifest and removed the lock, so
 * the listing holds neither. The claim must still see a ppdp folder, not foreign files.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.ts';
import { claimFolder, type Folder, LOCK, MANIFEST, storeFolder, unlock } from '../../src/pipeline/publish.ts';
import { FsStore } from '../../src/pipeline/storage/fs.ts';

const RELEASED = ['data.arrow', 'data.csv', 'report.html', 'report.json'];
const manifestText = `${JSON.stringify({ format: 'ppdp-release/1', runId: 'r', verified: true, files: [] })}\n`;

let dir = '';
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

function folderWith(files: Record<string, string>): Folder {
  dir = mkdtempSync(join(tmpdir(), 'ppdp-claim-'));
  for (const [name, body] of Object.entries(files)) writeFileSync(join(dir, name), body);
  return storeFolder({ store: new FsStore(), key: `${dir.slice(1)}/` });
}

/** The folder as seen through a listing taken mid-publish: the released files, no lock, no manifest. */
function tornListing(folder: Folder): Folder {
  return { ...folder, list: async () => [...RELEASED] };
}

describe('claiming a folder another run is finishing', () => {
  it('sees the manifest the other run wrote after the listing, and takes the lock', async () => {
    const folder = folderWith({
      ...Object.fromEntries(RELEASED.map((n) => [n, 'x'])),
      [MANIFEST]: manifestText,
    });
    const claim = await claimFolder(tornListing(folder));
    expect(claim.token).toMatch(/^[0-9a-f]{16}$/);
    await unlock(folder, claim, () => {});
  });

  it('sees the lock of a run still publishing, and is refused as locked (not as foreign files)', async () => {
    const lock = {
      format: 'ppdp-lock/1',
      token: 'ab'.repeat(8),
      pid: process.pid,
      host: 'elsewhere',
      process: 'p',
      started: 'now',
    };
    const folder = folderWith({
      ...Object.fromEntries(RELEASED.map((n) => [n, 'x'])),
      [LOCK]: JSON.stringify(lock),
    });
    const error = await claimFolder(tornListing(folder)).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OutputError);
    expect((error as OutputError).code).toBe('E_OUT_LOCKED');
  });

  it('still refuses a folder of foreign files (neither a manifest nor a lock, read directly)', async () => {
    const folder = folderWith(Object.fromEntries(RELEASED.map((n) => [n, 'x'])));
    const error = await claimFolder(folder).catch((e: unknown) => e);
    expect((error as OutputError).code).toBe('E_OUT_NOT_RELEASE');
    expect((error as OutputError).message).toMatch(/holds 4 files and no ppdp release/);
  });
});

describe('removing files from a local release folder', () => {
  it('drops a subfolder the release emptied, and never the folder itself or its parents', async () => {
    dir = mkdtempSync(join(tmpdir(), 'ppdp-remove-'));
    // The user's own empty parents above the release folder.
    const release = join(dir, 'mine', 'empty', 'release');
    mkdirSync(join(release, 'data'), { recursive: true });
    writeFileSync(join(release, 'data', 'part-00000.csv'), 'x');
    writeFileSync(join(release, LOCK), 'x');
    const folder = storeFolder({ store: new FsStore(), key: `${release.slice(1)}/` });
    await folder.remove(['data/part-00000.csv']);
    expect(existsSync(join(release, 'data'))).toBe(false);
    await folder.remove([LOCK]);
    expect(existsSync(release)).toBe(true);
    expect(existsSync(join(dir, 'mine', 'empty'))).toBe(true);
  });
});
