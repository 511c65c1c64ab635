/** A release through the engine the CLI runs (the state machine in process), into a folder. */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { EncodedTable } from '../../src/data/table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { buildGeneralization } from '../../src/methods/generalization/index.ts';
import { type EngineOptions, executeRelease } from '../../src/pipeline/engine.ts';
import { streams } from '../../src/pipeline/release.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';

export async function releaseTo(spec: string, out: string, options: EngineOptions = {}) {
  const { report, manifest } = await executeRelease({ spec, out }, options);
  return { report, manifest, out };
}

/** A full-domain generalization built in memory (WASM grouping kernel, silent), nothing staged. */
export function buildGeneralizationInMemory(spec: ReleaseSpec, table: EncodedTable) {
  return buildGeneralization({
    spec,
    table,
    kernel: wasmGroupingKernel,
    time: (_, work) => work(),
    say: () => {},
    random: streams(spec, table),
  });
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
