/** What a randomized release claims: the requirements it enforced and the risk it measured. */
import type { Shape } from '../contracts/shape.ts';

export const randomizationShape = {
  /** The requirements, as the method read them from the spec (null: the spec sets none). */
  enforced: {
    object: {
      sensitive: 'string',
      /** The tightest attribute-disclosure bound: τ, or 1/l of an l-diversity model. */
      tau: { nullable: 'number' },
      rho: { nullable: { object: { rho1: 'number', rho2: 'number' } } },
    },
  },
  /** The attribute-disclosure risk over the rows, from the published matrices. */
  maxRisk: 'number',
  meanRisk: 'number',
} as const satisfies Shape;
