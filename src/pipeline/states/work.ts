/**
 * The work area every state reads and writes. The states (one file each, as the handlers in
 * functions/) are functions of (JSON input, environment) → JSON output: the one implementation
 * behind the Lambda handlers, the local engine and the direct engine. Data moves through the
 * store only; state payloads carry locations and small facts.
 *
 * Work area (`plan.work`, a store URL ending in `/`):
 *   bundle/          the spec and its hierarchy files, as the later states load them
 *   plan.json        the request, the plan, the input's pieces and (Combine's) the shards' layout
 *   pieces.json      the input's pieces (its files), the items the scan's Distributed Map reads
 *   rows/P/J.arrow   the encoded input, one file per row shard J of piece P (see rows.ts); each
 *                    piece's code map in rows/P/codes.bin, and the input's dictionaries without
 *                    rows in rows/dictionaries.arrow (Combine)
 *   scan/P.json      per piece: its shards' rows, digest and admission sketch; scan/P.arrow its
 *                    dictionaries; scan/P.distinct its pass-through columns' distinct values as
 *                    bytes, when there are several pieces (ScanPiece)
 *   shards.json      the shard items the Distributed Maps read
 *   counts/N.bin     per shard: distinct tuples with counts (CountShard); N.rows: each row's tuple
 *   search.json      node, claims and the method's report (Search); flags/N.bin per shard
 *   parts.json       the output part items the Distributed Map over parts reads
 *   route/N/P.arrow  per shard N and output part P: the bytes of the columns passed through as
 *                    such, of every row whose part P is, in input order (RouteShard)
 *   scatter/N/P.arrow per shard N and output part P: its released rows in input order, the other
 *                    columns (ApplyShard); N/P.kept: which of its routed rows are released
 *   built.json       single-shard methods: files, report and checks (Build)
 *   staging/         the release's files, verified before anything is published
 *   verify/          per slice: an input shard's expected classes, an output part's summary
 *   verified.json    names, sizes and SHA-256 of the verified files (Verify)
 *   timings/         per state (and shard) wall times, gathered into the report
 *   error.json       what failed, when a run fails (ReportFailure)
 *   seals/           the SHA-256 of each file under staging/ and bundle/
 *
 * Every work file is sealed when written and checked when read (src/pipeline/storage/sealed.ts):
 * one changed or cut short is refused where it is read (E_WORK_CORRUPT). The item lists
 * (pieces.json, shards.json, parts.json), lock.json and error.json stay plain JSON.
 */
