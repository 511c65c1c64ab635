/** explore, evaluate and apply as the installed bin runs them (needs `npm run build`). */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const ppdp = (...args: string[]) => spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8' });

describe('ppdp explore, evaluate and apply (bundled CLI)', () => {
  const ws = adultWorkspace();
  const release = join(ws.dir, 'release');

  it('explore writes the frontier of Adult for k = 2..50, reading the input once', () => {
    const out = join(ws.dir, 'frontier');
    const t = performance.now();
    // The sweep alone (the lattice and the page's own checks: test/explore).
    const r = ppdp('explore', ws.spec, '--vary', 'k=2..50', '--out', out, '--no-lattice');
    const ms = performance.now() - t;
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/frontier of k over 49 runs \(49 with a solution\)/);
    expect(r.stderr.match(/reading the input/g)).toHaveLength(1);
    expect(r.stderr).toMatch(/k = 50: \d+ classes/);
    const frontier = JSON.parse(readFileSync(join(out, 'frontier.json'), 'utf8'));
    expect(frontier.points).toHaveLength(49);
    expect(frontier.points[3]).toMatchObject({
      value: 5,
      feasible: true,
      kAchieved: 5,
      maxProsecutorRisk: 0.2,
    });
    expect(Object.keys(frontier.points[0].node)).toHaveLength(8);
    expect(readFileSync(join(out, 'frontier.csv'), 'utf8').trim().split('\n')).toHaveLength(50);
    expect(readFileSync(join(out, 'explore.html'), 'utf8')).toMatch(/<svg /);
    expect(ms).toBeLessThan(60_000); // about 2 s on an idle machine
  });

  it('apply reproduces a release byte for byte, and evaluate agrees with its report', () => {
    expect(ppdp('release', ws.spec, '--out', release, '--quiet').status).toBe(0);
    const again = join(ws.dir, 'again');
    const r = ppdp('apply', release, ws.spec, '--out', again);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(
      /^verified release in .* \(the generalization transformation of .* re-applied\): k = 5/,
    );
    for (const f of ['data.arrow', 'data.csv']) {
      expect(readFileSync(join(again, f)).equals(readFileSync(join(release, f))), f).toBe(true);
    }
    expect(existsSync(join(again, 'manifest.json'))).toBe(true);

    const json = join(ws.dir, 'evaluate.json');
    const e = ppdp('evaluate', release, '--spec', ws.spec, '--out', json);
    expect(e.status, e.stderr).toBe(0);
    expect(e.stdout).toMatch(/k achieved\s+5/);
    expect(e.stdout).toMatch(/prosecutor risk\s+max 0\.2/);
    const report = JSON.parse(readFileSync(join(release, 'report.json'), 'utf8'));
    const evaluation = JSON.parse(readFileSync(json, 'utf8'));
    expect(evaluation.classes).toBe(report.privacy.classes);
    expect(evaluation.utility.ncp).toBeCloseTo(report.utility.ncp, 9);
  });

  it('evaluate writes only where --out says: a summary by default, JSON to stdout with --out -', () => {
    const cwd = join(ws.dir, 'evaluate-cwd');
    mkdirSync(cwd, { recursive: true });
    const run = (...args: string[]) =>
      spawnSync(process.execPath, [CLI, 'evaluate', release, '--spec', ws.spec, ...args], {
        encoding: 'utf8',
        cwd,
      });
    const summary = run();
    expect(summary.status, summary.stderr).toBe(0);
    expect(summary.stdout).toMatch(/k achieved\s+5/);
    expect(summary.stdout).toMatch(/not written: add --out <file> for the measures as JSON/);
    expect(readdirSync(cwd)).toEqual([]);
    const json = run('--out', '-');
    expect(json.status, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout).kAchieved).toBe(5);
    expect(readdirSync(cwd)).toEqual([]);
  });

  it('evaluate reads a release in parts as one table', async () => {
    const parts = join(ws.dir, 'in-parts');
    await executeRelease({ spec: ws.spec, out: parts, rowsPerPart: 8000 });
    const json = join(ws.dir, 'evaluate-parts.json');
    const e = ppdp('evaluate', parts, '--spec', ws.spec, '--out', json);
    expect(e.status, e.stderr).toBe(0);
    const report = JSON.parse(readFileSync(join(parts, 'report.json'), 'utf8'));
    const evaluation = JSON.parse(readFileSync(json, 'utf8'));
    expect(evaluation.source).toBe('in-parts (4 parts)');
    expect(evaluation.rows).toBe(report.rows.released);
    expect(evaluation.classes).toBe(report.privacy.classes);
    expect(evaluation.kAchieved).toBe(5);
  });

  it('errors are clear and leave nothing behind', () => {
    const noVary = ppdp('explore', ws.spec);
    expect(noVary.status).toBe(1);
    expect(noVary.stderr).toMatch(/ppdp explore needs --vary\n {2}hint: e\.g\. --vary k=2\.\.50/);
    const into = ppdp('apply', release, ws.spec, '--out', join(release, 'inner'));
    expect(into.status).toBe(1);
    expect(into.stderr).toMatch(/is or lies inside the release being applied/);
    const roles = ppdp('evaluate', release);
    expect(roles.status).toBe(1);
    expect(roles.stderr).toMatch(/needs the column roles/);
    for (const command of ['explore', 'evaluate', 'apply']) {
      const help = ppdp(command, '--help');
      expect(help.status).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: ppdp ${command} `));
    }
    expect(ppdp('--help').stdout).toMatch(/ppdp explore .*\n.*\n {2}ppdp evaluate .*\n.*\n {2}ppdp apply /);
  });
});
