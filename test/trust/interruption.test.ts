/**
 * Atomic, idempotent publishing on the local store, tested from outside:
 * - fault injection: every write into --out fails in turn (the engine in process and the CLI); a failed run leaves no release a reader would trust (no manifest, or the
 *   older complete release untouched), and a re-run publishes exactly the clean run's release
 *   (a failure to remove the folder's lock, after the manifest, fails nothing);
 * - kills: the CLI, as a child process, is killed (SIGKILL) at random points 20 times;
 * - concurrency: two runs of the same spec into the same folder end in a consistent release.
 * A reader trusts a folder only through its manifest (see trustedRelease).
 */
import { type ChildProcess, spawn } from 'node:child_process';
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
import { buildSync } from 'esbuild';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { LOCK } from '../../src/pipeline/publish.ts';
import { Random } from '../../src/util/random.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';
import { REPO, runCli, snapshot, trustedRelease, writeResults } from './helpers.ts';

// ---------------------------------------------------------------------------------------------
// Fault injection: writes whose target lies under `faults.under` are counted; the one numbered
// `faults.failAt` throws EIO (as a full disk or a revoked permission would).

const faults = vi.hoisted(() => ({ under: '', failAt: 0, count: 0, writes: [] as string[] }));

vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const wrap = <F extends (...args: never[]) => unknown>(name: string, fn: F, pathArg: number): F =>
    ((...args: never[]) => {
      const target = String(args[pathArg]);
      if (faults.under !== '' && target.startsWith(faults.under)) {
        faults.count++;
        faults.writes.push(`${name} ${target.slice(faults.under.length)}`);
        if (faults.count === faults.failAt) {
          throw Object.assign(new Error(`EIO: injected fault at write ${faults.count} (${name})`), {
            code: 'EIO',
          });
        }
      }
      return fn(...args);
    }) as F;
  const mocked = {
    writeFileSync: wrap('writeFileSync', fs.writeFileSync, 0),
    copyFileSync: wrap('copyFileSync', fs.copyFileSync, 1),
    renameSync: wrap('renameSync', fs.renameSync, 1),
    mkdirSync: wrap('mkdirSync', fs.mkdirSync, 0),
    rmSync: wrap('rmSync', fs.rmSync, 0),
  };
  return { ...fs, ...mocked, default: { ...fs, ...mocked } };
});

vi.mock('node:fs/promises', async (importOriginal) => {
  const fsp = await importOriginal<typeof import('node:fs/promises')>();
  const wrap = <F extends (...args: never[]) => Promise<unknown>>(name: string, fn: F, pathArg: number): F =>
    (async (...args: never[]) => {
      const target = String(args[pathArg]);
      if (faults.under !== '' && target.startsWith(faults.under)) {
        faults.count++;
        faults.writes.push(`${name} ${target.slice(faults.under.length)}`);
        if (faults.count === faults.failAt) {
          throw Object.assign(new Error(`EIO: injected fault at write ${faults.count} (${name})`), {
            code: 'EIO',
          });
        }
      }
      return fn(...args);
    }) as F;
  const mocked = {
    writeFile: wrap('writeFile', fsp.writeFile, 0),
    copyFile: wrap('copyFile', fsp.copyFile, 1),
    link: wrap('link', fsp.link, 1),
    rename: wrap('rename', fsp.rename, 1),
    mkdir: wrap('mkdir', fsp.mkdir, 0),
    rm: wrap('rm', fsp.rm, 0),
  };
  return { ...fsp, ...mocked, default: { ...fsp, ...mocked } };
});

/** The release's content that must not depend on the run: data files and the report sans timings. */
function content(out: string): Record<string, string> {
  const files = snapshot(out);
  const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
  delete report.timings;
  return {
    'data.csv': files['data.csv']!,
    'data.arrow': files['data.arrow']!,
    report: JSON.stringify(report),
  };
}

/**
 * After an interrupted run: nothing a reader trusts, or a complete release — the older one
 * exactly as it was, or (a kill after the manifest was written) the run's own, complete.
 */
