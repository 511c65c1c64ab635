/**
 * What an analyst recovers from a Mondrian release (docs/definitions.md §6, "uniform spread within ECs"):
 * within a class E, each QI is spread uniformly and independently over the input values its
 * released value covers (the values under a hierarchy label; the values in a range), and the
 * attributes outside the QIs keep their joint distribution in E, so a cell t of a marginal
 * gets
 *   π̂(t) = (1/N) · Σ_E count_E(t's non-QI values) · Π_{QIs a} [t_a ∈ cover(E,a)] / |cover(E,a)|.
 *
 * What a label covers is kept small: a hierarchy label as the codes under its node (each code
 * lies under a handful of labels), a range as an interval of the codes in value order (never
 * as a list: ranges of a wide numeric column overlap and would hold classes × values codes).
 *
 * - A marginal over a list of cells groups the classes by their released values on the
 *   marginal's QIs; each cell is checked against the groups it may fall in, found through the
 *   one attribute (or the non-QI values) that leaves it fewest, so the work is known before it
 *   starts: a budget refuses it without doing it.
 * - One attribute, or every cell of a pair (the uncertainty coefficients' joint tables), is
 *   spread in one pass: the rows per pair of released labels, each label's mass spread over
 *   the codes it covers (a range by differences over its interval), in time about the
 *   table's cells.
 */
import type { EncodedColumn } from '../../data/table.ts';
import { type Budget, type Estimator, takeSteps } from '../../metrics/contingency.ts';
import type { PartitionProblem } from './partition.ts';
import type { Released } from './release.ts';

/** A released QI: each class's label, and what each label covers of the input codes. */
interface Cover {
  readonly numeric: boolean;
  /** Class → label. */
  readonly classLabel: Int32Array;
  readonly labels: number;
  /** Codes each label covers. */
  readonly size: Float64Array;
  /** Per code, the labels covering it: above[aboveStart[c], aboveStart[c + 1]) (categorical). */
  readonly aboveStart: Int32Array;
  readonly above: Int32Array;
  /** Per label, the codes it covers: codes[codeStart[l], codeStart[l + 1]) (categorical). */
  readonly codeStart: Int32Array;
  readonly codes: Int32Array;
  /** Numeric: codes in value order (those no row holds last), code → position, each label's positions [from, to). */
  readonly codeAt: Int32Array;
  readonly pos: Int32Array;
  readonly from: Int32Array;
  readonly to: Int32Array;
}

interface OtherPart {
  /** Packed non-QI values → id. */
  readonly index: Map<number, number>;
  /** (class, id, rows) triples. */
  readonly entries: Int32Array;
}

function otherPart(cols: readonly EncodedColumn[], classOf: Int32Array, classes: number): OtherPart {
  const index = new Map<number, number>();
  const counts = new Map<number, number>();
  for (let r = 0; r < classOf.length; r++) {
    let key = 0;
    for (const col of cols) key = key * col.dictionary.length + col.codes[r]!;
    let id = index.get(key);
    if (id === undefined) index.set(key, (id = index.size));
    const at = id * classes + classOf[r]!;
    counts.set(at, (counts.get(at) ?? 0) + 1);
  }
  const entries = new Int32Array(3 * counts.size);
  let x = 0;
  for (const [at, count] of counts) {
    entries[x++] = at % classes;
    entries[x++] = Math.floor(at / classes);
    entries[x++] = count;
  }
  return { index, entries };
}

