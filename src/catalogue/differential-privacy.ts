/**
 * (ε, δ)-differential privacy by sampling and generalization (SafePub, as ARX 3.9.2 implements
 * it): each input row is sampled with probability β, the sample is generalized at one node of
 * the lattice, and every class with fewer than k sampled rows is suppressed; β and k come from
 * (ε, δ) (src/catalogue/dp-parameters.ts, docs/definitions.md "Differential privacy"). The node
 * is either fixed in advance (`levels`, chosen without looking at the data) or chosen by a
 * private search (`searchBudget`, the share of ε it spends, over at most `steps` steps of the
 * exponential mechanism); the sampling then takes the rest of ε.
 */
import { SpecError } from '../errors.ts';
import { declareModel } from './declaration.ts';
import { type DpBudget, dpBudget } from './dp-parameters.ts';

export const DIFFERENTIAL_PRIVACY = declareModel({
  name: 'differential-privacy',
  fields: {
    epsilon: { kind: 'number', min: 0, max: 20, integer: false, example: 1 },
    delta: { kind: 'number', min: 0, max: 1, integer: false, example: 1e-5 },
  },
  variants: [
    { levels: { kind: 'levels' } },
    {
      searchBudget: { kind: 'number', min: 0, max: 1, integer: false, example: 0.1 },
      steps: { kind: 'number', min: 1, max: 1_000_000, integer: true, example: 100 },
    },
  ],
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
    const fixed = fields.levels !== undefined;
    const searched = fields.searchBudget !== undefined || fields.steps !== undefined;
    if (fixed === searched) {
      throw new SpecError(
        fixed ? 'E_SPEC_CONFLICT' : 'E_SPEC_REQUIRED',
        `${where}: ${field} needs either levels (the node fixed in advance) or searchBudget and steps (a private search), ${fixed ? 'not both' : 'one of the two'}`,
        'e.g. "levels": { "age": 2, "zip": 1 }, or "searchBudget": 0.1, "steps": 100',
      );
    }
    if (searched) {
      const share = fields.searchBudget as number | undefined;
      if (share === undefined || fields.steps === undefined || !(share > 0 && share < 1)) {
        throw new SpecError(
          share === undefined || fields.steps === undefined ? 'E_SPEC_REQUIRED' : 'E_SPEC_RANGE',
          `${where}: ${field}'s private search needs searchBudget (the share of ε it spends, strictly between 0 and 1) and steps (a whole number ≥ 1)`,
          'e.g. "searchBudget": 0.1, "steps": 100: a tenth of ε spent choosing the node, the rest on the sampling',
        );
      }
      return;
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
    searchBudget: (v) => `a share ${v} of ε spent on a private search for the generalization`,
    steps: (v) => `at most ${v} search steps`,
  },
  needs: ['secret-sample'],
  scope: 'release',
  vary: { parameter: 'epsilon', integer: false },
  measure: { name: 'k', higherIsBetter: true },
  // Every released class holds at least k sampled rows, and k ≥ 2 (one more than the first k′ ≥ 1
  // the derivation accepts: dp-parameters.ts).
  boundsIdentity: () => true,
});

type DpSpec =
  | { readonly epsilon: number; readonly levels: Readonly<Record<string, number>> }
  | { readonly epsilon: number; readonly searchBudget: number; readonly steps: number };

/** The spec's split of ε (docs/definitions.md, "Differential privacy"). */
export function dpSplit(spec: DpSpec): DpBudget {
  return dpBudget(
    spec.epsilon,
    'steps' in spec ? { searchBudget: spec.searchBudget, steps: spec.steps } : undefined,
  );
}
