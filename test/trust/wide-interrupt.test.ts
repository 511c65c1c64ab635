/**
 * A best-effort search on a wide table stops on SIGINT and SIGTERM: the built CLI,
 * as a child process with a fresh TMPDIR, is signalled once its search has printed a progress
 * line; it exits with 130 / 143, publishes nothing into --out and leaves no temporary folder.
 * (No timing is asserted; the process must exit at all within a generous timeout.)
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeWideTable } from '../../bench/wide-table.ts';
import { LOCK } from '../../src/pipeline/publish.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'ppdp-wide-interrupt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// 20 quasi-identifiers (a lattice of billions of nodes), a node budget and a time limit far
// beyond what the test waits for: the search is still running when the signal comes.
const wide = writeWideTable(join(root, 'data'), 5000, 20, { nodeBudget: 10_000_000, timeLimit: 3600 });

interface Run {
  readonly child: ChildProcess;
  readonly tmp: string;
  readonly out: string;
  stderr: string;
  readonly exit: Promise<number | null>;
}

let runs = 0;
function start(): Run {
  const n = runs++;
  const tmp = join(root, `tmp-${n}`);
  const out = join(root, `out-${n}`);
  mkdirSync(tmp, { recursive: true });
  const child = spawn(process.execPath, [CLI, 'release', wide.spec, '--out', out], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  const run: Run = {
    child,
    tmp,
    out,
    stderr: '',
    exit: new Promise((done) => child.on('exit', (code) => done(code))),
  };
  child.stderr!.on('data', (d) => {
    run.stderr += String(d);
  });
  return run;
}

async function until(ready: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ready()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Resolves with the exit code, or null when the process has not exited within `ms`. */
function exitWithin(run: Run, ms: number): Promise<number | null | 'running'> {
  return Promise.race([run.exit, new Promise<'running'>((done) => setTimeout(() => done('running'), ms))]);
}

describe('a best-effort search on a wide table stops on a signal', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    '%s during the search: exit %i, nothing published, no temporary folder',
    async (signal, code) => {
      const run = start();
      try {
        // A progress line of the search (every 2 s): the search loop is running.
        await until(() => /best-effort search: [\d,]+ nodes checked/.test(run.stderr), 120_000);
        expect(readdirSync(run.tmp).length).toBeGreaterThan(0);
        run.child.kill(signal);
        const exit = await exitWithin(run, 60_000);
        expect(exit, run.stderr).toBe(code);
        expect(run.stderr).toContain(`${signal} received`);
        expect(readdirSync(run.tmp)).toEqual([]);
        const left = existsSync(run.out) ? readdirSync(run.out).filter((f) => f !== LOCK) : [];
        expect(left).toEqual([]);
      } finally {
        if (run.child.exitCode === null) run.child.kill('SIGKILL');
      }
    },
    240_000,
  );
});
