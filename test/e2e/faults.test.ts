/**
 * Faults mid-run against what is deployed (test/harness/deployed.ts: every Task its bundled
 * Lambda handler in its own process, the synthesized state machine, s3rver). Each case starts
 * the same spec under its own release name and must end one of two ways:
 * - the reference bytes published: the same data files, byte for byte, as an undisturbed run;
 * - a clean refusal: no manifest, `releases/<name>/error.json` with a code and a hint, nothing
 *   of another release touched; then a new start of the same spec, with no one clearing
 *   anything by hand, publishes the reference bytes.
 * The input is small (3,000 Adult rows) but cut into 2 shards and 2 output parts, so that
 * every Distributed Map fans out.
 * A fault lands at a point of the work, not at a time: a kill once a write is done (before its
 * answer reaches the function), a timeout while a write's answer is held from it; so each case
 * ends the same way on a loaded machine (tests in parallel) as on an idle one.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { utf8 } from '../../src/pipeline/storage/index.ts';
import {
  type DeployedRun,
  type DeployedRunOptions,
  deployLocally,
  type InvocationFault,
  type LocalDeployment,
  runDeployed,
  type StateDone,
} from '../harness/deployed.ts';
import type { S3FaultLog } from '../harness/s3-faults.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const BUCKET = 'ppdp-faults';
const ws = adultWorkspace(3000);
/** 3,000 rows: 2 input shards, 2 output parts. */
const SIZES = { rowsPerShard: 1500, rowsPerPart: 1500 };
const TASKS = ['Plan', 'CountShard', 'Search', 'ApplyShard', 'Assemble', 'VerifySlice', 'Verify', 'Publish'];

let local: LocalDeployment;
/** The undisturbed run: its data files by name, and each state's first invocation's time. */
const reference = { files: new Map<string, Buffer>(), ms: new Map<string, number>() };

async function drop(name: string) {
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json')))
    await local.store.put(`inbox/${name}/${f}`, readFileSync(join(ws.dir, f)));
}

const start = (name: string, options: Partial<DeployedRunOptions> = {}) =>
  runDeployed(
    local.deployed,
    { spec: `s3://${BUCKET}/inbox/${name}/release.json`, ...SIZES },
    { s3: local.s3.options(), env: { PPDP_LOG: 'off' }, ...options },
  );

/** The release's manifest and folder, when one is published. */
async function published(name: string) {
  const manifest = (await local.store.list(`releases/${name}/`)).find((o) =>
    o.key.endsWith('/manifest.json'),
  );
  if (!manifest) return undefined;
  const prefix = manifest.key.slice(0, -'manifest.json'.length);
  const m = JSON.parse(utf8(await local.store.get(manifest.key))) as {
    files: { name: string; sha256: string }[];
  };
  return { prefix, files: m.files };
}

/** The published data files, each checked against the manifest's SHA-256. */
async function dataFiles(name: string): Promise<Map<string, Buffer>> {
  const release = await published(name);
  if (!release) throw new Error(`${name}: nothing published`);
  const out = new Map<string, Buffer>();
  for (const f of release.files) {
    const bytes = Buffer.from(await local.store.get(release.prefix + f.name));
    expect(createHash('sha256').update(bytes).digest('hex'), `${name}: ${f.name} against the manifest`).toBe(
      f.sha256,
    );
    if (f.name.startsWith('data')) out.set(f.name, bytes);
  }
  return out;
}

async function expectReference(name: string) {
  const files = await dataFiles(name);
  expect([...files.keys()].sort(), `${name}: data files`).toEqual([...reference.files.keys()].sort());
  for (const [file, bytes] of reference.files)
    expect(files.get(file)!.equals(bytes), `${name}: ${file}`).toBe(true);
}

/** Every stored object's size and modification time (from s3rver's folder), by path. */
function objectsOnDisk(): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, e.name);
      if (e.isDirectory()) walk(path);
      else {
        const st = statSync(path);
        out.set(path.slice(local.s3.dir.length + 1), `${st.size}@${st.mtimeMs}`);
      }
    }
  };
  walk(local.s3.dir);
  return out;
}

