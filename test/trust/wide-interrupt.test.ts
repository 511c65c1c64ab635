/**
 * A best-effort search on a wide table stops on SIGINT and SIGTERM: the built CLI,
 * as a child process with a fresh TMPDIR, is signalled once its search has printed a progress
 * line; it exits with 130 / 143, publishes nothing into --out and leaves no temporary folder.
 * (No timing is asserted; the process must exit at all within a generous timeout.)
 */
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { writeWideTable } from '../../bench/wide-table.ts';
import { LOCK } from '../../src/pipeline/publish.ts';
import { type Run, startRelease, until } from '../helpers/cli-run.ts';

const root = mkdtempSync(join(tmpdir(), 'ppdp-wide-interrupt-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// 20 quasi-identifiers (a lattice of billions of nodes), a node budget and a time limit far
// beyond what the test waits for, and rows enough that the search runs for several progress
// lines before it converges: it is still running when the signal comes.
const wide = writeWideTable(join(root, 'data'), 200_000, 20, { nodeBudget: 10_000_000, timeLimit: 3600 });

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
      const run = startRelease(root, wide.spec);
      try {
        // A progress line of the search (every 2 s): the search loop is running.
        await until(() => {
          if (run.child.exitCode !== null)
            throw new Error(`ended before its search printed progress:\n${run.stderr}`);
          return /best-effort search: [\d,]+ nodes checked/.test(run.stderr);
        }, 120_000);
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
