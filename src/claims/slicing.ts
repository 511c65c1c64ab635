/** What a Slicing release claims: the requirement it enforced, its columns and each row's bucket. */
import type { Shape } from '../contracts/shape.ts';

export const slicingShape = {
  /** The l-diverse requirement, as the method read it from the spec. */
  enforced: { object: { sensitive: 'string', l: 'number' } },
  buckets: 'count',
  /** Input row → released bucket id: the witness the verifier checks the files against (never published). */
  bucketOfRow: 'counts',
  /** Attribute names per released column, in release order. */
  columns: 'groups',
} as const satisfies Shape;
