/**
 * The VerifySlice state: one piece of a sharded release's verification, so that no state
 * holds the whole table — an input shard's expectation (what its rows must be released as)
 * or an output part's summary (what the staged part holds). Verify compares them. The
 * hashes of a shard's columns held as bytes (a note, an amount, a timestamp: the most bytes a
 * row has) need no node: the HashBytes map (kind `bytes`) computes them beside the search, and
 * the shard's slice reads them in place of the bytes.
 */
import { readClaims } from '../../claims/index.ts';
import { writesParquet } from '../../release-spec/spec.ts';
import {
  type ClassEntries,
  decodeBytesHashes,
  encodeBytesHashes,
  partitionChunks,
  partitionsOf,
} from '../../verify/generalization-parts.ts';
import { pieces } from '../../verify/index.ts';
import { getJson, putJson } from '../storage/index.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import {
  inputDictionaries,
  ms,
  openWork,
  partFiles,
  rawColumns,
  shardRange,
  shardRows,
  stagedPaths,
  storedShardRows,
  timing,
} from './work.ts';

export interface SliceTask extends ShardTask {
  /** An input shard, an output part, or an input shard's columns held as bytes. */
  readonly kind: 'shard' | 'part' | 'bytes';
}

/** Where the hashes of shard `index`'s columns held as bytes lie in the work area. */
export function bytesHashesKey(index: number): string {
  return `verify/bytes-${index}.bin`;
}

/** Where a slice's facts lie in the work area (JSON; its classes lie beside, one file per partition). */
export function sliceKey(kind: SliceTask['kind'], index: number): string {
  return `verify/${kind}-${index}.json`;
}

/** Where partition `p` of a slice's classes lies in the work area. */
export function slicePartitionKey(kind: SliceTask['kind'], index: number, p: number): string {
  return `verify/${kind}-${index}/${p}.bin`;
}

export async function verifySlice(task: SliceTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const { parts } = work.file.plan;
  const shards = work.file.layout.shards.length;
  const count = task.kind === 'part' ? parts : task.kind === 'shard' || task.kind === 'bytes' ? shards : 0;
  if (!(Number.isInteger(task.index) && task.index >= 0 && task.index < count))
    throw new RangeError(`verification slice ${task.kind} ${task.index} is not in the plan`);
  const partitions = partitionsOf(work.file.layout.rowCount);
  // The classes, one file per partition (Verify reads a partition of every slice at a time),
  // written from the classes' own arrays, one after another (a rebased copy at most at a time).
  const putClasses = async (classes: ClassEntries) => {
    for (let p = 0; p < partitions; p++)
      await store.put(work.key(slicePartitionKey(task.kind, task.index, p)), partitionChunks(classes, p));
  };
  let rows: number;
  // The shards' columns held as bytes, whose hashes the HashBytes map leaves.
  const bytesColumns = rawColumns(work);
  if (task.kind === 'bytes') {
    const [bytes, values] = await Promise.all([
      storedShardRows(work, shardRange(work, task.index), 'bytes'),
      inputDictionaries(work),
    ]);
    const hashes = pieces.hashShardBytes(work.spec, values, bytes);
    await store.put(
      work.key(bytesHashesKey(task.index)),
      encodeBytesHashes(bytesColumns, hashes, bytes.rowCount),
    );
    rows = bytes.rowCount;
  } else if (task.kind === 'shard') {
    const json = await getJson<{ claims: unknown }>(store, work.key('search.json'));
    const claims = readClaims(json.claims, 'generalization', 'search.json');
    const hashed = bytesColumns.length > 0;
    const [shard, values, bytesHashed] = await Promise.all([
      shardRows(work, task.index, hashed ? 'coded' : 'all'),
      inputDictionaries(work),
      hashed
        ? store
            .get(work.key(bytesHashesKey(task.index)))
            .then((b) =>
              decodeBytesHashes(
                b,
                bytesColumns,
                shardRange(work, task.index).rows,
                bytesHashesKey(task.index),
              ),
            )
        : undefined,
    ]);
    const { classes, ...facts } = pieces.expectShard(
      work.spec,
      claims,
      shard,
      values,
      partitions,
      bytesHashed,
    );
    await putClasses(classes);
    await putJson(store, work.key(sliceKey('shard', task.index)), { ...facts, partitions });
    rows = facts.rows;
  } else {
    const files = partFiles(parts, task.index);
    const names = [files.arrow, files.csv, ...(writesParquet(work.spec) ? [files.parquet] : [])];
    const staged = await stagedPaths(work, env, names);
    try {
      const { classes, ...facts } = pieces.summarizePart(
        work.spec,
        work.file.layout.delimiter,
        {
          arrow: staged.path(files.arrow),
          csv: staged.path(files.csv),
          parquet: writesParquet(work.spec) ? staged.path(files.parquet) : undefined,
        },
        partitions,
      );
      // The hashes of the staged bytes, checked against their seals: the manifest lists them.
      const entries = names.map(staged.entry);
      await putClasses(classes);
      await putJson(store, work.key(sliceKey('part', task.index)), { ...facts, partitions, files: entries });
      rows = facts.rows;
    } finally {
      staged.dispose();
    }
  }
  await timing(store, work.loc.key, `check-${task.kind}-${task.index}`, performance.now() - t0);
  env.log({ state: 'VerifySlice', kind: task.kind, index: task.index, rows, ms: ms(t0) });
  return { rows };
}
