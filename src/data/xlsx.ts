/**
 * Excel workbook (.xlsx) input: one worksheet read as a table, its first non-empty row the
 * header. The workbook is a ZIP archive of XML parts (src/data/zip.ts): the worksheet and its
 * shared strings are inflated a piece at a time and split at whole rows (whole strings), so
 * memory holds one piece, the distinct values and the codes, never the sheet's XML whole.
 *
 * Cells are the strings the CSV, Arrow and Parquet readers give for the same values (see
 * docs/release-spec.md, "Excel input"): numbers as JavaScript prints them (the shortest text that
 * reads back as the same double), strings as stored (shared or inline, rich text joined),
 * booleans `true`/`false`, a number in a date format as `YYYY-MM-DD` (with a time of day as ISO
 * 8601 `YYYY-MM-DDTHH:MM:SS`, a time alone as `HH:MM:SS`), a formula as its stored result (never
 * evaluated), an error value (`#N/A`) as its text, an empty cell as the missing value.
 *
 * The XML is read by a scanner of its own that expands the five predefined entities and
 * character references only: a part declaring a document type is refused, so no entity can be
 * defined, let alone expanded.
 */
import { closeSync } from 'node:fs';
import { basename, posix } from 'node:path';
import { InputError, LimitError } from '../errors.ts';
import { thousands } from '../util/format.ts';
import { shownName } from '../util/limits.ts';
import { ColumnPoints, NO_POINT, pointsOf, withDecimalPoint } from './decimal.ts';
import { type InputFile, openInput, READ_CHUNK_BYTES, readAt, readInto } from './input.ts';
import { checkInputColumns, XLSX_MAX_PART_BYTES, XLSX_MAX_ROW_BYTES } from './limits.ts';
import { ShardAssembler } from './shards.ts';
import { type EncodedTable, TYPED_INPUT_DELIMITER } from './table.ts';
import { utf8Buffers } from './utf8.ts';
import { formatDate } from './values.ts';
import { type DigitFormat, digitFormat, digitText } from './xlsx-digits.ts';
import { ZipArchive, type ZipEntry, ZipError } from './zip.ts';

export interface ReadXlsxOptions {
  /**
   * The sheet: its name, or its 1-based position in the workbook counting hidden sheets; the
   * first visible worksheet by default (not a chart sheet).
   */
  sheet?: string | number;
  /** Where `sheet` was given, as messages name it: `format.sheet` (default) or an option (`--sheet`). */
  sheetGiven?: string;
  /** Columns whose cells are never stored (identifying ones): the tables leave them out. */
  omit?: ReadonlySet<string>;
  /** Columns given as their rows' UTF-8 bytes (EncodedColumn.raw), never coded (read.ts). */
  raw?: ReadonlySet<string>;
  /** `format.decimal`: with `,`, text cells are read as read.ts reads a CSV's; number cells are numbers. */
  decimal?: '.' | ',';
  /** With `decimal: ","`: filled per column read (by its index) with its text cells' points (ReadTableOptions.points). */
  points?: ColumnPoints[];
  /** The tables' `delimiter` (the release CSV's): TYPED_INPUT_DELIMITER by default. */
  delimiter?: string;
}

/** The most columns a worksheet has (XFD). */
const MAX_SHEET_COLUMNS = 16_384;
/** The most rows a worksheet has: a row numbered past it is no sheet's. */
const MAX_SHEET_ROWS = 1_048_576;
/** Rows of a single text above a header that are passed over as its title, at most. */
const TITLE_ROWS = 5;
/** Rows coded before they are handed to the shard assembler. */
const BATCH_ROWS = 4096;
/** The signature of an OLE compound file: a legacy .xls, or an .xlsx encrypted with a password. */
const CFB_SIGNATURE = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);

/** How a number cell's style shows it: `Time` is a time of day (`hh:mm`), `Elapsed` a duration (`[h]:mm`). */
const Shown = { Number: 0, Date: 1, DateTime: 2, Time: 3, Elapsed: 4 } as const;
type Shown = (typeof Shown)[keyof typeof Shown];

/**
 * Reads one sheet of a workbook as consecutive shards of `rowsPerShard` rows (the last one
 * shorter). Each shard's dictionaries are a prefix of the next one's.
 * @throws InputError E_INPUT_MISSING, E_INPUT_EMPTY, E_INPUT_NO_ROWS, E_XLSX_CORRUPT,
 *   E_XLSX_PASSWORD, E_XLSX_LEGACY, E_XLSX_SHEET, E_XLSX_HEADER, E_XLSX_RAGGED, E_XLSX_FORMULA;
 *   LimitError E_LIMIT_XLSX_PART, E_LIMIT_COLUMNS, E_LIMIT_NAME.
 */
export function* readXlsxShards(
  path: string,
  rowsPerShard: number,
  options: ReadXlsxOptions = {},
): Generator<EncodedTable, void, undefined> {
  const input = openInput(path);
  try {
    yield* readOpenXlsx(path, input, rowsPerShard, options);
  } finally {
    closeSync(input.fd);
  }
}

/** The whole sheet as one table. */
export function readXlsx(path: string, options: ReadXlsxOptions = {}): EncodedTable {
  const [table] = readXlsxShards(path, Number.POSITIVE_INFINITY, options);
  return table!;
}

/** A workbook's sheet, as `ppdp init` chooses among them. */
export interface SheetEntry {
  readonly name: string;
  /** Hidden in Excel: never read by default. */
  readonly hidden: boolean;
  /** A sheet of cells (not a chart or dialog sheet). */
  readonly cells: boolean;
}

/** A workbook's sheets, in order. */
export function workbookSheets(path: string): SheetEntry[] {
  const file = basename(path);
  const input = openInput(path);
  try {
    const zip = new ZipArchive(path, input);
    return readWorkbook(file, zip).sheets.map((s) => ({
      name: s.name,
      hidden: s.hidden,
      cells: isWorksheet(s),
    }));
  } catch (err) {
    if (err instanceof ZipError) throw zipError(file, err);
    if (err instanceof XmlError) throw corrupt(file, err.message);
    throw err;
  } finally {
    closeSync(input.fd);
  }
}

function corrupt(file: string, problem: string): InputError {
  return new InputError(
    'E_XLSX_CORRUPT',
    `${file}: not a readable Excel workbook (${problem})`,
    'open the file in Excel or LibreOffice and save it again as an Excel workbook (.xlsx), or export the sheet as CSV',
  );
}

