/**
 * Slicing's tuple partitioning (docs/definitions.md §4 steps 3–4; Li, Li, Zhang, Molloy): a Mondrian-like
 * queue of buckets, largest first; a bucket is split in two when the sliced table stays
 * l-diverse, otherwise it is final.
 *
 * The l-diverse check, for every original tuple t and SA value s:
 *   f(t,B)  = Π_C (share of B's C-values equal to t[C]), the SA's column compared on its other
 *             attributes only (share 1 when it holds the SA alone);
 *   p(t,B)  = f(t,B) / Σ_B' f(t,B');
 *   D(t,B)  = the SA distribution in B among the rows whose SA-column values match t on those
 *             other attributes;
 *   p(t,s)  = Σ_B p(t,B)·D(t,B)[s] ≤ 1/l.
 * Tuples with equal values outside the SA share p(t,·), so the check runs over "keys": the
 * distinct tuples of (non-SA columns, the SA column's other attributes). Per key it keeps
 * F = Σ_B f(t,B) and G[s] = Σ_B f(t,B)·D(t,B)[s] (so p(t,s) = G[s]/F), and a split of B into
 * B1, B2 changes only the keys that match B (every column value of the key appears in B):
 * F' = F − f(t,B) + f(t,B1) + f(t,B2), and likewise G. Each trial split therefore costs the
 * keys matching B, not the whole table; the independent verifier recomputes everything from
 * the released file.
 *
 * Splits, `mondrian` (default, strict): on the split attribute with the widest normalized
 * range in the bucket (numeric: (max − min)/(table max − table min); otherwise distinct
 * values − 1 over the table's − 1), at the median of its value order (values below the
 * median's value go left, or ≤ when nothing is below); when that split breaks l-diversity the
 * next widest attribute is tried, and the bucket is final when none works. A numeric
 * attribute's missing value sorts after its numbers and is cut off them first (as Mondrian
 * does), never counted as a number. Buckets are then boxes in QI space, so every tuple whose
 * columns cover the QIs matches exactly one bucket.
 * `random`: the bucket's rows are shuffled (seeded) and cut in two halves, up to
 * RANDOM_TRIES times; buckets overlap in QI space and tuples match several buckets (the
 * membership protection of the slicing paper's second experiment).
 */
import { posteriorHolds, posteriorLimit } from '../../models/l-diversity.ts';
import { widthOver } from '../../util/extent.ts';
import { Heap } from '../../util/heap.ts';
import { rowNumbers } from '../../util/int32s.ts';
import type { Random } from '../../util/random.ts';

/** Shuffles tried per bucket with random splits. */
export const RANDOM_TRIES = 3;

export interface SplitAttribute {
  readonly name: string;
  /** row → rank in the attribute's value order (0..domain − 1). */
  readonly ranks: Int32Array;
  readonly domain: number;
  /** rank → numeric value for numeric attributes (normalized width by range), else null. */
  readonly numeric: Float64Array | null;
  /**
   * Numeric attributes: the ranks below it hold numbers, the ranks from it the missing value
   * (an empty cell, sorted after every number as Mondrian sorts it; never read as 0).
   */
  readonly numbers: number;
}

export interface SlicingProblem {
  readonly rows: number;
  readonly l: number;
  /** Per slicing column: row → code of the values compared by the check (the SA's column: its other attributes). */
  readonly matchCodes: readonly Int32Array[];
  readonly matchDomains: readonly number[];
  readonly saColumn: number;
  readonly sa: Int32Array;
  readonly saDomain: number;
  /** row → key (distinct tuple of match codes over all columns), and each key's match codes. */
  readonly keyOf: Int32Array;
  readonly keys: readonly Int32Array[];
  readonly keyCount: number;
  readonly split: readonly SplitAttribute[];
  /** How buckets are split; `random` draws from `random`. */
  readonly mode: 'mondrian' | 'random';
  readonly random: Random;
}

export interface Bucket {
  readonly start: number;
  readonly end: number;
}

export interface TuplePartition {
  /** The rows, grouped by bucket: bucket b is rows[start, end). */
  readonly rows: Int32Array;
  readonly buckets: Bucket[];
  /** Trial splits evaluated, accepted, and keys visited by the checks (work done). */
  readonly trials: number;
  readonly accepted: number;
  readonly keysVisited: number;
  /** max over keys and SA values of p(t,s) in the final partition, as the builder tracked it. */
  readonly maxP: number;
  /** The same for the single bucket the partitioning started from. */
  readonly initialMaxP: number;
}

