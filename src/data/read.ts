/**
 * Picks the reader for an input table by explicit format or by file extension, and reads a
 * folder of files of one format as one table.
 */
import { basename, extname } from 'node:path';
import { InputError, SpecError } from '../errors.ts';
import { inWords, withArticle } from '../util/format.ts';
import { shownName } from '../util/limits.ts';
import { fileMagic } from '../util/magic.ts';
import { type ArrowRange, type NullPolicy, readArrowShards } from './arrow.ts';
import { type CsvRange, readCsvShards } from './csv.ts';
import {
  ColumnPoints,
  DECIMAL_POINT,
  GROUPED,
  isDecimalComma,
  NO_POINT,
  type Points,
  pointsOf,
  withDecimalPoint,
} from './decimal.ts';
import { folderFiles, isFolder } from './input.ts';
import { readParquetShards } from './parquet.ts';
import { type RawValues, rawLength } from './raw.ts';
import { Remap, ShardAssembler, SharedDictionary } from './shards.ts';
import { type EncodedTable, inputName, rowPlaces } from './table.ts';
import { readXlsxShards } from './xlsx.ts';

export type InputFormat = 'csv' | 'arrow' | 'parquet' | 'xlsx';

export interface ReadTableOptions {
  /**
   * A CSV's; detected from the header when absent (a folder's: from its first file's). Of an
   * Arrow, Parquet or Excel input, the tables' `delimiter` (the release CSV's), `;` when absent.
   */
  delimiter?: string;
  /** Overrides the extension-based choice. */
  format?: InputFormat;
  /** Excel only: the sheet, by name or 1-based position (default: the first). */
  sheet?: string | number;
  /** Where `sheet` was given, as messages name it: the spec's `format.sheet` (default) or an option (`--sheet`). */
  sheetGiven?: string;
  /** Arrow and Parquet: what a null does (default: an error). */
  nulls?: NullPolicy;
  /** Columns left out as they are read, never stored (identifying ones): see EncodedTable.omitted. */
  omit?: ReadonlySet<string>;
  /**
   * Columns to give as their rows' UTF-8 bytes (EncodedColumn.raw) where the reader can (CSV,
   * Arrow, Parquet and Excel files; a folder read whole gives them coded, as every column).
   */
  raw?: ReadonlySet<string>;
  /** Of an Arrow file, these record batches (arrowRanges); of a CSV file, these rows (csvRanges). */
  range?: ArrowRange | CsvRange;
  /**
   * `format.decimal`: with `,`, a text cell that is a number written with a decimal comma
   * (`3,75`, `-0,5`) is read as the same number with a decimal point (`3.75`), in every format;
   * a number stored as a number (EncodedTable.typed, a sheet's number cell) is as it is.
   */
  decimal?: '.' | ',';
  /** By column, its `missing` texts: a cell that is one of them (blanks around it aside) reads as empty. */
  missing?: ReadonlyMap<string, ReadonlySet<string>>;
  /**
   * Columns whose values are read without the blanks around them (an entity column: `P7` and
   * `P7 ` are one person, never two that would each count toward k). Coded columns only.
   */
  trim?: ReadonlySet<string>;
  /**
   * With `format.decimal: ","`: filled by the read, per column read (by its index), its points
   * (ColumnPoints: what the read saw, for an input read in pieces to be checked whole).
   */
  points?: ColumnPoints[];
}

const EXTENSIONS: Record<string, InputFormat> = {
  '.arrow': 'arrow',
  '.arrows': 'arrow',
  '.feather': 'arrow',
  '.ipc': 'arrow',
  '.parquet': 'parquet',
  '.pq': 'parquet',
  '.csv': 'csv',
  '.tsv': 'csv',
  '.xlsx': 'xlsx',
  '.xlsm': 'xlsx',
  // A legacy workbook goes to the Excel reader, which tells how to save it as .xlsx.
  '.xls': 'xlsx',
};
const FORMAT_NAMES: Record<InputFormat, string> = {
  csv: 'CSV',
  arrow: 'Arrow',
  parquet: 'Parquet',
  xlsx: 'Excel',
};

