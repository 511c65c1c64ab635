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
import { VerificationError } from '../errors.ts';
import type { DateLevel, HierarchySpec } from '../release-spec/spec.ts';
import { PerDictionary } from '../util/per-dictionary.ts';

/** `rows[i] = [value, label at level 1, …, top]`, one per value of the column's dictionary (file rows first). */
export type HierarchyRows = string[][];

export function verifierHierarchyRows(column: EncodedColumn, spec: HierarchySpec): HierarchyRows {
  if (spec.kind === 'file') return fileRows(column, spec.path);
  // The same for every shard of one input (frozen: each caller reads the one kept).
  return builtRows.get(JSON.stringify(spec), column.dictionary, () => {
    const height = heightOf(column, spec);
    const labelsAbove = labeller(spec, height);
    const top = spec.kind === 'groups' ? groupsTop(spec.levels) : '*';
    const rows = column.dictionary.map((value) => {
      const above = isMissing(value) ? undefined : labelsAbove(value);
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
      for (const v of column.dictionary) longest = Math.max(longest, clusters(v).length);
      return longest;
    }
  }
}

/** A value's labels above it, or undefined when this reading cannot place it. */
function labeller(
  spec: Exclude<HierarchySpec, { kind: 'file' }>,
  height: number,
): (value: string) => string[] | undefined {
  switch (spec.kind) {
    case 'intervals':
      return intervalReader(spec.widths, spec.bottom, spec.top);
    case 'mask':
      return (value) => maskLabels(value, spec.direction, height);
    case 'date':
      return (value) => dateLabels(value, spec.format, spec.levels);
    case 'groups':
      return (value) => groupLabels(value, spec.levels);
  }
}

/**
 * `[lo,hi)` per width (lo a multiple of the width), clipped to [bottom, top); `<bottom`, `>=top`
 * outside: in plain numbers when the value and the settings are whole (`wholeIntervalLabels`),
 * else exactly on the value's decimal text (`exactIntervalLabels`). Then each label is checked
 * to hold the value, by comparison with the bounds read back from the label's text, so that a
 * label arithmetic gets wrong (a float division puts 0.3 in [0.25,0.3) at width 0.05) fails here.
 */
function intervalReader(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): (value: string) => string[] | undefined {
  const whole = wholeIntervals(widths, bottom, top);
  const exact = exactIntervalLabels(widths, bottom, top);
  const bounds = new Map<string, [Decimal | undefined, Decimal | undefined]>();
  const boundsOf = (label: string) => {
    let found = bounds.get(label);
    if (!found) bounds.set(label, (found = labelBounds(label)));
    return found;
  };
  const fail = () => {
    throw new VerificationError(
      'E_VERIFY',
      'verification failed, nothing was published: an interval of a hierarchy builder does not hold a value it generalizes',
      'this is a bug in ppdp: please report it with the spec (not the data)',
    );
  };
  return (value) => {
    const n = wholeValue(value);
    const intervals = n === undefined ? undefined : whole?.(n);
    // Checked in numbers when every label's bounds read back as whole numbers below 2^53 (a
    // bound of ±2^53 does not: the decimal way labels and checks that value).
    if (intervals?.every((i) => i.lo !== undefined)) {
      for (const { lo, hi } of intervals) if (!(lo! <= n! && n! < hi!)) fail();
      return [...intervals.map((i) => i.label), '*'];
    }
    const labels = exact(value);
    if (!labels) return undefined;
    const x = exactDecimal(value)!;
    for (const label of labels) {
      const [lo, hi] = boundsOf(label);
      if (
        (lo === undefined && hi === undefined) ||
        (lo && compareDecimals(lo, x) > 0) ||
        (hi && compareDecimals(x, hi) >= 0)
      )
        fail();
    }
    return [...labels, '*'];
  };
}

/** The labels of a value below the top `*`, one per width, worked out exactly on its decimal text. */
export function exactIntervalLabels(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): (value: string) => string[] | undefined {
  const spec = (n: number) => exactDecimal(String(n))!;
  const b = bottom === undefined ? undefined : spec(bottom);
  const t = top === undefined ? undefined : spec(top);
  const ws = widths.map(spec);
  const belowLabel = b && `<${writeDecimal(b)}`;
  const aboveLabel = t && `>=${writeDecimal(t)}`;
  return (value) => {
    const x = exactDecimal(value);
    if (!x) return undefined;
    if (b && compareDecimals(x, b) < 0) return ws.map(() => belowLabel!);
    if (t && compareDecimals(x, t) >= 0) return ws.map(() => aboveLabel!);
    return ws.map((w) => {
      const start = multipleAtOrBelow(x, w);
      const end = decimal(start.digits + w.digits * pow10(w.exponent - start.exponent), start.exponent);
      const lo = b && compareDecimals(b, start) > 0 ? b : start;
      const hi = t && compareDecimals(t, end) < 0 ? t : end;
      return `[${writeDecimal(lo)},${writeDecimal(hi)})`;
    });
  };
}

/**
 * The number a value's text is when it is written as a whole number (a sign and digits, blanks
 * around) of magnitude below 2^53, which a double holds exactly; else undefined. `30.0`, `3e1`
 * and `29.999999999999999` (which Number() reads as 30) are not: they go the decimal way.
 */
function wholeValue(text: string): number | undefined {
  if (!/^\s*[+-]?\d+\s*$/.test(text)) return undefined;
  const n = Number(text);
  // A text of 2^53 or more reads as 2^53 or more: the check holds however Number() rounds.
  return Number.isSafeInteger(n) ? n : undefined;
}

/** An interval label and the bounds its text reads as, whole numbers (`labelWholeBounds`). */
interface WholeInterval {
  readonly label: string;
  readonly lo: number | undefined;
  readonly hi: number | undefined;
}

/**
 * The intervals of a whole value `x` (`wholeValue`'s) in plain numbers, or undefined when a
 * setting is not a whole number within ±2^53 (then for no value), or an interval of `x` ends at
 * or past ±2^53 (then for that value): the decimal way takes those. Each interval is made and
 * read back once, kept by its start.
 */
function wholeIntervals(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): ((x: number) => WholeInterval[] | undefined) | undefined {
  const settings = [...widths, bottom, top].filter((n) => n !== undefined);
  if (!settings.every((n) => Number.isInteger(n) && Math.abs(n) <= 2 ** 53)) return undefined;
  const interval = (label: string): WholeInterval => {
    const [lo, hi] = labelWholeBounds(label) ?? [];
    return { label, lo, hi };
  };
  const below = bottom === undefined ? undefined : interval(`<${String(bottom)}`);
  const above = top === undefined ? undefined : interval(`>=${String(top)}`);
  const kept = widths.map(() => new Map<number, WholeInterval>());
  return (x) => {
    if (below && x < bottom!) return widths.map(() => below);
    if (above && x >= top!) return widths.map(() => above);
    const intervals: WholeInterval[] = [];
    for (let i = 0; i < widths.length; i++) {
      const w = widths[i]!;
      // Each step is exact when its result is within ±2^53, which the check below confirms.
      const rest = x % w;
      const start = x - rest - (rest < 0 ? w : 0);
      const end = start + w;
      if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end)) return undefined;
      let found = kept[i]!.get(start);
      if (!found) {
        const lo = bottom !== undefined && bottom > start ? bottom : start;
        const hi = top !== undefined && top < end ? top : end;
        kept[i]!.set(start, (found = interval(`[${String(lo)},${String(hi)})`)));
      }
      intervals.push(found);
    }
    return intervals;
  };
}

