/**
 * The ApplyShard state: the chosen node applied to one row shard.
 */
import { encodeArrow } from '../../data/arrow.ts';
import { scatterRaw } from '../../data/raw.ts';
import { compactDictionary, type OutputColumn } from '../../data/table.ts';
import type { ShardTuples } from '../../methods/method.ts';
import { scatterParts } from '../../util/keys.ts';
import { recall, remember } from '../memo.ts';
import { getJson } from '../storage/index.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { columnLength, ms, openWork, runOf, shardRows, shardSteps, timing, type Work } from './work.ts';

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
  const { parts } = work.file.plan;
  const pieces = scatter(released, parts, work, task.index, suppressedRow);
  await Promise.all(
    pieces.map(async (piece, p) => {
      await store.put(work.key(scatterKey(task.index, p)), encodeArrow(piece));
      remember(run, scatterKey(task.index, p), piece);
    }),
  );
  await timing(store, work.loc.key, `apply-${task.index}`, performance.now() - t0);
  const rows = released[0] ? columnLength(released[0]) : 0;
  env.log({ state: 'ApplyShard', shard: task.index, rows, ms: ms(t0) });
  return { rows };
}

/** The work area's key of shard `shard`'s released rows that go to output part `part`. */
export function scatterKey(shard: number, part: number): string {
  return `scatter/${shard}/${part}.arrow`;
}

/**
 * A shard's released rows split by output part (scatterParts: a keyed hash of each row's input
 * row), each part's rows kept in input order. Removed suppressed rows have no released row.
 */
function scatter(
  released: OutputColumn[],
  parts: number,
  work: Work,
  shard: number,
  suppressedRow: Uint8Array,
): OutputColumn[][] {
  if (parts === 1) return [released];
  const n = released[0] ? columnLength(released[0]) : 0;
  const firstRow = work.file.layout.shards[shard]!.firstRow;
  const partOf = scatterParts(work.spec.seed, Buffer.from(work.file.digest, 'hex'), parts);
  // Released row j's input row: rows are released in input order, removed ones skipped.
  const removed = n < suppressedRow.length;
  const part = new Int32Array(n);
  const sizes = new Int32Array(parts);
  for (let r = 0, j = 0; r < suppressedRow.length; r++) {
    if (removed && suppressedRow[r]) continue;
    const p = partOf(firstRow + r);
    part[j++] = p;
    sizes[p]!++;
  }
  const rowsOf = Array.from({ length: parts }, (_, p) => new Int32Array(sizes[p]!));
  const fill = new Int32Array(parts);
  for (let j = 0; j < n; j++) {
    const p = part[j]!;
    rowsOf[p]![fill[p]!++] = j;
  }
  // Values as bytes move as bytes: each column read once, its rows' ranges written to their part.
  const rawParts = released.map((c) => (c.kind === 'utf8' ? scatterRaw(c.values, part, parts) : undefined));
  return rowsOf.map((rows, p) =>
    released.map((c, k): OutputColumn => {
      if (c.kind === 'utf8') return { name: c.name, kind: 'utf8', values: rawParts[k]![p]! };
      const from = c.kind === 'number' ? c.values : c.codes;
      const to = c.kind === 'number' ? new Float64Array(rows.length) : new Int32Array(rows.length);
      for (let i = 0; i < rows.length; i++) to[i] = from[rows[i]!]!;
      if (c.kind === 'number') return { name: c.name, kind: 'number', values: to as Float64Array };
      // A dictionary larger than the piece (a column of distinct values, a free-text note)
      // keeps only the piece's values: each part's piece would otherwise write all the
      // shard's, and Assemble read them all back. Assemble codes the part's values in order of
      // first use in its shuffled rows, so the staged files do not change.
      return c.dictionary.length > rows.length
        ? compactDictionary(c.name, c.dictionary, to as Int32Array)
        : { name: c.name, kind: 'dictionary', dictionary: c.dictionary, codes: to as Int32Array };
    }),
  );
}
