/**
 * A hierarchy file's cells, read as the table reader reads CSV (its line ends, quoting,
 * encoding checks and messages), without a header row. Both the hierarchy builder
 * (src/hierarchy/) and the verifier's own reading of hierarchies take their rows from here.
 */
import { closeSync, statSync } from 'node:fs';
import { basename } from 'node:path';
import { HierarchyError, InputError } from '../errors.ts';
import { quoteField, readCsv } from './csv.ts';
import { openInput, readAt } from './input.ts';

/**
 * A hierarchy file's delimiter: the first of these its first line holds outside quotes (a `;`
 * file's labels may hold commas, as ARX's files do).
 */
const HIERARCHY_DELIMITERS = [';', '\t', ',', '|'] as const;

/** The ARX layout, for hints. */
export const HIERARCHY_LAYOUT = 'value;level1;…;*';

/**
 * The rows of hierarchy file `path` (`name` names it in messages), `[value, level1, …]`, every
 * row as long as the first. A UTF-8 byte order mark is dropped; lines end with LF, CR LF or CR
 * alone; quoted fields are unquoted; empty rows after the last are not rows, and a blank line
 * before or between rows is refused (a table's between rows is).
 * @throws HierarchyError E_HIERARCHY_MISSING, E_HIERARCHY_EMPTY, E_HIERARCHY_RAGGED, or the
 *   table reader's codes (E_INPUT_ENCODING, E_CSV_LINE_ENDS, E_CSV_QUOTE, …): every message names
 *   the file, a row and a level, never a value.
 */
export function readHierarchyCells(path: string, name = basename(path)): string[][] {
  let folder: boolean;
  try {
    folder = statSync(path).isDirectory();
  } catch {
    throw new HierarchyError(
      'E_HIERARCHY_MISSING',
      `${name}: hierarchy file not found (${path})`,
      'check the path',
    );
  }
  if (folder)
    throw new HierarchyError(
      'E_HIERARCHY_MISSING',
      `${name}: is a folder, not a hierarchy file (${path})`,
      "name the hierarchy's CSV file (value;level1;…;*)",
    );
  let columns: { dictionary: string[]; codes: Int32Array }[];
  let rowCount: number;
  try {
    ({ columns, rowCount } = readCsv(path, {
      name,
      firstOf: HIERARCHY_DELIMITERS,
      headerless: {
        field: (c) => (c === 0 ? 'the value (column 1)' : `level ${c} (column ${c + 1})`),
        count: (n) => `${n} ${n === 1 ? 'level' : 'levels'}`,
      },
    }));
  } catch (e) {
    // Without a header row a blank first line is a row of one empty level, and the next row is
    // then "ragged": the blank line is the error, as one between rows is.
    if (e instanceof InputError && e.code === 'E_CSV_RAGGED' && firstLineEmpty(path)) throw blankLine(name);
    throw e instanceof InputError ? asHierarchyError(e, name) : e;
  }
  const rows: string[][] = [];
  for (let r = 0; r < rowCount; r++) rows.push(columns.map((c) => c.dictionary[c.codes[r]!]!));
  // A file of blank lines reads as its first line alone (the empty rows after it are dropped).
  if (rows.length === 1 && rows[0]!.every((cell) => cell.trim() === '')) throw empty(name);
  return rows;
}

/**
 * The text of a hierarchy file of `rows` (`value;level1;…;*`, LF line ends) that
 * `readHierarchyCells` reads back as these rows: a cell holding `;`, a quote or a line break is
 * quoted (RFC 4180), as is a first cell starting with U+FEFF (read as a byte order mark).
 */
export function formatHierarchyCells(rows: readonly (readonly string[])[]): string {
  const cell = (text: string, first: boolean) =>
    first && text.startsWith('\uFEFF') && !text.includes('"') ? `"${text}"` : quoteField(text, ';');
  return rows.map((row, r) => `${row.map((text, c) => cell(text, r === 0 && c === 0)).join(';')}\n`).join('');
}

/** The table reader's error for a hierarchy file: its own code where a hierarchy has one. */
function asHierarchyError(e: InputError, name: string): HierarchyError {
  switch (e.code) {
    case 'E_INPUT_EMPTY':
      return empty(name);
    case 'E_INPUT_MISSING':
      return new HierarchyError('E_HIERARCHY_MISSING', e.message, e.hint);
    case 'E_CSV_RAGGED':
      return new HierarchyError(
        'E_HIERARCHY_RAGGED',
        e.message,
        e.message.endsWith('the line is empty')
          ? BLANK_LINES
          : `every row of a hierarchy must have the same number of levels (${HIERARCHY_LAYOUT}); ${e.hint}`,
      );
    default:
      return new HierarchyError(e.code, e.message, e.hint);
  }
}

const BLANK_LINES = `a hierarchy file may hold no blank line before or between its rows: remove it (one row per value: ${HIERARCHY_LAYOUT})`;

/** A blank first line, worded as the table reader words one between rows. */
function blankLine(name: string): HierarchyError {
  return new HierarchyError('E_HIERARCHY_RAGGED', `${name} row 1: the line is empty`, BLANK_LINES);
}

/** Whether the file's first line (after a UTF-8 byte order mark) is empty: it starts with a line break. */
function firstLineEmpty(path: string): boolean {
  const input = openInput(path);
  try {
    const head = new Uint8Array(4);
    const n = readAt(path, input, head, 0);
    const at = n >= 3 && head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf ? 3 : 0;
    return at < n && (head[at] === 0x0a || head[at] === 0x0d);
  } finally {
    closeSync(input.fd);
  }
}

function empty(name: string): HierarchyError {
  return new HierarchyError(
    'E_HIERARCHY_EMPTY',
    `${name}: hierarchy file is empty`,
    `one row per value: ${HIERARCHY_LAYOUT}`,
  );
}
