/**
 * k-map (Sweeney; docs/definitions.md): every released class matches at least k records of
 * the population table, its QIs generalized by the same hierarchies. Monotonic with
 * suppression: a union of classes matches the population records of all its parts, and a
 * part of a class at most those of the whole.
 */
import { describeSpec } from './describe.ts';
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
    holds: (cls: ClassSummary) => cls.population! >= k,
    measure: (cls) => cls.population!,
    higherIsBetter: true,
    measureName: 'k',
  };
}