/** `wholeIntervals`' labels of a value's text, or undefined when it leaves the value to the decimal way. */
export function wholeIntervalLabels(
  widths: readonly number[],
  bottom: number | undefined,
  top: number | undefined,
): (value: string) => string[] | undefined {
  const whole = wholeIntervals(widths, bottom, top);
  return (value) => {
    const n = wholeValue(value);
    return n === undefined ? undefined : whole?.(n)?.map((i) => i.label);
  };
}

/** A label's bounds (an open end infinite) when both are written as whole numbers below 2^53 (`wholeValue`). */
function labelWholeBounds(label: string): [number, number] | undefined {
  const range = /^\[([^,]+),([^)]+)\)$/.exec(label);
  if (range) {
    const lo = wholeValue(range[1]!);
    const hi = wholeValue(range[2]!);
    return lo === undefined || hi === undefined ? undefined : [lo, hi];
  }
  if (label.startsWith('>=')) {
    const lo = wholeValue(label.slice(2));
    return lo === undefined ? undefined : [lo, Infinity];
  }
  if (label.startsWith('<')) {
    const hi = wholeValue(label.slice(1));
    return hi === undefined ? undefined : [-Infinity, hi];
  }
  return undefined;
}

/**
 * The bounds a label `[lo,hi)`, `<b` or `>=t` reads as, from its text alone: [lo, hi) with an
 * open end undefined; both undefined when it is no interval label.
 */
function labelBounds(label: string): [Decimal | undefined, Decimal | undefined] {
  const range = /^\[([^,]+),([^)]+)\)$/.exec(label);
  if (range) {
    const lo = exactDecimal(range[1]!);
    const hi = exactDecimal(range[2]!);
    return lo && hi ? [lo, hi] : [undefined, undefined];
  }
  if (label.startsWith('>=')) return [exactDecimal(label.slice(2)), undefined];
  if (label.startsWith('<')) return [undefined, exactDecimal(label.slice(1))];
  return [undefined, undefined];
}

/** Whether interval label `label` holds the number `value` (its text), read from the label alone. */
export function intervalHolds(label: string, value: string): boolean {
  const x = exactDecimal(value);
  const [lo, hi] = labelBounds(label);
  if (!x || (lo === undefined && hi === undefined)) return false;
  return !(lo && compareDecimals(lo, x) > 0) && !(hi && compareDecimals(x, hi) >= 0);
}

/** A decimal `digits × 10^exponent`, exactly as written. */
interface Decimal {
  readonly digits: bigint;
  readonly exponent: number;
}

function decimal(digits: bigint, exponent: number): Decimal {
  return { digits, exponent };
}

