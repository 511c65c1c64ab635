/** The models of a randomized release: the attribute-disclosure bound τ and (ρ1, ρ2)-privacy. */
import { attribute, declareModel } from './declaration.ts';

export const ATTRIBUTE_DISCLOSURE = declareModel({
  name: 'attribute-disclosure',
  fields: { attribute, tau: { kind: 'number', min: 0, max: 1, integer: false } },
  title: 'Attribute-disclosure bound',
  wording: { tau: (v) => `per-row disclosure risk ≤ τ = ${v}` },
  needs: ['matrices'],
  scope: 'randomization',
  vary: { parameter: 'tau', integer: false },
  measure: { name: 'maxRisk', higherIsBetter: false },
});

export const RHO_PRIVACY = declareModel({
  name: 'rho-privacy',
  fields: {
    attribute,
    rho1: { kind: 'number', min: 0, max: 1, integer: false },
    rho2: { kind: 'number', min: 0, max: 1, integer: false },
  },
  title: '(ρ1, ρ2)-privacy',
  wording: { rho1: (v) => `prior ≤ ρ1 = ${v}`, rho2: (v) => `posterior ≤ ρ2 = ${v}` },
  needs: ['matrices'],
  scope: 'randomization',
  measure: { name: 'gamma', higherIsBetter: false },
});
