/**
 * k-anonymity (Samarati & Sweeney): every released class has at least k rows.
 * Monotonic with suppression: merging classes only grows them.
 */
import { describeSpec } from './describe.ts';
import type { ClassSummary, PrivacyModel } from './model.ts';

export function kAnonymity(k: number): PrivacyModel {
  return {
    spec: { model: 'k-anonymity', k },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute: null,
    monotonic: true,
    monotonicWithoutSuppression: true,
    minClassSize: k,
    holds: (cls: ClassSummary) => cls.size >= k,
    measure: (cls) => cls.size,
    higherIsBetter: true,
    measureName: 'k',
  };
}
