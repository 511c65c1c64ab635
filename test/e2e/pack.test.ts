/**
 * The package as a user gets it: `npm pack`, install the tarball into an empty folder outside
 * the clone, then release the installed copy of the Adult example with the installed `ppdp`
 * and through the library API. Nothing of the clone (src/, node_modules, devDependencies) may
 * be needed there.
 *
 * The tarball is packed from the built tree with --ignore-scripts: `npm test` builds first, and
 * a second build here would rewrite dist/ while other test files run the bundled CLI. That a
 * real `npm pack` builds is checked on package.json (`prepare`, which npm runs before packing).
 * The install uses the npm cache first (--prefer-offline); only missing metadata goes to the
 * registry.
 */

import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const tmp = mkdtempSync(join(tmpdir(), 'ppdp-pack-'));
const app = join(tmp, 'app');

// npm passes its configuration to scripts as npm_* variables; the nested npm must not inherit them.
const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !/^npm_/i.test(key)));
const run = (command: string, args: string[], cwd: string) =>
  spawnSync(command, args, { cwd, env, encoding: 'utf8', timeout: 110_000 });

let files: string[] = [];

beforeAll(() => {
  const packed = run('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], ROOT);
  expect(packed.status, packed.stderr).toBe(0);
  const [info] = JSON.parse(packed.stdout) as [{ filename: string; files: { path: string }[] }];
  files = info.files.map((f) => f.path);
  mkdirSync(app);
  writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'app', private: true }));
  const installed = run(
    'npm',
    ['install', '--prefer-offline', '--no-audit', '--no-fund', join(tmp, info.filename)],
    app,
  );
  expect(installed.status, installed.stderr).toBe(0);
}, 120_000);

afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('npm pack → npm install <tarball> → ppdp release', () => {
  it('packs the built CLI, its types and the examples, and no sources', () => {
    expect(pkg.scripts.prepare).toBe('npm run build');
    for (const file of [
      'bin/ppdp.mjs',
      'dist/ppdp.cjs',
      'dist/types/api.d.ts',
      'examples/adult/release.json',
    ]) {
      expect(files).toContain(file);
    }
    expect(files.filter((f) => /^(src|test|assembly|infra|functions|bench)\//.test(f))).toEqual([]);
    // The bundle loads only these packages at run time (the WASM core is embedded in it).
    const bundle = readFileSync(join(ROOT, 'dist/ppdp.cjs'), 'utf8');
    const loaded = new Set([...bundle.matchAll(/require\("([^"]+)"\)/g)].map((m) => m[1]!));
    const external = [...loaded]
      .filter((name) => !name.startsWith('node:') && !builtinModules.includes(name))
      .sort();
    expect(external).toEqual(Object.keys(pkg.dependencies).sort());
  });

  it('releases the installed copy of examples/adult with the installed ppdp, verified', () => {
    const spec = join(app, 'node_modules/ppdp/examples/adult/release.json');
    const r = run('npx', ['--no-install', 'ppdp', 'release', spec, '--out', 'out'], app);
    expect(r.stderr).toMatch(/verifying the release independently/);
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^verified release in out: k = 5, /);
    expect(existsSync(join(app, 'out/manifest.json'))).toBe(true);
    const report = JSON.parse(readFileSync(join(app, 'out/report.json'), 'utf8'));
    expect(report.verification.verified).toBe(true);
  });

  it('exports release(spec, options), which resolves with the verified report', () => {
    const script = [
      "import { release } from 'ppdp';",
      "const report = await release('node_modules/ppdp/examples/adult/release.json', { out: 'lib-out' });",
      'console.log(JSON.stringify({ k: report.privacy.k, passed: report.verification.verified }));',
    ].join('\n');
    const r = run(process.execPath, ['--input-type=module', '-e', script], app);
    expect(r.status, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ k: 5, passed: true });
    expect(existsSync(join(app, 'lib-out/manifest.json'))).toBe(true);
  });
});
