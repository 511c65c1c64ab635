/** l-diversity (Machanavajjhala et al.) in its three forms: distinct, entropy and recursive (c, l). */
import { attribute, declareModel } from './declaration.ts';

const l = (v: string) => `l ≥ ${v}`;

export const DISTINCT_L_DIVERSITY = declareModel({
  name: 'distinct-l-diversity',
  fields: { attribute, l: { kind: 'number', min: 1, max: 1e9, integer: true, example: 2 } },
  title: 'Distinct l-diversity',
  wording: { l },
  needs: ['sa-histogram'],
  scope: 'class',
  randomization: 'tau-of-l',
  vary: { parameter: 'l', integer: true },
  measure: { name: 'l', higherIsBetter: true },
});

export const ENTROPY_L_DIVERSITY = declareModel({
  name: 'entropy-l-diversity',
  fields: { attribute, l: { kind: 'number', min: 1, max: 1e9, integer: false, example: 2 } },
  title: 'Entropy l-diversity',
  wording: { l },
  needs: ['sa-histogram'],
  scope: 'class',
  randomization: 'tau-of-l',
  vary: { parameter: 'l', integer: false },
  measure: { name: 'l', higherIsBetter: true },
});

export const RECURSIVE_CL_DIVERSITY = declareModel({
  name: 'recursive-cl-diversity',
  fields: {
    attribute,
    c: { kind: 'number', min: Number.MIN_VALUE, max: 1e9, integer: false },
    l: { kind: 'number', min: 1, max: 1e9, integer: true, example: 2 },
  },
  title: 'Recursive (c, l)-diversity',
  wording: { c: (v) => `c = ${v}`, l },
  needs: ['sa-histogram'],
  scope: 'class',
  vary: { parameter: 'l', integer: true },
  measure: { name: 'c', higherIsBetter: false },
});
