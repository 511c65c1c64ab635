/** What a Mondrian release claims: its classes, and how each quasi-identifier was released. */
import type { Shape } from '../contracts/shape.ts';

export const mondrianShape = {
  classes: 'count',
  minClassSize: 'count',
  ncp: 'number',
  /** Quasi-identifiers released as numeric ranges (with `_lo` and `_hi` columns). */
  numeric: 'strings',
  /** Quasi-identifiers released as hierarchy labels. */
  generalized: 'strings',
} as const satisfies Shape;
