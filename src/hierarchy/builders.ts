/**
 * Hierarchy builders: a column's hierarchy made from a few settings instead of a file, as a
 * grid of label codes (one row per dictionary code, one column per level). Every builder keeps
 * the missing value (an empty or blank cell) as a value of its own that generalizes to itself
 * up to the top `*`, as ARX does. Errors name the column, the row and the setting, never a value.
 */

import { commaNumbers } from '../data/decimal.ts';
import { columnRows, type EncodedColumn, isMissing, type RowNames } from '../data/table.ts';
import { HierarchyError } from '../errors.ts';
import type { DateLevel } from '../release-spec/spec.ts';
import { commonScale, formatUnits, unitsAtOrBelow } from '../util/decimal.ts';

/** Rows of a hierarchy as strings: `rows[r] = [value, level1, …, top]`. */
export type Rows = string[][];

/**
 * A hierarchy as integers: `labels[cells[l][r]]` is row r's label at level l (level 0: the
 * value). One label list serves every level, so a label repeated at two levels has one code.
 */
export interface Grid {
  readonly height: number;
  readonly rows: number;
  readonly cells: Int32Array[];
  readonly labels: string[];
  /** label → its code (a builder's values only when also a label above level 0). */
  readonly index: ReadonlyMap<string, number>;
  /** Row r is dictionary code r (a builder's grid): no value needs looking up. */
  readonly rowsAreCodes: boolean;
  /**
   * A builder's refusals: the dictionary codes it could not take (in code order) and the error
   * to throw when rows hold some of them (given how many, and where the first is: `data.csv
   * row 5`). Kept with the grid, so that a grid made once for a dictionary checks each shard's
   * rows against it (`checkRefused`).
   */
  readonly refused?: { readonly codes: Int32Array; readonly fail: (count: number, place: string) => never };
}

/** Fills a grid row by row, interning labels as they come. */
export class GridWriter implements Grid {
  readonly cells: Int32Array[];
  readonly labels: string[] = [];
  readonly index = new Map<string, number>();
  refused?: Grid['refused'];

  constructor(
    readonly height: number,
    readonly rows: number,
    readonly rowsAreCodes = false,
  ) {
    this.cells = Array.from({ length: height + 1 }, () => new Int32Array(rows));
  }

  code(label: string): number {
    let id = this.index.get(label);
    if (id === undefined) {
      id = this.labels.length;
      this.index.set(label, id);
      this.labels.push(label);
    }
    return id;
  }

  /**
   * The code of a label known to be new unless some label above level 0 equals it (a builder's
   * value: the dictionary's values are distinct). Not indexed: the index stays small.
   */
  codeOfValue(label: string): number {
    const id = this.index.get(label);
    if (id !== undefined) return id;
    this.labels.push(label);
    return this.labels.length - 1;
  }

  set(row: number, level: number, label: string): void {
    this.cells[level]![row] = this.code(label);
  }
}

/** A grid's rows as strings. */
export function gridRows(grid: Grid): Rows {
  const { cells, labels } = grid;
  return Array.from({ length: grid.rows }, (_, r) => cells.map((level) => labels[level[r]!]!));
}

/** A hierarchy file's rows as a grid. */
export function rowsGrid(rows: Rows): Grid {
  const grid = new GridWriter((rows[0]?.length ?? 1) - 1, rows.length);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r]!;
    for (let l = 0; l <= grid.height; l++) grid.set(r, l, row[l]!);
  }
  return grid;
}

/** The row of a missing value: itself at every level, `top` at the top (`height` levels above it). */
export function missingRow(value: string, height: number, top = '*'): string[] {
  return [value, ...new Array<string>(height - 1).fill(value), top];
}

/**
 * The grid of every dictionary value (row r: code r): `build` writes a value's levels above
 * it into `row` (codes from `grid.code`), or returns false when the builder cannot take it.
 * Missing values keep themselves up to `*`. Values no row holds (a shard's dictionary can list
 * them) get `*` up to the top if `build` refuses them; if rows hold refused values, `fail` gets
 * how many distinct ones and the first row of one, as `rows` names it.
 */
