/**
 * l-diversity (Machanavajjhala et al.; docs/definitions.md §2) in its three forms.
 * - distinct: at least l distinct SA values per class. Monotonic with suppression: a union
 *   has at least the distinct values of each part, a part at most those of the whole.
 * - entropy: −Σ p·ln p ≥ ln l. Entropy is concave, so a union of passing classes passes
 *   (monotonic without suppression), but a failing class merged with a passing one may fail.
 * - recursive (c,l): r1 < c·(r_l + r_{l+1} + …) with counts sorted descending. Not monotonic
 *   in general: the search treats it as such and evaluates every candidate.
 */
import type { ClassSummary, PrivacyModel } from './model.ts';

export function distinctLDiversity(attribute: string, l: number): PrivacyModel {
  const distinct = (h: Int32Array) => {
    let n = 0;
    for (const c of h) if (c > 0) n++;
    return n;
  };
  return {
    spec: { model: 'distinct-l-diversity', attribute, l },
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
export function entropyOf(histogram: Int32Array, size: number): number {
  let h = 0;
  for (const c of histogram) {
    if (c > 0) {
      const p = c / size;
      h -= p * Math.log(p);
    }
  }
  return h;
}

export function entropyLDiversity(attribute: string, l: number): PrivacyModel {
  // A hair of tolerance so a class with exactly l equally frequent values passes.
  const threshold = Math.log(l) - 1e-12;
  return {
    spec: { model: 'entropy-l-diversity', attribute, l },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: true,
    // Entropy over s rows is at most ln s.
    minClassSize: Math.max(1, Math.ceil(l - 1e-9)),
    holds: (cls) => entropyOf(cls.histogram!, cls.size) >= threshold,
    measure: (cls) => Math.exp(entropyOf(cls.histogram!, cls.size)),
    higherIsBetter: true,
    measureName: 'l',
  };
}

/** r1 / (r_l + r_{l+1} + …): the class passes when this is below c. */
export function recursiveRatio(histogram: Int32Array, l: number): number {
  const counts = Array.from(histogram)
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