/** Thrown when the single-bucket table is not l-diverse (no partition starting from it can be). */
export class InitialNotDiverse extends Error {
  constructor(readonly maxP: number) {
    super('the single-bucket sliced table is not l-diverse');
  }
}

export function partitionTuples(problem: SlicingProblem): TuplePartition {
  return new Partitioner(problem).run();
}

class Partitioner {
  private readonly p: SlicingProblem;
  private readonly c: number;
  private readonly S: number;
  private readonly F: Float64Array;
  private readonly G: Float64Array;
  private readonly rowsArr: Int32Array;
  private readonly tmp: Int32Array;
  /** Per column: keys having each value (CSR). */
  private readonly keyStart: Int32Array[];
  private readonly keyList: Int32Array[];
  /** Per column, counts in the two halves. */
  private readonly cnt1: Int32Array[];
  private readonly cnt2: Int32Array[];
  private readonly present: Int32Array[];
  private readonly presentLen: Int32Array;
  private readonly localU: Int32Array;
  private readonly mark: Uint8Array;
  // Pending updates of one trial.
  private readonly dKeys: Int32Array;
  private readonly dF: Float64Array;
  private readonly dG: Float64Array;
  private trials = 0;
  private accepted = 0;
  private keysVisited = 0;

  constructor(problem: SlicingProblem) {
    this.p = problem;
    this.c = problem.matchCodes.length;
    this.S = problem.saDomain;
    const K = problem.keyCount;
    this.F = new Float64Array(K);
    this.G = new Float64Array(K * this.S);
    this.rowsArr = rowNumbers(problem.rows);
    this.tmp = new Int32Array(problem.rows);
    this.keyStart = [];
    this.keyList = [];
    for (let j = 0; j < this.c; j++) {
      const d = problem.matchDomains[j]!;
      const start = new Int32Array(d + 1);
      const codes = problem.keys[j]!;
      for (let k = 0; k < K; k++) start[codes[k]! + 1]!++;
      for (let v = 0; v < d; v++) start[v + 1]! += start[v]!;
      const list = new Int32Array(K);
      const fill = start.slice(0, d);
      for (let k = 0; k < K; k++) list[fill[codes[k]!]!++] = k;
      this.keyStart.push(start);
      this.keyList.push(list);
    }
    this.cnt1 = problem.matchDomains.map((d) => new Int32Array(d));
    this.cnt2 = problem.matchDomains.map((d) => new Int32Array(d));
    this.present = problem.matchDomains.map((d) => new Int32Array(d));
    this.presentLen = new Int32Array(this.c);
    this.localU = new Int32Array(problem.matchDomains[problem.saColumn]!).fill(-1);
    this.mark = new Uint8Array(K);
    this.dKeys = new Int32Array(K);
    this.dF = new Float64Array(K);
    this.dG = new Float64Array(K * this.S);
  }

  run(): TuplePartition {
    const n = this.p.rows;
    const initialMaxP = this.initialize();
    if (!posteriorHolds(initialMaxP, this.p.l)) throw new InitialNotDiverse(initialMaxP);
    const final: Bucket[] = [];
    // Buckets by size, largest first; ties by start (earlier first).
    const queue = new Heap<Bucket>((a, b) => {
      const sa = a.end - a.start;
      const sb = b.end - b.start;
      return sa > sb || (sa === sb && a.start < b.start);
    });
    if (n > 0) queue.push({ start: 0, end: n });
    for (let b = queue.pop(); b; b = queue.pop()) {
      const mid = this.trySplit(b);
      if (mid < 0) final.push(b);
      else {
        queue.push({ start: b.start, end: mid });
        queue.push({ start: mid, end: b.end });
      }
    }
    let maxP = 0;
    const { F, G, S } = this;
    for (let k = 0; k < this.p.keyCount; k++) {
      for (let s = 0; s < S; s++) maxP = Math.max(maxP, G[k * S + s]! / F[k]!);
    }
    return {
      rows: this.rowsArr,
      buckets: final,
      trials: this.trials,
      accepted: this.accepted,
      keysVisited: this.keysVisited,
      maxP,
      initialMaxP,
    };
  }

