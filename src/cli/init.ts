/**
 * `ppdp init <table> [--sheet <name|position>] [--out release.json]`: drafts a release spec from a table. Each column's
 * role and hierarchy are guessed from its header and values (see INIT_HELP); the draft asks
 * for k = 5 (at most the table's rows) with at most 2 % suppressed rows, is validated like any spec, and is a starting
 * point to review, not a decision.
 */
import { existsSync, statSync } from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import {
  commaNumbers,
  DECIMAL_POINT,
  isNumberOrDecimalComma,
  pointsOf,
  withDecimalPoint,
} from '../data/decimal.ts';
import { formatOf, namesQuotable, readTable } from '../data/read.ts';
import { type EncodedColumn, type EncodedTable, inputName, isMissing, presentCodes } from '../data/table.ts';
import { workbookSheets } from '../data/xlsx.ts';
import { PpdpError } from '../errors.ts';
import { dateGrid } from '../hierarchy/builders.ts';
import { checkOut, checkReplace, writeAtomically } from '../pipeline/out-path.ts';
import { parseSpec, sheetSetting } from '../release-spec/spec.ts';
import { counted, inWords } from '../util/format.ts';
import { shownName } from '../util/limits.ts';
import { isNumber } from '../util/numbers.ts';
import { commandArgs } from './args.ts';
import { printLattice } from './init-lattice.ts';

export const INIT_HELP = `Usage: ppdp init <table> [--sheet <name|position>] [--out <release.json>] [--force]

Drafts a release spec for a table (CSV, Arrow IPC, Parquet or an Excel workbook's sheet, or a
folder of such files): every column gets a role and, for quasi-identifiers, a hierarchy
builder, guessed from its header and values:
  identifying        headers such as id, name, email, phone, ssn, address; e-mail addresses
                     and phone numbers whatever the header; text unique in every row
  sensitive          headers such as diagnosis, disease, condition, salary, income, wage
  quasi-identifying  dates (YYYY-MM-DD, YYYY/MM/DD, DD.MM.YYYY, DD/MM/YYYY, MM/DD/YYYY) with
                     { "date": … }; zip or postal codes (by header or shape) with
                     { "mask": "right" }; two-valued columns with { "groups": … }; numbers
                     with { "intervals": … }; geography (neighborhood, city, county, region,
                     district, …) and any other text with { "groups": … } (every value
                     under *: refine the groups)
  insensitive        only empty columns: a column is never left unprotected silently
A CSV or sheet whose header holds a number or a date is refused (it is then a record: the
file was exported without its header row), the columns named by position, not quoted.
A column of numbers beside texts such as NA, NULL, -, ? or unknown gets them as its "missing" list (read
as empty cells). Numbers written with decimal commas (3,75; 1.234,5) are drafted as numbers, with format.decimal ","
so that a release reads them as numbers (3.75, released with decimal points); a CSV whose
quoted fields hold line breaks gets format.lineBreaksInQuotes (read in one piece). When no
column looks sensitive, init suggests the numeric columns that may be an outcome to protect.
The draft asks for k-anonymity with k = 5 (k = the number of rows for a table of 2 to 4 rows,
the largest k it can meet; a table of one row can meet only k = 1, which bounds nothing: init
says so), at most 2 % suppressed rows, treats empty cells as values of their own
(format.emptyCells) when a quasi-identifier has any (or, in Arrow or Parquet, any column has a
null), and escapes CSV formulas (format.escapeFormulas)
when a column it releases holds text a spreadsheet would run as a formula (=cmd(), @SUM(…), …;
not plain negative numbers). Review every role before a release.
Last, init gives the lattice's size (the product of the quasi-identifiers' levels) and, past
what the optimal search enumerates, each column's factor in it and coarser hierarchies that
shrink it (docs/guide.md, "Wide tables").

Options:
  --sheet <name|position>  Excel: the sheet holding the table, by its name or its position
                           from 1 (a whole number), written into the draft as format.sheet
                           (default: the first visible worksheet; if it holds no rows or does
                           not look like a table — one column, or fewer than 5 rows, such as
                           a README — the first visible worksheet that does, written into
                           the draft by name)
  --out <file>             where to write the spec (default: release.json next to the table)
  --force                  overwrite --out if it exists (never the table, nor a file inside
                           a release folder)
  -h, --help               this help

Example:
  ppdp init examples/hospital/hospital.csv --out draft/release.json
`;

