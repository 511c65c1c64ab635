/**
 * k-anonymity (Samarati & Sweeney): every released class has at least k rows.
 * Monotonic with suppression: merging classes only grows them.
 */
import type { ClassSummary, PrivacyModel } from './model.ts';

export function kAnonymity(k: number): PrivacyModel {
  return {
    spec: { model: 'k-anonymity', k },
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
