/**
 * Distribution utility measures for any method: how far the
 * contingency table an analyst recovers from a release is from the original one.
 *
 * A method supplies an `Estimator`: the probability it lets an analyst assign to any cell of
 * any marginal (uniform spread within classes for generalization, bucket-level spread for
 * Anatomy, π̂ = P⁻¹·λ for randomization). Measures ask for the non-empty cells of a group-by,
 * never for its whole table, so attributes with large domains stay cheap; only the uncertainty
 * coefficients take a pair's whole table (up to MAX_UNCERTAINTY_CELLS), which an estimator
 * gives in one pass (`pair`). Each family of measures keeps within a budget of steps
 * (MEASURE_STEPS) and says why it is not measured past it: never a silent 0.
 *
 * - KL(π‖π̂) = Σ π·ln(π/π̂) over the original's support, π̂ floored at 1e-9 (a reconstruction
 *   may put zero or negative mass where the original has some).
 * - χ²(π, π̂) = Σ (π − π̂)²/π over the original's support (Neyman's form: finite whenever the
 *   original is).
 * - Relative error |act − est|/act of count queries, averaged over the non-empty cells of the
 *   base group-by over all attributes, and over every cell of every group-by of the CUBE
 *   (every non-empty subset of attributes; the grand total is exact for every method here).
 * - Uncertainty coefficient U(X|Y) = (H(X) − H(X|Y))/H(X) for every ordered pair, before
 *   (original) and after (estimate, clipped at 0 and renormalized); 0 when X holds one value.
 */

import type { MarginalComparison } from '../contracts/report.ts';
import type { EncodedColumn } from '../data/table.ts';
import { thousands } from '../util/format.ts';
import { mix32 } from '../util/keys.ts';

export interface Estimator {
  /**
   * Estimated probability of each cell of the marginal over `attrs` (indices into the
   * attribute list). `cells[j][c]` is the code of attribute `attrs[j]` in cell c.
   *
   * With a `budget`, an estimator that can foresee its work (steps: a candidate class checked,
   * a cell written) takes it from `budget.steps` before it starts, or, when that would pass
   * what is left, leaves it, sets `budget.needed` and returns undefined without doing the work.
   */
  marginal(attrs: readonly number[], cells: readonly Int32Array[], budget?: Budget): Float64Array | undefined;
  /**
   * The same over every cell of the pair (x, y), `dx · dy` of them, x-major, in one pass over
   * the estimator's classes or buckets (the uncertainty coefficients need the whole joint
   * table); without it the pair is asked of `marginal`.
   */
  pair?(x: number, y: number, budget?: Budget): Float64Array | undefined;
}

/** Steps left to a family of measures; `needed`: what the last refused request would have taken. */
export interface Budget {
  steps: number;
  needed?: number;
}

/**
 * For an estimator: takes `cost` steps from the budget, or, when that would pass what is left,
 * sets `needed` and returns false (the request is then not started). No budget: always true.
 */
export function takeSteps(budget: Budget | undefined, cost: number): boolean {
  if (!budget) return true;
  if (cost > budget.steps) {
    budget.needed = cost;
    return false;
  }
  budget.steps -= cost;
  return true;
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
  /** Undefined when the CUBE is not measured (`notMeasured.queryErrorCube` says why). */
  queryErrorCube: number | undefined;
  /** Number of non-empty cells the CUBE error averages over. */
  cubeCells: number | undefined;
  uncertainty: UncertaintyPair[];
  /** Why a measure, or some uncertainty pairs, were left out: never a silent 0. */
  notMeasured: { queryErrorCube?: string; uncertainty?: string };
}

/**
 * The measures as a report's utility figures (the uncertainty pairs aside), in report order: a
 * measure left out holds `not measured: <why>` (a string where a number would be), and the
 * uncertainty pairs left out are named under `uncertaintyNotMeasured`.
 */