function buildGrid(
  column: EncodedColumn,
  height: number,
  build: (value: string, row: Int32Array, grid: GridWriter) => boolean,
  fail: (count: number, place: string) => never,
  rows: RowNames,
  top = '*',
): Grid {
  const dict = column.dictionary;
  const grid = new GridWriter(height, dict.length, true);
  const topCode = grid.code(top);
  const star = grid.code('*');
  const levels = new Int32Array(height + 1);
  const refused: number[] = [];
  for (let code = 0; code < dict.length; code++) {
    const value = dict[code]!;
    if (isMissing(value)) {
      levels.fill(grid.code(value), 1, height);
      levels[height] = topCode;
    } else if (!build(value, levels, grid)) {
      refused.push(code);
      levels.fill(star, 1, height);
      levels[height] = topCode;
    }
    for (let l = 1; l <= height; l++) grid.cells[l]![code] = levels[l]!;
  }
  grid.refused = { codes: Int32Array.from(refused), fail };
  checkRefused(grid, column, rows);
  // The values last, once every label above them is known: a value equal to one shares its code.
  const values = grid.cells[0]!;
  for (let code = 0; code < dict.length; code++) values[code] = grid.codeOfValue(dict[code]!);
  return grid;
}

/**
 * Fails when rows of `column` hold values its builder refused (`grid`'s, made for the same
 * dictionary): how many distinct ones, and the first row of the first in dictionary order, as
 * `rows` (its table's) names it.
 */
export function checkRefused(grid: Grid, column: EncodedColumn, rows: RowNames = columnRows): void {
  if (!grid.refused || grid.refused.codes.length === 0) return;
  const { codes, fail } = grid.refused;
  const used = new Uint8Array(column.dictionary.length);
  for (let r = 0; r < column.codes.length; r++) used[column.codes[r]!] = 1;
  let count = 0;
  let first = -1;
  for (const code of codes) if (used[code] && count++ === 0) first = code;
  if (count > 0) fail(count, rows(column.name, [column.codes.indexOf(first)]));
}

/**
 * For a builder's refusal: cells such as NA are texts an export writes for a missing value, which
 * the attribute's `missing` list reads as empty cells (never named here: no value of the table).
 */
const MISSING_TEXTS_HINT =
  'if they are texts for a missing value (NA, NULL, -), list them under the attribute\'s "missing" ' +
  '(e.g. "missing": ["NA"]) to read them as empty cells, released as the missing value with "format": { "emptyCells": "value" }';

/** "1 distinct value is" / "3 distinct values are", for messages that count without naming. */
function distinct(count: number): string {
  return count === 1 ? '1 distinct value is' : `${count} distinct values are`;
}

/**
 * Numeric intervals `[lo,hi)` of growing widths, then `*`. With bottom/top coding, values
 * below `bottom` become `<bottom` and values at or above `top` become `>=top` at every level
 * below the top, and intervals are clipped to [bottom, top). Worked out exactly: in plain
 * numbers for whole values under whole settings (`wholeIntervals`), else in decimal units
 * (`exactIntervals`).
 */
export function intervalGrid(
  column: EncodedColumn,
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
  rows: RowNames = columnRows,
): Grid {
  const whole = wholeIntervals(widths, bottom, top);
  const exact = exactIntervals(widths, bottom, top);
  // Per width, the code of each interval by its start: a label is made and interned once.
  const codes = widths.map(() => new Map<number, number>());
  const starts = new Float64Array(widths.length);
  const build = (value: string, row: Int32Array, grid: GridWriter): boolean => {
    const x = whole?.read(value);
    let placed = x !== undefined;
    for (let i = 0; placed && i < widths.length; i++) {
      const start = whole!.start(x!, i);
      if (start === undefined) placed = false;
      else starts[i] = start;
    }
    if (placed) {
      for (let i = 0; i < widths.length; i++) {
        const start = starts[i]!;
        let code = codes[i]!.get(start);
        if (code === undefined) codes[i]!.set(start, (code = grid.code(whole!.label(start, i))));
        row[i + 1] = code;
      }
      row[widths.length + 1] = grid.code('*');
      return true;
    }
    const labels = exact(value);
    if (labels === undefined) return false;
    for (let i = 0; i < labels.length; i++) row[i + 1] = grid.code(labels[i]!);
    row[widths.length + 1] = grid.code('*');
    return true;
  };
  return buildGrid(
    column,
    widths.length + 1,
    build,
    (count, place) => {
      // Numbers such as 3,75 are the spec's missing format.decimal, not texts to fix.
      const commas = commaNumbers(column.dictionary.filter((v) => !isMissing(v)));
      throw new HierarchyError(
        'E_HIERARCHY_NUMERIC',
        `${place}, column '${column.name}': not a number, but its hierarchy is an intervals builder` +
          (count > 1 ? ` (${distinct(count)} not numbers)` : '') +
          (commas ? '; its values are written with decimal commas (as 3,75)' : ''),
        commas
          ? 'set "format": { "decimal": "," } in the spec to read numbers written with decimal commas (3,75 or 1.234,5)'
          : `${MISSING_TEXTS_HINT}; use a hierarchy file or { "groups": … } for non-numeric columns, or fix the values`,
      );
    },
    rows,
  );
}

