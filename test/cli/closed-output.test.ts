/**
 * A reader that goes away early (`ppdp release … | head -1`): the command still ends on its
 * own outcome, with no stack trace (the installed bin in a child process whose stdout, or
 * stderr, pipe is closed before it writes; needs `npm run build`).
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { tinyWorkspace } from '../helpers/tiny.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

/** Runs ppdp with the named pipes closed on this side at once; the exit code and what stderr got. */
function withClosed(
  closed: readonly ('stdout' | 'stderr')[],
  args: readonly string[],
  cwd: string,
): Promise<{ code: number | null; stderr: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  if (closed.includes('stderr')) child.stderr.destroy();
  else child.stderr.on('data', (d) => (stderr += String(d)));
  if (closed.includes('stdout')) child.stdout.destroy();
  else child.stdout.resume();
  return new Promise((done) => child.on('close', (code) => done({ code, stderr })));
}

describe('ppdp with its output closed early', () => {
  const ws = tinyWorkspace();

  it('release: publishes and exits 0 when stdout is closed', async () => {
    // The summary and its caution lines go to the closed stdout.
    const r = await withClosed(['stdout'], ['release', 'spec.json', '--out', 'rel', '--quiet'], ws.dir);
    expect(r.stderr).not.toMatch(/EPIPE|internal error/);
    expect(r.code).toBe(0);
    expect(existsSync(join(ws.dir, 'rel', 'manifest.json'))).toBe(true);
  });

  it('release: likewise when stderr, which takes its progress lines, is closed too', async () => {
    const r = await withClosed(['stdout', 'stderr'], ['release', 'spec.json', '--out', 'rel2'], ws.dir);
    expect(r.code).toBe(0);
    expect(existsSync(join(ws.dir, 'rel2', 'manifest.json'))).toBe(true);
  });

  it('explore: writes its frontier and exits 0 when stdout is closed', async () => {
    const r = await withClosed(
      ['stdout'],
      ['explore', 'spec.json', '--vary', 'k=2..3', '--out', 'fr'],
      ws.dir,
    );
    expect(r.stderr).not.toMatch(/EPIPE|internal error/);
    expect(r.code).toBe(0);
    expect(existsSync(join(ws.dir, 'fr', 'explore.html'))).toBe(true);
  });

  it('a failing command keeps its own exit code', async () => {
    const r = await withClosed(['stdout', 'stderr'], ['release', 'missing.json', '--out', 'rel3'], ws.dir);
    expect(r.code).toBe(1);
  });
});
