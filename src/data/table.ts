/**
 * The in-memory table every method works on: each column is dictionary-encoded once to
 * integer codes, so hot loops see only integers and strings stay at the edges.
 */
import { basename } from 'node:path';
import { shownName } from '../util/limits.ts';
import type { RawValues } from './raw.ts';
export interface EncodedColumn {
  readonly name: string;
  /** code → value, in order of first appearance in the input. */
  readonly dictionary: string[];
  /** row → code (index into `dictionary`). */
  readonly codes: Int32Array;
  /**
   * A column that passes through unchanged, in a sharded release's shards: its rows' values as
   * bytes (src/data/raw.ts); its `dictionary` and `codes` are then empty.
   */
  readonly raw?: RawValues;
  /** The number of distinct values, when `dictionary` does not list them (a raw column's). */
  readonly distinct?: number;
}

/**
 * The release CSV's delimiter for an input that has none of its own (Arrow, Parquet, Excel)
 * when the spec's `format.delimiter` names none (releases made before it was read keep their bytes).
 */
export const TYPED_INPUT_DELIMITER = ';';

export interface EncodedTable {
  /** The file the table was read from, for error messages. */
  readonly source: string;
  readonly rowCount: number;
  readonly columns: EncodedColumn[];
  /**
   * The delimiter the CSV was read with; of an input without one (Arrow, Parquet, Excel), the
   * spec's `format.delimiter`, else TYPED_INPUT_DELIMITER. Released CSVs use it.
   */
  readonly delimiter: string;
  /** Columns of the input the reader left out without storing a cell (identifying ones). */
  readonly omitted?: readonly string[];
  /** A CSV's: the input's 0-based places of the `omitted` columns, so a column's place in the file can be named. */
  readonly omittedAt?: readonly number[];
  /**
   * Columns whose every cell is a typed value of the file, not text (an Arrow or Parquet column
   * of numbers, dates or booleans; a sheet's column without a text cell so far): their numbers
   * are written as JavaScript prints them, never with a decimal comma (format.decimal).
   */
  readonly typed?: readonly string[];
  /** A shard's: the share of the input read by its end (bytes of a CSV, rows of an Arrow file). */
  readonly progress?: number;
  /**
   * Where runs of rows come from, when that is not the table's source from its first row: the
   * files of a folder input, a sheet (whose header may be below row 1).
   */
  readonly origins?: readonly RowOrigin[];
}

/** Rows from `at` on (to the next origin) are the rows from `firstRow` on (0-based) of `source`. */
export interface RowOrigin {
  readonly source: string;
  readonly at: number;
  /** Of a sheet: its row number less 2 (a header on row 1 would make it the row's 0-based index). */
  readonly firstRow: number;
  /** Excel: the sheet the rows are on, so that messages name a cell. */
  readonly sheet?: SheetOrigin;
}

export interface SheetOrigin {
  readonly name: string;
  /** Each of the table's columns' letters on the sheet (`D`), in the order of `columns`. */
  readonly letters: readonly string[];
  /** When the workbook has other sheets: the hint naming them, for a sheet that holds no table. */
  readonly elsewhere?: string;
}

/** A sheet as messages name it: `data.xlsx sheet "Data"`. */
export function onSheet(file: string, sheet: SheetOrigin): string {
  return `${file} sheet "${shownName(sheet.name)}"`;
}

/**
 * A table's input as messages name it: its file, or the file and sheet its rows are on
 * (`data.xlsx sheet "Data"`); with the sheet when the table's rows are on one sheet only.
 */
export function inputName(table: Pick<EncodedTable, 'source' | 'origins'>): string {
  const o = table.origins?.[0];
  const sheet = o?.sheet;
  return sheet && table.origins!.every((x) => x.source === o.source && x.sheet?.name === sheet.name)
    ? onSheet(basename(o.source), sheet)
    : basename(table.source);
}

/**
 * The file, the 0-based row within it and the sheet, if any, of a table's row `row`: the table's
 * own source and `firstRow + row` unless the table lists its origins.
 */
export function originOf(
  table: Pick<EncodedTable, 'source' | 'origins'>,
  row: number,
  firstRow = 0,
): { source: string; row: number; sheet?: SheetOrigin } {
  const origins = table.origins;
  if (!origins || origins.length === 0) return { source: table.source, row: firstRow + row };
  let o = origins[0]!;
  for (const next of origins) if (next.at <= row) o = next;
  return { source: o.source, row: o.firstRow + row - o.at, ...(o.sheet ? { sheet: o.sheet } : {}) };
}

/** Names rows (0-based) of a table's column in messages: see rowPlaces. */
export type RowNames = (column: string, rows: readonly number[]) => string;

/**
 * Rows (0-based) of a table's column as messages name them, by where they are in the input and
 * never by a value: the file (of a folder, the file within it) and its row, counted with the
 * header row when the file has one (`header(file)`: CSV, Excel) and from 1 without (Arrow,
 * Parquet), or on a sheet the column's cell: `data.csv row 5`, `data.csv rows 5, 9`,
 * `data.xlsx sheet "Data" cell D61`, `a.csv row 3, b.csv row 2`. `firstRow`: the table's first
 * row in its source, for a shard that lists no origins. A table without a source (a column
 * alone) names rows only: `row 5`.
 */
