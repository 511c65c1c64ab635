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
import { type CsvRange, csvRowsBefore, cutInQuotes } from '../../data/csv.ts';
import type { ColumnPoints, PointsSeen } from '../../data/decimal.ts';
import { CellDigest, type DigestState } from '../../data/digest.ts';
import { stateBudgets } from '../../data/limits.ts';
import { isCsvRange } from '../../data/read.ts';
import type { EncodedTable, RowOrigin } from '../../data/table.ts';
import { InputError, PpdpError, SpecError } from '../../errors.ts';
import { secretSampler } from '../../models/differential-privacy.ts';
import type { ReleaseSpec } from '../../release-spec/spec.ts';
import { thousands } from '../../util/format.ts';
import { recall, remember } from '../memo.ts';
import { readInputShards } from '../release.ts';
import {
  decodeDistinctHashes,
  distinctHashCount,
  encodeDistinctHashes,
  encodeShardRows,
  encodeShardRowsPieces,
  RawShards,
  shardBytesKey,
  shardRowsKey,
  splitShardBytes,
} from '../rows.ts';
import { getJson, putJson } from '../storage/index.ts';
import { MAX_SHARDS, type PhaseEnv, type ShardTask } from './types.ts';
import {
  checkLocalPiece,
  downloadTo,
  type InputPiece,
  ms,
  openScanWork,
  rawColumns,
  runOf,
  scratch,
  timing,
  type Work,
} from './work.ts';

/** What a piece's scan hands to Combine (`scan/P.json`; its dictionaries in `scan/P.arrow`). */
export interface PieceSummary {
  /** Rows of each of the piece's shards, in order (a secret sample's: `digest.rows` counts the rows read). */
  readonly shardRows: number[];
  readonly delimiter: string;
  readonly digest: DigestState;
  readonly admission: { readonly rows: number; readonly sketch: string };
  /** The raw columns whose values' hashes the piece's distinct file lists, in its order (when written). */
  readonly distinctColumns?: string[];
  /**
   * Where the piece's first row is in its file, when its reader says (a sheet's: the header
   * may be below row 1), for Combine's origins of the input's rows.
   */
  readonly origin?: Pick<RowOrigin, 'firstRow' | 'sheet'>;
  /**
   * With `format.decimal: ","`: per text column with a point, the first row (of the piece) of
   * grouped thousands and of a decimal point the piece read, which Combine checks over the
   * pieces (checkPiecesPoints): a piece refuses only a column that holds both itself.
   */
  readonly points?: PointsSeen[];
}

/**
 * The bytes of its file a range reads: of an Arrow file, the messages before the batches, its
 * batches, the footer; of a CSV file, the header and its rows.
 */
function rangeSpans(piece: InputPiece): [number, number][] | undefined {
  const { range } = piece;
  if (!range) return undefined;
  const spans: [number, number][] = [
    [0, range.head],
    [range.start, range.end],
  ];
  return isCsvRange(range) ? spans : [...spans, [range.tail, piece.bytes]];
}

export function pieceSummaryKey(piece: number): string {
  return `scan/${piece}.json`;
}

/**
 * The input's rows as the pieces' scans read them: more than the shards hold when they hold a
 * secret sample ((ε, δ)-differential privacy), whose size the search and the verifier weigh
 * against these.
 */
export async function rowsRead(work: Work): Promise<number> {
  return rowsReadOf(await pieceSummaries(work));
}

/** rowsRead from the pieces' summaries. */
export function rowsReadOf(summaries: readonly PieceSummary[]): number {
  return summaries.reduce((n, s) => n + s.digest.rows, 0);
}

/** The pieces' summaries (`scan/P.json`), in order. */
export function pieceSummaries(work: Work): Promise<PieceSummary[]> {
  return Promise.all(
    work.file.scan.pieces.map((_, p) => getJson<PieceSummary>(work.loc.store, work.key(pieceSummaryKey(p)))),
  );
}

/**
 * The distinct values of the raw columns over an input of several pieces: per column, the
 * number of distinct 64-bit hashes of every piece's values (distinctHashCount), from the
 * pieces' distinct files. Counted by Combine for a release built in one task, by Audit (which
 * alone needs them, beside the report) for a sharded one.
 */
