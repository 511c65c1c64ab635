/**
 * The output folder is ppdp's: a folder holding anything but a ppdp release is refused, a
 * release replaces the one before it entirely (no file of the older release stays), and one
 * run at a time publishes into a folder (a lock; a crashed run's lock is taken over). Through
 * the library (the engine in process), the CLI (the state machine's Publish) and an S3 store (s3rver).
 */
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputError, type PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { LOCK, publishInto, storeFolder } from '../../src/pipeline/publish.ts';
import { runIdOf } from '../../src/pipeline/release.ts';
import { fileUrl, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { runCli, snapshot, trustedRelease } from '../trust/helpers.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

const ws = adultWorkspace(1000);
// Anatomy publishes qit.csv / st.csv (the exact quasi-identifiers): the files that must not
// outlive their release when a generalization release replaces it.
const anatomy = join(ws.dir, 'anatomy.json');
writeFileSync(
  anatomy,
  JSON.stringify({
    input: 'adult.csv',
    format: { delimiter: ';' },
    attributes: {
      sex: { type: 'quasi-identifying' },
      age: { type: 'quasi-identifying', scale: 'numeric' },
      race: { type: 'quasi-identifying' },
      'marital-status': { type: 'quasi-identifying' },
      education: { type: 'quasi-identifying' },
      'native-country': { type: 'quasi-identifying' },
      workclass: { type: 'quasi-identifying' },
      'salary-class': { type: 'quasi-identifying' },
      occupation: { type: 'sensitive' },
    },
    privacy: [{ model: 'distinct-l-diversity', attribute: 'occupation', l: 3 }],
    method: { name: 'anatomy' },
    seed: 1,
  }),
);
const generalization = ws.spec;
// All of Adult (about 2 s of work after the claim): two runs started together surely overlap.
const big = adultWorkspace();
const ANATOMY_FILES = ['data.arrow', 'data.csv', 'qit.arrow', 'qit.csv', 'report.html', 'report.json'];
const GENERALIZATION_FILES = ['data.arrow', 'data.csv', 'report.html', 'report.json'];
const filesOf = (spec: string): string[] =>
  spec === anatomy ? ANATOMY_FILES.concat('st.arrow', 'st.csv') : GENERALIZATION_FILES;

const outs = mkdtempSync(join(tmpdir(), 'ppdp-out-folder-'));
afterAll(() => rmSync(outs, { recursive: true, force: true }));
let n = 0;
const freshOut = () => join(outs, `out-${n++}`);

/** Every file in `dir` (hidden ones too), sorted. */
const filesIn = (dir: string) => readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort();

/** The folder holds exactly `spec`'s release: its files, its manifest (last), nothing else. */
function expectExactly(dir: string, spec: string): void {
  expect(filesIn(dir)).toEqual([...filesOf(spec), 'manifest.json'].sort());
  const trusted = trustedRelease(dir);
  expect(trusted, 'the manifest matches the files').not.toBeNull();
  expect(trusted!.files.map((f) => f.name)).toEqual(filesOf(spec).sort());
  expect(trusted!.runId).toBe(runIdOf(loadSpec(spec)));
}

async function caught(work: () => unknown): Promise<PpdpError> {
  try {
    await work();
  } catch (e) {
    return e as PpdpError;
  }
  throw new Error('expected an error');
}

/** A lock as a run on `host` with `pid` would have left it. */
function writeLock(dir: string, pid: number, host = hostname()): void {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, LOCK),
    JSON.stringify({
      format: 'ppdp-lock/1',
      token: `t${pid}`,
      pid,
      host,
      process: 'another',
      started: '2026-01-01T00:00:00.000Z',
    }),
  );
}

/** A pid that no process has any more. */
function deadPid(): number {
  const child = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], {
    encoding: 'utf8',
  });
  return Number(child.stdout);
}

describe('a release replacing another in the same folder', () => {
  it('library: Anatomy then generalization leaves only the generalization release', async () => {
    const out = freshOut();
    await releaseTo(anatomy, out);
    expectExactly(out, anatomy);
    await releaseTo(generalization, out);
    expectExactly(out, generalization);
  }, 120_000);

  it('CLI (state machine): the same, and back again', async () => {
    const out = freshOut();
    for (const spec of [anatomy, generalization, anatomy]) {
      const r = await runCli(['release', spec, '--out', out, '--quiet']);
      expect(r.status, r.stderr).toBe(0);
      expectExactly(out, spec);
    }
  }, 180_000);
});

