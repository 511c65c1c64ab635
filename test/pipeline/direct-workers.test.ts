/**
 * The direct engine with worker threads finishes its release: idle workers do not keep the
 * process alive, so one running an item must (node exited with code 13 mid-release, silently,
 * leaving the folder's lock, when the direct engine awaited a worker and nothing else).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyWorkspace } from '../helpers/tiny.ts';

describe('the direct engine with worker threads, in a process of its own', () => {
  it('publishes the release and exits 0', () => {
    const ws = tinyWorkspace();
    const out = join(ws.dir, 'out');
    const r = spawnSync(
      process.execPath,
      ['--import', 'tsx', join(import.meta.dirname, '../helpers/direct-release.ts'), ws.spec, out],
      { encoding: 'utf8', timeout: 120_000 },
    );
    expect({ status: r.status, stderr: r.stderr }).toEqual({ status: 0, stderr: '' });
    expect(r.stdout).toMatch(/^published \d+ files\n$/);
    expect(existsSync(join(out, 'manifest.json'))).toBe(true);
    expect(existsSync(join(out, '.ppdp-lock'))).toBe(false);
  });
});
