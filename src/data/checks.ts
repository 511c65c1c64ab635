/**
 * Checks of an input table against its spec that need the table: a header that matches no
 * attribute (a file without a header row, or the wrong delimiter), empty cells in a
 * quasi-identifier, and a numeric attribute's values that are not numbers. Messages name rows
 * and columns, never a cell's value.
 */
import { basename } from 'node:path';
import { InputError } from '../errors.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';
import { isNumber } from '../util/numbers.ts';
import { delimiterName } from './csv.ts';
import { formatOf, type InputFormat } from './read.ts';
import {
  type EncodedColumn,
  type EncodedTable,
  isMissing,
  onSheet,
  presentCodes,
  type RowNames,
  rowPlaces,
} from './table.ts';

/**
 * Fails when no attribute of the spec is a column of the table. The column names are not
 * listed: when the file has no header row, its "names" are the first row's values.
 */
export function checkHeader(spec: ReleaseSpec, table: EncodedTable): void {
  const names = new Set([...table.columns.map((c) => c.name), ...(table.omitted ?? [])]);
  if (spec.attributes.some((a) => names.has(a.name))) return;
  const file = basename(table.source);
  const csv = (spec.format.type ?? formatOf(spec.input)) === 'csv';
  if (csv && names.size === 1) {
    throw new InputError(
      'E_CSV_DELIMITER',
      `${file} row 1: the header is a single column when split on ${delimiterName(table.delimiter)}, ` +
        `and it names none of the spec's ${spec.attributes.length} attributes`,
      'set "format": { "delimiter": … } to the delimiter the file uses (or leave it out to detect it), ' +
        'and make sure the first row holds the column names',
    );
  }
  // A sheet's header may be below row 1 (the first shard's first row is the one after it); the
  // table may be on another of the workbook's sheets.
  const first = table.origins?.[0];
  const sheet = first?.sheet;
  const where = sheet
    ? `${onSheet(basename(first.source), sheet)} row ${first.firstRow + 1}`
    : `${file} row 1`;
  const alike = lookAlike(
    spec.attributes.map((a) => a.name),
    names,
  );
  throw new InputError(
    'E_INPUT_HEADER',
    `${where}: none of the ${names.size} column names is an attribute of ${basename(spec.file)}`,
    alike === 'blanks'
      ? "the header's names have blanks around them (\" age \"), the spec's not: remove the blanks from the header, or write them into the spec's names"
      : alike !== undefined
        ? LOOK_ALIKE_HINT[alike]
        : sheet
          ? `${sheet.elsewhere ? `${sheet.elsewhere}; or ` : ''}make the sheet's header row (its first row with a value, below any title) hold the column names the spec lists under attributes`
          : 'the first row must hold the column names the spec lists under attributes; add a header row if the file has none',
  );
}

/** How a spec's name and a header's differ while looking the same on screen (lookAlike). */
export type LookAlike = 'blanks' | 'case' | 'unicode';

/**
 * How one of `attributes` the input lacks is one of its column `names` all the same: but for
 * blanks around either, for letter case (`Zip`, `zip`), or for Unicode normalization (`â` as
 * one character or as `a` and a combining accent, which look identical); undefined if none is.
 */
export function lookAlike(attributes: readonly string[], names: ReadonlySet<string>): LookAlike | undefined {
  const lacking = attributes.filter((a) => !names.has(a));
  const as = (f: (n: string) => string) => {
    const seen = new Set([...names].map(f));
    return lacking.some((a) => seen.has(f(a)));
  };
  if (as((n) => n.trim())) return 'blanks';
  if (as((n) => n.normalize('NFC'))) return 'unicode';
  if (as((n) => n.normalize('NFC').toLowerCase())) return 'case';
  return undefined;
}

/** What to do about a lookAlike name, quoting neither name. */
export const LOOK_ALIKE_HINT: Record<LookAlike, string> = {
  blanks:
    'the header names it with blanks around it (" age "), the spec without, or the other way round: remove the blanks from the header, or write them into the spec',
  case: "the header names it with other capital letters: write the spec's name with the header's capitals (names are matched exactly)",
  unicode:
    'the header names it with the same letters encoded differently (an accented letter as one character in one, as a letter and a combining accent in the other): retype the name in the spec, or save both files with composed (NFC) characters',
};

