/**
 * Utility metrics of full-domain generalization (docs/definitions.md §6), computed from a node's grouping of
 * the distinct tuples. Also the lower bounds the optimal search prunes with: each bound holds
 * for the node it is computed at and for every generalization of it.
 */
import type { Hierarchy } from '../hierarchy/hierarchy.ts';
import type { MetricName } from '../release-spec/spec.ts';

export interface MetricValues {
  ncp: number;
  discernibility: number;
  precision: number;
  aecs: number;
  entropy: number;
  loss: number;
}

/** ARX's Loss settings, per QI in the hierarchies' order. */
export interface LossOptions {
  readonly aggregate: 'geometric' | 'arithmetic';
  readonly gsFactor: number;
  /** Per QI, in (0, ∞): divided by the largest. */
  readonly weights: readonly number[];
}

/** What a node's grouping says about its classes (suppressed ones flagged). */
export interface ClassOutcome {
  readonly groups: number;
  /** tuple → class (may be composed on first read: touch it only when needed). */
  readonly groupOf: Int32Array;
  readonly sizes: Int32Array;
  /** class → its first tuple. */
  readonly reps: Int32Array;
  /** 1 for classes that fail the models and are suppressed. */
  readonly suppressed: Uint8Array;
  readonly suppressedRows: number;
  readonly retainedClasses: number;
  /** Σ|E|² over the retained classes, when the caller counted it on its way (else summed here). */
  readonly retainedSquares?: number | undefined;
  /**
   * Cell suppression (docs/definitions.md, "Cell suppression"): class g's QI i at g·m + i, 1
   * when that cell is suppressed in the class's rows; such a cell costs as much as the top level.
   */
  readonly cells?: Uint8Array | undefined;
}

export class GeneralizationMetrics {
  private readonly m: number;
  /** Per QI, per level: Σ over rows of the NCP cell cost — separable by attribute. */
  private readonly ncpByLevel: Float64Array[];
  /** Per QI, per code: the summed weight of the tuples holding it. */
  private readonly freq: Float64Array[];
  /** Per QI, per level: the entropy cell cost per code and its Σ over rows, made on first use. */
  private readonly entropyCache: ({ cost: Float64Array; sum: number } | undefined)[][];
  /** Per QI, per level: Σ over rows of the Loss share (hierarchy rows under the cell's label / rows). */
  private readonly shareByLevel: Float64Array[];
  /** Loss's weights of a generalized and of a suppressed cell (from the gs-factor), and the QIs' weights. */
  private readonly gFactor: number;
  private readonly sFactor: number;
  private readonly lossWeights: Float64Array;

  constructor(
    private readonly hierarchies: readonly Hierarchy[],
    private readonly tuples: readonly Int32Array[],
    private readonly counts: Int32Array,
    private readonly rows: number,
    private readonly k: number,
    private readonly loss: LossOptions = {
      aggregate: 'geometric',
      gsFactor: 0.5,
      weights: hierarchies.map(() => 1),
    },
  ) {
    this.m = hierarchies.length;
    const gs = loss.gsFactor;
    this.sFactor = gs < 0.5 ? 2 * gs : 1;
    this.gFactor = gs <= 0.5 ? 1 : 1 - 2 * (gs - 0.5);
    const heaviest = Math.max(...loss.weights);
    this.lossWeights = Float64Array.from(loss.weights, (w) => w / heaviest);
    this.freq = hierarchies.map((h, i) => weightedFrequencies(tuples[i]!, counts, h.labels[0]!.length));
    this.entropyCache = hierarchies.map((h) => new Array(h.height + 1).fill(undefined));
    this.ncpByLevel = hierarchies.map((h, i) => {
      const freq = this.freq[i]!;
      const span = h.domain - 1;
      return Float64Array.from({ length: h.height + 1 }, (_, l) => {
        if (span <= 0) return 0;
        const leaves = h.leaves[l]!;
        const table = h.levelTables[l]!;
        let s = 0;
        for (let c = 0; c < freq.length; c++) s += ((leaves[table[c]!]! - 1) / span) * freq[c]!;
        return s;
      });
    });
    this.shareByLevel = hierarchies.map((h, i) => {
      const freq = this.freq[i]!;
      return Float64Array.from({ length: h.height + 1 }, (_, l) => {
        let s = 0;
        for (let c = 0; c < freq.length; c++) if (freq[c]! > 0) s += this.share(i, l, c) * freq[c]!;
        return s;
      });
    });
  }

