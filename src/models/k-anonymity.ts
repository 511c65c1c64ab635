/**
 * k-anonymity (Samarati & Sweeney, seed 003): every released class has at least k rows.
 * Monotonic with suppression: merging classes only grows them, so a generalization of a
 * feasible node suppresses no more rows.
 */
import type { ClassSummary, PrivacyModel } from './model.ts';

export function kAnonymity(k: number): PrivacyModel {
  return {
    spec: { model: 'k-anonymity', k },
    attribute: null,
    monotonic: true,
    holds: (cls: ClassSummary) => cls.size >= k,
  };
}
