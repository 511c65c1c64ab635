/**
 * The Combine state: merges the scanned pieces, in piece order, into the input as the later
 * states see it — its dictionaries (a value's code is its rank of first appearance in the
 * input, as if one reader had read every piece in turn), each piece's code map, the shards'
 * layout, the input's digest — and admits the release against the memory of the states after
 * it, before any of them runs. It completes plan.json and answers the plan the rest of the run
 * follows.
 */
import { basename } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ShardedAdmission } from '../../data/admission.ts';
import { tableRows } from '../../data/checks.ts';
import { checkPiecesPoints, type PointsSeen } from '../../data/decimal.ts';
import { CellDigest } from '../../data/digest.ts';
import { stateBudgets } from '../../data/limits.ts';
import { checkSameColumns } from '../../data/read.ts';
import type { EncodedTable, RowOrigin } from '../../data/table.ts';
import { InputError } from '../../errors.ts';
import { thousands } from '../../util/format.ts';
import { recall, remember } from '../memo.ts';
import {
  DICTIONARIES_KEY,
  decodeShardRows,
  encodeCodeMaps,
  encodeShardRows,
  pieceCodesKey,
  type RowsLayout,
  type ShardRange,
} from '../rows.ts';
import { putJson } from '../storage/index.ts';
import { pieceDictionariesKey, pieceDistinctCounts, pieceSummaries } from './scan-piece.ts';
import { DEFAULT_ROWS_PER_PART, type PhaseEnv, type PlanResult, type WorkTask } from './types.ts';
import { ms, openScanWork, type PlanFile, rawColumns, runOf, timing } from './work.ts';

export async function combine(task: WorkTask, env: PhaseEnv): Promise<PlanResult> {
  const t0 = performance.now();
  const work = await openScanWork(task.work, env);
  const { store } = work.loc;
  const { pieces } = work.file.scan;
  // A large Arrow file is read as several pieces (ranges of it).
  const files = new Set(pieces.map((piece) => piece.url)).size;
  const rowsPerShard = work.file.scan.rowsPerShard ?? Number.POSITIVE_INFINITY;
  const summaries = await pieceSummaries(work);
  const layout0 = work.file.layout;
  const merged = new MergedDictionaries();
  const shards: ShardRange[] = [];
  const digest = new CellDigest();
  // Columns carried as bytes: only their number of values (the report's), not the values. Of
  // several pieces, counted here for a release built in one task; a sharded one's are the Audit
  // state's (only the report and the audit need them), off the way to the search.
  const raw = new Set(rawColumns(work));
  const distinct =
    pieces.length > 1 && raw.size > 0 && work.file.plan.mode === 'single'
      ? await pieceDistinctCounts(work, summaries)
      : new Map<string, number>();
  let firstRow = 0;
  let first: { file: string; names: string[] } | undefined;
  // Where the input's rows are: each piece's file and its first row there (after the rows its
  // file's earlier ranges read), so that messages name a file's own rows.
  const origins: RowOrigin[] = [];
  const readBefore = new Map<string, number>();
  // What each piece saw of its columns' points (format.decimal ","), its rows named in its file.
  const points: { seen: readonly PointsSeen[]; place: (row: number) => string }[] = [];
  for (const [p, summary] of summaries.entries()) {
    const rows = summary.shardRows.reduce((a, b) => a + b, 0);
    const { url } = pieces[p]!;
    const before = readBefore.get(url) ?? 0;
    readBefore.set(url, before + summary.digest.rows);
    if (rows === 0 && pieces.length > 1) continue; // an empty file of a folder (or range) adds no rows
    const origin: RowOrigin = {
      source: url.startsWith('file:') ? fileURLToPath(url) : url,
      at: firstRow,
      firstRow: summary.origin?.firstRow ?? before,
      ...(summary.origin?.sheet ? { sheet: summary.origin.sheet } : {}),
    };
    if (summary.points) {
      const table = { ...EMPTY, source: origin.source, origins: [{ ...origin, at: 0 }] };
      const names = tableRows(table, work.spec.format.type);
      points.push({ seen: summary.points, place: (row) => names('', [row]) });
    }
    const dictionaries =
      recall<EncodedTable>(runOf(work), pieceDictionariesKey(p)) ??
      decodeShardRows(await store.get(work.key(pieceDictionariesKey(p))), layout0, 0);
    const file = basename(new URL(pieces[p]!.url).pathname);
    if (!first) first = { file, names: dictionaries.columns.map((c) => c.name) };
    else checkSameColumns(basename(work.file.layout.source), first.file, first.names, file, dictionaries);
    const maps = merged.add(dictionaries);
    if (pieces.length === 1)
      for (const c of dictionaries.columns) if (raw.has(c.name)) distinct.set(c.name, c.distinct ?? 0);
    if (p > 0) {
      remember(runOf(work), pieceCodesKey(p), maps);
      await store.put(work.key(pieceCodesKey(p)), encodeCodeMaps(maps));
    }
    digest.merge(summary.digest);
    origins.push(origin);
    for (const [inPiece, n] of summary.shardRows.entries()) {
      shards.push({ firstRow, rows: n, piece: p, inPiece });
      firstRow += n;
    }
  }
  // Each piece refused a column with both kinds of points; the input is refused as a whole.
  checkPiecesPoints(points);
  if (!first) {
    throw new InputError(
      'E_INPUT_NO_ROWS',
      `${basename(work.file.layout.source)}: none of the folder's ${files} files has a row`,
      'export the table with its rows',
    );
  }
  const layout: RowsLayout = {
    ...layout0,
    rowCount: firstRow,
    shards,
    origins,
    columns: first.names,
    delimiter: summaries.find((s) => s.shardRows.length > 0)?.delimiter ?? layout0.delimiter,
  };
  const whole = merged.table(layout, first.names);
  const dictionaries: EncodedTable = {
    ...whole,
    columns: whole.columns.map((c) =>
      raw.has(c.name) ? { name: c.name, dictionary: [], codes: c.codes, distinct: distinct.get(c.name) } : c,
    ),
  };
  remember(runOf(work), DICTIONARIES_KEY, dictionaries);
  const mode = work.file.plan.mode;
  const projection =
    mode === 'sharded'
      ? ShardedAdmission.admitWhole(
          summaries.map((s) => s.admission),
          whole,
          rowsPerShard,
          stateBudgets(work.spec),
        )
      : undefined;
  const parts =
    mode === 'single'
      ? 1
      : Math.max(
          1,
          Math.ceil(
            firstRow / (work.file.rowsPerPart ?? work.file.request.rowsPerPart ?? DEFAULT_ROWS_PER_PART),
          ),
        );
  await Promise.all([
    store.put(work.key(DICTIONARIES_KEY), encodeShardRows(dictionaries)),
    putJson(
      store,
      work.key('shards.json'),
      shards.map((_, index) => ({ index })),
    ),
    putJson(
      store,
      work.key('parts.json'),
      Array.from({ length: parts }, (_, index) => ({ index })),
    ),
  ]);
  const plan: PlanResult = { ...work.file.plan, rows: firstRow, shards: shards.length, parts };
  const file: PlanFile = {
    ...work.file,
    plan,
    layout,
    digest: Buffer.from(digest.digest()).toString('hex'),
  };
  await putJson(store, work.key('plan.json'), file);
  await timing(store, work.loc.key, 'combine', performance.now() - t0);
  env.log({
    state: 'Combine',
    runId: plan.runId,
    mode,
    pieces: pieces.length,
    rows: firstRow,
    shards: shards.length,
    ms: ms(t0),
    // The admission's projection, in MiB (counts only, never values).
    ...(projection
      ? { projectedShardMiB: mib(projection.needs.shard), projectedSearchMiB: mib(projection.needs.Search) }
      : {}),
  });
  env.say?.(
    `read ${thousands(firstRow)} rows (${plural(shards.length, 'shard')} of ${plural(files, 'file')})`,
  );
  return plan;
}

