/**
 * Evaluating one lattice node: group the distinct tuples under the node's levels (WASM or TS
 * kernel), judge every class against the privacy models, suppress the failing classes, and
 * measure utility. The one operation the search counts as a "check".
 */
import type { GroupingSession } from '../../kernels/grouping.ts';
import type { ClassOutcome, GeneralizationMetrics, MetricValues } from '../../metrics/generalization.ts';
import type { PrivacyModel } from '../../models/model.ts';
import type { MetricName } from '../../spec/spec.ts';
import type { Lattice } from './lattice.ts';

/** A sensitive attribute's values per distinct tuple (codes in [0, width)). */
export interface SensitiveColumn {
  readonly attribute: string;
  readonly values: Int32Array;
  readonly width: number;
  /** p(T, s) over the input. */
  readonly distribution: Float64Array;
}

/** Everything the search needs, over distinct tuples rather than rows. */
export interface GeneralizationProblem {
  readonly lattice: Lattice;
  readonly rows: number;
  readonly counts: Int32Array;
  readonly models: readonly PrivacyModel[];
  readonly sensitive: readonly SensitiveColumn[];
  readonly maxSuppressedRows: number;
  readonly metric: MetricName;
  readonly metrics: GeneralizationMetrics;
}

/** Per-class counts of one sensitive attribute: `counts[g * width + s]`. */
export interface ClassHistograms {
  readonly attribute: string;
  readonly width: number;
  readonly counts: Int32Array;
}

/**
 * The outcome of one node. For an infeasible node the class loop stops once the suppression
 * limit is passed: `suppressed`, `retainedClasses` and `minClassSize` are then partial, and
 * only `feasible`, `groups`, `groupOf` and `sizes` may be relied on.
 */
export interface NodeResult extends ClassOutcome {
  readonly id: number;
  readonly histograms: ClassHistograms[];
  readonly levels: number[];
  readonly feasible: boolean;
  /** Smallest retained class (0 when none is retained). */
  readonly minClassSize: number;
  /** Utility of the node; +∞ for infeasible nodes (never released, so never measured). */
  readonly values: MetricValues;
  /** The spec's metric. */
  readonly value: number;
}

const INFEASIBLE_VALUES: MetricValues = Object.freeze({
  ncp: Number.POSITIVE_INFINITY,
  discernibility: Number.POSITIVE_INFINITY,
  precision: Number.POSITIVE_INFINITY,
  aecs: Number.POSITIVE_INFINITY,
  entropy: Number.POSITIVE_INFINITY,
});

export class NodeEvaluator {
  /** Distinct nodes evaluated so far. */
  checked = 0;

  constructor(
    readonly problem: GeneralizationProblem,
    private readonly session: GroupingSession,
  ) {}

  evaluate(id: number): NodeResult {
    const { problem } = this;
    this.checked++;
    const levels = problem.lattice.levels(id);
    const { groups, groupOf, sizes } = this.session.group(levels);
    const histograms: ClassHistograms[] = problem.sensitive.map((sa) => ({
      attribute: sa.attribute,
      width: sa.width,
      counts: this.session.histogram(groupOf, groups, sa.values, sa.width),
    }));
    const suppressed = new Uint8Array(groups);
    let suppressedRows = 0;
    let retainedClasses = 0;
    let minClassSize = 0;
    for (let g = 0; g < groups; g++) {
      const size = sizes[g]!;
      let holds = true;
      for (const model of problem.models) {
        const h =
          model.attribute === null ? undefined : histograms.find((x) => x.attribute === model.attribute);
        const histogram = h ? h.counts.subarray(g * h.width, (g + 1) * h.width) : null;
        if (!model.holds({ size, histogram })) {
          holds = false;
          break;
        }
      }
      if (holds) {
        retainedClasses++;
        if (minClassSize === 0 || size < minClassSize) minClassSize = size;
      } else {
        suppressed[g] = 1;
        suppressedRows += size;
        // Past the limit the node is infeasible: its classes no longer matter.
        if (suppressedRows > problem.maxSuppressedRows) break;
      }
    }
    const outcome: ClassOutcome = { groups, groupOf, sizes, suppressed, suppressedRows, retainedClasses };
    // Utility matters only where the node may be released: skip it for infeasible nodes.
    // A node that suppresses every row releases nothing (or only masked rows): never a solution.
    const feasible = suppressedRows <= problem.maxSuppressedRows && retainedClasses > 0;
    const values = feasible ? problem.metrics.values(levels, outcome) : INFEASIBLE_VALUES;
    return {
      ...outcome,
      id,
      levels,
      histograms,
      feasible,
      minClassSize,
      values,
      value: values[problem.metric],
    };
  }
}
