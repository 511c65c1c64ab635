/**
 * The verifier's own reading of a hierarchy: for each value of a column, the labels it takes
 * at every level, worked out from the definitions (docs/definitions.md, "Hierarchies") and the
 * spec alone. It shares no code with the builders in src/hierarchy/, so a builder that labels
 * a value wrongly releases a table this reading does not regenerate, and the release fails.
 *
 * A value this reading cannot place (not a number under intervals, not a date under a date
 * format, not a key of a grouping) gets `*` at every level above itself: the release could
 * only hold it there.
 */
import { readHierarchyCells } from '../data/hierarchy-file.ts';
import { type EncodedColumn, isMissing } from '../data/table.ts';
import type { DateLevel, HierarchySpec } from '../release-spec/spec.ts';
import { PerDictionary } from '../util/per-dictionary.ts';

/** `rows[i] = [value, label at level 1, …, top]`, one per value of the column's dictionary (file rows first). */
export type HierarchyRows = string[][];

export function verifierHierarchyRows(column: EncodedColumn, spec: HierarchySpec): HierarchyRows {
  if (spec.kind === 'file') return fileRows(column, spec.path);
  // The same for every shard of one input (frozen: each caller reads the one kept).
  return builtRows.get(JSON.stringify(spec), column.dictionary, () => {
    const height = heightOf(column, spec);
    const top = spec.kind === 'groups' ? groupsTop(spec.levels) : '*';
    const rows = column.dictionary.map((value) => {
      const above = isMissing(value) ? undefined : labelsAbove(value, spec, height);
      // A missing value stays itself below the top; an unplaceable one is `*` all the way up.
      const filler = isMissing(value) ? value : '*';
      return Object.freeze(
        above ? [value, ...above] : [value, ...Array.from({ length: height - 1 }, () => filler), top],
      );
    });
    return Object.freeze(rows) as HierarchyRows;
  });
}

/** A builder's rows per dictionary: enough for a release's hierarchies. */
const builtRows = new PerDictionary<HierarchyRows>(8);

/** Levels above the values: one per width/level/mapping plus the top `*` (a grouping may end at one label). */
function heightOf(column: EncodedColumn, spec: Exclude<HierarchySpec, { kind: 'file' }>): number {
  switch (spec.kind) {
    case 'intervals':
      return spec.widths.length + 1;
    case 'date':
      return spec.levels.length + 1;
    case 'groups':
      return spec.levels.length + (lastLabels(spec.levels).size > 1 ? 1 : 0);
    case 'mask': {
      let longest = 1;
      for (const v of column.dictionary) if (v.length > longest) longest = v.length;
      return longest;
    }
  }
}

function labelsAbove(
  value: string,
  spec: Exclude<HierarchySpec, { kind: 'file' }>,
  height: number,
): string[] | undefined {
  switch (spec.kind) {
    case 'intervals':
      return intervalLabels(value, spec.widths, spec.bottom, spec.top);
    case 'mask':
      return maskLabels(value, spec.direction, height);
    case 'date':
      return dateLabels(value, spec.format, spec.levels);
    case 'groups':
      return groupLabels(value, spec.levels);
  }
}

/** `[lo,hi)` per width (lo a multiple of the width), clipped to [bottom, top); `<bottom`, `>=top` outside. */
function intervalLabels(
  value: string,
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): string[] | undefined {
  const x = Number(value);
  if (!Number.isFinite(x)) return undefined;
  let label: (w: number) => string;
  if (bottom !== undefined && x < bottom) label = () => `<${bottom}`;
  else if (top !== undefined && x >= top) label = () => `>=${top}`;
  else {
    label = (w) => {
      const start = w * Math.floor(x / w);
      const lo = bottom === undefined ? start : Math.max(bottom, start);
      const hi = top === undefined ? start + w : Math.min(top, start + w);
      return `[${lo},${hi})`;
    };
  }
  return [...widths.map(label), '*'];
}

