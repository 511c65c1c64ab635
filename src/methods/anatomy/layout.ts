/** What Anatomy lays out before it writes: shared by the build and its report. */
import type { Bucketization } from './bucketize.ts';

/** The released layout: bucket ids, row order and the permuted SA of the single table. */
export interface AnatomyLayout {
  readonly bucketization: Bucketization;
  /** Bucket (0-based, creation order) → released id (1..buckets, a random numbering). */
  readonly ids: Int32Array;
  /** Released row position → input row (sorted by bucket id, random within a bucket). */
  readonly order: Int32Array;
  /** Released row position → SA code shown in the single table (permuted within the bucket). */
  readonly permutedSa: Int32Array;
}
