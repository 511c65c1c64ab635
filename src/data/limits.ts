/**
 * Resource limits, checked before the work they bound starts: an input that will not fit the
 * memory budget, a lattice too large to search and a hierarchy too large to build each get a
 * clear error instead of a hang or an out-of-memory crash.
 */
import { totalmem } from 'node:os';
import { basename } from 'node:path';
import { InputError, LimitError } from '../errors.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';
import { inWords, latticeNodes, thousands } from '../util/format.ts';
import { MAX_INPUT_COLUMNS, MAX_NAME_LENGTH } from '../util/limits.ts';
import { inputSize } from './input.ts';

/** Below this many rows, starting worker threads costs more than it saves. */
export const WORKER_MIN_ROWS = 1_000_000;
/**
 * Before the input is read its rows are not known: the scan of a folder goes to worker threads
 * from this many bytes per WORKER_MIN_ROWS rows (a CSV row of a few columns is about as long).
 */
export const SCAN_BYTES_PER_ROW = 64;
/** An input of this many bytes is large: worker threads scan a folder of it (and the CLI tunes its allocator). */
export const LARGE_INPUT_BYTES = WORKER_MIN_ROWS * SCAN_BYTES_PER_ROW;

/** Lattices larger than this are not searched unless `limits.maxLatticeNodes` raises it. */
export const DEFAULT_MAX_LATTICE_NODES = 10_000_000;
/** Cells (values × levels) of one hierarchy beyond which building it is refused. */
export const MAX_HIERARCHY_CELLS = 20_000_000;
/** Levels of one hierarchy (a mask over long strings gets one level per character). */
export const MAX_HIERARCHY_LEVELS = 1_000;
/**
 * Largest ratio of a Parquet page's uncompressed to compressed size, for pages declaring more
 * than PARQUET_RATIO_FLOOR bytes: SNAPPY cannot pass about 21×, GZIP about 1,032× (a page of one
 * repeated byte); only a page of nearly one repeated byte under GZIP, or BROTLI, can pass it.
 */
export const PARQUET_MAX_PAGE_RATIO = 1_000;
/** Pages declaring at most this many uncompressed bytes are not held to PARQUET_MAX_PAGE_RATIO. */
export const PARQUET_RATIO_FLOOR = 1024 * 1024;
/** Largest uncompressed Parquet page (writers default to pages of 1 MiB). */
export const PARQUET_MAX_PAGE_BYTES = 256 * 1024 * 1024;
/**
 * Largest ratio of an .xlsx part's declared to compressed size, for parts declaring more than
 * XLSX_RATIO_FLOOR bytes: deflate cannot pass about 1,032×, and a worksheet's XML compresses
 * some 5–50×; only a part of nearly one repeated byte reaches it.
 */
export const XLSX_MAX_PART_RATIO = 1_000;
/** Parts declaring at most this many bytes are not held to XLSX_MAX_PART_RATIO. */
export const XLSX_RATIO_FLOOR = 1024 * 1024;
/**
 * Largest .xlsx part read whole (the workbook, its relationships and styles); a worksheet and
 * its shared strings are read as they inflate, a row or a string at a time.
 */
export const XLSX_MAX_PART_BYTES = 64 * 1024 * 1024;
/** Largest row of a worksheet's XML, or shared string (read whole before it is split). */
export const XLSX_MAX_ROW_BYTES = 64 * 1024 * 1024;

/** The environment variable `--max-memory` sets; it overrides `limits.maxMemoryMB`. */
export const MEMORY_ENV = 'PPDP_MAX_MEMORY_MB';

const MB = 1024 * 1024;
/** What the runtime needs besides the table (code, WASM memory, the search's state). */
const BASELINE_BYTES = 64 * MB;
/**
 * Peak memory per input byte: the codes (4 bytes per cell, at most ~2 per input byte for short
 * cells), each column's distinct values and the release's own per-row arrays. The readers
 * stream (one 8 MB piece or one record batch at a time), so the file's bytes are not counted.
 */
const BYTES_PER_INPUT_BYTE = 4;

export interface MemoryBudget {
  readonly bytes: number;
  /** Where the budget comes from, for the message. */
  readonly source: string;
  /** How to raise it, for the message's hint. */
  readonly hint?: string;
}

/** Lambda's own statement of a function's memory (MB): the budget there, not the host's memory. */
export const LAMBDA_MEMORY_ENV = 'AWS_LAMBDA_FUNCTION_MEMORY_SIZE';
/** Set by the deployment on Plan: the memory (MB) of the functions Plan admits a release for. */
export const STATE_MEMORY_ENV = 'PPDP_STATE_MEMORY_MB';

