/**
 * The Search state: the shards' counts merged, the method's one search, each shard's suppression flags.
 */
import { drawsSecretSample } from '../../catalogue/catalogue.ts';
import { stateBudgets } from '../../data/limits.ts';
import type { MethodContext, ShardTuples } from '../../methods/method.ts';
import { recall, remember } from '../memo.ts';
import { decodeTuples } from '../rows.ts';
import { putJson } from '../storage/index.ts';
import { rowsRead } from './scan-piece.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { inputDictionaries, ms, openWork, runOf, shardSteps, timer, timing, type Work } from './work.ts';

export async function search(task: WorkTask, env: PhaseEnv): Promise<{ node: Record<string, number> }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const timings: Record<string, number> = {};
  const node = await searchWork(work, env, timer(timings));
  await timing(work.loc.store, work.loc.key, 'merge', performance.now() - t0, timings);
  env.log({ state: 'Search', shards: work.file.layout.shards.length, ms: ms(t0) });
  return { node };
}

/** The state's work on an opened work area, its phases timed by `time` (bench/search-memory.ts). */
export async function searchWork(
  work: Work,
  env: PhaseEnv,
  time: MethodContext['time'],
): Promise<Record<string, number>> {
  const { store } = work.loc;
  const [table, inputRows] = await Promise.all([
    inputDictionaries(work),
    // Shards holding a secret sample: the rows it was drawn from, as the scans read them.
    drawsSecretSample(work.spec.privacy) ? rowsRead(work) : undefined,
  ]);
  // The search's grouping may hold every tuple in one instance when the state's budget has room.
  const kernel = env.kernel.within?.(stateBudgets(work.spec).Search.bytes) ?? env.kernel;
  const found = await shardSteps(work).search(
    { spec: work.spec, table, kernel, time, say: env.say ?? (() => {}) },
    {
      shards: work.file.layout.shards.length,
      ...(inputRows !== undefined ? { inputRows } : {}),
      read: async (s) =>
        recall<ShardTuples>(runOf(work), `counts/${s}`) ??
        decodeTuples(await store.get(work.key(`counts/${s}.bin`))),
    },
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
  return found.node;
}
