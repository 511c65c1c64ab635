/**
 * The interface every privacy model implements (one file per model): judge one equivalence
 * class from its size and, for models on a sensitive attribute, its SA histogram.
 */
import type { PrivacyModelSpec } from '../spec/spec.ts';

export interface ClassSummary {
  /** Rows in the class. */
  readonly size: number;
  /** SA counts of the class (length = SA domain), or null for models that need none. */
  readonly histogram: Int32Array | null;
}

export interface PrivacyModel {
  readonly spec: PrivacyModelSpec;
  /** The sensitive attribute the model protects, or null (k-anonymity). */
  readonly attribute: string | null;
  /**
   * Monotonic under suppression: if a node satisfies the model, so does every generalization
   * of it. Only monotonic models let the search prune by predictive tagging.
   */
  readonly monotonic: boolean;
  /** Does one class satisfy the model? */
  holds(cls: ClassSummary): boolean;
}
