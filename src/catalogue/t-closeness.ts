/** t-closeness (Li, Li & Venkatasubramanian): each class's SA distribution within t of the table's. */
import { attribute, declareModel } from './declaration.ts';

export const T_CLOSENESS = declareModel({
  name: 't-closeness',
  fields: {
    attribute,
    t: { kind: 'number', min: 0, max: 1, integer: false },
    // Left out: `ordered` on a numeric sensitive attribute, `equal` on any other (equal until
    // the input's values are read).
    distance: {
      kind: 'string',
      values: ['equal', 'ordered', 'hierarchical'],
      optional: true,
      default: 'equal',
      byColumn: (numeric) => (numeric ? 'ordered' : 'equal'),
    },
  },
  title: 't-closeness',
  wording: {
    t: (v) => `distance to the overall distribution ≤ t = ${v}`,
    distance: (v) => `${v} ground distance`,
  },
  needs: ['sa-histogram'],
  scope: 'class',
  vary: { parameter: 't', integer: false },
  measure: { name: 't', higherIsBetter: false },
});
