/**
 * δ-presence (Nergiz, Atzori & Clifton; docs/definitions.md): the sample is a subset of the
 * population table, and for every released class the share of the class's population records
 * that are in the sample, |sample in class| / |population in class|, lies in [δmin, δmax].
 * Not monotonic: merging classes averages their shares, so a failing class merged with
 * another may pass and a passing one may fail.
 */
import { ratioAtLeast, ratioAtMost } from '../util/exact.ts';
import { describeSpec } from './describe.ts';
import type { ClassSummary, PrivacyModel } from './model.ts';

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
    // The share's integers against the bounds' exact values: no rounding either way.
    holds: (cls: ClassSummary) =>
      cls.population! > 0 &&
      ratioAtLeast(cls.size, cls.population!, deltaMin) &&
      ratioAtMost(cls.size, cls.population!, deltaMax),
    measure: presenceOf,
    achieved: (worst, least) => ({ minPresence: least, maxPresence: worst }),
    higherIsBetter: false,
    measureName: 'deltaMax',
  };
}
