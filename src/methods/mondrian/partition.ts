/**
 * Mondrian's recursive partitioning (LeFevre, DeWitt, Ramakrishnan 2006; docs/definitions.md §4) as an
 * explicit stack over a kernel session: the kernels (WASM, or the TS reference) do each
 * step's per-row work in place; this driver chooses dimensions and cuts and judges every
 * candidate part with the privacy models.
 *
 * For a partition: compute each dimension's extent (min/max key, LCA level), rank the
 * dimensions by normalized width (numeric: (max−min)/(global max−min); categorical:
 * (leaves under the LCA − 1)/(domain − 1), the NCP a cell of the partition costs) and try
 * them widest first:
 * - numeric and ordinal: cut at the median. Strict: every row equal to the median goes to
 *   one side (both sides tried, the more balanced first). Relaxed: first the balanced cut
 *   (⌊n/2⌋ rows left, rows equal to the median divided — those first in the key order of the
 *   next widest dimension go left, so the divided rows stay coherent), then the strict ones.
 * - nominal: one part per child of the LCA that has rows.
 * The first candidate whose parts all satisfy every model is taken; a partition with none
 * is final. Partitions are processed depth first, first part first.
 */

import { K_ANONYMITY } from '../../catalogue/k-anonymity.ts';
import type { MondrianKernel, MondrianSession } from '../../kernels/mondrian/kernel.ts';
import type { PrivacyModel } from '../../models/model.ts';
import { widthOver } from '../../util/extent.ts';

export type DimKind = 'numeric' | 'ordinal' | 'nominal';

export interface MondrianDim {
  readonly name: string;
  readonly kind: DimKind;
  /** row → key: rank of the value (numeric, ordinal) or value code (nominal). */
  readonly keys: Int32Array;
  readonly domain: number;
  /** Numeric: the value of each rank, ascending; key `values.length` is the missing value. */
  readonly values: Float64Array | null;
  /** Categorical: `levels[l][key]` = label at level l (0…height), top level a single root. */
  readonly levels: Int32Array[] | null;
  /** Categorical: `labels[l][label]` = the label's string. */
  readonly labels: string[][] | null;
  /** Categorical: `leaves[l][label]` = input values under the label. */
  readonly leaves: Int32Array[] | null;
  /** Distinct input values of the attribute. */
  readonly distinct: number;
}

export interface SensitiveCodes {
  readonly name: string;
  readonly codes: Int32Array;
  readonly width: number;
}

/**
 * How relaxed Mondrian orders its cuts: `balanced-first` divides the median rows whenever
 * that passes (LeFevre's relaxed cut); `strict-first` runs strict Mondrian and divides median
 * rows only in partitions strict Mondrian cannot split (every row's cells are then at most
 * as coarse as under strict Mondrian).
 */
export type RelaxedStrategy = 'balanced-first' | 'strict-first';

export interface PartitionProblem {
  readonly rows: number;
  readonly dims: readonly MondrianDim[];
  readonly models: readonly PrivacyModel[];
  readonly sensitive: readonly SensitiveCodes[];
  readonly mode: 'strict' | 'relaxed';
  /** Relaxed mode only; default balanced-first. */
  readonly relaxed?: RelaxedStrategy;
}

/** The final partitions: ranges of `rowOrder`, each with its extent and SA histogram. */
export interface PartitionResult {
  readonly count: number;
  /** Partition p holds rows rowOrder[start[p] … end[p]). */
  readonly start: Int32Array;
  readonly end: Int32Array;
  /** 3 per dimension per partition: min key, max key, LCA level. */
  readonly extent: Int32Array;
  /** W per partition: the SA histograms (W = Σ SA widths; 0 without SA models). */
  readonly hist: Int32Array;
  readonly histWidth: number;
  readonly histBase: Int32Array;
  readonly rowOrder: Int32Array;
  /** Successful splits, in total and per dimension. */
  readonly splits: number;
  readonly splitsByDim: number[];
  /** Candidate cuts handed to the kernels (successful or not). */
  readonly attempts: number;
}

