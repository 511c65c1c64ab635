/**
 * The Adult example under a differential-privacy spec, for the DP tests: a copy of the example in
 * a folder of its own with the spec's privacy and method replaced, loaded as a spec.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';

export { ADULT_DP_LEVELS } from '../../bench/adult-sample.ts';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

/** Adult's spec with `privacy` and the method's settings over `method`, copied into a new folder under `dir`. */
export function adultDpSpec(
  dir: string,
  privacy: unknown[],
  method: Record<string, unknown> = {},
): ReleaseSpec {
  const spec = JSON.parse(readFileSync(join(ROOT, 'examples/adult/release.json'), 'utf8'));
  spec.privacy = privacy;
  spec.method = { name: 'generalization', metric: 'ncp', maxSuppression: 1, suppressed: 'remove', ...method };
  const at = join(dir, `spec-${Math.random().toString(36).slice(2)}`);
  mkdirSync(at);
  for (const f of ['adult.csv', ...Object.keys(spec.attributes).map((a) => `adult_hierarchy_${a}.csv`)])
    writeFileSync(join(at, f), readFileSync(join(ROOT, 'examples/adult', f)));
  writeFileSync(join(at, 'release.json'), JSON.stringify(spec));
  return loadSpec(join(at, 'release.json'));
}
