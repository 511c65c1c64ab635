/** Average re-identification risk: released classes / released rows ≤ threshold, on the release as a whole. */
import { declareModel } from './declaration.ts';

export const AVERAGE_RISK = declareModel({
  name: 'average-risk',
  fields: { threshold: { kind: 'number', min: 0, max: 1, integer: false } },
  title: 'Average re-identification risk',
  wording: { threshold: (v) => `average re-identification risk ≤ ${v}` },
  needs: ['whole-release'],
  scope: 'release',
  vary: { parameter: 'threshold', integer: false },
  measure: { name: 'threshold', higherIsBetter: false },
  boundsIdentity: (p) => (p.threshold as number) < 1,
});