export function kernelInput(problem: PartitionProblem) {
  return {
    keys: problem.dims.map((d) => d.keys),
    domains: problem.dims.map((d) => d.domain),
    hierarchies: problem.dims.map((d) => d.levels),
    sensitive: problem.sensitive.map((s) => s.codes),
    sensitiveWidths: problem.sensitive.map((s) => s.width),
  };
}

/** Grows by doubling: the final partitions are not known in advance. */
class IntList {
  data: Int32Array;
  length = 0;
  constructor(capacity: number) {
    this.data = new Int32Array(Math.max(16, capacity));
  }
  private grow(min: number): void {
    let size = this.data.length * 2;
    while (size < min) size *= 2;
    const next = new Int32Array(size);
    next.set(this.data.subarray(0, this.length));
    this.data = next;
  }
  pushAll(values: ArrayLike<number>, from = 0, to = values.length): void {
    if (this.length + to - from > this.data.length) this.grow(this.length + to - from);
    for (let i = from; i < to; i++) this.data[this.length++] = values[i]!;
  }
  push(v: number): void {
    if (this.length === this.data.length) this.grow(this.length + 1);
    this.data[this.length++] = v;
  }
  pop(): number {
    return this.data[--this.length]!;
  }
  view(): Int32Array {
    return this.data.slice(0, this.length);
  }
}

/** Judges candidate parts: size and SA histograms against every model. */
export class ModelJudge {
  private readonly saOf: Int32Array;
  private readonly widths: number[];
  readonly k: number;
  /** Whether any model reads SA histograms (else sizes decide). */
  readonly needsHistograms: boolean;

  constructor(
    private readonly models: readonly PrivacyModel[],
    sensitive: readonly SensitiveCodes[],
    private readonly histBase: Int32Array,
  ) {
    this.saOf = Int32Array.from(models, (m) =>
      m.attribute === null ? -1 : sensitive.findIndex((s) => s.name === m.attribute),
    );
    this.widths = sensitive.map((s) => s.width);
    let k = 1;
    for (const m of models) if (m.spec.model === K_ANONYMITY.name) k = Math.max(k, m.spec.k);
    this.k = k;
    this.needsHistograms = models.some((m) => m.attribute !== null);
  }

  /** Does a part of `size` rows with SA counts hist[at … at+W) satisfy every model? */
  holds(size: number, hist: Int32Array, at: number): boolean {
    if (size < this.k) return false;
    for (let i = 0; i < this.models.length; i++) {
      const sa = this.saOf[i]!;
      const base = sa < 0 ? 0 : at + this.histBase[sa]!;
      const histogram = sa < 0 ? null : hist.subarray(base, base + this.widths[sa]!);
      if (!this.models[i]!.holds({ size, histogram })) return false;
    }
    return true;
  }
}

/** Width of a dimension over a partition, from its extent (see the file comment). */
export function dimWidth(dim: MondrianDim, extent: Int32Array, at: number): number {
  const min = extent[at]!;
  const max = extent[at + 1]!;
  if (dim.kind === 'numeric') {
    const v = dim.values!;
    // The missing value alone is exact; with numbers the part is released as `*`.
    if (max >= v.length) return min >= v.length ? 0 : 1;
    const [width, span] = widthOver(v[min]!, v[max]!, v[0]!, v[v.length - 1]!);
    return span > 0 ? width / span : 0;
  }
  if (dim.distinct <= 1) return 0;
  const lca = extent[at + 2]!;
  return (dim.leaves![lca]![dim.levels![lca]![min]!]! - 1) / (dim.distinct - 1);
}

export function partitionMondrian(problem: PartitionProblem, kernel: MondrianKernel): PartitionResult {
  const session = kernel.open(kernelInput(problem));
  try {
    return run(problem, session);
  } finally {
    session.dispose();
  }
}

