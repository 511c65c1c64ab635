/**
 * A $TMPDIR ppdp cannot make its working folder in (missing, a file, not writable) is said to
 * be so, naming the folder and the fix: not an internal error (exit 70), and nothing written.
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { lockedOutChild } from '../helpers/locked-out.ts';
import { tinyWorkspace } from '../helpers/tiny.ts';
import { runCli, withEnv } from '../trust/helpers.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const ws = tinyWorkspace();
const at = (name: string) => join(ws.dir, name);

/** `ppdp release` of the tiny spec into `out` with TMPDIR at `tmp`. */
async function release(tmp: string, out: string) {
  const r = await withEnv({ TMPDIR: tmp }, () => runCli(['release', ws.spec, '--out', at(out)]));
  return { status: r.status, said: r.stdout + r.stderr };
}

function expectRefused(r: { status: number; said: string }, tmp: string, why: RegExp, out: string) {
  expect(r.status).toBe(1);
  expect(r.said).not.toContain('internal error');
  expect(r.said).toContain(`ppdp: error: cannot make a working folder in the temporary folder ${tmp}: `);
  expect(r.said).toMatch(why);
  expect(r.said).toContain('hint: set TMPDIR to an existing folder this user can write in');
  expect(existsSync(at(out))).toBe(false);
}

describe('a temporary folder that cannot be used', () => {
  it('a missing one is named, with the fix', async () => {
    const tmp = at('no-such-folder');
    expectRefused(await release(tmp, 'o-missing'), tmp, /it does not exist \(ENOENT\)/, 'o-missing');
  });

  it('a file in its place is named as not a folder', async () => {
    const tmp = at('a-file');
    writeFileSync(tmp, '');
    expectRefused(await release(tmp, 'o-file'), tmp, /it is not a folder \(ENOTDIR\)/, 'o-file');
  });

  it('one this user may not write in is named as such (the command run as its own process)', async () => {
    const tmp = at('read-only');
    mkdirSync(tmp);
    const ids = lockedOutChild(ws.dir);
    chmodSync(tmp, 0o555);
    const child = spawnSync(process.execPath, [CLI, 'release', ws.spec, '--out', at('o-locked')], {
      env: { ...process.env, TMPDIR: tmp },
      encoding: 'utf8',
      ...ids,
    });
    chmodSync(tmp, 0o755);
    expectRefused(
      { status: child.status ?? -1, said: child.stdout + child.stderr },
      tmp,
      /permission denied \(EACCES\)/,
      'o-locked',
    );
  });
});
