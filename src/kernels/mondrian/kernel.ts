/**
 * The Mondrian kernel's contract, shared by the WASM implementation (assembly/mondrian.ts via
 * mondrian/wasm.ts) and the plain-TS reference (mondrian/reference.ts). A session holds every row as
 * a record `[key_0 … key_{m−1}, sa_0 … sa_{s−1}, row]` and runs one split step at a time on a
 * partition's range of records, in place; both implementations move records identically, so
 * the driver (src/methods/mondrian/partition.ts) gets identical partitions from either.
 */
import { kernelError, Status } from '../status.ts';
export interface MondrianInput {
  /** Per dimension: row → key (a rank for numeric and ordinal QIs, a value code for nominal). */
  readonly keys: readonly Int32Array[];
  /** Per dimension: keys are in [0, domain). */
  readonly domains: readonly number[];
  /**
   * Per dimension: its hierarchy as level tables `levels[l][key]` = label at level l, for
   * levels 0…height, the top level a single root for the keys present; null for none.
   */
  readonly hierarchies: readonly (readonly Int32Array[] | null)[];
  /** Per sensitive attribute: row → code. */
  readonly sensitive: readonly Int32Array[];
  /** Per sensitive attribute: codes are in [0, width). */
  readonly sensitiveWidths: readonly number[];
}

export interface MondrianSession {
  readonly n: number;
  readonly m: number;
  /** W: the summed widths of the sensitive attributes (length of one SA histogram). */
  readonly histWidth: number;
  /** Where SA j's counts start in a histogram. */
  readonly histBase: Int32Array;
  /** Results of `stats` (3 per dimension: min key, max key, LCA level) and `median` (3). */
  readonly out: Int32Array;
  /** Results of `group`: end of each part, relative to the range's start. */
  readonly bounds: Int32Array;
  /** SA histograms of the parts of the last counting `cut` (2) or `group` (one per part), W each. */
  readonly hist: Int32Array;
  /** Per dimension over [start, end): min key, max key, LCA level → `out`. */
  stats(start: number, end: number): void;
  /**
   * The key at sorted position `target` of `dim` (keys in [lo, hi]) over the range, counting
   * only rows whose `filterDim` key is `filterValue` when filterDim ≥ 0 → `out` = [key, rows
   * below it, rows equal to it].
   */
  median(
    start: number,
    end: number,
    dim: number,
    lo: number,
    hi: number,
    target: number,
    filterDim: number,
    filterValue: number,
  ): void;
  /**
   * Binary partition on `dim`: keys below `value` go left, above it right; of the keys equal
   * to it, with dim2 < 0 the first `quota` go left; with dim2 ≥ 0 (a divided median ordered
   * by a second dimension) those whose dim2 key is below `value2`, and of those equal to
   * value2 the first `quota`. Returns the left size. move = false: only counts, and `hist`
   * gets both parts' SA counts (left, then right); move = true: moves the records, stably.
   */
  cut(
    start: number,
    end: number,
    dim: number,
    value: number,
    quota: number,
    dim2: number,
    value2: number,
    move: boolean,
  ): number;
  /**
   * Multiway partition by the labels of `dim` at hierarchy `level` (below the top): one part
   * per label with rows, in label order; `bounds` gets the parts' ends. move = false: only
   * counts, and `hist` gets each part's SA counts; move = true: moves the records, stably.
   * Returns the number of parts.
   */
  group(start: number, end: number, dim: number, level: number, move: boolean): number;
  /** The row id of every record, in the records' current order. */
  rowOrder(): Int32Array;
  dispose(): void;
}

export interface MondrianKernel {
  readonly name: 'wasm' | 'ts';
  open(input: MondrianInput): MondrianSession;
}

/** What a session's buffers must hold, after checking every code against its domain once. */
export interface MondrianShape {
  readonly n: number;
  readonly m: number;
  readonly s: number;
  /** Record width m + s + 1. */
  readonly w: number;
  readonly histWidth: number;
  readonly histBase: Int32Array;
  /** Per dimension with a hierarchy: labels per level (max label + 1 over the domain). */
  readonly labelCounts: (number[] | null)[];
  /** Per dimension: every label covers a contiguous range of keys (then LCA = LCA(min, max)). */
  readonly contiguous: boolean[];
  /** Largest number of labels at any level, and of keys in any domain (scratch sizes). */
  readonly maxLabels: number;
  readonly maxDomain: number;
  /** Largest number of parts a `group` can return. */
  readonly maxParts: number;
}

/**
 * Validates an input on the way in — the WASM loops use unchecked loads, and an out-of-range
 * code would silently read neighbouring memory — and sizes the buffers.
 */