function run(problem: PartitionProblem, session: MondrianSession): PartitionResult {
  const { dims, rows: n } = problem;
  const passes = passesOf(problem.mode, problem.relaxed ?? 'balanced-first');
  const m = dims.length;
  const W = session.histWidth;
  const judge = new ModelJudge(problem.models, problem.sensitive, session.histBase);
  const k = judge.k;
  const { out, hist, bounds } = session;

  // The whole table's SA histogram: the root's.
  const rootHist = new Int32Array(W);
  problem.sensitive.forEach((s, j) => {
    const base = session.histBase[j]!;
    for (let r = 0; r < n; r++) rootHist[base + s.codes[r]!]!++;
  });

  // Stack of pending partitions: [start, end] pairs and their histograms.
  const stack = new IntList(64);
  const stackHist = new IntList(64 * W);
  const starts = new IntList(1024);
  const ends = new IntList(1024);
  const extents = new IntList(1024 * 3 * m);
  const hists = new IntList(1024 * W);
  const splitsByDim = new Array<number>(m).fill(0);
  let splits = 0;
  let attempts = 0;
  if (n > 0) {
    stack.push(0);
    stack.push(n);
    stackHist.pushAll(rootHist);
  }
  const extent = new Int32Array(3 * m);
  const order: number[] = [];
  const widths = new Float64Array(m);
  const partHist = new Int32Array(W);
  // The two parts of a binary cut, with the histograms of the last counting cut: left on top.
  const pushParts = (from: number, middle: number, to: number) => {
    stack.push(middle);
    stack.push(to);
    stackHist.pushAll(hist, W, 2 * W);
    stack.push(from);
    stack.push(middle);
    stackHist.pushAll(hist, 0, W);
  };

  while (stack.length > 0) {
    const end = stack.pop();
    const start = stack.pop();
    stackHist.length -= W;
    for (let x = 0; x < W; x++) partHist[x] = stackHist.data[stackHist.length + x]!;
    const size = end - start;
    session.stats(start, end);
    extent.set(out.subarray(0, 3 * m));

    let done = false;
    if (size >= 2 * k) {
      order.length = 0;
      for (let i = 0; i < m; i++) {
        widths[i] = dimWidth(dims[i]!, extent, 3 * i);
        if (widths[i]! > 0) order.push(i);
      }
      order.sort((a, b) => widths[b]! - widths[a]! || a - b);
      for (const pass of passes) {
        for (const i of order) {
          const dim = dims[i]!;
          if (dim.kind === 'nominal') {
            if (pass === 'balanced') continue;
            attempts++;
            const level = extent[3 * i + 2]! - 1;
            const parts = session.group(start, end, i, level, false);
            let ok = true;
            for (let p = 0, from = 0; p < parts && ok; from = bounds[p++]!) {
              ok = judge.holds(bounds[p]! - from, hist, p * W);
            }
            if (!ok) continue;
            // Push in reverse so the first part is processed next; then move the records.
            for (let p = parts - 1; p >= 0; p--) {
              stack.push(start + (p === 0 ? 0 : bounds[p - 1]!));
              stack.push(start + bounds[p]!);
              stackHist.pushAll(hist, p * W, (p + 1) * W);
            }
            session.group(start, end, i, level, true);
            splits++;
            splitsByDim[i]!++;
            done = true;
            break;
          }
          // Numeric with missing and present values: first cut the missing value off.
          if (pass !== 'balanced' && dim.kind === 'numeric' && extent[3 * i + 1]! >= dim.values!.length) {
            attempts++;
            const missingKey = dim.values!.length;
            const left = session.cut(start, end, i, missingKey, 0, -1, 0, false);
            if (judge.holds(left, hist, 0) && judge.holds(size - left, hist, W)) {
              pushParts(start, start + left, end);
              session.cut(start, end, i, missingKey, 0, -1, 0, true);
              splits++;
              splitsByDim[i]!++;
              done = true;
              break;
            }
          }
          // Numeric and ordinal: cuts at the median. A divided median (relaxed) sends left the
          // median rows that come first in the order of the next widest dimension.
          session.median(start, end, i, extent[3 * i]!, extent[3 * i + 1]!, size >> 1, -1, 0);
          const value = out[0]!;
          const below = out[1]!;
          const equal = out[2]!;
          const second = order[0] !== i ? order[0]! : order.length > 1 ? order[1]! : -1;
          for (const quota of cutQuotas(size, below, equal, pass, k)) {
            attempts++;
            const left = below + quota;
            let dim2 = -1;
            let value2 = 0;
            let q = quota;
            if (quota > 0 && quota < equal && second >= 0) {
              session.median(
                start,
                end,
                second,
                extent[3 * second]!,
                extent[3 * second + 1]!,
                quota,
                i,
                value,
              );
              dim2 = second;
              value2 = out[0]!;
              q = quota - out[1]!;
            }
            if (judge.needsHistograms) session.cut(start, end, i, value, q, dim2, value2, false);
            if (!judge.holds(left, hist, 0) || !judge.holds(size - left, hist, W)) continue;
            pushParts(start, start + left, end);
            session.cut(start, end, i, value, q, dim2, value2, true);
            splits++;
            splitsByDim[i]!++;
            done = true;
            break;
          }
          if (done) break;
        }
        if (done) break;
      }
    }
    if (!done) {
      starts.push(start);
      ends.push(end);
      extents.pushAll(extent);
      hists.pushAll(partHist);
    }
  }

  return {
    count: starts.length,
    start: starts.view(),
    end: ends.view(),
    extent: extents.view(),
    hist: hists.view(),
    histWidth: W,
    histBase: session.histBase.slice(),
    rowOrder: session.rowOrder(),
    splits,
    splitsByDim,
    attempts,
  };
}

