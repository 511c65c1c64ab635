/**
 * Keys as data: a spec in a bucket is taken at `inbox/<name>/release.json` only, `<name>` one
 * plain folder, and the release is named after that folder. A key that tries to be a path
 * — `..` to reach another tenant's inbox, a further `inbox/` to take another tenant's name,
 * `.`, an empty folder, a deeper folder, an encoded `/` (`%2F`, never decoded) — is refused with E_SPEC_PATH before anything is read,
 * and nothing is written under any release name (not even a failure record). On Amazon S3
 * such keys are objects of their own, so the bucket here keeps them literal too (LocalS3 with
 * literal keys; s3rver alone would resolve `..` into the victim's own object). Each attack is
 * run on the CLI-to-S3 path (the engine in this process, and the built CLI in its own) and
 * deployed (the Start function the S3 event invokes, and the state machine started directly,
 * every function its bundled handler in its own process), behind a proxy that logs every S3
 * request: a refusal asks the store nothing at all, and the bucket is unchanged, byte for byte.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleHandlers } from '../../infra/bundle.ts';
import type { PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { type Store, type StoreResolver, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { type DeployedApp, invokeFunction, runDeployed, synthesizeDeployed } from '../harness/deployed.ts';
import { S3FaultProxy } from '../harness/s3-faults.ts';
import { LocalStepFunctions, STATE_MACHINE_ARN } from '../harness/sfn-endpoint.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const BUCKET = 'ppdp-attacks';
const s3 = new LocalS3(BUCKET, [], true);
const codeDir = mkdtempSync(join(tmpdir(), 'ppdp-attacks-code-'));
let resolver: StoreResolver;
let store: Store;
let deployed: DeployedApp;
let sfn: LocalStepFunctions;
let sfnEndpoint: string;
const ws = adultWorkspace(300);
const runEnv = { PPDP_ROWS_PER_SHARD: '300', PPDP_LOG: 'off' };

/** An attack: the spec's key, what is dropped with it, and what today's engine would do. */
interface Attack {
  readonly key: string;
  /** The spec alone (a run that fails), or the spec and the Adult files beside it. */
  readonly input: boolean;
  readonly problem: RegExp;
}

const ATTACKS: readonly Attack[] = [
  // The spec's folder still holds `..`: its "adult.csv" resolves to the victim's.
  { key: 'inbox/evil/../victim/release.json', input: false, problem: /has a '\.\.' folder/ },
  // The name is the folder after the last inbox/: a failure overwrites the victim's error.json…
  { key: 'inbox/evil/inbox/victim/release.json', input: false, problem: /has 3 folders/ },
  // …and a release of the attacker's own rows is published under releases/victim/.
  { key: 'inbox/evil/inbox/victim/release.json', input: true, problem: /has 3 folders/ },
  // `.` resolves away: the spec reads inbox/x/'s files.
  { key: 'inbox/./x/release.json', input: true, problem: /has a '\.' folder/ },
  { key: 'inbox//release.json', input: false, problem: /has an empty folder/ },
  { key: 'inbox/a/b/release.json', input: true, problem: /has 2 folders/ },
  // An encoded slash is a character of the key: read decoded, it ran the victim's own spec.
  { key: 'inbox/victim%2Frelease.json', input: true, problem: /has 0 folders/ },
];

/** Every object of the bucket with the SHA-256 of its bytes. */
async function snapshot(): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const o of await store.list('')) {
    out[o.key] = createHash('sha256')
      .update(await store.get(o.key))
      .digest('hex');
  }
  return out;
}

/** Drops the Adult spec at `key`, with the Adult files beside it when `input`. */
async function drop(key: string, input: boolean, edit?: (spec: Record<string, unknown>) => void) {
  const folder = key.slice(0, key.lastIndexOf('/') + 1);
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
    if (f !== 'release.json' && !input) continue;
    let bytes: Uint8Array | string = readFileSync(join(ws.dir, f));
    if (f === 'release.json' && edit) {
      const spec = JSON.parse(utf8(bytes));
      edit(spec);
      bytes = JSON.stringify(spec);
    }
    await store.put(f === 'release.json' ? key : `${folder}${f}`, bytes);
  }
  return `s3://${BUCKET}/${key}`;
}