/** A value's interval labels, one per width (below the top `*`); undefined when it is not a number. */
export type IntervalLabels = (value: string) => string[] | undefined;

/**
 * Intervals in whole units of the settings' finest decimal (src/util/decimal.ts), from each
 * value's text: a float division puts `0.3` in `[0.25,0.3)` at width 0.05.
 */
export function exactIntervals(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): IntervalLabels {
  // At this scale every setting is whole, so a value rounded down to it lands in the same intervals.
  const scale = commonScale([...widths, bottom, top]);
  const units = (n: number) => unitsAtOrBelow(String(n), scale)!;
  const w = widths.map(units);
  const b = bottom === undefined ? undefined : units(bottom);
  const t = top === undefined ? undefined : units(top);
  const below = `<${b === undefined ? '' : formatUnits(b, scale)}`;
  const above = `>=${t === undefined ? '' : formatUnits(t, scale)}`;
  return (value) => {
    const x = unitsAtOrBelow(value, scale);
    if (x === undefined) return undefined;
    if (b !== undefined && x < b) return w.map(() => below);
    if (t !== undefined && x >= t) return w.map(() => above);
    return w.map((width) => {
      const rest = x % width;
      const lo = x - (rest < 0n ? rest + width : rest);
      const hi = lo + width;
      return `[${formatUnits(b !== undefined && b > lo ? b : lo, scale)},${formatUnits(t !== undefined && t < hi ? t : hi, scale)})`;
    });
  };
}

/** Whole intervals in plain numbers (`wholeIntervals`): a value read, its interval per width, a label. */
export interface WholeIntervals {
  /** The whole number a value's text is, or undefined when the exact way must place it. */
  readonly read: (value: string) => number | undefined;
  /**
   * The start of x's interval at width i (a multiple of the width), -Infinity below bottom,
   * Infinity at or above top; undefined when the interval starts or ends at ±2^53 or past it.
   */
  readonly start: (x: number, i: number) => number | undefined;
  /** The label of the interval at width i from `start` (clipped to bottom and top). */
  readonly label: (start: number, i: number) => string;
}

/** A whole number's text (blanks around, a sign, digits): no point, no exponent, no other base. */
const WHOLE_TEXT = /^\s*[+-]?\d+\s*$/;

/**
 * The fast path of `exactIntervals`, in plain numbers: undefined unless every setting is a
 * whole number within ±2^53. `read` leaves to `exactIntervals` a value it cannot place exactly:
 * a decimal or exponent text such as `29.999999999999999` (which Number() rounds to a whole
 * 30), or a magnitude of 2^53 or more. A whole number below 2^53 is exact as a double, and so
 * is each sum and remainder here whose result is (one rounded to 2^53 or past it fails the
 * range check).
 */
export function wholeIntervals(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): WholeIntervals | undefined {
  const whole = (n: number | undefined) => n === undefined || (Number.isInteger(n) && Math.abs(n) <= 2 ** 53);
  if (!widths.every(whole) || !whole(bottom) || !whole(top)) return undefined;
  return {
    read: (value) => {
      if (!WHOLE_TEXT.test(value)) return undefined;
      const x = Number(value);
      return Number.isSafeInteger(x) ? x : undefined;
    },
    start: (x, i) => {
      if (bottom !== undefined && x < bottom) return -Infinity;
      if (top !== undefined && x >= top) return Infinity;
      const width = widths[i]!;
      const rest = x % width;
      const lo = rest < 0 ? x - rest - width : x - rest;
      return Number.isSafeInteger(lo) && Number.isSafeInteger(lo + width) ? lo : undefined;
    },
    label: (lo, i) => {
      if (lo === -Infinity) return `<${bottom}`;
      if (lo === Infinity) return `>=${top}`;
      const hi = lo + widths[i]!;
      return `[${bottom !== undefined && bottom > lo ? bottom : lo},${top !== undefined && top < hi ? top : hi})`;
    },
  };
}

