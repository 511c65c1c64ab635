/** Builds the privacy models a spec names. */
import { SpecError } from '../errors.ts';
import type { PrivacyModelSpec } from '../spec/spec.ts';
import { kAnonymity } from './k-anonymity.ts';
import type { PrivacyModel } from './model.ts';

export function buildModels(
  specs: readonly PrivacyModelSpec[],
  rows: number,
  specFile: string,
): PrivacyModel[] {
  return specs.map((spec, i) => {
    switch (spec.model) {
      case 'k-anonymity':
        if (spec.k > rows) {
          throw new SpecError(
            'E_SPEC_RANGE',
            `${specFile}: privacy[${i}].k is ${spec.k}, but the table has only ${rows} rows`,
            'k must be ≥ 1 and ≤ the number of rows',
          );
        }
        return kAnonymity(spec.k);
      default:
        throw new SpecError(
          'E_SPEC_UNSUPPORTED',
          `${specFile}: privacy[${i}].model '${spec.model}' is not supported by this version of ppdp`,
          'use k-anonymity',
        );
    }
  });
}

/** The k the models imply (1 when no k-anonymity is asked). */
export function requiredK(models: readonly PrivacyModel[]): number {
  let k = 1;
  for (const m of models) if (m.spec.model === 'k-anonymity') k = Math.max(k, m.spec.k);
  return k;
}