export function mondrianShape(input: MondrianInput): MondrianShape {
  const m = input.keys.length;
  const s = input.sensitive.length;
  const n = input.keys[0]?.length ?? input.sensitive[0]?.length ?? 0;
  if (input.domains.length !== m || input.hierarchies.length !== m)
    throw kernelError('mondrian', Status.BadShape, 'one domain and one hierarchy (or null) per dimension');
  if (input.sensitiveWidths.length !== s)
    throw kernelError('mondrian', Status.BadShape, 'one width per sensitive attribute');
  let maxLabels = 1;
  let maxDomain = 1;
  const labelCounts = input.keys.map((keys, i) => {
    const domain = input.domains[i]!;
    if (!(Number.isInteger(domain) && domain >= 1))
      throw kernelError('mondrian', Status.BadShape, `dimension ${i}: bad domain`);
    if (keys.length !== n)
      throw kernelError('mondrian', Status.BadShape, `dimension ${i} has ${keys.length} keys, expected ${n}`);
    maxDomain = Math.max(maxDomain, domain);
    for (let r = 0; r < n; r++) {
      const k = keys[r]!;
      if (!(k >= 0 && k < domain))
        throw kernelError(
          'mondrian',
          Status.CodeOutOfDomain,
          `dimension ${i}, row ${r}: key outside [0, ${domain})`,
        );
    }
    const levels = input.hierarchies[i];
    if (!levels) return null;
    if (levels.length < 1)
      throw kernelError('mondrian', Status.BadShape, `dimension ${i}: a hierarchy needs level 0`);
    const counts = levels.map((table, l) => {
      if (table.length < domain)
        throw kernelError(
          'mondrian',
          Status.BadShape,
          `dimension ${i}, level ${l}: table shorter than domain`,
        );
      let max = 0;
      for (let c = 0; c < domain; c++) {
        const label = table[c]!;
        if (!(label >= 0 && label < 2 ** 30))
          throw kernelError('mondrian', Status.BadShape, `dimension ${i}, level ${l}: bad label`);
        if (label > max) max = label;
      }
      maxLabels = Math.max(maxLabels, max + 1);
      return max + 1;
    });
    // The kernels stop climbing at the top level: it must be one root for the rows' keys.
    const top = levels[levels.length - 1]!;
    for (let r = 1; r < n; r++) {
      if (top[keys[r]!] !== top[keys[0]!])
        throw kernelError('mondrian', Status.BadShape, `dimension ${i}: the top level is not a single root`);
    }
    return counts;
  });
  const contiguous = input.hierarchies.map((levels, i) =>
    levels ? isContiguous(levels, input.domains[i]!) : false,
  );
  const histBase = new Int32Array(s);
  let histWidth = 0;
  input.sensitive.forEach((codes, j) => {
    const width = input.sensitiveWidths[j]!;
    if (!(Number.isInteger(width) && width >= 1))
      throw kernelError('mondrian', Status.BadShape, `sensitive ${j}: bad width`);
    if (codes.length !== n)
      throw kernelError(
        'mondrian',
        Status.BadShape,
        `sensitive ${j} has ${codes.length} codes, expected ${n}`,
      );
    for (let r = 0; r < n; r++) {
      const c = codes[r]!;
      if (!(c >= 0 && c < width))
        throw kernelError(
          'mondrian',
          Status.CodeOutOfDomain,
          `sensitive ${j}, row ${r}: code outside [0, ${width})`,
        );
    }
    histBase[j] = histWidth;
    histWidth += width;
  });
  const w = m + s + 1;
  if (n * w >= 2 ** 28)
    throw kernelError('mondrian', Status.TooLarge, 'too many rows × columns for one session');
  const maxParts = Math.max(2, Math.min(maxLabels, n));
  if (maxParts * histWidth >= 2 ** 28)
    throw kernelError(
      'mondrian',
      Status.TooLarge,
      'hierarchy labels × sensitive values too large for one session',
    );
  return { n, m, s, w, histWidth, histBase, labelCounts, contiguous, maxLabels, maxDomain, maxParts };
}

/** Whether, at every level, each label's keys form one contiguous range of keys. */
function isContiguous(levels: readonly Int32Array[], domain: number): boolean {
  return levels.every((table) => {
    const closed = new Set<number>();
    for (let key = 1; key < domain; key++) {
      const prev = table[key - 1]!;
      const label = table[key]!;
      if (label === prev) continue;
      closed.add(prev);
      if (closed.has(label)) return false;
    }
    return true;
  });
}

/** Fills the records `[keys…, sa…, row]`, row-major, into `recs` from offset `at`. */
export function fillRecords(input: MondrianInput, shape: MondrianShape, recs: Int32Array, at = 0): void {
  const { n, m, s, w } = shape;
  for (let i = 0; i < m; i++) {
    const keys = input.keys[i]!;
    for (let r = 0, p = at + i; r < n; r++, p += w) recs[p] = keys[r]!;
  }
  for (let j = 0; j < s; j++) {
    const codes = input.sensitive[j]!;
    for (let r = 0, p = at + m + j; r < n; r++, p += w) recs[p] = codes[r]!;
  }
  for (let r = 0, p = at + w - 1; r < n; r++, p += w) recs[p] = r;
}

/** Range and argument checks for each call (cheap; the loops trust them). */
export function checkRange(shape: MondrianShape, start: number, end: number): void {
  if (!(Number.isInteger(start) && Number.isInteger(end) && start >= 0 && start < end && end <= shape.n))
    throw kernelError('mondrian', Status.BadShape, `bad range [${start}, ${end})`);
}

export function checkDim(shape: MondrianShape, dim: number): void {
  if (!(Number.isInteger(dim) && dim >= 0 && dim < shape.m))
    throw kernelError('mondrian', Status.BadShape, `bad dimension ${dim}`);
}
