/**
 * The CountShard state: one row shard collapsed to its distinct tuples with counts.
 */
import { remember } from '../memo.ts';
import { encodeTuples } from '../rows.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { ms, openWork, runOf, shardRows, shardSteps, timing } from './work.ts';

export async function countShard(task: ShardTask, env: PhaseEnv): Promise<{ tuples: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const shard = await shardRows(work, task.index, 'coded');
  const tuples = remember(
    runOf(work),
    `counts/${task.index}`,
    shardSteps(work).count(work.spec, shard, env.kernel),
  );
  const rows = tuples.rowToTuple;
  await Promise.all([
    work.loc.store.put(work.key(`counts/${task.index}.bin`), encodeTuples(tuples)),
    // Each row's tuple, so ApplyShard need not collapse the shard again.
    work.loc.store.put(
      work.key(`counts/${task.index}.rows`),
      new Uint8Array(rows.buffer, rows.byteOffset, rows.byteLength),
    ),
  ]);
  await timing(work.loc.store, work.loc.key, `count-${task.index}`, performance.now() - t0);
  env.log({
    state: 'CountShard',
    shard: task.index,
    rows: shard.rowCount,
    tuples: tuples.counts.length,
    ms: ms(t0),
  });
  return { tuples: tuples.counts.length };
}
