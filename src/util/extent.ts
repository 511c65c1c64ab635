/**
 * The smallest and largest of many numbers by a loop: `Math.min(...values)` passes every value
 * as an argument, which overflows the call stack past about 10⁵ of them (a dictionary of exact
 * amounts, the classes of a large release). The same answers (−0 taken as 0): `Infinity` and
 * `-Infinity` for none, NaN when one is NaN.
 */
export function minOf(values: Iterable<number>): number {
  let min = Number.POSITIVE_INFINITY;
  for (const v of values) {
    if (Number.isNaN(v)) return Number.NaN;
    if (v < min) min = v;
  }
  return min;
}

export function maxOf(values: Iterable<number>): number {
  let max = Number.NEGATIVE_INFINITY;
  for (const v of values) {
    if (Number.isNaN(v)) return Number.NaN;
    if (v > max) max = v;
  }
  return max;
}

/**
 * A range's width `hi − lo` and the span `max − min` it is measured against, as a pair whose
 * ratio is the range's share of the span. Where a difference passes the largest double (numbers
 * near ±1.8e308, where `hi − lo` is Infinity) both are taken of the numbers scaled by 2^-64:
 * exact for such numbers, and room for the width to be multiplied by a count of rows. So the
 * share stays finite, and the same for the method and its verifier.
 */
export function widthOver(lo: number, hi: number, min: number, max: number): [width: number, span: number] {
  const width = hi - lo;
  const span = max - min;
  if (Number.isFinite(width) && Number.isFinite(span)) return [width, span];
  const s = 2 ** -64;
  return [hi * s - lo * s, max * s - min * s];
}
