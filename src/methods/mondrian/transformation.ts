/**
 * Mondrian's transformation as a file (`transformation.json`, published with the release):
 * the final partitions as boxes — per quasi-identifier a numeric range `[lo, hi]` or a
 * hierarchy label at a level — with the rows each held. Re-applying it (`ppdp apply`) puts
 * every row of a table of the same schema into the box that contains it; the released
 * values are then derived from those partitions exactly as a release derives them
 * (releaseValues), so the same data gives the same release. The boxes hold only what the
 * release shows (its ranges and labels) and the partition sizes.
 */
import { basename } from 'node:path';
import { PpdpError } from '../../errors.ts';
import type { PartitionProblem, PartitionResult } from './partition.ts';
import type { Released } from './release.ts';

export const TRANSFORMATION_FORMAT = 'ppdp-mondrian-boxes/1';

/** A box's side on one QI: a numeric range, or a hierarchy label at a level (0 = the values). */
export type BoxSide =
  | { readonly lo: number; readonly hi: number }
  | { readonly level: number; readonly label: string };

export interface MondrianTransformation {
  readonly format: typeof TRANSFORMATION_FORMAT;
  readonly method: 'mondrian';
  readonly mode: 'strict' | 'relaxed';
  readonly dimensions: { readonly name: string; readonly kind: string }[];
  /** Per partition: one side per dimension, and the rows it held. */
  readonly boxes: { readonly sides: BoxSide[]; readonly rows: number }[];
}

/** The partitions of a Mondrian release as boxes (from the release's own values). */
export function transformationOf(problem: PartitionProblem, released: Released): MondrianTransformation {
  const m = problem.dims.length;
  const rows = new Int32Array(released.extent.length / (3 * m));
  for (const p of released.partitionOf) rows[p]!++;
  return {
    format: TRANSFORMATION_FORMAT,
    method: 'mondrian',
    mode: problem.mode,
    dimensions: problem.dims.map((d) => ({ name: d.name, kind: d.kind })),
    boxes: Array.from(rows, (count, p) => ({
      rows: count,
      sides: problem.dims.map((d, i): BoxSide => {
        if (d.kind === 'numeric') return { lo: released.lo[i]![p]!, hi: released.hi[i]![p]! };
        return {
          level: released.extent[p * 3 * m + 3 * i + 2]!,
          label: released.dictionaries[i]![released.labelOf[i]![p]!]!,
        };
      }),
    })),
  };
}

export function parseTransformation(text: string, where: string): MondrianTransformation {
  let t: MondrianTransformation;
  try {
    t = JSON.parse(text);
  } catch (e) {
    throw new PpdpError(
      'E_APPLY_RELEASE',
      `${where}: not JSON (${(e as Error).message})`,
      'the release is damaged: re-run it',
    );
  }
  if (t?.format !== TRANSFORMATION_FORMAT || !Array.isArray(t.boxes) || !Array.isArray(t.dimensions)) {
    throw new PpdpError(
      'E_APPLY_RELEASE',
      `${where}: not a ${TRANSFORMATION_FORMAT} file`,
      'apply needs a Mondrian release made by this version of ppdp',
    );
  }
  return t;
}

/**
 * The partitions of `problem`'s table under saved boxes, as the partitioning would return
 * them: each row goes to the first box containing it that still has room (the rows the box
 * held — relaxed Mondrian's boxes may share a boundary value), else to the first box
 * containing it. Boxes no row falls in are left out. Rows in no box are an error.
 */
