/** Everything the generalization search needs, prepared once: shared by the search, the release and its report. */

import type { EncodedColumn, EncodedTable } from '../../data/table.ts';
import type { TupleSet } from '../../data/tuples.ts';
import type { Hierarchy } from '../../hierarchy/hierarchy.ts';
import type { SensitiveAttribute } from '../../models/index.ts';
import type { GeneralizationMethodSpec, ReleaseSpec } from '../../release-spec/spec.ts';
import type { GeneralizationProblem } from './evaluate.ts';
import type { PopulationTuples } from './population.ts';

/** Everything up to the search, shared by the release, the tests and the benchmarks. */
export interface Prepared {
  readonly spec: ReleaseSpec;
  readonly method: GeneralizationMethodSpec;
  readonly table: EncodedTable;
  readonly qis: EncodedColumn[];
  readonly hierarchies: Hierarchy[];
  readonly tuples: TupleSet;
  readonly problem: GeneralizationProblem;
  /** Every sensitive attribute with its value per distinct tuple (for the disclosure measures). */
  readonly sensitive: { readonly attribute: SensitiveAttribute; readonly values: Int32Array }[];
  /** The population table of k-map and δ-presence, when the spec names one. */
  readonly population: PopulationTuples | undefined;
  /**
   * With an entity column (docs/definitions.md, "Several rows per person"): per distinct tuple
   * (the tuples then also carry the entity), its person's code, and the persons in the input.
   */
  readonly entity?: { readonly of: Int32Array; readonly codes: number; readonly persons: number } | undefined;
}
