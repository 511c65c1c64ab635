/**
 * The Lambda bundle: esbuild output with the WASM core embedded runs a whole release when
 * each state is bound to its bundled handler (as Lambda would call it).
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { bundleHandlers, handlerNames } from '../../infra/bundle.ts';
import { HANDLER_FILES } from '../../infra/stacks/release-stack.ts';
import { RELEASE_ERRORS, TASKS, type TaskName, taskOf } from '../../src/pipeline/definition.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const outdir = mkdtempSync(join(tmpdir(), 'ppdp-lambda-'));
process.env.PPDP_LOG = 'off'; // the handlers' JSON log lines (Lambda's CloudWatch output)
afterAll(() => {
  rmSync(outdir, { recursive: true, force: true });
  delete process.env.PPDP_LOG;
});

describe('the Lambda bundle', () => {
  it('has one handler per Task, with the WASM module embedded (no .wasm file beside it)', () => {
    bundleHandlers(outdir);
    expect(handlerNames()).toEqual(Object.values(HANDLER_FILES).sort());
    for (const file of Object.values(HANDLER_FILES))
      expect(existsSync(join(outdir, `${file}.mjs`)), file).toBe(true);
    const all = readdirSync(outdir, { recursive: true }).map(String);
    expect(all.some((f) => f.endsWith('.wasm'))).toBe(false);
    const chunks = all.filter((f) => f.endsWith('.mjs')).map((f) => readFileSync(join(outdir, f), 'utf8'));
    expect(chunks.some((c) => c.includes('aws-local-stepfunctions'))).toBe(false);
    // The deployed Catch matches error names: the bundle must keep ppdp's class names (an
    // esbuild rename on a name clash, e.g. StoreError2, would let that error skip error.json).
    for (const name of RELEASE_ERRORS)
      expect(
        chunks.some((c) => c.includes(`var ${name} = class extends`)),
        name,
      ).toBe(true);
  });

  it('runs a release when every state is its bundled handler', async () => {
    const ws = adultWorkspace(1200);
    const direct = join(ws.dir, 'out', 'direct');
    await releaseTo(ws.spec, direct);
    const bundled = new Map<string, (input: unknown) => Promise<unknown>>();
    for (const task of TASKS) {
      const mod = await import(pathToFileURL(join(outdir, `${HANDLER_FILES[task]}.mjs`)).href);
      bundled.set(task, mod.handler);
    }
    const called = new Set<string>();
    const out = join(ws.dir, 'out', 'lambda');
    await executeRelease(
      { spec: ws.spec, out, shards: 2 },
      {
        // By the function a state runs (VerifyPart and VerifyShard both run VerifySlice).
        wrap: (state, h) => {
          const fn = bundled.get(taskOf(state) as TaskName);
          return fn
            ? async (input) => {
                called.add(taskOf(state));
                return fn(input);
              }
            : h; // the local lister Tasks exist only in the local engine
        },
      },
    );
    // A sharded release runs every state but the single-task route and the failure path.
    expect([...called].sort()).toEqual(TASKS.filter((t) => t !== 'Build' && t !== 'ReportFailure').sort());
    for (const name of ['data.arrow', 'data.csv']) {
      expect(readFileSync(join(out, name)).equals(readFileSync(join(direct, name))), name).toBe(true);
    }
  });
});
