/** l-diversity (Machanavajjhala et al.) in its three forms: distinct, entropy and recursive (c, l). */
import { attribute, declareModel } from './declaration.ts';

const l = (v: string) => `l ≥ ${v}`;

/**
 * The least l that protects anything: at l = 1 a class (a bucket) of one row passes with its
 * sensitive value in plain view. From l = 2 on, a class holds at least 2 rows (identity
 * disclosure is bounded too); Anatomy and Slicing, which protect through l alone, refuse less,
 * and no hint suggests less.
 */
export const LEAST_PROTECTIVE_L = 2;

const boundsIdentity = (p: Readonly<Record<string, unknown>>) => (p.l as number) >= LEAST_PROTECTIVE_L;

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
  boundsIdentity,
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
  boundsIdentity,
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
  boundsIdentity,
});
