/**
 * The CLI leaves nothing in the temporary folder: not after a release, not after one that
 * fails, and not after SIGINT or SIGTERM while worker threads are running (it exits with 130
 * or 143 and publishes nothing). The library's `release()` removes its folder when it rejects.
 * Each CLI run gets a fresh TMPDIR, so anything ppdp made there is seen.
 */
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { release } from '../../src/api.ts';
import { INITIAL_HEAP_MB, TUNABLES, TUNED_RERUN_NOTE } from '../../src/cli/allocator.ts';
import { ADULT_DIR } from '../helpers/adult.ts';
import { nextTmp, type Run, startRelease, until } from '../helpers/cli-run.ts';
import { releaseTo } from '../helpers/release.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const root = mkdtempSync(join(tmpdir(), 'ppdp-cli-cleanup-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));

// Adult 40 times over (1.2 M rows, ≈ 130 MB): past the row count where Map states run in
// worker threads, and many seconds of work.
const big = join(root, 'big');
cpSync(ADULT_DIR, big, { recursive: true });
{
  const [header, ...rest] = readFileSync(join(ADULT_DIR, 'adult.csv'), 'utf8').split('\n');
  const body = `${rest.filter((l) => l !== '').join('\n')}\n`;
  writeFileSync(join(big, 'adult.csv'), `${header}\n${body.repeat(40)}`);
}
// The first 1,000 rows: a release that publishes in a moment.
const small = join(root, 'small');
cpSync(ADULT_DIR, small, { recursive: true });
writeFileSync(
  join(small, 'adult.csv'),
  `${readFileSync(join(ADULT_DIR, 'adult.csv'), 'utf8').split('\n').slice(0, 1001).join('\n')}\n`,
);
// A small copy whose row 500 lacks its age: the release fails after its work area exists.
const bad = join(root, 'bad');
cpSync(ADULT_DIR, bad, { recursive: true });
{
  const lines = readFileSync(join(ADULT_DIR, 'adult.csv'), 'utf8').split('\n');
  const cells = lines[499]!.split(';');
  cells[1] = '';
  lines[499] = cells.join(';');
  writeFileSync(join(bad, 'adult.csv'), lines.join('\n'));
}

/** The environment blocks of the processes whose parent is `pid` (Linux: read from /proc). */
function childEnvironments(pid: number): string[] {
  return childFiles(pid, 'environ');
}

/** A /proc file (`environ`, `cmdline`) of each process whose parent is `pid`. */
function childFiles(pid: number, file: string): string[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((name) => {
      try {
        // The parent's pid is the second field after the parenthesized command name.
        const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
        return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map((name) => readFileSync(`/proc/${name}/${file}`, 'utf8'));
}

/** The search is done: worker threads now apply the node to the shards (Map states). */
const applying = (run: Run) => () => run.stderr.includes('chosen node');
/** The run has started reading: its folder exists. */
const reading = (run: Run) => () => run.stderr.includes('reading') && readdirSync(run.tmp).length > 0;

describe('ppdp release removes its temporary folder', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'on %s while worker threads run: exit %i, nothing left, nothing published',
    async (signal, code) => {
      const run = startRelease(root, join(big, 'release.json'), ['--workers', '2']);
      await until(applying(run), 240_000);
      expect(readdirSync(run.tmp).length).toBeGreaterThan(0); // the run's folder is there
      // On Linux the large input runs in a child process with the allocator tuned, which gets
      // the signal from the command.
      if (process.platform === 'linux') {
        expect(run.stderr).toContain(TUNED_RERUN_NOTE);
        const children = childEnvironments(run.child.pid!);
        expect(children).toHaveLength(1);
        // glibc cuts the variable at its colons where it lies as it reads it: every setting is there.
        for (const setting of TUNABLES.split(':')) expect(children[0]).toContain(setting);
        // And V8's heap sized (a node flag before the command's script).
        expect(childFiles(run.child.pid!, 'cmdline')[0]!.split('\0')).toContain(
          `--initial-heap-size=${INITIAL_HEAP_MB}`,
        );
      }
      run.child.kill(signal);
      expect(await run.exit).toBe(code);
      expect(run.stderr).toContain(`${signal} received`);
      expect(readdirSync(run.tmp)).toEqual([]);
      expect(existsSync(join(run.out, 'manifest.json'))).toBe(false);
      // The run gave its lock up, and the folder it made, which held nothing else.
      expect(existsSync(run.out)).toBe(false);
      await releaseTo(join(small, 'release.json'), run.out);
      expect(existsSync(join(run.out, 'manifest.json'))).toBe(true);
    },
    300_000,
  );

  it('after a large release that runs to the end (on Linux in the restarted child): its code, its output', () => {
    const tmp = mkdtempSync(join(root, 'tmp-whole-'));
    const out = join(root, 'out-whole');
    const r = spawnSync(process.execPath, [CLI, 'release', join(big, 'release.json'), '--out', out], {
      env: { ...process.env, TMPDIR: tmp },
      encoding: 'utf8',
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^verified release in .*out-whole: k = [\d,]+, [\d,]+ rows suppressed/);
    // Decided once, by the command before its bundle loads (the child does not restart again).
    if (process.platform === 'linux') expect(r.stderr.split(TUNED_RERUN_NOTE)).toHaveLength(2);
    expect(r.stderr).toMatch(/published \d+ files and manifest\.json/);
    expect(existsSync(join(out, 'manifest.json'))).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
  }, 300_000);

  it('on a second SIGINT at once', async () => {
    const run = startRelease(root, join(big, 'release.json'), ['--workers', '2']);
    await until(reading(run), 60_000);
    run.child.kill('SIGINT');
    await until(() => run.stderr.includes('SIGINT received'), 10_000);
    run.child.kill('SIGINT');
    expect(await run.exit, run.stderr).toBe(130);
    expect(readdirSync(run.tmp)).toEqual([]);
  }, 180_000);

  it('when the release fails on bad input; and the folder of a killed run goes with the next run', async () => {
    // The folder of a run killed outright (SIGKILL): its pid no longer runs.
    const dead = spawnSync(process.execPath, ['-e', '']).pid!;
    const tmp = nextTmp(root);
    const abandoned = join(tmp, `ppdp-run-${dead}-AbCdEf`);
    mkdirSync(join(abandoned, 'work'), { recursive: true });
    writeFileSync(join(abandoned, 'work', 'input'), 'rows');
    const run = startRelease(root, join(bad, 'release.json'), ['--quiet']);
    expect(run.tmp).toBe(tmp);
    expect(await run.exit).toBe(1);
    expect(run.stderr).toMatch(/row 500/);
    expect(readdirSync(run.tmp)).toEqual([]);
    expect(existsSync(join(run.out, 'manifest.json'))).toBe(false);
  }, 60_000);
});

describe('release() from the library', () => {
  it('removes its temporary folder when it rejects', async () => {
    const tmp = mkdtempSync(join(root, 'lib-tmp-'));
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = tmp;
    try {
      await expect(release(join(bad, 'release.json'), { out: join(root, 'lib-out') })).rejects.toThrow(
        /row 500/,
      );
    } finally {
      process.env.TMPDIR = saved;
    }
    expect(readdirSync(tmp)).toEqual([]);
  }, 60_000);
});