/**
 * With `format.emptyCells: "error"` (the default), fails on the first empty cell of a
 * quasi-identifier (`firstRow`: the table's first row in the input, when it is a shard). With `"value"`, empty is the missing value, a value of its own (every
 * hierarchy keeps it up to the top unless its file lists it).
 */
export function checkEmptyCells(spec: ReleaseSpec, table: EncodedTable, firstRow = 0): void {
  if (spec.format.emptyCells === 'value') return;
  const rows = inputRows(spec, table, firstRow);
  for (const a of spec.attributes) {
    if (a.type !== 'quasi-identifying') continue;
    const column = table.columns.find((c) => c.name === a.name);
    if (!column) continue;
    const empty = new Uint8Array(column.dictionary.length);
    let any = false;
    for (let code = 0; code < column.dictionary.length; code++) {
      if (isMissing(column.dictionary[code]!)) {
        empty[code] = 1;
        any = true;
      }
    }
    if (!any) continue;
    const row = column.codes.findIndex((c) => empty[c] === 1);
    if (row < 0) continue;
    throw new InputError(
      'E_INPUT_EMPTY_CELL',
      `${rows(a.name, [row])}, column "${a.name}": the cell is empty ` +
        '(a quasi-identifier needs a value in every row)',
      `${fillHint(a)}, or set "format": { "emptyCells": "value" } to treat ` +
        'an empty cell as the missing value, a value of its own that stays missing up to the top of its hierarchy',
    );
  }
}

/**
 * How to fill in an empty cell so that the column's hierarchy takes it: a placeholder such as "?"
 * is refused by an intervals or date builder (and by Mondrian's numeric scale), and a groups
 * builder or a file must list it.
 */
function fillHint(a: ReleaseSpec['attributes'][number]): string {
  const h = a.hierarchy;
  if (h?.kind === 'intervals' || (!h && a.scale === 'numeric'))
    return 'fill in the missing values with numbers (an intervals builder refuses a text such as "?")';
  if (h?.kind === 'date') return `fill in the missing values with dates in the format ${h.format}`;
  if (h?.kind === 'groups') return 'fill in the missing values (e.g. with "?", added as a key of groups[0])';
  if (h?.kind === 'file')
    return 'fill in the missing values with values the hierarchy file lists (e.g. "?", given a row of its own)';
  return 'fill in the missing values (e.g. with "?")';
}

/**
 * How messages name the rows of a table read as `format`, else as its files' extensions say
 * (rowPlaces; `firstRow`: its first row in its source, when it lists no origins): CSV and
 * Excel count their header row, Arrow and Parquet rows from 1.
 */
export function tableRows(table: EncodedTable, format?: InputFormat, firstRow = 0): RowNames {
  const header = (source: string) => {
    const read = format ?? formatOf(source);
    return read === 'csv' || read === 'xlsx';
  };
  return (column, rows) => rowPlaces(table, column, rows, header, firstRow);
}

/**
 * How messages name the rows of `table`, the spec's input or a part of it: what the input
 * checks, hierarchies and methods name a row holding a value they refuse with.
 */
export function inputRows(spec: ReleaseSpec, table: EncodedTable, firstRow = 0): RowNames {
  return tableRows(table, spec.format.type, firstRow);
}

/**
 * A column of an attribute with `"scale": "numeric"` holds numbers, or the missing value (an
 * empty cell, with `emptyCells: "value"`): the first row holding anything else is named (as
 * `rows` names it), never its value. `hint` says what the method lets the user do instead.
 * @throws InputError E_INPUT_NUMERIC
 */
export function checkNumbers(column: EncodedColumn, rows: RowNames, hint: string): void {
  const present = presentCodes(column);
  const bad = column.dictionary.findIndex((v, c) => present[c] === 1 && !isNumber(v) && !isMissing(v));
  if (bad < 0) return;
  throw new InputError(
    'E_INPUT_NUMERIC',
    `${rows(column.name, [column.codes.indexOf(bad)])}, column '${column.name}': not a number, but the attribute is numeric`,
    hint,
  );
}
