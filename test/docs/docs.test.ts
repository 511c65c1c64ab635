import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseSpec } from '../../src/spec/spec.ts';
import { ADULT_DIR } from '../helpers/adult.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const blocks = (file: string, lang: string) =>
  [
    ...readFileSync(join(ROOT, file), 'utf8').matchAll(new RegExp(`\`\`\`${lang}\\n([\\s\\S]*?)\`\`\``, 'g')),
  ].map((m) => m[1]!);

describe('docs run', () => {
  it('every JSON spec in docs/release-spec.md is valid and equals the bundled example', () => {
    const specs = blocks('docs/release-spec.md', 'json');
    expect(specs.length).toBeGreaterThan(0);
    for (const text of specs) parseSpec(JSON.parse(text), join(ADULT_DIR, 'release.json'));
    expect(JSON.parse(specs[0]!)).toEqual(JSON.parse(readFileSync(join(ADULT_DIR, 'release.json'), 'utf8')));
  });

  it("the README's quick start releases Adult and the test command is what CI runs", () => {
    const [quickStart] = blocks('README.md', 'sh');
    const [install, test] = quickStart!.trim().split('\n');
    expect(install).toBe('npm install && npx ppdp release examples/adult/release.json --out out/adult');
    expect(test).toBe('npm test');
    expect(readFileSync(join(ROOT, '.ci/run'), 'utf8')).toMatch(/^npm test$/m);
    // The release half of the first command, run as the installed bin runs it.
    const out = mkdtempSync(join(tmpdir(), 'ppdp-readme-'));
    try {
      const r = spawnSync(
        process.execPath,
        [join(ROOT, 'bin/ppdp.mjs'), 'release', 'examples/adult/release.json', '--out', join(out, 'adult')],
        { cwd: ROOT, encoding: 'utf8' },
      );
      expect(r.stderr).toMatch(/verifying the release independently/);
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^verified release in .*: k = \d+/);
      expect(existsSync(join(out, 'adult', 'manifest.json'))).toBe(true);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  });
});
