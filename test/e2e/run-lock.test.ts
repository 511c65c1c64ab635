/**
 * One execution per run (src/pipeline/lock.ts): with PPDP_RUN_LOCK=on (as deployed) a second
 * start of the same release is refused by Plan and touches nothing; the lock is free again
 * after the run failed on the failure path, after it went stale, or for the same execution's
 * retried Plan. Without the setting (the CLI) a release may be repeated.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { lockRun, RUN_LOCK_ENV, RunUnderWayError, STALE_LOCK_MS } from '../../src/pipeline/lock.ts';
import { fileUrl, putJson, type Store, storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

afterEach(() => {
  delete process.env[RUN_LOCK_ENV];
});

async function workArea(): Promise<{ store: Store; work: string }> {
  const loc = await storeResolver().open(fileUrl(mkdtempSync(join(tmpdir(), 'ppdp-lock-')), true));
  return { store: loc.store, work: `${loc.key}work/adult/0123abcd/` };
}

const refusal = async (p: Promise<unknown>) => {
  const e = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(e).toBeInstanceOf(RunUnderWayError);
  return e as RunUnderWayError;
};

describe('the run lock', () => {
  it('refuses a second start of a run that is under way, naming the run, the lock and the way out', async () => {
    process.env[RUN_LOCK_ENV] = 'on';
    const { store, work } = await workArea();
    const t0 = Date.parse('2026-11-24T10:00:00Z');
    await lockRun(store, work, '0123abcd', 'adult-a', t0);
    expect(JSON.parse(readFileSync(`/${work}lock.json`, 'utf8'))).toMatchObject({
      format: 'ppdp-lock/1',
      runId: '0123abcd',
      at: '2026-11-24T10:00:00.000Z',
    });
    const e = await refusal(lockRun(store, work, '0123abcd', 'adult-b', t0 + 60_000));
    expect(e.code).toBe('E_RUN_UNDER_WAY');
    expect(e.message).toContain('run 0123abcd of this release was started at 2026-11-24T10:00:00.000Z');
    expect(e.message).toContain(`${work}lock.json`);
    expect(e.hint).toMatch(/redrive/);
    // Still held just before it goes stale; free after.
    await refusal(lockRun(store, work, '0123abcd', 'adult-b', t0 + STALE_LOCK_MS - 1));
    await lockRun(store, work, '0123abcd', 'adult-b', t0 + STALE_LOCK_MS);
  });

  it('is free again once the run failed on the failure path (error.json after the lock)', async () => {
    process.env[RUN_LOCK_ENV] = 'on';
    const { store, work } = await workArea();
    const t0 = Date.parse('2026-11-24T10:00:00Z');
    await putJson(store, `${work}error.json`, { format: 'ppdp-error/1', at: '2026-11-24T09:00:00.000Z' });
    await lockRun(store, work, '0123abcd', 'adult-a', t0);
    // An error.json from before the lock is an earlier run's: the lock is still held.
    await refusal(lockRun(store, work, '0123abcd', 'adult-b', t0 + 1000));
    await putJson(store, `${work}error.json`, { format: 'ppdp-error/1', at: '2026-11-24T10:05:00.000Z' });
    await lockRun(store, work, '0123abcd', 'adult-b', t0 + 10 * 60_000);
  });

  it('lets the same execution take it again (a retried or redriven Plan) but no other', async () => {
    process.env[RUN_LOCK_ENV] = 'on';
    const { store, work } = await workArea();
    await lockRun(store, work, '0123abcd', 'adult-0123abcd');
    const before = readFileSync(`/${work}lock.json`, 'utf8');
    await lockRun(store, work, '0123abcd', 'adult-0123abcd');
    expect(readFileSync(`/${work}lock.json`, 'utf8'), 'its own lock, kept as it was').toBe(before);
    const e = await refusal(lockRun(store, work, '0123abcd', 'by-hand'));
    expect(e.message).toContain('(adult-0123abcd)');
    await refusal(lockRun(store, work, '0123abcd', undefined));
  });

  it('is taken by exactly one of many starts at once (a conditional write, no read-back)', async () => {
    process.env[RUN_LOCK_ENV] = 'on';
    const { store, work } = await workArea();
    const starts = await Promise.allSettled(
      Array.from({ length: 8 }, (_, i) => lockRun(store, work, '0123abcd', `start-${i}`)),
    );
    expect(starts.filter((s) => s.status === 'fulfilled')).toHaveLength(1);
    for (const s of starts.filter((s) => s.status === 'rejected'))
      expect((s as PromiseRejectedResult).reason).toBeInstanceOf(RunUnderWayError);
  });

  it('stops a duplicate execution in Plan; the CLI (no PPDP_RUN_LOCK) may repeat a release', async () => {
    const ws = adultWorkspace(1200);
    const store = fileUrl(join(ws.dir, 'store'), true);
    const request = { spec: ws.spec, store, shards: 2 };
    process.env[RUN_LOCK_ENV] = 'on';
    const first = await executeRelease(request);
    const manifest = readFileSync(new URL(`${first.release}manifest.json`));
    const called: string[] = [];
    const e = await refusal(
      executeRelease(request, {
        wrap: (state, h) => async (input) => {
          called.push(state);
          return h(input);
        },
      }),
    );
    expect(e.message).toContain(`run ${first.plan.runId}`);
    // Locally every error takes the failure path; deployed, this one is not caught at all.
    expect(called).toEqual(['Plan', 'ReportFailure']);
    expect(existsSync(new URL(`${first.plan.work}error.json`)), 'the run under way is untouched').toBe(false);
    expect(readFileSync(new URL(`${first.release}manifest.json`)).equals(manifest)).toBe(true);
    delete process.env[RUN_LOCK_ENV];
    const again = await executeRelease(request);
    expect(again.manifest.runId).toBe(first.plan.runId);
  });
});