/**
 * By extension (any case): `arrow` for `.arrow`, `.arrows`, `.feather` and `.ipc`, `parquet` for
 * `.parquet` and `.pq`, `xlsx` for `.xlsx`, `.xlsm` and `.xls`; any other file by its first
 * bytes (inputMagic: an Arrow or Parquet file named `.csv`, `.txt` or nothing is read as what it
 * is), else `csv`. A folder's is its files' format.
 */
export function formatOf(path: string): InputFormat {
  if (isFolder(path)) {
    try {
      return folderInput(path).format;
    } catch {
      return 'csv';
    }
  }
  const named = EXTENSIONS[extname(path).toLowerCase()];
  if (named !== undefined && named !== 'csv') return named;
  const magic = fileMagic(path);
  return magic === 'arrow' || magic === 'parquet' ? magic : 'csv';
}

/**
 * Whether messages may quote a table's column names: an Arrow or Parquet schema's names, yes; a
 * CSV's or a sheet's header row, never (docs/release-spec.md, "Resource limits"): in a file
 * exported without its header row, that row is a person's record.
 */
export function namesQuotable(table: EncodedTable, format: InputFormat = formatOf(table.source)): boolean {
  return format === 'arrow' || format === 'parquet';
}

/** The hint for a column a table does not have: its columns, listed when namesQuotable, else counted. */
export function columnsHint(table: EncodedTable, format?: InputFormat): string {
  const names = table.columns.map((c) => c.name);
  return namesQuotable(table, format)
    ? `its columns are: ${names.map(shownName).join(', ')}`
    : `check the name against the header row of ${inputName(table)} (its ${names.length} ${
        names.length === 1 ? 'name is' : 'names are'
      } not quoted: a file without a header row has a person's record there)`;
}

/**
 * A folder input's files (see folderFiles) and their one format: `format` when given, else
 * every file's extension must name the same format.
 * @throws InputError E_INPUT_FOLDER otherwise.
 */
export function folderInput(path: string, format?: InputFormat): { files: string[]; format: InputFormat } {
  const files = folderFiles(path);
  if (format) return { files, format };
  const folder = basename(path);
  const formats: (InputFormat | undefined)[] = files.map((f) => EXTENSIONS[extname(f).toLowerCase()]);
  const unknown = formats.indexOf(undefined);
  if (unknown >= 0) {
    throw new InputError(
      'E_INPUT_FOLDER',
      `${folder}/${basename(files[unknown]!)}: not a .csv, .arrow, .parquet or .xlsx file, so its format is unknown`,
      'remove the file from the input folder (files starting with "." or "_" are skipped), or set "format": { "type": … } to read every file as that format',
    );
  }
  const other = formats.findIndex((f) => f !== formats[0]);
  if (other >= 0) {
    throw new InputError(
      'E_INPUT_FOLDER',
      `${folder}/${basename(files[other]!)}: ${withArticle(FORMAT_NAMES[formats[other]!])} file, but ${basename(files[0]!)} is ${FORMAT_NAMES[formats[0]!]}`,
      'a folder input holds files of one format: move the others out',
    );
  }
  return { files, format: formats[0]! };
}

export function readTable(path: string, options: ReadTableOptions = {}): EncodedTable {
  const [table] = readTableShards(path, Number.POSITIVE_INFINITY, options);
  return table!;
}

/**
 * Reads a table as consecutive shards of `rowsPerShard` rows, one held at a time; each shard's
 * dictionaries are a prefix of the next one's (see readCsvShards, readArrowShards,
 * readParquetShards). A folder is read as its files one after another (readFolderShards).
 */
