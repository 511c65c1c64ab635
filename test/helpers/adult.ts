/** Shared fixtures: the bundled Adult example, prepared once per test file. */
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { prepareGeneralization } from '../../src/methods/generalization/index.ts';
import type { Prepared } from '../../src/methods/generalization/prepared.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';

export const ADULT_DIR = new URL('../../examples/adult/', import.meta.url).pathname;
export const ADULT_SPEC_PATH = `${ADULT_DIR}release.json`;

export function adultSpec(overrides: Partial<ReleaseSpec> = {}): ReleaseSpec {
  return { ...loadSpec(ADULT_SPEC_PATH), ...overrides };
}

export function prepareAdult(spec: ReleaseSpec = adultSpec()): Prepared {
  return prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
}