/** The objects of every release but `name` (its inbox, work area and release folder). */
function othersOnDisk(name: string): Map<string, string> {
  const own = new RegExp(`^${BUCKET}/(inbox|work|releases)/${name}/`);
  return new Map([...objectsOnDisk()].filter(([path]) => !own.test(path)));
}

/**
 * The case's end: the reference bytes published, or a clean refusal followed by a new start
 * that publishes them. Either way, nothing of another release touched.
 */
async function expectReferenceOrCleanRefusal(name: string, result: DeployedRun, before: Map<string, string>) {
  expect(othersOnDisk(name), `${name}: other releases untouched`).toEqual(before);
  if (result.ok) {
    await expectReference(name);
    return;
  }
  await expectCleanRefusal(name, result);
  const again = await start(name);
  expect(again.error, `${name}: the new start`).toBeUndefined();
  await expectReference(name);
  expect(
    await local.store.head(`releases/${name}/error.json`),
    `${name}: error.json cleared by the publish`,
  ).toBe(undefined);
}

async function expectCleanRefusal(name: string, result: DeployedRun) {
  expect(result.ok).toBe(false);
  expect(
    await published(name),
    `${name}: no manifest after a refusal (${result.error?.name})`,
  ).toBeUndefined();
  const bytes = await local.store
    .get(`releases/${name}/error.json`)
    .catch(() => expect.fail(`${name}: no releases/${name}/error.json after ${result.error?.name}`));
  const error = JSON.parse(utf8(bytes)) as { error: string; code: string | null; hint: string | null };
  const what = `${name}: ended with ${result.error?.name}, error.json says ${error.error} (code ${error.code})`;
  expect(error.code, `${what}: its code`).toEqual(expect.any(String));
  expect(error.hint, `${what}: its hint`).toEqual(expect.any(String));
}

/** A case: its release dropped, started with the given faults, judged as above. */
async function faultCase(name: string, options: Partial<DeployedRunOptions>) {
  await drop(name);
  const before = othersOnDisk(name);
  const result = await start(name, options);
  return { result, judge: () => expectReferenceOrCleanRefusal(name, result, before) };
}

const workKey = (done: StateDone, file: string) => `${done.work.slice(`s3://${BUCKET}/`.length)}${file}`;

/** Two bytes that differ swapped, near the middle: the same size, other content. */
async function swapBytes(done: StateDone, file: string) {
  const key = workKey(done, file);
  const bytes = Buffer.from(await local.store.get(key));
  const i = bytes.length >> 1;
  let j = i + 1;
  while (j < bytes.length && bytes[j] === bytes[i]) j++;
  if (j >= bytes.length) throw new Error(`${key}: no two different bytes to swap`);
  [bytes[i], bytes[j]] = [bytes[j]!, bytes[i]!];
  await local.store.put(key, bytes);
}

async function truncate(done: StateDone, file: string) {
  const key = workKey(done, file);
  const bytes = await local.store.get(key);
  await local.store.put(key, bytes.subarray(0, bytes.length >> 1));
}

const invocationsOf = (result: DeployedRun, state: string) =>
  result.invocations.filter((i) => i.state === state);

/** A state's first invocation (the one a fault targets), whenever it ended. */
const firstOf = (result: DeployedRun, state: string) =>
  invocationsOf(result, state).find((i) => i.invocation === 1);

beforeAll(async () => {
  local = await deployLocally(BUCKET);
  await drop('reference');
  const result = await start('reference');
  if (!result.ok)
    throw new Error(`the reference run failed: ${result.error?.name}: ${result.error?.message}`);
  for (const [file, bytes] of await dataFiles('reference')) reference.files.set(file, bytes);
  for (const i of result.invocations) if (!reference.ms.has(i.state)) reference.ms.set(i.state, i.ms);
}, 400_000);

