/**
 * What `ppdp init` says about its draft's lattice: the generalization lattice has one node per
 * combination of the quasi-identifiers' levels, so its size is the product of each one's levels
 * (hierarchy height + 1). A wide table's lattice is past what the optimal search enumerates
 * (limits.maxLatticeNodes): its release searches best-effort within method.nodeBudget and
 * method.timeLimit. Then init names the columns that make the lattice large, each one's factor,
 * and coarser hierarchies that shrink it, with the size they would give.
 */

import { inputRows } from '../data/checks.ts';
import { DEFAULT_MAX_LATTICE_NODES } from '../data/limits.ts';
import type { EncodedColumn, EncodedTable, RowNames } from '../data/table.ts';
import { buildHierarchy } from '../hierarchy/hierarchy.ts';
import { DEFAULT_NODE_BUDGET, DEFAULT_TIME_LIMIT_S } from '../methods/generalization/index.ts';
import type { HierarchySpec, ReleaseSpec } from '../release-spec/spec.ts';
import { counted, inWords, latticeNodes, latticeSize, thousands } from '../util/format.ts';

/** Columns a line names before "and N more": a wide table's every column, not 1,000 on a line. */
const NAMES_SHOWN = 20;

/** One quasi-identifier's part of the lattice. */
export interface LatticeFactor {
  readonly name: string;
  readonly height: number;
  /** Its factor in the lattice's size: height + 1. */
  readonly levels: number;
  /** What its hierarchy is built with (intervals, date, mask, groups, file). */
  readonly builder: HierarchySpec['kind'];
  /** A coarser hierarchy as the spec writes it, and its height, when the builder has one. */
  readonly coarser?: { readonly hierarchy: Record<string, unknown>; readonly height: number };
}

export interface LatticeAdvice {
  readonly size: number;
  /** Past the lattice limit: a release searches best-effort. */
  readonly bestEffort: boolean;
  readonly factors: readonly LatticeFactor[];
  /** The lattice's size with every coarser hierarchy. */
  readonly coarserSize: number;
}

/** The draft's lattice, from its quasi-identifiers' hierarchies as a release builds them. */
export function latticeAdvice(spec: ReleaseSpec, table: EncodedTable): LatticeAdvice {
  const factors: LatticeFactor[] = [];
  for (const a of spec.attributes) {
    if (a.type !== 'quasi-identifying' || !a.hierarchy) continue;
    const height = heightOf(
      a.hierarchy,
      table.columns.find((c) => c.name === a.name)!,
      inputRows(spec, table),
    );
    const coarser = coarserOf(a.hierarchy);
    factors.push({
      name: a.name,
      height,
      levels: height + 1,
      builder: a.hierarchy.kind,
      ...(coarser && coarser.height < height ? { coarser } : {}),
    });
  }
  const size = factors.reduce((n, f) => n * f.levels, 1);
  const coarserSize = factors.reduce((n, f) => n * ((f.coarser?.height ?? f.height) + 1), 1);
  const limit = spec.limits?.maxLatticeNodes ?? DEFAULT_MAX_LATTICE_NODES;
  return { size, bestEffort: size > limit, factors, coarserSize };
}

/**
 * A hierarchy's height: an interval or date builder's from its levels (the table init read holds
 * numbers with decimal commas as text: a release reads them with format.decimal), any other's
 * as a release builds it.
 */
function heightOf(h: HierarchySpec, column: EncodedColumn, rows: RowNames): number {
  if (h.kind === 'intervals') return h.widths.length + 1;
  if (h.kind === 'date') return h.levels.length + 1;
  return buildHierarchy(column, h, rows).height;
}

/** A coarser form of a drafted builder: one interval width (the widest), one date level (the coarsest). */
function coarserOf(h: HierarchySpec): LatticeFactor['coarser'] {
  if (h.kind === 'intervals' && h.widths.length > 1) {
    const widest = h.widths.at(-1)!;
    return {
      hierarchy: {
        intervals: [widest],
        ...(h.bottom !== undefined ? { bottom: h.bottom } : {}),
        ...(h.top !== undefined ? { top: h.top } : {}),
      },
      height: 2,
    };
  }
  if (h.kind === 'date' && h.levels.length > 1) {
    const levels = h.levels.slice(-1);
    return { hierarchy: { date: h.format, levels }, height: levels.length + 1 };
  }
  return undefined;
}