describe('a folder that is not a ppdp release', () => {
  const foreign = () => {
    const out = freshOut();
    mkdirSync(join(out, 'notes'), { recursive: true });
    writeFileSync(join(out, 'notes', 'todo.txt'), 'mine');
    writeFileSync(join(out, 'manifest.json'), '{"not":"ppdp"}');
    return out;
  };

  it('is refused before any work, naming the folder and what is there, and nothing is written', async () => {
    const out = foreign();
    const before = filesIn(out);
    const e = await caught(async () => await releaseTo(generalization, out));
    expect(e).toBeInstanceOf(OutputError);
    expect(e.code).toBe('E_OUT_NOT_RELEASE');
    expect(e.message).toContain(out);
    expect(e.message).toMatch(/holds 2 files and no ppdp release/);
    expect(e.hint).toMatch(/empty or new folder/);
    expect(filesIn(out)).toEqual(before);

    const r = await runCli(['release', generalization, '--out', out, '--quiet']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/holds 2 files and no ppdp release/);
    expect(r.stderr).toMatch(/hint: choose an empty or new folder/);
    expect(filesIn(out)).toEqual(before);
    expect(readFileSync(join(out, 'notes', 'todo.txt'), 'utf8')).toBe('mine');
  });

  it('an empty or missing folder is fine; a failed run leaves a missing folder missing', async () => {
    const empty = freshOut();
    mkdirSync(empty);
    await releaseTo(generalization, empty);
    expectExactly(empty, generalization);
    // l = 20 is more than the occupations allow: found after the folder was claimed.
    const missing = freshOut();
    const tooDiverse = join(ws.dir, 'too-diverse.json');
    const spec = JSON.parse(readFileSync(anatomy, 'utf8'));
    spec.privacy[0].l = 20;
    writeFileSync(tooDiverse, JSON.stringify(spec));
    await expect(releaseTo(tooDiverse, missing)).rejects.toThrow(/occupation/);
    expect(() => readdirSync(missing)).toThrow(/ENOENT/);
  });
});

describe('the folder lock', () => {
  it('a live run holds the folder: another run fails with E_OUT_LOCKED and changes nothing', async () => {
    const out = freshOut();
    await releaseTo(generalization, out);
    writeLock(out, process.ppid); // the test runner's parent: alive
    const before = snapshot(out);
    const e = await caught(async () => await releaseTo(anatomy, out));
    expect(e.code).toBe('E_OUT_LOCKED');
    expect(e.message).toBe(
      `${out}: another release is publishing there (pid ${process.ppid} on ${hostname()}, since 2026-01-01T00:00:00.000Z)`,
    );
    expect(e.hint).toContain(`remove ${join(out, LOCK)}`);
    const r = await runCli(['release', anatomy, '--out', out, '--quiet']);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/another release is publishing there/);
    expect(snapshot(out)).toEqual(before);
  });

  it('a Publish retried after its first attempt finished returns the release; otherwise it publishes nothing without the lock', async () => {
    const out = freshOut();
    const { manifest } = await releaseTo(generalization, out);
    const gone = { token: 'given-up', created: false };
    const noCopy = {
      copyIn: () => {
        throw new Error('nothing is copied');
      },
      digest: () => {
        throw new Error('nothing is read');
      },
    };
    const folder = storeFolder(await storeResolver().open(fileUrl(out, true)));
    const again = (runId: string) => publishInto(folder, manifest.files, runId, gone, noCopy, () => {});
    expect(await again(manifest.runId)).toEqual(manifest);
    const e = await caught(() => again('another-run'));
    expect(e.code).toBe('E_OUT_LOCKED');
    expect(e.message).toMatch(/no longer holds the folder's lock/);
    expectExactly(out, generalization);
  });

  it('a lock from another host is never taken over automatically', async () => {
    const out = freshOut();
    writeLock(out, deadPid(), 'some-other-host');
    expect((await caught(async () => await releaseTo(generalization, out))).code).toBe('E_OUT_LOCKED');
  });

  it("a crashed run's lock (its pid dead on this host) is taken over; so is a failed run's released lock", async () => {
    // A run killed mid-publish: no manifest, the older release's files and some new ones.
    const out = freshOut();
    await releaseTo(anatomy, out);
    rmSync(join(out, 'manifest.json'));
    writeLock(out, deadPid());
    await releaseTo(generalization, out);
    expectExactly(out, generalization);

    const cli = freshOut();
    await releaseTo(anatomy, cli);
    rmSync(join(cli, 'manifest.json'));
    writeLock(cli, deadPid());
    const r = await runCli(['release', generalization, '--out', cli, '--quiet']);
    expect(r.status, r.stderr).toBe(0);
    expectExactly(cli, generalization);

    const released = freshOut();
    await releaseTo(anatomy, released);
    rmSync(join(released, 'manifest.json'));
    writeLock(released, process.pid);
    const lock = JSON.parse(readFileSync(join(released, LOCK), 'utf8'));
    writeFileSync(join(released, LOCK), JSON.stringify({ ...lock, released: true }));
    await releaseTo(generalization, released);
    expectExactly(released, generalization);
  }, 120_000);

  it('two CLI processes into one folder: exactly one publishes, the other fails with the lock error', async () => {
    const rounds = [
      { first: anatomy, second: big.spec, older: false },
      { first: big.spec, second: anatomy, older: true },
    ];
    for (const round of rounds) {
      const out = freshOut();
      if (round.older) await releaseTo(anatomy, out);
      const start = (spec: string) =>
        new Promise<{ spec: string; code: number | null; stderr: string }>((resolve) => {
          const child = spawn(process.execPath, [CLI, 'release', spec, '--out', out, '--quiet'], {
            stdio: ['ignore', 'ignore', 'pipe'],
          });
          let stderr = '';
          child.stderr.on('data', (d) => {
            stderr += String(d);
          });
          child.on('exit', (code) => resolve({ spec, code, stderr }));
        });
      const results = await Promise.all([start(round.first), start(round.second)]);
      const won = results.filter((r) => r.code === 0);
      const lost = results.filter((r) => r.code !== 0);
      expect(won.length, results.map((r) => r.stderr).join('\n')).toBe(1);
      expect(lost[0]!.code).toBe(1);
      expect(lost[0]!.stderr).toMatch(
        new RegExp(`^ppdp: error: ${out}: another release is publishing there \\(pid \\d+ on `),
      );
      expect(lost[0]!.stderr).toMatch(/hint: wait for it to finish/);
      expectExactly(out, won[0]!.spec);
    }
  }, 180_000);
});

