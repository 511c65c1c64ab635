/** The report's `spec` header, taken from the release spec itself (not from what a method says). */
import { basename } from 'node:path';
import type { ReleaseReport } from '../contracts/report.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';

export function specSummary(spec: ReleaseSpec): ReleaseReport['spec'] {
  const header = {
    file: basename(spec.file),
    method: spec.method.name,
    seed: spec.seed,
    escapeFormulas: spec.format.escapeFormulas === true,
  };
  const { method } = spec;
  return method.name === 'generalization'
    ? { ...header, maxSuppression: method.maxSuppression, suppressed: method.suppressed }
    : header;
}
