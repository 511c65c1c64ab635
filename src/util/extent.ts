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
