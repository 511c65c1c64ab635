/**
 * Cell suppression at a chosen node (docs/definitions.md, "Cell suppression"): the records of
 * classes below k keep their row and lose the fewest quasi-identifier cells, least important
 * attribute first. A suppressed cell reads `*` and matches every value.
 *
 * The attributes are ordered once (importance ascending, then more labels at the node first,
 * then spec order). Step d suppresses the first d of them in every record still pending and
 * groups the pending records by their values on the others: a group of at least k records is
 * released so, and every record of it then has at least k released records consistent with its
 * own values (the group's, each `*` where it differs and equal elsewhere). Records no step
 * protects fall back to whole-row suppression. Records of classes of k or more are untouched.
 *
 * The node: the search's (chosen for row suppression), then a descent through its
 * specializations while the metric with cells suppressed improves (cellDescent).
 */
import { basename } from 'node:path';
import { NoSolutionError, SpecError } from '../../errors.ts';
import type { ClassOutcome } from '../../metrics/generalization.ts';
import { requiredK } from '../../models/index.ts';
import { thousands } from '../../util/format.ts';
import type { NodeEvaluator, NodeResult } from './evaluate.ts';
import { compareTieBreak, nearlyEqual } from './lattice.ts';
import type { Prepared } from './prepared.ts';

/** A class's depth when its rows fall back to whole-row suppression. */
export const ROW_FALLBACK = 0xff;

export interface CellSuppression {
  /** QI indices in suppression order: the first `depth` of them are suppressed in a class. */
  readonly order: readonly number[];
  /** Per class of the node: 0 untouched, d > 0 the first d attributes of `order` suppressed, or ROW_FALLBACK. */
  readonly depth: Uint8Array;
  /** Per QI (spec order): the cells suppressed. */
  readonly cellsPerAttribute: readonly number[];
  readonly cells: number;
  /** Rows kept by suppressing cells, and rows suppressed whole (no step protected them). */
  readonly protectedRows: number;
  readonly fallbackRows: number;
  /** Rows in classes below k at the node: what row suppression would suppress. */
  readonly smallRows: number;
  /**
   * The released classes (records showing the same QI cells, `*` included): per tuple its class,
   * per class its size; rows suppressed whole stay in their node class, flagged.
   */
  readonly released: ClassOutcome;
  readonly minClassSize: number;
  /** The node's tuple → class map, read once (the node's own may be composed on each read). */
  readonly groupOf: Int32Array;
}

/** Whether the spec asks for cell suppression. */
export function suppressesCells(prepared: Pick<Prepared, 'method'>): boolean {
  return prepared.method.suppression === 'cells';
}

/** The attributes in suppression order (see the header). */
export function suppressionOrder(prepared: Prepared, levels: readonly number[]): number[] {
  const { hierarchies, method } = prepared;
  const importance = hierarchies.map((h) => method.importance?.[h.attribute] ?? 0);
  const labels = hierarchies.map((h, i) => h.labels[levels[i]!]!.length);
  return hierarchies
    .map((_, i) => i)
    .filter((i) => labels[i]! > 1)
    .sort((a, b) => importance[a]! - importance[b]! || labels[b]! - labels[a]! || a - b);
}

/**
 * Cell suppression of the node's classes below k (k-anonymity is the only model it takes); with
 * `limit`, undefined as soon as more rows than that fall back to whole-row suppression.
 */
