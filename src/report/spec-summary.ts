/** The report's `spec` header, taken from the release spec itself (not from what a method says). */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { ReleaseReport } from '../contracts/report.ts';
import type { HierarchySpec, ReleaseSpec } from '../release-spec/spec.ts';
import { emptyRecord } from '../util/record.ts';

export function specSummary(spec: ReleaseSpec): ReleaseReport['spec'] {
  const hierarchies = hierarchyDigests(spec);
  const header = {
    file: basename(spec.file),
    method: spec.method.name,
    seed: spec.seed,
    escapeFormulas: spec.format.escapeFormulas === true,
    ...(Object.keys(hierarchies).length > 0 ? { hierarchies } : {}),
  };
  const { method } = spec;
  return method.name === 'generalization'
    ? {
        ...header,
        maxSuppression: method.maxSuppression,
        suppressed: method.suppressed,
        suppression: method.suppression ?? 'rows',
      }
    : header;
}

/**
 * Each quasi-identifier's hierarchy as a digest of its definition (a file's bytes, a builder's
 * settings; its missing-value texts too), so `ppdp apply` can tell that a level still means
 * what it meant in the release. A digest, not the definition: a hierarchy lists data values.
 */
export function hierarchyDigests(spec: ReleaseSpec): Record<string, string> {
  const out = emptyRecord<string>();
  for (const a of spec.attributes) {
    if (a.type !== 'quasi-identifying' || a.hierarchy === undefined) continue;
    const definition = hierarchyDefinition(a.hierarchy);
    if (definition === undefined) continue;
    out[a.name] = createHash('sha256')
      .update(definition)
      .update('\u0000')
      .update(JSON.stringify(a.missing ?? []))
      .digest('hex')
      .slice(0, 16);
  }
  return out;
}

/** A hierarchy's definition as bytes: a file's content (wherever it lies), a builder's settings. */
function hierarchyDefinition(h: HierarchySpec): string | Buffer | undefined {
  if (h.kind !== 'file') return JSON.stringify(h);
  try {
    return readFileSync(h.path);
  } catch {
    return undefined; // the release read it; a file gone since leaves nothing to compare
  }
}