/**
 * The quotas of the cuts to try at a median with `below` rows under it and `equal` rows at
 * it, best first, leaving out cuts whose sides cannot reach k rows. A quota q sends the
 * first q median rows left: `equal` (all: left = rows ≤ median), 0 (left = rows < median),
 * or, relaxed, ⌊n/2⌋ − below (left = exactly ⌊n/2⌋ rows).
 */
/**
 * One pass tries every dimension once with its kind of cut:
 * - strict: nominal splits and strict median cuts;
 * - balanced-first: nominal splits; on ordered dimensions the balanced cut, then strict ones;
 * - balanced: balanced cuts on ordered dimensions only (after a strict pass found nothing).
 */
type CutPass = 'strict' | 'balanced-first' | 'balanced';

function passesOf(mode: 'strict' | 'relaxed', relaxed: RelaxedStrategy): CutPass[] {
  if (mode === 'strict') return ['strict'];
  return relaxed === 'balanced-first' ? ['balanced-first'] : ['strict', 'balanced'];
}

/**
 * The quotas of the cuts a pass tries at a median with `below` rows under it and `equal`
 * rows at it, best first, leaving out cuts whose sides cannot reach k rows. A quota q sends
 * q median rows left: `equal` (all: left = rows ≤ median), 0 (left = rows < median), or
 * ⌊n/2⌋ − below (the balanced cut: left = exactly ⌊n/2⌋ rows).
 */
function cutQuotas(size: number, below: number, equal: number, pass: CutPass, k: number): number[] {
  const candidates: { quota: number; left: number }[] = [];
  const consider = (quota: number) => {
    const left = below + quota;
    if (left < Math.max(1, k) || size - left < Math.max(1, k)) return;
    if (candidates.some((c) => c.left === left)) return;
    candidates.push({ quota, left });
  };
  if (pass !== 'strict') consider((size >> 1) - below);
  if (pass !== 'balanced') {
    const half = size / 2;
    const strict = [equal, 0].sort((a, b) => Math.abs(below + a - half) - Math.abs(below + b - half));
    for (const q of strict) consider(q);
  }
  return candidates.map((c) => c.quota);
}
