/**
 * The run id covers the spec, its input and the files it names (hierarchy files, population
 * tables): Start computes it from the store, Plan from the files it reads, and the two agree,
 * before and after a hierarchy file changes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runIdOf } from '../../src/pipeline/release.ts';
import { runIdAt } from '../../src/pipeline/start.ts';
import { FsStore } from '../../src/pipeline/storage/fs.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-run-id-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('the run id', () => {
  it('changes with a hierarchy file the spec names, alike in Start and Plan', async () => {
    writeFileSync(join(dir, 'd.csv'), 'age,dx\n21,flu\n35,cold\n');
    writeFileSync(join(dir, 'age.csv'), '21;20-39;*\n35;20-39;*\n');
    const spec = {
      input: 'd.csv',
      attributes: { age: { type: 'quasi-identifying', hierarchy: 'age.csv' }, dx: { type: 'sensitive' } },
      privacy: [{ model: 'k-anonymity', k: 2 }],
      method: { name: 'generalization' },
    };
    writeFileSync(join(dir, 'release.json'), JSON.stringify(spec));
    const path = join(dir, 'release.json');
    const start = () => runIdAt({ store: new FsStore(), key: path.slice(1) });
    const before = runIdOf(loadSpec(path));
    expect(await start()).toBe(before);
    writeFileSync(join(dir, 'age.csv'), '21;twenties;*\n35;thirties;*\n');
    const after = runIdOf(loadSpec(path));
    expect(after).not.toBe(before);
    expect(await start()).toBe(after);
  });
});
