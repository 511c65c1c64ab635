/**
 * A file that is there but cannot be read (mode 000) is said to be so, naming the file, the
 * permission and the fix: never "not found", "not JSON", an internal error, or a silent
 * fallback. Run as a user that mode 000 locks out (test/helpers/locked-out.ts).
 */
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { lockedOut } from '../helpers/locked-out.ts';
import { TINY_SPEC, tinyWorkspace } from '../helpers/tiny.ts';
import { runCli } from '../trust/helpers.ts';

const ws = tinyWorkspace();
const at = (name: string) => join(ws.dir, name);
const released = at('rel');
const LOCKED =
  /exists but cannot be read: permission denied \(.*EACCES\)\n {2}hint: give the user running ppdp read access/;

beforeAll(async () => {
  writeFileSync(at('sex.csv'), 'F;*\nM;*\n');
  const sex = { ...TINY_SPEC.attributes.sex, hierarchy: 'sex.csv' };
  writeFileSync(
    at('hier.json'),
    JSON.stringify({ ...TINY_SPEC, attributes: { ...TINY_SPEC.attributes, sex } }),
  );
  writeFileSync(at('locked.json'), JSON.stringify(TINY_SPEC));
  expect((await runCli(['release', ws.spec, '--out', released, '--quiet'])).status).toBe(0);
});

/** The command run with `files` locked (mode 000) for it. */
async function withLocked(files: string[], argv: string[]) {
  return lockedOut(ws.dir, async () => {
    for (const f of files) chmodSync(at(f), 0o000);
    try {
      const r = await runCli(argv);
      return { status: r.status, said: r.stdout + r.stderr };
    } finally {
      for (const f of files) chmodSync(at(f), 0o644);
    }
  });
}

describe('a file that cannot be read', () => {
  it("release: the spec's hierarchy file is named as unreadable, nothing is written", async () => {
    const r = await withLocked(['sex.csv'], ['release', at('hier.json'), '--out', at('o-hier')]);
    expect(r.status).toBe(1);
    expect(r.said).toContain('sex.csv: hierarchy file exists but cannot be read: permission denied');
    expect(r.said).toMatch(LOCKED);
    expect(r.said).not.toContain('internal error');
    expect(existsSync(at('o-hier'))).toBe(false);
  });

  it.each([
    ['release', ['release', at('locked.json'), '--out', at('o-spec')]],
    ['evaluate --spec', ['evaluate', ws.csv, '--spec', at('locked.json')]],
    ['explore', ['explore', at('locked.json'), '--vary', 'k=2..3', '--out', at('o-explore')]],
  ])('%s: a locked spec is there but unreadable, not "not found"', async (_, argv) => {
    const r = await withLocked(['locked.json'], argv);
    expect(r.status).toBe(1);
    expect(r.said).toContain('locked.json: release spec exists but cannot be read: permission denied');
    expect(r.said).toMatch(LOCKED);
    expect(r.said).not.toContain('not found');
  });

  it('evaluate: a release whose report.json cannot be read is refused, not measured over rows', async () => {
    const r = await withLocked(['rel/report.json'], ['evaluate', released, '--spec', ws.spec]);
    expect(r.status).toBe(1);
    expect(r.said).toContain("report.json: release's report exists but cannot be read: permission denied");
    expect(r.said).toMatch(LOCKED);
    expect(r.said).not.toContain('k achieved');
  });

  it('apply: a report.json that cannot be read is not called "not JSON"', async () => {
    const r = await withLocked(['rel/report.json'], ['apply', released, ws.spec, '--out', at('o-apply')]);
    expect(r.status).toBe(1);
    expect(r.said).toContain('report.json: release file exists but cannot be read: permission denied');
    expect(r.said).toMatch(LOCKED);
    expect(r.said).not.toContain('not JSON');
  });
});
