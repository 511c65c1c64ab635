/**
 * One execution per release run, deployed: the bundled Start function (in its own process, as
 * the S3 event or a schedule invokes it) names the execution after the run id, against a local
 * Step Functions endpoint (test/harness/sfn-endpoint.ts) that runs each execution with the
 * synthesized state machine, every Task its bundled handler in its own process, on s3rver.
 * - a spec dropped and started twice, one start after the other or all at once: one execution,
 *   one run of the state machine, one release;
 * - a Plan that crashes after taking its locks (out of memory, after its retries): the
 *   execution stops, the status rule's ReportFailure writes error.json (a code and a hint);
 *   once the memory is raised, dropping the same spec again redrives that execution, which
 *   takes back its own locks and publishes, with no operator step.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bundleHandlers } from '../../infra/bundle.ts';
import { LOCK } from '../../src/pipeline/publish.ts';
import { runIdOf } from '../../src/pipeline/release.ts';
import { type Store, type StoreResolver, storeResolver, utf8 } from '../../src/pipeline/storage/index.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { type DeployedApp, invokeFunction, synthesizeDeployed } from '../harness/deployed.ts';
import { LocalStepFunctions, STATE_MACHINE_ARN } from '../harness/sfn-endpoint.ts';
import { adultWorkspace } from '../helpers/workspace.ts';
import { LocalS3 } from './serverless-s3rver.ts';

const BUCKET = 'ppdp-start';
const s3 = new LocalS3(BUCKET);
const codeDir = mkdtempSync(join(tmpdir(), 'ppdp-start-code-'));
let resolver: StoreResolver;
let store: Store;
let deployed: DeployedApp;
let sfn: LocalStepFunctions;
let endpoint: string;

const ws = adultWorkspace(1200);
const runEnv = { PPDP_ROWS_PER_SHARD: '1200', PPDP_LOG: 'off' }; // one shard: fewer processes

async function drop(name: string, edit?: (spec: Record<string, unknown>) => void): Promise<string> {
  for (const f of readdirSync(ws.dir).filter((f) => f.endsWith('.csv') || f.endsWith('.json'))) {
    const bytes = readFileSync(join(ws.dir, f));
    const spec = f === 'release.json' && edit ? JSON.parse(utf8(bytes)) : undefined;
    if (spec) edit!(spec);
    await store.put(`inbox/${name}/${f}`, spec ? JSON.stringify(spec) : bytes);
  }
  return `s3://${BUCKET}/inbox/${name}/release.json`;
}

/** What the S3 event's rule (or a schedule) does: invoke Start with the spec's URL. */
async function start(spec: string) {
  const answer = await invokeFunction(
    deployed,
    'start.handler',
    { spec },
    {
      s3: s3.options(),
      env: { PPDP_SFN_ENDPOINT: endpoint, PPDP_STATE_MACHINE_ARN: STATE_MACHINE_ARN, PPDP_LOG: 'off' },
    },
  );
  expect(answer.error).toBeUndefined();
  return answer.result as { outcome: string; execution: string; runId: string };
}

/** The published releases of `name`: run folders holding a manifest. */
async function releases(name: string): Promise<string[]> {
  const keys = (await store.list(`releases/${name}/`)).map((o) => o.key);
  return keys.filter((k) => k.endsWith('/manifest.json'));
}

beforeAll(async () => {
  bundleHandlers(codeDir);
  // The stack's three buckets as one: Start and the runs are what is tested here.
  deployed = synthesizeDeployed(codeDir, () => BUCKET);
  await s3.start();
  resolver = storeResolver(s3.options());
  store = (await resolver.open(`s3://${BUCKET}/`)).store;
  sfn = new LocalStepFunctions(deployed, {
    s3: s3.options(),
    env: runEnv,
    // The stack's OnFailure rule: ReportFailure gets the execution-status event.
    onStopped: async (event) => {
      await invokeFunction(sfn.deployed, 'report-failure.handler', event, { s3: s3.options(), env: runEnv });
    },
  });
  endpoint = await sfn.start();
}, 120_000);

afterAll(async () => {
  await sfn.close();
  resolver.close();
  await s3.dispose();
  rmSync(codeDir, { recursive: true, force: true });
});

