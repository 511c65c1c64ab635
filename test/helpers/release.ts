/** A release through the engine the CLI runs (the state machine in process), into a folder. */
import { type EngineOptions, executeRelease } from '../../src/pipeline/engine.ts';

export async function releaseTo(spec: string, out: string, options: EngineOptions = {}) {
  const { report, manifest } = await executeRelease({ spec, out }, options);
  return { report, manifest, out };
}
