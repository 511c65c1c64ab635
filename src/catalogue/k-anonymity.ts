/** k-anonymity (Samarati & Sweeney): every released class has at least k rows. */
import { declareModel } from './declaration.ts';

export const K_ANONYMITY = declareModel({
  name: 'k-anonymity',
  fields: { k: { kind: 'number', min: 1, max: Number.MAX_SAFE_INTEGER, integer: true, example: 5 } },
  title: 'k-anonymity',
  wording: { k: (v) => `every class has at least k = ${v} rows` },
  needs: [],
  scope: 'class',
  vary: { parameter: 'k', integer: true },
  measure: { name: 'k', higherIsBetter: true },
  boundsIdentity: (p) => (p.k as number) >= 2,
});
