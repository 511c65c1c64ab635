/**
 * (ε, δ)-differential privacy by sampling and generalization (SafePub, ARX's
 * EDDifferentialPrivacy with a given generalization): β and k from the catalogue's derivation;
 * a class of the sample passes when it holds at least k sampled rows (docs/definitions.md).
 */
import { randomBytes } from 'node:crypto';
import type { SpecNamed } from '../catalogue/catalogue.ts';
import { type DpParameters, dpParameters } from '../catalogue/dp-parameters.ts';
import { SpecError } from '../errors.ts';
import { Random } from '../util/random.ts';
import { describeSpec } from './describe.ts';
import type { PrivacyModel } from './model.ts';

export type DifferentialPrivacySpec = SpecNamed<'differential-privacy'>;

/** β and k for the spec's (ε, δ), as a SpecError when the arithmetic cannot decide them. */
export function dpSettings(spec: DifferentialPrivacySpec, where: string): DpParameters {
  try {
    return dpParameters(spec.epsilon, spec.delta);
  } catch {
    throw new SpecError(
      'E_SPEC_RANGE',
      `${where}: (ε, δ) = (${spec.epsilon}, ${spec.delta}) gives no sampling probability and class size the interval arithmetic can decide`,
      'use an ε between 0.01 and 10 and a δ between 1e-12 and 0.1',
    );
  }
}

export function differentialPrivacy(spec: DifferentialPrivacySpec, where: string): PrivacyModel {
  const { k } = dpSettings(spec, where);
  return {
    spec,
    describe: (format) => describeSpec(spec, format),
    attribute: null,
    monotonic: true,
    monotonicWithoutSuppression: true,
    minClassSize: k,
    holds: (cls) => cls.size >= k,
    measure: (cls) => cls.size,
    higherIsBetter: true,
    measureName: 'k',
  };
}

/**
 * The rows kept by sampling each of `rows` with probability β, from a generator keyed by 128
 * fresh secret bits (node:crypto): deliberately not reproducible from the spec's seed, since a
 * published seed would let anyone redo the sample and lose the privacy the sampling buys.
 */
export function sampleRows(
  rows: number,
  beta: number,
  random: Random = Random.fromKey(secretKey()),
): Uint8Array {
  const kept = new Uint8Array(rows);
  for (let r = 0; r < rows; r++) {
    // A uniform double in [0, 1) from 53 random bits.
    const u = ((random.nextU32() >>> 5) * 67108864 + (random.nextU32() >>> 6)) / 9007199254740992;
    kept[r] = u < beta ? 1 : 0;
  }
  return kept;
}

function secretKey(): Uint32Array {
  const bytes = randomBytes(16);
  return new Uint32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + 16));
}