/** A ZIP archive's refusal worded for a workbook. */
function zipError(file: string, err: ZipError): InputError | LimitError {
  if (err.kind === 'ratio') {
    return new LimitError(
      'E_LIMIT_XLSX_PART',
      `${file}: ${err.message}`,
      'the workbook inflates far beyond what Excel writes: save it again from Excel or LibreOffice, or export the sheet as CSV',
    );
  }
  if (err.kind === 'encrypted') return passwordError(file);
  return corrupt(file, err.message);
}

function passwordError(file: string): InputError {
  return new InputError(
    'E_XLSX_PASSWORD',
    `${file}: the workbook is protected by a password (it is encrypted)`,
    'save an unprotected copy (in Excel: File › Info › Protect Workbook › Encrypt with Password, clear the password) and release that',
  );
}

/**
 * An OLE compound file (a legacy .xls, or an encrypted .xlsx): which one it is, by the names of
 * its streams (an encrypted workbook holds `EncryptedPackage`).
 */
function compoundFileError(path: string, input: InputFile): InputError {
  const file = basename(path);
  const marker = Buffer.from('EncryptedPackage', 'utf16le');
  const buf = Buffer.allocUnsafeSlow(Math.min(READ_CHUNK_BYTES, Math.max(1, input.size)));
  // Stream names are in directory sectors anywhere in the file: look through it, overlapping pieces.
  for (let at = 0; ; at += buf.length - marker.length) {
    const n = readAt(path, input, buf, at);
    if (buf.subarray(0, n).includes(marker)) return passwordError(file);
    if (at + n >= input.size || n < buf.length) break;
  }
  return new InputError(
    'E_XLSX_LEGACY',
    `${file}: a legacy Excel 97–2003 workbook (.xls), which is not read`,
    'open it in Excel or LibreOffice and save it as an Excel workbook (.xlsx) or as CSV',
  );
}

interface SheetRef {
  readonly name: string;
  /** The sheet's part, resolved in the package. */
  readonly target: string | undefined;
  readonly type: string;
  /** Hidden in Excel (`hidden` or `veryHidden`): never chosen by default. */
  readonly hidden: boolean;
}

interface Workbook {
  readonly sheets: readonly SheetRef[];
  readonly date1904: boolean;
  readonly sharedStrings: string | undefined;
  readonly styles: string | undefined;
}

function* readOpenXlsx(
  path: string,
  input: InputFile,
  rowsPerShard: number,
  options: ReadXlsxOptions,
): Generator<EncodedTable, void, undefined> {
  const file = basename(path);
  if (input.size === 0) {
    throw new InputError('E_INPUT_EMPTY', `${file}: the file is empty`, 'expected an Excel workbook (.xlsx)');
  }
  const head = Buffer.alloc(8);
  readInto(path, input, head, 0, 8);
  if (head.equals(CFB_SIGNATURE)) throw compoundFileError(path, input);
  try {
    const zip = new ZipArchive(path, input);
    const workbook = readWorkbook(file, zip);
    const sheet = chooseSheet(file, workbook.sheets, options.sheet, options.sheetGiven);
    const where = `${file} sheet "${shownName(sheet.name)}"`;
    if (!isWorksheet(sheet)) {
      throw new InputError(
        'E_XLSX_SHEET',
        `${where}: the sheet is a chart or dialog sheet, not a table`,
        'set "format": { "sheet": … } to the sheet that holds the table (its name, or its position from 1)',
      );
    }
    const entry = sheet.target === undefined ? undefined : zip.entry(sheet.target);
    if (!entry) throw corrupt(file, `the part of sheet "${shownName(sheet.name)}" is missing`);
    const strings =
      workbook.sharedStrings === undefined ? [] : readSharedStrings(file, zip, workbook.sharedStrings);
    const styles = workbook.styles === undefined ? NO_STYLES : readStyles(file, zip, workbook.styles);
    // A sheet without rows is likely the wrong one: point at the others (their names only, a
    // hidden one marked: the default passes over it).
    const emptyHint =
      workbook.sheets.length > 1
        ? `the workbook's sheets: ${sheetNames(workbook.sheets, true)}; name the one holding the table in "format": { "sheet": "…" } (ppdp init: --sheet)`
        : undefined;
    const reader = new SheetReader(
      path,
      sheet.name,
      where,
      emptyHint,
      strings,
      styles,
      workbook.date1904,
      rowsPerShard,
      options.omit,
      options.raw,
      options.decimal === ',',
      options.points,
      options.delimiter,
    );
    for (const text of elements(file, zip, entry, 'row', ['worksheet'])) yield* reader.rows(text);
    yield* reader.finish();
  } catch (err) {
    if (err instanceof ZipError) throw zipError(file, err);
    if (err instanceof XmlError) throw corrupt(file, err.message);
    throw err;
  }
}

/** An XML part the scanner cannot read. */
class XmlError extends Error {}

/** A part read whole, as text, after its size is checked. */
function wholePart(
  file: string,
  zip: ZipArchive,
  name: string,
  roots: readonly string[],
): { text: string; prefix: string } {
  const entry = zip.entry(name);
  if (!entry) throw corrupt(file, `its part ${name} is missing`);
  if (entry.size > XLSX_MAX_PART_BYTES) {
    throw new LimitError(
      'E_LIMIT_XLSX_PART',
      `${file}: the part ${name} declares ${thousands(entry.size)} bytes, over the limit of ${XLSX_MAX_PART_BYTES / (1024 * 1024)} MiB`,
      'save the workbook again from Excel or LibreOffice, or export the sheet as CSV',
    );
  }
  const text = zip.readAll(entry).toString('utf8');
  return { text, prefix: rootPrefix(text, name, roots) };
}

/**
 * The namespace prefix of a part's root element (`x:` for `<x:worksheet>`, usually none), after
 * checking that the part declares no document type (so no entity).
 */
function rootPrefix(text: string, part: string, roots: readonly string[]): string {
  const root = new RegExp(`<(?:([A-Za-z_][\\w.-]*):)?(${roots.join('|')})[\\s/>]`).exec(text);
  const before = root ? text.slice(0, root.index) : text;
  if (before.includes('<!')) throw new XmlError(`${part} declares a document type, which no workbook does`);
  if (!root) {
    const what = roots.map((r) => PART_ROLES[r] ?? `a <${r}> part`).join(' or ');
    throw new XmlError(`${part} should be ${what}, but it does not start with <${roots.join('> or <')}>`);
  }
  return root[1] ? `${root[1]}:` : '';
}

/** What a part holds, by its root element, as a person reads it in a refusal. */
const PART_ROLES: Record<string, string> = {
  worksheet: 'a worksheet (a sheet’s rows)',
  workbook: 'the workbook part (the list of sheets)',
  Relationships: 'a relationships part (where the other parts are)',
  sst: 'the shared strings part (the texts the cells share)',
  styleSheet: 'the styles part (the cells’ number formats)',
};

