/**
 * Average re-identification risk (docs/definitions.md): the mean over released rows of
 * 1/|class|, which is (released classes) / (released rows); suppressed rows are left out, as
 * ARX leaves them out. Judged on the release as a whole: the method suppresses the smallest
 * classes first until it holds (that suppresses the fewest rows, see the definitions).
 *
 * Without suppression it is monotonic (classes only merge as levels rise, so their number
 * falls). With suppression feasibility stays monotonic, but the rows a node suppresses need
 * not be suppressed at its specializations, which the search's bounds assume: the search
 * treats it as non-monotonic then.
 */
import { ratioAtMost } from '../util/exact.ts';
import { describeSpec } from './describe.ts';
import type { ClassSummary, PrivacyModel } from './model.ts';

export function averageRisk(threshold: number): PrivacyModel {
  return {
    spec: { model: 'average-risk', threshold },
    describe(format) {
      return describeSpec(this.spec, format);
    },
    attribute: null,
    monotonic: false,
    monotonicWithoutSuppression: true,
    minClassSize: 1,
    holds: () => true,
    // classes/rows against the threshold's exact value: no rounding either way.
    overall: (classes, rows) => rows > 0 && ratioAtMost(classes, rows, threshold),
    // A class's own risk; the report gives the release's mean.
    measure: (cls: ClassSummary) => 1 / cls.size,
    higherIsBetter: false,
    measureName: 'threshold',
  };
}
