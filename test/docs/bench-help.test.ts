/**
 * Every benchmark command answers `--help` with its usage and runs nothing: `npm run bench…`
 * scripts measure for minutes and write under bench/results/, so asking what one does must not
 * start it.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openingComment } from '../../bench/help.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const scripts = Object.entries(JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).scripts as object)
  .filter(([name]) => name === 'bench' || name.startsWith('bench:'))
  .map(([name, command]) => [name, /^tsx (bench\/\S+\.ts)$/.exec(command as string)?.[1]] as const);

describe('benchmark commands: --help', () => {
  it('lists the commands as tsx scripts under bench/', () => {
    expect(scripts.length).toBeGreaterThanOrEqual(12);
    for (const [name, file] of scripts) expect(file, name).toBeDefined();
  });

  it.each(scripts)('%s --help prints its usage and exits 0 without measuring', (_, file) => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, file!), '--help'], {
      cwd: ROOT,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/bench/);
    expect(r.stdout).not.toMatch(/wrote .*bench\/results/);
  });

  it('shows a script its opening comment without the comment markers', () => {
    expect(openingComment('/**\n * Measures X.\n *\n * Run: `npm run bench:x`.\n */\nimport a;')).toBe(
      'Measures X.\n\nRun: `npm run bench:x`.\n',
    );
    expect(() => openingComment('const a = 1;')).toThrow(/no opening comment/);
  });
});
