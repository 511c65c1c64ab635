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
import { parseJsonFile } from '../../release-spec/json.ts';
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
  const t = parseJsonFile(
    text,
    where,
    'E_APPLY_RELEASE',
    'the release is damaged: re-run it',
  ) as MondrianTransformation;
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
 * them: each row goes to the box containing it; where boxes share a boundary value (relaxed
 * Mondrian), rows are spread so that no box gets more rows than it held where possible.
 * Boxes no row falls in are left out. Rows in no box are an error.
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
  const contains = (b: number, i: number, key: number): boolean => {
    const at = b * m + i;
    return dims[i]!.kind === 'numeric'
      ? key >= loKey[at]! && key <= hiKey[at]!
      : label[at]! >= 0 && dims[i]!.levels![level[at]!]?.[key] === label[at]!;
  };
  // The boxes holding each key of the most selective dimension: a row checks only those.
  const index = dims
    .map((d, i) =>
      Array.from({ length: d.domain }, (_, key) => {
        const list: number[] = [];
        for (let b = 0; b < B; b++) if (contains(b, i, key)) list.push(b);
        return list;
      }),
    )
    .reduce(
      (best, lists, i) => {
        const size = lists.reduce((sum, l) => sum + l.length, 0);
        return size < best.size ? { dim: i, lists, size } : best;
      },
      { dim: -1, lists: [] as number[][], size: Number.POSITIVE_INFINITY },
    );
  // Rows inside one box go there. Rows on a boundary that relaxed boxes share are spread by a
  // maximum flow so that each box gets at most the rows it held (on the same data, exactly
  // those counts), then any left over to the box with the most room.
  const held = new Int32Array(B);
  const boxOf = new Int32Array(n).fill(-1);
  const groups = new Map<string, { boxes: number[]; rows: number[] }>();
  const outsideBy = new Int32Array(m);
  let outside = 0;
  for (let r = 0; r < n; r++) {
    const inside = (index.dim < 0 ? [] : index.lists[dims[index.dim]!.keys[r]!]!).filter((b) =>
      dims.every((d, i) => contains(b, i, d.keys[r]!)),
    );
    if (inside.length === 0) {
      outside++;
      dims.forEach((d, i) => {
        for (let b = 0; b < B; b++) if (contains(b, i, d.keys[r]!)) return;
        outsideBy[i]!++;
      });
    } else if (inside.length === 1) {
      boxOf[r] = inside[0]!;
      held[inside[0]!]!++;
    } else {
      const key = inside.join(',');
      const g = groups.get(key) ?? { boxes: inside, rows: [] };
      g.rows.push(r);
      groups.set(key, g);
    }
  }
  const room = Array.from(held, (h, b) => Math.max(0, t.boxes[b]!.rows - h));
  const sharedGroups = [...groups.values()];
  const flows = spread(
    sharedGroups.map((g) => ({ size: g.rows.length, boxes: g.boxes })),
    room,
  );
  const placed = sharedGroups.map((g, j) => {
    let at = 0;
    for (const [b, count] of flows[j]!) {
      for (let c = 0; c < count; c++) boxOf[g.rows[at++]!] = b;
      held[b]! += count;
    }
    return at;
  });
  sharedGroups.forEach((g, j) => {
    for (let at = placed[j]!; at < g.rows.length; at++) {
      let b = g.boxes[0]!;
      for (const c of g.boxes) if (t.boxes[c]!.rows - held[c]! > t.boxes[b]!.rows - held[b]!) b = c;
      boxOf[g.rows[at]!] = b;
      held[b]!++;
    }
  });
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

/**
 * A maximum flow from groups of rows (each may go to any of its boxes) to boxes of limited
 * room, by shortest augmenting paths: per group, the rows sent to each box.
 */
function spread(groups: { size: number; boxes: number[] }[], room: number[]): Map<number, number>[] {
  const G = groups.length;
  const flow = groups.map(() => new Map<number, number>());
  const left = groups.map((g) => g.size);
  const free = room.slice();
  // Which groups currently send rows to each box (for paths that move rows back).
  const users = room.map(() => new Set<number>());
  for (;;) {
    // BFS from groups with rows left, over group → box (always) and box → group (if it sends there).
    const fromGroup = new Int32Array(room.length).fill(-2);
    const fromBox = new Int32Array(G).fill(-2);
    const queue: number[] = [];
    for (let j = 0; j < G; j++) {
      if (left[j]! > 0) {
        fromBox[j] = -1;
        queue.push(j);
      }
    }
    let end = -1;
    for (let q = 0; q < queue.length && end < 0; q++) {
      const j = queue[q]!;
      for (const b of groups[j]!.boxes) {
        if (fromGroup[b] !== -2) continue;
        fromGroup[b] = j;
        if (free[b]! > 0) {
          end = b;
          break;
        }
        for (const u of users[b]!) {
          if (fromBox[u] === -2) {
            fromBox[u] = b;
            queue.push(u);
          }
        }
      }
    }
    if (end < 0) return flow;
    // One row along the path: the box at its end takes it, each box before passes one on.
    free[end]!--;
    for (let b = end; b >= 0; ) {
      const j = fromGroup[b]!;
      const f = flow[j]!;
      f.set(b, (f.get(b) ?? 0) + 1);
      users[b]!.add(j);
      const prev = fromBox[j]!;
      if (prev < 0) {
        left[j]!--;
        break;
      }
      const back = f.get(prev)! - 1;
      if (back === 0) {
        f.delete(prev);
        users[prev]!.delete(j);
      } else f.set(prev, back);
      b = prev;
    }
  }
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