function expectNothingPartial(
  out: string,
  older: Record<string, string> | null,
): 'none' | 'older' | 'complete' {
  const trusted = trustedRelease(out);
  if (trusted === null) return 'none';
  const now = snapshot(out);
  if (older !== null && now['manifest.json'] === older['manifest.json']) {
    for (const f of trusted.files) expect(now[f.name]).toBe(older[f.name]);
    return 'older';
  }
  expect(content(out), 'a trusted folder holds the complete release').toEqual(clean);
  return 'complete';
}

/**
 * A publish's last write removes the folder's lock, after the manifest: the release is
 * complete, so a failure there is no failure of the run; the lock left behind is taken over by
 * the next run (which the re-run shows).
 */
function isLockRemoval(write: string): boolean {
  return /^rm(Sync)? /.test(write) && write.endsWith(`/${LOCK}`);
}

const results: Record<string, unknown> = {};
afterAll(() => writeResults('interruption', results));

let ws: Workspace;
let older: Workspace;
let clean: Record<string, string>;
/** The output folders of this file (apart from the inputs, which they must not contain). */
let outs: string;
/** The older release, made once: a case that needs it in its folder gets a copy. */
let olderRelease: string;

beforeAll(async () => {
  outs = mkdtempSync(join(tmpdir(), 'ppdp-interrupt-out-'));
  ws = adultWorkspace(400);
  // The "older release" already in the folder: the same data under another seed.
  older = adultWorkspace(400);
  older.editSpec((s) => (s.seed = 99));
  const cleanDir = join(outs, 'clean');
  await releaseTo(ws.spec, cleanDir);
  clean = content(cleanDir);
  olderRelease = join(outs, 'older');
  await releaseTo(older.spec, olderRelease);
});
afterAll(() => rmSync(outs, { recursive: true, force: true }));

/** A fresh output folder, empty or holding (a copy of) the older release. */
async function prepareOut(
  name: string,
  withOlder: boolean,
): Promise<{ out: string; before: Record<string, string> | null }> {
  const out = join(outs, name);
  rmSync(out, { recursive: true, force: true });
  if (!withOlder) return { out, before: null };
  cpSync(olderRelease, out, { recursive: true });
  return { out, before: snapshot(out) };
}

/**
 * The writes into --out of one clean run (a release into an empty folder, or over the older
 * release, which adds removing its manifest), counted by the fault injection.
 */
async function countWrites(
  name: string,
  withOlder: boolean,
  run: (out: string) => unknown,
): Promise<string[]> {
  const { out } = await prepareOut(name, withOlder);
  Object.assign(faults, { under: out, failAt: 0, count: 0, writes: [] });
  try {
    await run(out);
  } finally {
    faults.under = '';
  }
  expect(content(out)).toEqual(clean);
  expect(faults.count).toBeGreaterThanOrEqual(6);
  return faults.writes.slice();
}