  /** F and G of the single bucket holding every row; returns its max p(t,s). */
  private initialize(): number {
    const { p, S, F, G } = this;
    const n = p.rows;
    if (n === 0) return 0;
    const counts = p.matchDomains.map((d) => new Int32Array(d));
    const hist = new Int32Array(p.matchDomains[p.saColumn]! * S);
    const u = p.matchCodes[p.saColumn]!;
    for (let r = 0; r < n; r++) {
      for (let j = 0; j < this.c; j++) counts[j]![p.matchCodes[j]![r]!]!++;
      hist[u[r]! * S + p.sa[r]!]!++;
    }
    let maxP = 0;
    for (let k = 0; k < p.keyCount; k++) {
      let prod = 1;
      for (let j = 0; j < this.c; j++) if (j !== p.saColumn) prod *= counts[j]![p.keys[j]![k]!]! / n;
      const uk = p.keys[p.saColumn]![k]!;
      F[k] = (prod * counts[p.saColumn]![uk]!) / n;
      for (let s = 0; s < S; s++) {
        G[k * S + s] = (prod * hist[uk * S + s]!) / n;
        maxP = Math.max(maxP, G[k * S + s]! / F[k]!);
      }
    }
    return maxP;
  }

  /** Tries the split attributes in order of width; returns the split position, or −1. */
  private trySplit(b: Bucket): number {
    const size = b.end - b.start;
    if (size < 2) return -1;
    if (this.p.mode === 'random') {
      const rows = this.rowsArr;
      for (let attempt = 0; attempt < RANDOM_TRIES; attempt++) {
        for (let i = size - 1; i > 0; i--) {
          const j = this.p.random.below(i + 1);
          const t = rows[b.start + i]!;
          rows[b.start + i] = rows[b.start + j]!;
          rows[b.start + j] = t;
        }
        const mid = b.start + (size >> 1);
        if (this.check(b, mid)) return mid;
      }
      return -1;
    }
    const widths = this.p.split.map((a, i) => ({ i, w: this.width(a, b) }));
    widths.sort((x, y) => y.w - x.w || x.i - y.i);
    for (const { i, w } of widths) {
      if (w <= 0) break;
      const a = this.p.split[i]!;
      const bounds = [this.medianBound(a, b)];
      // Numeric with missing and present values: first the cut of the missing rows from the
      // numbers (as Mondrian cuts it), then the median cut.
      if (a.numeric && a.numbers < a.domain && bounds[0] !== a.numbers) bounds.unshift(a.numbers);
      for (const bound of bounds) {
        const mid = this.partitionAt(a, b, bound);
        if (mid <= b.start || mid >= b.end) continue;
        if (this.check(b, mid)) return mid;
      }
    }
    return -1;
  }

  private width(a: SplitAttribute, b: Bucket): number {
    let lo = Number.POSITIVE_INFINITY;
    let hi = Number.NEGATIVE_INFINITY;
    const rows = this.rowsArr;
    if (a.numeric) {
      for (let i = b.start; i < b.end; i++) {
        const x = a.ranks[rows[i]!]!;
        if (x < lo) lo = x;
        if (x > hi) hi = x;
      }
      // The missing value alone has no width; beside numbers the bucket spans them all (as
      // Mondrian's `*`), so a missing value never counts as a number.
      if (hi >= a.numbers) return lo >= a.numbers ? 0 : 1;
      const [width, span] = widthOver(
        a.numeric[lo]!,
        a.numeric[hi]!,
        a.numeric[0]!,
        a.numeric[a.numbers - 1]!,
      );
      return span > 0 ? width / span : 0;
    }
    if (a.domain < 2) return 0;
    const seen = new Uint8Array(a.domain);
    let distinct = 0;
    for (let i = b.start; i < b.end; i++) {
      const x = a.ranks[rows[i]!]!;
      if (!seen[x]) {
        seen[x] = 1;
        distinct++;
      }
    }
    return (distinct - 1) / (a.domain - 1);
  }

  /** The median cut's bound: ranks below the median's, or up to it when nothing is below. */
  private medianBound(a: SplitAttribute, b: Bucket): number {
    const rows = this.rowsArr;
    const size = b.end - b.start;
    const sorted = new Int32Array(size);
    for (let i = 0; i < size; i++) sorted[i] = a.ranks[rows[b.start + i]!]!;
    sorted.sort();
    const median = sorted[size >> 1]!;
    return sorted[0] === median ? median + 1 : median;
  }

  /** Reorders the bucket's rows: ranks below `bound` first. Returns the split position. */
  private partitionAt(a: SplitAttribute, b: Bucket, bound: number): number {
    const rows = this.rowsArr;
    let left = b.start;
    let right = 0;
    for (let i = b.start; i < b.end; i++) {
      const r = rows[i]!;
      if (a.ranks[r]! < bound) rows[left++] = r;
      else this.tmp[right++] = r;
    }
    for (let i = 0; i < right; i++) rows[left + i] = this.tmp[i]!;
    return left;
  }

