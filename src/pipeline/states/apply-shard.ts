/**
 * The ApplyShard state: the chosen node applied to one row shard.
 */
import { encodeArrow } from '../../data/arrow.ts';
import { buildHierarchy } from '../../hierarchy/hierarchy.ts';
import { applyGeneralization } from '../../methods/generalization/apply.ts';
import type { TupleSet } from '../../methods/generalization/index.ts';
import type { ReleaseSpec } from '../../spec/spec.ts';
import { recall, remember } from '../memo.ts';
import { getJson } from '../storage/index.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { columnLength, ms, openWork, runOf, shardRows, timing } from './work.ts';

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
      const kept = recall<TupleSet>(run, `counts/${task.index}`);
      if (kept) return kept.rowToTuple;
      const bytes = await store.get(work.key(`counts/${task.index}.rows`));
      return new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    })(),
  ]);
  const spec = work.spec;
  const method = spec.method as Extract<ReleaseSpec['method'], { name: 'generalization' }>;
  if (rowToTuple.length !== shard.rowCount) throw new Error(`shard ${task.index}: counts and rows disagree`);
  const suppressedRow = new Uint8Array(shard.rowCount);
  for (let r = 0; r < shard.rowCount; r++) suppressedRow[r] = flags[rowToTuple[r]!]!;
  const hierarchies = new Map(
    spec.attributes
      .filter((a) => a.type === 'quasi-identifying')
      .map((a) => [
        a.name,
        buildHierarchy(shard.columns.find((c) => c.name === a.name)!, a.hierarchy!, true),
      ]),
  );
  const released = applyGeneralization({
    table: shard,
    attributes: spec.attributes,
    hierarchies,
    node: found.node,
    suppressedRow,
    suppressed: method.suppressed,
  });
  await store.put(work.key(`released/${task.index}.arrow`), encodeArrow(released));
  remember(run, `released/${task.index}`, released);
  await timing(store, work.loc.key, `apply-${task.index}`, performance.now() - t0);
  const rows = released[0] ? columnLength(released[0]) : 0;
  env.log({ state: 'ApplyShard', shard: task.index, rows, ms: ms(t0) });
  return { rows };
}