describe('a store error injected at every write into --out', () => {
  it('library (the engine in process, without retries): no trusted partial release; the re-run equals the clean run', async () => {
    const tried: { write: string; older: boolean; failed: boolean; left: string }[] = [];
    const writesPerPublish: Record<string, number> = {};
    for (const withOlder of [false, true]) {
      const names = await countWrites(
        `probe-${withOlder}`,
        withOlder,
        async (out) => await releaseTo(ws.spec, out, { engine: 'direct' }),
      );
      writesPerPublish[withOlder ? 'overOlder' : 'empty'] = names.length;
      for (let i = 1; i <= names.length; i++) {
        const { out, before } = await prepareOut(`fault-${withOlder ? 'o' : 'e'}${i}`, withOlder);
        Object.assign(faults, { under: out, failAt: i, count: 0, writes: [] });
        let failed = false;
        try {
          await releaseTo(ws.spec, out, { engine: 'direct' });
        } catch (e) {
          failed = true;
          expect(String(e)).toMatch(/injected fault|EIO/);
        } finally {
          faults.under = '';
        }
        const unlocking = isLockRemoval(faults.writes[i - 1]!);
        expect(failed, `write ${i} (${names[i - 1]}) failed the run`).toBe(!unlocking);
        const left = expectNothingPartial(out, before);
        if (unlocking) expect(left, 'the lock goes after the manifest').toBe('complete');
        else expect(left, 'a failed publish never leaves its own manifest').not.toBe('complete');
        // The re-run completes and publishes the clean run's release.
        await releaseTo(ws.spec, out, { engine: 'direct' });
        expect(trustedRelease(out)).not.toBeNull();
        expect(content(out)).toEqual(clean);
        tried.push({ write: names[i - 1]!, older: withOlder, failed, left });
        rmSync(out, { recursive: true, force: true });
      }
    }
    results.library = { writesPerPublish, faultsInjected: tried.length, trustedPartialReleases: 0, tried };
  }, 180_000);

  it('CLI (the engine, without retries): no trusted partial release; the re-run equals the clean run', async () => {
    const cli = (out: string) => runCli(['release', ws.spec, '--out', out, '--engine', 'direct', '--quiet']);
    const tried: { write: string; older: boolean; status: number; left: string }[] = [];
    const writesPerPublish: Record<string, number> = {};
    for (const withOlder of [false, true]) {
      const names = await countWrites(`cli-probe-${withOlder}`, withOlder, async (out) => {
        const ok = await cli(out);
        expect(ok.status, ok.stderr).toBe(0);
      });
      writesPerPublish[withOlder ? 'overOlder' : 'empty'] = names.length;
      for (let i = 1; i <= names.length; i++) {
        const { out, before } = await prepareOut(`cli-fault-${withOlder ? 'o' : 'e'}${i}`, withOlder);
        Object.assign(faults, { under: out, failAt: i, count: 0, writes: [] });
        const r = await cli(out).finally(() => {
          faults.under = '';
        });
        const unlocking = isLockRemoval(faults.writes[i - 1]!);
        expect(r.status === 0, `write ${i} (${names[i - 1]}) failed the run`).toBe(unlocking);
        const left = expectNothingPartial(out, before);
        if (unlocking) expect(left, 'the lock goes after the manifest').toBe('complete');
        else expect(left, 'a failed publish never leaves its own manifest').not.toBe('complete');
        const again = await cli(out);
        expect(again.status, again.stderr).toBe(0);
        expect(trustedRelease(out)).not.toBeNull();
        expect(content(out)).toEqual(clean);
        tried.push({ write: names[i - 1]!, older: withOlder, status: r.status, left });
        rmSync(out, { recursive: true, force: true });
      }
    }
    results.cli = { writesPerPublish, faultsInjected: tried.length, trustedPartialReleases: 0, tried };
  }, 180_000);
});

// ---------------------------------------------------------------------------------------------
// Child processes: the CLI bundled fresh from the sources (into .tmp/, next to build/ so it
// finds the WASM module as dist/ppdp.mjs does).

const BUNDLE_DIR = join(REPO, '.tmp', `trust-${process.pid}`);
const RUNNER = join(BUNDLE_DIR, 'run.mjs');

beforeAll(() => {
  mkdirSync(BUNDLE_DIR, { recursive: true });
  buildSync({
    entryPoints: [join(REPO, 'src', 'cli', 'main.ts')],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    outfile: join(BUNDLE_DIR, 'ppdp.mjs'),
    packages: 'external',
    logLevel: 'warning',
  });
  writeFileSync(
    RUNNER,
    "import { main } from './ppdp.mjs';\nprocess.exitCode = await main(process.argv.slice(2));\n",
  );
});
afterAll(() => rmSync(BUNDLE_DIR, { recursive: true, force: true }));