  /** Loss's share of a cell of QI `i` holding `code` at `level`: the hierarchy rows under its label, over all rows. */
  private share(i: number, level: number, code: number): number {
    const h = this.hierarchies[i]!;
    return h.rowsUnder[level]![h.levelTables[level]![code]!]! / h.rows;
  }

  /**
   * ARX's Loss from each QI's Σ over rows of its cell costs: each sum normalized to [0, 1]
   * between its least (every cell its own value, weighed as generalized) and N, then the
   * weighted geometric or arithmetic mean over the QIs.
   */
  private lossOf(sums: readonly number[]): number {
    const n = this.rows;
    const m = this.m;
    let geometric = 1;
    let arithmetic = 0;
    for (let i = 0; i < m; i++) {
      const least = (this.gFactor * n) / this.hierarchies[i]!.rows;
      // A one-row hierarchy (least = N) loses nothing, as in ARX (0/0 there, clamped to 0).
      const value = n > least ? Math.max(0, (sums[i]! - least) / (n - least)) : 0;
      const w = this.lossWeights[i]!;
      geometric *= (value * w + 1) ** (1 / m);
      arithmetic += (value / m) * w;
    }
    return this.loss.aggregate === 'geometric' ? geometric - 1 : arithmetic;
  }

  /** Per QI, Σ over rows of Loss's cell cost: a suppressed cell costs share + sFactor·(1 − share). */
  private lossSums(levels: ArrayLike<number>, outcome: ClassOutcome): number[] {
    const sums = Array.from({ length: this.m }, (_, i) => this.gFactor * this.shareByLevel[i]![levels[i]!]!);
    const { groups, sizes, suppressed, reps } = outcome;
    for (let g = 0; outcome.suppressedRows > 0 && g < groups; g++) {
      if (!suppressed[g]) continue;
      const rep = reps[g]!;
      for (let i = 0; i < this.m; i++) {
        const share = this.share(i, levels[i]!, this.tuples[i]![rep]!);
        sums[i]! += sizes[g]! * (share + this.sFactor * (1 - share) - this.gFactor * share);
      }
    }
    this.forSuppressedCells(outcome, (t, i) => {
      const share = this.share(i, levels[i]!, this.tuples[i]![t]!);
      sums[i]! += this.counts[t]! * (share + this.sFactor * (1 - share) - this.gFactor * share);
    });
    return sums;
  }

  /** The NCP cost of a cell of QI `i` holding `code`, generalized to `level` (as summed in ncpByLevel). */
  private ncpCost(i: number, level: number, code: number): number {
    const h = this.hierarchies[i]!;
    return h.domain > 1 ? (h.leaves[level]![h.levelTables[level]![code]!]! - 1) / (h.domain - 1) : 0;
  }

  /** ARX's non-uniform entropy at QI `i`, `level`: −log2 Pr(original value | released value), per cell. */
  private entropy(i: number, level: number): { cost: Float64Array; sum: number } {
    let cached = this.entropyCache[i]![level];
    if (cached === undefined) {
      const h = this.hierarchies[i]!;
      const freq = this.freq[i]!;
      const table = h.levelTables[level]!;
      const labelFreq = new Float64Array(h.labels[level]!.length);
      for (let c = 0; c < freq.length; c++) labelFreq[table[c]!]! += freq[c]!;
      const cost = new Float64Array(freq.length);
      for (let c = 0; c < freq.length; c++) {
        if (freq[c]! > 0) cost[c] = -Math.log2(freq[c]! / labelFreq[table[c]!]!);
      }
      cached = this.entropyCache[i]![level] = { cost, sum: weighted(cost, freq) };
    }
    return cached;
  }

