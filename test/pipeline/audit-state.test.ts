/**
 * The Audit state reads a release's staged parts one at a time: each part's file is fetched,
 * read and let go before the next (deployed, the parts of a large release together would not
 * fit a function's /tmp), and its answer is the audit of the whole release.
 */
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it, vi } from 'vitest';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import { audit, readAudit } from '../../src/pipeline/states/audit.ts';
import type { PhaseEnv } from '../../src/pipeline/states/types.ts';
import * as work from '../../src/pipeline/states/work.ts';
import { storeResolver } from '../../src/pipeline/storage/index.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

/** While the Audit state runs alone: each stagedPaths call's names, and whether its files were let go. */
const calls: { names: string[]; disposed: boolean }[] = [];
let watching = false;

vi.mock('../../src/pipeline/states/work.ts', async (original) => {
  const real = await original<typeof work>();
  return {
    ...real,
    stagedPaths: async (...args: Parameters<typeof real.stagedPaths>) => {
      if (!watching) return real.stagedPaths(...args);
      const call = { names: [...args[2]], disposed: false };
      // A part is fetched only when every earlier call's files are gone.
      expect(calls.filter((c) => !c.disposed)).toEqual([]);
      calls.push(call);
      const staged = await real.stagedPaths(...args);
      return {
        ...staged,
        dispose: () => {
          call.disposed = true;
          staged.dispose();
        },
      };
    },
  };
});

describe('the Audit state', () => {
  it('fetches the staged parts one at a time and lets each go before the next', async () => {
    const ws = adultWorkspace(3000);
    ws.editSpec((s) => {
      (s.attributes as Record<string, { type: string }>).occupation!.type = 'insensitive';
    });
    const dir = join(ws.dir, 'work');
    const url = pathToFileURL(`${dir}/`).href;
    await executeRelease(
      { spec: ws.spec, out: join(ws.dir, 'out'), work: url, rowsPerShard: 1000, rowsPerPart: 700 },
      { workers: 0 },
    );
    forgetAll();
    const env: PhaseEnv = { stores: storeResolver(), kernel: wasmGroupingKernel, log: () => {} };
    const released = await readAudit(await work.openWork(url, env));
    watching = true;
    try {
      await audit({ work: url }, env);
    } finally {
      watching = false;
    }
    const parts = calls.map((c) => c.names);
    expect(parts.length).toBeGreaterThan(2);
    for (const [i, names] of parts.entries()) expect(names).toEqual([work.partFiles(parts.length, i).arrow]);
    expect(calls.every((c) => c.disposed)).toBe(true);
    // The same answer as the release's own Audit state gave.
    expect(await readAudit(await work.openWork(url, env))).toEqual(released);
  });
});