/** A proxy in front of the bucket that logs every request made through it. */
const logged = () => S3FaultProxy.start(s3.endpoint, []);

/** What the refusal must say: the code (where it is shown), the key, the rule and how to fix it. */
function expectRefusal(text: string, a: Attack, code = true) {
  if (code) expect(text).toMatch(/E_SPEC_PATH/);
  expect(text).toContain(`s3://${BUCKET}/${a.key}`);
  expect(text).toMatch(a.problem);
  expect(text).toMatch(/inbox\/<name>\/release\.json/);
  expect(text).toMatch(/nothing was read/);
  expect(text).toMatch(/e\.g\. inbox\/adult\/release\.json/);
}

const cases = ATTACKS.map((a) => [`${a.key}${a.input ? ' (with an input beside it)' : ''}`, a] as const);

beforeAll(async () => {
  await s3.start();
  resolver = storeResolver(s3.options());
  store = (await resolver.open(`s3://${BUCKET}/`)).store;
  // The tenants: the victim, and x (whose folder `inbox/./x/` resolves to), each with their
  // files and a failure record of their own; a published release of the victim's.
  for (const tenant of ['victim', 'x', 'a']) await drop(`inbox/${tenant}/release.json`, true);
  for (const tenant of ['victim', 'x', 'a'])
    await store.put(`releases/${tenant}/error.json`, `{"format":"ppdp-error/1","tenant":"${tenant}"}\n`);
  await store.put('releases/victim/0123456789abcdef/manifest.json', '{"format":"ppdp-release/1"}\n');
  bundleHandlers(codeDir);
  // The stack's three buckets as one: a key that could reach another tenant's files anywhere.
  deployed = synthesizeDeployed(codeDir, () => BUCKET);
  sfn = new LocalStepFunctions(deployed, {
    s3: s3.options(),
    env: runEnv,
    onStopped: async (event) => {
      await invokeFunction(sfn.deployed, 'report-failure.handler', event, { s3: s3.options(), env: runEnv });
    },
  });
  sfnEndpoint = await sfn.start();
}, 180_000);

afterAll(async () => {
  await sfn?.close();
  resolver?.close();
  await s3.dispose();
  rmSync(codeDir, { recursive: true, force: true });
});

describe('a spec key that is not inbox/<name>/release.json, on the CLI-to-S3 path', () => {
  it.each(cases)(
    '%s: refused before anything is read, nothing written',
    async (_, a) => {
      const spec = await drop(a.key, a.input);
      const before = await snapshot();
      const proxy = await logged();
      try {
        const run = executeRelease(
          { spec, store: `s3://${BUCKET}/` },
          { s3: s3.options({ endpoint: proxy.endpoint }) },
        );
        const refusal = (await run.then(
          () => undefined,
          (e: unknown) => e,
        )) as PpdpError | undefined;
        expect(refusal?.name).toBe('SpecError');
        expect(refusal!.code).toBe('E_SPEC_PATH');
        expectRefusal(`${refusal!.message}\n${refusal!.hint}\n${refusal!.code}`, a);
        // The built CLI, in its own process: a non-zero exit and the same refusal (a person reads
        // the message and the hint; the CLI shows no code).
        const r = spawnSync(
          process.execPath,
          [CLI, 'release', spec, '--store', `s3://${BUCKET}`, '--endpoint', proxy.endpoint, '--quiet'],
          { encoding: 'utf8', env: s3.cliEnv() },
        );
        expect(r.status, r.stderr).not.toBe(0);
        expectRefusal(r.stderr, a, false);
        // Not one request: nothing read, nothing written, under any name.
        expect(proxy.log.map((l) => `${l.method} ${l.path}`)).toEqual([]);
      } finally {
        await proxy.stop();
      }
      expect(await snapshot()).toEqual(before);
    },
    60_000,
  );
});