  /**
   * The metrics of a node (`which`: one by name, or all; the others are NaN). Suppressed cells
   * cost as much as the top level (NCP: 1). NCP's cell cost depends on the generalized value
   * alone, which a class shares, so its suppression correction runs over classes; entropy's
   * depends on the original value and runs over tuples.
   */
  values(levels: ArrayLike<number>, outcome: ClassOutcome, which: MetricName | 'all' = 'all'): MetricValues {
    const { rows: n, m } = this;
    const s = outcome.suppressedRows;
    const wants = (name: MetricName) => which === 'all' || which === name;
    let ncp = Number.NaN;
    if (wants('ncp')) {
      let ncpSum = 0;
      for (const sum of this.ncpSums(levels, outcome)) ncpSum += sum;
      ncp = ncpSum / (n * m);
    }
    let entropy = Number.NaN;
    if (wants('entropy')) {
      let entropySum = 0;
      for (let i = 0; i < m; i++) entropySum += this.entropy(i, levels[i]!).sum;
      if (s > 0) {
        // The suppressed tuples, ascending, found once for every QI (the same sum, in the same order).
        const groupOf = outcome.groupOf;
        const { suppressed } = outcome;
        const tuples = this.counts.length;
        const removed = new Int32Array(tuples);
        let count = 0;
        for (let t = 0; t < tuples; t++) if (suppressed[groupOf[t]!]) removed[count++] = t;
        for (let i = 0; i < m; i++) {
          const col = this.tuples[i]!;
          const entropyAt = this.entropy(i, levels[i]!).cost;
          const entropyTop = this.entropy(i, this.hierarchies[i]!.height).cost;
          for (let x = 0; x < count; x++) {
            const t = removed[x]!;
            const code = col[t]!;
            entropySum += this.counts[t]! * (entropyTop[code]! - entropyAt[code]!);
          }
        }
      }
      this.forSuppressedCells(outcome, (t, i) => {
        const code = this.tuples[i]![t]!;
        const top = this.entropy(i, this.hierarchies[i]!.height).cost[code]!;
        entropySum += this.counts[t]! * (top - this.entropy(i, levels[i]!).cost[code]!);
      });
      entropy = entropySum;
    }
    let squares = outcome.retainedSquares ?? 0;
    if (outcome.retainedSquares === undefined) {
      const { groups, sizes, suppressed } = outcome;
      for (let g = 0; g < groups; g++) {
        if (!suppressed[g]) squares += sizes[g]! * sizes[g]!;
      }
    }
    const loss = wants('loss') ? this.lossOf(this.lossSums(levels, outcome)) : Number.NaN;
    return {
      ncp,
      discernibility: squares + s * n,
      precision: ((n - s) * this.relativeHeight(levels) + s) / n + this.cellPrecision(levels, outcome),
      aecs:
        outcome.retainedClasses > 0 ? (n - s) / (outcome.retainedClasses * this.k) : Number.POSITIVE_INFINITY,
      entropy,
      loss,
    };
  }

  /** Each QI's NCP at a node: the mean over rows of its cell cost, a suppressed cell costing 1. */
  ncpByAttribute(levels: ArrayLike<number>, outcome: ClassOutcome): number[] {
    return this.ncpSums(levels, outcome).map((sum) => sum / this.rows);
  }

