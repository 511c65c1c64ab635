/**
 * l-diversity (Machanavajjhala et al.; docs/definitions.md §2) in its three forms.
 * - distinct: at least l distinct SA values per class. Monotonic with suppression: a union
 *   has at least the distinct values of each part, a part at most those of the whole.
 * - entropy: −Σ p·ln p ≥ ln l. Entropy is concave, so a union of passing classes passes
 *   (monotonic without suppression), but a failing class merged with a passing one may fail.
 * - recursive (c,l): r1 < c·(r_l + r_{l+1} + …) with counts sorted descending. Not monotonic
 *   in general: the search treats it as such and evaluates every candidate.
 * Distinct and entropy l-diversity also read as a bound on what a released row discloses: no
 * sensitive value more likely than 1/l (the posterior form, which Slicing checks per tuple and
 * randomization reads as the attribute-disclosure bound τ = 1/l).
 */
import { LEAST_PROTECTIVE_L } from '../catalogue/l-diversity.ts';
import { isMissing } from '../data/table.ts';
import { entropyRounding } from '../util/exact.ts';
import { describeSpec } from './describe.ts';
import { type ClassCounts, type ClassSummary, entries, type PrivacyModel } from './model.ts';

/** Distinct or entropy l-diversity: the l-diversity models of the bucketization methods. */
export interface LDiversityModel extends PrivacyModel {
  readonly spec: { model: 'distinct-l-diversity' | 'entropy-l-diversity'; attribute: string; l: number };
  readonly attribute: string;
  readonly l: number;
  /** Distinct SA values a class needs at least (l, rounded up for entropy l-diversity). */
  readonly distinctValues: number;
}

/** Relative tolerance of the posterior bound p ≤ 1/l, for floating-point rounding. */
export const POSTERIOR_TOLERANCE = 1e-9;

/** The largest posterior of one SA value that l-diversity allows, tolerance included. */
export function posteriorLimit(l: number): number {
  return (1 + POSTERIOR_TOLERANCE) / l;
}

/** Does a largest posterior `maxP` of one SA value satisfy l-diversity's bound 1/l? */
export function posteriorHolds(maxP: number, l: number): boolean {
  return maxP * l <= 1 + POSTERIOR_TOLERANCE;
}

/** Distinct SA values an l-diverse class needs at least: l, rounded up (entropy allows any real l). */
export function distinctValuesNeeded(l: number): number {
  // l is exact as given: an integer l needs l values, anything above it one more.
  return Math.ceil(l);
}

export function distinctLDiversity(attribute: string, l: number): LDiversityModel {
  const distinct = (h: ClassCounts) => {
    const { counts, from, to } = entries(h);
    let n = 0;
    for (let i = from; i < to; i++) if (counts[i]! > 0) n++;
    return n;
  };
  return {
    spec: { model: 'distinct-l-diversity', attribute, l },
    l,
    distinctValues: distinctValuesNeeded(l),
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: true,
    monotonicWithoutSuppression: true,
    minClassSize: Math.ceil(l),
    holds: (cls: ClassSummary) => distinct(cls.histogram!) >= l,
    measure: (cls) => distinct(cls.histogram!),
    higherIsBetter: true,
    measureName: 'l',
  };
}

/** Shannon entropy (natural log) of a class's SA distribution. */
export function entropyOf(histogram: ClassCounts, size: number): number {
  return entropyTerms(histogram, size).h;
}

/** The entropy and the number of values it sums over. */
function entropyTerms(histogram: ClassCounts, size: number): { h: number; terms: number } {
  const { counts, from, to } = entries(histogram);
  let h = 0;
  let terms = 0;
  for (let i = from; i < to; i++) {
    const c = counts[i]!;
    if (c > 0) {
      const p = c / size;
      h -= p * Math.log(p);
      terms++;
    }
  }
  return { h, terms };
}