/** Attributes of a start tag's text (`name="value"`), names as written (prefixes kept). */
function attributes(tag: string): Map<string, string> {
  const out = new Map<string, string>();
  const re = /([A-Za-z_][\w.:-]*)\s*=\s*(?:"([^"]*)"|'([^']*)')/g;
  for (let m = re.exec(tag); m; m = re.exec(tag)) out.set(m[1]!, unescapeXml(m[2] ?? m[3] ?? ''));
  return out;
}

/** An attribute by its local name (any prefix). */
function local(attrs: Map<string, string>, name: string): string | undefined {
  const plain = attrs.get(name);
  if (plain !== undefined) return plain;
  for (const [k, v] of attrs) if (k.endsWith(`:${name}`)) return v;
  return undefined;
}

const NAMED: Record<string, string> = { lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" };
const ENTITY = /&(?:(lt|gt|amp|quot|apos)|#x([0-9a-fA-F]{1,6})|#([0-9]{1,7}));|&/g;

/** Text with the five predefined entities and character references expanded; any other `&` is an error. */
function unescapeXml(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(
    ENTITY,
    (_m, named: string | undefined, hex: string | undefined, dec: string | undefined) => {
      if (named) return NAMED[named]!;
      if (hex === undefined && dec === undefined) throw new XmlError('a reference to an undeclared entity');
      const cp = hex !== undefined ? Number.parseInt(hex, 16) : Number.parseInt(dec!, 10);
      if (cp === 0 || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) {
        throw new XmlError('a character reference to no character');
      }
      return String.fromCodePoint(cp);
    },
  );
}

/** A string of a cell: line breaks read as XML reads them, unescaped, then OOXML's `_xHHHH_` escapes (a CR as `_x000D_`) decoded. */
function cellText(s: string): string {
  // XML reads a line break written as CR LF (or CR) as LF; a CR the writer meant is `&#13;` or `_x000D_`.
  const text = unescapeXml(s.includes('\r') ? s.replace(/\r\n?/g, '\n') : s);
  return text.includes('_x')
    ? text.replace(/_x([0-9A-Fa-f]{4})_/g, (_m, h: string) => String.fromCharCode(Number.parseInt(h, 16)))
    : text;
}

/** The relationships of a part: by id, with their type and target resolved against the part's folder. */
function relationships(
  file: string,
  zip: ZipArchive,
  part: string,
): Map<string, { type: string; target: string }> {
  const dir = posix.dirname(part);
  const relsName = posix.join(dir, '_rels', `${posix.basename(part)}.rels`);
  const out = new Map<string, { type: string; target: string }>();
  if (!zip.entry(relsName)) return out;
  const { text, prefix } = wholePart(file, zip, relsName, ['Relationships']);
  const re = new RegExp(`<${prefix}Relationship\\b([^>]*)>`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const a = attributes(m[1]!);
    const id = a.get('Id');
    const target = a.get('Target');
    if (id === undefined || target === undefined || a.get('TargetMode') === 'External') continue;
    const resolved = target.startsWith('/') ? target.slice(1) : posix.normalize(posix.join(dir, target));
    out.set(id, { type: a.get('Type') ?? '', target: resolved });
  }
  return out;
}

function readWorkbook(file: string, zip: ZipArchive): Workbook {
  const root = relationships(file, zip, '');
  const office = [...root.values()].find((r) => r.type.endsWith('/officeDocument'));
  const part = office?.target ?? 'xl/workbook.xml';
  if (!zip.entry(part)) {
    throw corrupt(file, 'it has no workbook part: a ZIP archive, but not of an Excel workbook');
  }
  const { text, prefix } = wholePart(file, zip, part, ['workbook']);
  const rels = relationships(file, zip, part);
  const sheets: SheetRef[] = [];
  const re = new RegExp(`<${prefix}sheet\\b([^>]*)>`, 'g');
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const a = attributes(m[1]!);
    const rel = rels.get(local(a, 'id') ?? '');
    const hidden = ['hidden', 'veryHidden'].includes(a.get('state') ?? '');
    sheets.push({ name: a.get('name') ?? '', target: rel?.target, type: rel?.type ?? '', hidden });
  }
  const pr = new RegExp(`<${prefix}workbookPr\\b([^>]*)>`).exec(text);
  const date1904 = pr ? ['1', 'true'].includes(attributes(pr[1]!).get('date1904') ?? '') : false;
  const all = [...rels.values()];
  return {
    sheets,
    date1904,
    sharedStrings: all.find((r) => r.type.endsWith('/sharedStrings'))?.target,
    styles: all.find((r) => r.type.endsWith('/styles'))?.target,
  };
}

/** A sheet of cells (not a chart or dialog sheet). */
function isWorksheet(sheet: SheetRef): boolean {
  return sheet.type.endsWith('/worksheet');
}

/** The sheets' names, quoted, in workbook order (`hidden`: hidden ones marked so). */
function sheetNames(sheets: readonly SheetRef[], hidden = false): string {
  return sheets.map((s) => `"${shownName(s.name)}"${hidden && s.hidden ? ' (hidden)' : ''}`).join(', ');
}

/**
 * The sheet `wanted` names (a name, or a position from 1 counting hidden sheets), or the first
 * visible worksheet: a hidden sheet is a workbook's lookup lists or workings, and a chart sheet
 * (a workbook often opens on its chart) holds no cells, neither is the table.
 */
function chooseSheet(
  file: string,
  sheets: readonly SheetRef[],
  wanted: string | number | undefined,
  given = 'format.sheet',
): SheetRef {
  if (sheets.length === 0) throw corrupt(file, 'its workbook lists no sheet');
  if (wanted === undefined)
    return sheets.find((s) => !s.hidden && isWorksheet(s)) ?? sheets.find((s) => !s.hidden) ?? sheets[0]!;
  const found =
    typeof wanted === 'number'
      ? sheets[wanted - 1]
      : (sheets.find((s) => s.name === wanted) ??
        sheets.find((s) => s.name.toLowerCase() === wanted.toLowerCase()));
  if (found) return found;
  const names = sheetNames(sheets);
  throw new InputError(
    'E_XLSX_SHEET',
    typeof wanted === 'number'
      ? `${file}: ${given} is ${wanted}, but the workbook has ${sheets.length} sheet${sheets.length === 1 ? '' : 's'} (${names})`
      : `${file}: no sheet is named "${shownName(wanted)}"; the workbook's ${sheets.length} sheet${sheets.length === 1 ? ' is' : 's are'} ${names}`,
    `${given === 'format.sheet' ? 'set "format": { "sheet": … } to' : `give ${given}`} one of the sheet names, or its position from 1`,
  );
}

/**
 * A part's text in pieces that each end with a whole `element` (`row`, `si`), as it inflates:
 * nothing is held but the part's piece being split. The last piece is the rest of the part.
 */
function* elements(
  file: string,
  zip: ZipArchive,
  entry: ZipEntry,
  element: string,
  roots: readonly string[],
): Generator<string, void, undefined> {
  let pending = Buffer.allocUnsafeSlow(1 << 16);
  let filled = 0;
  let close: Buffer | undefined;
  for (const chunk of zip.inflate(entry)) {
    if (filled + chunk.length > pending.length) {
      const next = Buffer.allocUnsafeSlow(Math.max(pending.length * 2, filled + chunk.length));
      pending.copy(next, 0, 0, filled);
      pending = next;
    }
    pending.set(chunk, filled);
    const searchFrom = close === undefined ? 0 : Math.max(0, filled - close.length);
    filled += chunk.length;
    if (close === undefined) {
      // The root's prefix decides the closing tag: read on until the root element shows.
      const head = pending.toString('latin1', 0, Math.min(filled, 1 << 16));
      try {
        close = Buffer.from(`</${rootPrefix(head, entry.name, roots)}${element}>`);
      } catch (err) {
        if (filled < 1 << 16 && !head.includes('<!')) continue;
        throw err;
      }
    }
    const last = pending.subarray(searchFrom, filled).lastIndexOf(close);
    if (last < 0) {
      if (filled > XLSX_MAX_ROW_BYTES) {
        throw new LimitError(
          'E_LIMIT_XLSX_PART',
          `${file}: ${entry.name} has a ${element === 'row' ? 'row' : 'string'} of more than ${XLSX_MAX_ROW_BYTES / (1024 * 1024)} MiB of XML (the limit)`,
          'split the long cells, or export the sheet as CSV',
        );
      }
      continue;
    }
    const cut = searchFrom + last + close.length;
    yield pending.toString('utf8', 0, cut);
    pending.copyWithin(0, cut, filled);
    filled -= cut;
  }
  if (close === undefined) {
    rootPrefix(pending.toString('latin1', 0, filled), entry.name, roots);
  }
  if (filled > 0) yield pending.toString('utf8', 0, filled);
}

/** The text of a string item or inline string: its `<t>` runs joined, phonetic runs (`<rPh>`) left out. */
function runs(body: string, p: string): string {
  let re = RUNS.get(p);
  if (!re) {
    re = {
      plain: new RegExp(`^<${p}t(?:\\s[^>]*)?>([^<]*)</${p}t>$`),
      phonetic: new RegExp(`<${p}rPh\\b[\\s\\S]*?</${p}rPh>`, 'g'),
      run: new RegExp(`<${p}t(?:\\s[^>]*)?(?:/>|>([^<]*)</${p}t>)`, 'g'),
    };
    RUNS.set(p, re);
  }
  const plain = re.plain.exec(body);
  if (plain) return cellText(plain[1]!);
  const stripped = body.includes('rPh') ? body.replace(re.phonetic, '') : body;
  let out = '';
  re.run.lastIndex = 0;
  for (let m = re.run.exec(stripped); m; m = re.run.exec(stripped)) out += m[1] ?? '';
  return cellText(out);
}

/** The expressions of runs(), by namespace prefix. */
const RUNS = new Map<string, { plain: RegExp; phonetic: RegExp; run: RegExp }>();

function readSharedStrings(file: string, zip: ZipArchive, part: string): string[] {
  const entry = zip.entry(part);
  if (!entry) throw corrupt(file, `its part ${part} is missing`);
  const strings: string[] = [];
  let prefix: string | undefined;
  for (const text of elements(file, zip, entry, 'si', ['sst'])) {
    prefix ??= rootPrefix(text, part, ['sst']);
    const re = new RegExp(`<${prefix}si(?:\\s[^>]*)?(?:/>|>([\\s\\S]*?)</${prefix}si>)`, 'g');
    for (let m = re.exec(text); m; m = re.exec(text))
      strings.push(m[1] === undefined ? '' : runs(m[1], prefix));
  }
  return strings;
}

/** Built-in number formats that show a date, a time, both, or a duration (46, `[h]:mm:ss`). */
function builtInShown(id: number): Shown {
  if ((id >= 14 && id <= 17) || (id >= 27 && id <= 31) || (id >= 34 && id <= 36) || (id >= 50 && id <= 58))
    return Shown.Date;
  if (id === 22) return Shown.DateTime;
  if (id === 46) return Shown.Elapsed;
  if ((id >= 18 && id <= 21) || (id >= 32 && id <= 33) || (id >= 45 && id <= 47)) return Shown.Time;
  return Shown.Number;
}

/** What a format code shows: its first section's date (`y`, `d`, `m` without `h`/`s`) and time (`h`, `s`, AM/PM) parts, or a duration (`[h]`, `[m]`, `[s]`). */
function formatShown(code: string): Shown {
  let s = code
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '')
    .replace(/[_*]./g, '');
  s = s.split(';')[0]!;
  const elapsed = /\[(h+|m+|s+)\]/i.test(s);
  s = s.replace(/\[[^\]]*\]/g, '').replace(/general/gi, '');
  const ampm = /AM\/PM|A\/P/i.test(s);
  s = s.replace(/AM\/PM|A\/P/gi, '');
  const time = elapsed || ampm || /[hs]/i.test(s);
  const date = /[yd]/i.test(s) || (!time && /m/i.test(s));
  if (date) return time ? Shown.DateTime : Shown.Date;
  return elapsed ? Shown.Elapsed : time ? Shown.Time : Shown.Number;
}

