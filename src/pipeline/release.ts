/**
 * What the states share about a release: reading the input and checking it against the spec,
 * the run id, the keyed random streams, and the report's frame around a method's report.
 */
import { createHash } from 'node:crypto';
import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, isAbsolute, relative, resolve } from 'node:path';
import {
  REPORT_FORMAT,
  type ReleaseAudit,
  type ReleaseReport,
  type VerificationCheck,
} from '../contracts/report.ts';
import type { ArrowRange } from '../data/arrow.ts';
import { checkEmptyCells, checkHeader, LOOK_ALIKE_HINT, lookAlike } from '../data/checks.ts';
import type { CsvRange } from '../data/csv.ts';
import type { ColumnPoints } from '../data/decimal.ts';
import { tableDigest } from '../data/digest.ts';
import { digestInput } from '../data/input.ts';
import { checkInputFits } from '../data/limits.ts';
import { columnPlaces, namesQuotable, readTableShards } from '../data/read.ts';
import { type EncodedTable, inputName } from '../data/table.ts';
import { SpecError } from '../errors.ts';
import type { MethodReport } from '../methods/method.ts';
import { missingTexts, type ReleaseSpec } from '../release-spec/spec.ts';
import { verdictOf } from '../report/audit.ts';
import { specSummary } from '../report/spec-summary.ts';
import { keyedRandom } from '../util/keys.ts';
import type { Random } from '../util/random.ts';

export const VERSION = '0.1.0';

/** Reads the spec's input and checks that the spec and the table agree on the columns. */
export function readInput(spec: ReleaseSpec): EncodedTable {
  checkInputFits(spec);
  const [table] = readInputShards(spec, Number.POSITIVE_INFINITY);
  return table!;
}

/**
 * The spec's input as consecutive shards of `rowsPerShard` rows, read one at a time and each
 * checked against the spec (see readTableShards), with the input row each one starts at.
 */
export function* readInputShards(
  spec: ReleaseSpec,
  rowsPerShard: number,
  /** Only these record batches of an Arrow input, or rows of a CSV input (a range of a scan). */
  range?: ArrowRange | CsvRange,
  /** Columns to read as their rows' bytes where the reader can (ReadTableOptions.raw). */
  raw?: ReadonlySet<string>,
  /** Filled with each text column's points under `format.decimal: ","` (ReadTableOptions.points). */
  points?: ColumnPoints[],
): Generator<EncodedTable & { readonly firstRow: number }, void, undefined> {
  let firstRow = range?.firstRow ?? 0;
  let first = true;
  // Identifying columns are dropped as the rows are read: no shard, dictionary or digest holds them.
  const identifying = new Set(spec.attributes.filter((a) => a.type === 'identifying').map((a) => a.name));
  for (const table of readTableShards(spec.input, rowsPerShard, {
    delimiter: spec.format.delimiter,
    format: spec.format.type,
    ...(spec.format.sheet === undefined ? {} : { sheet: spec.format.sheet }),
    nulls: spec.format.emptyCells === 'value' ? 'missing' : 'error',
    omit: identifying,
    ...(spec.format.decimal ? { decimal: spec.format.decimal } : {}),
    missing: missingTexts(spec),
    // A person's id with blanks around it is the same person (else counted twice toward k).
    trim: new Set(spec.attributes.filter((a) => a.type === 'entity').map((a) => a.name)),
    ...(range ? { range } : {}),
    ...(raw ? { raw } : {}),
    ...(points ? { points } : {}),
  })) {
    if (first) {
      first = false;
      checkHeader(spec, table);
      checkColumns(spec, table);
    }
    checkEmptyCells(spec, table, firstRow);
    yield { ...table, firstRow };
    firstRow += table.rowCount;
  }
}

/** The report's frame around a method's report: run, spec and input facts, verification, timings. */
export function frameReport(
  spec: ReleaseSpec,
  table: EncodedTable,
  runId: string,
  methodReport: MethodReport,
  checks: VerificationCheck[],
  timings: Record<string, number>,
  audit?: ReleaseAudit,
): ReleaseReport {
  const report: ReleaseReport = {
    format: REPORT_FORMAT,
    ppdp: { version: VERSION, runId },
    spec: specSummary(spec),
    input: {
      file: basename(table.source),
      columns: [
        ...table.columns.map((c) => ({
          name: c.name,
          type: spec.attributes.find((x) => x.name === c.name)!.type,
          distinct: c.distinct ?? c.dictionary.length,
        })),
        // Dropped as read: never counted.
        ...spec.attributes
          .filter((a) => a.type === 'identifying')
          .map((a) => ({ name: a.name, type: a.type })),
      ],
    },
    ...methodReport,
    verification: { verified: checks.every((c) => c.passed), checks },
    ...(audit ? { audit } : {}),
    timings,
  };
  // The verdict goes before the timings: report.json reads verdict first, timings last.
  if (!audit) return report;
  const { timings: t, ...rest } = report;
  return { ...rest, verdict: verdictOf(report), timings: t };
}

/** The release's random streams: keyed by the seed and the input's digest (computed once). */
export function streams(
  spec: ReleaseSpec,
  table: EncodedTable,
  digest?: Uint8Array,
): (purpose: string) => Random {
  let key = digest;
  return (purpose) => keyedRandom(spec.seed, (key ??= tableDigest(table)), purpose);
}