export function readTableShards(
  path: string,
  rowsPerShard: number,
  options: ReadTableOptions = {},
): Generator<EncodedTable, void, undefined> {
  const format = options.format ?? formatOf(path);
  if (options.sheet !== undefined && format !== 'xlsx') {
    const given = options.sheetGiven ?? 'format.sheet';
    throw new SpecError(
      given === 'format.sheet' ? 'E_SPEC_CONFLICT' : 'E_USAGE',
      `${given} is set, but ${basename(path)} is read as ${FORMAT_NAMES[format]}, which has no sheets`,
      `leave ${given} out, or name an Excel workbook (.xlsx) as the input`,
    );
  }
  const shards = isFolder(path)
    ? readFolderShards(path, rowsPerShard, options)
    : readFileShards(path, rowsPerShard, options, format);
  // A sheet's reader reads its text cells' decimal commas itself: its number cells are numbers.
  const decimal = options.decimal === ',' && format !== 'xlsx';
  const { missing, trim } = options;
  if (!decimal && !missing?.size && !trim?.size) return shards;
  const markedIn = (texts: ReadonlySet<string>) => (v: string) => (texts.has(v.trim()) ? '' : v);
  const trimmed = (v: string) => v.trim();
  const mappingOf = (name: string, commas: boolean) => {
    const texts = missing?.get(name);
    const steps = [
      commas ? withDecimalPoint : undefined,
      texts ? markedIn(texts) : undefined,
      trim?.has(name) ? trimmed : undefined,
    ].filter((f) => f !== undefined);
    if (steps.length <= 1) return steps[0];
    return (v: string) => steps.reduce((x, f) => f(x), v);
  };
  return mappedValues(
    shards,
    mappingOf,
    decimal ? { format, firstRow: options.range?.firstRow ?? 0, points: options.points ?? [] } : undefined,
  );
}

/**
 * Shards with each column's values read through its mapping (every number written with a
 * decimal comma read with a decimal point, a missing-value text as empty, an entity column's
 * values trimmed): each mapped column's values mapped (each distinct value once) to a
 * dictionary of its own, its codes still in order of first use (so the shards read as the same table written so would, and `3,75` and
 * `3.75` are one value). A column read as bytes is rewritten only where a value changes.
 */
function* mappedValues(
  shards: Generator<EncodedTable, void, undefined>,
  mappingOf: (column: string, commas: boolean) => ((value: string) => string) | undefined,
  /**
   * With `format.decimal: ","`: the input's format and the first shard's first row, for
   * messages, and where each column's points go (ReadTableOptions.points).
   */
  commas?: { format: InputFormat; firstRow: number; points: ColumnPoints[] },
): Generator<EncodedTable, void, undefined> {
  let state:
    | {
        shared: SharedDictionary;
        remap: Remap;
        texts: string[];
        /** Each of `texts`' points, as written (pointsOf), and which of them it holds (bits). */
        points: Points[];
        held: number;
        last: string | undefined;
        column: ColumnPoints | undefined;
      }[]
    | undefined;
  let firstRow = commas?.firstRow ?? 0;
  // Rows read before the shard (a row of the read is `read + row`: PointsSeen).
  let read = 0;
  const header = () => commas?.format === 'csv';
  for (const shard of shards) {
    const typed = new Set(shard.typed ?? []);
    state ??= shard.columns.map(() => {
      const shared = new SharedDictionary();
      return {
        shared,
        remap: new Remap(shared),
        texts: [],
        points: [],
        held: 0,
        last: undefined,
        column: undefined,
      };
    });
    const columns = shard.columns.map((column, i) => {
      // A number stored as a number (an Arrow or Parquet number column) has no comma to read.
      const decimal = commas !== undefined && !typed.has(column.name);
      const map = mappingOf(column.name, decimal);
      if (!map) return column;
      const s = state![i]!;
      const points = decimal
        ? (commas!.points[i] = s.column ??= new ColumnPoints(columnLabel(shard, i, commas!.format)))
        : undefined;
      const place = (row: number) => rowPlaces(shard, column.name, [row], header, firstRow);
      const at = read;
      if (column.raw) {
        if (points) notePoints(column.raw, points, place, at);
        return {
          ...column,
          raw: map === withDecimalPoint ? withDecimalPoints(column.raw) : rawThrough(column.raw, map),
        };
      }
      const dictionary = column.dictionary;
      // A shard's dictionary extends the last one's; one that does not is mapped afresh.
      if (
        dictionary.length < s.texts.length ||
        (s.texts.length > 0 && dictionary[s.texts.length - 1] !== s.last)
      ) {
        s.texts = [];
        s.points = [];
        s.remap = new Remap(s.shared);
      }
      for (let j = s.texts.length; j < dictionary.length; j++) {
        const value = dictionary[j]!;
        const p = decimal ? pointsOf(value) : NO_POINT;
        s.points.push(p);
        s.held |= 1 << p;
        s.texts.push(map(value));
      }
      s.last = dictionary[dictionary.length - 1];
      // Rows are looked at only for points whose first row is still to be found.
      if (points && ([GROUPED, DECIMAL_POINT] as const).some((p) => s.held & (1 << p) && points.wants(p))) {
        const rows = column.codes;
        for (let row = 0; row < rows.length; row++) {
          const p = s.points[rows[row]!]!;
          if (p !== NO_POINT && points.wants(p)) points.saw(p, place(row), at + row);
        }
      }
      const codes = new Int32Array(column.codes.length);
      s.remap.apply(s.texts, column.codes, 0, codes.length, codes, 0);
      return { ...column, dictionary: s.shared.values.slice(), codes };
    });
    yield { ...shard, columns };
    firstRow += shard.rowCount;
    read += shard.rowCount;
  }
}

