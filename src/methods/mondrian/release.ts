/**
 * From Mondrian's final partitions to released values, classes, NCP and the released
 * columns: numeric QIs as `[lo-hi]` plus numeric `<name>_lo` / `<name>_hi` columns,
 * categorical QIs as their lowest common ancestor's label; rows shuffled with the run's
 * `shuffle` stream (keyed by the seed and the input, src/util/keys.ts).
 */
import { formatNumber } from '../../data/csv.ts';
import { compactDictionary, type EncodedTable, type OutputColumn } from '../../data/table.ts';
import type { AttributeSpec } from '../../release-spec/spec.ts';
import { widthOver } from '../../util/extent.ts';
import type { Random } from '../../util/random.ts';
import type { MondrianDim, PartitionProblem, PartitionResult } from './partition.ts';
import { ROOT_LABEL } from './prepare.ts';

/** A numeric QI's missing value, released as it is: an empty cell. */
const MISSING_LABEL = '';

export interface Released {
  /** row → final partition. */
  readonly partitionOf: Int32Array;
  /** The partitions' extents (3 per dimension: min key, max key, LCA level). */
  readonly extent: Int32Array;
  /** Per dimension: the released strings, and partition → index into them. */
  readonly dictionaries: string[][];
  readonly labelOf: Int32Array[];
  /** Per dimension (numeric only, else null): partition → lo / hi. */
  readonly lo: (Float64Array | null)[];
  readonly hi: (Float64Array | null)[];
  /** Classes: rows sharing every released QI value (partitions with equal labels merge). */
  readonly classes: number;
  readonly classOf: Int32Array;
  readonly classSizes: Int32Array;
  /** W per class: summed SA histograms. */
  readonly classHist: Int32Array;
  /** NCP over all N·m cells, and per dimension (its average over N cells). */
  readonly ncp: number;
  readonly ncpByDim: number[];
}

/**
 * How many distinct input values each label string covers: a label covers every value
 * whose hierarchy row holds that string (the analyst sees strings, not tree nodes).
 */
export function coveredValues(dim: MondrianDim): Map<string, number> {
  const covers = new Map<string, number>();
  const levels = dim.levels!;
  for (let key = 0; key < dim.domain; key++) {
    if (dim.leaves![0]![key] === 0) continue;
    const seen = new Set<string>();
    for (let l = 0; l < levels.length; l++) seen.add(dim.labels![l]![levels[l]![key]!]!);
    for (const s of seen) covers.set(s, (covers.get(s) ?? 0) + 1);
  }
  return covers;
}

export function rangeLabel(lo: number, hi: number): string {
  return `[${formatNumber(lo)}-${formatNumber(hi)}]`;
}