/** The released attributes as input columns, and the estimator over their input codes. */
export function mondrianEstimator(
  columns: readonly EncodedColumn[],
  problem: PartitionProblem,
  released: Released,
): Estimator {
  const n = problem.rows;
  const classes = released.classes;
  const classOf = released.classOf;
  const classSize = new Float64Array(classes);
  for (let r = 0; r < n; r++) classSize[classOf[r]!]!++;
  const covers = columns.map((col) => {
    const i = problem.dims.findIndex((d) => d.name === col.name);
    return i < 0 ? null : coverOf(col, problem, released, i);
  });
  const otherParts = new Map<string, OtherPart>();
  const partOf = (attrs: readonly number[]) => {
    const key = attrs.join(',');
    let part = otherParts.get(key);
    if (!part) {
      part = otherPart(
        attrs.map((a) => columns[a]!),
        classOf,
        classes,
      );
      otherParts.set(key, part);
    }
    return part;
  };

  return {
    marginal(attrs, cells, budget) {
      const cellCount = cells[0]?.length ?? 1;
      if (n === 0) return new Float64Array(cellCount);
      if (attrs.length === 1) {
        const a = attrs[0]!;
        const d = columns[a]!.dictionary.length;
        if (!takeSteps(budget, n + d + (covers[a]?.labels ?? 0))) return undefined;
        const whole = single(columns[a]!, covers[a]!, classSize, n);
        return gather(whole, cells[0]!);
      }
      return sparseMarginal(columns, covers, classOf, classes, partOf, attrs, cells, budget);
    },
    pair(x, y, budget) {
      if (n === 0) return new Float64Array(columns[x]!.dictionary.length * columns[y]!.dictionary.length);
      const vx = viewOf(columns[x]!, covers[x]!);
      const vy = viewOf(columns[y]!, covers[y]!);
      return pairTable(vx, vy, labelPairs(vx, vy, classOf, classSize), n, budget);
    },
  };
}

/** values[at[i]] for each i (a loop: a typed array's `from` with a function is slow). */
function gather(values: ArrayLike<number>, at: ArrayLike<number>): Float64Array {
  const out = new Float64Array(at.length);
  for (let i = 0; i < at.length; i++) out[i] = values[at[i]!]!;
  return out;
}

/** What each label of QI `i` covers, from one partition per label (they all cover the same). */
function coverOf(col: EncodedColumn, problem: PartitionProblem, released: Released, i: number): Cover {
  const n = problem.rows;
  const d = col.dictionary.length;
  const dim = problem.dims[i]!;
  const m = problem.dims.length;
  const labelOfPartition = released.labelOf[i]!;
  const classLabel = new Int32Array(released.classes);
  for (let r = 0; r < n; r++) classLabel[released.classOf[r]!] = labelOfPartition[released.partitionOf[r]!]!;
  // Input code → key, from the rows (keys are what the partitioning saw); −1: no row holds it.
  const keyOfCode = new Int32Array(d).fill(-1);
  for (let r = 0; r < n; r++) keyOfCode[col.codes[r]!] = dim.keys[r]!;
  const labels = released.dictionaries[i]!.length;
  const partitionOf = new Int32Array(labels).fill(-1);
  for (let p = 0; p < labelOfPartition.length; p++) {
    if (partitionOf[labelOfPartition[p]!]! < 0) partitionOf[labelOfPartition[p]!] = p;
  }
  const ext = released.extent;
  const size = new Float64Array(labels);
  const none = new Int32Array(0);

  if (dim.kind === 'numeric') {
    // Codes in key order: a range of keys is then an interval of positions.
    const keys = dim.values!.length + 1;
    const start = new Int32Array(keys + 1);
    for (let c = 0; c < d; c++) if (keyOfCode[c]! >= 0) start[keyOfCode[c]! + 1]!++;
    for (let k = 0; k < keys; k++) start[k + 1]! += start[k]!;
    const covered = start[keys]!;
    const fill = start.slice(0, keys);
    const codeAt = new Int32Array(d);
    const pos = new Int32Array(d);
    let last = covered;
    for (let c = 0; c < d; c++) {
      const key = keyOfCode[c]!;
      pos[c] = key >= 0 ? fill[key]!++ : last++;
      codeAt[pos[c]!] = c;
    }
    const from = new Int32Array(labels);
    const to = new Int32Array(labels);
    for (let l = 0; l < labels; l++) {
      const at = partitionOf[l]! * 3 * m + 3 * i;
      const lo = ext[at]!;
      const hi = ext[at + 1]!;
      // A numeric part holding the missing value and numbers is released as `*`: it covers all.
      const all = hi >= dim.values!.length && lo < dim.values!.length;
      from[l] = all ? 0 : start[lo]!;
      to[l] = all ? covered : start[Math.min(hi, keys - 1) + 1]!;
      size[l] = to[l]! - from[l]!;
    }
    return {
      numeric: true,
      classLabel,
      labels,
      size,
      aboveStart: none,
      above: none,
      codeStart: none,
      codes: none,
      codeAt,
      pos,
      from,
      to,
    };
  }

  // A label covers the codes under its node, at its level; a code lies under one node a level.
  const levelOf = new Int32Array(labels);
  const nodeOf = new Int32Array(labels);
  const byLevel = new Map<number, Map<number, number>>();
  for (let l = 0; l < labels; l++) {
    const at = partitionOf[l]! * 3 * m + 3 * i;
    levelOf[l] = ext[at + 2]!;
    nodeOf[l] = dim.levels![levelOf[l]!]![ext[at]!]!;
    let nodes = byLevel.get(levelOf[l]!);
    if (!nodes) byLevel.set(levelOf[l]!, (nodes = new Map()));
    if (!nodes.has(nodeOf[l]!)) nodes.set(nodeOf[l]!, l);
  }
  const aboveStart = new Int32Array(d + 1);
  const aboveList: number[] = [];
  for (let c = 0; c < d; c++) {
    const key = keyOfCode[c]!;
    if (key >= 0) {
      for (const [level, nodes] of byLevel) {
        const l = nodes.get(dim.levels![level]![key]!);
        if (l === undefined) continue;
        aboveList.push(l);
        size[l]!++;
      }
    }
    aboveStart[c + 1] = aboveList.length;
  }
  const above = Int32Array.from(aboveList);
  const { start: codeStart, items: codes } = groupBy(labels, d, (c, each) => {
    for (let x = aboveStart[c]!; x < aboveStart[c + 1]!; x++) each(above[x]!);
  });
  return {
    numeric: false,
    classLabel,
    labels,
    size,
    aboveStart,
    above,
    codeStart,
    codes,
    codeAt: none,
    pos: none,
    from: none,
    to: none,
  };
}