import { createHash } from 'node:crypto';
import { closeSync, ftruncateSync, mkdirSync, openSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { threadId } from 'node:worker_threads';
import type { ArrowRange } from '../../data/arrow.ts';
import type { CsvRange } from '../../data/csv.ts';
import { type RawValues, rawLength } from '../../data/raw.ts';
import { concatTables, type EncodedTable, originsWithin } from '../../data/table.ts';
import type { ShardSteps } from '../../methods/method.ts';
import { methodFor } from '../../methods/registry.ts';
import { loadSpec, type ReleaseSpec, withColumnDefaults } from '../../release-spec/spec.ts';
import { type RunKey, recall, remember } from '../memo.ts';
import type { ManifestEntry } from '../publish.ts';
import {
  type CodeMaps,
  DICTIONARIES_KEY,
  decodeCodeMaps,
  decodeShardRows,
  joinShardBytes,
  pieceCodesKey,
  type RowsLayout,
  type ShardRange,
  shardBytesKey,
  shardRowsKey,
  toInputCodes,
} from '../rows.ts';
import {
  baseKey,
  getJson,
  inputChanged,
  joinKey,
  type Location,
  localVersion,
  putJson,
  type Store,
  sealWork,
} from '../storage/index.ts';
import type { PhaseEnv, PlanResult, ReleaseRequest } from './types.ts';

/** One piece of the input, as Plan lists it in plan.json. */
export interface InputPiece {
  /** The file's URL: file:///… or s3://bucket/key, inside the spec's folder (Plan confined it). */
  readonly url: string;
  /** The file's size. */
  readonly bytes: number;
  /** Of a large Arrow or CSV file, the record batches or rows this piece reads (the file is read as ranges). */
  readonly range?: ArrowRange | CsvRange;
  /**
   * The version of the file Plan digested for the run id (StoredObject.version: an ETag, or a
   * local file's inode, size and mtime): every later read of the file is of that version only.
   */
  readonly version?: string;
}

/**
 * Refuses a local piece whose file is no longer the version Plan digested (E_INPUT_CHANGED):
 * checked before the file is read in place and again after.
 */
export function checkLocalPiece(piece: InputPiece, path: string): void {
  if (piece.version !== undefined && localVersion(path) !== piece.version) throw inputChanged(piece.url);
}

export interface PlanFile {
  readonly request: ReleaseRequest;
  readonly plan: PlanResult;
  readonly layout: RowsLayout;
  /** The spec's file name inside bundle/. */
  readonly specName: string;
  readonly started: number;
  /** Hex SHA-256 of the input's cells: keys the random streams (src/util/keys.ts); Combine's. */
  readonly digest: string;
  /**
   * The scan: the input's pieces (its files) and the rows per shard each is read in (null: a
   * single task's, each piece as one shard).
   */
  readonly scan: { readonly pieces: readonly InputPiece[]; readonly rowsPerShard: number | null };
  /** Released rows per output part: the request's, or sized by Plan for the rows' width (item-rows.ts). */
  readonly rowsPerPart?: number;
}

/** A run's work area opened: its store, plan and spec (loaded from the bundle). */
export interface Work {
  readonly loc: Location;
  readonly file: PlanFile;
  readonly spec: ReleaseSpec;
  key(name: string): string;
}

export function runOf(work: Work): RunKey {
  return { work: work.file.plan.work, started: work.file.started };
}

/** The encoded input as one table (single-task methods and reports): its shards concatenated. */
export async function allRows(work: Work): Promise<EncodedTable> {
  const shards = await Promise.all(work.file.layout.shards.map((_, s) => shardRows(work, s)));
  return concatTables(shards);
}

/**
 * One shard's rows in the input's codes: kept from the scan in this process, or read from
 * rows/P/J.arrow, then mapped from its piece's codes to the input's (rows.ts). `columns`:
 * `'coded'` leaves out the columns passed through as bytes (their file is not read).
 */
export async function shardRows(
  work: Work,
  index: number,
  columns: 'all' | 'coded' = 'all',
): Promise<EncodedTable> {
  const range = shardRange(work, index);
  const read = await storedShardRows(work, range, columns);
  const input = await inputDictionaries(work);
  // The first piece's codes are the input's already: its values appear first.
  const inputColumns = new Map(input.columns.map((c) => [c.name, c]));
  const shard =
    range.piece === 0
      ? {
          ...read,
          columns: read.columns.map((c) =>
            c.raw ? c : { ...c, dictionary: inputColumns.get(c.name)!.dictionary },
          ),
        }
      : toInputCodes(read, await pieceCodes(work, range.piece), input);
  // Errors about a shard's rows name them where they are in the input: its file and row there.
  const { layout } = work.file;
  const origins = layout.origins ?? [{ source: layout.source, at: 0, firstRow: 0 }];
  return { ...shard, source: layout.source, origins: originsWithin(origins, range.firstRow, range.rows) };
}

/** Shard `index` of the plan's layout. @throws RangeError for an index the plan has no shard at */
export function shardRange(work: Work, index: number): ShardRange {
  const range: ShardRange | undefined = work.file.layout.shards[index];
  if (!range)
    throw new RangeError(`shard ${index} is not in the plan (${work.file.layout.shards.length} shards)`);
  return range;
}

/**
 * A shard's rows as its scan stored them (its piece's codes), kept from the scan in this process
 * or read from rows/P/J.arrow and, for its pass-through columns, rows/P/J.bytes.arrow:
 * `columns` says which (`'bytes'`: those alone). Its own dictionaries are not decoded: the
 * input's take their place where codes are read (for a column of distinct values, as many
 * strings as rows).
 */
export async function storedShardRows(
  work: Work,
  range: ShardRange,
  columns: 'all' | 'coded' | 'bytes' = 'all',
): Promise<EncodedTable> {
  const key = shardRowsKey(range.piece, range.inPiece);
  const kept = recall<EncodedTable>(runOf(work), key);
  if (kept) {
    if (columns === 'all') return kept;
    return { ...kept, columns: kept.columns.filter((c) => (columns === 'bytes') === (c.raw !== undefined)) };
  }
  const read = (name: string) =>
    work.loc.store.get(work.key(name)).then((b) => decodeShardRows(b, work.file.layout, range.rows, false));
  const bytesKey = shardBytesKey(range.piece, range.inPiece);
  const passes = rawColumns(work).length > 0;
  if (columns === 'coded' || !passes) {
    const coded = await read(key);
    return columns === 'bytes' ? { ...coded, columns: [] } : coded;
  }
  if (columns === 'bytes') return read(bytesKey);
  const [coded, bytes, input] = await Promise.all([read(key), read(bytesKey), inputDictionaries(work)]);
  return joinShardBytes(
    coded,
    bytes,
    input.columns.map((c) => c.name),
  );
}

/** A piece's code maps (Combine's), kept in this process or read. */
async function pieceCodes(work: Work, piece: number): Promise<CodeMaps> {
  const key = pieceCodesKey(piece);
  return (
    recall<CodeMaps>(runOf(work), key) ??
    remember(runOf(work), key, decodeCodeMaps(await work.loc.store.get(work.key(key))))
  );
}

/**
 * The input's columns with their dictionaries (the last shard's, which hold every value) and
 * no rows, as Plan stored them: what a state needs to know of the values without the table.
 */
export async function inputDictionaries(work: Work): Promise<EncodedTable> {
  return (
    recall<EncodedTable>(runOf(work), DICTIONARIES_KEY) ??
    remember(
      runOf(work),
      DICTIONARIES_KEY,
      decodeShardRows(await work.loc.store.get(work.key(DICTIONARIES_KEY)), work.file.layout, 0),
    )
  );
}

const workCache = new Map<string, Work>();

/** Opens a work area (sealed): plan.json and the spec bundle (cached per process and work URL). */
export async function openWork(url: string, env: PhaseEnv): Promise<Work> {
  const loc = sealWork(await env.stores.open(asFolder(url)));
  const cacheKey = `${loc.store.root}${loc.key}`;
  const file = await getJson<PlanFile>(loc.store, joinKey(loc.key, 'plan.json'));
  const cached = workCache.get(cacheKey);
  if (cached && cached.file.started === file.started && cached.file.plan.runId === file.plan.runId)
    return cached;
  const loaded = await workWith(loc, file, env);
  // The defaults the input's values decide, from the dictionaries the scan stored.
  const work = loaded.spec.pending
    ? { ...loaded, spec: withColumnDefaults(loaded.spec, await inputDictionaries(loaded)) }
    : loaded;
  workCache.set(cacheKey, work);
  if (workCache.size > 8) workCache.delete(workCache.keys().next().value!);
  return work;
}

/**
 * The work area as the scan sees it, before the input is all read: plan.json as Plan wrote it
 * and the spec without the defaults the input decides. Never cached: Combine completes plan.json.
 */
export async function openScanWork(url: string, env: PhaseEnv): Promise<Work> {
  const loc = sealWork(await env.stores.open(asFolder(url)));
  return workWith(loc, await getJson<PlanFile>(loc.store, joinKey(loc.key, 'plan.json')), env);
}

/** The work area with its spec loaded from the bundle. */
async function workWith(loc: Location, file: PlanFile, env: PhaseEnv): Promise<Work> {
  const key = (name: string) => joinKey(loc.key, name);
  let specPath: string;
  if (loc.store.root === 'file:///') {
    // Loaded by path: each file's seal is checked first (digest does).
    for (const o of await loc.store.list(key('bundle/'))) await loc.store.digest(o.key);
    specPath = `/${key(`bundle/${file.specName}`)}`;
  } else {
    const id = createHash('sha256').update(`${loc.store.root}${loc.key}`).digest('hex').slice(0, 12);
    const dir = scratch(env, `bundle-${id}-${threadId}`);
    for (const o of await loc.store.list(key('bundle/'))) {
      const path = join(dir, o.key.slice(key('bundle/').length));
      mkdirSync(dirname(path), { recursive: true });
      writeFileSync(path, await loc.store.get(o.key));
    }
    specPath = join(dir, file.specName);
  }
  return { loc, file, spec: loadSpec(specPath), key };
}

/** Staged files as a verifier reads them: local paths, and each file's manifest entry. */
export interface StagedFiles {
  path(name: string): string;
  /** Its name, size and SHA-256: of the bytes the verifier reads, checked against their seal. */
  entry(name: string): ManifestEntry;
  /** Removes the files downloaded (Lambda keeps /tmp between invocations). */
  dispose(): void;
}

/**
 * Local paths of staged files for a verifier that reads paths (downloaded from S3), each
 * checked against the seal its writer left (E_WORK_CORRUPT) before anything reads it.
 */
export async function stagedPaths(work: Work, env: PhaseEnv, names: string[]): Promise<StagedFiles> {
  const { store } = work.loc;
  const local = store.root === 'file:///';
  const dir = local ? '' : scratch(env, stagedDir(work));
  // Each call its own folder: a part's slice and the audit may read the same part at once.
  const path = (name: string) => (local ? `/${work.key(`staging/${name}`)}` : join(dir, name));
  const entries = new Map<string, ManifestEntry>();
  const dispose = () => {
    if (!local) rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const name of names) {
      const key = work.key(`staging/${name}`);
      if (local) entries.set(name, { name, ...(await store.digest(key)) });
      else {
        const bytes = await store.get(key);
        mkdirSync(dirname(path(name)), { recursive: true });
        writeFileSync(path(name), bytes);
        entries.set(name, hashed(name, bytes));
      }
    }
  } catch (e) {
    dispose();
    throw e;
  }
  return { path, entry: (name) => entries.get(name)!, dispose };
}

