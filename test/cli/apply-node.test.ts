/**
 * `ppdp apply --node` prints the caution lines of an amber verdict, as `release` and
 * `apply <release>` do (the installed bin; needs `npm run build`).
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cautionLines } from '../../src/report/audit.ts';
import { tinyWorkspace } from '../helpers/tiny.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

describe('ppdp apply --node', () => {
  const ws = tinyWorkspace();

  it('prints the caution lines of the report it published', () => {
    const r = spawnSync(
      process.execPath,
      [CLI, 'apply', '--node', 'sex=0', 'spec.json', '--out', 'c', '--quiet'],
      {
        encoding: 'utf8',
        cwd: ws.dir,
      },
    );
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(ws.dir, 'c', 'report.json'), 'utf8'));
    expect(report.verdict.level).toBe('caution'); // zip and age released unchanged
    const lines = cautionLines(report);
    expect(lines).toMatch(/^ {2}caution: /);
    expect(r.stdout).toBe(`${r.stdout.split('\n')[0]}\n${lines}`);
    expect(r.stdout).toMatch(/^verified release in c \(node sex=0\): /);
  });

  it('a level the hierarchy lacks is named as --node gave it, not as a saved release', () => {
    const r = spawnSync(process.execPath, [CLI, 'apply', '--node', 'sex=5', 'spec.json', '--out', 'd'], {
      encoding: 'utf8',
      cwd: ws.dir,
    });
    expect(r.status).not.toBe(0);
    expect(r.stderr).toMatch(
      /--node sex=5: the hierarchy of sex has levels 0–1\n {2}hint: give sex a level from 0/,
    );
    expect(r.stderr).not.toMatch(/saved/);
  });
});
