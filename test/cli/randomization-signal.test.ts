/**
 * A randomization release stops on SIGTERM and SIGINT while its optimizer runs: the built CLI,
 * as a child process with a fresh TMPDIR, is signalled once the optimizer has printed a
 * progress line; it exits with 143 / 130, publishes nothing and leaves no temporary folder.
 * The optimizer was one synchronous loop: the signal handler never ran and the process had to
 * be killed. (No timing is asserted; the process must exit at all within a generous wait.)
 * The release folder's lock goes too, and the folder with it when the run made it: SIGINT
 * into a new folder left that folder holding only `.ppdp-lock`.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { LOCK } from '../../src/pipeline/publish.ts';
import { Random } from '../../src/util/random.ts';
import { nextOut, type Run, startRelease, until } from '../helpers/cli-run.ts';

const root = mkdtempSync(join(tmpdir(), 'ppdp-rr-signal-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Six quasi-identifiers of 12 values (a QI table of 3 million cells: each risk evaluation
// takes a while) and seven retention parameters to optimize: hours of work.
const spec = join(root, 'release.json');
{
  const rng = new Random(1);
  const qis = Array.from({ length: 6 }, (_, i) => `q${i}`);
  const lines = [[...qis, 'dis'].join(',')];
  for (let r = 0; r < 3000; r++)
    lines.push([...qis.map(() => `v${rng.below(12)}`), `d${rng.below(5)}`].join(','));
  writeFileSync(join(root, 'table.csv'), `${lines.join('\n')}\n`);
  writeFileSync(
    spec,
    JSON.stringify({
      input: 'table.csv',
      attributes: {
        ...Object.fromEntries(qis.map((q) => [q, { type: 'quasi-identifying' }])),
        dis: { type: 'sensitive' },
      },
      privacy: [{ model: 'attribute-disclosure', attribute: 'dis', tau: 0.3 }],
      method: { name: 'randomization', scenario: 'rr-both' },
      seed: 1,
    }),
  );
}

/** Resolves with the exit code, or 'running' when the process has not exited within `ms`. */
function exitWithin(run: Run, ms: number): Promise<number | null | 'running'> {
  return Promise.race([run.exit, new Promise<'running'>((done) => setTimeout(() => done('running'), ms))]);
}

describe('a randomization release stops on a signal while it optimizes', () => {
  it.each([
    ['SIGTERM', 143, 'an empty folder given'],
    ['SIGINT', 130, 'a new folder'],
  ] as const)(
    '%s: exit %i, nothing published, no temporary folder, no lock left in %s',
    async (signal, code, folder) => {
      const given = folder === 'an empty folder given';
      if (given) mkdirSync(nextOut(root));
      const run = startRelease(root, spec);
      try {
        await until(() => {
          if (run.child.exitCode !== null) throw new Error(`ended before optimizing:\n${run.stderr}`);
          return /optimizing: [\d,]+ risk evaluations so far/.test(run.stderr);
        }, 120_000);
        expect(readdirSync(run.tmp).length).toBeGreaterThan(0);
        run.child.kill(signal);
        expect(await exitWithin(run, 60_000), run.stderr).toBe(code);
        expect(run.stderr).toContain(`${signal} received`);
        expect(readdirSync(run.tmp)).toEqual([]);
        expect(existsSync(join(run.out, LOCK))).toBe(false);
        // A folder the run made goes with its lock; one given stays, empty.
        if (given) expect(readdirSync(run.out)).toEqual([]);
        else expect(existsSync(run.out)).toBe(false);
      } finally {
        if (run.child.exitCode === null) run.child.kill('SIGKILL');
      }
    },
    240_000,
  );
});
