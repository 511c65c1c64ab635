/**
 * The Assemble state: one output part's rows — each shard's piece of it, in input order —
 * shuffled once with the seed and staged as the part's Arrow and CSV files (and Parquet, when
 * the spec lists it in output.formats).
 */
import { DataType, tableFromIPC } from 'apache-arrow';
import { encodeArrow, indexArray, indicesAsCodes } from '../../data/arrow.ts';
import { encodeCsvChunks } from '../../data/csv.ts';
import { encodeParquet } from '../../data/parquet-write.ts';
import { concatRaw, gatherJoined } from '../../data/raw.ts';
import { type CodeArray, type OutputColumn, shuffledUnion, unionOfDictionaries } from '../../data/table.ts';
import { utf8VectorValues } from '../../data/utf8.ts';
import { writesParquet } from '../../release-spec/spec.ts';
import { keyedRandom } from '../../util/keys.ts';
import { recall } from '../memo.ts';
import { scatterKey } from './apply-shard.ts';
import type { PhaseEnv, ShardTask } from './types.ts';
import { columnLength, ms, openWork, partFiles, runOf, timer, timing } from './work.ts';

/** Concatenates the part's pieces in input order, shuffles once with the seed, writes the files. */
export async function assemble(task: ShardTask, env: PhaseEnv): Promise<{ rows: number }> {
  const t0 = performance.now();
  const work = await openWork(task.work, env);
  const { store } = work.loc;
  const shards = work.file.layout.shards.length;
  const { parts } = work.file.plan;
  const part = task.index;
  if (!(Number.isInteger(part) && part >= 0 && part < parts))
    throw new RangeError(`output part ${part} is not in the plan (${parts} parts)`);
  const pieces = await Promise.all(
    Array.from(
      { length: shards },
      async (_, s): Promise<PieceColumn[]> =>
        recall<OutputColumn[]>(runOf(work), scatterKey(s, part)) ??
        pieceColumns(await store.get(work.key(scatterKey(s, part)))),
    ),
  );
  const total = pieces.reduce((n, p) => n + (p[0] ? columnLength(p[0]) : 0), 0);
  // One part: the same stream build() shuffles with, over the same rows in input order.
  const purpose = parts === 1 ? 'shuffle' : `shuffle/${part}`;
  const order = keyedRandom(work.spec.seed, Buffer.from(work.file.digest, 'hex'), purpose).permutation(total);
  const columns: OutputColumn[] = pieces[0]!.map((first, c) => {
    if (first.kind === 'utf8') {
      const values = pieces.map((piece) => (piece[c] as PieceColumn & { kind: 'utf8' }).values);
      return { name: first.name, kind: 'utf8', values: gatherJoined(values, order) };
    }
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
  const timings: Record<string, number> = {};
  const time = timer(timings);
  const [arrow, csv, parquet] = time(
    'write',
    () =>
      [
        encodeArrow(columns),
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

/** A piece's column: numbers, values as bytes, or codes against its dictionary as narrow as they were stored. */
type PieceColumn =
  | (OutputColumn & { kind: 'number' | 'utf8' })
  | { name: string; kind: 'dictionary'; dictionary: string[]; codes: CodeArray };

/** A released shard's columns from its Arrow bytes (dictionary columns or numbers). */
function pieceColumns(bytes: Uint8Array): PieceColumn[] {
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
