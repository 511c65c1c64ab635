/** What a Mondrian run produced: shared by the build and its report. */
import type { PartitionResult, RelaxedStrategy } from './partition.ts';
import type { Released } from './release.ts';

export interface MondrianOutcome {
  readonly result: PartitionResult;
  readonly released: Released;
  /** The strategy whose partitions were released (`applied`: saved partitions, `ppdp apply`). */
  readonly strategy: 'strict' | RelaxedStrategy | 'applied';
  /** Relaxed: each strategy's NCP. */
  readonly candidates: { strategy: RelaxedStrategy; ncp: number }[];
}
