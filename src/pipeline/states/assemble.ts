/**
 * The Assemble state: one output part's rows — each shard's piece of it, in input order —
 * shuffled once with the seed and staged as the part's Arrow and CSV files (and Parquet, when
 * the spec lists it in output.formats).
 */
import { encodeArrowPieces } from '../../data/arrow.ts';
import { encodeCsvChunks } from '../../data/csv.ts';
import { encodeParquet } from '../../data/parquet-write.ts';
import { gatherJoined, rawLength } from '../../data/raw.ts';
import { type OutputColumn, shuffledUnion } from '../../data/table.ts';
import { writesParquet } from '../../release-spec/spec.ts';
import { recall } from '../memo.ts';
import { scatterKey } from './apply-shard.ts';
import { checkedPart, keptKey, type PieceColumn, partOrder, readPieces, routeKey } from './route.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { columnLength, ms, openWork, partFiles, rawColumns, runOf, timer, timing } from './work.ts';

/**
 * Concatenates the part's pieces in input order, shuffles once with the seed (the part's routed
 * rows, removed ones then dropped), writes the files.
 */
export async function assemble(task: ShardTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const run = runOf(work);
  const shards = work.file.layout.shards.length;
  const { parts } = work.file.plan;
  const part = checkedPart(work, task.index);
  const routed = rawColumns(work);
  const [pieces, kept, routedPieces] = await Promise.all([
    readPieces(work, shards, (s) => scatterKey(s, part)),
    Promise.all(
      Array.from(
        { length: shards },
        async (_, s) => recall<Uint8Array>(run, keptKey(s, part)) ?? store.get(work.key(keptKey(s, part))),
      ),
    ),
    // The bytes, routed beside the search: each shard's piece of the part, every row of it.
    readPieces(work, routed.length > 0 ? shards : 0, (s) => routeKey(s, part)),
  ]);
  // The part's routed rows (each shard's, in input order): each released one's place among
  // the released rows, -1 for a removed one.
  const rowsRouted = kept.reduce((n, k) => n + k.length, 0);
  const place = new Int32Array(rowsRouted);
  let total = 0;
  let i = 0;
  kept.forEach((k, s) => {
    const at = total;
    for (let r = 0; r < k.length; r++) place[i++] = k[r] === 1 ? total++ : -1;
    const rows = pieces[s]![0] ? columnLength(pieces[s]![0]!) : 0;
    if (total - at !== rows)
      throw new Error(`${keptKey(s, part)}: ${total - at} rows kept, the piece holds ${rows}`);
  });
  // The shuffle of the routed rows, removed ones dropped: each released row's place among the
  // released rows (`order`) and among the routed ones (`released`).
  const shuffle = partOrder(work, part, rowsRouted);
  const order = new Int32Array(total);
  // No row removed: every position keeps its routed row, so the shuffle itself serves (each
  // write below puts back the value it reads).
  const released = total < rowsRouted ? new Int32Array(total) : shuffle;
  for (let j = 0, k = 0; j < rowsRouted; j++) {
    const at = place[shuffle[j]!]!;
    if (at < 0) continue;
    released[k] = shuffle[j]!;
    order[k++] = at;
  }
  const coded: OutputColumn[] = pieces[0]!.map((first, c) => {
    if (first.kind === 'utf8') throw new Error(`${scatterKey(0, part)}: column ${first.name} holds bytes`);
    if (first.kind === 'number') {
      const concat = new Float64Array(total);
      let at = 0;
      for (const piece of pieces) {
        const values = (piece[c] as OutputColumn & { kind: 'number' }).values;
        concat.set(values, at);
        at += values.length;
      }
      const values = new Float64Array(total);
      for (let j = 0; j < total; j++) values[j] = concat[order[j]!]!;
      return { name: first.name, kind: 'number', values };
    }
    // One dictionary over the pieces' dictionaries: the values the shuffled rows use.
    return shuffledUnion(
      first.name,
      pieces.map((piece) => piece[c] as PieceColumn & { kind: 'dictionary' }),
      order,
    );
  });
  // The released rows' bytes gathered from the routed pieces in the order of the shuffle.
  const bytes = routed.map((name, k): OutputColumn => {
    const values = routedPieces.map((piece, s) => {
      const column = piece[k];
      if (column?.name !== name || column.kind !== 'utf8' || rawLength(column.values) !== kept[s]!.length)
        throw new Error(`${routeKey(s, part)}: column ${k + 1} is not ${name}'s bytes of the routed rows`);
      return column.values;
    });
    return { name, kind: 'utf8', values: gatherJoined(values, released) };
  });
  // The released columns in the input's order.
  const inputColumns = work.file.layout.columns ?? [];
  const columns =
    bytes.length === 0
      ? coded
      : inputColumns.flatMap((name) => [...coded, ...bytes].filter((c) => c.name === name));
  if (columns.length !== coded.length + bytes.length)
    throw new Error(`output part ${part}: the plan does not name every released column`);
  const timings: Record<string, number> = {};
  const time = timer(timings);
  const arrow = await time('write', () => encodeArrowPieces(columns));
  const [csv, parquet] = time(
    'write',
    () =>
      [
        encodeCsvChunks(columns, work.file.layout.delimiter, work.spec.format),
        writesParquet(work.spec) ? encodeParquet(columns) : undefined,
      ] as const,
  );
  const files = partFiles(parts, part);
  await Promise.all([
    store.put(work.key(`staging/${files.arrow}`), arrow),
    store.put(work.key(`staging/${files.csv}`), csv),
    ...(parquet ? [store.put(work.key(`staging/${files.parquet}`), parquet)] : []),
  ]);
  await timing(
    store,
    work.loc.key,
    parts === 1 ? 'assemble' : `assemble-${part}`,
    performance.now() - t0,
    timings,
  );
  env.log({ state: 'Assemble', part, rows: total, shards, ms: ms(t0) });
  return { rows: total };
}