export function measureFigures(m: DistributionMeasures): Record<string, number | string> {
  return {
    kl: m.kl,
    chi2: m.chi2,
    queryErrorBase: m.queryErrorBase,
    ...(m.queryErrorCube !== undefined && m.cubeCells !== undefined
      ? { queryErrorCube: m.queryErrorCube, cubeCells: m.cubeCells }
      : { queryErrorCube: `not measured: ${m.notMeasured.queryErrorCube}` }),
    ...(m.notMeasured.uncertainty ? { uncertaintyNotMeasured: m.notMeasured.uncertainty } : {}),
  };
}

const FLOOR = 1e-9;
/** Beyond this many attributes the CUBE (2^m − 1 group-bys) is left out. */
export const MAX_CUBE_ATTRIBUTES = 12;
/**
 * Beyond this many cells (dx · dy) a pair's uncertainty coefficients are left out: they are
 * measured over the pair's whole joint table, dense, and two columns of near-unique values
 * (postcodes, birth dates) make one of billions of cells.
 */
export const MAX_UNCERTAINTY_CELLS = 1 << 22;
/**
 * Steps each family of measures may take: the CUBE, the uncertainty coefficients, and, where a
 * method asks (Mondrian), the base group-by. A step is a row counted for one attribute, a
 * class checked for a cell or a cell of a joint table written: 5 to 20 ns each, so a family
 * takes at most some 3 to 10 s whatever the rows, attributes and classes (Adult's CUBE over 9
 * attributes: about 0.8·2^29). A request the estimator foresees passing what is left is not
 * started, and the measure is reported as not measured, with why.
 */
export const MEASURE_STEPS = 2 ** 29;

/** The non-empty cells of the marginal over `attrs`, with their counts, in order of first row. */
export function marginalCounts(
  columns: readonly EncodedColumn[],
  attrs: readonly number[],
): { cells: Int32Array[]; counts: Float64Array } {
  const n = columns[0]?.codes.length ?? 0;
  // A cell is a mixed-radix number, renumbered densely (in order of first row) whenever the
  // next attribute would take it past 2^53: numbers all the way, never a string per row.
  const keys = new Float64Array(n);
  let range = 1;
  for (const a of attrs) {
    const d = Math.max(1, columns[a]!.dictionary.length);
    if (range * d > 2 ** 53) range = renumber(keys, range).count;
    const codes = columns[a]!.codes;
    for (let r = 0; r < n; r++) keys[r] = keys[r]! * d + codes[r]!;
    range *= d;
  }
  const { count, first, idOf } = renumber(keys, range);
  const counts = new Float64Array(count);
  for (let r = 0; r < n; r++) counts[idOf[r]!]!++;
  const cells = attrs.map((a) => {
    const codes = columns[a]!.codes;
    const out = new Int32Array(count);
    for (let c = 0; c < count; c++) out[c] = codes[first[c]!]!;
    return out;
  });
  return { cells, counts };
}

/**
 * `keys` (below `range`) replaced by dense ids in order of first appearance; each id's first
 * row. A direct table when the keys are few for the rows, else an open-addressing table of
 * typed arrays (a Map holds at most 2^24 keys, and costs far more memory per key).
 */
function renumber(
  keys: Float64Array,
  range: number,
): { count: number; first: Int32Array; idOf: Float64Array } {
  const n = keys.length;
  const first = new Int32Array(n);
  let count = 0;
  if (range <= 4 * n + (1 << 16)) {
    const index = new Int32Array(range).fill(-1);
    for (let r = 0; r < n; r++) {
      let id = index[keys[r]!]!;
      if (id < 0) {
        id = index[keys[r]!] = count++;
        first[id] = r;
      }
      keys[r] = id;
    }
    return { count, first, idOf: keys };
  }
  let size = 16;
  while (size < 2 * n) size *= 2;
  const mask = size - 1;
  // Slot s holds key held[s] and its id + 1 (0: empty).
  const held = new Float64Array(size);
  const idAt = new Int32Array(size);
  for (let r = 0; r < n; r++) {
    const key = keys[r]!;
    let at = mix32(Math.imul(Math.floor(key / 2 ** 32), 0x9e3779b1) ^ (key >>> 0)) & mask;
    while (idAt[at] !== 0 && held[at] !== key) at = (at + 1) & mask;
    if (idAt[at] === 0) {
      held[at] = key;
      idAt[at] = ++count;
      first[count - 1] = r;
    }
    keys[r] = idAt[at]! - 1;
  }
  return { count, first, idOf: keys };
}

