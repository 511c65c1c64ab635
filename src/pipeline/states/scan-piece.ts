/**
 * The ScanPiece state: reads one piece of the input (one of its files) into row shards, each
 * with the piece's own dictionaries, and sums up what Combine merges: the piece's dictionaries,
 * its shards' row counts, its part of the input's digest and its admission's sketch. The pieces
 * are read side by side (a Distributed Map), each by a function that holds one shard at a time.
 */
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { ShardedAdmission } from '../../data/admission.ts';
import type { ArrowRange } from '../../data/arrow.ts';
import { CellDigest, type DigestState } from '../../data/digest.ts';
import { stateBudgets } from '../../data/limits.ts';
import type { EncodedTable } from '../../data/table.ts';
import { InputError, SpecError } from '../../errors.ts';
import type { ReleaseSpec } from '../../release-spec/spec.ts';
import { remember } from '../memo.ts';
import { readInputShards } from '../release.ts';
import { encodeShardRows, RawShards, shardRowsKey } from '../rows.ts';
import { putJson } from '../storage/index.ts';
import { MAX_SHARDS, type PhaseEnv, type ShardTask } from './types.ts';
import { downloadTo, type InputPiece, ms, openScanWork, rawColumns, runOf, scratch, timing } from './work.ts';

/** What a piece's scan hands to Combine (`scan/P.json`; its dictionaries in `scan/P.arrow`). */
export interface PieceSummary {
  /** Rows of each of the piece's shards, in order. */
  readonly shardRows: number[];
  readonly delimiter: string;
  readonly digest: DigestState;
  readonly admission: { readonly rows: number; readonly sketch: string };
}

/** The bytes of its file a range reads: the messages before the batches, its batches, the footer. */
function rangeSpans(piece: InputPiece): [number, number][] | undefined {
  const { range } = piece;
  if (!range) return undefined;
  return [
    [0, range.head],
    [range.start, range.end],
    [range.tail, piece.bytes],
  ];
}

export function pieceSummaryKey(piece: number): string {
  return `scan/${piece}.json`;
}

export function pieceDictionariesKey(piece: number): string {
  return `scan/${piece}.arrow`;
}

/**
 * A file's shards, checked against the spec. A file of a folder may have no rows (an empty part
 * of a table written in parts): it adds none, and Combine refuses a folder none of whose files
 * has a row.
 */
function* readFileRows(
  spec: ReleaseSpec,
  path: string,
  rowsPerShard: number,
  pieces: number,
  range: ArrowRange | undefined,
): Generator<EncodedTable & { readonly firstRow: number }, void, undefined> {
  try {
    yield* readInputShards({ ...spec, input: path }, rowsPerShard, range);
  } catch (e) {
    if (pieces > 1 && e instanceof InputError && e.code === 'E_INPUT_NO_ROWS') return;
    throw e;
  }
}

export async function scanPiece(task: ShardTask, env: PhaseEnv): Promise<{ rows: number; shards: number }> {
  const t0 = performance.now();
  const work = await openScanWork(task.work, env);
  const { store } = work.loc;
  const piece = work.file.scan.pieces[task.index];
  if (!piece) throw new RangeError(`input piece ${task.index} is not in the plan`);
  const rowsPerShard = work.file.scan.rowsPerShard ?? Number.POSITIVE_INFINITY;
  const dir = scratch(env, `piece-${process.pid}-${task.index}-${Date.now()}`);
  try {
    const loc = await env.stores.open(piece.url);
    // A local file is read where it is; a stored one is copied to scratch first (one piece;
    // of a range, only the bytes it reads, at their places in the file).
    const path =
      loc.store.root === 'file:///'
        ? `/${loc.key}`
        : await downloadTo(loc.store, loc.key, piece.bytes, join(dir, basename(loc.key)), rangeSpans(piece));
    const qis = new Set(
      work.spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name),
    );
    const admission =
      work.file.plan.mode === 'sharded'
        ? new ShardedAdmission(qis, rowsPerShard, stateBudgets(work.spec), 'ScanPiece')
        : undefined;
    const digest = new CellDigest();
    const shardRows: number[] = [];
    let delimiter = ',';
    let last: EncodedTable | undefined;
    // Columns that only pass through are stored as their rows' bytes (rows.ts, RawShards).
    const raw = new RawShards(new Set(rawColumns(work)));
    const writes: Promise<void>[] = [];
    try {
      const { range } = piece;
      for (const shard of readFileRows(work.spec, path, rowsPerShard, work.file.scan.pieces.length, range)) {
        if (shardRows.length >= MAX_SHARDS) {
          throw new SpecError(
            'E_REQUEST',
            `${basename(path)} has more than ${MAX_SHARDS} shards of ${rowsPerShard} rows`,
            'start the release with a larger "rowsPerShard", or split the input into more files',
          );
        }
        admission?.observe(shard);
        digest.add(shard);
        const { firstRow: _, ...read } = shard;
        const key = shardRowsKey(task.index, shardRows.length);
        shardRows.push(read.rowCount);
        delimiter = read.delimiter;
        last = read;
        const table = raw.convert(read);
        remember(runOf(work), key, table);
        // One shard's bytes in flight at a time: memory stays at about two shards.
        await Promise.all(writes.splice(0));
        writes.push(store.put(work.key(key), encodeShardRows(table)));
      }
    } finally {
      await Promise.allSettled(writes);
    }
    await Promise.all(writes);
    // The last shard's dictionaries hold every value of the piece: without rows, for Combine.
    const columns = (last?.columns ?? []).map(({ name, dictionary }) => ({
      name,
      dictionary,
      codes: new Int32Array(0),
    }));
    const dictionaries: EncodedTable = { source: path, rowCount: 0, columns, delimiter };
    const summary: PieceSummary = {
      shardRows,
      delimiter,
      digest: digest.state(),
      admission: admission?.summary() ?? { rows: digest.state().rows, sketch: '' },
    };
    remember(runOf(work), pieceDictionariesKey(task.index), dictionaries);
    await store.put(work.key(pieceDictionariesKey(task.index)), encodeShardRows(dictionaries));
    await putJson(store, work.key(pieceSummaryKey(task.index)), summary);
    const rows = shardRows.reduce((a, b) => a + b, 0);
    await timing(store, work.loc.key, `scan-${task.index}`, performance.now() - t0);
    env.log({ state: 'ScanPiece', piece: task.index, rows, shards: shardRows.length, ms: ms(t0) });
    env.say?.(
      piece.range
        ? `read rows ${piece.range.firstRow + 1}–${piece.range.firstRow + rows} of ${basename(path)}`
        : `read ${rows} rows of ${basename(path)}`,
    );
    return { rows, shards: shardRows.length };
  } finally {
    rmSync(dir, { recursive: true, force: true }); // Lambda keeps /tmp between invocations
  }
}