afterAll(() => local?.dispose());

describe('the harness holds each invocation to its function as Lambda does', () => {
  it('the reference run fans out over 2 shards and 2 parts', () => {
    expect([...reference.files.keys()].sort()).toEqual([
      'data/part-00000.arrow',
      'data/part-00000.csv',
      'data/part-00001.arrow',
      'data/part-00001.csv',
    ]);
  });

  it('kills a state the moment it passes its memory: Runtime.OutOfMemory, long before it would end', async () => {
    await drop('oom');
    const result = await start('oom', { functionOverrides: { Search: { memoryMiB: 60 } } });
    // Deployed, the execution stops at the state (to be redriven once the size is fixed).
    expect(result.error?.name).toBe('Runtime.OutOfMemory');
    const searches = invocationsOf(result, 'Search');
    expect(searches.length).toBeGreaterThan(0);
    for (const s of searches) {
      // Killed while running (before the handler answered), not judged after it ended.
      expect(s).toMatchObject({
        ok: false,
        errorType: 'Runtime.OutOfMemory',
        killed: 'memory',
        answered: false,
        memoryMiB: 60,
      });
    }
    expect(invocationsOf(result, 'ApplyShard')).toEqual([]);
    expect(await published('oom')).toBeUndefined();
    // The stack's rule on failed executions has ReportFailure record it where users look.
    expect(result.ruleInvocations).toMatchObject([{ state: 'OnExecutionFailed', ok: true }]);
    const error = JSON.parse(utf8(await local.store.get('releases/oom/error.json')));
    expect(error).toMatchObject({ format: 'ppdp-error/1', published: false, error: 'Runtime.OutOfMemory' });
  }, 300_000);
});

/**
 * Where each state's first invocation is killed: once its first write is done, the rest of its
 * work not (VerifySlice writes nothing, it answers its verdict: once its first read is done).
 */
const killPoint = (state: string): InvocationFault =>
  state === 'VerifySlice' ? { invocation: 1, killAtRequest: 1 } : { invocation: 1, killAtWrite: 1 };

describe('a state killed once (SIGKILL mid-invocation): the retry publishes the reference bytes', () => {
  for (const state of TASKS) {
    it(state, async () => {
      const { result, judge } = await faultCase(`kill-${state.toLowerCase()}`, {
        faults: { [state]: killPoint(state) },
      });
      const first = firstOf(result, state);
      expect(first, `${state} was killed`).toMatchObject({
        errorType: 'Runtime.ExitError',
        killed: 'fault',
        answered: false,
      });
      await judge();
    }, 300_000);
  }
});