const LOCAL_HINT =
  'raise the budget (--max-memory <MB> or "limits": { "maxMemoryMB": … } in the spec) on a machine with that much memory';

/** `--max-memory` (via PPDP_MAX_MEMORY_MB), else `limits.maxMemoryMB`, else the machine's memory. */
export function memoryBudget(spec: Pick<ReleaseSpec, 'limits'>, env = process.env): MemoryBudget {
  const fromEnv = env[MEMORY_ENV];
  if (fromEnv !== undefined && fromEnv !== '') {
    const mb = Number(fromEnv);
    if (Number.isFinite(mb) && mb > 0) return { bytes: mb * MB, source: `--max-memory ${fromEnv}` };
  }
  const fromSpec = spec.limits?.maxMemoryMB;
  if (fromSpec !== undefined) return { bytes: fromSpec * MB, source: `limits.maxMemoryMB = ${fromSpec}` };
  const lambda = Number(env[LAMBDA_MEMORY_ENV]);
  if (Number.isFinite(lambda) && lambda > 0) {
    return {
      bytes: lambda * MB,
      source: `this function's memory, ${lambda} MB`,
      hint: `deploy with more memory for the state (cdk context ppdp:memoryMb, e.g. -c 'ppdp:memoryMb={"Plan":10240}')`,
    };
  }
  return { bytes: totalmem(), source: "the machine's memory" };
}

/**
 * The budgets a sharded release is admitted against: deployed, each function's memory as the
 * stack configured it (Plan's own from Lambda, the others from PPDP_STATE_MEMORY_MB); on one
 * machine, its budget for every state.
 */
export function stateBudgets(spec: Pick<ReleaseSpec, 'limits'>, env = process.env) {
  const own = memoryBudget(spec, env);
  let deployed: Record<string, number> = {};
  try {
    deployed = JSON.parse(env[STATE_MEMORY_ENV] ?? '{}') as Record<string, number>;
  } catch {
    deployed = {};
  }
  const of = (state: string, extra = ''): MemoryBudget => {
    const mb = deployed[state];
    if (!(typeof mb === 'number' && mb > 0)) return own.hint ? own : { ...own, hint: LOCAL_HINT };
    return {
      bytes: mb * MB,
      source: `the ${state} function's memory, ${mb} MB`,
      hint: `deploy with more memory for ${state} (cdk context ppdp:memoryMb, e.g. -c 'ppdp:memoryMb={"${state}":${Math.min(10_240, mb * 2)}}')${extra}`,
    };
  };
  const count = of('CountShard', ' or a smaller ppdp:rowsPerShard');
  const apply = of('ApplyShard', ' or a smaller ppdp:rowsPerShard');
  return {
    Plan: own.hint ? own : { ...own, hint: LOCAL_HINT },
    shard: count.bytes <= apply.bytes ? count : apply,
    Search: of('Search'),
  };
}

/** Estimated peak memory of a release over an input of `inputBytes` bytes. */
export function estimateMemory(inputBytes: number): number {
  return BASELINE_BYTES + BYTES_PER_INPUT_BYTE * inputBytes;
}

/** The refusal of an input with more than MAX_INPUT_COLUMNS columns (`n`, or "more than" when counting stopped). */
export function tooManyColumns(where: string, what: string, n?: number): LimitError {
  return new LimitError(
    'E_LIMIT_COLUMNS',
    n === undefined
      ? `${where}: ${what} has more than ${fmt(MAX_INPUT_COLUMNS)} columns (the limit)`
      : `${where}: ${what} has ${fmt(n)} columns, over the limit of ${fmt(MAX_INPUT_COLUMNS)}`,
    `release fewer columns: drop the ones the release does not need from the input (ppdp reads at most ${fmt(MAX_INPUT_COLUMNS)})`,
  );
}

/**
 * The refusal of a column name longer than MAX_NAME_LENGTH characters (column `index`, 0-based):
 * not quoted, since a file without a header row would have a value there.
 */
function nameTooLong(where: string, index: number, length: number): LimitError {
  return new LimitError(
    'E_LIMIT_NAME',
    `${where}: the name of column ${fmt(index + 1)} is ${fmt(length)} characters long, over the limit of ${fmt(MAX_NAME_LENGTH)}`,
    `give the column a name of at most ${fmt(MAX_NAME_LENGTH)} characters`,
  );
}

/**
 * Fails when an input's schema (`what`, e.g. "the schema") has more columns than
 * MAX_INPUT_COLUMNS or a name ppdp cannot take (checkColumnName), before anything is sized per column.
 */
