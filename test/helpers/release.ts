/** A release through the engine the CLI runs (the state machine in process), into a folder. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EncodedTable } from '../../src/data/table.ts';
import type { GroupingKernel } from '../../src/kernels/groupby/kernel.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { buildGeneralization } from '../../src/methods/generalization/index.ts';
import type { MethodContext } from '../../src/methods/method.ts';
import { methodFor } from '../../src/methods/registry.ts';
import { type EngineOptions, executeRelease } from '../../src/pipeline/engine.ts';
import { streams } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';

export async function releaseTo(spec: string, out: string, options: EngineOptions = {}) {
  const { report, manifest } = await executeRelease({ spec, out }, options);
  return { report, manifest, out };
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