function checkColumns(spec: ReleaseSpec, table: EncodedTable): void {
  const where = basename(spec.file);
  const names = new Set([...table.columns.map((c) => c.name), ...(table.omitted ?? [])]);
  // Why the header is not quoted, if it is not: a row of cells (a person's record in a file
  // without a header row), or some other file's first line.
  const unquoted = !namesQuotable(table, spec.format.type)
    ? "a CSV's or a sheet's header row, which in a file without one is a person's record"
    : headerMayBeQuoted(spec)
      ? undefined
      : "the input is a link that leads out of the spec's folder";
  for (const a of spec.attributes) {
    if (!names.has(a.name)) {
      const alike = lookAlike([a.name], names);
      throw new SpecError(
        'E_SPEC_COLUMN',
        `${where}: attributes.${a.name} is not a column of ${inputName(table)}`,
        alike !== undefined
          ? LOOK_ALIKE_HINT[alike]
          : unquoted === undefined
            ? `the input's columns are: ${[...names].join(', ')}`
            : `name the input's columns as its header row does (not quoted here: ${unquoted})`,
      );
    }
  }
  const listed = new Set(spec.attributes.map((a) => a.name));
  const missing = [...names].filter((n) => !listed.has(n));
  if (missing.length > 0) {
    // Named by place: a CSV header may be a person's record (columnPlaces says what it counts).
    const which =
      unquoted === undefined
        ? `input column${missing.length > 1 ? 's' : ''} ${missing.join(', ')}`
        : `input's ${columnPlaces(
            table,
            missing.map((n) => table.columns.findIndex((c) => c.name === n)),
          )}`;
    throw new SpecError(
      'E_SPEC_UNLISTED',
      `${where}: the ${which} ha${missing.length > 1 ? 've' : 's'} no type`,
      `list every input column under attributes (use "identifying" for columns that must be dropped)${
        unquoted === undefined
          ? ''
          : `: the input has ${names.size} columns, the spec lists ${names.size - missing.length} of them (names not quoted here: ${unquoted}; ppdp init ${basename(spec.input)} --out draft.json writes a spec that names every column)`
      }`,
    );
  }
}

/**
 * Whether messages may quote the input's header: not when the spec names a file inside its
 * own folder that is a link leading out of it. Its "header" is then the first line of some
 * other file (a spec folder someone else made may hold a link to /etc/passwd). An input named
 * outside the folder, or read from a bucket, is the user's own choice: an Arrow or Parquet
 * schema's names are quoted (a header row of cells never is: namesQuotable).
 */
function headerMayBeQuoted(spec: ReleaseSpec): boolean {
  try {
    const folder = realpathSync(dirname(spec.file));
    const inside = (path: string) => {
      const r = relative(folder, path);
      return r !== '' && !r.startsWith('..') && !isAbsolute(r);
    };
    const named = resolve(realpathSync(dirname(resolve(spec.input))), basename(spec.input));
    return !inside(named) || inside(realpathSync(spec.input));
  } catch {
    return false; // cannot tell: quote nothing
  }
}

/**
 * Same spec, input and files the spec names → same run id, so re-running a release is
 * idempotent; a hierarchy file or population table changed makes another run (another release).
 */
export function runIdOf(spec: ReleaseSpec): string {
  return runIdFrom(readFileSync(spec.file), digestInput(spec.input), referencedBytes(spec));
}

/** The bytes of the files a loaded spec names (specReferences; undefined: missing). */
export function referencedBytes(spec: ReleaseSpec): (Buffer | undefined)[] {
  const json: unknown = JSON.parse(readFileSync(spec.file, 'utf8').replace(/^\uFEFF/, ''));
  return specReferences(json).map((ref) => {
    try {
      return readFileSync(resolve(dirname(spec.file), ref));
    } catch {
      return undefined; // missing: the state that reads it says so
    }
  });
}

/**
 * The files a spec's JSON names besides its input, as written there (hierarchy files, then
 * population tables), each once, in the order they first appear: the run id covers their bytes.
 */
export function specReferences(json: unknown): string[] {
  const j = json as { attributes?: Record<string, { hierarchy?: unknown } | null>; privacy?: unknown } | null;
  const models: unknown[] = Array.isArray(j?.privacy) ? j.privacy : [];
  const refs = [
    ...Object.values(j?.attributes ?? {}).map((a) => a?.hierarchy),
    ...models.map((m) => (m as { population?: unknown } | null)?.population),
  ].filter((r): r is string => typeof r === 'string');
  return [...new Set(refs)];
}

/** Stands for a file the spec names that is not there. */
const MISSING = Buffer.from('ppdp: missing file');

/**
 * The run id of a spec's bytes, its input's SHA-256 and the bytes of the files it names
 * (specReferences' order; undefined: missing). Start computes it from the store.
 */
export function runIdFrom(
  specBytes: Uint8Array,
  inputDigest: Uint8Array,
  references: readonly (Uint8Array | undefined)[] = [],
): string {
  const hash = createHash('sha256').update(specBytes).update(inputDigest);
  for (const bytes of references) hash.update(bytes ? createHash('sha256').update(bytes).digest() : MISSING);
  return hash.digest('hex').slice(0, 16);
}