export function rowPlaces(
  table: Pick<EncodedTable, 'source' | 'origins' | 'columns'>,
  column: string,
  rows: readonly number[],
  header: (source: string) => boolean,
  firstRow = 0,
): string {
  const index = table.columns.findIndex((c) => c.name === column);
  const runs: { where: string; noun: string; at: string[] }[] = [];
  for (const row of rows) {
    const o = originOf(table, row, firstRow);
    const file = basename(o.source);
    // A sheet's rows are named by their cell, the row number on the sheet.
    const letter = o.sheet?.letters[index];
    const where = o.sheet && letter ? onSheet(file, o.sheet) : file;
    const noun = o.sheet && letter ? 'cell' : 'row';
    const at = o.sheet && letter ? `${letter}${o.row + 2}` : String(o.row + (header(o.source) ? 2 : 1));
    const last = runs.at(-1);
    if (last && last.where === where && last.noun === noun) last.at.push(at);
    else runs.push({ where, noun, at: [at] });
  }
  return runs
    .map(
      (r) =>
        `${r.where === '' ? '' : `${r.where} `}${r.noun}${r.at.length > 1 ? 's' : ''} ${r.at.join(', ')}`,
    )
    .join(', ');
}

/** Rows of a column no table places (a column alone): counted as in a CSV file, after its header. */
export const columnRows: RowNames = (column, rows) =>
  rowPlaces({ source: '', columns: [] }, column, rows, () => true);

/**
 * The origins of rows [from, from + rows) of a table whose rows `origins` place, numbered
 * from `from`: the origins of a slice of it.
 */
export function originsWithin(origins: readonly RowOrigin[], from: number, rows: number): RowOrigin[] {
  const out: RowOrigin[] = [];
  for (const [i, o] of origins.entries()) {
    const end = origins[i + 1]?.at ?? Number.POSITIVE_INFINITY;
    if (end <= from || o.at >= from + rows) continue;
    const skipped = Math.max(0, from - o.at);
    out.push({ ...o, at: o.at + skipped - from, firstRow: o.firstRow + skipped });
  }
  return out;
}

/** The origins of tables put one after another (a table without origins: its source's rows from the first). */
function joinedOrigins(tables: readonly EncodedTable[]): RowOrigin[] {
  const out: RowOrigin[] = [];
  let at = 0;
  for (const t of tables) {
    const own = t.origins && t.origins.length > 0 ? t.origins : [{ source: t.source, at: 0, firstRow: 0 }];
    for (const o of own) {
      const last = out.at(-1);
      // A run that goes on where the one before stops (the next shard of one file) adds none.
      const continues =
        last !== undefined &&
        last.source === o.source &&
        last.sheet?.name === o.sheet?.name &&
        last.firstRow + (at + o.at - last.at) === o.firstRow;
      if (!continues) out.push({ ...o, at: at + o.at });
    }
    at += t.rowCount;
  }
  return out;
}

/** A column of a released table: dictionary-encoded strings, or plain numbers. */
export type OutputColumn =
  | {
      readonly name: string;
      readonly kind: 'dictionary';
      readonly dictionary: string[];
      readonly codes: Int32Array;
    }
  | { readonly name: string; readonly kind: 'number'; readonly values: Float64Array }
  /** Text as the rows' UTF-8 bytes (src/data/raw.ts), written as it is: a plain Utf8 column, not a dictionary. */
  | { readonly name: string; readonly kind: 'utf8'; readonly values: RawValues };

/**
 * The missing value: an empty cell (or one of spaces only; an Arrow null reads as empty). With
 * `format.emptyCells: "value"` it is a value of its own, which every hierarchy generalizes to
 * itself up to the top `*` unless the hierarchy file lists it.
 */
export function isMissing(value: string): boolean {
  return value.trim() === '';
}

/**
 * How many rows hold each code of a column. (Indexed loops here and in other hot paths:
 * V8 runs for-of over a typed array several times slower.)
 */
export function codeCounts(column: EncodedColumn): Int32Array {
  return countCodes(column.codes, column.dictionary.length);
}

/** How many of `codes` (each in [0, domain)) hold each value. */
export function countCodes(codes: Int32Array, domain: number): Int32Array {
  const counts = new Int32Array(domain);
  for (let r = 0; r < codes.length; r++) counts[codes[r]!]!++;
  return counts;
}

/** 1 for each code some row holds. */
export function presentCodes(column: EncodedColumn): Uint8Array {
  const size = column.dictionary.length;
  const present = new Uint8Array(size);
  const { codes } = column;
  // Done once every code is seen (a small dictionary's often are within the first rows).
  for (let r = 0, seen = 0; r < codes.length && seen < size; r++) {
    const c = codes[r]!;
    if (present[c] === 0) {
      present[c] = 1;
      seen++;
    }
  }
  return present;
}