/**
 * KL, χ², the query errors and the uncertainty coefficients, the base group-by always measured;
 * the CUBE and the uncertainty pairs each within MEASURE_STEPS (`steps`), left out (with why)
 * past it.
 */
export function distributionMeasures(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
  steps = MEASURE_STEPS,
): DistributionMeasures {
  return measure(columns, estimator, steps, Number.POSITIVE_INFINITY) as DistributionMeasures;
}

/**
 * As distributionMeasures, with the base group-by (all released attributes, every row's cell)
 * within `steps` too: why not, when it would pass them (Mondrian, whose estimate of a cell
 * checks every class the cell may fall in).
 */
export function boundedDistributionMeasures(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
  steps = MEASURE_STEPS,
): DistributionMeasures | { notMeasured: string } {
  return measure(columns, estimator, steps, steps);
}

function measure(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
  steps: number,
  baseSteps: number,
): DistributionMeasures | { notMeasured: string } {
  const m = columns.length;
  const n = columns[0]?.codes.length ?? 0;
  const all = columns.map((_, i) => i);

  const baseBudget: Budget = { steps: baseSteps - countingSteps(n, m) };
  if (baseBudget.steps < 0) {
    return {
      notMeasured: `counting the ${thousands(n)} rows over ${m} attributes passes ${thousands(steps)} steps`,
    };
  }
  const base = marginalCounts(columns, all);
  const estBase = estimator.marginal(all, base.cells, Number.isFinite(baseSteps) ? baseBudget : undefined);
  if (!estBase) {
    return {
      notMeasured: `the base group-by (${thousands(base.counts.length)} cells, every released attribute) would take ${needed(baseBudget)} steps (each cell checked against the classes it may fall in), more than ${thousands(steps)}`,
    };
  }
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

  const notMeasured: DistributionMeasures['notMeasured'] = {};
  const cube = cubeError(columns, estimator, base, estBase, steps);
  if (typeof cube === 'string') notMeasured.queryErrorCube = cube;
  const single = typeof cube === 'string' ? [] : cube.single;
  const marginals = all.map((a): MarginalComparison => {
    let s = single[a];
    if (!s) {
      const marginal = marginalCounts(columns, [a]);
      s = { ...marginal, est: estimator.marginal([a], marginal.cells)! };
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

  const { uncertainty, leftOut } = uncertaintyPairs(columns, estimator, steps);
  if (leftOut) notMeasured.uncertainty = leftOut;

  return {
    marginals,
    kl,
    chi2,
    queryErrorBase: base.counts.length > 0 ? baseError / base.counts.length : 0,
    queryErrorCube: typeof cube === 'string' ? undefined : cube.error,
    cubeCells: typeof cube === 'string' ? undefined : cube.cells,
    uncertainty,
    notMeasured,
  };
}

type Measured = { counts: Float64Array; cells: Int32Array[]; est: Float64Array };

/**
 * The average relative error over every cell of every group-by of the CUBE, and each single
 * attribute's marginal on the way; or why it is not measured.
 */
function cubeError(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
  base: { counts: Float64Array; cells: Int32Array[] },
  estBase: Float64Array,
  steps: number,
): { error: number; cells: number; single: Measured[] } | string {
  const m = columns.length;
  const n = columns[0]?.codes.length ?? 0;
  const groupBys = 2 ** m - 1;
  if (m > MAX_CUBE_ATTRIBUTES) {
    return `${m} released attributes, more than ${MAX_CUBE_ATTRIBUTES}: the CUBE would have 2^${m} − 1 = ${thousands(groupBys)} group-bys`;
  }
  // Every group-by counts the rows over its attributes (m · 2^(m−1) in all), known up front.
  const counting = countingSteps(n, m * 2 ** (m - 1)) + (groupBys - 1) * countingSteps(n, 0);
  const budget: Budget = { steps: steps - counting };
  if (budget.steps < 0) {
    return `counting its ${thousands(groupBys)} group-bys over ${thousands(n)} rows passes ${thousands(steps)} steps`;
  }
  const all = columns.map((_, i) => i);
  const single: Measured[] = [];
  const left = budget.steps;
  const over = `its ${thousands(groupBys)} group-bys would take`;
  const why = 'each cell checked against the classes or buckets it may fall in';
  let error = 0;
  let cells = 0;
  // Group-bys in an order that mixes their sizes (an odd multiplier permutes the masks), so
  // that the steps of the first ones foretell the rest: past 1.5 budgets foretold, stop early.
  for (let k = 1; k <= groupBys; k++) {
    const mask = Math.imul(k, 0x9e3779b1) & groupBys;
    const attrs = all.filter((i) => mask & (1 << i));
    const marginal = attrs.length === m ? base : marginalCounts(columns, attrs);
    const est = attrs.length === m ? estBase : estimator.marginal(attrs, marginal.cells, budget);
    if (!est) return `${over} more than ${thousands(steps)} steps (${why})`;
    for (let c = 0; c < marginal.counts.length; c++) {
      const p = marginal.counts[c]! / n;
      error += Math.abs(p - est[c]!) / p;
    }
    cells += marginal.counts.length;
    if (attrs.length === 1) single[attrs[0]!] = { ...marginal, est };
    const foretold = counting + ((left - budget.steps) * groupBys) / k;
    if (k >= Math.max(32, groupBys / 8) && foretold > 1.5 * steps) {
      return `${over} about ${thousands(Math.round(foretold))} steps, more than ${thousands(steps)} (${why})`;
    }
  }
  return { error: cells > 0 ? error / cells : 0, cells, single };
}

/**
 * U(X|Y) and U(Y|X) for every pair of attributes, each from one joint table of the pair, in
 * the order x, then y. Pairs of more than MAX_UNCERTAINTY_CELLS cells are left out, and so are
 * those the budget does not reach (the smallest tables go first): `leftOut` says how many and why.
 */
function uncertaintyPairs(
  columns: readonly EncodedColumn[],
  estimator: Estimator,
  steps: number,
): { uncertainty: UncertaintyPair[]; leftOut: string | undefined } {
  const m = columns.length;
  const n = columns[0]?.codes.length ?? 0;
  const size = (x: number, y: number) => columns[x]!.dictionary.length * columns[y]!.dictionary.length;
  const pairs: [number, number][] = [];
  let tooLarge = 0;
  for (let x = 0; x < m; x++) {
    for (let y = x + 1; y < m; y++) {
      if (size(x, y) > MAX_UNCERTAINTY_CELLS) tooLarge++;
      else pairs.push([x, y]);
    }
  }
  pairs.sort((a, b) => size(a[0], a[1]) - size(b[0], b[1]));
  const budget: Budget = { steps };
  const measured = new Map<number, { xGivenY: number; yGivenX: number; before: Coefficients }>();
  let overBudget = 0;
  for (const [x, y] of pairs) {
    const dx = columns[x]!.dictionary.length;
    const dy = columns[y]!.dictionary.length;
    // Counting the rows, and two tables' entropies, are this side's own work.
    const own = n + 4 * dx * dy;
    if (own > budget.steps) {
      overBudget++;
      continue;
    }
    budget.steps -= own;
    const estimate = estimator.pair
      ? estimator.pair(x, y, budget)
      : estimator.marginal([x, y], denseCells(dx, dy), budget);
    if (!estimate) {
      overBudget++;
      continue;
    }
    const before = new Float64Array(dx * dy);
    const cx = columns[x]!.codes;
    const cy = columns[y]!.codes;
    for (let r = 0; r < n; r++) before[cx[r]! * dy + cy[r]!]! += 1 / n;
    const after = coefficients(normalized(estimate), dx, dy);
    measured.set(x * m + y, { ...after, before: coefficients(before, dx, dy) });
  }
  const uncertainty: UncertaintyPair[] = [];
  for (let x = 0; x < m; x++) {
    for (let y = 0; y < m; y++) {
      const u = x < y ? measured.get(x * m + y) : measured.get(y * m + x);
      if (!u) continue;
      const key = x < y ? 'xGivenY' : 'yGivenX';
      uncertainty.push({ x: columns[x]!.name, y: columns[y]!.name, before: u.before[key], after: u[key] });
    }
  }
  const reasons = [
    ...(tooLarge > 0
      ? [`${tooLarge} with a joint table of more than ${thousands(MAX_UNCERTAINTY_CELLS)} cells`]
      : []),
    ...(overBudget > 0
      ? [`${overBudget} past ${thousands(steps)} steps (the smallest tables go first)`]
      : []),
  ];
  const total = (m * (m - 1)) / 2;
  return {
    uncertainty,
    leftOut:
      reasons.length > 0
        ? `uncertainty coefficients not measured for ${tooLarge + overBudget} of ${total} attribute pairs: ${reasons.join('; ')}`
        : undefined,
  };
}

/** Steps to count `n` rows over `attributes` attributes: a step an attribute, and the row's cell looked up. */
function countingSteps(n: number, attributes: number): number {
  return n * (attributes + 8);
}

/** Every cell of a dx × dy table, x-major. */
function denseCells(dx: number, dy: number): Int32Array[] {
  const cellsX = new Int32Array(dx * dy);
  const cellsY = new Int32Array(dx * dy);
  for (let i = 0; i < dx; i++) {
    for (let j = 0; j < dy; j++) {
      cellsX[i * dy + j] = i;
      cellsY[i * dy + j] = j;
    }
  }
  return [cellsX, cellsY];
}

function needed(budget: Budget): string {
  return budget.needed !== undefined ? `about ${thousands(Math.ceil(budget.needed))}` : 'more';
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

interface Coefficients {
  xGivenY: number;
  yGivenX: number;
}

/** U(X|Y) from a joint distribution laid out x-major (dx × dy). 0 when H(X) = 0. */
export function uncertaintyCoefficient(joint: Float64Array, dx: number, dy: number): number {
  return coefficients(joint, dx, dy).xGivenY;
}

/** U(X|Y) and U(Y|X) from one joint distribution laid out x-major (dx × dy); 0 where H(X), H(Y) is 0. */
function coefficients(joint: Float64Array, dx: number, dy: number): Coefficients {
  const px = new Float64Array(dx);
  const py = new Float64Array(dy);
  for (let i = 0; i < dx; i++) {
    for (let j = 0; j < dy; j++) {
      px[i]! += joint[i * dy + j]!;
      py[j]! += joint[i * dy + j]!;
    }
  }
  const h = (p: Float64Array) => p.reduce((s, v) => (v > 0 ? s - v * Math.log(v) : s), 0);
  // One value only: H = 0 exactly, where its sum (1 − 1e-16) would leave noise to divide by.
  const varies = (p: Float64Array) => p.filter((v) => v > 0).length > 1;
  const hx = h(px);
  const hy = h(py);
  const hxy = h(joint);
  // H(X|Y) = H(X,Y) − H(Y), H(Y|X) = H(X,Y) − H(X)
  return {
    xGivenY: varies(px) && hx > 0 ? (hx - (hxy - hy)) / hx : 0,
    yGivenX: varies(py) && hy > 0 ? (hy - (hxy - hx)) / hy : 0,
  };
}
