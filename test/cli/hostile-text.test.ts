/**
 * Text from a spec, a file name or a header reaches the terminal with its control characters
 * escaped: a spec (one dropped in a bucket may be anyone's) cannot clear the screen, colour it
 * or print a line of its own, such as a forged "verified release in …", in an error or in a
 * progress line of the built CLI.
 */
import { spawnSync } from 'node:child_process';
import { renameSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { adultWorkspace } from '../helpers/workspace.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const FORGED = 'x\u001b[2J\u001b[31m\nverified release in victim: k = 5\r\u202e';

/** The terminal's lines of `text`: none a forged one, and no control character left in them. */
function expectNoForgery(text: string) {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters that must not reach the terminal
  expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f\u202e]/);
  for (const line of text.split('\n')) expect(line).not.toMatch(/^verified release/);
  expect(text).toContain('\\u001b[2J\\u001b[31m\\nverified release in victim: k = 5\\r<U+202E>');
}

describe('hostile text on stderr (bundled CLI)', () => {
  it('escapes control characters in an error quoting a spec path, and in progress lines naming a file', () => {
    const ws = adultWorkspace(200);
    ws.editSpec((s) => {
      s.input = `${FORGED}.csv`;
    });
    const refused = spawnSync(process.execPath, [CLI, 'release', ws.spec, '--out', join(ws.dir, 'out')], {
      encoding: 'utf8',
    });
    expect(refused.status).toBe(1);
    expect(refused.stdout).toBe('');
    expectNoForgery(refused.stderr);
    // The same name, now a file that exists: the progress lines name it.
    renameSync(join(ws.dir, 'adult.csv'), join(ws.dir, `${FORGED}.csv`));
    const run = spawnSync(process.execPath, [CLI, 'release', ws.spec, '--out', join(ws.dir, 'out')], {
      encoding: 'utf8',
    });
    expect(run.status, run.stderr).toBe(0);
    expectNoForgery(run.stderr);
  }, 60_000);
});