/**
 * Items 0..count−1 grouped by key (CSR): `keysOf(item, each)` names each key an item has.
 * Items keep their order within a key.
 */
function groupBy(
  keys: number,
  count: number,
  keysOf: (item: number, each: (key: number) => void) => void,
): { start: Int32Array; items: Int32Array } {
  const start = new Int32Array(keys + 1);
  for (let x = 0; x < count; x++) keysOf(x, (k) => start[k + 1]!++);
  for (let k = 0; k < keys; k++) start[k + 1]! += start[k]!;
  const items = new Int32Array(start[keys]!);
  const fill = start.slice(0, keys);
  for (let x = 0; x < count; x++) keysOf(x, (k) => (items[fill[k]!++] = x));
  return { start, items };
}

/** Every value of one attribute: its classes' rows spread over what their labels cover. */
function single(col: EncodedColumn, cover: Cover | null, classSize: Float64Array, n: number): Float64Array {
  const d = col.dictionary.length;
  const out = new Float64Array(d);
  if (!cover) {
    for (const code of col.codes) out[code]! += 1 / n;
    return out;
  }
  const mass = new Float64Array(cover.labels);
  for (let e = 0; e < classSize.length; e++) mass[cover.classLabel[e]!]! += classSize[e]! / n;
  const view = viewOf(col, cover);
  const touched = Int32Array.from(mass.keys()).filter((l) => mass[l]! > 0);
  view.spread(mass, touched, out, new Float64Array(view.positions + 1));
  return out;
}

/**
 * One attribute as labels over codes, for spreading: a QI's released labels, or, outside the
 * QIs, the codes themselves (each covering itself).
 */
interface View {
  readonly d: number;
  readonly labels: number;
  readonly size: (l: number) => number;
  /** Row → label, through its class for a QI. */
  readonly rowLabel: (r: number, classOf: Int32Array) => number;
  readonly classLabel: Int32Array | null;
  /** Positions a numeric QI's differences run over (0 otherwise). */
  readonly positions: number;
  /** Steps of spread() for these labels. */
  readonly spreadCost: (touched: ArrayLike<number>, count: number) => number;
  /** out[code] += Σ_touched w[l]/size(l) over the codes l covers (`diff`: positions + 1 zeros, left zero). */
  readonly spread: (
    w: Float64Array,
    touched: ArrayLike<number>,
    out: Float64Array,
    diff: Float64Array,
  ) => void;
  /** The QI's labels and what they cover (null outside the QIs). */
  readonly cover: Cover | null;
}