describe('a spec key that is not inbox/<name>/release.json, deployed', () => {
  it.each(cases)(
    '%s: Start refuses it and starts nothing',
    async (_, a) => {
      const spec = await drop(a.key, a.input);
      const before = await snapshot();
      const executions = sfn.executions.size;
      const proxy = await logged();
      try {
        // What the S3 event's rule sends (its pattern, inbox/*/release.json, matches every key here).
        const answer = await invokeFunction(
          deployed,
          'start.handler',
          { spec },
          {
            s3: s3.options({ endpoint: proxy.endpoint }),
            env: {
              PPDP_SFN_ENDPOINT: sfnEndpoint,
              PPDP_STATE_MACHINE_ARN: STATE_MACHINE_ARN,
              PPDP_LOG: 'off',
            },
          },
        );
        expect(answer.ok).toBe(false);
        expect(answer.error?.errorType).toBe('SpecError');
        expectRefusal(answer.error!.errorMessage, a);
        await sfn.settled();
        expect(sfn.executions.size, 'no execution started').toBe(executions);
        expect(proxy.log.map((l) => `${l.method} ${l.path}`)).toEqual([]);
      } finally {
        await proxy.stop();
      }
      expect(await snapshot()).toEqual(before);
    },
    120_000,
  );

  it.each(cases)(
    '%s: the state machine started with it directly refuses it in Plan',
    async (_, a) => {
      const spec = await drop(a.key, a.input);
      const before = await snapshot();
      const result = await runDeployed(deployed, { spec }, { s3: s3.options(), s3Faults: [], env: runEnv });
      expect(result.ok).toBe(false);
      const plans = result.invocations.filter((i) => i.state === 'Plan');
      expect(plans.map((p) => p.errorType)).toEqual(['SpecError']);
      expect(result.invocations.map((i) => i.state)).toEqual(['Plan', 'ReportFailure']);
      // Plan read nothing, ReportFailure wrote nothing: not one request of any function.
      expect(result.s3Log?.map((l) => `${l.method} ${l.path}`)).toEqual([]);
      expect(await snapshot()).toEqual(before);
    },
    120_000,
  );
});

describe('a spec at inbox/<name>/release.json whose paths leave its folder', () => {
  const hostile = (s: Record<string, unknown>) => Object.assign(s, { input: 'sub/../../victim/adult.csv' });

  it('is refused naming the field; only its own failure records are written', async () => {
    const spec = await drop('inbox/evil/release.json', false, hostile);
    const before = await snapshot();
    const proxy = await logged();
    try {
      const refusal = (await executeRelease(
        { spec, store: `s3://${BUCKET}/` },
        { s3: s3.options({ endpoint: proxy.endpoint }) },
      ).then(
        () => undefined,
        (e: unknown) => e,
      )) as PpdpError | undefined;
      expect(refusal?.code).toBe('E_SPEC_PATH');
      expect(refusal!.message).toMatch(/input 'sub\/\.\.\/\.\.\/victim\/adult\.csv' leads out/);
      // What was asked of the store: the spec itself, then the failure records under evil.
      for (const l of proxy.log) {
        expect(l.path, l.method).toMatch(
          l.method === 'PUT'
            ? new RegExp(`^/${BUCKET}/(work|releases)/evil/`)
            : new RegExp(`^/${BUCKET}/inbox/evil/release\\.json`),
        );
      }
    } finally {
      await proxy.stop();
    }
    const after = await snapshot();
    const added = Object.keys(after).filter((k) => !(k in before));
    expect(added.sort()).toEqual(['releases/evil/error.json', 'work/evil/failed/error.json']);
    for (const [k, sha] of Object.entries(before)) expect(after[k], k).toBe(sha);
  }, 60_000);
});