/**
 * How messages name a shard's column `i`: an Arrow or Parquet schema's name, a CSV column by
 * its place (its header may be a person's record: see namesQuotable).
 */
function columnLabel(shard: EncodedTable, i: number, format: InputFormat): string {
  if (namesQuotable(shard, format)) return `column "${shownName(shard.columns[i]!.name)}"`;
  return columnPlaces(shard, [i]);
}

/**
 * Columns `indices` of a table (0-based, in `columns`) by their place in the input, never
 * their names: `column 5`, `columns 2, 5 and 7`, a sheet's by its letters (`columns B and E`).
 * The identifying columns the reader left out are counted where it says where they were
 * (`omittedAt`); else they are not, and the text says so.
 */
export function columnPlaces(
  table: Pick<EncodedTable, 'omitted' | 'omittedAt' | 'origins'>,
  indices: readonly number[],
): string {
  const letters = table.origins?.[0]?.sheet?.letters;
  const skipped = [...(table.omittedAt ?? [])].sort((a, b) => a - b);
  const place = (i: number) => {
    let at = i;
    for (const s of skipped) if (s <= at) at++;
    return at;
  };
  const at = indices.map((i) => letters?.[i] ?? String(place(i) + 1));
  const left = letters || table.omittedAt ? 0 : (table.omitted?.length ?? 0);
  return `column${indices.length === 1 ? '' : 's'} ${inWords(at)}${
    left === 0 ? '' : ` (counted without the identifying column${left === 1 ? '' : 's'})`
  }`;
}

/**
 * Notes the points of a raw column's rows that hold a point (ColumnPoints.saw), `place` naming
 * a row; the column's first row is row `first` of the read.
 */
function notePoints(
  raw: RawValues,
  points: ColumnPoints,
  place: (row: number) => string,
  first: number,
): void {
  const { offsets, bytes } = raw;
  let text: Buffer | undefined;
  for (let r = 0; r < rawLength(raw); r++) {
    const end = offsets[r + 1]!;
    let at = offsets[r]!;
    while (at < end && bytes[at] !== POINT) at++;
    if (at === end) continue;
    text ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const p = pointsOf(text.toString('utf8', offsets[r]!, end));
    if (p !== NO_POINT && points.wants(p)) points.saw(p, place(r), first + r);
  }
}

