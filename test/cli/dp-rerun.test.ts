/**
 * A differential-privacy release run again into the same --out (the installed bin; needs `npm
 * run build`): each run draws its secret sample afresh, so the folder keeps the sample it
 * published, byte for byte, and says so; publishing the new one would release the same people
 * again.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-dp-rerun-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** 3,000 rows: three age classes of 1,000 at level 2, well over the sample's k. */
function workspace(): string {
  const rows = ['age,dx'];
  for (let i = 0; i < 3000; i++) rows.push(`${20 + ((i * 37) % 60)},${['flu', 'cold', 'hiv'][i % 3]}`);
  writeFileSync(join(dir, 'd.csv'), `${rows.join('\n')}\n`);
  const spec = {
    input: 'd.csv',
    attributes: {
      age: { type: 'quasi-identifying', hierarchy: { intervals: [10, 20, 40] } },
      dx: { type: 'sensitive' },
    },
    privacy: [{ model: 'differential-privacy', epsilon: 1, delta: 1e-5, levels: { age: 2 } }],
    method: { name: 'generalization', maxSuppression: 1, suppressed: 'remove' },
    seed: 1,
  };
  writeFileSync(join(dir, 'spec.json'), JSON.stringify(spec));
  return join(dir, 'spec.json');
}

const release = (spec: string, out: string) => {
  const r = spawnSync(process.execPath, [CLI, 'release', spec, '--out', out], { encoding: 'utf8' });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr;
};

const files = (out: string) =>
  Object.fromEntries(readdirSync(out).map((f) => [f, readFileSync(join(out, f)).toString('base64')]));

describe('a differential-privacy release run again into the same --out', () => {
  it('keeps the sample it published, byte for byte, and says so', () => {
    const spec = workspace();
    const out = join(dir, 'out');
    release(spec, out);
    const before = files(out);
    const again = release(spec, out);
    expect(files(out)).toEqual(before);
    expect(again).toMatch(/already holds this run's release .*: left as it is \(its secret sample is kept/);
  });

  it('publishes a new release when a hierarchy file the spec names changed: it is another run', () => {
    const spec = workspace();
    const json = JSON.parse(readFileSync(spec, 'utf8'));
    const ages = [...new Set(Array.from({ length: 3000 }, (_, i) => 20 + ((i * 37) % 60)))];
    const hierarchy = (label: string) =>
      `${ages.map((a) => `${a};${a < 50 ? `${label}-49` : '50-79'};*`).join('\n')}\n`;
    writeFileSync(join(dir, 'age.csv'), hierarchy('20'));
    json.attributes.age.hierarchy = 'age.csv';
    json.privacy[0].levels = { age: 1 };
    writeFileSync(spec, JSON.stringify(json));
    const out = join(dir, 'out-hierarchy');
    release(spec, out);
    const runId = JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).runId;
    expect(readFileSync(join(out, 'data.csv'), 'utf8')).toContain('20-49');
    // The same spec bytes, another hierarchy: the folder gets the release of the new labels.
    writeFileSync(join(dir, 'age.csv'), hierarchy('twenty'));
    const again = release(spec, out);
    expect(again).not.toMatch(/already holds this run's release/);
    expect(JSON.parse(readFileSync(join(out, 'manifest.json'), 'utf8')).runId).not.toBe(runId);
    const data = readFileSync(join(out, 'data.csv'), 'utf8');
    expect(data).toContain('twenty-49');
    expect(data).not.toContain('20-49');
  });
});