export function assignBoxes(
  problem: PartitionProblem,
  t: MondrianTransformation,
  file: string,
): PartitionResult {
  const { dims, rows: n } = problem;
  const m = dims.length;
  const names = dims.map((d) => `${d.name}:${d.kind}`).join(',');
  if (names !== t.dimensions.map((d) => `${d.name}:${d.kind}`).join(',')) {
    throw new PpdpError(
      'E_APPLY_SCHEMA',
      `${basename(file)}: the quasi-identifiers (${names}) differ from those of the saved partitions (${t.dimensions.map((d) => `${d.name}:${d.kind}`).join(',')})`,
      'apply a release made with the same quasi-identifiers and scales as the spec',
    );
  }
  // Per box and dimension, what a row's key must satisfy: numeric keys in [loKey, hiKey]
  // (ranks of the table's values), categorical keys whose label at `level` is the box's.
  const B = t.boxes.length;
  const loKey = new Int32Array(B * m);
  const hiKey = new Int32Array(B * m);
  const level = new Int32Array(B * m);
  const label = new Int32Array(B * m).fill(-1);
  dims.forEach((d, i) => {
    const labelIndex = d.levels ? d.labels!.map((ls) => new Map(ls.map((s, c) => [s, c]))) : [];
    t.boxes.forEach((box, b) => {
      const side = box.sides[i] as { lo?: number; hi?: number; level?: number; label?: string };
      if (d.kind === 'numeric') {
        const v = d.values!;
        loKey[b * m + i] = firstIndex(v, (x) => x >= side.lo!);
        hiKey[b * m + i] = firstIndex(v, (x) => x > side.hi!) - 1;
      } else {
        level[b * m + i] = side.level!;
        label[b * m + i] = labelIndex[side.level!]?.get(side.label!) ?? -1;
      }
    });
  });
  const held = new Int32Array(B);
  const boxOf = new Int32Array(n);
  const outsideBy = new Int32Array(m);
  let outside = 0;
  for (let r = 0; r < n; r++) {
    let first = -1;
    let roomy = -1;
    for (let b = 0; b < B && roomy < 0; b++) {
      let inside = true;
      for (let i = 0; inside && i < m; i++) {
        const d = dims[i]!;
        const key = d.keys[r]!;
        const at = b * m + i;
        inside =
          d.kind === 'numeric'
            ? key >= loKey[at]! && key <= hiKey[at]!
            : d.levels![level[at]!]?.[key] === label[at]! && label[at]! >= 0;
      }
      if (!inside) continue;
      if (first < 0) first = b;
      if (held[b]! < t.boxes[b]!.rows) roomy = b;
    }
    const b = roomy >= 0 ? roomy : first;
    if (b < 0) {
      outside++;
      countOutside(problem, t, loKey, hiKey, level, label, r, outsideBy);
      continue;
    }
    held[b]!++;
    boxOf[r] = b;
  }
  if (outside > 0) {
    const worst = dims
      .map((d, i) => ({ name: d.name, rows: outsideBy[i]! }))
      .filter((x) => x.rows > 0)
      .map((x) => `${x.name} (${x.rows})`);
    throw new PpdpError(
      'E_APPLY_OUTSIDE',
      `${basename(file)}: ${outside} of ${n} rows fall outside every saved partition; the quasi-identifiers whose values no partition covers: ${worst.join(', ') || 'none alone, only their combination'}`,
      'the saved partitions cover only the value combinations of the original data: release the new data with `ppdp release` instead',
    );
  }
  // Partitions in box order, empty boxes left out.
  const order: number[] = [];
  const partitionOfBox = new Int32Array(B).fill(-1);
  for (let b = 0; b < B; b++) if (held[b]! > 0) partitionOfBox[b] = order.push(b) - 1;
  const P = order.length;
  const start = new Int32Array(P);
  const end = new Int32Array(P);
  for (let p = 0, at = 0; p < P; p++) {
    start[p] = at;
    at += held[order[p]!]!;
    end[p] = at;
  }
  const rowOrder = new Int32Array(n);
  const next = start.slice();
  for (let r = 0; r < n; r++) rowOrder[next[partitionOfBox[boxOf[r]!]!]!++] = r;
  // Extents: numeric the keys the rows span, categorical the saved level (any row's key
  // names the label there).
  const extent = new Int32Array(P * 3 * m);
  for (let p = 0; p < P; p++) {
    for (let i = 0; i < m; i++) {
      const d = dims[i]!;
      let lo = Number.POSITIVE_INFINITY;
      let hi = Number.NEGATIVE_INFINITY;
      for (let j = start[p]!; j < end[p]!; j++) {
        const key = d.keys[rowOrder[j]!]!;
        if (key < lo) lo = key;
        if (key > hi) hi = key;
      }
      const at = p * 3 * m + 3 * i;
      extent[at] = lo;
      extent[at + 1] = hi;
      extent[at + 2] = d.kind === 'numeric' ? 0 : level[order[p]! * m + i]!;
    }
  }
  const widths = problem.sensitive.map((s) => s.width);
  const histBase = new Int32Array(widths.length);
  let W = 0;
  widths.forEach((w, j) => {
    histBase[j] = W;
    W += w;
  });
  const hist = new Int32Array(P * W);
  problem.sensitive.forEach((s, j) => {
    for (let p = 0; p < P; p++)
      for (let x = start[p]!; x < end[p]!; x++) hist[p * W + histBase[j]! + s.codes[rowOrder[x]!]!]!++;
  });
  return {
    count: P,
    start,
    end,
    extent,
    hist,
    histWidth: W,
    histBase,
    rowOrder,
    splits: 0,
    splitsByDim: dims.map(() => 0),
    attempts: 0,
  };
}

/** For the error: which dimensions alone leave a row outside every box. */
function countOutside(
  problem: PartitionProblem,
  t: MondrianTransformation,
  loKey: Int32Array,
  hiKey: Int32Array,
  level: Int32Array,
  label: Int32Array,
  r: number,
  outsideBy: Int32Array,
): void {
  const m = problem.dims.length;
  problem.dims.forEach((d, i) => {
    const key = d.keys[r]!;
    for (let b = 0; b < t.boxes.length; b++) {
      const at = b * m + i;
      const inside =
        d.kind === 'numeric'
          ? key >= loKey[at]! && key <= hiKey[at]!
          : d.levels![level[at]!]?.[key] === label[at]! && label[at]! >= 0;
      if (inside) return;
    }
    outsideBy[i]!++;
  });
}

/** First index of an ascending array where `past` holds (the length when nowhere). */
function firstIndex(values: Float64Array, past: (x: number) => boolean): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (past(values[mid]!)) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}
