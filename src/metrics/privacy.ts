/**
 * Privacy metrics over released classes: class-size histogram, re-identification risk
 * (prosecutor, journalist, marketer) and the distribution of any per-row risk.
 */
import type { HistogramBin, Reidentification, ReleaseReport, RiskDistribution } from '../contracts/report.ts';

const BIN_EDGES = [1, 2, 3, 4, 5, 10, 20, 50, 100, 500, 1000];

/**
 * Classes and rows per size bin, from the smallest to the largest non-empty bin. With `rows`
 * (an entity column), `sizes` are the classes' persons: they are binned by persons, and each
 * bin adds up its classes' persons and `rows[i]`.
 */
export function classSizeHistogram(sizes: readonly number[], rows?: readonly number[]): HistogramBin[] {
  const bins: HistogramBin[] = BIN_EDGES.map((from, i) => {
    const next = BIN_EDGES[i + 1];
    const to = next === undefined ? null : next - 1;
    const label = to === null ? `${from}+` : to === from ? `${from}` : `${from}–${to}`;
    return { label, from, to, classes: 0, rows: 0, ...(rows ? { persons: 0 } : {}) };
  });
  sizes.forEach((size, i) => {
    let b = bins.length - 1;
    while (b > 0 && bins[b]!.from > size) b--;
    const bin = bins[b]!;
    bin.classes++;
    if (rows) {
      bin.rows += rows[i]!;
      bin.persons! += size;
    } else bin.rows += size;
  });
  const used = bins.map((b, i) => (b.classes > 0 ? i : -1)).filter((i) => i >= 0);
  return used.length === 0 ? [] : bins.slice(used[0], used.at(-1)! + 1);
}

/** Risk bin edges; the threshold is added as one more edge so bins never straddle it. */
const RISK_EDGES = [0, 0.01, 0.02, 0.05, 0.1, 0.2, 1 / 3, 0.5, 1];

/**
 * The distribution of a per-row risk: `risks[i]` is carried by `weights[i]` rows. Bins are
 * (from, to] (the first also holds 0); a row is above the threshold when its risk exceeds it.
 */
export function riskDistribution(
  risks: ArrayLike<number>,
  weights: ArrayLike<number>,
  threshold: number,
): RiskDistribution {
  const edges = [...new Set([...RISK_EDGES, threshold])].sort((a, b) => a - b);
  const bins = edges.slice(1).map((to, i) => ({ from: edges[i]!, to, rows: 0 }));
  let rows = 0;
  let above = 0;
  let sum = 0;
  let max = 0;
  for (let i = 0; i < risks.length; i++) {
    const r = risks[i]!;
    const w = weights[i]!;
    if (w <= 0) continue;
    rows += w;
    sum += r * w;
    max = Math.max(max, r);
    if (r > threshold) above += w;
    let b = 0;
    while (b < bins.length - 1 && r > bins[b]!.to) b++;
    bins[b]!.rows += w;
  }
  return {
    threshold,
    max,
    mean: rows > 0 ? sum / rows : 0,
    shareAbove: rows > 0 ? above / rows : 0,
    rows,
    bins,
  };
}

/**
 * Re-identification risk of released rows grouped by what an attacker can link on: a row in a
 * group of |E| rows is re-identified with probability 1/|E| (prosecutor). Without a population
 * table the sample is the population, so journalist risk equals prosecutor risk; marketer risk
 * is the expected share of rows re-identified when every row is matched: groups / rows.
 */
export function reidentificationRisk(
  sizes: readonly number[],
  threshold: number,
  basis: string,
): Reidentification {
  const prosecutor = riskDistribution(
    sizes.map((s) => 1 / s),
    sizes,
    threshold,
  );
  return {
    basis,
    threshold,
    prosecutor,
    journalist: prosecutor,
    population: 'sample',
    marketer: prosecutor.rows > 0 ? sizes.length / prosecutor.rows : 0,
  };
}

/** The report's `prosecutorRisk` summary (kept for readers of report.json) from the full measure. */
export function prosecutorFacts(
  r: Reidentification,
): NonNullable<ReleaseReport['privacy']['prosecutorRisk']> {
  const { max, mean, threshold, shareAbove } = r.prosecutor;
  return { max, mean, threshold, shareAbove };
}
