/**
 * The ApplyShard state: the chosen node applied to one row shard.
 */
import { encodeArrowPieces } from '../../data/arrow.ts';
import { compactDictionary, type OutputColumn } from '../../data/table.ts';
import type { ShardTuples } from '../../methods/method.ts';
import { gather, gatherFloat } from '../../util/gather.ts';
import { recall, remember } from '../memo.ts';
import { getJson } from '../storage/index.ts';
import { keptKey, type PhasedTask, partsOfRows, routeShard } from './route.ts';
import type { PhaseEnv } from './types.ts';
import { columnLength, ms, openWork, runOf, shardRows, shardSteps, timing, type Work } from './work.ts';

export async function applyShard(task: PhasedTask, env: PhaseEnv): Promise<{ rows: number }> {
  if (task.phase === 'route') return routeShard(task, env);
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const run = runOf(work);
  const [read, flags, found, rowToTuple] = await Promise.all([
    shardRows(work, task.index, 'coded'),
    recall<Uint8Array>(run, `flags/${task.index}`) ?? store.get(work.key(`flags/${task.index}.bin`)),
    getJson<{ node: Record<string, number> }>(store, work.key('search.json')),
    (async () => {
      const kept = recall<ShardTuples>(run, `counts/${task.index}`);
      if (kept) return kept.rowToTuple;
      const bytes = await store.get(work.key(`counts/${task.index}.rows`));
      return new Int32Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength));
    })(),
  ]);
  if (rowToTuple.length !== read.rowCount) throw new Error(`shard ${task.index}: counts and rows disagree`);
  // The columns held as bytes went to their parts beside the search (RouteShard).
  const shard = { ...read, columns: read.columns.filter((c) => !c.raw) };
  const suppressedRow = new Uint8Array(shard.rowCount);
  for (let r = 0; r < shard.rowCount; r++) suppressedRow[r] = flags[rowToTuple[r]!]!;
  const released = shardSteps(work).apply(work.spec, shard, found.node, suppressedRow);
  const pieces = scatter(released, work, task.index, suppressedRow);
  await Promise.all(
    pieces.flatMap(({ columns, kept }, p) => [
      (async () => {
        await store.put(work.key(scatterKey(task.index, p)), await encodeArrowPieces(columns));
        remember(run, scatterKey(task.index, p), columns);
      })(),
      (async () => {
        await store.put(work.key(keptKey(task.index, p)), kept);
        remember(run, keptKey(task.index, p), kept);
      })(),
    ]),
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
 * A shard's released rows split by output part (partsOfRows: a keyed hash of each row's input
 * row), each part's rows kept in input order; and per part, which of the shard's rows routed
 * there are released (1) or removed (0), in input order.
 */
function scatter(
  released: OutputColumn[],
  work: Work,
  shard: number,
  suppressedRow: Uint8Array,
): { columns: OutputColumn[]; kept: Uint8Array }[] {
  const { parts } = work.file.plan;
  const n = released[0] ? columnLength(released[0]) : 0;
  const routed = partsOfRows(work, shard, suppressedRow.length);
  // Released row j's input row: rows are released in input order, removed ones skipped.
  const removed = n < suppressedRow.length;
  const part = new Int32Array(n);
  const sizes = new Int32Array(parts);
  const routedSizes = new Int32Array(parts);
  for (let r = 0; r < suppressedRow.length; r++) routedSizes[routed[r]!]!++;
  const kept = Array.from({ length: parts }, (_, p) => new Uint8Array(routedSizes[p]!));
  const next = new Int32Array(parts);
  for (let r = 0, j = 0; r < suppressedRow.length; r++) {
    const p = routed[r]!;
    if (removed && suppressedRow[r]) {
      next[p]!++;
      continue;
    }
    kept[p]![next[p]!++] = 1;
    part[j++] = p;
    sizes[p]!++;
  }
  if (parts === 1) return [{ columns: released, kept: kept[0]! }];
  const rowsOf = Array.from({ length: parts }, (_, p) => new Int32Array(sizes[p]!));
  const fill = new Int32Array(parts);
  for (let j = 0; j < n; j++) {
    const p = part[j]!;
    rowsOf[p]![fill[p]!++] = j;
  }
  return rowsOf.map((rows, p) => ({
    kept: kept[p]!,
    columns: released.map((c): OutputColumn => {
      if (c.kind === 'utf8') throw new Error(`column ${c.name}: bytes are routed beside the search`);
      if (c.kind === 'number') return { name: c.name, kind: 'number', values: gatherFloat(c.values, rows) };
      const to = gather(c.codes, rows);
      // A dictionary larger than the piece (a column of distinct values, a free-text note)
      // keeps only the piece's values: each part's piece would otherwise write all the
      // shard's, and Assemble read them all back. Assemble codes the part's values in order of
      // first use in its shuffled rows, so the staged files do not change.
      return c.dictionary.length > rows.length
        ? compactDictionary(c.name, c.dictionary, to)
        : { name: c.name, kind: 'dictionary', dictionary: c.dictionary, codes: to };
    }),
  }));
}