const IDENTIFYING = new Set([
  'id',
  'ids',
  'uuid',
  'guid',
  'name',
  'firstname',
  'lastname',
  'fullname',
  'surname',
  'email',
  'mail',
  'phone',
  'telephone',
  'ssn',
  'mrn',
  'passport',
  'address',
  'street',
]);
const SENSITIVE = new Set([
  'diagnosis',
  'diagnoses',
  'disease',
  'condition',
  'illness',
  'treatment',
  'medication',
  'salary',
  'income',
  'wage',
  'wages',
  'earnings',
]);
/** Headers naming a place: quasi-identifying, whatever their values look like. */
const GEOGRAPHY = new Set([
  'neighborhood',
  'neighbourhood',
  'city',
  'town',
  'village',
  'county',
  'region',
  'district',
  'borough',
  'suburb',
  'municipality',
  'province',
  'state',
  'country',
]);
const CODES = new Set(['zip', 'zipcode', 'postal', 'postcode', 'plz']);
const DATE_FORMATS = ['YYYY-MM-DD', 'YYYY/MM/DD', 'DD.MM.YYYY', 'DD/MM/YYYY', 'MM/DD/YYYY'];
/** Postal codes by shape: ZIP+4, UK and Canadian postcodes (digit codes: see isDigitCode). */
const POSTCODE_SHAPES = [
  /^\d{5}-\d{4}$/,
  /^[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}$/i,
  /^[A-Z]\d[A-Z] ?\d[A-Z]\d$/i,
];
/** Text columns with at most this many distinct values become grouped categories. */
const FEW = 20;

interface Guess {
  readonly attribute: Record<string, unknown>;
  readonly why: string;
  /** Numbers written with decimal commas: the reader takes them as text. */
  readonly decimalComma?: boolean;
  /** A numeric column with many values that may be an outcome to protect. */
  readonly outcome?: boolean;
}