describe('an S3 release folder (s3rver)', () => {
  const s3 = new LocalS3('ppdp-out-folder');
  beforeAll(() => s3.start(), 60_000);
  afterAll(() => s3.dispose());

  it('is replaced whole, refused when foreign, and locked', async () => {
    const stores = storeResolver(s3.options());
    try {
      const { store } = await stores.open('s3://ppdp-out-folder/');
      const keys = async (prefix: string) =>
        (await store.list(prefix)).map((o) => o.key.slice(prefix.length));
      const release = (spec: string, out: string) =>
        executeRelease({ spec, out }, { engine: 'direct', s3: s3.options() });

      await release(anatomy, 's3://ppdp-out-folder/rel/');
      expect(await keys('rel/')).toEqual([...ANATOMY_FILES, 'manifest.json', 'st.arrow', 'st.csv'].sort());
      const { manifest } = await release(generalization, 's3://ppdp-out-folder/rel/');
      expect(await keys('rel/')).toEqual([...GENERALIZATION_FILES, 'manifest.json'].sort());
      expect(manifest.runId).toBe(runIdOf(loadSpec(generalization)));

      await store.put('foreign/mine.txt', 'mine');
      const refused = await release(generalization, 's3://ppdp-out-folder/foreign/').catch((e) => e);
      expect((refused as PpdpError).code).toBe('E_OUT_NOT_RELEASE');
      expect((refused as PpdpError).message).toMatch(/^s3:\/\/ppdp-out-folder\/foreign: holds 1 file/);
      expect(await keys('foreign/')).toEqual(['mine.txt']);

      expect(await store.putIfAbsent('locked/.ppdp-lock', '{}')).toBe(true);
      expect(await store.putIfAbsent('locked/.ppdp-lock', 'x')).toBe(false);
      expect(utf8(await store.get('locked/.ppdp-lock'))).toBe('{}');
      const locked = await release(generalization, 's3://ppdp-out-folder/locked/').catch((e) => e);
      expect((locked as PpdpError).code).toBe('E_OUT_LOCKED');
      expect(await keys('locked/')).toEqual([LOCK]);
    } finally {
      stores.close();
    }
  }, 180_000);
});
