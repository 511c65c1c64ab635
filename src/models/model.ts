/**
 * The interface every privacy model implements (one file per model): judge one equivalence
 * class from its size and, for models on a sensitive attribute, its SA histogram.
 */
import type { PrivacyModelSpec } from '../release-spec/spec.ts';
import type { ModelDescription } from './describe.ts';

/** A class's SA counts: rows per value, or with an entity column person weights per value. */
export type SaCounts = Int32Array | Float64Array;

/**
 * A class's SA counts held sparsely, read in place from a set's arrays: code `codes[i]` held
 * `counts[i]` times for `i` in [from, to), codes ascending. Every model reads it to the same
 * figure, to the last bit, as the dense counts of the same class (the values a class holds
 * are visited in code order either way).
 */
export interface SparseSaCounts {
  readonly codes: Int32Array;
  readonly counts: SaCounts;
  readonly from: number;
  readonly to: number;
}

/** A class's SA counts, dense (one count per SA value) or sparse (the values it holds). */
export type ClassCounts = SaCounts | SparseSaCounts;

/** The entries of class counts to visit: `counts[i]` for `i` in [from, to), of code `codes ? codes[i] : i`. */
export function entries(h: ClassCounts): {
  codes: Int32Array | null;
  counts: SaCounts;
  from: number;
  to: number;
} {
  return 'codes' in h ? h : { codes: null, counts: h, from: 0, to: h.length };
}

export interface ClassSummary {
  /** Rows in the class (with an entity column: its persons). */
  readonly size: number;
  /**
   * SA counts of the class (dense: length = SA domain; or sparse), or null for models that need none. With an
   * entity column, `size` is the class's persons and the counts are person-weighted (each person
   * weighs 1 over their rows' values: docs/definitions.md, "Several rows per person").
   */
  readonly histogram: ClassCounts | null;
  /** Records of the population table in the class (k-map, δ-presence), when the spec names one. */
  readonly population?: number;
}

/** What every privacy model has, whatever it judges (a class, a randomization's matrices). */
export interface ModelDefinition {
  readonly spec: PrivacyModelSpec;
  /** The sensitive attribute the model protects, or null (k-anonymity). */
  readonly attribute: string | null;
  /** Its name and what it requires, with its parameters, as the report reads (numbers by `format`). */
  describe(format?: (v: number) => string): ModelDescription;
}

/** A model judged class by class (the partitioning and bucketization methods). */
export interface PrivacyModel extends ModelDefinition {
  /**
   * Monotonic under suppression: a union of classes that includes a passing one passes, and a
   * part of a failing class fails. Then feasibility is inherited upwards and rows suppressed at
   * a node stay suppressed below it — both of which the search prunes with.
   */
  readonly monotonic: boolean;
  /** Monotonic when nothing is suppressed: a union of passing classes passes. */
  readonly monotonicWithoutSuppression: boolean;
  /**
   * No class smaller than this can satisfy the model, whatever its SA values (1 when no such
   * size is known). Rows in smaller classes are suppressed at the node and, like rows below
   * k, at every specialization: the search prunes with it for every model.
   */
  readonly minClassSize: number;
  /** Does one class satisfy the model? */
  holds(cls: ClassSummary): boolean;
  /**
   * The model's measure on one class, in the model's own unit (k: size, l: distinct values or
   * exp(entropy), t: EMD, δ: max |ln ratio|), for "achieved" figures and no-solution messages.
   */
  measure(cls: ClassSummary): number;
  /** Whether a larger measure is better (k, l) or worse (t, δ). */
  readonly higherIsBetter: boolean;
  /** The name of the achieved measure in reports, e.g. `k`, `l`, `t`, `delta`. */
  readonly measureName: string;
  /**
   * A model judged on the release as a whole rather than class by class (average risk): does
   * a release of `classes` classes holding `rows` rows satisfy it? Its `holds` passes every
   * class; the method suppresses the smallest classes until this holds (docs/definitions.md).
   */
  readonly overall?: (classes: number, rows: number) => boolean;
  /** Whether the model counts the population table's records per class. */
  readonly needsPopulation?: boolean;
  /**
   * What the report gives as achieved, from the worst and the least measure over the released
   * classes, when it is more than `{ [measureName]: worst }`.
   */
  readonly achieved?: (worst: number, least: number) => Record<string, number>;
}

/** Shares of each SA value in a histogram. */
export function shares(histogram: SaCounts, size: number): Float64Array {
  return Float64Array.from(histogram, (c) => c / size);
}
