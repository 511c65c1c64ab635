/**
 * Hierarchy builders: a column's hierarchy as string rows `[value, level1, …, *]`, made from a
 * few settings instead of a file. Every builder keeps the missing value (an empty or blank
 * cell) as a value of its own that generalizes to itself up to the top `*`, as ARX does.
 * Errors name the column, the row and the setting, never a value.
 */

import type { EncodedColumn } from '../data/table.ts';
import { isMissing } from '../data/table.ts';
import { HierarchyError } from '../errors.ts';
import type { DateLevel } from '../spec/spec.ts';

/** Rows of a hierarchy as strings: `rows[r] = [value, level1, …, top]`. */
export type Rows = string[][];

/** The row of a missing value: itself at every level, `top` at the top (`height` levels above it). */
export function missingRow(value: string, height: number, top = '*'): string[] {
  return [value, ...new Array<string>(height - 1).fill(value), top];
}

/** The first row (1-based, after a CSV header) holding `code`: where an error points the user. */
function rowOf(column: EncodedColumn, code: number): number {
  return (column.firstRow ?? 0) + column.codes.indexOf(code) + 2;
}

/**
 * Rows of every dictionary value: `build` makes a value's levels above it, or returns null
 * when the builder cannot take it. Missing values keep themselves up to `*`. Values no row
 * holds (a shard's dictionary can list them) get an all-`*` row if `build` refuses them; if
 * rows hold refused values, `fail` gets how many distinct ones and the first row of one.
 */
function buildRows(
  column: EncodedColumn,
  height: number,
  build: (value: string) => string[] | null,
  fail: (count: number, row: number) => never,
  top = '*',
): Rows {
  const used = new Uint8Array(column.dictionary.length);
  for (let r = 0; r < column.codes.length; r++) used[column.codes[r]!] = 1;
  let refused = 0;
  let first = -1;
  const rows = column.dictionary.map((value, code) => {
    if (isMissing(value)) return missingRow(value, height, top);
    const levels = build(value);
    if (levels) return [value, ...levels];
    if (used[code] && refused++ === 0) first = code;
    return [value, ...new Array<string>(height - 1).fill('*'), top];
  });
  if (refused > 0) fail(refused, rowOf(column, first));
  return rows;
}

/** "1 distinct value is" / "3 distinct values are", for messages that count without naming. */
function distinct(count: number): string {
  return count === 1 ? '1 distinct value is' : `${count} distinct values are`;
}

/**
 * Numeric intervals `[lo,hi)` of growing widths, then `*`. With bottom/top coding, values
 * below `bottom` become `<bottom` and values at or above `top` become `>=top` at every level
 * below the top, and intervals are clipped to [bottom, top).
 */
export function intervalRows(
  column: EncodedColumn,
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): Rows {
  const build = (value: string): string[] | null => {
    const x = Number(value);
    if (!Number.isFinite(x)) return null;
    if (bottom !== undefined && x < bottom) return [...widths.map(() => `<${bottom}`), '*'];
    if (top !== undefined && x >= top) return [...widths.map(() => `>=${top}`), '*'];
    return [
      ...widths.map((w) => {
        const lo = Math.floor(x / w) * w;
        return `[${Math.max(lo, bottom ?? lo)},${Math.min(lo + w, top ?? lo + w)})`;
      }),
      '*',
    ];
  };
  return buildRows(column, widths.length + 1, build, (count, row) => {
    throw new HierarchyError(
      'E_HIERARCHY_NUMERIC',
      `column '${column.name}' row ${row}: not a number, but its hierarchy is an intervals builder` +
        (count > 1 ? ` (${distinct(count)} not numbers)` : ''),
      'use a hierarchy file or { "groups": … } for non-numeric columns, or fix the values',
    );
  });
}