/** The cell styles (`s`, an index into `cellXfs`): how each shows a number, and its digit pattern if it writes one as a code. */
interface Styles {
  readonly shown: Uint8Array;
  readonly digits: readonly (DigitFormat | undefined)[];
}

function readStyles(file: string, zip: ZipArchive, part: string): Styles {
  const { text, prefix } = wholePart(file, zip, part, ['styleSheet']);
  const custom = new Map<number, Shown>();
  const codes = new Map<number, DigitFormat | undefined>();
  const fmt = new RegExp(`<${prefix}numFmt\\b([^>]*)>`, 'g');
  for (let m = fmt.exec(text); m; m = fmt.exec(text)) {
    const a = attributes(m[1]!);
    const code = a.get('formatCode') ?? '';
    const shown = formatShown(code);
    custom.set(Number(a.get('numFmtId')), shown);
    // Built-in formats are no codes (`0` shows a whole number as it is): custom ones only.
    if (shown === Shown.Number) codes.set(Number(a.get('numFmtId')), digitFormat(code));
  }
  const xfs = new RegExp(`<${prefix}cellXfs\\b[^>]*>([\\s\\S]*?)</${prefix}cellXfs>`).exec(text);
  if (!xfs) return NO_STYLES;
  const shown: Shown[] = [];
  const digits: (DigitFormat | undefined)[] = [];
  const xf = new RegExp(`<${prefix}xf\\b([^>]*)>`, 'g');
  for (let m = xf.exec(xfs[1]!); m; m = xf.exec(xfs[1]!)) {
    const id = Number(attributes(m[1]!).get('numFmtId') ?? 0);
    shown.push(custom.get(id) ?? builtInShown(id));
    digits.push(codes.get(id));
  }
  return { shown: Uint8Array.from(shown), digits: digits.some(Boolean) ? digits : [] };
}