function viewOf(col: EncodedColumn, cover: Cover | null): View {
  const d = col.dictionary.length;
  if (!cover) {
    return {
      d,
      labels: d,
      size: () => 1,
      rowLabel: (r) => col.codes[r]!,
      classLabel: null,
      positions: 0,
      spreadCost: (_, count) => count,
      spread(w, touched, out) {
        for (let x = 0; x < touched.length; x++) out[touched[x]!]! += w[touched[x]!]!;
      },
      cover: null,
    };
  }
  const base = {
    d,
    labels: cover.labels,
    size: (l: number) => cover.size[l]!,
    rowLabel: (r: number, classOf: Int32Array) => cover.classLabel[classOf[r]!]!,
    classLabel: cover.classLabel,
    cover,
  };
  if (!cover.numeric) {
    return {
      ...base,
      positions: 0,
      spreadCost(touched, count) {
        let cost = 0;
        for (let x = 0; x < count; x++) cost += cover.size[touched[x]!]!;
        return cost;
      },
      spread(w, touched, out) {
        for (let x = 0; x < touched.length; x++) {
          const l = touched[x]!;
          const share = w[l]! / cover.size[l]!;
          for (let c = cover.codeStart[l]!; c < cover.codeStart[l + 1]!; c++) out[cover.codes[c]!]! += share;
        }
      },
    };
  }
  const positions = d;
  return {
    ...base,
    positions,
    spreadCost: (_, count) => count + positions,
    spread(w, touched, out, diff) {
      let lo = positions;
      let hi = 0;
      for (let x = 0; x < touched.length; x++) {
        const l = touched[x]!;
        if (cover.size[l] === 0) continue;
        const share = w[l]! / cover.size[l]!;
        diff[cover.from[l]!]! += share;
        diff[cover.to[l]!]! -= share;
        lo = Math.min(lo, cover.from[l]!);
        hi = Math.max(hi, cover.to[l]!);
      }
      let run = 0;
      for (let p = lo; p < hi; p++) {
        run += diff[p]!;
        diff[p] = 0;
        out[cover.codeAt[p]!]! += run;
      }
      diff[hi] = 0;
    },
  };
}

/**
 * The rows per pair of labels (x's, y's), as (label x, label y, rows) triples, label x by label
 * x: over classes when both are QIs, else over rows (typed arrays, no map of pairs).
 */
function labelPairs(vx: View, vy: View, classOf: Int32Array, classSize: Float64Array): Float64Array {
  const both = vx.classLabel !== null && vy.classLabel !== null;
  const count = both ? classSize.length : classOf.length;
  const labelY = new Int32Array(count);
  const weight = new Float64Array(count);
  for (let i = 0; i < count; i++) {
    labelY[i] = both ? vy.classLabel![i]! : vy.rowLabel(i, classOf);
    weight[i] = both ? classSize[i]! : 1;
  }
  const byX = groupBy(vx.labels, count, (i, each) =>
    each(both ? vx.classLabel![i]! : vx.rowLabel(i, classOf)),
  );
  const scratch = new Float64Array(vy.labels);
  const touched = new Int32Array(vy.labels);
  const out = new Float64Array(3 * count);
  let at = 0;
  for (let l = 0; l < vx.labels; l++) {
    let k = 0;
    for (let x = byX.start[l]!; x < byX.start[l + 1]!; x++) {
      const i = byX.items[x]!;
      if (scratch[labelY[i]!] === 0) touched[k++] = labelY[i]!;
      scratch[labelY[i]!]! += weight[i]!;
    }
    for (let t = 0; t < k; t++) {
      out[at++] = l;
      out[at++] = touched[t]!;
      out[at++] = scratch[touched[t]!]!;
      scratch[touched[t]!] = 0;
    }
  }
  return out.slice(0, at);
}

/**
 * The joint table of x and y (x-major): per outer label, its rows' inner labels spread over
 * the inner codes, then that row added to each outer code the label covers (a numeric outer
 * attribute by differences over its positions). Either attribute may be the outer one: the
 * cheaper goes first, and its cost is taken from the budget before anything is done.
 */
