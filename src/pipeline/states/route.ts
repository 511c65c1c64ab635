/**
 * The columns a release in parts carries as their rows' bytes (pass-through: a note, an
 * amount, a timestamp) are split by output part while the search runs, as nothing about that
 * waits on its node: RouteShard (an ApplyShard phase) writes each shard's bytes of every row
 * (which rows the release removes is not known yet) to the row's output part, route/N/P.arrow.
 * After the search, ApplyShard writes per piece which of its rows are kept (keptKey), and
 * Assemble gathers the part's kept rows' bytes from the routed pieces in the order of its
 * shuffle (`partOrder`, of all the part's routed rows, the removed ones dropped).
 */
import { DataType, tableFromIPC } from 'apache-arrow';
import { encodeArrowPieces, indexArray, indicesAsCodes } from '../../data/arrow.ts';
import { concatRaw, scatterRaw } from '../../data/raw.ts';
import { type CodeArray, type OutputColumn, unionOfDictionaries } from '../../data/table.ts';
import { utf8VectorValues } from '../../data/utf8.ts';
import { keyedRandom, scatterParts } from '../../util/keys.ts';
import { recall, remember } from '../memo.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { ms, openWork, rawColumns, runOf, shardRange, storedShardRows, timing, type Work } from './work.ts';

/** A map item of ApplyShard: `route` is its phase beside the search. */
export interface PhasedTask extends ShardTask {
  readonly phase?: 'route';
}

/** The work area's key of shard `shard`'s bytes of the rows that go to output part `part`. */
export function routeKey(shard: number, part: number): string {
  return `route/${shard}/${part}.arrow`;
}

/** The work area's key of which of shard `shard`'s rows routed to part `part` are released (1 a row). */
export function keptKey(shard: number, part: number): string {
  return `scatter/${shard}/${part}.kept`;
}

/** Each of a shard's `rows` rows' output part: a keyed hash of its row in the input. */
export function partsOfRows(work: Work, shard: number, rows: number): Int32Array {
  const { parts } = work.file.plan;
  const part = new Int32Array(rows);
  if (parts === 1) return part;
  const { firstRow } = shardRange(work, shard);
  const partOf = scatterParts(work.spec.seed, Buffer.from(work.file.digest, 'hex'), parts);
  for (let r = 0; r < rows; r++) part[r] = partOf(firstRow + r);
  return part;
}

/**
 * The order of a part's `rows` routed rows (every row whose output part it is, in input order)
 * as released: position j holds routed row `order[j]`. One part: the stream the release built
 * as one task shuffles with, over the same rows.
 */
export function partOrder(work: Work, part: number, rows: number): Int32Array {
  const purpose = work.file.plan.parts === 1 ? 'shuffle' : `shuffle/${part}`;
  return keyedRandom(work.spec.seed, Buffer.from(work.file.digest, 'hex'), purpose).permutation(rows);
}

/** RouteShard: a shard's pass-through bytes split by output part, every row. */
export async function routeShard(task: ShardTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const names = rawColumns(work);
  const range = shardRange(work, task.index);
  if (names.length === 0) return { rows: 0 };
  const { store } = work.loc;
  const run = runOf(work);
  // Only the bytes are read: no code of the shard is mapped to the input's.
  const shard = await storedShardRows(work, range, 'bytes');
  const columns = names.map((name) => {
    const column = shard.columns.find((c) => c.name === name);
    if (!column?.raw) throw new Error(`shard ${task.index}: column ${name} is not held as bytes`);
    return { name, raw: column.raw };
  });
  const { parts } = work.file.plan;
  const partOf = partsOfRows(work, task.index, shard.rowCount);
  const split = columns.map((c) => scatterRaw(c.raw, partOf, parts));
  await Promise.all(
    Array.from({ length: parts }, async (_, p) => {
      const piece = columns.map(
        (c, k): OutputColumn => ({ name: c.name, kind: 'utf8', values: split[k]![p]! }),
      );
      await store.put(work.key(routeKey(task.index, p)), await encodeArrowPieces(piece));
      remember(run, routeKey(task.index, p), piece);
    }),
  );
  await timing(store, work.loc.key, `route-${task.index}`, performance.now() - t0);
  env.log({ state: 'RouteShard', shard: task.index, rows: shard.rowCount, ms: ms(t0) });
  return { rows: shard.rowCount };
}

/** `index` as an output part of the plan. */
export function checkedPart(work: Work, index: number): number {
  const { parts } = work.file.plan;
  if (!(Number.isInteger(index) && index >= 0 && index < parts))
    throw new RangeError(`output part ${index} is not in the plan (${parts} parts)`);
  return index;
}

/** The pieces `keyOf(0 … count − 1)` (work files of released rows), kept in this process or read. */
export function readPieces(
  work: Work,
  count: number,
  keyOf: (i: number) => string,
): Promise<PieceColumn[][]> {
  return Promise.all(
    Array.from(
      { length: count },
      async (_, i) =>
        recall<OutputColumn[]>(runOf(work), keyOf(i)) ??
        pieceColumns(await work.loc.store.get(work.key(keyOf(i)))),
    ),
  );
}

/** A piece's column: numbers, values as bytes, or codes against its dictionary as narrow as they were stored. */
export type PieceColumn =
  | (OutputColumn & { kind: 'number' | 'utf8' })
  | { name: string; kind: 'dictionary'; dictionary: string[]; codes: CodeArray };

/** A piece's columns (a work file of released rows) from its Arrow bytes. */
export function pieceColumns(bytes: Uint8Array): PieceColumn[] {
  const table = tableFromIPC(bytes);
  return table.schema.fields.map((field, c) => {
    const chunks = table.getChildAt(c)!.data.filter((d) => d.length > 0);
    if (DataType.isUtf8(field.type)) {
      const values = concatRaw(
        chunks.map((d) => ({
          offsets: (d.valueOffsets as Int32Array).subarray(0, d.length + 1),
          bytes: d.values as Uint8Array,
        })),
      );
      return { name: field.name, kind: 'utf8', values };
    }
    if (!DataType.isDictionary(field.type)) {
      const values = new Float64Array(table.numRows);
      let at = 0;
      for (const d of chunks) {
        values.set((d.values as Float64Array).subarray(0, d.length), at);
        at += d.length;
      }
      return { name: field.name, kind: 'number', values };
    }
    if (chunks.length === 1) {
      const dictionary = utf8VectorValues(chunks[0]!.dictionary!);
      return { name: field.name, kind: 'dictionary', dictionary, codes: indexArray(chunks[0]!) };
    }
    const { dictionary, codes } = unionOfDictionaries(
      table.numRows,
      chunks.map((d) => ({
        dictionary: utf8VectorValues(d.dictionary!),
        codes: indicesAsCodes(d),
      })),
    );
    return { name: field.name, kind: 'dictionary', dictionary, codes };
  });
}