export async function pieceDistinctCounts(
  work: Work,
  summaries: readonly PieceSummary[],
): Promise<Map<string, number>> {
  const lists = new Map<string, Int32Array[]>();
  for (const [p, summary] of summaries.entries()) {
    const names = summary.distinctColumns ?? [];
    if (names.length === 0) continue;
    const hashes =
      recall<Int32Array[]>(runOf(work), pieceDistinctKey(p)) ??
      decodeDistinctHashes(await work.loc.store.get(work.key(pieceDistinctKey(p))));
    names.forEach((name, k) => {
      const list = lists.get(name) ?? [];
      lists.set(name, list);
      list.push(hashes[k]!);
    });
  }
  return new Map([...lists].map(([name, list]) => [name, distinctHashCount(list)]));
}

export function pieceDictionariesKey(piece: number): string {
  return `scan/${piece}.arrow`;
}

/**
 * The work area's key of a piece's raw columns' distinct values (their hashes, DistinctHashes),
 * written when the input has several pieces: their union is counted (pieceDistinctCounts).
 */
export function pieceDistinctKey(piece: number): string {
  return `scan/${piece}.distinct`;
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
  range: ArrowRange | CsvRange | undefined,
  raw: ReadonlySet<string>,
  points: ColumnPoints[],
): Generator<EncodedTable & { readonly firstRow: number }, void, undefined> {
  try {
    yield* readInputShards({ ...spec, input: path }, rowsPerShard, range, raw, points);
  } catch (e) {
    if (pieces > 1 && e instanceof InputError && e.code === 'E_INPUT_NO_ROWS') return;
    throw e;
  }
}

/**
 * A later CSV range's error as the file read whole gives it. The range's rows were numbered
 * from its own start: the rows before it are counted (an error among them is the file's first,
 * and is thrown), and the range is read again from its row to its error. A range that did not
 * start at a row (its cut fell inside a quoted field) fails as such, whatever its parse made of
 * the bytes. Only a failed range counts, so a release that reads cleanly never does.
 */