describe('the store and the clock', () => {
  it('a state past its timeout (Sandbox.Timedout)', async () => {
    // Its timeout as long as the undisturbed Search took, its first write's answer held from it:
    // it cannot end before its timeout, however fast the machine.
    const timeoutMs = Math.round(reference.ms.get('Search')!);
    const { result, judge } = await faultCase('timeout', {
      faults: { Search: { invocation: 1, timeoutMs, holdAtWrite: 1 } },
    });
    expect(firstOf(result, 'Search')).toMatchObject({
      errorType: 'Sandbox.Timedout',
      killed: 'timeout',
      answered: false,
    });
    await judge();
  }, 300_000);

  it('one S3 request that never gets an answer', async () => {
    const { result, judge } = await faultCase('hung', {
      s3Faults: [{ method: 'GET', path: /\/rows\/0\/1\.arrow/, fault: 'hang' }],
      // Bounded by the function's timeout at worst (the state's own is 15 minutes).
      functionOverrides: { CountShard: { timeoutSeconds: 15 } },
    });
    expect(result.s3Log!.filter((l) => l.fault === 'hang')).toHaveLength(1);
    await judge();
  }, 300_000);

  it('a burst of 503 Slow Down answers', async () => {
    const { result, judge } = await faultCase('slowdown', {
      s3Faults: [{ method: 'PUT', path: /\/scatter\//, count: 5, fault: '503' }],
    });
    expect(result.s3Log!.filter((l) => l.fault === '503')).toHaveLength(5);
    await judge();
  }, 300_000);
});

/** A work file of each stage, read by the next. */
const STAGES: { after: string; file: string }[] = [
  { after: 'Scan', file: 'rows/0/1.arrow' },
  { after: 'Count', file: 'counts/1.bin' },
  { after: 'Apply', file: 'scatter/1/0.arrow' },
  { after: 'Parts', file: 'staging/data/part-00001.arrow' },
];

describe('a work file altered or cut short between two states', () => {
  for (const { after, file } of STAGES) {
    for (const [how, change] of [
      ['altered', swapBytes],
      ['truncated', truncate],
    ] as const) {
      it(`${file} ${how} after ${after}`, async () => {
        let changed = 0;
        const { judge } = await faultCase(`${how}-${after.toLowerCase()}`, {
          afterState: { [after]: (done) => change(done, file).then(() => void changed++) },
        });
        expect(changed, `${file} ${how} once`).toBe(1);
        await judge();
      }, 300_000);
    }
  }

  for (const [how, change] of [
    ['altered', swapBytes],
    ['truncated', truncate],
  ] as const) {
    it(`a staged release file ${how} after Verify is refused at Publish`, async () => {
      const name = `staged-${how}`;
      let changed = 0;
      const { result, judge } = await faultCase(name, {
        afterState: {
          Verify: (done) => change(done, 'staging/data/part-00000.csv').then(() => void changed++),
        },
      });
      expect(changed).toBe(1);
      expect(result.ok, 'Publish refuses a file that is not the one verified').toBe(false);
      expect(invocationsOf(result, 'Publish').every((i) => !i.ok)).toBe(true);
      await judge();
    }, 300_000);
  }
});

/** Whether a logged request wrote or deleted a lock (the run's or the release folder's). */
const touchesLock = (l: S3FaultLog) =>
  l.status !== undefined &&
  l.status < 300 &&
  ((['PUT', 'DELETE'].includes(l.method) && /(lock\.json|\.ppdp-lock)/.test(l.path)) ||
    /(lock\.json|\.ppdp-lock)/.test(l.body ?? ''));

describe('starts of the same spec', () => {
  it('a duplicate start after the first finished rewrites nothing and reports no failure', async () => {
    await drop('again');
    const first = await start('again');
    expect(first.error).toBeUndefined();
    await expectReference('again');
    const release = (await published('again'))!.prefix;
    const onDisk = () =>
      new Map([...objectsOnDisk()].filter(([path]) => path.startsWith(`${BUCKET}/${release}`)));
    const before = onDisk();
    const others = othersOnDisk('again');
    await start('again');
    expect(onDisk(), 'the published files, not rewritten').toEqual(before);
    await expectReference('again');
    expect(
      await local.store.head('releases/again/error.json'),
      'no failure recorded for a published release',
    ).toBe(undefined);
    expect(othersOnDisk('again')).toEqual(others);
  }, 400_000);

  it('two simultaneous starts: one publishes, the other is refused without touching its locks', async () => {
    await drop('twin');
    const others = othersOnDisk('twin');
    // Each through its own logging proxy (no faults), to see what each wrote.
    const [a, b] = await Promise.all([start('twin', { s3Faults: [] }), start('twin', { s3Faults: [] })]);
    expect(
      [a, b].filter((r) => r.ok),
      'exactly one publishes',
    ).toHaveLength(1);
    const loser = a.ok ? b : a;
    expect(
      loser.invocations.filter((i) => i.state !== 'Plan' && i.state !== 'ReportFailure'),
      'the other stops at Plan, before any work',
    ).toEqual([]);
    expect(loser.s3Log!.filter(touchesLock), 'the other wrote or removed no lock').toEqual([]);
    await expectReference('twin');
    expect(othersOnDisk('twin')).toEqual(others);
  }, 400_000);
});
