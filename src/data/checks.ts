/**
 * Checks of an input table against its spec that need the table: a header that matches no
 * attribute (a file without a header row, or the wrong delimiter), empty cells in a
 * quasi-identifier, and a numeric attribute's values that are not numbers. Messages name rows
 * and columns, never a cell's value.
 */
import { basename } from 'node:path';
import { InputError } from '../errors.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';
import { shownName } from '../util/limits.ts';
import { delimiterName } from './csv.ts';
import { formatOf } from './read.ts';
import {
  type EncodedColumn,
  type EncodedTable,
  isMissing,
  isNumber,
  originOf,
  presentCodes,
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
  throw new InputError(
    'E_INPUT_HEADER',
    `${file} row 1: none of the ${names.size} column names is an attribute of ${basename(spec.file)}`,
    blanksAround(
      spec.attributes.map((a) => a.name),
      names,
    )
      ? "the header's names have blanks around them (\" age \"), the spec's not: remove the blanks from the header, or write them into the spec's names"
      : 'the first row must hold the column names the spec lists under attributes; add a header row if the file has none',
  );
}

/** Whether one of `attributes` the input lacks is one of its column `names` but for blanks around either. */
export function blanksAround(attributes: readonly string[], names: ReadonlySet<string>): boolean {
  const trimmed = new Set([...names].map((n) => n.trim()));
  return attributes.some((a) => !names.has(a) && trimmed.has(a.trim()));
}

/**
 * With `format.emptyCells: "error"` (the default), fails on the first empty cell of a
 * quasi-identifier (`firstRow`: the table's first row in the input, when it is a shard). With `"value"`, empty is the missing value, a value of its own (every
 * hierarchy keeps it up to the top unless its file lists it).
 */
export function checkEmptyCells(spec: ReleaseSpec, table: EncodedTable, firstRow = 0): void {
  if (spec.format.emptyCells === 'value') return;
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
    const { source, place } = cellPlace(spec, table, column, row, firstRow);
    throw new InputError(
      'E_INPUT_EMPTY_CELL',
      `${source} ${place}, column "${a.name}": the cell is empty ` +
        '(a quasi-identifier needs a value in every row)',
      'fill in the missing values (e.g. with "?"), or set "format": { "emptyCells": "value" } to treat ' +
        'an empty cell as the missing value, a value of its own that stays missing up to the top of its hierarchy',
    );
  }
}

/**
 * Where a row of a column sits, for a message: the file's name and `row 12` (CSV and Excel
 * count their header row), or a sheet's cell.
 */
function cellPlace(
  spec: ReleaseSpec,
  table: EncodedTable,
  column: EncodedColumn,
  row: number,
  firstRow = 0,
): { source: string; place: string } {
  const format = spec.format.type ?? formatOf(spec.input);
  const header = format === 'csv' || format === 'xlsx' ? 1 : 0;
  const at = originOf(table, row, firstRow);
  // A sheet's rows are named by their cell, the row number on the sheet.
  const place = at.sheet
    ? `sheet "${shownName(at.sheet.name)}" cell ${at.sheet.letters[table.columns.indexOf(column)]}${at.row + 2}`
    : `row ${at.row + 1 + header}`;
  return { source: basename(at.source), place };
}

/**
 * A column of an attribute with `"scale": "numeric"` holds numbers, or the missing value (an
 * empty cell, with `emptyCells: "value"`): the first row holding anything else is named, never
 * its value. `hint` says what the method lets the user do instead.
 * @throws InputError E_INPUT_NUMERIC
 */
export function checkNumbers(
  spec: ReleaseSpec,
  table: EncodedTable,
  column: EncodedColumn,
  hint: string,
): void {
  const present = presentCodes(column);
  const bad = column.dictionary.findIndex((v, c) => present[c] === 1 && !isNumber(v) && !isMissing(v));
  if (bad < 0) return;
  const { source, place } = cellPlace(spec, table, column, column.codes.indexOf(bad), column.firstRow);
  throw new InputError(
    'E_INPUT_NUMERIC',
    `${source} column '${column.name}' ${place}: not a number, but the attribute is numeric`,
    hint,
  );
}