  /** Per QI, Σ over rows of the NCP cell cost; NCP's cost depends on the class alone, so suppression is corrected per class. */
  private ncpSums(levels: ArrayLike<number>, outcome: ClassOutcome): number[] {
    const sums = Array.from({ length: this.m }, (_, i) => this.ncpByLevel[i]![levels[i]!]!);
    const { groups, sizes, suppressed, reps } = outcome;
    for (let g = 0; outcome.suppressedRows > 0 && g < groups; g++) {
      if (!suppressed[g]) continue;
      const rep = reps[g]!;
      for (let i = 0; i < this.m; i++) {
        sums[i]! += sizes[g]! * (1 - this.ncpCost(i, levels[i]!, this.tuples[i]![rep]!));
      }
    }
    this.forSuppressedCells(outcome, (t, i) => {
      sums[i]! += this.counts[t]! * (1 - this.ncpCost(i, levels[i]!, this.tuples[i]![t]!));
    });
    return sums;
  }

  /**
   * A lower bound known before grouping, valid for the node and all its generalizations
   * (cell costs never fall as levels rise, and a suppressed cell costs at least as much).
   */
  aprioriBound(metric: MetricName, levels: ArrayLike<number>): number {
    switch (metric) {
      case 'ncp': {
        let s = 0;
        for (let i = 0; i < this.m; i++) s += this.ncpByLevel[i]![levels[i]!]!;
        return s / (this.rows * this.m);
      }
      case 'entropy': {
        let s = 0;
        for (let i = 0; i < this.m; i++) s += this.entropy(i, levels[i]!).sum;
        return s;
      }
      case 'loss':
        return this.lossOf(
          Array.from({ length: this.m }, (_, i) => this.gFactor * this.shareByLevel[i]![levels[i]!]!),
        );
      case 'precision':
        return this.relativeHeight(levels);
      case 'discernibility':
        // With C possible classes, Σ|E|² ≥ N²/C (Cauchy–Schwarz); suppressing rows only
        // costs more (N per row), and every retained row costs at least k.
        return this.classCountBound(levels, this.tuples[0]?.length ?? 0);
      case 'aecs':
        return 0;
    }
  }

  /**
   * A lower bound from a node's grouping, valid for every generalization of it: classes only
   * merge as levels rise.
   * - discernibility: Σ|E|² over all classes (a suppressed row costs N ≥ its class size);
   * - aecs: at most `groups` classes remain and at most `maxSuppressedRows` rows go.
   */
  groupingBound(metric: MetricName, outcome: ClassOutcome, maxSuppressedRows: number): number {
    switch (metric) {
      case 'discernibility': {
        const { groups, sizes } = outcome; // locals: the outcome's getter keeps its reads slow
        let squares = 0;
        for (let g = 0; g < groups; g++) squares += sizes[g]! * sizes[g]!;
        return squares;
      }
      case 'aecs':
        return (this.rows - maxSuppressedRows) / (outcome.groups * this.k);
      default:
        return 0;
    }
  }

  /**
   * What an evaluated node A passes down to its specializations X when the models are
   * monotonic: every row suppressed at A is suppressed at X too (its class only shrinks),
   * and costs at X at least its cells' generalization cost there. For NCP and entropy that
   * is A's suppression penalty (value minus a-priori bound); for precision, A's suppressed rows.
   * Loss's penalty per QI grows at X (its cells' shares only fall) and its a-priori value
   * falls: for the arithmetic mean the difference carries, for the geometric mean the log of
   * the ratio (value + 1)/(a-priori + 1) (each QI's factor log(w·v + 1) grows the less, the
   * higher v already is).
   */
  suppressionCarry(
    metric: MetricName,
    levels: ArrayLike<number>,
    values: MetricValues,
    suppressedRows: number,
  ): number {
    switch (metric) {
      case 'ncp':
        return values.ncp - this.aprioriBound('ncp', levels);
      case 'entropy':
        return values.entropy - this.aprioriBound('entropy', levels);
      case 'loss': {
        const apriori = this.aprioriBound('loss', levels);
        return this.loss.aggregate === 'geometric'
          ? Math.max(0, Math.log((values.loss + 1) / (apriori + 1)))
          : values.loss - apriori;
      }
      case 'precision':
      case 'discernibility':
        return suppressedRows;
      default:
        return 0;
    }
  }