  /** Would splitting b at mid keep every key's p(t,s) ≤ 1/l? Commits the update if so. */
  private check(b: Bucket, mid: number): boolean {
    this.trials++;
    const { p, c, S, rowsArr, cnt1, cnt2, present, presentLen, localU, F, G, dKeys, dF, dG, mark } = this;
    const sc = p.saColumn;
    const n1 = mid - b.start;
    const n2 = b.end - mid;
    const nB = n1 + n2;
    // Counts per column value in each half; SA histograms per value of the SA column's other attributes.
    presentLen.fill(0);
    let locals = 0;
    for (let i = b.start; i < b.end; i++) {
      const r = rowsArr[i]!;
      const half = i < mid ? cnt1 : cnt2;
      for (let j = 0; j < c; j++) {
        const v = p.matchCodes[j]![r]!;
        if (cnt1[j]![v] === 0 && cnt2[j]![v] === 0) present[j]![presentLen[j]!++] = v;
        half[j]![v]!++;
      }
      const u = p.matchCodes[sc]![r]!;
      if (localU[u]! < 0) localU[u] = locals++;
    }
    const h1 = new Int32Array(locals * S);
    const h2 = new Int32Array(locals * S);
    for (let i = b.start; i < b.end; i++) {
      const r = rowsArr[i]!;
      const at = localU[p.matchCodes[sc]![r]!]! * S + p.sa[r]!;
      if (i < mid) h1[at]!++;
      else h2[at]!++;
    }
    // The column whose present values list the fewest keys gives the candidates.
    let best = 0;
    let bestCount = Number.POSITIVE_INFINITY;
    for (let j = 0; j < c; j++) {
      let total = 0;
      const start = this.keyStart[j]!;
      for (let x = 0; x < presentLen[j]!; x++) {
        const v = present[j]![x]!;
        total += start[v + 1]! - start[v]!;
      }
      if (total < bestCount) {
        bestCount = total;
        best = j;
      }
    }
    let pending = 0;
    let ok = true;
    const bound = posteriorLimit(p.l);
    const start = this.keyStart[best]!;
    const list = this.keyList[best]!;
    scan: for (let x = 0; x < presentLen[best]!; x++) {
      const v = present[best]![x]!;
      for (let q = start[v]!; q < start[v + 1]!; q++) {
        const k = list[q]!;
        this.keysVisited++;
        let prodB = 1;
        let prod1 = 1;
        let prod2 = 1;
        let matches = true;
        for (let j = 0; j < c; j++) {
          const kv = p.keys[j]![k]!;
          const a1 = cnt1[j]![kv]!;
          const a2 = cnt2[j]![kv]!;
          if (a1 + a2 === 0) {
            matches = false;
            break;
          }
          if (j === sc) continue;
          prodB *= (a1 + a2) / nB;
          prod1 *= a1 / n1;
          prod2 *= a2 / n2;
        }
        if (!matches) continue;
        const uk = p.keys[sc]![k]!;
        const lu = localU[uk]! * S;
        const u1 = cnt1[sc]![uk]!;
        const u2 = cnt2[sc]![uk]!;
        const df = (prod1 * u1) / n1 + (prod2 * u2) / n2 - (prodB * (u1 + u2)) / nB;
        const f = F[k]! + df;
        dKeys[pending] = k;
        dF[pending] = df;
        for (let s = 0; s < S; s++) {
          const a1 = h1[lu + s]!;
          const a2 = h2[lu + s]!;
          const dg = (prod1 * a1) / n1 + (prod2 * a2) / n2 - (prodB * (a1 + a2)) / nB;
          dG[pending * S + s] = dg;
          if (G[k * S + s]! + dg > bound * f) {
            ok = false;
            break scan;
          }
        }
        pending++;
      }
    }
    // Reset the scratch counts.
    for (let j = 0; j < c; j++) {
      for (let x = 0; x < presentLen[j]!; x++) {
        const v = present[j]![x]!;
        cnt1[j]![v] = 0;
        cnt2[j]![v] = 0;
      }
    }
    for (let x = 0; x < presentLen[sc]!; x++) localU[present[sc]![x]!] = -1;
    if (!ok) return false;
    for (let i = 0; i < pending; i++) {
      const k = dKeys[i]!;
      if (mark[k]) throw new Error('slicing: a key was visited twice in one check');
      mark[k] = 1;
      F[k]! += dF[i]!;
      for (let s = 0; s < S; s++) G[k * S + s]! += dG[i * S + s]!;
    }
    for (let i = 0; i < pending; i++) mark[dKeys[i]!] = 0;
    this.accepted++;
    return true;
  }
}