/** Masking: right `47906` → `4790*` → `479**` → … → `*`; left `47906` → `*7906` → … → `*`. */
export function maskRows(column: EncodedColumn, direction: 'right' | 'left'): Rows {
  const height = maskHeight(column.dictionary);
  const build = (v: string) =>
    Array.from({ length: height }, (_, i) => {
      const level = i + 1;
      if (level >= v.length || level === height) return '*';
      const stars = '*'.repeat(level);
      return direction === 'right' ? v.slice(0, v.length - level) + stars : stars + v.slice(level);
    });
  return buildRows(column, height, build, () => {
    throw new Error('a mask takes every value');
  });
}

/** Levels of a mask hierarchy: the longest value's length (at least one). */
export function maskHeight(values: readonly string[]): number {
  return Math.max(1, ...values.map((v) => v.length));
}

/** Compiles a date format (YYYY, MM, DD and separators) to a pattern capturing year, month, day. */
function datePattern(format: string): { re: RegExp; order: ('YYYY' | 'MM' | 'DD')[] } {
  const order: ('YYYY' | 'MM' | 'DD')[] = [];
  const source = format.replace(/YYYY|MM|DD|[^YMD]/g, (token) => {
    if (token === 'YYYY' || token === 'MM' || token === 'DD') {
      order.push(token);
      return token === 'YYYY' ? '(\\d{4})' : '(\\d{1,2})';
    }
    return token.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  });
  return { re: new RegExp(`^${source}$`), order };
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

/** Dates in `format` climb `levels` (e.g. month → year → decade), then `*`. */
export function dateRows(column: EncodedColumn, format: string, levels: readonly DateLevel[]): Rows {
  const { re, order } = datePattern(format);
  const build = (value: string): string[] | null => {
    const m = re.exec(value.trim());
    const part = (token: 'YYYY' | 'MM' | 'DD') => Number(m?.[order.indexOf(token) + 1]);
    const year = part('YYYY');
    const month = part('MM');
    const day = part('DD');
    // Day 31 of a 30-day month (or 29 February of a common year) rolls over: not a date.
    const valid =
      m !== null &&
      month >= 1 &&
      month <= 12 &&
      day >= 1 &&
      new Date(Date.UTC(year, month - 1, day)).getUTCDate() === day;
    return valid ? [...levels.map((level) => dateLabel(year, month, level)), '*'] : null;
  };
  return buildRows(column, levels.length + 1, build, (count, row) => {
    throw new HierarchyError(
      'E_HIERARCHY_DATE',
      `column '${column.name}': ${distinct(count)} not a date in the format '${format}' of its date builder (the first in row ${row})`,
      'fix the values, or set "date" to the format the column uses (YYYY, MM and DD with separators, e.g. "DD/MM/YYYY")',
    );
  });
}

/**
 * Categories grouped by mappings, one per level: `levels[0]` maps values to level-1 labels,
 * `levels[l]` maps level-l labels to level l+1. A top `*` is added unless the last mapping
 * already leads to one label.
 */
export function groupRows(column: EncodedColumn, levels: readonly Readonly<Record<string, string>>[]): Rows {
  const tops = new Set(Object.values(levels.at(-1)!));
  const withTop = tops.size > 1;
  let failedLevel = levels.length;
  const build = (value: string): string[] | null => {
    const labels: string[] = [];
    let label = value;
    for (const [l, mapping] of levels.entries()) {
      if (!Object.hasOwn(mapping, label)) {
        failedLevel = Math.min(failedLevel, l);
        return null;
      }
      labels.push((label = mapping[label]!));
    }
    return withTop ? [...labels, '*'] : labels;
  };
  return buildRows(
    column,
    levels.length + (withTop ? 1 : 0),
    build,
    (count, row) => {
      const l = failedLevel;
      throw new HierarchyError(
        'E_HIERARCHY_VALUE',
        `column '${column.name}': ${distinct(count)} ${l === 0 ? 'not a key' : 'led to labels that are not keys'} ` +
          `of groups[${l}] of its groups builder (the first in row ${row})`,
        `add ${l === 0 ? 'every value of the column' : `every label of groups[${l - 1}]`} as a key of groups[${l}]`,
      );
    },
    withTop ? '*' : [...tops][0]!,
  );
}