  /** The lower bound at X from the largest carry of its evaluated generalizations. */
  suppressionBound(metric: MetricName, levels: ArrayLike<number>, carry: number): number {
    if (metric === 'precision') {
      const x = this.relativeHeight(levels);
      return x + (carry * (1 - x)) / this.rows;
    }
    if (metric === 'discernibility') {
      // s ≥ carry rows cost N each; the R = N − s released rows sit in at most C classes of at
      // least k rows: Σ|E|² ≥ max(k·R, R²/C). Over s ≥ carry, s·N + k·R is least at s = carry,
      // and s·N + R²/C (convex in s) at s = max(carry, N·(1 − C/2)): their larger one bounds it.
      const n = this.rows;
      const classes = this.possibleClasses(levels, this.tuples[0]?.length ?? 0);
      const bySize = carry * n + this.k * (n - carry);
      const s = Math.max(carry, n * (1 - classes / 2));
      const byCount = s * n + ((n - s) * (n - s)) / classes;
      return Math.max(bySize, byCount);
    }
    if (metric === 'loss' && this.loss.aggregate === 'geometric')
      return (this.aprioriBound(metric, levels) + 1) * Math.exp(carry) - 1;
    return this.aprioriBound(metric, levels) + carry;
  }

  /** A lower bound before grouping, for discernibility: Σ|E|² ≥ N²/C with at most C classes. */
  classCountBound(levels: ArrayLike<number>, distinctTuples: number): number {
    const classes = this.possibleClasses(levels, distinctTuples);
    return Math.max(this.rows * this.k, (this.rows * this.rows) / classes);
  }

  /** At most this many classes at a node: the distinct tuples, or the generalized domains' product. */
  private possibleClasses(levels: ArrayLike<number>, distinctTuples: number): number {
    let product = 1;
    for (let i = 0; i < this.m; i++) product *= this.hierarchies[i]!.labels[levels[i]!]!.length;
    return Math.max(1, Math.min(distinctTuples, product));
  }

  /** Calls `visit(tuple, qi)` for each suppressed cell of a retained class's tuples (cell suppression). */
  private forSuppressedCells(outcome: ClassOutcome, visit: (t: number, i: number) => void): void {
    const cells = outcome.cells;
    if (!cells) return;
    const { groupOf, suppressed } = outcome;
    const m = this.m;
    for (let t = 0; t < this.counts.length; t++) {
      const g = groupOf[t]!;
      if (suppressed[g]) continue;
      for (let i = 0; i < m; i++) if (cells[g * m + i]) visit(t, i);
    }
  }

  /** Precision's share of the suppressed cells: each costs 1 instead of its relative height. */
  private cellPrecision(levels: ArrayLike<number>, outcome: ClassOutcome): number {
    let s = 0;
    this.forSuppressedCells(outcome, (t, i) => {
      const h = this.hierarchies[i]!.height;
      s += this.counts[t]! * (1 - (h > 0 ? levels[i]! / h : 1));
    });
    return s / (this.rows * this.m);
  }

  private relativeHeight(levels: ArrayLike<number>): number {
    let s = 0;
    for (let i = 0; i < this.m; i++) {
      const h = this.hierarchies[i]!.height;
      if (h > 0) s += levels[i]! / h;
    }
    return s / this.m;
  }
}

/** Per code of one column, the summed weight of the tuples holding it. */
function weightedFrequencies(column: Int32Array, weights: Int32Array, domain: number): Float64Array {
  const freq = new Float64Array(domain);
  for (let t = 0; t < column.length; t++) freq[column[t]!]! += weights[t]!;
  return freq;
}

function weighted(cost: Float64Array, freq: Float64Array): number {
  let s = 0;
  for (let c = 0; c < cost.length; c++) s += cost[c]! * freq[c]!;
  return s;
}