const NO_STYLES: Styles = { shown: new Uint8Array(0), digits: [] };

/** Days since 1970-01-01 of a serial day number (1900 system: day 1 is 1900-01-01; day 60, which has none, see dateText). */
function unixDay(serial: number, date1904: boolean): number {
  if (date1904) return serial - 24_107;
  return serial < 61 ? serial - 25_568 : serial - 25_569;
}

/**
 * A serial day number as `YYYY-MM-DD`. Two days of the 1900 system never were, and are written as
 * Excel shows them: day 60, Excel's 29 February 1900 (kept from Lotus 1-2-3), so that it stays
 * apart from 1 March (day 61); and day 0, its 0 January 1900 (a time of day typed into a date
 * cell), which is not 31 December 1899.
 */
function dateText(day: number, date1904: boolean): string {
  if (!date1904 && day === 60) return '1900-02-29';
  if (!date1904 && day === 0) return '1900-01-00';
  return formatDate(unixDay(day, date1904));
}

/** Milliseconds as `HH:MM:SS`, then the fraction of a second without trailing zeros (hours past 24 kept). */
function clockText(total: number): string {
  const h = Math.floor(total / 3_600_000);
  const m = Math.floor((total % 3_600_000) / 60_000);
  const sec = Math.floor((total % 60_000) / 1000);
  const frac = total % 1000;
  const two = (n: number) => String(n).padStart(2, '0');
  return `${two(h)}:${two(m)}:${two(sec)}${frac ? `.${String(frac).padStart(3, '0').replace(/0+$/, '')}` : ''}`;
}

/**
 * An ISO 8601 date, date and time, or time as a serial number in the workbook's date system
 * (its zone, if any, ignored: a sheet's dates have none); undefined if it is none of those.
 */
function isoSerial(text: string, date1904: boolean): number | undefined {
  const m =
    /^(?:(\d{4})-(\d{2})-(\d{2}))?(?:T| )?(?:(\d{2}):(\d{2})(?::(\d{2})(\.\d+)?)?)?(?:Z|[+-]\d{2}:?\d{2})?$/.exec(
      text,
    );
  if (!m || (m[1] === undefined && m[4] === undefined)) return undefined;
  const ms =
    (Number(m[4] ?? 0) * 3600 + Number(m[5] ?? 0) * 60 + Number(m[6] ?? 0)) * 1000 +
    Math.round(Number(m[7] ?? 0) * 1000);
  if (m[1] === undefined) return ms / 86_400_000;
  const [year, month, date] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const at = new Date(Date.UTC(year, month - 1, date));
  if (at.getUTCMonth() !== month - 1 || at.getUTCDate() !== date) return undefined;
  const unix = at.getTime() / 86_400_000;
  // The 1900 system counts a 29 February 1900 that never was: days before it are one less.
  const day = date1904 ? unix + 24_107 : unix + 25_569 < 61 ? unix + 25_568 : unix + 25_569;
  return day + ms / 86_400_000;
}

/**
 * A number cell's text as its style shows it: a date, a date and time, a time of day, a
 * duration, or the number.
 */
function numberText(value: number, shown: Shown, date1904: boolean): string {
  if (shown === Shown.Number || !(value >= 0) || value >= 2_958_466) return String(value);
  let day = Math.floor(value);
  if (shown === Shown.Date) return dateText(day, date1904);
  let ms = Math.round((value - day) * 86_400_000);
  // A duration: all of it, past 24 hours (`[h]:mm` of 1.25 is 30:00:00).
  if (shown === Shown.Elapsed) return clockText(day * 86_400_000 + ms);
  // Rounded up to the next midnight: that day's start.
  if (ms === 86_400_000) {
    day += 1;
    ms = 0;
  }
  if (shown === Shown.DateTime) return `${dateText(day, date1904)}T${clockText(ms)}`;
  // A time of day (`hh:mm`, `h:mm AM/PM`): the serial's fraction; its date, which the format
  // does not show, is not released either.
  return clockText(ms);
}

/** A column's letters (`A`, `AB`) as a 0-based index. */
function columnIndex(ref: string): number {
  let col = 0;
  let i = 0;
  for (; i < ref.length; i++) {
    const c = ref.charCodeAt(i) | 0x20;
    if (c < 0x61 || c > 0x7a) break;
    col = col * 26 + (c - 0x60);
  }
  return i === 0 ? -1 : col - 1;
}

/** A 0-based column index as its letters. */
export function columnLetters(index: number): string {
  let s = '';
  for (let n = index + 1; n > 0; n = Math.floor((n - 1) / 26))
    s = String.fromCharCode(0x41 + ((n - 1) % 26)) + s;
  return s;
}

/** The first of a row's cells that is not blank (the row has one). */
function filledFrom(cells: readonly string[]): number {
  let i = 0;
  while ((cells[i] ?? '').trim() === '' && i < cells.length) i++;
  return i;
}