/** The input's dictionaries, merged piece after piece in order of first appearance. */
class MergedDictionaries {
  private columns: { values: string[]; codeOf: Map<string, number> }[] = [];
  /** The first piece, until a second one comes (one piece's dictionaries are the input's as they are). */
  private first: EncodedTable | undefined;

  /** Takes in a piece's dictionaries; answers its code maps (local code → input code). */
  add(piece: EncodedTable): Int32Array[] {
    // The first piece's values are the input's so far, in its own order: its maps are the
    // identity, and its values are indexed only when a second piece comes.
    if (this.columns.length === 0 && this.first === undefined) {
      this.first = piece;
      return piece.columns.map((c) => {
        const map = new Int32Array(c.dictionary.length);
        for (let j = 0; j < map.length; j++) map[j] = j;
        return map;
      });
    }
    if (this.first) {
      const first = this.first;
      this.first = undefined;
      this.merge(first);
    }
    return this.merge(piece);
  }

  private merge(piece: EncodedTable): Int32Array[] {
    if (this.columns.length === 0)
      this.columns = piece.columns.map(() => ({ values: [], codeOf: new Map() }));
    return piece.columns.map((c, i) => {
      const col = this.columns[i]!;
      const map = new Int32Array(c.dictionary.length);
      for (const [local, v] of c.dictionary.entries()) {
        let code = col.codeOf.get(v);
        if (code === undefined) {
          code = col.values.push(v) - 1;
          col.codeOf.set(v, code);
        }
        map[local] = code;
      }
      return map;
    });
  }

  table(layout: RowsLayout, names: readonly string[]): EncodedTable {
    return {
      source: layout.source,
      rowCount: 0,
      delimiter: layout.delimiter,
      columns: names.map((name, i) => ({
        name,
        dictionary: this.first ? this.first.columns[i]!.dictionary : this.columns[i]!.values,
        codes: new Int32Array(0),
      })),
    };
  }
}

/** A table without rows or columns: one that only names rows by its origins. */
const EMPTY: EncodedTable = { source: '', rowCount: 0, columns: [], delimiter: ',' };

const mib = (bytes: number) => Math.round(bytes / 2 ** 20);

const plural = (n: number, what: string) => `${n} ${what}${n === 1 ? '' : 's'}`;
