/**
 * ppdp as a library: `import { release } from 'ppdp'`. A thin wrapper over the engine the
 * CLI runs (src/pipeline/engine.ts): the same state machine, the same independent
 * verification, the same files. The promise resolves with the report only once the release
 * is verified and published; otherwise it rejects with a PpdpError (code, message, hint).
 */

import type { ReleaseReport } from './contracts/report.ts';
import { PpdpError } from './errors.ts';
import { tsGroupingKernel } from './kernels/groupby/reference.ts';
import { wasmGroupingKernel } from './kernels/groupby/wasm.ts';
import { executeRelease } from './pipeline/engine.ts';

export type { ReleaseReport } from './contracts/report.ts';
export { PpdpError };

export interface ReleaseApiOptions {
  /** Folder to publish into (created if missing). Give this or `store`. */
  readonly out?: string;
  /** Instead of `out`: a store root (`s3://bucket/prefix` or a folder); the release goes to `<store>/releases/<name>/<runId>/`. */
  readonly store?: string;
  /** S3-compatible endpoint for `s3://` URLs, e.g. `http://127.0.0.1:4568`. */
  readonly endpoint?: string;
  /** Grouping kernel: `wasm` (default) or `ts`, the plain-TypeScript reference. */
  readonly kernel?: 'wasm' | 'ts';
  /** `local` (default): the state machine in this process; `direct`: the same states called in order. */
  readonly engine?: 'local' | 'direct';
  /** Row shards to fan out over (default: one per 1,000,000 rows). */
  readonly shards?: number;
  /** Progress lines for a person (the CLI writes them to stderr). */
  readonly progress?: (line: string) => void;
}

/**
 * Builds, verifies and publishes the release that the spec file describes (paths in the spec
 * are relative to the spec's folder) and returns its report, the content of `report.json`.
 */
export async function release(spec: string, options: ReleaseApiOptions): Promise<ReleaseReport> {
  if (!options || (options.out === undefined) === (options.store === undefined)) {
    throw new PpdpError(
      'E_USAGE',
      'release(spec, options) needs exactly one of options.out and options.store',
      "e.g. release('examples/adult/release.json', { out: 'out/adult' })",
    );
  }
  const result = await executeRelease(
    {
      spec,
      ...(options.out !== undefined ? { out: options.out } : { store: options.store! }),
      ...(options.shards !== undefined ? { shards: options.shards } : {}),
    },
    {
      engine: options.engine ?? 'local',
      kernel: options.kernel === 'ts' ? tsGroupingKernel : wasmGroupingKernel,
      progress: options.progress,
      ...(options.endpoint ? { s3: { endpoint: options.endpoint } } : {}),
    },
  );
  return result.report;
}