/** Reads a sheet's rows to codes, one column dictionary each, handing full batches to the shard assembler. */
class SheetReader {
  private prefix: string | undefined;
  private rowRe!: RegExp;
  private cellRe!: RegExp;
  private valueRe!: RegExp;
  private inlineRe!: RegExp;
  private formulaRe!: RegExp;
  private closeRow!: string;
  private closeCell!: string;
  /** The header: set from the first row with a value (below any title, see row()). */
  private names: string[] | undefined;
  private headerRow = 0;
  /** The table's columns on the sheet: from `first` (after empty columns) to before `end`. */
  private first = 0;
  private end = MAX_SHEET_COLUMNS;
  /** Before the header: the row's cells that are not blank, and those of them that are text. */
  private rowValues = 0;
  private rowTexts = 0;
  /** Rows of a single text above the header so far: a title, if a row of two values or more follows. */
  private held: { number: number; width: number; at: number; cells: string[] }[] = [];
  /** Per column of the sheet: its index among the kept columns, or -1 when omitted or left of the table. */
  private kept: Int32Array = new Int32Array(0);
  private omitted: string[] = [];
  /** The kept columns' letters on the sheet, for messages naming a cell. */
  private letters: string[] = [];
  private dictionaries: string[][] = [];
  private indexes: Map<string, number>[] = [];
  private batch: Int32Array[] = [];
  /** Per kept column given as bytes, the batch's cells (UTF-8 encoded at the flush). */
  private rawBatch: (string[] | undefined)[] = [];
  private batchRows = 0;
  private assembler: ShardAssembler | undefined;
  /** The sheet row number of the last row read; the table's rows so far. */
  private lastRow = 0;
  private rowsRead = 0;
  /** One row's cells, by sheet column (reused). */
  private cells: string[] = [];

  constructor(
    private readonly path: string,
    private readonly sheetName: string,
    private readonly where: string,
    /** The hint when the sheet holds no table, if the workbook has other sheets. */
    private readonly emptyHint: string | undefined,
    private readonly strings: readonly string[],
    private readonly styles: Styles,
    private readonly date1904: boolean,
    private readonly rowsPerShard: number,
    private readonly omit: ReadonlySet<string> | undefined,
    private readonly raw: ReadonlySet<string> = new Set(),
    /** Text cells' decimal commas are read (format.decimal ","). */
    private readonly decimal = false,
    /** Where each kept column's points go (by its index among the kept columns). */
    private readonly pointsOut: ColumnPoints[] = [],
    private readonly delimiter = TYPED_INPUT_DELIMITER,
  ) {}

  /** Per sheet column: 1 once it has a text cell (a column without one is `typed`). */
  private hasText = new Uint8Array(0);
  /** Per sheet column, its text cells' points (format.decimal ","). */
  private readonly points: ColumnPoints[] = [];

  /**
   * A text cell's value below the header: read with a decimal point where it has a decimal
   * comma (format.decimal ","), as read.ts reads a CSV's cells; its column holds text.
   */
  private text(value: string, col: number, number: number): string {
    if (this.names === undefined || value === '' || !(this.kept[col]! >= 0)) return value;
    this.hasText[col] = 1;
    if (!this.decimal) return value;
    const p = pointsOf(value);
    if (p !== NO_POINT) {
      let points = this.points[col];
      if (!points) {
        points = this.points[col] = new ColumnPoints('');
        this.pointsOut[this.kept[col]!] = points;
      }
      if (points.wants(p)) points.saw(p, `${this.where} cell ${columnLetters(col)}${number}`);
    }
    return withDecimalPoint(value);
  }

  private setPrefix(text: string): void {
    const p = rootPrefix(text, 'the sheet', ['worksheet']);
    this.prefix = p;
    this.rowRe = new RegExp(`<${p}row\\b([^>]*?)(/?)>`, 'g');
    this.cellRe = new RegExp(`<${p}c\\b([^>]*?)(/?)>`, 'g');
    this.valueRe = new RegExp(`<${p}v(?:\\s[^>]*)?>([^<]*)</${p}v>`);
    this.inlineRe = new RegExp(`<${p}is(?:\\s[^>]*)?>([\\s\\S]*?)</${p}is>`);
    this.formulaRe = new RegExp(`<${p}f[\\s/>]`);
    this.closeRow = `</${p}row>`;
    this.closeCell = `</${p}c>`;
  }

