/**
 * Distribution utility measures for any method: how far the
 * contingency table an analyst recovers from a release is from the original one.
 *
 * A method supplies an `Estimator`: the probability it lets an analyst assign to any cell of
 * any marginal (uniform spread within classes for generalization, bucket-level spread for
 * Anatomy, π̂ = P⁻¹·λ for randomization). Measures only ever ask for cells, never for the
 * whole joint table, so attributes with large domains stay cheap.
 *
 * - KL(π‖π̂) = Σ π·ln(π/π̂) over the original's support, π̂ floored at 1e-9 (a reconstruction
 *   may put zero or negative mass where the original has some).
 * - χ²(π, π̂) = Σ (π − π̂)²/π over the original's support (Neyman's form: finite whenever the
 *   original is).
 * - Relative error |act − est|/act of count queries, averaged over the non-empty cells of the
 *   base group-by over all attributes, and over every cell of every group-by of the CUBE
 *   (every non-empty subset of attributes; the grand total is exact for every method here).
 * - Uncertainty coefficient U(X|Y) = (H(X) − H(X|Y))/H(X) for every ordered pair, before
 *   (original) and after (estimate, clipped at 0 and renormalized).
 */

import type { MarginalComparison } from '../contracts/report.ts';
import type { EncodedColumn } from '../data/table.ts';

export interface Estimator {
  /**
   * Estimated probability of each cell of the marginal over `attrs` (indices into the
   * attribute list). `cells[j][c]` is the code of attribute `attrs[j]` in cell c.
   */
  marginal(attrs: readonly number[], cells: readonly Int32Array[]): Float64Array;
}

export interface UncertaintyPair {
  x: string;
  y: string;
  before: number;
  after: number;
}

export interface DistributionMeasures {
  /** Each attribute's marginal: the input's shares and the estimate's, over the input's values, largest first. */
  marginals: MarginalComparison[];
  kl: number;
  chi2: number;
  queryErrorBase: number;
  queryErrorCube: number;
  /** Number of non-empty cells the CUBE error averages over. */
  cubeCells: number;
  uncertainty: UncertaintyPair[];
}

/** The measures as a report's utility figures (the uncertainty pairs aside), in report order. */
export function measureFigures(m: DistributionMeasures) {
  return {
    kl: m.kl,
    chi2: m.chi2,
    queryErrorBase: m.queryErrorBase,
    queryErrorCube: m.queryErrorCube,
    cubeCells: m.cubeCells,
  };
}

const FLOOR = 1e-9;
/** Beyond this many attributes the CUBE (2^m group-bys) is left out. */
export const MAX_CUBE_ATTRIBUTES = 12;
/**
 * Beyond this many cells (dx · dy) a pair's uncertainty coefficients are left out: they are
 * measured over the pair's whole joint table, dense, and two columns of near-unique values
 * (postcodes, birth dates) make one of billions of cells.
 */
export const MAX_UNCERTAINTY_CELLS = 1 << 22;

/** The non-empty cells of the marginal over `attrs`, with their counts. */
export function marginalCounts(
  columns: readonly EncodedColumn[],
  attrs: readonly number[],
): { cells: Int32Array[]; counts: Float64Array } {
  const n = columns[0]?.codes.length ?? 0;
  // A cell packs into one number (mixed radix) when the domains allow: no string keys.
  let product = 1;
  for (const a of attrs) product *= Math.max(1, columns[a]!.dictionary.length);
  const packed = product < 2 ** 53;
  const index = new Map<number | string, number>();
  const cellCodes: number[][] = attrs.map(() => []);
  const counts: number[] = [];
  for (let r = 0; r < n; r++) {
    let key: number | string = packed ? 0 : '';
    for (const a of attrs) {
      const code = columns[a]!.codes[r]!;
      key = packed ? (key as number) * columns[a]!.dictionary.length + code : `${key}${code},`;
    }
    let c = index.get(key);
    if (c === undefined) {
      c = counts.length;
      index.set(key, c);
      counts.push(0);
      attrs.forEach((a, j) => {
        cellCodes[j]!.push(columns[a]!.codes[r]!);
      });
    }
    counts[c]!++;
  }
  return { cells: cellCodes.map((x) => Int32Array.from(x)), counts: Float64Array.from(counts) };
}

