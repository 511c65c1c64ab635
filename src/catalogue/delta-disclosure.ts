/** δ-disclosure privacy (Brickell & Shmatikov): |ln(p(E,s)/p(T,s))| < δ for every s in a class. */
import { attribute, declareModel } from './declaration.ts';

export const DELTA_DISCLOSURE = declareModel({
  name: 'delta-disclosure',
  fields: { attribute, delta: { kind: 'number', min: 0, max: 1e9, integer: false } },
  title: 'δ-disclosure privacy',
  wording: { delta: (v) => `δ ≤ ${v}` },
  needs: ['sa-histogram'],
  scope: 'class',
  vary: { parameter: 'delta', integer: false },
  measure: { name: 'delta', higherIsBetter: false },
});