function csvRangeError(
  spec: ReleaseSpec,
  path: string,
  rowsPerShard: number,
  range: CsvRange,
  raw: ReadonlySet<string>,
  error: PpdpError,
): PpdpError {
  const before = csvRowsBefore(path, range, spec.format.delimiter);
  if (before.inQuotes) return cutInQuotes(basename(path));
  const counted: CsvRange = { ...range, firstRow: before.rows, firstLine: before.line };
  try {
    for (const _ of readInputShards({ ...spec, input: path }, rowsPerShard, counted, raw));
  } catch (e) {
    if (e instanceof PpdpError) return e;
  }
  return error;
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
    // of a range, only the bytes it reads, at their places in the file). Either is read only as
    // the version Plan digested: the run id names those bytes (a local file is checked before
    // and after it is read, a stored one's ranges are asked for by its ETag).
    const local = loc.store.root === 'file:///';
    if (local) checkLocalPiece(piece, `/${loc.key}`);
    const path = local
      ? `/${loc.key}`
      : await downloadTo(
          loc.store,
          loc.key,
          piece.bytes,
          join(dir, basename(loc.key)),
          rangeSpans(piece),
          piece.version,
        );
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
    let origin: PieceSummary['origin'];
    // Columns that only pass through are read and stored as their rows' bytes (rows.ts, RawShards).
    const rawNames = new Set(rawColumns(work));
    const raw = new RawShards(rawNames);
    const { pieces } = work.file.scan;
    const writes: Promise<void>[] = [];
    // Over shards each piece draws from a secret generator of its own: independent, and redone
    // by no one. One task reads every row here and draws its sample in Build.
    const sample =
      work.file.plan.mode === 'sharded'
        ? secretSampler(work.spec.privacy, basename(work.spec.file))
        : undefined;
    const { range } = piece;
    // Each text column's points (format.decimal ","), for Combine's check over the pieces.
    const points: ColumnPoints[] = [];
    try {
      for (const shard of readFileRows(
        work.spec,
        path,
        rowsPerShard,
        pieces.length,
        range,
        rawNames,
        points,
      )) {
        if (shardRows.length >= MAX_SHARDS) {
          throw new SpecError(
            'E_REQUEST',
            `${basename(path)} has more than ${MAX_SHARDS} shards of ${rowsPerShard} rows`,
            'start the release with a larger "rowsPerShard", or split the input into more files',
          );
        }
        const { firstRow: _, ...whole } = shard;
        if (shardRows.length === 0 && whole.origins?.[0]) {
          const { firstRow, sheet } = whole.origins[0];
          origin = { firstRow, ...(sheet ? { sheet } : {}) };
        }
        // Pass-through columns as bytes, their distinct values counted (of the rows read).
        const converted = raw.convert(whole);
        admission?.observe(converted);
        digest.add(whole);
        // Under (ε, δ)-differential privacy only the sample is stored: the rows not drawn never leave this state.
        const read = sample ? sample(converted) : converted;
        const key = shardRowsKey(task.index, shardRows.length);
        const bytesKey = shardBytesKey(task.index, shardRows.length);
        shardRows.push(read.rowCount);
        delimiter = read.delimiter;
        last = read;
        remember(runOf(work), key, read);
        // One shard's bytes in flight at a time: memory stays at about two shards.
        await Promise.all(writes.splice(0));
        // The pass-through columns in a file of their own: most states read only the codes.
        const { coded, bytes } = splitShardBytes(read);
        writes.push(encodeShardRowsPieces(coded).then((pieces) => store.put(work.key(key), pieces)));
        if (bytes)
          writes.push(encodeShardRowsPieces(bytes).then((pieces) => store.put(work.key(bytesKey), pieces)));
      }
    } catch (e) {
      // A file rewritten while it was read fails as such, whatever its reader made of it.
      if (local) checkLocalPiece(piece, path);
      if (range && isCsvRange(range) && range.start > range.head && e instanceof PpdpError) {
        // A stored file's copy holds only the range's bytes: the rows before it are fetched too.
        if (!local) await downloadTo(loc.store, loc.key, piece.bytes, path, [[0, range.end]], piece.version);
        throw csvRangeError(work.spec, path, rowsPerShard, range, rawNames, e);
      }
      throw e;
    } finally {
      await Promise.allSettled(writes);
    }
    await Promise.all(writes);
    if (local) checkLocalPiece(piece, path);
    // The last shard's dictionaries hold every value of the piece: without rows, for Combine.
    // A raw column's: only its number of distinct values (their hashes apart, when the
    // CountDistinct state has other pieces' to count them with: then the piece's own count is
    // not needed, and its bound stands in).
    const columns = (last?.columns ?? []).map(({ name, dictionary }) => {
      const distinct = raw.distinct.get(name);
      return distinct
        ? {
            name,
            dictionary: [],
            codes: new Int32Array(0),
            distinct: pieces.length > 1 ? distinct.atMost : distinct.size,
          }
        : { name, dictionary, codes: new Int32Array(0) };
    });
    const distinctColumns =
      pieces.length > 1 ? columns.filter((c) => raw.distinct.has(c.name)).map((c) => c.name) : [];
    if (distinctColumns.length > 0) {
      const values = distinctColumns.map((name) => raw.distinct.get(name)!.hashes());
      remember(runOf(work), pieceDistinctKey(task.index), values);
      await store.put(work.key(pieceDistinctKey(task.index)), encodeDistinctHashes(values));
    }
    const dictionaries: EncodedTable = { source: path, rowCount: 0, columns, delimiter };
    const seen = points.flatMap((p, i) => p.seen(i) ?? []);
    const summary: PieceSummary = {
      shardRows,
      delimiter,
      digest: digest.state(),
      admission: admission?.summary() ?? { rows: digest.state().rows, sketch: '' },
      ...(distinctColumns.length > 0 ? { distinctColumns } : {}),
      ...(origin ? { origin } : {}),
      ...(seen.length > 0 ? { points: seen } : {}),
    };
    remember(runOf(work), pieceDictionariesKey(task.index), dictionaries);
    await store.put(work.key(pieceDictionariesKey(task.index)), encodeShardRows(dictionaries));
    await putJson(store, work.key(pieceSummaryKey(task.index)), summary);
    const stored = shardRows.reduce((a, b) => a + b, 0);
    // The rows read (a sample stores fewer, which the log counts, never their values).
    const rows = sample ? digest.state().rows : stored;
    await timing(store, work.loc.key, `scan-${task.index}`, performance.now() - t0);
    env.log({
      state: 'ScanPiece',
      piece: task.index,
      rows,
      ...(sample ? { sampled: stored } : {}),
      shards: shardRows.length,
      ms: ms(t0),
    });
    env.say?.(
      piece.range && !isCsvRange(piece.range)
        ? `read rows ${thousands(piece.range.firstRow + 1)}–${thousands(piece.range.firstRow + rows)} of ${basename(path)}`
        : `read ${thousands(rows)} rows of ${piece.range ? `a range of ${basename(path)}` : basename(path)}`,
    );
    return { rows, shards: shardRows.length };
  } finally {
    rmSync(dir, { recursive: true, force: true }); // Lambda keeps /tmp between invocations
  }
}
