/**
 * k-map (Sweeney; docs/definitions.md): every released class matches at least k records of
 * the population table, its QIs generalized by the same hierarchies. Monotonic with
 * suppression: a union of classes matches the population records of all its parts, and a
 * part of a class at most those of the whole.
 */
import type { KMapEstimator, PrivacyModelSpec } from '../release-spec/spec.ts';
import { describeSpec } from './describe.ts';
import { kAnonymity } from './k-anonymity.ts';
import type { ClassSummary, PrivacyModel } from './model.ts';

export function kMap(k: number, population: string): PrivacyModel {
  return {
    spec: { model: 'k-map', k, population },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute: null,
    monotonic: true,
    monotonicWithoutSuppression: true,
    // A class of one sample row may match k population records.
    minClassSize: 1,
    needsPopulation: true,
    achieved: (worst) => ({ populationMatches: worst }),
    holds: (cls: ClassSummary) => cls.population! >= k,
    measure: (cls) => cls.population!,
    higherIsBetter: true,
    measureName: 'k',
  };
}

/**
 * k-map against an estimated population (docs/definitions.md): with N people of whom the n
 * input rows are a sample, a class of f rows is taken to match at least k people when f ≥ k',
 * the size ARX derives from k·n/N under a Poisson or zero-truncated Poisson model of the
 * population's class sizes and a significance level (k' ≤ k, and ≤ n). Then it is
 * k'-anonymity, monotonic as k-anonymity is.
 */
export function kMapEstimated(
  spec: Extract<PrivacyModelSpec, { populationSize: number }>,
  rows: number,
): PrivacyModel {
  const derived = derivedK(spec.k, rows / spec.populationSize, spec.estimator, spec.significance, rows);
  return {
    ...kAnonymity(derived),
    spec,
    // The smallest class, and the size standing for k.
    achieved: (worst) => ({ k: worst, estimatedClassSize: derived }),
    describe(format) {
      return describeSpec(this.spec, format);
    },
  };
}

/** The class size k' that stands for k-map under an estimated population (ARX's rule). */
export function derivedK(
  k: number,
  fraction: number,
  estimator: KMapEstimator,
  significance: number,
  rows: number,
): number {
  const lambda = fraction * k;
  const threshold = 1 - significance;
  let p = Math.exp(-lambda); // P(X = 0)
  let value = 0;
  let found: number;
  if (estimator === 'poisson') {
    // The first c with P(X ≤ c) ≥ 1 − significance, plus 2 (as ARX counts).
    let c = 0;
    let cdf = p;
    for (;;) {
      if (value >= threshold) break;
      if (c + 1 >= k) return Math.min(k, rows);
      value = cdf;
      c++;
      p *= lambda / c;
      cdf += p;
    }
    found = c + 1;
  } else {
    // Zero-truncated: P(X = c | X > 0) summed from c = 1, plus 1.
    const positive = 1 - p;
    let c = 1;
    for (;;) {
      if (value >= threshold) break;
      if (c >= k) return Math.min(k, rows);
      p *= lambda / c;
      value += p / positive;
      c++;
    }
    found = c;
  }
  return Math.min(k, rows, found);
}