export function suppressCells(
  prepared: Prepared,
  node: NodeResult,
  k: number,
  limit = Number.POSITIVE_INFINITY,
): CellSuppression | undefined {
  const { hierarchies, tuples, problem } = prepared;
  if (problem.entity) {
    throw new SpecError(
      'E_SPEC_CONFLICT',
      `${basename(prepared.spec.file)}: method.suppression "cells" protects records, and an entity column asks to protect persons`,
      'use "suppression": "rows" (the default) with an entity column',
    );
  }
  const m = hierarchies.length;
  const { groups, sizes, reps, groupOf } = node;
  const order = suppressionOrder(prepared, node.levels);
  // A class's depth travels in 7 bits of its flag (bit 0: suppressed whole).
  if (order.length > 128) {
    throw new SpecError(
      'E_SPEC_CONFLICT',
      `${basename(prepared.spec.file)}: method.suppression "cells" takes at most 128 quasi-identifiers (this node has ${order.length} not at their top level)`,
      'use "suppression": "rows" (the default), or fewer quasi-identifiers',
    );
  }
  const depth = new Uint8Array(groups);
  // The classes to protect, and per step d the id of their values on order[d..] (ids interned
  // from the last attribute back: id_d = (code of order[d], id_{d+1})).
  const pending: number[] = [];
  let smallRows = 0;
  for (let g = 0; g < groups; g++) {
    if (sizes[g]! >= k) continue;
    pending.push(g);
    smallRows += sizes[g]!;
  }
  const steps = order.length;
  const ids: Int32Array[] = new Array(steps);
  let next: Int32Array = new Int32Array(pending.length);
  for (let d = steps - 1; d >= 1; d--) {
    const i = order[d]!;
    const table = hierarchies[i]!.levelTables[node.levels[i]!]!;
    const column = tuples.columns[i]!;
    const domain = hierarchies[i]!.labels[node.levels[i]!]!.length;
    const interned = new Map<number, number>();
    const id = new Int32Array(pending.length);
    for (let p = 0; p < pending.length; p++) {
      const code = table[column[reps[pending[p]!]!]!]!;
      const key = (d === steps - 1 ? 0 : next[p]!) * domain + code;
      let v = interned.get(key);
      if (v === undefined) {
        v = interned.size;
        interned.set(key, v);
      }
      id[p] = v;
    }
    ids[d] = next = id;
  }
  // Step d: pending classes sharing id_d form a group; a group of k rows or more is released.
  let left = pending.map((_, p) => p);
  const groupId = new Int32Array(pending.length).fill(-1);
  let releasedGroups = 0;
  for (let d = 1; d < steps && left.length > 0; d++) {
    const id = ids[d]!;
    const rows = new Map<number, number>();
    for (const p of left) rows.set(id[p]!, (rows.get(id[p]!) ?? 0) + sizes[pending[p]!]!);
    const first = new Map<number, number>();
    const still: number[] = [];
    for (const p of left) {
      if (rows.get(id[p]!)! < k) {
        still.push(p);
        continue;
      }
      depth[pending[p]!] = d;
      let gid = first.get(id[p]!);
      if (gid === undefined) first.set(id[p]!, (gid = releasedGroups++));
      groupId[p] = gid;
    }
    left = still;
  }
  let fallbackRows = 0;
  for (const p of left) {
    depth[pending[p]!] = ROW_FALLBACK;
    fallbackRows += sizes[pending[p]!]!;
  }
  if (fallbackRows > limit) return undefined;
  // Cells per attribute, the metrics' per-class flags.
  const cellsPerAttribute = new Array<number>(m).fill(0);
  const cellFlags = new Uint8Array(groups * m);
  const fallback = new Uint8Array(groups);
  for (let g = 0; g < groups; g++) {
    const d = depth[g]!;
    if (d === ROW_FALLBACK) fallback[g] = 1;
    else {
      for (let j = 0; j < d; j++) {
        const i = order[j]!;
        cellFlags[g * m + i] = 1;
        cellsPerAttribute[i]! += sizes[g]!;
      }
    }
  }
  const cells = cellsPerAttribute.reduce((a, b) => a + b, 0);
  // Released classes: untouched node classes, then the released groups, then fallback classes.
  const classOf = new Int32Array(groups);
  let classes = 0;
  for (let g = 0; g < groups; g++) if (depth[g] === 0) classOf[g] = classes++;
  const retainedClasses = classes + releasedGroups;
  pending.forEach((g, p) => {
    if (groupId[p]! >= 0) classOf[g] = classes + groupId[p]!;
  });
  classes = retainedClasses;
  for (let g = 0; g < groups; g++) if (fallback[g]) classOf[g] = classes++;
  const releasedSizes = new Int32Array(classes);
  const releasedReps = new Int32Array(classes).fill(-1);
  const releasedSuppressed = new Uint8Array(classes);
  const releasedCells = new Uint8Array(classes * m);
  for (let g = 0; g < groups; g++) {
    const c = classOf[g]!;
    releasedSizes[c]! += sizes[g]!;
    if (releasedReps[c]! < 0) releasedReps[c] = reps[g]!;
    releasedSuppressed[c] = fallback[g]!;
    releasedCells.set(cellFlags.subarray(g * m, (g + 1) * m), c * m);
  }
  const tupleClass = new Int32Array(groupOf.length);
  for (let t = 0; t < tupleClass.length; t++) tupleClass[t] = classOf[groupOf[t]!]!;
  let squares = 0;
  let minClassSize = 0;
  for (let c = 0; c < retainedClasses; c++) {
    squares += releasedSizes[c]! * releasedSizes[c]!;
    if (minClassSize === 0 || releasedSizes[c]! < minClassSize) minClassSize = releasedSizes[c]!;
  }
  const released: ClassOutcome = {
    groups: classes,
    groupOf: tupleClass,
    sizes: releasedSizes,
    reps: releasedReps,
    suppressed: releasedSuppressed,
    suppressedRows: fallbackRows,
    retainedClasses,
    retainedSquares: squares,
    cells: releasedCells,
  };
  return {
    order,
    depth,
    cellsPerAttribute,
    cells,
    protectedRows: smallRows - fallbackRows,
    fallbackRows,
    smallRows,
    released,
    minClassSize,
    groupOf,
  };
}

/**
 * Cell suppression at the searched node, then a descent to the node whose metric is best with
 * cells suppressed: from the node, to its best direct specialization (one QI one level down)
 * whose rows in classes below k (the rows that lose cells or are suppressed whole) stay within
 * maxSuppression, while that improves the metric (ties as the search breaks them). A node given
 * in advance (`fixed`) is kept.
 */