export function columnByName(table: EncodedTable, name: string): EncodedColumn | undefined {
  return table.columns.find((c) => c.name === name);
}

/**
 * Keeps only the dictionary entries the codes use, renumbered in order of first use: a
 * released dictionary must not list values of rows that were suppressed or removed.
 */
export function compactDictionary(
  name: string,
  dictionary: readonly string[],
  codes: Int32Array,
  /** Where the renumbered codes go (`codes` itself renumbers in place); a new array by default. */
  out: Int32Array = new Int32Array(codes.length),
): OutputColumn & { kind: 'dictionary' } {
  const n = codes.length;
  const remap = new Int32Array(dictionary.length).fill(-1);
  const used: string[] = [];
  let j = 0;
  // No test for unseen codes once every code is seen.
  for (; j < n && used.length < dictionary.length; j++) {
    const c = codes[j]!;
    let x = remap[c]!;
    if (x < 0) {
      x = remap[c] = used.length;
      used.push(dictionary[c]!);
    }
    out[j] = x;
  }
  for (; j < n; j++) out[j] = remap[codes[j]!]!;
  return { name, kind: 'dictionary', dictionary: used, codes: out };
}

/**
 * Pieces of one column, each coded against its own dictionary, concatenated and coded against
 * one dictionary: the pieces' values in order of first appearance.
 */
export function unionOfDictionaries(
  total: number,
  pieces: readonly { readonly dictionary: readonly string[]; readonly codes: Int32Array }[],
): { dictionary: string[]; codes: Int32Array } {
  const { dictionary, remaps } = unionRemaps(pieces);
  const codes = new Int32Array(total);
  let at = 0;
  for (const [p, piece] of pieces.entries()) {
    const remap = remaps[p]!;
    for (let i = 0; i < piece.codes.length; i++) codes[at + i] = remap[piece.codes[i]!]!;
    at += piece.codes.length;
  }
  return { dictionary, codes };
}

/** The pieces' dictionaries as one, values in order of first appearance, and each piece's code map into it. */
function unionRemaps(pieces: readonly { readonly dictionary: readonly string[] }[]): {
  dictionary: string[];
  remaps: Int32Array[];
} {
  const index = new Map<string, number>();
  const dictionary: string[] = [];
  const remaps = pieces.map((piece) =>
    Int32Array.from(piece.dictionary, (v) => {
      let code = index.get(v);
      if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
      return code;
    }),
  );
  return { dictionary, remaps };
}

/** Codes in one of the widths Arrow dictionary indices come in. */
export type CodeArray = Int8Array | Int16Array | Int32Array;

/**
 * Pieces of one column, each coded against its own dictionary, joined, put in `order` (row j
 * is joined row `order[j]`) and coded against the values the rows use, in order of first use:
 * what unionOfDictionaries, the reordering and compactDictionary give one after the other, in
 * two passes over one array of the joined codes (as narrow as their values allow).
 */
export function shuffledUnion(
  name: string,
  pieces: readonly { readonly dictionary: readonly string[]; readonly codes: CodeArray }[],
  order: Int32Array,
): OutputColumn & { kind: 'dictionary' } {
  const { dictionary: values, remaps } = unionRemaps(pieces);
  const total = order.length;
  const joined =
    values.length <= 256
      ? new Uint8Array(total)
      : values.length <= 65536
        ? new Uint16Array(total)
        : new Int32Array(total);
  let at = 0;
  for (const [p, piece] of pieces.entries()) {
    if (at + piece.codes.length > total)
      throw new RangeError(`${name}: the pieces hold more rows than the order`);
    joinCodes(joined, at, piece.codes, remaps[p]!);
    at += piece.codes.length;
  }
  if (at !== total) throw new RangeError(`${name}: the pieces hold fewer rows than the order`);
  const renumber = new Int32Array(values.length).fill(-1);
  const used: string[] = [];
  const codes = new Int32Array(total);
  for (let j = 0; j < total; j++) {
    const c = joined[order[j]!]!;
    let x = renumber[c]!;
    if (x < 0) {
      x = renumber[c] = used.length;
      used.push(values[c]!);
    }
    codes[j] = x;
  }
  return { name, kind: 'dictionary', dictionary: used, codes };
}

function joinCodes(
  joined: Uint8Array | Uint16Array | Int32Array,
  at: number,
  codes: CodeArray,
  remap: Int32Array,
): void {
  for (let r = 0; r < codes.length; r++) joined[at + r] = remap[codes[r]!]!;
}

/** Tables with the same columns, one after another, as one table (dictionaries merged). */
export function concatTables(tables: readonly EncodedTable[]): EncodedTable {
  const first = tables[0]!;
  if (tables.length === 1) return first;
  const rowCount = tables.reduce((n, t) => n + t.rowCount, 0);
  return {
    ...first,
    rowCount,
    origins: joinedOrigins(tables),
    columns: first.columns.map((c, i) => ({
      name: c.name,
      ...unionOfDictionaries(
        rowCount,
        tables.map((t) => t.columns[i]!),
      ),
    })),
  };
}