  /** Reads the rows of `text` (whole rows); yields each shard they complete. */
  *rows(text: string): Generator<EncodedTable, void, undefined> {
    if (this.prefix === undefined) this.setPrefix(text);
    const rowRe = this.rowRe;
    rowRe.lastIndex = 0;
    for (let m = rowRe.exec(text); m; m = rowRe.exec(text)) {
      const rAttr = /\br=["'](\d+)/.exec(m[1]!);
      const number = rAttr ? Number(rAttr[1]) : this.lastRow + 1;
      if (!(number > this.lastRow)) throw new XmlError(`${this.where}: its rows are out of order`);
      if (number > MAX_SHEET_ROWS)
        throw new XmlError(
          `${this.where} has a row numbered ${number}, past a worksheet's last row (1,048,576)`,
        );
      let body = '';
      if (m[2] !== '/') {
        const end = text.indexOf(this.closeRow, rowRe.lastIndex);
        if (end < 0) throw new XmlError(`${this.where} row ${number} is not closed`);
        body = text.slice(rowRe.lastIndex, end);
        rowRe.lastIndex = end + this.closeRow.length;
      }
      yield* this.row(number, body);
    }
  }

  /** One row's cells into `this.cells`; returns the last column with a value plus one. */
  private readCells(number: number, body: string): number {
    const cells = this.cells;
    cells.length = 0;
    let width = 0;
    let col = -1;
    this.rowValues = 0;
    this.rowTexts = 0;
    const cellRe = this.cellRe;
    cellRe.lastIndex = 0;
    for (let m = cellRe.exec(body); m; m = cellRe.exec(body)) {
      const tag = m[1]!;
      const ref = /\br=["']([A-Za-z]+)/.exec(tag);
      const at = ref ? columnIndex(ref[1]!) : col + 1;
      if (!(at > col) || at >= MAX_SHEET_COLUMNS)
        throw new XmlError(`${this.where} row ${number}: its cells are out of order`);
      col = at;
      let inner = '';
      if (m[2] !== '/') {
        const end = body.indexOf(this.closeCell, cellRe.lastIndex);
        if (end < 0) throw new XmlError(`${this.where} cell ${columnLetters(at)}${number} is not closed`);
        inner = body.slice(cellRe.lastIndex, end);
        cellRe.lastIndex = end + this.closeCell.length;
      }
      const value = this.cellValue(tag, inner, at, number);
      if (value === '') continue;
      if (this.names === undefined && value.trim() !== '') {
        this.rowValues++;
        if (/\bt=["'](?:s|inlineStr|str)["']/.test(tag)) this.rowTexts++;
      }
      while (cells.length < at) cells.push('');
      cells[at] = value;
      width = at + 1;
    }
    return width;
  }

  /** How a cell's style shows a number: as a date, a date and time, a time, or the number. */
  private shownBy(tag: string): Shown {
    const style = /\bs=["'](\d+)/.exec(tag);
    return (style ? (this.styles.shown[Number(style[1])] ?? Shown.Number) : Shown.Number) as Shown;
  }

  /** A number cell's text: as its style's digit pattern writes it (`01007` in `00000`), else as numberText. */
  private numberCell(tag: string, n: number): string {
    const style = this.styles.digits.length > 0 ? /\bs=["'](\d+)/.exec(tag) : null;
    const digits = style ? this.styles.digits[Number(style[1])] : undefined;
    return (digits && digitText(n, digits)) ?? numberText(n, this.shownBy(tag), this.date1904);
  }

  private cellValue(tag: string, inner: string, col: number, number: number): string {
    const type = /\bt=["']([a-zA-Z]+)/.exec(tag)?.[1] ?? 'n';
    if (type === 'inlineStr') {
      const is = this.inlineRe.exec(inner);
      return is ? this.text(runs(is[1]!, this.prefix!), col, number) : '';
    }
    const v = this.valueRe.exec(inner);
    if (!v) {
      if (this.formulaRe.test(inner)) {
        throw new InputError(
          'E_XLSX_FORMULA',
          `${this.where} cell ${columnLetters(col)}${number}: a formula without a stored result (the program that wrote the workbook did not calculate it)`,
          "open the workbook in Excel or LibreOffice and save it, which stores every formula's result, then release it again",
        );
      }
      return '';
    }
    const raw = v[1]!;
    switch (type) {
      case 's': {
        const i = Number(raw);
        const s = this.strings[i];
        if (!Number.isInteger(i) || s === undefined) {
          throw new XmlError(
            `${this.where} cell ${columnLetters(col)}${number} names a shared string that does not exist`,
          );
        }
        return this.text(s, col, number);
      }
      case 'b':
        return raw.trim() === '1' ? 'true' : 'false';
      case 'str':
      case 'e':
        return this.text(cellText(raw), col, number);
      case 'd': {
        // A date written as ISO 8601 text (some writers, and the strict format): shown as the
        // same date's serial number would be, by its style, or as a date (and its time, if any).
        const iso = cellText(raw).trim();
        const serial = isoSerial(iso, this.date1904);
        if (serial === undefined)
          throw new XmlError(`${this.where} cell ${columnLetters(col)}${number} holds no ISO 8601 date`);
        // Before the date system's first day (1900-01-01, serial 1; 1904-01-01, serial 0), or
        // past its last: as written.
        const first = /^\d{4}-/.test(iso) && !this.date1904 ? 1 : 0;
        if (serial < first || serial >= 2_958_466) return iso;
        const shown = this.shownBy(tag);
        if (shown !== Shown.Number) return numberText(serial, shown, this.date1904);
        const time = iso.includes(':');
        const kind = !/^\d{4}-/.test(iso) ? Shown.Time : time ? Shown.DateTime : Shown.Date;
        return numberText(serial, kind, this.date1904);
      }
      default: {
        if (raw.trim() === '') return '';
        const n = Number(raw);
        if (!Number.isFinite(n))
          throw new XmlError(`${this.where} cell ${columnLetters(col)}${number} holds no number`);
        return this.numberCell(tag, n);
      }
    }
  }

  private *row(number: number, body: string): Generator<EncodedTable, void, undefined> {
    const width = this.readCells(number, body);
    this.lastRow = number;
    if (this.names !== undefined) {
      yield* this.record(number, width);
      return;
    }
    if (this.rowValues === 0) return;
    // A title (and a subtitle, a date line) above the table: rows of one text each, in the
    // table's first column or left of it, passed over when a row of two texts or more (and
    // nothing else) follows them, which is the header. Held until then: when none follows, the
    // first of them is the header (a table of one column). A header row missing names is no
    // title: its names are right of the first column, or the row below holds numbers.
    const at = filledFrom(this.cells);
    if (this.rowValues === 1 && this.rowTexts === 1 && this.held.length < TITLE_ROWS) {
      this.held.push({ number, width, at, cells: this.cells.slice() });
      return;
    }
    if (this.rowValues > 1 && this.rowTexts === this.rowValues && this.held.every((h) => h.at <= at))
      this.held.length = 0;
    yield* this.replay();
    if (this.names === undefined) this.header(number, width);
    else yield* this.record(number, width);
  }

  /** The rows held as a possible title, read as the table's first rows (its header the first). */
  private *replay(): Generator<EncodedTable, void, undefined> {
    const current = this.cells;
    for (const h of this.held) {
      this.cells = h.cells;
      if (this.names === undefined) this.header(h.number, h.width);
      else yield* this.record(h.number, h.width);
    }
    this.held.length = 0;
    this.cells = current;
  }

  /** A row below the header, its cells in `this.cells`: coded, with the empty rows above it. */
  private *record(number: number, width: number): Generator<EncodedTable, void, undefined> {
    if (width === 0) return;
    const outside = width > this.end || this.first > 0;
    if (outside) this.checkOutside(number, width);
    // Cells outside the table that are blank are no value: a row of them alone is no row.
    if (outside && !this.anyValue(width)) return;
    // Rows without a value between rows with values are refused, as a CSV's blank line is: a
    // row number alone would otherwise make rows of nothing (a 3 KB sheet, a million rows), and
    // messages name rows by their number on the sheet. After the last, none are read.
    const above = this.headerRow + 1 + this.rowsRead;
    if (number > above) this.emptyRows(above, number - 1);
    yield* this.add(this.cells);
  }

  /** Refuses the rows `from`–`to` without a value between rows that have one. */
  private emptyRows(from: number, to: number): never {
    const rows = from === to ? `row ${from} holds` : `rows ${from}–${to} hold`;
    throw new InputError(
      'E_XLSX_RAGGED',
      `${this.where} ${rows} no value, between rows of the table that do`,
      'delete the empty rows between the rows of the table (an empty row is no record)',
    );
  }

  /** A hint for a value outside the header's columns: when the header is one name, it may be a title. */
  private titleHint(hint: string): string {
    if (this.names!.length > 1) return hint;
    const h = this.headerRow;
    return `row ${h}, read as the header, names one column: if it is a title above the table, delete it (a title is passed over when it is in the table's first column and the row below it holds two names or more, all text); else ${hint}`;
  }

  /** A hint about the sheet's layout, and the workbook's other sheets when it has any: the table may be on one. */
  private orElsewhere(hint: string): string {
    return this.emptyHint ? `${hint}; or, if the table is on another sheet: ${this.emptyHint}` : hint;
  }

  /** Whether the row's cells (`width` of them) hold a value within the table's columns. */
  private anyValue(width: number): boolean {
    for (let i = this.first; i < Math.min(width, this.end); i++) if (this.cells[i]) return true;
    return false;
  }

  /** Refuses a value (not a blank) left of the table's first column or right of its last. */
  private checkOutside(number: number, width: number): void {
    const cells = this.cells;
    const blank = (i: number) => (cells[i] ?? '').trim() === '';
    const h = this.headerRow;
    for (let i = 0; i < Math.min(this.first, width); i++) {
      if (blank(i)) continue;
      const at = columnLetters(i);
      throw new InputError(
        'E_XLSX_HEADER',
        `${this.where} cell ${at}${number}: a value in column ${at}, which has no name in the header row (row ${h}, from column ${columnLetters(this.first)})`,
        this.orElsewhere(
          this.titleHint(
            `give column ${at} a name in cell ${at}${h} (a column of row labels, such as an index saved with the table, has none), or delete the column`,
          ),
        ),
      );
    }
    for (let i = this.end; i < width; i++) {
      if (blank(i)) continue;
      throw new InputError(
        'E_XLSX_RAGGED',
        `${this.where} cell ${columnLetters(i)}${number}: a value right of the header's last column (${columnLetters(this.end - 1)})`,
        this.orElsewhere(
          this.titleHint(`give the column a name in row ${h}, or clear the cells right of the table`),
        ),
      );
    }
  }

  private header(number: number, width: number): void {
    // Empty columns left of the table, and blanks right of it, are not the table's.
    const first = filledFrom(this.cells);
    let end = width;
    while ((this.cells[end - 1] ?? '').trim() === '') end--;
    const names = Array.from({ length: end - first }, (_, i) => this.cells[first + i] ?? '');
    const blank = names.findIndex((n) => n.trim() === '');
    if (blank >= 0) {
      throw new InputError(
        'E_XLSX_HEADER',
        `${this.where} cell ${columnLetters(first + blank)}${number}: the header row has an empty name`,
        this.orElsewhere(
          `the sheet's first row with a value is its header: give every column a name in row ${number}`,
        ),
      );
    }
    const seen = new Map<string, number>();
    for (const [i, n] of names.entries()) {
      const earlier = seen.get(n);
      if (earlier !== undefined) {
        // Names are not shown: a sheet without a header row would show its first row's values.
        throw new InputError(
          'E_XLSX_HEADER',
          `${this.where} row ${number}: columns ${columnLetters(first + earlier)} and ${columnLetters(first + i)} have the same name`,
          this.orElsewhere('give every column a unique name'),
        );
      }
      seen.set(n, i);
    }
    checkInputColumns(this.where, names, `the header row (row ${number})`);
    this.names = names;
    this.headerRow = number;
    this.first = first;
    this.end = end;
    this.kept = new Int32Array(end).fill(-1);
    this.hasText = new Uint8Array(end);
    const keptNames: string[] = [];
    for (const [i, n] of names.entries()) {
      if (this.omit?.has(n)) this.omitted.push(n);
      else {
        this.kept[first + i] = keptNames.push(n) - 1;
        this.letters.push(columnLetters(first + i));
      }
    }
    this.dictionaries = keptNames.map(() => []);
    this.indexes = keptNames.map(() => new Map());
    this.batch = keptNames.map(() => new Int32Array(BATCH_ROWS));
    this.rawBatch = keptNames.map((n) => (this.raw.has(n) ? [] : undefined));
    this.assembler = new ShardAssembler(
      keptNames,
      this.rowsPerShard,
      this.path,
      this.delimiter,
      0,
      this.dictionaries,
    );
  }

  /** One row's cells (undefined: all empty) coded; yields each shard a full batch completes. */
  private *add(cells: readonly string[] | undefined): Generator<EncodedTable, void, undefined> {
    const kept = this.kept;
    for (let i = 0; i < kept.length; i++) {
      const k = kept[i]!;
      if (k < 0) continue;
      const value = cells?.[i] ?? '';
      const raw = this.rawBatch[k];
      if (raw) {
        raw.push(value);
        continue;
      }
      const index = this.indexes[k]!;
      let code = index.get(value);
      if (code === undefined) {
        code = this.dictionaries[k]!.push(value) - 1;
        index.set(value, code);
      }
      this.batch[k]![this.batchRows] = code;
    }
    this.batchRows++;
    this.rowsRead++;
    if (this.batchRows === BATCH_ROWS) yield* this.flush();
  }

  private *flush(): Generator<EncodedTable, void, undefined> {
    const n = this.batchRows;
    this.batchRows = 0;
    if (n === 0) return;
    const columns = this.batch.map((codes, k) => {
      const cells = this.rawBatch[k];
      return cells ? utf8Buffers(cells) : codes;
    });
    this.rawBatch = this.rawBatch.map((cells) => cells && []);
    yield* this.marked(this.assembler!.addCoded(columns, n));
  }

  /** Shards with their omitted columns and where their rows are on the sheet (its cells, for messages). */
  private *marked(shards: Iterable<EncodedTable>): Generator<EncodedTable, void, undefined> {
    for (const shard of shards) {
      const firstRow = this.shardStart + this.headerRow - 1;
      this.shardStart += shard.rowCount;
      // (Names from the table's first sheet column: `kept` and `hasText` are by sheet column.)
      const typed = this.names!.filter(
        (_, i) => this.kept[this.first + i]! >= 0 && this.hasText[this.first + i] === 0,
      );
      yield {
        ...shard,
        ...(this.omitted.length > 0 ? { omitted: this.omitted } : {}),
        ...(typed.length > 0 ? { typed } : {}),
        origins: [
          {
            source: this.path,
            at: 0,
            firstRow,
            sheet: {
              name: this.sheetName,
              letters: this.letters,
              ...(this.emptyHint ? { elsewhere: this.emptyHint } : {}),
            },
          },
        ],
      };
    }
  }

  private shardStart = 0;

  *finish(): Generator<EncodedTable, void, undefined> {
    yield* this.replay();
    if (this.names === undefined) {
      throw new InputError(
        'E_INPUT_EMPTY',
        `${this.where}: the sheet is empty`,
        this.emptyHint ?? 'expected a header row and data rows',
      );
    }
    yield* this.flush();
    const last = this.assembler!.finish();
    if (last) yield* this.marked([last]);
    else if (this.rowsRead === 0) {
      throw new InputError(
        'E_INPUT_NO_ROWS',
        `${this.where}: the sheet has a header row but no rows`,
        this.emptyHint ?? 'export the table with its rows',
      );
    }
  }
}