/**
 * Masking: right `47906` → `4790*` → `479**` → … → `*`; left `47906` → `*7906` → … → `*`.
 * A label's next level follows from the label alone, so each label is masked once. A mask
 * hides whole characters as a reader sees them (`characters`): an emoji, or a letter with its
 * accents, is one `*`.
 */
export function maskGrid(column: EncodedColumn, direction: 'right' | 'left'): Grid {
  const height = maskHeight(column.dictionary);
  /** next[l].get(code of a level-l label) = the code of its label at level l + 1. */
  const next = Array.from({ length: height }, () => new Map<number, number>());
  const mask = (chars: string | string[], level: number) => {
    const n = chars.length;
    if (level >= n || level === height) return '*';
    const kept = direction === 'right' ? chars.slice(0, n - level) : chars.slice(level);
    const text = typeof kept === 'string' ? kept : kept.join('');
    const stars = '*'.repeat(level);
    return direction === 'right' ? text + stars : stars + text;
  };
  const build = (value: string, row: Int32Array, grid: GridWriter): boolean => {
    const chars = characters(value);
    row[1] = grid.code(mask(chars, 1));
    for (let l = 1; l < height; l++) {
      const below = row[l]!;
      let above = next[l]!.get(below);
      if (above === undefined) next[l]!.set(below, (above = grid.code(mask(chars, l + 1))));
      row[l + 1] = above;
    }
    return true;
  };
  return buildGrid(
    column,
    height,
    build,
    () => {
      throw new Error('a mask takes every value');
    },
    columnRows,
  );
}

/** Levels of a mask hierarchy: the longest value's length in characters (at least one). */
export function maskHeight(values: readonly string[]): number {
  let height = 1;
  for (const v of values) {
    // A value's characters are at most its code units: only a longer one can raise the height.
    if (v.length > height) height = Math.max(height, characters(v).length);
  }
  return height;
}

/** Printable ASCII: each code unit is a character of its own (the fast path for codes and postcodes). */
const ASCII = /^[\x20-\x7e]*$/;
let graphemes: Intl.Segmenter | undefined;

/**
 * A value's characters as a reader sees them (Unicode grapheme clusters): the value itself when
 * it is printable ASCII, else its clusters, so that a mask never cuts an emoji's surrogate pair
 * (leaving U+FFFD in the release) nor leaves an accent without its letter.
 */
function characters(value: string): string | string[] {
  if (ASCII.test(value)) return value;
  graphemes ??= new Intl.Segmenter(undefined, { granularity: 'grapheme' });
  return Array.from(graphemes.segment(value), (s) => s.segment);
}

/** Whether a date format has two fields with no separator between them (`YYYYMMDD`, `DDMMYYYY`). */
function joinsFields(format: string): boolean {
  return /(YYYY|MM|DD)(YYYY|MM|DD)/.test(format);
}

/**
 * Compiles a date format (YYYY, MM, DD and separators) to a pattern capturing year, month, day.
 * A month or day takes one or two digits between separators (`2021-3-5`), and exactly two next
 * to another field: `2020111` under `YYYYMMDD` is as much 2020-11-1 as 2020-1-11.
 */