export function initCommand(args: string[]): number {
  const parsed = commandArgs(
    'init',
    args,
    {
      out: { type: 'string' },
      sheet: { type: 'string' },
      force: { type: 'boolean', default: false },
    },
    {
      help: INIT_HELP,
      takes: 'exactly one table',
      synopsis: 'ppdp init <data.csv> [--sheet <name|position>] [--out release.json]',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  const data = resolve(positionals[0]!);
  const out = resolve(values.out ?? join(dirname(data), 'release.json'));
  // As given: resolved, s3://b/k would be a local folder named s3:.
  checkOut(values.out ?? out, [{ path: data, what: 'the table' }], 'file'); // --force replaces an earlier spec, never these
  checkReplace(out, 'init', values.force ?? false);
  // A whole number is a position, as in the spec, where a name is a string.
  const named =
    values.sheet === undefined
      ? undefined
      : sheetSetting(
          /^\d+$/.test(values.sheet) ? Number(values.sheet) : values.sheet,
          'ppdp init',
          '--sheet',
        );
  const chosen = tableSheet(data, named);
  const sheet = named ?? chosen?.sheet;
  // tableSheet has read the table it chose (not a folder's, nor another format's).
  // --sheet on a table without sheets is named as the option it is, not as the spec's format.sheet.
  const read = chosen?.table ?? readTable(data, { nulls: 'missing', sheet, sheetGiven: '--sheet' });
  checkHeaderNames(read);
  // Texts standing for a missing value in a column of numbers (NA, NULL, -) are read as empty
  // cells, as a release reads an attribute's missing texts: the column is drafted as numbers.
  const markers = missingMarkers(read);
  const table =
    markers.size > 0
      ? readTable(data, {
          nulls: 'missing',
          sheet,
          missing: new Map([...markers].map(([name, texts]) => [name, new Set(texts)])),
        })
      : read;
  // Decimal commas are drafted only for a file that writes no number with a decimal point (0.5):
  // in one that does, 1,2 is likely a list, and format.decimal "," would read its 2.375 as 2375.
  const typed = new Set(table.typed ?? []);
  const text = table.columns.filter((c) => !typed.has(c.name));
  const pointed = text.filter(writesDecimalPoints).map((c) => c.name);
  const commaLike = text.filter((c) => commaNumbers(presentValues(c))).map((c) => c.name);
  const decimalCommas = pointed.length === 0;
  const guesses = oneEntity(
    table.columns.map((c) => [c.name, guess(c, table.rowCount, decimalCommas)] as const),
  );
  const attributes = Object.fromEntries(
    guesses.map(([name, g]) => {
      const texts = markers.get(name);
      return [
        name,
        texts && g.attribute.type !== 'identifying' ? { ...g.attribute, missing: texts } : g.attribute,
      ];
    }),
  );
  if (!guesses.some(([, g]) => g.attribute.type === 'quasi-identifying')) {
    throw new PpdpError(
      'E_INIT_NO_QI',
      `${basename(data)}: no column looks like a quasi-identifier (every column is identifying, sensitive or empty)`,
      'write the spec by hand (docs/release-spec.md): mark the columns an attacker could link on as quasi-identifying',
    );
  }
  const inputPath = relative(dirname(out), data);
  const csv = formatOf(data) === 'csv';
  // format.emptyCells decides what an empty quasi-identifier cell is, and an Arrow or Parquet null
  // in any column (docs/release-spec.md): empty sensitive or insensitive cells of a CSV or sheet
  // are released as they are, and ask for no setting.
  const nullable = ['arrow', 'parquet'].includes(formatOf(data));
  const qi = new Set(
    guesses.filter(([, g]) => g.attribute.type === 'quasi-identifying').map(([name]) => name),
  );
  const withEmpty = table.columns
    .filter((c) => (nullable || qi.has(c.name)) && c.dictionary.some(isMissing))
    .map((c) => c.name);
  const anyMissing = withEmpty.length > 0;
  // Formula escaping costs a visible ' on negative numbers too: drafted only when the released
  // columns hold text a spreadsheet would run as a formula.
  const formulas = guesses
    .filter(([, g]) => g.attribute.type !== 'identifying')
    .flatMap(([name]) =>
      table.columns.find((c) => c.name === name)!.dictionary.some(isFormula) ? [name] : [],
    );
  const commas = guesses.filter(([, g]) => g.decimalComma).map(([name]) => name);
  // A CSV field holds a line break only quoted: such a file is read in one piece, never cut at
  // line breaks into ranges read side by side.
  const lineBreaks = csv
    ? table.columns.filter((c) => c.dictionary.some((v) => /[\r\n]/.test(v))).map((c) => c.name)
    : [];
  const format = {
    ...(csv ? { delimiter: table.delimiter } : {}),
    ...(sheet === undefined ? {} : { sheet }),
    ...(lineBreaks.length > 0 ? { lineBreaksInQuotes: true } : {}),
    ...(commas.length > 0 ? { decimal: ',' } : {}),
    ...(anyMissing ? { emptyCells: 'value' } : {}),
    ...(formulas.length > 0 ? { escapeFormulas: true } : {}),
  };
  const spec = {
    input: inputPath.startsWith('..') || isAbsolute(inputPath) ? data : inputPath,
    ...(Object.keys(format).length > 0 ? { format } : {}),
    attributes,
    privacy: [{ model: K_ANONYMITY.name, k: draftK(table.rowCount) }],
    method: { name: 'generalization', maxSuppression: 0.02 },
    seed: 1,
  };
  const draft = parseSpec(spec, out); // the draft must be a valid spec
  writeAtomically(out, `${JSON.stringify(spec, null, 2)}\n`);
  process.stdout.write(
    `${out}: drafted from ${basename(data)}${sheet === undefined ? '' : ` sheet ${JSON.stringify(sheet)}`} (${counted(table.rowCount, 'row')}); review the roles:\n`,
  );
  for (const [name, g] of guesses) process.stdout.write(`  ${name}: ${g.attribute.type} — ${g.why}\n`);
  if (chosen?.note) process.stdout.write(`  ${chosen.note}\n`);
  const small = smallTableNote(table.rowCount);
  if (small) process.stdout.write(`  ${small}\n`);
  const start = sheetStart(table);
  if (start) process.stdout.write(`  ${start}\n`);
  if (commas.length > 0) {
    process.stdout.write(
      `  format.decimal: "," — ${inWords(commas)} ${commas.length === 1 ? 'holds numbers' : 'hold numbers'} with decimal commas (3,75): a release reads them as numbers (3.75), released with decimal points\n`,
    );
  }
  const lists = commaLike.filter((name) => !pointed.includes(name));
  if (!decimalCommas && lists.length > 0) {
    process.stdout.write(
      `  format.decimal: not set — ${inWords(lists)} ${lists.length === 1 ? 'holds' : 'hold'} values like 1,2, but ${inWords(pointed)} ${pointed.length === 1 ? 'writes' : 'write'} numbers with decimal points (0.5): ${lists.length === 1 ? 'it looks like a list' : 'they look like lists'}, not numbers, and ${lists.length === 1 ? 'is' : 'are'} drafted as text (if the commas are decimal commas, write every number of the file with them, then set "format": { "decimal": "," })\n`,
    );
  }
  for (const [name, texts] of markers) {
    process.stdout.write(
      `  ${name}.missing: ${JSON.stringify(texts)} — numbers beside these texts: a release reads them as the missing value, an empty cell\n`,
    );
  }
  if (anyMissing) {
    process.stdout.write(
      `  format.emptyCells: "value" — ${inWords(withEmpty, 5)} ${withEmpty.length === 1 ? 'has' : 'have'} empty cells: a release keeps them as the missing value, up to the top of each hierarchy (fill them in, or remove rows that are empty, if they are mistakes)\n`,
    );
  }
  if (lineBreaks.length > 0) {
    process.stdout.write(
      `  format.lineBreaksInQuotes: true — ${inWords(lineBreaks)} ${lineBreaks.length === 1 ? 'holds' : 'hold'} quoted line breaks: a release reads the file in one piece\n`,
    );
  }
  if (!guesses.some(([, g]) => g.attribute.type === 'sensitive')) {
    const outcomes = guesses.filter(([, g]) => g.outcome).map(([name]) => name);
    process.stdout.write(
      `  no column looks sensitive${
        outcomes.length > 0
          ? `: if ${inWords(outcomes, 10, ' or ')} is an outcome to protect (a wage, a measurement), mark it`
          : ': mark the attribute to protect'
      } "type": "sensitive" and add a model for it, e.g. { "model": "t-closeness", "attribute": …, "t": 0.2 }\n`,
    );
  }
  if (formulas.length > 0) {
    process.stdout.write(
      `  format.escapeFormulas: true — ${inWords(formulas)} ${formulas.length === 1 ? 'holds' : 'hold'} text a spreadsheet would run as a formula\n`,
    );
  }
  printLattice(draft, table);
  return 0;
}

/** The draft's k: a sheet of fewer rows is notes, not a table (tableSheet). */
const DRAFT_K = 5;

/**
 * The k drafted for a table of `rows`: DRAFT_K, or every row when there are fewer (k above the
 * row count is refused by a release). One row meets only k = 1, which bounds nothing.
 * Rows suffice with an entity column too (where k counts persons): init proposes one only for
 * more than FEW distinct ids (looksLikeEntity), so for more persons than DRAFT_K.
 */
function draftK(rows: number): number {
  return Math.max(1, Math.min(DRAFT_K, rows));
}

/** What init says when the table has fewer rows than DRAFT_K: the k it drafted instead, and why. */
function smallTableNote(rows: number): string | undefined {
  if (rows >= DRAFT_K) return undefined;
  const k = draftK(rows);
  if (k >= 2)
    return `k: ${k} — the table has ${counted(rows, 'row')}, fewer than the k = ${DRAFT_K} drafted for a larger one: a release needs k ≤ the number of rows`;
  return `k: 1 — the table has ${counted(rows, 'row')}: no k of 2 or more can be met, and k = 1 bounds nothing (the release cautions that no privacy model bounds identity disclosure); a release protects someone only with at least 2 rows and k ≥ 2`;
}

/**
 * The sheet of an Excel workbook init drafts from. Without --sheet, the first visible worksheet,
 * unless it holds no rows or does not look like a table (notes, a README: one column, or fewer
 * rows than the draft's k, which no release of it could meet) and another visible worksheet
 * does: that one, by name, written into the draft as format.sheet. The note says which sheet
 * was read and names the others (with --sheet, when the sheet does not look like a table).
 * Undefined for another input.
 */
function tableSheet(
  data: string,
  named: string | number | undefined,
): { sheet?: string; table: EncodedTable; note?: string } | undefined {
  if (formatOf(data) !== 'xlsx' || !existsSync(data) || !statSync(data).isFile()) return undefined;
  const notes = (t: EncodedTable) => t.columns.length < 2 || t.rowCount < DRAFT_K;
  const shape = (t: EncodedTable) => {
    const [c, r] = [t.columns.length, t.rowCount];
    return `${counted(c, 'column')}, ${counted(r, 'row')}`;
  };
  if (named !== undefined) {
    // The sheet asked for is read; if it does not look like a table, the note names the others.
    const table = readTable(data, { nulls: 'missing', sheet: named, sheetGiven: '--sheet' });
    const sheets = workbookSheets(data);
    const name = table.origins?.[0]?.sheet?.name ?? '';
    const others = sheets.filter((s) => s.name !== name && s.cells);
    if (!notes(table) || others.length === 0) return { table };
    const list = others.map((s) => `"${shownName(s.name)}"${s.hidden ? ' (hidden)' : ''}`).join(', ');
    const hidden = sheets.find((s) => s.name === name)?.hidden ? ' (hidden)' : '';
    return {
      table,
      note: `sheet "${shownName(name)}"${hidden} does not look like a table (${shape(table)}); the workbook's other sheets: ${list} (--sheet reads another)`,
    };
  }
  // The first visible worksheet, read first: a file that is no workbook is refused as a release refuses it.
  let firstTable: EncodedTable | undefined;
  let refusal: PpdpError | undefined;
  try {
    firstTable = readTable(data, { nulls: 'missing' });
  } catch (err) {
    // A sheet without rows: the table is likely on another.
    if (!(err instanceof PpdpError) || !['E_INPUT_EMPTY', 'E_INPUT_NO_ROWS'].includes(err.code)) throw err;
    refusal = err;
  }
  const sheets = workbookSheets(data).filter((s) => s.cells && !s.hidden);
  if (sheets.length < 2) {
    if (!firstTable) throw refusal;
    return { table: firstTable };
  }
  const [first, ...others] = sheets.map((s) => `"${shownName(s.name)}"`);
  const rest = `the workbook's other sheets: ${others.join(', ')} (--sheet reads another)`;
  if (firstTable && !notes(firstTable))
    return { table: firstTable, note: `sheet ${first} read, the first visible one; ${rest}` };
  const why = firstTable ? `does not look like a table (${shape(firstTable)})` : 'holds no rows';
  for (const s of sheets.slice(1)) {
    let table: EncodedTable;
    try {
      table = readTable(data, { nulls: 'missing', sheet: s.name });
    } catch (err) {
      if (err instanceof PpdpError) continue; // not a table either
      throw err;
    }
    if (notes(table)) continue;
    return {
      sheet: s.name,
      table,
      note: `format.sheet: "${shownName(s.name)}" — the first visible sheet, ${first}, ${why}: the draft reads this one (--sheet reads another)`,
    };
  }
  if (!firstTable) throw refusal;
  return { table: firstTable, note: `sheet ${first} read, the first visible one, though it ${why}; ${rest}` };
}

/** Where a sheet's table starts, when not at A1: its header row below a title, right of empty columns. */
function sheetStart(table: EncodedTable): string | undefined {
  const o = table.origins?.[0];
  const column = o?.sheet?.letters[0];
  if (!o?.sheet || !column) return undefined;
  const row = o.firstRow + 1;
  if (row === 1 && column === 'A') return undefined;
  if (row === 1) return `the table starts in column ${column}: the empty columns left of it are not read`;
  return column === 'A'
    ? `the table's header is row ${row}: the rows above it (empty, or a title) are not read`
    : `the table's header is at ${column}${row}: the rows above it (empty, or a title) and the empty columns left of it are not read`;
}

/**
 * Refuses a header row of cells (CSV, Excel) with a number or a date among its names: such a
 * row is a record (the file was exported without its header row), which would be drafted as
 * column names, echoed and released as a header. Names it by position, never by its text.
 */
function checkHeaderNames(table: EncodedTable): void {
  if (namesQuotable(table)) return; // an Arrow or Parquet schema's names
  const letters = table.origins?.[0]?.sheet?.letters;
  const odd = table.columns.flatMap((c, i) => {
    const kind = isNumberOrDecimalComma(c.name)
      ? 'a number'
      : DATE_FORMATS.some((f) =>
            isDateColumn({ name: c.name, dictionary: [c.name], codes: Int32Array.of(0) }, f),
          )
        ? 'a date'
        : undefined;
    return kind ? [{ at: letters?.[i] ?? String(i + 1), kind }] : [];
  });
  if (odd.length === 0) return;
  const list = (xs: string[]) => inWords(xs);
  const kinds = [...new Set(odd.map((o) => o.kind))];
  throw new PpdpError(
    'E_INIT_HEADER',
    `${inputName(table)}: the header's column${odd.length === 1 ? '' : 's'} ${list(odd.map((o) => o.at))} ${
      odd.length === 1 ? 'holds' : 'hold'
    } ${list(kinds)}, not ${odd.length === 1 ? 'a name' : 'names'}: the file seems to lack its header row (the row is not quoted here)`,
    'add a header row naming every column (the first row is read as the header), or rename the columns named by a number or a date',
  );
}

/**
 * Text starting with = + - @, tab or CR that is not a number (with a decimal point or comma):
 * a spreadsheet runs it as a formula.
 */
function isFormula(value: string): boolean {
  return /^[=+\-@\t\r]./s.test(value) && !Number.isFinite(Number(withDecimalPoint(value)));
}

/** Header words, lower case: `patient_id` → patient, id; `admissionDate` → admission, date. */
function words(header: string): string[] {
  return header
    .replace(/([a-z])([A-Z])/g, '$1 $2')
    .toLowerCase()
    .split(/[^a-z0-9]+/)
    .filter((w) => w !== '');
}

/**
 * Headers that name whom rows belong to: with repeating id-shaped values, the column is the
 * entity (several rows per person: orders, claims, visits), which the release counts and drops.
 */
const ENTITY_WORDS = new Set([
  'id',
  'ids',
  'uuid',
  'guid',
  'customer',
  'client',
  'patient',
  'person',
  'household',
  'member',
  'account',
  'user',
]);
/** An id's shape: one token of letters, digits and - _ . : / #. */
const ID_SHAPE = /^[A-Za-z0-9][A-Za-z0-9_\-.:/#]*$/;

/** Whether a column names whom rows belong to and repeats id-shaped values (more than FEW of them). */
function looksLikeEntity(column: EncodedColumn, header: string[], rows: number): boolean {
  if (!header.some((w) => ENTITY_WORDS.has(w))) return false;
  const present = presentCodes(column);
  // Ids as a release reads an entity column's: blanks around them dropped.
  const values = [...new Set(column.dictionary.filter((_, c) => present[c] === 1).map((v) => v.trim()))];
  return values.length > FEW && values.length < rows && values.every((v) => ID_SHAPE.test(v));
}

/** At most one entity column per spec: the first proposed; any other is identifying (dropped). */
function oneEntity<T extends readonly [string, Guess]>(guesses: T[]): T[] {
  const first = guesses.findIndex(([, g]) => g.attribute.type === 'entity');
  return guesses.map((x, i) =>
    i > first && first >= 0 && x[1].attribute.type === 'entity'
      ? ([
          x[0],
          { attribute: { type: 'identifying' }, why: `${x[1].why}; a spec has one entity column` },
        ] as unknown as T)
      : x,
  );
}

/**
 * `decimalCommas`: whether a value like 3,75 is a number (the file writes no number with a
 * decimal point), else text.
 */
function guess(column: EncodedColumn, rows: number, decimalCommas: boolean): Guess {
  const header = words(column.name);
  const joined = header.join('');
  if (looksLikeEntity(column, header, rows)) {
    return {
      attribute: { type: 'entity' },
      why: 'an id that repeats: several rows per person, so k counts persons (the column is not released)',
    };
  }
  if (header.some((w) => IDENTIFYING.has(w)) || IDENTIFYING.has(joined)) {
    return { attribute: { type: 'identifying' }, why: 'its header names a person or an identifier' };
  }
  const values = presentValues(column);
  // E-mail addresses name a person whatever the header says (`contact`): drafted as a
  // quasi-identifier they would be listed in the spec, and marked insensitive, published.
  if (values.length > 0 && values.every(isEmail)) return contactDetails('e-mail addresses');
  const decimalComma = decimalCommas && commaNumbers(values);
  const numeric = values.length > 0 && values.every(decimalCommas ? isNumberOrDecimalComma : isNumber);
  const comma = decimalComma ? { decimalComma } : {};
  if (header.some((w) => SENSITIVE.has(w))) {
    return { attribute: { type: 'sensitive' }, why: 'its header names something sensitive', ...comma };
  }
  const qi = (hierarchy: unknown, why: string): Guess => ({
    attribute: { type: 'quasi-identifying', hierarchy },
    why,
    ...comma,
  });
  const grouped = (why: string) => qi({ groups: [Object.fromEntries(values.map((v) => [v, '*']))] }, why);
  if (values.length === 0) return { attribute: { type: 'insensitive' }, why: 'it is empty' };
  const format = DATE_FORMATS.find((f) => isDateColumn(column, f));
  if (format) return qi({ date: format, levels: ['month', 'year', 'decade'] }, `dates (${format})`);
  if (header.some((w) => CODES.has(w)))
    return qi({ mask: 'right' }, 'a zip or postal code, masked from the right');
  if (values.every((v) => POSTCODE_SHAPES.some((p) => p.test(v.trim()))) || isDigitCode(values))
    return qi({ mask: 'right' }, 'shaped like postal codes, masked from the right');
  // Phone numbers too (`Telefon`, `mobile`); after dates and postal codes, which they resemble.
  if (values.every(isPhone)) return contactDetails('phone numbers');
  if (values.length === 2) return grouped('two values, grouped under * (not intervals)');
  if (header.some((w) => GEOGRAPHY.has(w)))
    return grouped(
      `a place (${counted(values.length, 'distinct value')}): an attacker can link on it; grouped (refine the groups)`,
    );
  if (numeric) {
    // Points are thousands' groups only in a column written with decimal commas: 40.119 kg is 40.119.
    const numbers = values.map((v) => Number(decimalComma ? withDecimalPoint(v) : v));
    return {
      ...qi(
        { intervals: intervalWidths(numbers) },
        `numbers${decimalComma ? ' with decimal commas' : ''}, grouped into intervals`,
      ),
      outcome: values.length > FEW,
    };
  }
  if (values.length <= FEW)
    return grouped(`${counted(values.length, 'distinct value')}, grouped (refine the groups)`);
  if (values.length === rows) {
    return { attribute: { type: 'identifying' }, why: 'a different value in every row' };
  }
  return grouped(
    `text with ${counted(values.length, 'distinct value')}: an attacker may know it, so it is quasi-identifying until you say otherwise; grouped (refine the groups, or mark it insensitive if no one could link on it)`,
  );
}

/** Texts that exports (R, pandas, SQL, spreadsheets) and people write for a missing value. */
const MISSING_TEXTS = new Set([
  'NA',
  'N/A',
  'n/a',
  'na',
  'NULL',
  'null',
  'None',
  'NaN',
  'nan',
  '#N/A',
  '-',
  '?',
  '.',
  'unknown',
  'Unknown',
  'UNKNOWN',
  'missing',
  'Missing',
  'MISSING',
]);

/**
 * By column, the missing-value texts of the columns that hold numbers and such texts only (in a
 * column of text, `NA` may be a value: North America).
 */
function missingMarkers(table: EncodedTable): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const column of table.columns) {
    const values = presentValues(column);
    const texts = values.filter((v) => MISSING_TEXTS.has(v.trim()));
    const rest = values.filter((v) => !MISSING_TEXTS.has(v.trim()));
    if (texts.length > 0 && rest.length > 0 && rest.every(isNumberOrDecimalComma))
      found.set(column.name, [...new Set(texts.map((v) => v.trim()))].sort());
  }
  return found;
}

/** The column's values that rows hold, the missing value aside. */
function presentValues(column: EncodedColumn): string[] {
  const present = presentCodes(column);
  return column.dictionary.filter((v, c) => present[c] === 1 && !isMissing(v));
}

/** A column of contact details: identifying (left out of the release), whatever its header. */
function contactDetails(what: string): Guess {
  return { attribute: { type: 'identifying' }, why: `its values are ${what}, which name a person` };
}

/** An e-mail address: one @ between a name and a dotted domain, no blanks. */
function isEmail(value: string): boolean {
  return /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/.test(value.trim());
}

/**
 * A phone number: 7 to 15 digits with the marks phone numbers are written with, starting with
 * + or ( or 0 or holding a blank, or grouped 3-3-4 (555-123-4567): not a date, an amount or a code.
 */
function isPhone(value: string): boolean {
  const v = value.trim();
  // A plain number (0.1234567, 01701234) is a number; +4917012345 is not one anyone writes.
  if (!/^[+(]?[\d\s()./-]+$/.test(v) || (Number.isFinite(Number(v)) && !v.startsWith('+'))) return false;
  const digits = v.replace(/\D/g, '').length;
  if (digits < 7 || digits > 15) return false;
  return /^[+(0]/.test(v) || /\s/.test(v) || /^\d{3}[-.]\d{3}[-.]\d{4}$/.test(v);
}

/** Digit strings of one length (3 to 6), some with a leading zero: codes, not numbers (01234). */
function isDigitCode(values: string[]): boolean {
  const length = values[0]!.length;
  return (
    length >= 3 &&
    length <= 6 &&
    values.every((v) => v.length === length && /^\d+$/.test(v)) &&
    values.some((v) => v.startsWith('0'))
  );
}

/** A column of numbers (with decimal commas or points) one of which has a decimal point (0.5, not 3.000). */
function writesDecimalPoints(column: EncodedColumn): boolean {
  const values = presentValues(column);
  return values.every(isNumberOrDecimalComma) && values.some((v) => pointsOf(v) === DECIMAL_POINT);
}

/** Whether every value parses as a date in `format` (the date builder's own parser decides). */
function isDateColumn(column: EncodedColumn, format: string): boolean {
  try {
    dateGrid(column, format, ['year']);
    return true;
  } catch {
    return false;
  }
}

/** Three nested widths from a round step near a twentieth of the range: 0–99 → 5, 10, 20. */
function intervalWidths(numbers: number[]): number[] {
  let min = Number.POSITIVE_INFINITY;
  let max = Number.NEGATIVE_INFINITY;
  for (const x of numbers) {
    min = Math.min(min, x);
    max = Math.max(max, x);
  }
  const target = (max - min) / 20;
  if (!(target > 0)) return [1, 2, 4];
  const exponent = Math.floor(Math.log10(target));
  // Each width read from its decimal text (`2e-5`): a float product (10 ** -5 * 2 is
  // 0.000019999999999999998) is no decimal multiple of the width before, which the spec requires.
  const width = (m: number) => Number(`${m}e${exponent}`);
  const m = [1, 2, 5, 10].find((k) => width(k) >= target)!;
  // Whole numbers (counts, scores) get whole widths: an interval of 0.5 children holds one value or none.
  if (width(m) < 1 && numbers.every(Number.isInteger)) return [1, 2, 4];
  return [width(m), width(2 * m), width(4 * m)];
}