function pairTable(
  vx: View,
  vy: View,
  triples: Float64Array,
  n: number,
  budget: Budget | undefined,
): Float64Array | undefined {
  const costOf = (outer: View, inner: View, oi: number) => {
    const ii = 1 - oi;
    const grouped = groupBy(outer.labels, triples.length / 3, (t, each) => each(triples[3 * t + oi]!));
    let cost = triples.length / 3 + outer.d * inner.d;
    for (let l = 0; l < outer.labels; l++) {
      const count = grouped.start[l + 1]! - grouped.start[l]!;
      if (count === 0) continue;
      const touched = Int32Array.from(
        grouped.items.subarray(grouped.start[l]!, grouped.start[l + 1]!),
        (t) => triples[3 * t + ii]!,
      );
      cost += inner.spreadCost(touched, count) + inner.d;
      cost += outer.cover?.numeric ? 2 * inner.d : outer.cover ? outer.size(l) * inner.d : inner.d;
    }
    if (outer.cover?.numeric) cost += (outer.positions + 1) * inner.d;
    return { cost, grouped };
  };
  const xFirst = costOf(vx, vy, 0);
  const yFirst = costOf(vy, vx, 1);
  const x = xFirst.cost <= yFirst.cost;
  const { cost, grouped } = x ? xFirst : yFirst;
  if (!takeSteps(budget, cost + (x ? 0 : vx.d * vy.d))) return undefined;
  const outer = x ? vx : vy;
  const inner = x ? vy : vx;
  const oi = x ? 0 : 1;
  const table = fill(outer, inner, triples, oi, grouped, n);
  if (x) return table;
  const out = new Float64Array(vx.d * vy.d);
  for (let j = 0; j < vy.d; j++) for (let i = 0; i < vx.d; i++) out[i * vy.d + j] = table[j * vx.d + i]!;
  return out;
}

function fill(
  outer: View,
  inner: View,
  triples: Float64Array,
  oi: number,
  grouped: { start: Int32Array; items: Int32Array },
  n: number,
): Float64Array {
  const di = inner.d;
  const out = new Float64Array(outer.d * di);
  const w = new Float64Array(inner.labels);
  const row = new Float64Array(di);
  const diff = new Float64Array(inner.positions + 1);
  const numeric = outer.cover?.numeric === true;
  // A numeric outer attribute: rows of differences over its positions, summed at the end.
  const rowsDiff = numeric ? new Float64Array((outer.positions + 1) * di) : null;
  for (let l = 0; l < outer.labels; l++) {
    const first = grouped.start[l]!;
    const count = grouped.start[l + 1]! - first;
    if (count === 0 || outer.size(l) === 0) continue;
    const touched = new Int32Array(count);
    for (let x = 0; x < count; x++) {
      const t = grouped.items[first + x]!;
      touched[x] = triples[3 * t + 1 - oi]!;
      w[touched[x]!]! += triples[3 * t + 2]! / n;
    }
    row.fill(0);
    inner.spread(w, touched, row, diff);
    for (const t of touched) w[t] = 0;
    const share = 1 / outer.size(l);
    if (rowsDiff) {
      const cover = outer.cover!;
      const from = cover.from[l]! * di;
      const to = cover.to[l]! * di;
      for (let j = 0; j < di; j++) {
        rowsDiff[from + j]! += row[j]! * share;
        rowsDiff[to + j]! -= row[j]! * share;
      }
    } else if (outer.cover) {
      const cover = outer.cover;
      for (let c = cover.codeStart[l]!; c < cover.codeStart[l + 1]!; c++) {
        const at = cover.codes[c]! * di;
        for (let j = 0; j < di; j++) out[at + j]! += row[j]! * share;
      }
    } else {
      const at = l * di;
      for (let j = 0; j < di; j++) out[at + j]! += row[j]!;
    }
  }
  if (rowsDiff) {
    const cover = outer.cover!;
    const run = new Float64Array(di);
    for (let p = 0; p < outer.positions; p++) {
      const at = cover.codeAt[p]! * di;
      for (let j = 0; j < di; j++) {
        run[j]! += rowsDiff[p * di + j]!;
        out[at + j] = run[j]!;
      }
    }
  }
  return out;
}

/**
 * A marginal over a list of cells. Classes are grouped by their labels on the marginal's QIs,
 * and the (group, non-QI values) pairs holding rows are sorted by those values and their
 * categorical labels: a cell walks that order level by level, into the ranges of the labels
 * covering its values (a handful per value), and checks the numeric ranges of what it reaches.
 * Each step (a range looked up, a pair checked) is counted: past the budget the walk stops and
 * nothing is returned.
 */
