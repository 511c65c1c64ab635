/** What an Anatomy release claims: the requirement it enforced and each row's bucket. */
import type { Shape } from '../contracts/shape.ts';

export const anatomyShape = {
  /** The l-diversity requirement, as the method read it from the spec. */
  enforced: { object: { sensitive: 'string', model: 'string', l: 'number' } },
  buckets: 'count',
  /** Input row → released bucket id: the witness the verifier checks the files against (never published). */
  bucketOfRow: 'counts',
} as const satisfies Shape;
