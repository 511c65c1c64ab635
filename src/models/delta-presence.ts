/**
 * δ-presence (Nergiz, Atzori & Clifton; docs/definitions.md): the sample is a subset of the
 * population table, and for every released class the share of the class's population records
 * that are in the sample, |sample in class| / |population in class|, lies in [δmin, δmax].
 * Not monotonic: merging classes averages their shares, so a failing class merged with
 * another may pass and a passing one may fail.
 */
import { describeSpec } from './describe.ts';
import type { ClassSummary, PrivacyModel } from './model.ts';

/** Relative tolerance of the bounds, for floating-point rounding of the share. */
const TOLERANCE = 1e-12;

export function presenceOf(cls: ClassSummary): number {
  return cls.size / cls.population!;
}

export function deltaPresence(deltaMin: number, deltaMax: number, population: string): PrivacyModel {
  return {
    spec: { model: 'delta-presence', deltaMin, deltaMax, population },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute: null,
    monotonic: false,
    monotonicWithoutSuppression: false,
    minClassSize: 1,
    needsPopulation: true,
    holds: (cls: ClassSummary) => {
      const p = presenceOf(cls);
      return p >= deltaMin * (1 - TOLERANCE) && p <= deltaMax * (1 + TOLERANCE);
    },
    measure: presenceOf,
    achieved: (worst, least) => ({ minPresence: least, maxPresence: worst }),
    higherIsBetter: false,
    measureName: 'deltaMax',
  };
}
