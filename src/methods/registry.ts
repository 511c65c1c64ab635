/** The release methods by spec name. Each method module registers one line here. */
import { SpecError } from '../errors.ts';
import type { MethodName } from '../release-spec/spec.ts';
import { anatomyMethod } from './anatomy/index.ts';
import { generalizationMethod } from './generalization/index.ts';
import { generalizationShards } from './generalization/shards.ts';
import type { ReleaseMethod } from './method.ts';
import { mondrianMethod } from './mondrian/index.ts';
import { randomizationMethod } from './randomization/index.ts';
import { slicingMethod } from './slicing/index.ts';

const METHODS: Partial<Record<MethodName, ReleaseMethod>> = {
  generalization: { ...generalizationMethod, shards: generalizationShards },
  mondrian: mondrianMethod,
  anatomy: anatomyMethod,
  slicing: slicingMethod,
  randomization: randomizationMethod,
};

export function methodFor(name: MethodName): ReleaseMethod {
  const method = METHODS[name];
  if (!method) {
    throw new SpecError(
      'E_SPEC_UNSUPPORTED',
      `method '${name}' is not available in this build of ppdp`,
      `available: ${Object.keys(METHODS).join(', ')}`,
    );
  }
  return method;
}
