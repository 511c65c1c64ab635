/**
 * Every state by its Task name: the one table the engines (in-process or in worker threads)
 * and the Lambda handlers bind the definition's Tasks to.
 */
import type { TaskName } from '../definition.ts';
import { applyShard } from './apply-shard.ts';
import { assemble } from './assemble.ts';
import { type AuditTask, audit } from './audit.ts';
import { build } from './build.ts';
import { combine } from './combine.ts';
import { countShard } from './count-shard.ts';
import { plan } from './plan.ts';
import { publish } from './publish.ts';
import { reportFailure } from './report-failure.ts';
import { scanPiece } from './scan-piece.ts';
import { search } from './search.ts';
import type { PhaseEnv, PlanEvent, ShardTask, WorkTask } from './types.ts';
import { verify } from './verify.ts';
import { type SliceTask, verifySlice } from './verify-slice.ts';

export type StateFunction = (input: never, env: PhaseEnv) => Promise<unknown>;

export const STATES: Record<TaskName, StateFunction> = {
  Plan: (i: PlanEvent, env) => plan(i, env),
  ScanPiece: (i: ShardTask, env) => scanPiece(i, env),
  Combine: (i: WorkTask, env) => combine(i, env),
  CountShard: (i: ShardTask, env) => countShard(i, env),
  Search: (i: WorkTask, env) => search(i, env),
  ApplyShard: (i: ShardTask, env) => applyShard(i, env),
  Assemble: (i: ShardTask, env) => assemble(i, env),
  VerifySlice: (i: SliceTask, env) => verifySlice(i, env),
  Audit: (i: AuditTask, env) => audit(i, env),
  Build: (i: WorkTask, env) => build(i, env),
  Verify: (i: WorkTask, env) => verify(i, env),
  Publish: (i: WorkTask & { release: string }, env) => publish(i, env),
  ReportFailure: (i: Parameters<typeof reportFailure>[0], env) => reportFailure(i, env),
};

/** The states a Distributed Map fans out: one item each, independent of the others. */
export const MAP_STATES: readonly TaskName[] = [
  'ScanPiece',
  'CountShard',
  'ApplyShard',
  'Assemble',
  'VerifySlice',
];

/**
 * The states the local engine may run in a worker thread: the map items, and Audit and Search,
 * which run beside maps (the parts' slices; the bytes routed and shuffled) and would otherwise
 * hold the thread that hands out their items.
 */
export const WORKER_STATES: readonly TaskName[] = [...MAP_STATES, 'Audit', 'Search'];