export function releaseValues(problem: PartitionProblem, result: PartitionResult): Released {
  const { dims, rows: n } = problem;
  const m = dims.length;
  const P = result.count;
  const W = result.histWidth;
  const partitionOf = new Int32Array(n);
  const sizes = new Int32Array(P);
  for (let p = 0; p < P; p++) {
    sizes[p] = result.end[p]! - result.start[p]!;
    for (let i = result.start[p]!; i < result.end[p]!; i++) partitionOf[result.rowOrder[i]!] = p;
  }

  const dictionaries: string[][] = [];
  const labelOf: Int32Array[] = [];
  const lo: (Float64Array | null)[] = [];
  const hi: (Float64Array | null)[] = [];
  const ncpByDim: number[] = [];
  let ncpSum = 0;
  dims.forEach((dim, i) => {
    const index = new Map<string, number>();
    const dictionary: string[] = [];
    const codeOf = (label: string) => {
      let c = index.get(label);
      if (c === undefined) {
        c = dictionary.push(label) - 1;
        index.set(label, c);
      }
      return c;
    };
    const labels = new Int32Array(P);
    let sum = 0;
    if (dim.kind === 'numeric') {
      const values = dim.values!;
      const span = values.length > 0 ? values[values.length - 1]! - values[0]! : 0;
      const l = new Float64Array(P);
      const h = new Float64Array(P);
      for (let p = 0; p < P; p++) {
        const minKey = result.extent[p * 3 * m + 3 * i]!;
        const maxKey = result.extent[p * 3 * m + 3 * i + 1]!;
        if (maxKey >= values.length) {
          // The missing value (the key after the numbers): alone it stays missing (exact);
          // with numbers the cell is `*` (NCP 1). Either way no range: _lo and _hi are empty.
          l[p] = h[p] = Number.NaN;
          const alone = minKey >= values.length;
          labels[p] = codeOf(alone ? MISSING_LABEL : ROOT_LABEL);
          if (!alone) sum += sizes[p]!;
          continue;
        }
        l[p] = values[minKey]!;
        h[p] = values[maxKey]!;
        labels[p] = codeOf(rangeLabel(l[p]!, h[p]!));
        const [width, over] = widthOver(l[p]!, h[p]!, values[0]!, values[values.length - 1]!);
        if (span > 0) sum += (sizes[p]! * width) / over;
      }
      lo.push(l);
      hi.push(h);
    } else {
      const covers = coveredValues(dim);
      for (let p = 0; p < P; p++) {
        const at = p * 3 * m + 3 * i;
        const level = result.extent[at + 2]!;
        const label = dim.labels![level]![dim.levels![level]![result.extent[at]!]!]!;
        labels[p] = codeOf(label);
        const covered = covers.get(label)!;
        if (dim.distinct > 1) sum += (sizes[p]! * (covered - 1)) / (dim.distinct - 1);
      }
      lo.push(null);
      hi.push(null);
    }
    dictionaries.push(dictionary);
    labelOf.push(labels);
    ncpByDim.push(n > 0 ? sum / n : 0);
    ncpSum += sum;
  });

  // Classes by released QI values.
  const classIndex = new Map<string, number>();
  const classOfPartition = new Int32Array(P);
  const parts: number[] = new Array(m);
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < m; i++) parts[i] = labelOf[i]![p]!;
    const key = parts.join(',');
    let c = classIndex.get(key);
    if (c === undefined) classIndex.set(key, (c = classIndex.size));
    classOfPartition[p] = c;
  }
  const classes = classIndex.size;
  const classSizes = new Int32Array(classes);
  const classHist = new Int32Array(classes * W);
  for (let p = 0; p < P; p++) {
    const c = classOfPartition[p]!;
    classSizes[c]! += sizes[p]!;
    for (let x = 0; x < W; x++) classHist[c * W + x]! += result.hist[p * W + x]!;
  }
  const classOf = Int32Array.from(partitionOf, (p) => classOfPartition[p]!);
  return {
    partitionOf,
    extent: result.extent,
    dictionaries,
    labelOf,
    lo,
    hi,
    classes,
    classOf,
    classSizes,
    classHist,
    ncp: n > 0 && m > 0 ? ncpSum / (n * m) : 0,
    ncpByDim,
  };
}

/**
 * The released table: the input's columns minus identifying ones, in input order; each QI
 * replaced by its released value (numeric QIs followed by `<name>_lo` and `<name>_hi`); rows
 * shuffled with a keyed stream (src/util/keys.ts); every dictionary compacted to the values
 * released.
 */
export function releaseColumns(
  table: EncodedTable,
  attributes: readonly AttributeSpec[],
  problem: PartitionProblem,
  released: Released,
  shuffle: Random,
): OutputColumn[] {
  const n = table.rowCount;
  const order = shuffle.permutation(n);
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  const columns: OutputColumn[] = [];
  for (const col of table.columns) {
    if (typeOf.get(col.name) === 'identifying') continue;
    const i = problem.dims.findIndex((d) => d.name === col.name);
    const codes = new Int32Array(n);
    if (i < 0) {
      for (let j = 0; j < n; j++) codes[j] = col.codes[order[j]!]!;
      columns.push(compactDictionary(col.name, col.dictionary, codes));
      continue;
    }
    const labels = released.labelOf[i]!;
    for (let j = 0; j < n; j++) codes[j] = labels[released.partitionOf[order[j]!]!]!;
    columns.push(compactDictionary(col.name, released.dictionaries[i]!, codes));
    const lo = released.lo[i];
    const hi = released.hi[i];
    if (lo && hi) {
      const loValues = new Float64Array(n);
      const hiValues = new Float64Array(n);
      for (let j = 0; j < n; j++) {
        const p = released.partitionOf[order[j]!]!;
        loValues[j] = lo[p]!;
        hiValues[j] = hi[p]!;
      }
      columns.push({ name: `${col.name}_lo`, kind: 'number', values: loValues });
      columns.push({ name: `${col.name}_hi`, kind: 'number', values: hiValues });
    }
  }
  return columns;
}
