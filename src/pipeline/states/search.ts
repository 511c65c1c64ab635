/**
 * The Search state: the shards' counts merged, the method's one search, each shard's suppression flags.
 */
import type { ShardTuples } from '../../methods/method.ts';
import { recall, remember } from '../memo.ts';
import { decodeTuples } from '../rows.ts';
import { putJson } from '../storage/index.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { inputDictionaries, ms, openWork, runOf, shardSteps, timer, timing } from './work.ts';

export async function search(task: WorkTask, env: PhaseEnv): Promise<{ node: Record<string, number> }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const [table, parts] = await Promise.all([
    inputDictionaries(work),
    Promise.all(
      Array.from(
        { length: shards },
        async (_, s) =>
          recall<ShardTuples>(runOf(work), `counts/${s}`) ??
          decodeTuples(await store.get(work.key(`counts/${s}.bin`))),
      ),
    ),
  ]);
  const timings: Record<string, number> = {};
  const found = shardSteps(work).search(
    { spec: work.spec, table, kernel: env.kernel, time: timer(timings), say: env.say ?? (() => {}) },
    parts,
  );
  await Promise.all(
    found.flags.map((flags, s) =>
      store.put(work.key(`flags/${s}.bin`), remember(runOf(work), `flags/${s}`, flags)),
    ),
  );
  await putJson(store, work.key('search.json'), {
    node: found.node,
    claims: found.claims,
    report: found.report,
  });
  await timing(store, work.loc.key, 'merge', performance.now() - t0, timings);
  env.log({ state: 'Search', shards, ms: ms(t0) });
  return { node: found.node };
}
