/** Privacy metrics over released classes (docs/definitions.md §6): class-size histogram, prosecutor risk. */
import type { HistogramBin } from '../report/types.ts';

const BIN_EDGES = [1, 2, 3, 4, 5, 10, 20, 50, 100, 500, 1000];

/** Classes and rows per size bin, from the smallest to the largest non-empty bin. */
export function classSizeHistogram(sizes: readonly number[]): HistogramBin[] {
  const bins: HistogramBin[] = BIN_EDGES.map((from, i) => {
    const next = BIN_EDGES[i + 1];
    const to = next === undefined ? null : next - 1;
    const label = to === null ? `${from}+` : to === from ? `${from}` : `${from}–${to}`;
    return { label, from, to, classes: 0, rows: 0 };
  });
  for (const size of sizes) {
    let b = bins.length - 1;
    while (b > 0 && bins[b]!.from > size) b--;
    bins[b]!.classes++;
    bins[b]!.rows += size;
  }
  const used = bins.map((b, i) => (b.classes > 0 ? i : -1)).filter((i) => i >= 0);
  return used.length === 0 ? [] : bins.slice(used[0], used.at(-1)! + 1);
}

/**
 * Prosecutor re-identification risk of released rows: 1/|E| for a row in class E. Suppressed
 * rows carry no quasi-identifying information and are not counted.
 */
export function prosecutorRisk(
  sizes: readonly number[],
  threshold: number,
): { max: number; mean: number; threshold: number; shareAbove: number } {
  let rows = 0;
  let above = 0;
  let min = Number.POSITIVE_INFINITY;
  for (const s of sizes) {
    rows += s;
    if (1 / s > threshold) above += s;
    min = Math.min(min, s);
  }
  if (rows === 0) return { max: 0, mean: 0, threshold, shareAbove: 0 };
  return { max: 1 / min, mean: sizes.length / rows, threshold, shareAbove: above / rows };
}
