/**
 * The benchmarks' larger public table (bench/data/fertility) releases as its files say: it
 * unpacks to every row, its hierarchies cover every value, and the CLI releases it verified,
 * under its own spec and under differential privacy at the node the DP benchmark fixes.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { FERTILITY_DP_LEVELS, unpackFertility } from '../../bench/fertility.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-fertility-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const data = unpackFertility(join(dir, 'data'));

function release(spec: string, out: string): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(process.execPath, [CLI, 'release', spec, '--out', out], { encoding: 'utf8' });
}

describe('the Fertility table', () => {
  it('unpacks to its 254,654 rows under the header its spec names', () => {
    const lines = readFileSync(join(data, 'fertility.csv'), 'utf8').trimEnd().split('\n');
    expect(lines.length - 1).toBe(254_654);
    const spec = JSON.parse(readFileSync(join(data, 'release.json'), 'utf8'));
    expect(lines[0]!.split(';').sort()).toEqual(Object.keys(spec.attributes).sort());
    expect(Object.keys(FERTILITY_DP_LEVELS).sort()).toEqual(Object.keys(spec.attributes).sort());
  });

  it('releases verified under its own spec and under (ε, δ)-DP at the fixed node', () => {
    const own = release(join(data, 'release.json'), join(dir, 'own'));
    expect(own.status, own.stderr).toBe(0);
    expect(own.stdout).toMatch(/verified release/);
    const spec = JSON.parse(readFileSync(join(data, 'release.json'), 'utf8'));
    spec.privacy = [{ model: 'differential-privacy', epsilon: 1, delta: 1e-5, levels: FERTILITY_DP_LEVELS }];
    writeFileSync(join(data, 'dp.json'), JSON.stringify(spec));
    const dp = release(join(data, 'dp.json'), join(dir, 'dp'));
    expect(dp.status, dp.stderr).toBe(0);
    expect(dp.stdout).toMatch(/verified release/);
    const report = JSON.parse(readFileSync(join(dir, 'dp', 'report.json'), 'utf8'));
    expect(JSON.stringify(report)).toContain('"Generalization (fixed in advance)"');
  });
});
