/**
 * A location with a scheme ppdp does not know, or a malformed s3: or file: URL, is refused with
 * the form expected, never taken as a local folder: `--store s3:/bad` (one slash) published
 * to a folder named `s3:`.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkStoreUrl, storeResolver } from '../../src/pipeline/storage/index.ts';
import { tinyWorkspace } from '../helpers/tiny.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

function refusal(url: string, named?: string) {
  try {
    checkStoreUrl(url, named);
    return undefined;
  } catch (e) {
    const { code, message, hint } = e as { code: string; message: string; hint: string };
    return { code, message, hint };
  }
}

describe('store URLs', () => {
  it('refuses a malformed s3: or file: URL with its form, and an unknown scheme', () => {
    for (const url of ['s3:/bad', 's3:bad', 'S3://bucket/x', 's3:\\\\bucket']) {
      expect(refusal(url, `--store ${url}`)).toEqual({
        code: 'E_STORE_URL',
        message: `--store ${url}: a malformed s3 URL`,
        hint: 'the form is s3://bucket/prefix (lower case, two slashes after s3:)',
      });
    }
    expect(refusal('file:/tmp/x')?.hint).toMatch(/^the form is file:\/\/\/absolute\/path/);
    expect(refusal('gs://b/x')?.message).toBe('gs://b/x: unsupported store (gs:)');
    expect(refusal('http:x')?.message).toBe('http:x: unsupported store (http:)');
  });

  it('allows s3://, file:// and local paths, a drive letter and ./name: among them', () => {
    for (const url of ['s3://bucket/x', 'file:///tmp/x', 'out/adult', '/tmp/a:b', './s3:', 'C:\\out']) {
      expect(refusal(url), url).toBeUndefined();
    }
  });

  it('opening one refuses it too (a request, the library)', async () => {
    const stores = storeResolver();
    await expect(stores.open('s3:/bad/releases/')).rejects.toMatchObject({ code: 'E_STORE_URL' });
    stores.close();
  });

  it('release --store s3:/bad and --out s3:/bad: refused, no folder s3: made (bundled CLI)', () => {
    const ws = tinyWorkspace();
    for (const option of ['--store', '--out']) {
      const r = spawnSync(process.execPath, [CLI, 'release', 'spec.json', option, 's3:/bad', '--quiet'], {
        encoding: 'utf8',
        cwd: ws.dir,
      });
      expect(r.status).toBe(1);
      expect(r.stderr).toMatch(
        new RegExp(
          `^ppdp: error: ${option} s3:/bad: a malformed s3 URL\\n {2}hint: the form is s3://bucket/prefix`,
        ),
      );
    }
    expect(existsSync(join(ws.dir, 's3:'))).toBe(false);
  });

  it('refuses a bucket name S3 would refuse, saying why, before the input is read (bundled CLI)', () => {
    for (const url of ['s3://b/p', 's3://My_Bucket/x', 's3://']) {
      expect(refusal(url, `--store ${url}`)?.message, url).toMatch(
        /^--store s3:\/\/\S*: ('.*' is not a valid S3 bucket name|no bucket name) \(3–63 characters: lower-case letters, digits, dots and hyphens/,
      );
    }
    const ws = tinyWorkspace();
    // The input's absence would be named if the input were read first.
    const r = spawnSync(
      process.execPath,
      [
        CLI,
        'release',
        'missing-spec.json',
        '--store',
        's3://b/p',
        '--endpoint',
        'http://127.0.0.1:9',
        '--quiet',
      ],
      { encoding: 'utf8', cwd: ws.dir },
    );
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/^ppdp: error: --store s3:\/\/b\/p: 'b' is not a valid S3 bucket name/);
  });
});
