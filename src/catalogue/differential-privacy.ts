/**
 * (ε, δ)-differential privacy by sampling and generalization (SafePub, as ARX 3.9.2 implements
 * it with a given generalization): each input row is sampled with probability β, the sample is
 * generalized at the node the spec names (`levels`, chosen without looking at the data), and
 * every class with fewer than k sampled rows is suppressed; β and k come from (ε, δ)
 * (src/catalogue/dp-parameters.ts, docs/definitions.md "Differential privacy").
 */
import { SpecError } from '../errors.ts';
import { declareModel } from './declaration.ts';

export const DIFFERENTIAL_PRIVACY = declareModel({
  name: 'differential-privacy',
  fields: {
    epsilon: { kind: 'number', min: 0, max: 20, integer: false, example: 1 },
    delta: { kind: 'number', min: 0, max: 1, integer: false, example: 1e-5 },
    levels: { kind: 'levels' },
  },
  refine: (fields, where, field) => {
    const epsilon = fields.epsilon as number;
    const delta = fields.delta as number;
    if (!(epsilon > 0) || !(delta > 0) || !(delta < 1)) {
      throw new SpecError(
        'E_SPEC_RANGE',
        `${where}: ${field} needs ε > 0 and 0 < δ < 1 (got ε = ${epsilon}, δ = ${delta})`,
        'e.g. "epsilon": 1, "delta": 1e-5: δ well below one over the number of rows',
      );
    }
    const levels = fields.levels;
    const bad =
      typeof levels !== 'object' ||
      levels === null ||
      Array.isArray(levels) ||
      Object.values(levels).some((l) => !(Number.isInteger(l) && (l as number) >= 0));
    if (bad) {
      throw new SpecError(
        'E_SPEC_TYPE',
        `${where}: ${field}.levels must give each quasi-identifier a generalization level (a whole number ≥ 0)`,
        'e.g. "levels": { "age": 2, "zip": 1 }: the node is fixed in advance, never chosen from the data',
      );
    }
  },
  title: '(ε, δ)-differential privacy',
  wording: {
    epsilon: (v) => `ε = ${v}`,
    delta: (v) => `δ = ${v}`,
    levels: (v) => `the generalization fixed in advance: ${v}`,
  },
  needs: ['secret-sample'],
  scope: 'release',
  measure: { name: 'k', higherIsBetter: true },
});
