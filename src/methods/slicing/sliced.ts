/** A sliced table before it is written: shared by the build and its report. */
import type { EncodedColumn, OutputColumn } from '../../data/table.ts';
import type { AttributeSpec } from '../../release-spec/spec.ts';
import type { DiversityRequirement } from '../bucket-common.ts';
import type { ColumnPlan } from './columns.ts';
import type { SlicingProblem, TuplePartition } from './partition.ts';

/** Everything up to the release files, shared by the method, the tests and benchmarks. */
export interface SlicedRelease {
  readonly req: DiversityRequirement;
  readonly attributes: AttributeSpec[];
  readonly columns: EncodedColumn[];
  readonly phi: number[][];
  readonly discretization: string[];
  readonly plan: ColumnPlan;
  readonly problem: SlicingProblem;
  readonly partition: TuplePartition;
  /** Per slicing column: row → code of its full value, and the value strings. */
  readonly valueCodes: Int32Array[];
  readonly valueStrings: string[][];
  /** Final bucket (partition order) → released id. */
  readonly ids: Int32Array;
  readonly output: OutputColumn[];
  /** Input row → released bucket id. */
  readonly bucketOfRow: Int32Array;
}
