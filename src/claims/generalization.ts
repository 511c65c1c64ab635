/** What a generalization release (optimal lattice search or Samarati's k-minimal) claims. */
import type { Shape } from '../contracts/shape.ts';

export const generalizationShape = {
  /** The requirements the search enforced, as it read them from the spec. */
  enforced: {
    object: {
      /** The largest k of the spec's k-anonymity models (1 without one). */
      k: 'count',
      /** The spec's method.maxSuppression as a number of input rows. */
      maxSuppressedRows: 'count',
    },
  },
  /** The chosen node: quasi-identifier → hierarchy level. */
  node: 'levels',
  suppressedRows: 'count',
  /** Retained classes, and the smallest of them. */
  classes: 'count',
  minClassSize: 'count',
  /**
   * (ε, δ)-differential privacy only: the sampling probability β and the class size k the
   * method derived from the spec's (ε, δ), and the rows the sample kept (`suppressedRows` then
   * counts the sampled rows suppressed; the rows not sampled are never released).
   */
  dp: { optional: { object: { beta: 'number', k: 'count', sampledRows: 'count' } } },
} as const satisfies Shape;