export function distributionMeasures(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
): DistributionMeasures {
  const m = columns.length;
  const n = columns[0]?.codes.length ?? 0;
  const all = columns.map((_, i) => i);

  const base = marginalCounts(columns, all);
  const estBase = estimator.marginal(all, base.cells);
  let kl = 0;
  let chi2 = 0;
  let baseError = 0;
  for (let c = 0; c < base.counts.length; c++) {
    const p = base.counts[c]! / n;
    const q = estBase[c]!;
    kl += p * Math.log(p / Math.max(q, FLOOR));
    chi2 += ((p - q) * (p - q)) / p;
    baseError += Math.abs(p - q) / p;
  }

  // Each single attribute's marginal: the CUBE measures them on its way, else measured here.
  const single: { counts: Float64Array; cells: Int32Array[]; est: Float64Array }[] = [];
  let cubeError = 0;
  let cubeCells = 0;
  if (m <= MAX_CUBE_ATTRIBUTES) {
    for (let mask = 1; mask < 1 << m; mask++) {
      const attrs = all.filter((i) => mask & (1 << i));
      const marginal = attrs.length === m ? base : marginalCounts(columns, attrs);
      const est = attrs.length === m ? estBase : estimator.marginal(attrs, marginal.cells);
      for (let c = 0; c < marginal.counts.length; c++) {
        const p = marginal.counts[c]! / n;
        cubeError += Math.abs(p - est[c]!) / p;
      }
      cubeCells += marginal.counts.length;
      if (attrs.length === 1) single[attrs[0]!] = { ...marginal, est };
    }
  }
  const marginals = all.map((a): MarginalComparison => {
    let s = single[a];
    if (!s) {
      const marginal = marginalCounts(columns, [a]);
      s = { ...marginal, est: estimator.marginal([a], marginal.cells) };
    }
    const { counts, cells, est } = s;
    // Largest share first; values are not named (reports hold aggregates only).
    const order = Array.from(counts.keys()).sort(
      (x, y) => counts[y]! - counts[x]! || cells[0]![x]! - cells[0]![y]!,
    );
    return {
      attribute: columns[a]!.name,
      original: order.map((c) => counts[c]! / n),
      reconstructed: order.map((c) => est[c]!),
    };
  });

  const uncertainty: UncertaintyPair[] = [];
  for (let x = 0; x < m; x++) {
    for (let y = 0; y < m; y++) {
      if (x === y) continue;
      const dx = columns[x]!.dictionary.length;
      const dy = columns[y]!.dictionary.length;
      if (dx * dy > MAX_UNCERTAINTY_CELLS) continue;
      const cellsX = new Int32Array(dx * dy);
      const cellsY = new Int32Array(dx * dy);
      for (let i = 0; i < dx; i++) {
        for (let j = 0; j < dy; j++) {
          cellsX[i * dy + j] = i;
          cellsY[i * dy + j] = j;
        }
      }
      const before = new Float64Array(dx * dy);
      for (let r = 0; r < n; r++) before[columns[x]!.codes[r]! * dy + columns[y]!.codes[r]!]! += 1 / n;
      const after = normalized(estimator.marginal([x, y], [cellsX, cellsY]));
      uncertainty.push({
        x: columns[x]!.name,
        y: columns[y]!.name,
        before: uncertaintyCoefficient(before, dx, dy),
        after: uncertaintyCoefficient(after, dx, dy),
      });
    }
  }

  return {
    marginals,
    kl,
    chi2,
    queryErrorBase: base.counts.length > 0 ? baseError / base.counts.length : 0,
    queryErrorCube: cubeCells > 0 ? cubeError / cubeCells : 0,
    cubeCells,
    uncertainty,
  };
}

function normalized(p: Float64Array): Float64Array {
  let total = 0;
  const out = p.map((v) => {
    const c = Math.max(0, v);
    total += c;
    return c;
  });
  return total > 0 ? out.map((v) => v / total) : out;
}

/** U(X|Y) from a joint distribution laid out x-major (dx × dy). 0 when H(X) = 0. */
export function uncertaintyCoefficient(joint: Float64Array, dx: number, dy: number): number {
  const px = new Float64Array(dx);
  const py = new Float64Array(dy);
  for (let i = 0; i < dx; i++) {
    for (let j = 0; j < dy; j++) {
      px[i]! += joint[i * dy + j]!;
      py[j]! += joint[i * dy + j]!;
    }
  }
  const h = (p: Float64Array) => p.reduce((s, v) => (v > 0 ? s - v * Math.log(v) : s), 0);
  const hx = h(px);
  if (hx <= 0) return 0;
  // H(X|Y) = H(X,Y) − H(Y)
  const hxy = h(joint) - h(py);
  return (hx - hxy) / hx;
}