function datePattern(format: string): { re: RegExp; order: ('YYYY' | 'MM' | 'DD')[] } {
  const order: ('YYYY' | 'MM' | 'DD')[] = [];
  const source = format.replace(/YYYY|MM|DD|[^YMD]/g, (token, at: number) => {
    if (token === 'YYYY' || token === 'MM' || token === 'DD') {
      order.push(token);
      const joined = /[YMD]/.test(format[at - 1] ?? '') || /[YMD]/.test(format[at + token.length] ?? '');
      return token === 'YYYY' ? '(\\d{4})' : joined ? '(\\d{2})' : '(\\d{1,2})';
    }
    return token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  // A time of day may follow (2021-03-15T10:30:00Z, as Arrow, Parquet and Excel timestamps are
  // read): the date alone is generalized.
  const time = '(?:[T ](?:[01]\\d|2[0-3]):[0-5]\\d(?::[0-5]\\d(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}(?::?\\d{2})?)?)?';
  return { re: new RegExp(`^${source}${time}$`), order };
}

/** A date's label at a level: `2021-03`, `2021-Q1`, `2021`, `2020-2029`. */
function dateLabel(year: number, month: number, level: DateLevel): string {
  const yyyy = String(year).padStart(4, '0');
  switch (level) {
    case 'month':
      return `${yyyy}-${String(month).padStart(2, '0')}`;
    case 'quarter':
      return `${yyyy}-Q${Math.ceil(month / 3)}`;
    case 'year':
      return yyyy;
    case 'decade': {
      const from = Math.floor(year / 10) * 10;
      return `${String(from).padStart(4, '0')}-${String(from + 9).padStart(4, '0')}`;
    }
  }
}

/**
 * Dates in `format` climb `levels` (e.g. month → year → decade), then `*`. The labels depend
 * on the year and month alone: made once per month met.
 */
export function dateGrid(
  column: EncodedColumn,
  format: string,
  levels: readonly DateLevel[],
  rows: RowNames = columnRows,
): Grid {
  const { re, order } = datePattern(format);
  const [y, m, d] = (['YYYY', 'MM', 'DD'] as const).map((token) => order.indexOf(token) + 1) as [
    number,
    number,
    number,
  ];
  const months = new Map<number, Int32Array>();
  const build = (value: string, row: Int32Array, grid: GridWriter): boolean => {
    const match = re.exec(value.trim());
    if (match === null) return false;
    const year = Number(match[y]);
    const month = Number(match[m]);
    const day = Number(match[d]);
    // Day 31 of a 30-day month (or 29 February of a common year) rolls over: not a date.
    const valid =
      month >= 1 && month <= 12 && day >= 1 && new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
    if (!valid) return false;
    let labels = months.get(year * 100 + month);
    if (labels === undefined) {
      labels = Int32Array.from([...levels.map((level) => dateLabel(year, month, level)), '*'], (label) =>
        grid.code(label),
      );
      months.set(year * 100 + month, labels);
    }
    row.set(labels, 1);
    return true;
  };
  return buildGrid(
    column,
    levels.length + 1,
    build,
    (count, place) => {
      throw new HierarchyError(
        'E_HIERARCHY_DATE',
        `column '${column.name}': ${distinct(count)} not a date in the format '${format}' of its date builder (the first in ${place})` +
          (joinsFields(format)
            ? `; a format without separators takes only dates of its full length (${format.length} characters)`
            : ''),
        (joinsFields(format)
          ? 'pad months and days to two digits (2020-01-11 as 20200111: a shorter value can be read two ways), ' +
            'or write the dates with separators and set "date" to that format (e.g. "YYYY-MM-DD"); or fix the values'
          : 'fix the values, or set "date" to the format the column uses (YYYY, MM and DD with separators, e.g. "DD/MM/YYYY")') +
          `; ${MISSING_TEXTS_HINT}` +
          "; an Excel workbook's date cells read as YYYY-MM-DD, whatever format the sheet shows them in",
      );
    },
    rows,
  );
}

/**
 * Categories grouped by mappings, one per level: `levels[0]` maps values to level-1 labels,
 * `levels[l]` maps level-l labels to level l+1. A top `*` is added unless the last mapping
 * already leads to one label.
 */
export function groupGrid(
  column: EncodedColumn,
  levels: readonly Readonly<Record<string, string>>[],
  rows: RowNames = columnRows,
): Grid {
  const tops = new Set(Object.values(levels.at(-1)!));
  const withTop = tops.size > 1;
  let failedLevel = levels.length;
  const build = (value: string, row: Int32Array, grid: GridWriter): boolean => {
    let label = value;
    for (const [l, mapping] of levels.entries()) {
      if (!Object.hasOwn(mapping, label)) {
        failedLevel = Math.min(failedLevel, l);
        return false;
      }
      row[l + 1] = grid.code((label = mapping[label]!));
    }
    if (withTop) row[levels.length + 1] = grid.code('*');
    return true;
  };
  return buildGrid(
    column,
    levels.length + (withTop ? 1 : 0),
    build,
    (count, place) => {
      const l = failedLevel;
      throw new HierarchyError(
        'E_HIERARCHY_VALUE',
        `column '${column.name}': ${distinct(count)} ${l === 0 ? 'not a key' : 'led to labels that are not keys'} ` +
          `of groups[${l}] of its groups builder (the first in ${place})`,
        `add ${l === 0 ? 'every value of the column' : `every label of groups[${l - 1}]`} as a key of groups[${l}]`,
      );
    },
    rows,
    withTop ? '*' : [...tops][0]!,
  );
}