function sparseMarginal(
  columns: readonly EncodedColumn[],
  covers: readonly (Cover | null)[],
  classOf: Int32Array,
  classes: number,
  partOf: (attrs: readonly number[]) => OtherPart,
  attrs: readonly number[],
  cells: readonly Int32Array[],
  budget: Budget | undefined,
): Float64Array | undefined {
  const n = classOf.length;
  const cellCount = cells[0]?.length ?? 1;
  const qi = attrs.map((_, j) => j).filter((j) => covers[attrs[j]!] !== null);
  const other = attrs.map((_, j) => j).filter((j) => covers[attrs[j]!] === null);

  // Non-QI values: one id per distinct combination, each class's rows per id.
  const otherCols = other.map((j) => columns[attrs[j]!]!);
  const { index: otherIndex, entries } = partOf(other.map((j) => attrs[j]!));
  const cellOther = new Int32Array(cellCount);
  if (other.length > 0) {
    for (let c = 0; c < cellCount; c++) {
      let key = 0;
      other.forEach((j, x) => {
        key = key * otherCols[x]!.dictionary.length + cells[j]![c]!;
      });
      cellOther[c] = otherIndex.get(key) ?? -1;
    }
  }
  const others = Math.max(1, otherIndex.size);

  // Classes grouped by their labels on the marginal's QIs.
  let groupOfClass = new Int32Array(classes);
  let groups = 1;
  for (const j of qi) {
    const cover = covers[attrs[j]!]!;
    const index = new Map<number, number>();
    const next = new Int32Array(classes);
    for (let e = 0; e < classes; e++) {
      const key = groupOfClass[e]! * cover.labels + cover.classLabel[e]!;
      let g = index.get(key);
      if (g === undefined) index.set(key, (g = index.size));
      next[e] = g;
    }
    groupOfClass = next;
    groups = index.size;
  }
  const qiCovers = qi.map((j) => covers[attrs[j]!]!);
  const groupLabel = qiCovers.map(() => new Int32Array(groups));
  for (let e = 0; e < classes; e++) {
    qiCovers.forEach((cover, x) => {
      groupLabel[x]![groupOfClass[e]!] = cover.classLabel[e]!;
    });
  }
  // Rows per (group, non-QI values), each with its share of a cell: 1/N over its covers' sizes.
  const mass = new Map<number, number>();
  for (let x = 0; x < entries.length; x += 3) {
    const key = groupOfClass[entries[x]!]! * others + entries[x + 1]!;
    mass.set(key, (mass.get(key) ?? 0) + entries[x + 2]!);
  }
  const pairs = mass.size;
  const pairGroup = new Int32Array(pairs);
  const pairOther = new Int32Array(pairs);
  const weight = new Float64Array(pairs);
  let at = 0;
  for (const [key, count] of mass) {
    const g = Math.floor(key / others);
    pairGroup[at] = g;
    pairOther[at] = key % others;
    let w = count / n;
    qiCovers.forEach((cover, x) => {
      w /= cover.size[groupLabel[x]![g]!]!;
    });
    weight[at++] = w;
  }

  // Levels: the non-QI values (one exact key), the categorical QIs (most labels first), then
  // the numeric QIs, their labels in order of the first position they cover.
  const levels: Level[] = [
    ...(other.length > 0
      ? [{ kind: 'other' as const, x: -1, cover: null, key: Float64Array.from(pairOther) }]
      : []),
    ...qiCovers
      .map((cover, x) => ({ x, cover, distinct: new Set(groupLabel[x]).size }))
      .filter((q) => !q.cover.numeric)
      .sort((a, b) => b.distinct - a.distinct || a.x - b.x)
      .map(({ x, cover }) => ({
        kind: 'tree' as const,
        x,
        cover,
        key: gather(groupLabel[x]!, pairGroup),
      })),
    ...qiCovers
      .map((cover, x) => ({ x, cover }))
      .filter((q) => q.cover.numeric)
      .map(({ x, cover }) => ({
        kind: 'range' as const,
        x,
        cover,
        key: gather(groupLabel[x]!, pairGroup).map((l) => cover.from[l]! * cover.labels + l),
      })),
  ];
  const trie = sortedTrie(levels, pairs);
  const share = gather(weight, trie.order);

  const out = new Float64Array(cellCount);
  let steps = cellCount + pairs * (levels.length + 1) + classes * (qi.length + 1);
  const limit = budget ? budget.steps : Number.POSITIVE_INFINITY;
  // Each cell's value at each level: the non-QI values' id, a code, or a position.
  const values = levels.map(({ kind, x, cover }) => {
    if (kind === 'other') return cellOther;
    if (kind === 'tree') return cells[qi[x]!]!;
    const codes = cells[qi[x]!]!;
    const at = new Int32Array(cellCount);
    for (let c = 0; c < cellCount; c++) at[c] = cover!.pos[codes[c]!]!;
    return at;
  });
  let cell = 0;
  let sum = 0;
  const walk = (level: number, lo: number, hi: number): void => {
    if (level === levels.length) {
      // Every level matched: the one (group, non-QI values) pair here.
      steps += hi - lo;
      for (let k = lo; k < hi; k++) sum += share[k]!;
      return;
    }
    const { kind, cover } = levels[level]!;
    const runs = trie.runs[level]!;
    const first = runs.of[lo]!;
    const last = runs.of[hi - 1]!;
    if (kind === 'range') {
      // Children in order of their first position: those starting at or before the value.
      const pos = values[level]![cell]!;
      for (let r = first; r <= last; r++) {
        steps++;
        const l = runs.key[r]! % cover!.labels;
        if (cover!.from[l]! > pos) break;
        if (pos < cover!.to[l]!) walk(level + 1, runs.start[r]!, runs.start[r + 1]!);
      }
      return;
    }
    const code = values[level]![cell]!;
    const a0 = kind === 'other' ? 0 : cover!.aboveStart[code]!;
    const a1 = kind === 'other' ? 1 : cover!.aboveStart[code + 1]!;
    for (let a = a0; a < a1; a++) {
      steps++;
      const r = runs.find(first, last, kind === 'other' ? code : cover!.above[a]!);
      if (r >= 0) walk(level + 1, runs.start[r]!, runs.start[r + 1]!);
    }
  };
  for (cell = 0; cell < cellCount; cell++) {
    if (cellOther[cell]! < 0) continue;
    sum = 0;
    if (pairs > 0) walk(0, 0, pairs);
    out[cell] = sum;
    if (steps > limit) {
      budget!.needed = steps;
      return undefined;
    }
  }
  if (budget) budget.steps -= steps;
  return out;
}