export function checkInputColumns(where: string, names: readonly string[], what: string): void {
  if (names.length > MAX_INPUT_COLUMNS) throw tooManyColumns(where, what, names.length);
  for (const [i, name] of names.entries()) checkColumnName(where, i, name);
}

/**
 * Fails on a column name (column `index`, 0-based) longer than MAX_NAME_LENGTH, or starting
 * with U+FEFF: a byte order mark left inside a header (files joined, a BOM written twice),
 * which Arrow readers drop from a name, so the released Arrow file would name the column
 * otherwise than its CSV.
 */
export function checkColumnName(where: string, index: number, name: string): void {
  if (name.length > MAX_NAME_LENGTH) throw nameTooLong(where, index, name.length);
  if (name.charCodeAt(0) === 0xfeff) {
    throw new InputError(
      'E_INPUT_NAME',
      `${where}: the name of column ${fmt(index + 1)} starts with an invisible byte order mark (U+FEFF)`,
      'remove it from the header (a byte order mark belongs only at the very start of a file; files joined together can leave one inside)',
    );
  }
}

/**
 * Fails before reading when the input cannot fit the memory budget. A missing file passes:
 * the reader names it.
 */
export function checkInputFits(
  spec: Pick<ReleaseSpec, 'input' | 'limits'>,
  env = process.env,
  inputBytes?: number,
): void {
  let bytes: number;
  try {
    bytes = inputBytes ?? inputSize(spec.input);
  } catch {
    return;
  }
  const budget = memoryBudget(spec, env);
  const need = estimateMemory(bytes);
  if (need > budget.bytes) {
    throw new LimitError(
      'E_LIMIT_MEMORY',
      `${basename(spec.input)}: releasing this ${size(bytes)} input needs about ${mb(need)} MB, ` +
        `over the memory budget of ${mb(budget.bytes)} MB (${budget.source})`,
      `${budget.hint ?? LOCAL_HINT}, or release a sample or a split of the input`,
    );
  }
}

/**
 * Fails before the search when the lattice of `heights` (levels above the values, per
 * quasi-identifier) has more nodes than the limit.
 */
export function checkLatticeSize(
  specFile: string,
  qis: readonly { readonly name: string; readonly height: number }[],
  limit = DEFAULT_MAX_LATTICE_NODES,
): void {
  let size = 1;
  for (const q of qis) size *= q.height + 1;
  if (size > limit) {
    const levels = inWords(
      qis.map((q) => `${q.name} ${q.height + 1}`),
      10,
      ', ',
    );
    // Worded as init words it: past 1.8e308 the product is Infinity, latticeNodes gives 9.33e+698.
    throw new LimitError(
      'E_LIMIT_LATTICE',
      `${basename(specFile)}: the generalization lattice has ${latticeNodes(qis.map((q) => q.height + 1))} (levels per quasi-identifier: ${levels}), ` +
        `over the limit of ${fmt(limit)} (limits.maxLatticeNodes)`,
      'use "strategy": "optimal" (past the limit it searches best-effort), fewer quasi-identifiers or hierarchies ' +
        'with fewer levels (e.g. fewer interval widths, or a hierarchy file instead of { "mask": "right" } on long ' +
        'values), or raise limits.maxLatticeNodes',
    );
  }
}

/**
 * Fails before a hierarchy of `values` × `levels` cells is built when it is too large; `file`: it
 * is a hierarchy file's (`source`), which the hint asks to shorten rather than to write.
 */
export function checkHierarchySize(
  source: string,
  attribute: string,
  values: number,
  levels: number,
  file = false,
): void {
  if (levels > MAX_HIERARCHY_LEVELS || values * levels > MAX_HIERARCHY_CELLS) {
    throw new LimitError(
      'E_LIMIT_HIERARCHY',
      `${source}: the hierarchy of '${attribute}' ${file ? 'has' : 'would have'} ${fmt(levels)} levels for ${fmt(values)} values ` +
        `(${fmt(values * levels)} cells), over the limit of ${fmt(MAX_HIERARCHY_LEVELS)} levels and ` +
        `${fmt(MAX_HIERARCHY_CELLS)} cells`,
      file
        ? `write ${source} with fewer levels (columns of value;level1;…;*) and only the rows of the column's values`
        : 'give the column a hierarchy file with a few levels (ARX format: value;level1;…;*), or shorten its values',
    );
  }
}

function mb(bytes: number): string {
  return (bytes / MB).toFixed(bytes < 10 * MB ? 1 : 0);
}

/** A size for a person: KB below 1 MB, else MB. */
function size(bytes: number): string {
  return bytes < MB ? `${(bytes / 1024).toFixed(1)} KB` : `${mb(bytes)} MB`;
}

function fmt(n: number): string {
  return thousands(n);
}