/**
 * A raw column's values with a decimal comma made a decimal point: only a value with a comma
 * byte is decoded to be tested, and the bytes are copied only if one is changed (a reader's
 * may be a view of what it read).
 */
function withDecimalPoints(raw: RawValues): RawValues {
  const { offsets } = raw;
  let bytes = raw.bytes;
  let copied = false;
  let text: Buffer | undefined;
  for (let r = 0; r < rawLength(raw); r++) {
    const end = offsets[r + 1]!;
    let comma = offsets[r]!;
    let point = false;
    for (; comma < end && bytes[comma] !== COMMA; comma++) if (bytes[comma] === POINT) point = true;
    if (comma === end && !point) continue;
    text ??= Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const value = text.toString('utf8', offsets[r]!, end);
    // Grouping points dropped: values change length, the column is written afresh.
    if (point && withDecimalPoint(value) !== value) return rawThrough(raw);
    if (comma === end || !isDecimalComma(value)) continue;
    if (!copied) {
      bytes = bytes.slice();
      text = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      copied = true;
    }
    // A match has one comma, this first one; a point is one byte as well.
    bytes[comma] = POINT;
  }
  return copied ? { offsets, bytes } : raw;
}

/** A raw column's values each through `map` (the same column when none changes), written into new bytes. */
function rawThrough(raw: RawValues, map: (value: string) => string = withDecimalPoint): RawValues {
  const text = Buffer.from(raw.bytes.buffer, raw.bytes.byteOffset, raw.bytes.byteLength);
  const n = rawLength(raw);
  const offsets = new Int32Array(n + 1);
  const values: Buffer[] = [];
  let changed = false;
  for (let r = 0; r < n; r++) {
    const value = text.subarray(raw.offsets[r]!, raw.offsets[r + 1]!);
    const before = value.toString('utf8');
    const after = map(before);
    changed ||= after !== before;
    values.push(after === before ? value : Buffer.from(after, 'utf8'));
    offsets[r + 1] = offsets[r]! + values[r]!.length;
  }
  return changed ? { offsets, bytes: Buffer.concat(values, offsets[n]!) } : raw;
}

const COMMA = 0x2c;
const POINT = 0x2e;

/** Whether a piece's range is a CSV file's rows (else an Arrow file's record batches). */
export function isCsvRange(range: ArrowRange | CsvRange): range is CsvRange {
  return 'kind' in range && range.kind === 'csv';
}

function readFileShards(
  path: string,
  rowsPerShard: number,
  options: ReadTableOptions,
  format: InputFormat,
): Generator<EncodedTable, void, undefined> {
  switch (format) {
    case 'arrow':
      return readArrowShards(path, rowsPerShard, {
        nulls: options.nulls,
        omit: options.omit,
        range: options.range && !isCsvRange(options.range) ? options.range : undefined,
        raw: options.raw,
        delimiter: options.delimiter,
      });
    case 'parquet':
      return readParquetShards(path, rowsPerShard, {
        nulls: options.nulls,
        raw: options.raw,
        omit: options.omit,
        delimiter: options.delimiter,
      });
    case 'xlsx':
      return readXlsxShards(path, rowsPerShard, {
        sheet: options.sheet,
        ...(options.sheetGiven ? { sheetGiven: options.sheetGiven } : {}),
        omit: options.omit,
        raw: options.raw,
        ...(options.decimal ? { decimal: options.decimal } : {}),
        ...(options.points ? { points: options.points } : {}),
        delimiter: options.delimiter,
      });
    default:
      return readCsvShards(path, rowsPerShard, {
        delimiter: options.delimiter,
        omit: options.omit,
        raw: options.raw,
        ...(options.range && isCsvRange(options.range) ? { range: options.range } : {}),
      });
  }
}