describe('Start: one execution per run', () => {
  it('names the execution after the run and starts it once when the spec is started twice in a row', async () => {
    const spec = await drop('twice');
    const first = await start(spec);
    const runId = runIdOf(loadSpec(ws.spec));
    expect(first).toMatchObject({ outcome: 'started', execution: `twice-${runId}`, runId });
    await start(spec); // while it runs: Step Functions answers with the running execution
    await sfn.settled();
    expect((await start(spec)).outcome, 'after it succeeded').toBe('duplicate');
    await sfn.settled();
    const runs = [...sfn.executions.values()].filter((e) => e.name.startsWith('twice-'));
    expect(runs.map((e) => [e.name, e.status, e.runs.length])).toEqual([[`twice-${runId}`, 'SUCCEEDED', 1]]);
    expect(JSON.parse(runs[0]!.input)).toEqual({ spec, runId });
    expect(runs[0]!.runs[0]!.invocations.filter((i) => i.state === 'Plan')).toHaveLength(1);
    expect(await releases('twice')).toEqual([`releases/twice/${runId}/manifest.json`]);
  }, 300_000);

  it('runs once when the spec is started three times at once', async () => {
    const spec = await drop('together');
    const outcomes = await Promise.all([start(spec), start(spec), start(spec)]);
    expect(new Set(outcomes.map((o) => o.execution)).size).toBe(1);
    await sfn.settled();
    const runs = [...sfn.executions.values()].filter((e) => e.name.startsWith('together-'));
    expect(runs.map((e) => [e.status, e.runs.length])).toEqual([['SUCCEEDED', 1]]);
    expect(await releases('together')).toHaveLength(1);
  }, 300_000);

  it('a run refused on the failure path is not redriven (it would only fail again): the next drop gets the next name', async () => {
    const spec = await drop('refused', (s) => {
      (s.privacy as { k?: number }[])[0]!.k = 0;
    });
    const first = await start(spec);
    await sfn.settled();
    expect(sfn.executions.get(first.execution)).toMatchObject({
      status: 'FAILED',
      error: 'ppdp.ReleaseFailed',
    });
    const second = await start(spec);
    expect(second).toMatchObject({ outcome: 'started', execution: `${first.execution}-2` });
    await sfn.settled();
    expect(sfn.executions.get(first.execution)!.redriveCount).toBe(0);
    const error = JSON.parse(utf8(await store.get('releases/refused/error.json')));
    expect(error).toMatchObject({
      error: 'SpecError',
      code: expect.stringMatching(/^E_/),
      hint: expect.any(String),
    });
  }, 300_000);

  it('a Plan killed for its memory: reported, then redriven by the same drop once memory is raised', async () => {
    const spec = await drop('crash');
    const runId = runIdOf(loadSpec(ws.spec));
    // Plan's function sized far below what it needs: the harness kills it the moment its
    // memory passes the size, as Lambda does, wherever it is (before or after its locks).
    const small = new Map(
      [...deployed.functions].map(([arn, f]) => [
        arn,
        f.handler === 'plan.handler' ? { ...f, memoryMiB: 64 } : f,
      ]),
    );
    sfn.deployed = { ...deployed, functions: small };
    const first = await start(spec);
    expect(first.outcome).toBe('started');
    await sfn.settled();
    const execution = sfn.executions.get(first.execution)!;
    expect(execution.status).toBe('FAILED');
    const plans = execution.runs[0]!.invocations.filter((i) => i.state === 'Plan');
    expect(plans.map((p) => p.errorType)).toEqual([
      'Runtime.OutOfMemory',
      'Runtime.OutOfMemory',
      'Runtime.OutOfMemory',
    ]);
    // A lock it took names the execution (the redrive takes it back); the status rule's
    // ReportFailure wrote error.json.
    if ((await store.head(`releases/crash/${runId}/${LOCK}`)) !== undefined) {
      const folderLock = JSON.parse(utf8(await store.get(`releases/crash/${runId}/${LOCK}`)));
      expect(folderLock.execution).toBe(first.execution);
    }
    const error = JSON.parse(utf8(await store.get('releases/crash/error.json')));
    expect(error).toMatchObject({ error: 'Runtime.OutOfMemory', code: 'E_OUT_OF_MEMORY', published: false });
    expect(error.hint).toMatch(/raise the memory setting/);

    sfn.deployed = deployed; // the memory raised, deployed again
    expect(await start(spec)).toMatchObject({ outcome: 'redriven', execution: first.execution });
    await sfn.settled();
    expect(execution).toMatchObject({ status: 'SUCCEEDED', redriveCount: 1 });
    expect([...sfn.executions.keys()].filter((n) => n.startsWith('crash-'))).toEqual([first.execution]);
    expect(await releases('crash')).toEqual([`releases/crash/${runId}/manifest.json`]);
    expect(await store.head(`releases/crash/${runId}/${LOCK}`), 'its lock given up').toBeUndefined();
    expect(await store.head('releases/crash/error.json'), 'the failure record cleared').toBeUndefined();
  }, 300_000);
});