/** Level l hides l characters (from the right or the left); a value with nothing left to show is `*`. */
function maskLabels(value: string, direction: 'right' | 'left', height: number): string[] {
  const labels: string[] = [];
  for (let hidden = 1; hidden <= height; hidden++) {
    if (hidden === height || hidden >= value.length) {
      labels.push('*');
      continue;
    }
    const kept = direction === 'right' ? value.substring(0, value.length - hidden) : value.substring(hidden);
    labels.push(direction === 'right' ? kept + '*'.repeat(hidden) : '*'.repeat(hidden) + kept);
  }
  return labels;
}

/** A date in `format` (YYYY, MM, DD and literal separators) labelled at each level, then `*`. */
function dateLabels(value: string, format: string, levels: readonly DateLevel[]): string[] | undefined {
  const parts = parseDate(value.trim(), format);
  if (!parts) return undefined;
  const [year, month] = parts;
  const four = (n: number) => n.toString().padStart(4, '0');
  const labelAt = (level: DateLevel): string => {
    if (level === 'year') return four(year);
    if (level === 'month') return `${four(year)}-${month.toString().padStart(2, '0')}`;
    if (level === 'quarter') return `${four(year)}-Q${Math.floor((month - 1) / 3) + 1}`;
    const decade = year - (year % 10);
    return `${four(decade)}-${four(decade + 9)}`;
  };
  return [...levels.map(labelAt), '*'];
}

/** [year, month, day] when `text` is a real calendar date written in `format`. */
function parseDate(text: string, format: string): [number, number, number] | undefined {
  const found: Record<string, number> = {};
  let at = 0;
  for (let f = 0; f < format.length; ) {
    const token = ['YYYY', 'MM', 'DD'].find((t) => format.startsWith(t, f));
    if (!token) {
      if (text[at] !== format[f]) return undefined;
      at++;
      f++;
      continue;
    }
    const digits = /^\d*/.exec(text.slice(at))![0].length;
    // The year takes four digits; a month or day one or two (two when two are there).
    const taken = token === 'YYYY' ? 4 : Math.min(2, digits);
    if (taken === 0 || digits < taken) return undefined;
    found[token] = Number(text.slice(at, at + taken));
    at += taken;
    f += token.length;
  }
  // What follows the date may only be a time of day (hours to 23, minutes and seconds to 59).
  if (
    at !== text.length &&
    !/^[T ]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d+)?)?(Z|[+-]\d\d(:?\d\d)?)?$/.test(text.slice(at))
  )
    return undefined;
  const { YYYY: year, MM: month, DD: day } = found as { YYYY: number; MM: number; DD: number };
  const daysIn = [
    31,
    year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28,
    31,
    30,
    31,
    30,
    31,
    31,
    30,
    31,
    30,
    31,
  ];
  if (!(month >= 1 && month <= 12 && day >= 1 && day <= daysIn[month - 1]!)) return undefined;
  return [year, month, day];
}

/** The labels a grouping's last mapping leads to: one is its top, several get a `*` above them. */
function lastLabels(levels: readonly Readonly<Record<string, string>>[]): Set<string> {
  return new Set(Object.values(levels[levels.length - 1]!));
}

function groupsTop(levels: readonly Readonly<Record<string, string>>[]): string {
  const last = lastLabels(levels);
  return last.size === 1 ? [...last][0]! : '*';
}

function groupLabels(
  value: string,
  levels: readonly Readonly<Record<string, string>>[],
): string[] | undefined {
  const labels: string[] = [];
  let current = value;
  for (const mapping of levels) {
    if (!Object.hasOwn(mapping, current)) return undefined;
    current = mapping[current]!;
    labels.push(current);
  }
  if (lastLabels(levels).size > 1) labels.push('*');
  return labels;
}

/**
 * A hierarchy file (`value;level1;…;top`), its cells read as CSV by the data layer (as the
 * verifier reads the staged release), plus a row for each missing value of the column it does
 * not list: itself up to the file's top.
 */
function fileRows(column: EncodedColumn, path: string): HierarchyRows {
  const rows = readHierarchyCells(path);
  const listed = new Set(rows.map((row) => row[0]));
  const height = (rows[0]?.length ?? 1) - 1;
  const top = rows[0]?.[height] ?? '*';
  for (const value of column.dictionary) {
    if (height > 0 && isMissing(value) && !listed.has(value)) {
      rows.push([value, ...Array.from({ length: height - 1 }, () => value), top]);
    }
  }
  return rows;
}
