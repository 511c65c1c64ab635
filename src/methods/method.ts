/**
 * The contract every release method implements (generalization, Mondrian, Anatomy, Slicing,
 * randomization). The pipeline owns input, staging, publishing and the report's frame; a
 * method transforms the table, names its files, fills its report sections and states its
 * claims (the contract in src/claims/), which src/verify/ checks against the spec and the
 * staged files with code of its own.
 */
import type { Claims } from '../claims/index.ts';
import type { ReleaseReport } from '../contracts/report.ts';
import type { EncodedTable, OutputColumn } from '../data/table.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import type { MethodName, ReleaseSpec } from '../release-spec/spec.ts';
import type { Random } from '../util/random.ts';

export interface MethodContext {
  readonly spec: ReleaseSpec;
  readonly table: EncodedTable;
  readonly kernel: GroupingKernel;
  /** Adds a phase's wall time in ms to the report. */
  readonly time: <T>(phase: string, work: () => T) => T;
  /** A progress line for a person. */
  readonly say: (line: string) => void;
  /**
   * A random stream for one purpose (e.g. `shuffle`), keyed by the spec's seed and the
   * input's content (src/util/keys.ts): reproducible, but not replayable from the release.
   */
  readonly random: (purpose: string) => Random;
}

export interface StagedFile {
  readonly name: string;
  readonly content: Uint8Array | string;
}

/** What the method fills in; the pipeline adds ppdp, spec, input, verification and timings. */
export type MethodReport = Omit<
  ReleaseReport,
  'format' | 'ppdp' | 'spec' | 'input' | 'verification' | 'timings'
>;

export interface BuiltRelease {
  /** Released files (data.arrow, data.csv, and any method-specific ones), staged as given. */
  readonly files: StagedFile[];
  readonly report: MethodReport;
  /**
   * What the method claims about its release (JSON, src/claims/): the pipeline hands it, the
   * input and the staged files to the method's verifier (src/verify/index.ts `verifierFor`).
   */
  readonly claims: Claims;
}

export interface ReleaseMethod {
  readonly name: MethodName;
  build(ctx: MethodContext): BuiltRelease;
  /**
   * The same release, yielding to the event loop during long work (so that a signal stops the
   * run promptly); the Build state prefers it when present.
   */
  buildAsync?(ctx: MethodContext): Promise<BuiltRelease>;
  /** Present when the method fans out over row shards (the Count / Search / Apply states). */
  readonly shards?: ShardSteps;
}

/** A shard's rows collapsed to distinct tuples: the tuples' codes, their counts, each row's tuple. */
export interface ShardTuples {
  readonly columns: Int32Array[];
  readonly counts: Int32Array;
  readonly rowToTuple: Int32Array;
}

/**
 * The shards' counts as the search reads them: one shard at a time, in shard order, so that
 * no more than a shard or two need be held at once.
 */
export interface ShardCounts {
  readonly shards: number;
  /** The input's rows, when the shards hold a secret sample of them ((ε, δ)-differential privacy). */
  readonly inputRows?: number;
  read(shard: number): Promise<Pick<ShardTuples, 'columns' | 'counts'>>;
}

/** What one search over every shard's tuples decides. */
export interface ShardSearch {
  readonly node: Record<string, number>;
  readonly claims: Claims;
  readonly report: MethodReport;
  /** Per shard, per tuple of its count: 1 when the tuple's rows are suppressed. */
  readonly flags: Uint8Array[];
}

/**
 * A method's steps over row shards, run on different machines: each shard counted apart, one
 * search over the counts merged in shard order, each shard released apart (rows keep their
 * input order; the Assemble state shuffles once). One shard or many release the same bytes.
 */
export interface ShardSteps {
  count(spec: ReleaseSpec, shard: EncodedTable, kernel: GroupingKernel): ShardTuples;
  /**
   * `table` gives the columns' dictionaries (no rows); `counts` reads the shards' counts (row
   * maps not needed). `count` checks what the search would otherwise find in the rows.
   */
  search(ctx: Omit<MethodContext, 'random'>, counts: ShardCounts): Promise<ShardSearch>;
  apply(
    spec: ReleaseSpec,
    shard: EncodedTable,
    node: Record<string, number>,
    suppressedRow: Uint8Array,
  ): OutputColumn[];
  /**
   * The columns the steps only carry to the release unchanged (no count, search or model reads
   * them): the shards hold them as their rows' bytes (EncodedColumn.raw), never as codes, and
   * `apply` releases them as `utf8` columns.
   */
  passThrough?(spec: ReleaseSpec): string[];
}