/**
 * The lines init prints: one for a lattice the optimal search enumerates; for a larger one, its
 * factors by column (largest first, columns of one factor together), what a release does with
 * it, and what would make it smaller.
 */
export function latticeLines(advice: LatticeAdvice, spec: ReleaseSpec): string[] {
  const { factors } = advice;
  const limit = spec.limits?.maxLatticeNodes ?? DEFAULT_MAX_LATTICE_NODES;
  const qis = counted(factors.length, 'quasi-identifier');
  const levels = factors.map((f) => f.levels);
  if (!advice.bestEffort)
    return [
      `  lattice: ${latticeNodes(levels)} (${qis}): the optimal search enumerates it and proves its node optimal`,
    ];
  const lines = [
    `  lattice: ${latticeNodes(levels)}, the product of the ${qis}' levels (height + 1): past the ${thousands(limit)} the optimal search enumerates (limits.maxLatticeNodes).`,
    `    A release searches it best-effort: at most ${thousands(DEFAULT_NODE_BUDGET)} nodes (method.nodeBudget) or ${DEFAULT_TIME_LIMIT_S} s (method.timeLimit),`,
    '    and its report states how far its node may be from the optimum. What makes it large:',
  ];
  // Columns of one factor and builder together, the largest factor first.
  const groups = new Map<string, LatticeFactor[]>();
  for (const f of [...factors].sort((a, b) => b.levels - a.levels)) {
    const key = `${f.levels} ${f.builder}`;
    groups.set(key, [...(groups.get(key) ?? []), f]);
  }
  for (const group of groups.values()) {
    const f = group[0]!;
    const together = latticeSize(group.map((g) => g.levels));
    lines.push(
      `    ×${f.levels}${group.length > 1 ? ' each' : ''} (${f.builder}, height ${f.height}): ${inWords(
        group.map((g) => g.name),
        NAMES_SHOWN,
        ', ',
      )}` + (group.length > 1 ? ` — ×${together} together` : ''),
    );
  }
  const coarser = factors.filter((f) => f.coarser);
  if (coarser.length > 0) {
    lines.push('  to make it smaller, coarser hierarchies (fewer levels; edit the draft):');
    // Columns with the same suggestion on one line.
    const same = new Map<string, LatticeFactor[]>();
    for (const f of coarser.sort((a, b) => b.levels - a.levels)) {
      const c = f.coarser!;
      const key = `${JSON.stringify(c.hierarchy)} — height ${c.height}, ×${c.height + 1} instead of ×${f.levels}`;
      same.set(key, [...(same.get(key) ?? []), f]);
    }
    for (const [key, group] of same)
      lines.push(
        `    ${inWords(
          group.map((f) => f.name),
          NAMES_SHOWN,
          ', ',
        )}: ${key}${group.length > 1 ? ' each' : ''}`,
      );
    const within = advice.coarserSize <= limit;
    lines.push(
      `    all of them: ${latticeNodes(factors.map((f) => (f.coarser?.height ?? f.height) + 1))}${
        within
          ? ', within the optimal search’s limit: it then proves its node optimal, but with no node budget or time limit it may take longer than the best-effort search'
          : ', still past the limit'
      }`,
    );
  }
  lines.push(
    '  or fewer quasi-identifiers: a column nobody could link on, marked "insensitive", divides the lattice by its levels',
    '  (and every quasi-identifier widens each step of the best-effort search)',
  );
  return lines;
}

/** init's hook: the lattice lines, on stdout. */
export function printLattice(spec: ReleaseSpec, table: EncodedTable): void {
  process.stdout.write(`${latticeLines(latticeAdvice(spec, table), spec).join('\n')}\n`);
}
