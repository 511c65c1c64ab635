/** A release through the engine the CLI runs (the state machine in process), into a folder. */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { EncodedTable } from '../../src/data/table.ts';
import type { GroupingKernel } from '../../src/kernels/groupby/kernel.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { buildGeneralization } from '../../src/methods/generalization/index.ts';
import type { MethodContext } from '../../src/methods/method.ts';
import { methodFor } from '../../src/methods/registry.ts';
import { type EngineOptions, executeRelease } from '../../src/pipeline/engine.ts';
import { streams } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import type { Workspace } from './workspace.ts';

export async function releaseTo(spec: string, out: string, options: EngineOptions = {}) {
  const { report, manifest } = await executeRelease({ spec, out }, options);
  return { report, manifest, out };
}

/**
 * Releases `inputs` of `ws` under k-anonymity (k = 2) with `attributes` and `format`, and
 * expects each one's data bytes to be the first one's (the table as CSV).
 */
export async function expectSameRelease(
  ws: Workspace,
  inputs: string[],
  attributes: Record<string, unknown>,
  format: Record<string, unknown> = {},
): Promise<void> {
  const outs: string[] = [];
  for (const input of inputs) {
    const privacy = [{ model: 'k-anonymity', k: 2 }];
    const method = { name: 'generalization', maxSuppression: 0.1 };
    ws.write('release.json', JSON.stringify({ input, format, attributes, privacy, method, seed: 1 }));
    outs.push((await releaseTo(ws.spec, join(ws.dir, 'out', input))).out);
  }
  for (const [i, out] of outs.entries()) {
    for (const name of ['data.csv', 'data.arrow']) {
      const same = readFileSync(join(out, name)).equals(readFileSync(join(outs[0]!, name)));
      expect(same, `${inputs[i]} ${name}`).toBe(true);
    }
  }
}

/** A method's context in memory: silent, untimed, with the spec's random streams. */
function inMemory(spec: ReleaseSpec, table: EncodedTable, kernel: GroupingKernel): MethodContext {
  return { spec, table, kernel, time: (_, work) => work(), say: () => {}, random: streams(spec, table) };
}

/**
 * A full-domain generalization built in memory (WASM grouping kernel, silent), nothing staged;
 * at the `fixed` node (QI name → level) when given, instead of searching.
 */
export function buildGeneralizationInMemory(
  spec: ReleaseSpec,
  table: EncodedTable,
  fixed?: Record<string, number>,
) {
  return buildGeneralization(inMemory(spec, table, wasmGroupingKernel), fixed);
}

/** The spec's method's release built in memory (silent), nothing staged. */
export function buildInMemory(
  spec: ReleaseSpec,
  table: EncodedTable,
  kernel: GroupingKernel = wasmGroupingKernel,
) {
  return methodFor(spec.method.name).build(inMemory(spec, table, kernel));
}

/** Writes a built release's files into `folder` (created): the staged-file lookup a verifier takes. */
export function stageBuilt(
  built: { files: readonly { name: string; content: string | Uint8Array }[] },
  folder: string,
) {
  mkdirSync(folder);
  for (const f of built.files) writeFileSync(join(folder, f.name), f.content);
  return (name: string) => join(folder, name);
}