/** Digits of a decimal's magnitude (0 for zero): with its exponent, its order of magnitude. */
function digitCount(d: Decimal): number {
  return d.digits === 0n ? 0 : (d.digits < 0n ? -d.digits : d.digits).toString().length;
}

const powers: bigint[] = [];
/** 10^k, kept for the small k that aligning exponents needs over and over. */
function pow10(k: number): bigint {
  if (k > 64) return 10n ** BigInt(k);
  let p = powers[k];
  if (p === undefined) powers[k] = p = 10n ** BigInt(k);
  return p;
}

/** The exact decimal a number's text is (as Number() reads it), or undefined if not a finite number. */
function exactDecimal(text: string): Decimal | undefined {
  const n = Number(text);
  if (!Number.isFinite(n)) return undefined;
  const pattern = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;
  const m = pattern.exec(text.trim()) ?? pattern.exec(String(n))!;
  const magnitude = BigInt(`${m[2] ?? ''}${m[3] ?? ''}` || '0');
  return decimal(m[1] === '-' ? -magnitude : magnitude, Number(m[4] ?? 0) - (m[3] ?? '').length);
}

/** Sign of a − b, by orders of magnitude first, so that a far exponent makes no huge number. */
function compareDecimals(a: Decimal, b: Decimal): number {
  const sa = a.digits > 0n ? 1 : a.digits < 0n ? -1 : 0;
  const sb = b.digits > 0n ? 1 : b.digits < 0n ? -1 : 0;
  if (sa !== sb || sa === 0) return sa - sb;
  // Exponents far apart: the orders of magnitude decide unless equal (aligning could be huge).
  if (Math.abs(a.exponent - b.exponent) > 64) {
    const orderA = digitCount(a) + a.exponent;
    const orderB = digitCount(b) + b.exponent;
    if (orderA !== orderB) return orderA > orderB ? sa : -sa;
  }
  const e = Math.min(a.exponent, b.exponent);
  const ua = a.digits * pow10(a.exponent - e);
  const ub = b.digits * pow10(b.exponent - e);
  return ua === ub ? 0 : ua > ub ? 1 : -1;
}

/** The largest multiple of `w` (w > 0) at or below `x`, at w's exponent or finer. */
function multipleAtOrBelow(x: Decimal, w: Decimal): Decimal {
  const e = Math.min(w.exponent, 0);
  const unit = w.digits * pow10(w.exponent - e);
  // x in units of 10^e, rounded down: the digits below 10^e cannot move it past a multiple of w.
  let scaled: bigint;
  if (x.exponent >= e) scaled = x.digits * pow10(x.exponent - e);
  else if (e - x.exponent > 64 && digitCount(x) + x.exponent <= e) scaled = x.digits < 0n ? -1n : 0n;
  else {
    const p = pow10(e - x.exponent);
    scaled = x.digits / p - (x.digits < 0n && x.digits % p !== 0n ? 1n : 0n);
  }
  const q = scaled / unit - (scaled < 0n && scaled % unit !== 0n ? 1n : 0n);
  return decimal(q * unit, e);
}

/** A decimal's plain text, without trailing zeros or exponent: `0.25`, `-30`. */
function writeDecimal(d: Decimal): string {
  const negative = d.digits < 0n;
  let text = (negative ? -d.digits : d.digits).toString();
  if (d.exponent >= 0) text = d.digits === 0n ? '0' : text + '0'.repeat(d.exponent);
  else {
    const padded = text.padStart(1 - d.exponent, '0');
    const point = padded.length + d.exponent;
    const fraction = padded.slice(point).replace(/0+$/, '');
    text = padded.slice(0, point) + (fraction ? `.${fraction}` : '');
  }
  return negative && text !== '0' ? `-${text}` : text;
}

/**
 * Level l hides l characters (from the right or the left), a character being a grapheme
 * cluster (an emoji, a letter with its accents); a value with nothing left to show is `*`.
 */
function maskLabels(value: string, direction: 'right' | 'left', height: number): string[] {
  const chars = clusters(value);
  const labels: string[] = [];
  for (let hidden = 1; hidden <= height; hidden++) {
    if (hidden === height || hidden >= chars.length) {
      labels.push('*');
      continue;
    }
    const part = direction === 'right' ? chars.slice(0, chars.length - hidden) : chars.slice(hidden);
    const kept = typeof part === 'string' ? part : part.join('');
    labels.push(direction === 'right' ? kept + '*'.repeat(hidden) : '*'.repeat(hidden) + kept);
  }
  return labels;
}

const segmenter = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/** A value's grapheme clusters; a value of plain ASCII letters, digits and signs is its own (one per code unit). */
function clusters(value: string): string | string[] {
  return /^[ -~]*$/.test(value) ? value : Array.from(segmenter.segment(value), (s) => s.segment);
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
    // The year takes four digits; a month or day one or two (two when two are there), and
    // exactly two when another field touches it (YYYYMMDD): a shorter date reads two ways.
    const touches = /[YMD]/.test(format[f - 1] ?? '') || /[YMD]/.test(format[f + token.length] ?? '');
    const taken = token === 'YYYY' || touches ? token.length : Math.min(2, digits);
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