export function entropyLDiversity(attribute: string, l: number): LDiversityModel {
  const logL = Math.log(l);
  // Only as much slack as rounding can take (entropyRounding), so that a class with exactly l
  // equally frequent values passes and one below l does not.
  const holds = (cls: ClassSummary) => {
    const { h, terms } = entropyTerms(cls.histogram!, cls.size);
    return h >= logL - entropyRounding(terms, Math.max(h, logL));
  };
  return {
    spec: { model: 'entropy-l-diversity', attribute, l },
    l,
    distinctValues: distinctValuesNeeded(l),
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: true,
    // Entropy over s rows is at most ln s.
    minClassSize: Math.max(1, Math.ceil(l - 1e-9)),
    holds,
    measure: (cls) => Math.exp(entropyOf(cls.histogram!, cls.size)),
    higherIsBetter: true,
    measureName: 'l',
  };
}

/** r1 / (r_l + r_{l+1} + …): the class passes when this is below c. */
export function recursiveRatio(histogram: ClassCounts, l: number): number {
  const { counts: all, from, to } = entries(histogram);
  const counts = Array.from(all.subarray(from, to))
    .filter((c) => c > 0)
    .sort((a, b) => b - a);
  if (counts.length < l) return Number.POSITIVE_INFINITY;
  let tail = 0;
  for (let i = l - 1; i < counts.length; i++) tail += counts[i]!;
  return counts[0]! / tail;
}

export function recursiveClDiversity(attribute: string, c: number, l: number): PrivacyModel {
  return {
    spec: { model: 'recursive-cl-diversity', attribute, c, l },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: false,
    // At least l distinct values.
    minClassSize: Math.ceil(l),
    holds: (cls) => recursiveRatio(cls.histogram!, l) < c,
    measure: (cls) => recursiveRatio(cls.histogram!, l),
    higherIsBetter: false,
    measureName: 'c',
  };
}

/** The l-diversity model a distinct or entropy l-diversity spec names. */
export function lDiversity(spec: LDiversityModel['spec']): LDiversityModel {
  return spec.model === 'distinct-l-diversity'
    ? distinctLDiversity(spec.attribute, spec.l)
    : entropyLDiversity(spec.attribute, spec.l);
}

export { LEAST_PROTECTIVE_L };

/** How a sensitive attribute's values are spread: what the eligibility checks and their hints read. */
export interface Dominance {
  /** Rows of its most frequent value. */
  readonly most: number;
  /** Values some row holds. */
  readonly distinct: number;
  /** Whether the most frequent value is the missing value (empty cells or the spec's missing texts). */
  readonly missing: boolean;
}

/** The dominance of the values counted in `counts` (rows per code of `dictionary`). */
export function dominance(counts: ArrayLike<number>, dictionary: readonly string[]): Dominance {
  let most = 0;
  let distinct = 0;
  let top = -1;
  for (let code = 0; code < counts.length; code++) {
    const c = counts[code]!;
    if (c > most) [most, top] = [c, code];
    if (c > 0) distinct++;
  }
  return { most, distinct, missing: top >= 0 && isMissing(dictionary[top]!) };
}

/**
 * What to do when no l ≥ LEAST_PROTECTIVE_L can hold on a sensitive attribute, for the hints
 * that would otherwise offer l = 1. Coarsening the attribute would not help: merging values
 * only makes the most frequent one more frequent; and when the dominant value is the missing
 * value, no finer recording splits it.
 */
export function noDiversityHint(attribute: string, { distinct, missing }: Dominance): string {
  if (distinct < LEAST_PROTECTIVE_L)
    return `${attribute} holds one value in every row, which no release can hide: mark it "insensitive" if that value discloses nothing, or leave it out ("type": "identifying")`;
  if (missing)
    return `l must be at least ${LEAST_PROTECTIVE_L}, which ${attribute}'s dominant value, the missing value (its empty cells or the spec's missing texts), rules out: fill in the values that are known, leave the rows without one out of the input, or bound what a class discloses of it with t-closeness (generalization or mondrian)`;
  return `l must be at least ${LEAST_PROTECTIVE_L}, which one dominant value of ${attribute} rules out: record ${attribute} in finer values (split its most frequent value into several), or bound what a class discloses of it with t-closeness (generalization or mondrian)`;
}