function startCli(args: string[], tmp: string): ChildProcess {
  return spawn(process.execPath, [RUNNER, ...args], {
    env: { ...process.env, TMPDIR: tmp },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> {
  let stderr = '';
  child.stderr?.on('data', (d) => {
    stderr += String(d);
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stderr })));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the CLI killed at random points', () => {
  it('20 kills leave no trusted partial release; each re-run publishes the clean release', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'ppdp-kill-tmp-'));
    try {
      // How long a clean run takes, to spread the kills over it.
      const t0 = performance.now();
      const first = await prepareOut('kill-clean', false);
      const done = await exited(startCli(['release', ws.spec, '--out', first.out, '--quiet'], tmp));
      const duration = performance.now() - t0;
      expect(done.code, done.stderr).toBe(0);
      expect(content(first.out)).toEqual(clean);

      const rng = new Random(2024);
      const kills: { at: string; older: boolean; killed: boolean; left: string }[] = [];
      for (let i = 0; i < 20; i++) {
        const withOlder = i % 2 === 1;
        const { out, before } = await prepareOut(`kill-${i}`, withOlder);
        const child = startCli(['release', ws.spec, '--out', out, '--quiet'], tmp);
        const exit = exited(child);
        let at: string;
        if (i % 4 < 2) {
          // Anywhere in the run.
          const ms = Math.floor(rng.below(1000) * duration) / 1000;
          await sleep(ms);
          at = `${Math.round(ms)} ms`;
        } else {
          // While publishing: as soon as a new file shows up in --out, after a random few polls.
          const initial = new Set(existsSync(out) ? readdirSync(out) : []);
          const extra = rng.below(4);
          let polls = 0;
          const limit = performance.now() + duration * 2;
          while (performance.now() < limit && child.exitCode === null) {
            const now = existsSync(out) ? readdirSync(out) : [];
            if (now.some((f) => !initial.has(f)) && polls++ >= extra) break;
            await sleep(0);
          }
          at = `publishing (+${extra} polls)`;
        }
        const killed = child.kill('SIGKILL');
        const result = await exit;
        const left = expectNothingPartial(out, before);
        if (result.code !== 0) {
          // The re-run with the same spec (the same run id) completes with the clean release.
          const again = await exited(startCli(['release', ws.spec, '--out', out, '--quiet'], tmp));
          expect(again.code, again.stderr).toBe(0);
        }
        expect(trustedRelease(out)).not.toBeNull();
        expect(content(out)).toEqual(clean);
        kills.push({ at, older: withOlder, killed: killed && result.signal === 'SIGKILL', left });
        rmSync(out, { recursive: true, force: true });
      }
      expect(kills.filter((k) => k.killed).length).toBeGreaterThanOrEqual(10);
      results.kills = {
        runs: kills.length,
        killedMidRun: kills.filter((k) => k.killed).length,
        trustedPartialReleases: 0,
        cleanRunMs: Math.round(duration),
        kills,
      };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 400_000);
});

describe('two concurrent runs of the same spec into the same folder', () => {
  it('end in one consistent, trusted release (6 rounds of two CLI processes, the second started later each round)', async () => {
    const tmp = mkdtempSync(join(tmpdir(), 'ppdp-conc-tmp-'));
    const rounds: { round: number; staggerMs: number; exits: (number | null)[]; trusted: boolean }[] = [];
    const STAGGER = [0, 0, 40, 120, 300, 600];
    try {
      for (let round = 0; round < STAGGER.length; round++) {
        const { out } = await prepareOut(`concurrent-${round}`, round % 2 === 1);
        const a = exited(startCli(['release', ws.spec, '--out', out, '--quiet'], tmp));
        await sleep(STAGGER[round]!);
        const b = exited(startCli(['release', ws.spec, '--out', out, '--quiet'], tmp));
        const [ra, rb] = await Promise.all([a, b]);
        const trusted = trustedRelease(out);
        rounds.push({
          round,
          staggerMs: STAGGER[round]!,
          exits: [ra.code, rb.code],
          trusted: trusted !== null,
        });
        // At least one run publishes; whatever is in the folder matches its manifest. A run that
        // does not fails only because the other holds the folder (no internal error).
        expect([ra.code, rb.code], `${ra.stderr}\n${rb.stderr}`).toContain(0);
        for (const r of [ra, rb]) {
          if (r.code !== 0) expect(r.stderr).toMatch(/^ppdp: error: .*: another release is publishing there/);
        }
        expect(trusted, 'the manifest matches the files').not.toBeNull();
        expect(content(out)).toEqual(clean);
        rmSync(out, { recursive: true, force: true });
      }
      results.concurrent = { rounds: rounds.length, inconsistentFolders: 0, detail: rounds };
    } finally {
      rmSync(tmp, { recursive: true, force: true });
    }
  }, 240_000);
});
