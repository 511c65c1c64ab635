/**
 * The Search state: the shards' tuples merged, the optimal node searched, each shard's suppression flags.
 */
import type { EncodedTable } from '../../data/table.ts';
import type { GroupingKernel } from '../../kernels/grouping.ts';
import {
  collapseColumnNames,
  prepareGeneralization,
  searchStep,
  type TupleSet,
} from '../../methods/generalization/index.ts';
import { recall, remember } from '../memo.ts';
import { decodeTuples, type TupleColumns } from '../rows.ts';
import { putJson } from '../storage/index.ts';
import type { PhaseEnv, WorkTask } from './types.ts';
import { allRows, ms, openWork, runOf, timer, timing } from './work.ts';

export async function search(task: WorkTask, env: PhaseEnv): Promise<{ node: Record<string, number> }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const [table, parts] = await Promise.all([
    allRows(work),
    Promise.all(
      Array.from(
        { length: shards },
        async (_, s) =>
          recall<TupleSet>(runOf(work), `counts/${s}`) ??
          decodeTuples(await store.get(work.key(`counts/${s}.bin`))),
      ),
    ),
  ]);
  // Merge the shards' distinct tuples in shard order: the merged tuples come out in order of
  // first appearance in the input, exactly as one collapse over every row would give them.
  const { merged, groupOf } = mergeTuples(parts, collapseColumnNames(work.spec), table, env.kernel);

  const timings: Record<string, number> = {};
  const time = timer(timings);
  const prepared = prepareGeneralization(work.spec, table, env.kernel, time, merged);
  const step = searchStep(prepared, env.kernel, time, env.say ?? (() => {}));
  // Each shard's flags: its local tuples → merged tuple → suppressed.
  let at = 0;
  await Promise.all(
    parts.map((p, s) => {
      const flags = new Uint8Array(p.counts.length);
      for (let t = 0; t < flags.length; t++) flags[t] = step.tupleSuppressed[groupOf[at + t]!]!;
      at += p.counts.length;
      return store.put(work.key(`flags/${s}.bin`), remember(runOf(work), `flags/${s}`, flags));
    }),
  );
  await putJson(store, work.key('search.json'), {
    node: step.node,
    claims: step.claims,
    report: step.report,
  });
  await timing(store, work.loc.key, 'merge', performance.now() - t0, timings);
  env.log({ state: 'Search', tuples: merged.counts.length, ms: ms(t0) });
  return { node: step.node };
}

/**
 * The shards' distinct tuples merged in shard order: in order of first appearance in the
 * input, exactly as one collapse over every row would give them. `groupOf` maps each shard's
 * tuples, concatenated, to the merged ones. One shard's tuples are already that.
 */
function mergeTuples(
  parts: readonly TupleColumns[],
  names: readonly string[],
  table: EncodedTable,
  kernel: GroupingKernel,
): { merged: TupleSet; groupOf: Int32Array } {
  if (parts.length === 1) {
    const [only] = parts as [TupleColumns];
    return {
      merged: { columns: only.columns, counts: only.counts, rowToTuple: new Int32Array(0) },
      groupOf: Int32Array.from({ length: only.counts.length }, (_, t) => t),
    };
  }
  const total = parts.reduce((n, p) => n + p.counts.length, 0);
  const concat = (pick: (p: TupleColumns) => Int32Array) => {
    const out = new Int32Array(total);
    let at = 0;
    for (const p of parts) {
      out.set(pick(p), at);
      at += p.counts.length;
    }
    return out;
  };
  const columns = names.map((_, c) => concat((p) => p.columns[c]!));
  const counts = concat((p) => p.counts);
  const domains = names.map((n) => table.columns.find((c) => c.name === n)!.dictionary.length);
  const session = kernel.open(
    { columns, counts, domains },
    names.map(() => []),
  );
  const { groups, groupOf, sizes } = session.group(null);
  const merged = { columns: session.keys(groups), counts: sizes, rowToTuple: new Int32Array(0) };
  session.dispose();
  return { merged, groupOf };
}
