/**
 * `format.decimal: ","`: numbers written with a decimal comma (3,75; 1.234,5) read with a
 * decimal point. It reads text cells only (a CSV's cells, an Arrow or Parquet text column, a
 * sheet's text cells): a number stored as a number has no separator to read (read.ts, xlsx.ts).
 */
import { InputError } from '../errors.ts';
import { isNumber } from '../util/numbers.ts';

/**
 * A number with a decimal comma, as many locales write it: 3,75, and with its thousands grouped
 * by points before the comma, as those locales' spreadsheets export them: 1.234,5. A first
 * group of thousands never starts with 0.
 */
const DECIMAL_COMMA = /^\s*[+-]?(?:\d+|[1-9]\d{0,2}(?:\.\d{3})+),\d+\s*$/;

/** Whether a cell is a number written with a decimal comma (3,75 or 1.234,5). */
export function isDecimalComma(value: string): boolean {
  return DECIMAL_COMMA.test(value);
}

/** A number as written, or with a decimal comma (3,75 or 1.234,5). */
export function isNumberOrDecimalComma(value: string): boolean {
  return isNumber(value) || isDecimalComma(value);
}

/** Numbers one of which has a decimal comma (3,75; or 1,2, a list of answers). */
export function commaNumbers(values: readonly string[]): boolean {
  return values.some(isDecimalComma) && values.every(isNumberOrDecimalComma);
}

/**
 * A whole number with its thousands grouped by points (3.000, 1.234.567): in a table written
 * with decimal commas, a point between groups of three digits groups thousands. `0.125` is not
 * one: no one groups thousands after a 0.
 */
const GROUPED_WHOLE = /^\s*[+-]?[1-9]\d{0,2}(?:\.\d{3})+\s*$/;

/** A number written with a decimal point (0.5, -12.25, 1.5e3). */
const POINT_NUMBER = /^\s*[+-]?\d*\.\d+(?:[eE][+-]?\d+)?\s*$/;

/**
 * A cell's text with a decimal comma made a decimal point and its grouping points dropped
 * (1.234,5 → 1234.5; 3.000 → 3000); other cells as they are (3.75 stays a decimal point).
 */
export function withDecimalPoint(value: string): string {
  if (DECIMAL_COMMA.test(value)) return value.replaceAll('.', '').replace(',', '.');
  return GROUPED_WHOLE.test(value) ? value.replaceAll('.', '') : value;
}

/**
 * What a cell's points are where commas are decimal: none it reads by (NO_POINT: no point, or
 * the grouping points of 1.234,5, which its comma makes plain), points that group thousands
 * (GROUPED: 3.000, 2.375, read as 3000 and 2375), or a decimal point (DECIMAL_POINT: 0.125,
 * 1.5, which no grouping writes).
 */
export const NO_POINT = 0;
export const GROUPED = 1;
export const DECIMAL_POINT = 2;
export type Points = typeof NO_POINT | typeof GROUPED | typeof DECIMAL_POINT;

export function pointsOf(value: string): Points {
  if (GROUPED_WHOLE.test(value)) return GROUPED;
  return POINT_NUMBER.test(value) ? DECIMAL_POINT : NO_POINT;
}

/**
 * Where one read (a piece of a larger input) first saw each kind of point in a column, for a
 * check of the pieces together (Combine): `index` among the columns read, `column` as
 * messages name it, and each first place as a row of the read (0-based from its first row,
 * which only the reader of the whole input can name) or as the read named it (a sheet's cell).
 */
export interface PointsSeen {
  readonly index: number;
  readonly column: string;
  readonly grouped?: number | string;
  readonly decimal?: number | string;
}

/**
 * One column's points under `format.decimal: ","`: 1.500 reads as 1500 only in a column whose
 * other numbers agree that its points group thousands. A column that also holds a number with
 * a decimal point (0.125, 1.5) is written with decimal points, and its 1.500 is most likely
 * 1.5: such a column is refused, naming a row of each, never read either way in silence. An
 * input read in pieces side by side checks each piece's column here, and the pieces' together
 * from what each saw (`seen`, checkPiecesPoints).
 */
export class ColumnPoints {
  private grouped: { place: string; at: number | string } | undefined;
  private decimal: { place: string; at: number | string } | undefined;

  /** `column`: how messages name the column (`column "dose"`, `column 3`), when a place does not. */
  constructor(private readonly column: string) {}

  /** Whether the first place of a cell with these points is still to be found. */
  wants(points: Points): boolean {
    return (
      (points === GROUPED && this.grouped === undefined) ||
      (points === DECIMAL_POINT && this.decimal === undefined)
    );
  }

  /**
   * Notes the place (a row or cell, as messages name it) of the column's first cell with these
   * points, and `at`, its row in the read (PointsSeen; else the place); throws once the column
   * holds both.
   * @throws InputError E_INPUT_DECIMAL
   */
  saw(points: Points, place: string, at: number | string = place): void {
    if (points === GROUPED) this.grouped ??= { place, at };
    else if (points === DECIMAL_POINT) this.decimal ??= { place, at };
    if (this.grouped === undefined || this.decimal === undefined) return;
    throw new InputError(
      'E_INPUT_DECIMAL',
      `${this.grouped.place}${this.column === '' ? '' : `, ${this.column}`}: with format.decimal "," this number reads as a whole number with its thousands grouped by points (as 1.500 reads as 1500), but ${this.decimal.place} holds a number with a decimal point (as 0.5), so the column's points may be decimal points`,
      'if the file writes numbers with decimal points, leave format.decimal out; else write the column with decimal commas (1,5) and its whole numbers without grouping points (1500)',
    );
  }

  /** What the read saw of the column (it is column `index` of the read), if a point. */
  seen(index: number): PointsSeen | undefined {
    if (!this.grouped && !this.decimal) return undefined;
    return {
      index,
      column: this.column,
      ...(this.grouped ? { grouped: this.grouped.at } : {}),
      ...(this.decimal ? { decimal: this.decimal.at } : {}),
    };
  }
}

/**
 * The columns' points over an input read in pieces (each piece checked its own cells): a
 * column with grouped thousands in one piece and a decimal point in another is refused as one
 * read would refuse it. `pieces`, in order: what each saw (PointsSeen), and how its rows are
 * named in messages.
 * @throws InputError E_INPUT_DECIMAL
 */
export function checkPiecesPoints(
  pieces: readonly { seen: readonly PointsSeen[]; place: (row: number) => string }[],
): void {
  const columns = new Map<number, ColumnPoints>();
  for (const { seen, place } of pieces) {
    for (const s of seen) {
      const points = columns.get(s.index) ?? new ColumnPoints(s.column);
      columns.set(s.index, points);
      for (const [p, at] of [
        [GROUPED, s.grouped],
        [DECIMAL_POINT, s.decimal],
      ] as const) {
        if (at !== undefined && points.wants(p)) points.saw(p, typeof at === 'number' ? place(at) : at);
      }
    }
  }
}