/**
 * A folder's files read in sorted name order as one table: the same shards, dictionaries and
 * codes as one file holding their rows one after another. Every file must have the same
 * columns in the same order; a file with no rows adds none. Each shard lists which file its
 * rows come from (`origins`), so messages name the file and its row.
 * @throws InputError E_INPUT_FOLDER, E_INPUT_FILES_DIFFER, E_INPUT_NO_ROWS, or a file's reader's error.
 */
export function* readFolderShards(
  path: string,
  rowsPerShard: number,
  options: ReadTableOptions = {},
): Generator<EncodedTable, void, undefined> {
  const { files, format } = folderInput(path, options.format);
  let delimiter = options.delimiter;
  let assembler: ShardAssembler | undefined;
  let first = '';
  let names: string[] = [];
  let omitted: readonly string[] | undefined;
  let omittedAt: readonly number[] | undefined;
  // A column is typed only if it is in every file read so far (one file's text has commas to read).
  let typed: readonly string[] | undefined;
  // How far through the folder a shard ends: files done, and the current file's own share.
  let progress = 0;
  const marked = (t: EncodedTable): EncodedTable => ({
    ...t,
    ...(omitted ? { omitted } : {}),
    ...(omittedAt ? { omittedAt } : {}),
    ...(typed && typed.length > 0 ? { typed } : {}),
    progress,
  });
  for (const [f, file] of files.entries()) {
    let remaps: Remap[] | undefined;
    let fileRow = 0;
    try {
      // The assembler merges coded columns: a folder's files give every column coded.
      for (const table of readFileShards(
        file,
        rowsPerShard,
        { ...options, delimiter, raw: undefined },
        format,
      )) {
        omitted ??= table.omitted;
        omittedAt ??= table.omittedAt;
        typed = typed ? typed.filter((name) => table.typed?.includes(name)) : (table.typed ?? []);
        progress = (f + (table.progress ?? 1)) / files.length;
        if (!assembler) {
          first = file;
          names = table.columns.map((c) => c.name);
          delimiter = table.delimiter;
          assembler = new ShardAssembler(names, rowsPerShard, path, table.delimiter);
        } else if (fileRow === 0) {
          checkSameColumns(path, first, names, file, table);
        }
        remaps ??= assembler.remaps();
        // A sheet's shard says where its rows are (one origin: its header may be below row 1).
        const origin = table.origins?.[0] ?? { source: file, firstRow: fileRow };
        for (const shard of assembler.add({ ...table, remaps, origin })) yield marked(shard);
        fileRow += table.rowCount;
      }
    } catch (err) {
      // A file with no rows (e.g. an empty part of a table written in parts) adds none.
      if (err instanceof InputError && err.code === 'E_INPUT_NO_ROWS' && fileRow === 0) continue;
      throw err;
    }
  }
  const last = assembler?.finish();
  progress = 1;
  if (last) yield marked(last);
  else if (!assembler) {
    throw new InputError(
      'E_INPUT_NO_ROWS',
      `${basename(path)}: none of the folder's ${files.length} files has a row`,
      'export the table with its rows',
    );
  }
}

export function checkSameColumns(
  folder: string,
  first: string,
  names: readonly string[],
  file: string,
  table: EncodedTable,
): void {
  const other = table.columns.map((c) => c.name);
  const k = names.findIndex((n, i) => other[i] !== n);
  if (k < 0 && other.length === names.length) return;
  // Names are not shown: a CSV file without a header row would show its first row's values.
  const what =
    k < 0 || other[k] === undefined
      ? `it has ${other.length} columns, ${basename(first)} has ${names.length}`
      : `its column ${k + 1} is named otherwise than ${basename(first)}'s`;
  throw new InputError(
    'E_INPUT_FILES_DIFFER',
    `${basename(folder)}/${basename(file)}: the columns differ from the folder's first file: ${what}`,
    'every file of a folder input must have the same columns in the same order: write the files again with one schema, or move the odd one out',
  );
}