/** A file's manifest entry: its name, size and SHA-256. */
export function hashed(name: string, bytes: Uint8Array): ManifestEntry {
  return { name, bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') };
}

/** Downloads of staged files so far in this thread (each in its own folder). */
let stagedDownloads = 0;

function stagedDir(work: Work): string {
  // Worker threads share the process, and states run side by side in a thread: each call has its own folder.
  return `staged-${work.file.plan.runId}-${process.pid}-${threadId}-${stagedDownloads++}`;
}

/**
 * The staged files of output part `index` of `parts`: data.arrow and data.csv (and data.parquet
 * when the spec asks for it) when there is one.
 */
export function partFiles(parts: number, index: number): { arrow: string; csv: string; parquet: string } {
  const name = parts === 1 ? 'data' : `data/part-${String(index).padStart(5, '0')}`;
  return { arrow: `${name}.arrow`, csv: `${name}.csv`, parquet: `${name}.parquet` };
}

export function scratch(env: PhaseEnv, name: string): string {
  const dir = join(env.tmp ?? tmpdir(), 'ppdp', name);
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** Bytes per range request when downloading: memory holds one piece, not the file. */
const DOWNLOAD_PIECE_BYTES = 64 * 1024 * 1024;

/**
 * Copies a stored object of `size` bytes to the local file `path` a range at a time; returns
 * `path`. With `spans`, only those bytes, each at its place: the rest of the file is a hole.
 * With `version`, every range is of that version (E_INPUT_CHANGED for another).
 */
export async function downloadTo(
  store: Store,
  key: string,
  size: number,
  path: string,
  spans: readonly (readonly [number, number])[] = [[0, size]],
  version?: string,
): Promise<string> {
  mkdirSync(dirname(path), { recursive: true });
  const fd = openSync(path, 'w');
  try {
    for (const [from, to] of spans) {
      for (let at = from; at < to; at += DOWNLOAD_PIECE_BYTES) {
        const piece = await store.getRange(key, at, Math.min(to, at + DOWNLOAD_PIECE_BYTES), version);
        writeSync(fd, piece, 0, piece.length, at);
      }
    }
    ftruncateSync(fd, size);
  } finally {
    closeSync(fd);
  }
  return path;
}

export function asFolder(url: string): string {
  return url.endsWith('/') ? url : `${url}/`;
}

export function ms(t0: number): number {
  return Math.round((performance.now() - t0) * 100) / 100;
}

export function timer(timings: Record<string, number>) {
  return <T>(phase: string, work: () => T): T => {
    const t = performance.now();
    try {
      return work();
    } finally {
      timings[phase] = (timings[phase] ?? 0) + Math.round((performance.now() - t) * 100) / 100;
    }
  };
}

export async function timing(
  store: Store,
  workKey: string,
  state: string,
  msTaken: number,
  inner: Record<string, number> = {},
): Promise<void> {
  await putJson(store, joinKey(workKey, `timings/${state}.json`), {
    ms: Math.round(msTaken * 100) / 100,
    ...inner,
  });
}

/**
 * The report's timings: each state's wall time (shard states summed over shards, with the
 * slowest shard as `<state>Max`), and the method's own phases (search, write, …).
 */
export async function gatherTimings(store: Store, workKey: string): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  const prefix = joinKey(workKey, 'timings/');
  for (const o of await store.list(prefix)) {
    const name = baseKey(o.key).replace(/\.json$/, '');
    const t = await getJson<Record<string, number> & { ms: number }>(store, o.key);
    const shard = /^(.*)-(\d+)$/.exec(name);
    const state = shard ? shard[1]! : name;
    const round = (x: number) => Math.round(x * 100) / 100;
    out[state] = round((out[state] ?? 0) + t.ms);
    if (shard) out[`${state}Max`] = Math.max(out[`${state}Max`] ?? 0, t.ms);
    for (const [k, v] of Object.entries(t)) if (k !== 'ms') out[k] = round((out[k] ?? 0) + v);
  }
  return out;
}

/** A lock that could not be removed fails nothing: said to a person, logged without the message. */
export function warner(env: PhaseEnv): (line: string) => void {
  return (line) => {
    env.log({ lockRemoved: false });
    env.say?.(line);
  };
}

export function columnLength(
  c:
    | { kind: 'dictionary'; codes: ArrayLike<number> }
    | { kind: 'number'; values: ArrayLike<number> }
    | { kind: 'utf8'; values: RawValues },
): number {
  return c.kind === 'dictionary' ? c.codes.length : c.kind === 'utf8' ? rawLength(c.values) : c.values.length;
}

/** The shard steps of the run's method (Plan chose the sharded mode because it has them). */
export function shardSteps(work: Work): ShardSteps {
  const steps = methodFor(work.spec.method.name).shards;
  if (!steps) throw new Error(`method '${work.spec.method.name}' does not run over row shards`);
  return steps;
}

/**
 * The columns a sharded release carries as their rows' bytes from the scan to the release (the
 * method's pass-through columns, ShardSteps.passThrough); none for a release built as one task.
 */
export function rawColumns(work: Work): string[] {
  if (work.file.plan.mode !== 'sharded') return [];
  return methodFor(work.spec.method.name).shards?.passThrough?.(work.spec) ?? [];
}
