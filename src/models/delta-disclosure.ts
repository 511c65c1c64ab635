/**
 * δ-disclosure privacy (Brickell & Shmatikov): for every class and every SA value s
 * present in it, |ln(p(E,s)/p(T,s))| < δ. Natural log (ARX uses log₂; the report says which).
 * Not monotonic: merging a class with another can dilute a value present in only one of them.
 */
import { describeSpec } from './describe.ts';
import { type ClassCounts, type ClassSummary, entries, type PrivacyModel } from './model.ts';

export function deltaOf(histogram: ClassCounts, size: number, table: Float64Array): number {
  const { codes, counts, from, to } = entries(histogram);
  let worst = 0;
  for (let i = from; i < to; i++) {
    const s = codes ? codes[i]! : i;
    if (counts[i]! > 0) worst = Math.max(worst, Math.abs(Math.log(counts[i]! / size / table[s]!)));
  }
  return worst;
}

export function deltaDisclosure(attribute: string, delta: number, table: Float64Array): PrivacyModel {
  return {
    spec: { model: 'delta-disclosure', attribute, delta },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: false,
    minClassSize: 1,
    holds: (cls: ClassSummary) => deltaOf(cls.histogram!, cls.size, table) < delta,
    measure: (cls) => deltaOf(cls.histogram!, cls.size, table),
    higherIsBetter: false,
    measureName: 'delta',
  };
}
