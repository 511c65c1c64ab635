/** What a generalization release (optimal lattice search or Samarati's k-minimal) claims. */
import type { Shape } from '../contracts/shape.ts';

export const generalizationShape = {
  /** The requirements the search enforced, as it read them from the spec. */
  enforced: {
    object: {
      /** The largest k of the spec's k-anonymity models (1 without one). */
      k: 'count',
      /** The spec's method.maxSuppression as a number of input rows (every row with an entity column). */
      maxSuppressedRows: 'count',
      /** With an entity column: method.maxSuppression as a number of the input's persons. */
      maxSuppressedPersons: { optional: 'count' },
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
  /**
   * With an entity column (docs/definitions.md, "Several rows per person"): the persons with a
   * suppressed row, and the fewest persons in a retained class.
   */
  entity: { optional: { object: { suppressedPersons: 'count', minClassPersons: 'count' } } },
  dp: {
    optional: {
      object: {
        beta: 'number',
        k: 'count',
        sampledRows: 'count',
        /** With a private search: its ε, each step's ε, and the steps it took. */
        search: { optional: { object: { epsilon: 'number', stepEpsilon: 'number', stepsTaken: 'count' } } },
      },
    },
  },
  /**
   * Cell suppression only: the quasi-identifiers in the order cells were suppressed, and per
   * quasi-identifier the cells released as `*` in rows not suppressed whole.
   */
  cells: { optional: { object: { order: 'strings', perAttribute: 'levels' } } },
} as const satisfies Shape;
