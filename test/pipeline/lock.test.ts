/**
 * Plan's two locks, as deployed (PPDP_RUN_LOCK=on): the run lock in the work area first, then
 * the release folder's lock, both naming the execution. A start refused by either touches no
 * lock it does not own; a retried or redriven execution takes its own locks back, even where
 * the folder's lock was written on another machine (each Lambda is one) by a Plan that was
 * killed after taking it.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OutputError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { RUN_LOCK_ENV, RunUnderWayError } from '../../src/pipeline/lock.ts';
import { LOCK } from '../../src/pipeline/publish.ts';
import { plan } from '../../src/pipeline/states/plan.ts';
import type { PhaseEnv, PlanResult } from '../../src/pipeline/states/types.ts';
import { fileUrl, storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const tmp = mkdtempSync(join(tmpdir(), 'ppdp-plan-lock-'));
const env: PhaseEnv = { stores: storeResolver(), kernel: wasmGroupingKernel, log: () => {}, tmp };
beforeAll(() => {
  process.env[RUN_LOCK_ENV] = 'on';
});
afterAll(() => {
  delete process.env[RUN_LOCK_ENV];
  env.stores.close();
  rmSync(tmp, { recursive: true, force: true });
});

/** A release under a store, planned by execution `first`: both its locks are held. */
async function planned(first: string) {
  const ws = adultWorkspace(300);
  const request = { spec: ws.spec, store: fileUrl(join(ws.dir, 'store'), true) };
  const result = await plan({ request, execution: first }, env);
  const folderLock = new URL(`${result.release}${LOCK}`);
  const runLock = new URL(`${result.work}lock.json`);
  return { request, result, folderLock, runLock };
}

/** Rewrites the folder's lock as if another machine wrote it (a Lambda), or a dead process here. */
function rewriteLock(url: URL, fields: Record<string, unknown>): string {
  const text = `${JSON.stringify({ ...JSON.parse(readFileSync(url, 'utf8')), ...fields }, null, 2)}\n`;
  writeFileSync(url, text);
  return text;
}

const refusal = async (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: unknown) => e as Error,
  );

describe("Plan's locks", () => {
  it('a second execution refused by the run lock leaves the running one its folder lock', async () => {
    const { request, folderLock, runLock } = await planned('adult-A');
    // The folder's lock as a finished process on this machine left it: stale by its pid, so
    // a claim taken first would take it over (and give it up again on the refusal).
    const folderText = rewriteLock(folderLock, { pid: 2 ** 22 + 1, process: 'another-process' });
    const runText = readFileSync(runLock, 'utf8');
    const e = await refusal(plan({ request, execution: 'by-hand' }, env));
    expect(e).toBeInstanceOf(RunUnderWayError);
    expect(readFileSync(folderLock, 'utf8'), 'the folder lock is untouched').toBe(folderText);
    expect(readFileSync(runLock, 'utf8'), 'the run lock is untouched').toBe(runText);
  });

  it('a redriven execution takes back the locks of its Plan killed on another machine', async () => {
    const { request, result, folderLock } = await planned('adult-B');
    const lock = JSON.parse(rewriteLock(folderLock, { host: 'sandbox-elsewhere', pid: 8 })) as {
      token: string;
    };
    const again: PlanResult = await plan({ request, execution: 'adult-B' }, env);
    expect(again.runId).toBe(result.runId);
    expect(again.claim.token, "the folder's lock is its own: Publish will find its token").toBe(lock.token);
    // Another execution of the same run is refused while it holds them.
    expect(await refusal(plan({ request, execution: 'adult-B-2' }, env))).toBeInstanceOf(RunUnderWayError);
  });

  it('a start refused by the folder lock gives back the run lock it took, and only that', async () => {
    const { request, result, folderLock, runLock } = await planned('adult-C');
    // The run failed on the failure path (its error.json after its lock): the run lock is
    // free; the folder's lock is still held by that execution, on another machine.
    writeFileSync(
      new URL(`${result.work}error.json`),
      JSON.stringify({ format: 'ppdp-error/1', at: new Date(Date.now() + 1000).toISOString() }),
    );
    const folderText = rewriteLock(folderLock, { host: 'sandbox-elsewhere' });
    const e = await refusal(plan({ request, execution: 'adult-C-2' }, env));
    expect(e).toBeInstanceOf(OutputError);
    expect((e as OutputError).code).toBe('E_OUT_LOCKED');
    expect(existsSync(runLock), 'its own run lock, given back').toBe(false);
    expect(readFileSync(folderLock, 'utf8')).toBe(folderText);
  });

  it('refuses a run id the spec and input no longer give, before any lock', async () => {
    const ws = adultWorkspace(300);
    const store = fileUrl(join(ws.dir, 'store'), true);
    const e = await refusal(plan({ request: { spec: ws.spec, store, runId: '0000000000000000' } }, env));
    expect(e).toMatchObject({ code: 'E_RUN_CHANGED' });
    expect(e!.message).toMatch(
      /started for run 0000000000000000, they now give run [0-9a-f]{16}; nothing was written/,
    );
    expect((e as OutputError).hint).toMatch(/drop release.json again/);
    expect(existsSync(join(ws.dir, 'store')), 'nothing written').toBe(false);
  });
});