/** A level of the walk: what its key is (the non-QI values' id, a label, a range's first position and label). */
interface Level {
  readonly kind: 'other' | 'tree' | 'range';
  /** The QI's place among the marginal's QIs (−1 for the non-QI values). */
  readonly x: number;
  readonly cover: Cover | null;
  /** Per (group, non-QI values) pair, its key at this level. */
  readonly key: Float64Array;
}

/** The runs of equal keys at one level, within the runs of the levels above (a node's children). */
interface Runs {
  /** Run r is [start[r], start[r + 1]) of the sorted order, with key key[r]. */
  readonly start: Int32Array;
  readonly key: Float64Array;
  /** Position in the sorted order → its run. */
  readonly of: Int32Array;
  /** The run among first..last (one node's children) whose key is `key`, or −1. */
  readonly find: (first: number, last: number, key: number) => number;
}

/** The pairs sorted by their keys level after level, and each level's runs. */
function sortedTrie(levels: readonly Level[], pairs: number): { order: Int32Array; runs: Runs[] } {
  const order = Int32Array.from({ length: pairs }, (_, p) => p).sort((p, q) => {
    for (const { key } of levels) if (key[p] !== key[q]) return key[p]! - key[q]!;
    return p - q;
  });
  // A run ends where its key or any key above changes.
  const boundary = new Uint8Array(pairs + 1);
  boundary[0] = 1;
  boundary[pairs] = 1;
  const runs = levels.map(({ key }) => {
    const sortedKey = gather(key, order);
    for (let k = 1; k < pairs; k++) if (sortedKey[k] !== sortedKey[k - 1]) boundary[k] = 1;
    const starts: number[] = [];
    const of = new Int32Array(pairs);
    for (let k = 0; k < pairs; k++) {
      if (boundary[k]) starts.push(k);
      of[k] = starts.length - 1;
    }
    starts.push(pairs);
    const start = Int32Array.from(starts);
    const runKey = gather(sortedKey, start.subarray(0, start.length - 1));
    return {
      start,
      key: runKey,
      of,
      find(first: number, last: number, wanted: number) {
        let lo = first;
        let hi = last;
        while (lo <= hi) {
          const mid = (lo + hi) >> 1;
          const k = runKey[mid]!;
          if (k === wanted) return mid;
          if (k < wanted) lo = mid + 1;
          else hi = mid - 1;
        }
        return -1;
      },
    };
  });
  return { order, runs };
}