export function cellDescent(
  prepared: Prepared,
  evaluator: NodeEvaluator,
  start: NodeResult,
  fixed: boolean,
): { node: NodeResult; cells: CellSuppression; nodesChecked: number } {
  const { problem } = prepared;
  const k = requiredK(problem.models);
  const limit = problem.maxSuppressedRows;
  const metricOf = (node: NodeResult, cells: CellSuppression) =>
    problem.metrics.values(node.levels, cells.released, problem.metric)[problem.metric];
  const first = suppressCells(prepared, start, k, limit);
  if (!first) {
    throw new NoSolutionError(
      'E_CELL_SUPPRESSION',
      `${basename(prepared.spec.file)}: cell suppression leaves more rows to suppress whole at the chosen node than the ${thousands(limit)} method.maxSuppression allows`,
      'allow more suppression in method.maxSuppression, or use "suppression": "rows"',
    );
  }
  let best = { node: start, cells: first, value: metricOf(start, first) };
  let nodesChecked = 0;
  for (let moved = !fixed; moved; ) {
    moved = false;
    let next: typeof best | undefined;
    for (const id of problem.lattice.predecessors(best.node.id)) {
      nodesChecked++;
      // The records that lose anything stay within maxSuppression: those of classes below k.
      if (evaluator.rowsBelowK(id) > limit) continue;
      const node = evaluator.evaluate(id);
      const cells = suppressCells(prepared, node, k, limit);
      if (!cells) continue;
      const value = metricOf(node, cells);
      const than = next ?? best;
      const better = nearlyEqual(value, than.value)
        ? compareTieBreak(problem.lattice, id, than.node.id) < 0
        : value < than.value;
      if (better) next = { node, cells, value };
    }
    if (next && !nearlyEqual(next.value, best.value)) {
      best = next;
      moved = true;
    }
  }
  return { node: best.node, cells: best.cells, nodesChecked };
}

/**
 * The node's result as released with cells suppressed: its classes are the released ones
 * (records showing the same cells), its metrics count each suppressed cell at the top level.
 */
export function cellNode(prepared: Prepared, node: NodeResult, cells: CellSuppression): NodeResult {
  const { released } = cells;
  const values = prepared.problem.metrics.values(node.levels, released, 'all');
  let suppressedSquares = 0;
  for (let c = released.retainedClasses; c < released.groups; c++) {
    suppressedSquares += released.sizes[c]! * released.sizes[c]!;
  }
  return {
    ...released,
    id: node.id,
    histograms: [],
    levels: node.levels,
    feasible: true,
    minClassSize: cells.minClassSize,
    suppressedSquares,
    values,
    value: values[prepared.problem.metric],
  };
}

/** Per distinct tuple: how many attributes of `order` its class loses (0 for a row suppressed whole). */
export function tupleDepths(cells: CellSuppression): Uint8Array {
  const { groupOf } = cells;
  const out = new Uint8Array(groupOf.length);
  for (let t = 0; t < out.length; t++) {
    const d = cells.depth[groupOf[t]!]!;
    out[t] = d === ROW_FALLBACK ? 0 : d;
  }
  return out;
}

/**
 * Per QI name, per row: 1 where the row's cell is suppressed, from each row's depth (how many
 * attributes of `order` it loses); only QIs with a suppressed cell.
 */
export function cellFlagsByRow(order: readonly string[], depthOfRow: Uint8Array): Map<string, Uint8Array> {
  const out = new Map<string, Uint8Array>();
  order.forEach((name, j) => {
    const flags = new Uint8Array(depthOfRow.length);
    let any = false;
    for (let r = 0; r < depthOfRow.length; r++) {
      if (depthOfRow[r]! > j) {
        flags[r] = 1;
        any = true;
      }
    }
    if (any) out.set(name, flags);
  });
  return out;
}

/** report.html's account, and report.json's figures. */
export function cellSuppressionReport(prepared: Prepared, cells: CellSuppression) {
  const names = prepared.hierarchies.map((h) => h.attribute);
  const m = names.length;
  const perAttribute = Object.fromEntries(names.map((n, i) => [n, cells.cellsPerAttribute[i]!]));
  const figures = {
    cells: cells.cells,
    perAttribute,
    order: cells.order.map((i) => names[i]!),
    protectedRows: cells.protectedRows,
    fallbackRows: cells.fallbackRows,
    rowSuppressionCells: cells.smallRows * m,
  };
  const section = {
    title: 'Cell suppression',
    facts: [
      ['Cells suppressed', cells.cells] as [string, number],
      ...names.map((n, i) => [`  ${n}`, cells.cellsPerAttribute[i]!] as [string, number]),
      ['Rows kept by suppressing cells', cells.protectedRows] as [string, number],
      ['Rows suppressed whole (no cells could protect them)', cells.fallbackRows] as [string, number],
      ['Cells row suppression would have suppressed', cells.smallRows * m] as [string, number],
    ],
    note:
      'Records in classes smaller than k kept their row and lost quasi-identifier cells instead, least important ' +
      'attribute first; a suppressed cell reads * and matches every value. Every released record has at least k ' +
      'released records consistent with its own values (docs/definitions.md, "Cell suppression"). A suppressed ' +
      "cell counts in the utility metrics as that attribute's top level.",
  };
  return { figures, section };
}
