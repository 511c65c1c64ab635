/**
 * The ApplyShard state: the chosen node applied to one row shard.
 */
import { encodeArrow } from '../../data/arrow.ts';
import type { ShardTuples } from '../../methods/method.ts';
import { recall, remember } from '../memo.ts';
import { getJson } from '../storage/index.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { columnLength, ms, openWork, runOf, shardRows, shardSteps, timing } from './work.ts';

export async function applyShard(task: ShardTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const run = runOf(work);
  const [shard, flags, found, rowToTuple] = await Promise.all([
    shardRows(work, task.index),
    recall<Uint8Array>(run, `flags/${task.index}`) ?? store.get(work.key(`flags/${task.index}.bin`)),
    getJson<{ node: Record<string, number> }>(store, work.key('search.json')),
    (async () => {
      const kept = recall<ShardTuples>(run, `counts/${task.index}`);
      if (kept) return kept.rowToTuple;
      const bytes = await store.get(work.key(`counts/${task.index}.rows`));
      return new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    })(),
  ]);
  if (rowToTuple.length !== shard.rowCount) throw new Error(`shard ${task.index}: counts and rows disagree`);
  const suppressedRow = new Uint8Array(shard.rowCount);
  for (let r = 0; r < shard.rowCount; r++) suppressedRow[r] = flags[rowToTuple[r]!]!;
  const released = shardSteps(work).apply(work.spec, shard, found.node, suppressedRow);
  await store.put(work.key(`released/${task.index}.arrow`), encodeArrow(released));
  remember(run, `released/${task.index}`, released);
  await timing(store, work.loc.key, `apply-${task.index}`, performance.now() - t0);
  const rows = released[0] ? columnLength(released[0]) : 0;
  env.log({ state: 'ApplyShard', shard: task.index, rows, ms: ms(t0) });
  return { rows };
}
