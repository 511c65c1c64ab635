/**
 * The states' shared contract: what a run is asked, what Plan answers, what each Task takes.
 */

import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import type { ReleaseMethod } from '../../methods/method.ts';
import type { Claim } from '../publish.ts';
import type { StoreResolver } from '../storage/index.ts';

/** What a release run is asked to do (the execution input). */
export interface ReleaseRequest {
  /** release.json: a local path, file:///abs/path or s3://bucket/key. */
  readonly spec: string;
  /** Root of work/ and releases/ (default: the spec's bucket for an s3:// spec). */
  readonly store?: string;
  /** Publish here instead of `<store>/releases/<name>/<runId>/` (the CLI's --out). */
  readonly out?: string;
  /** Work area instead of `<store>/work/<name>/<runId>/`. */
  readonly work?: string;
  /** Row shards (default: one per `rowsPerShard` rows; each file of a folder is split apart). */
  readonly shards?: number;
  readonly rowsPerShard?: number;
  /** Rows per output part of a sharded release (default 2 million; one part is data.csv). */
  readonly rowsPerPart?: number;
  /**
   * The run id the execution was started for (deployed, Start computes it and names the
   * execution after it): Plan refuses a spec or input that no longer gives it.
   */
  readonly runId?: string;
}

/** What Plan is given: the request, and the execution's name (`$$.Execution.Name`), which names its locks. */
export interface PlanEvent {
  readonly request: ReleaseRequest;
  readonly execution?: string;
}

export interface PlanResult {
  readonly name: string;
  readonly runId: string;
  readonly work: string;
  readonly release: string;
  /** sharded: generalization over row shards; single: any method as one task. */
  readonly mode: 'sharded' | 'single';
  readonly method: string;
  /** Input rows and row shards: 0 in Plan's answer, Combine's once the pieces are read. */
  readonly rows: number;
  readonly shards: number;
  /** The input's pieces (its files), each scanned apart, and where the scan's map reads them. */
  readonly pieces: number;
  /** The input's size in bytes (its files'). */
  readonly bytes: number;
  readonly pieceItems: { readonly bucket: string; readonly key: string };
  /** Where the Distributed Maps read the shard items (bucket '' for the local filesystem). */
  readonly items: { readonly bucket: string; readonly key: string };
  /** Output parts of the release (sharded: each assembled apart; one part is data.csv/data.arrow). */
  readonly parts: number;
  /** Where the Distributed Map over output parts reads its items. */
  readonly partItems: { readonly bucket: string; readonly key: string };
  /**
   * Whether the release carries columns as their rows' bytes (sharded, with pass-through
   * columns): they are routed and shuffled beside the search (states/route.ts).
   */
  readonly routesBytes: boolean;
  /** The release folder's lock, taken by Plan and given up by Publish or ReportFailure. */
  readonly claim: Claim;
  /** When the run started (ms since 1970): error.json records it (Publish compares runs by it). */
  readonly started?: number;
  /**
   * Releases under a store (no `out`): where a failure of this release is recorded for its
   * users, `releases/<name>/error.json`, beside the run folders; Publish removes it when its run
   * started before this one.
   */
  readonly failureRecord?: string;
}

export interface ShardTask {
  readonly work: string;
  readonly index: number;
}

export interface WorkTask {
  readonly work: string;
}

/** One structured log line: names and numbers, never data values. */
export type LogEvent = Record<string, string | number | boolean | undefined>;

export interface PhaseEnv {
  readonly stores: StoreResolver;
  readonly kernel: GroupingKernel;
  /** Structured log (JSON lines in Lambda). */
  readonly log: (event: LogEvent) => void;
  /** Progress for a person (the CLI's stderr lines). */
  readonly say?: (line: string) => void;
  /** Local scratch folder (Lambda: /tmp). */
  readonly tmp?: string;
  readonly rowsPerShard?: number;
  /**
   * The states run on this machine (the local engine), not each in a function of its own
   * memory: a large input's shards keep their rows when they carry pass-through bytes
   * (plan.ts, shardLayout).
   */
  readonly onOneMachine?: boolean;
  /**
   * On this machine, the worker threads that share the map items (shards, parts), and the
   * fewest bytes of an input whose scan they take (engine.ts).
   */
  readonly workers?: { readonly threads: number; readonly minScanBytes: number };
  /**
   * Builds the release instead of the spec's method, as one task (`ppdp apply`: a saved
   * transformation re-applied). In-process only: a Lambda never gets one.
   */
  readonly method?: ReleaseMethod;
}

export const DEFAULT_ROWS_PER_SHARD = 1_000_000;

/** Released rows per output part: a part's shuffle and files stay well inside one function. */
export const DEFAULT_ROWS_PER_PART = 2_000_000;

/** More shards than this only add overhead (the Distributed Map could take more). */
export const MAX_SHARDS = 10_000;
