/**
 * NCP read from released strings, one label at a time: what `evaluate` measures on any table
 * and what the release audit measures on ppdp's own releases.
 */
import { maxOf, minOf, widthOver } from '../util/extent.ts';
import { isNumber } from '../util/numbers.ts';

/**
 * A number as a range label writes it, with an exponent too: JavaScript writes numbers below
 * 1e-6 so, as Mondrian's ranges of very small numbers are (`[3.35e-7-5.06e-7]`), and other
 * tools write `2.5E+3`.
 */
const NUMBER = String.raw`-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?`;
const RANGE = new RegExp(String.raw`^\[?\s*(${NUMBER})\s*(?:-|,|;|\.\.)\s*(${NUMBER})\s*[\])[]?$`);

/**
 * The loss of each released string of a QI column whose original `values` (the distinct ones
 * present) are given: an original value loses 0, `*` loses 1, a hierarchy label covering c of
 * the d values (c − 1)/(d − 1), a numeric range `[lo-hi]` (also `[lo, hi[` and `lo-hi`, its
 * numbers with an exponent too) (hi − lo)/(max − min) of the numbers among the values; null for
 * a string none of these explain.
 * The missing value (an empty cell) is a value of its own (it loses 0 kept as it is, and counts
 * in d), but not a number: a range's width is over the numbers alone.
 */
export function labelLoss(
  values: readonly string[],
  hierarchyRows: readonly (readonly string[])[] | undefined,
): (label: string) => number | null {
  const known = new Set(values);
  const d = values.length;
  const covers = new Map<string, number>();
  for (const row of hierarchyRows ?? []) {
    if (!known.has(row[0]!)) continue;
    // A label repeated up a row (a value kept at a level) covers the value once: no Set per row,
    // as a dictionary of 10^5 postcodes has as many rows.
    for (let i = 1; i < row.length; i++) {
      const label = row[i]!;
      if (row.indexOf(label, 1) === i) covers.set(label, (covers.get(label) ?? 0) + 1);
    }
  }
  // The numbers' span, read once a range label asks for it.
  let extent: { min: number; max: number } | undefined;
  const extentOf = () => {
    if (!extent) {
      // Not the empty cell: Number('') is 0, it would stretch the span down to 0.
      const numbers = values.filter(isNumber).map(Number);
      extent = numbers.length > 0 ? { min: minOf(numbers), max: maxOf(numbers) } : { min: 0, max: 0 };
    }
    return extent;
  };
  return (v) => {
    if (known.has(v)) return 0;
    if (v === '*') return 1;
    const c = covers.get(v);
    if (c !== undefined) return d > 1 ? (c - 1) / (d - 1) : 0;
    const range = RANGE.exec(v);
    const { min, max } = range ? extentOf() : { min: 0, max: 0 };
    if (range && max > min) {
      const [width, span] = widthOver(Number(range[1]), Number(range[2]), min, max);
      return Math.min(1, Math.max(0, width / span));
    }
    return null;
  };
}
