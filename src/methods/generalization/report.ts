/**
 * Generalization's part of the report, one builder per part: the chosen node and the search,
 * the privacy figures of the released classes (models, risk, the SA per class and what the
 * classes disclose against the input's own), the utility.
 */
import {
  type ClassHistogramSet,
  disclosureMeasures,
  type ModeCounts,
  type SparseClassHistograms,
  sensitiveDistribution,
  sparseClassHistograms,
} from '../../metrics/disclosure.ts';
import { populationRiskPart } from '../../metrics/population-risk.ts';
import { classSizeHistogram, prosecutorFacts, reidentificationRisk } from '../../metrics/privacy.ts';
import { paramsOf } from '../../models/describe.ts';
import type { SensitiveAttribute } from '../../models/index.ts';
import type { PrivacyModel } from '../../models/model.ts';
import type { BuiltRelease } from '../method.ts';
import type { TrajectoryPoint } from './best-effort.ts';
import { countsOfClass, type NodeResult } from './evaluate.ts';
import { personClassHistograms, personTable } from './person-histograms.ts';
import type { Prepared } from './prepared.ts';
import type { SearchOutcome } from './search.ts';

type MethodReport = BuiltRelease['report'];
type Outcome = SearchOutcome & {
  kMinimal?: NodeResult[];
  bestEffort?:
    | {
        readonly lowerBound: number;
        readonly stoppedBy: string;
        readonly trajectory?: readonly TrajectoryPoint[];
      }
    | undefined;
};

/** The input's own classes (the bottom node's grouping): all the report reads of them. */
export type InputClasses = Pick<NodeResult, 'groups' | 'groupOf'>;

export function generalizationReport(
  prepared: Prepared,
  outcome: Outcome,
  node: Record<string, number>,
  originalNode: InputClasses,
): MethodReport {
  const { best } = outcome;
  const { method, table } = prepared;
  const releasedRows = method.suppressed === 'mask' ? table.rowCount : table.rowCount - best.suppressedRows;
  const facts = searchFacts(prepared, outcome, node, originalNode.groups);
  return {
    rows: { input: table.rowCount, released: releasedRows, suppressed: best.suppressedRows },
    ...(prepared.entity
      ? {
          persons: {
            input: prepared.entity.persons,
            suppressed: best.suppressedPersons ?? 0,
            smallestClass: best.minClassPersons ?? 0,
          },
        }
      : {}),
    generalization: facts,
    ...(outcome.bestEffort ? { sections: [searchSection(prepared, best.value, facts)] } : {}),
    privacy: privacyOf(prepared, best, originalNode),
    utility: { metric: method.metric, value: best.value, ...best.values },
  };
}

/**
 * The node, the hierarchies' heights, how much of the lattice was checked, the distinct QI
 * combinations (the input's own classes), NCP per attribute.
 */
function searchFacts(
  prepared: Prepared,
  outcome: Outcome,
  node: Record<string, number>,
  qiCombinations: number,
) {
  const { best, nodesChecked, strategy } = outcome;
  const { hierarchies, problem } = prepared;
  const levelsOf = (r: NodeResult) => Object.fromEntries(prepared.qis.map((c, i) => [c.name, r.levels[i]!]));
  const ncpByAttribute = problem.metrics.ncpByAttribute(best.levels, best);
  return {
    strategy,
    node,
    heights: Object.fromEntries(hierarchies.map((h) => [h.attribute, h.height])),
    latticeSize: problem.lattice.size,
    nodesChecked,
    distinctTuples: qiCombinations,
    ...(outcome.kMinimal ? { kMinimal: outcome.kMinimal.map(levelsOf) } : {}),
    ncpByAttribute: Object.fromEntries(prepared.qis.map((c, i) => [c.name, ncpByAttribute[i]!])),
    ...searchQuality(outcome),
  };
}

/**
 * How close the node is to the optimum: the optimal search proves it (gap 0); the best-effort
 * one states the lower bound it proved on the optimum's value and the gap that leaves.
 */
function searchQuality(outcome: Outcome): {
  search?: string;
  lowerBound?: number;
  gap?: number;
  stoppedBy?: string;
  trajectory?: TrajectoryPoint[];
} {
  if (outcome.strategy.startsWith('optimal'))
    return { search: 'optimal', lowerBound: outcome.best.value, gap: 0 };
  if (!outcome.bestEffort) return {};
  const value = outcome.best.value;
  const lowerBound = Math.min(value, outcome.bestEffort.lowerBound);
  const gap = value > 0 ? (value - lowerBound) / value : 0;
  return {
    search: gap === 0 ? 'optimal' : 'best-effort',
    lowerBound,
    gap,
    stoppedBy: outcome.bestEffort.stoppedBy,
    ...(outcome.bestEffort.trajectory ? { trajectory: outcome.bestEffort.trajectory.slice() } : {}),
  };
}

/** report.html's account of a best-effort search: the value, the bound, the gap. */
function searchSection(prepared: Prepared, value: number, facts: ReturnType<typeof searchFacts>) {
  const metric = prepared.method.metric;
  const lb = facts.lowerBound ?? value;
  const gap = facts.gap ?? 0;
  const line =
    gap === 0
      ? `${metric} ${fmt(value)}: optimal (the bound proved meets it)`
      : `${metric} ${fmt(value)}; the optimum is ≥ ${fmt(lb)} (gap ≤ ${fmt(100 * gap)} %)`;
  return {
    title: 'Lattice search',
    facts: [
      ['Search', 'best-effort (greedy climb, then local search)'] as [string, string],
      ['Distance from the optimum', line] as [string, string],
      ['Nodes checked', facts.nodesChecked] as [string, number],
      ['Lattice nodes', facts.latticeSize] as [string, number],
      ['Stopped by', facts.stoppedBy ?? ''] as [string, string],
    ],
    note:
      'The lattice was searched best-effort (too large to enumerate, or a time limit or node budget was set). ' +
      'The lower bound is proved: no node the search did not rule out can cost less.',
  };
}

function fmt(x: number): string {
  return Number.isFinite(x) ? String(Number(x.toPrecision(3))) : String(x);
}

/** The released classes: each model, the risk, the SA per class, disclosure against the input's classes. */
function privacyOf(
  prepared: Prepared,
  best: NodeResult,
  originalNode: InputClasses,
): MethodReport['privacy'] {
  const { problem } = prepared;
  const retained = Array.from(best.sizes).filter((_, g) => !best.suppressed[g]);
  // With an entity column, risks are per person: one of a class's P persons is re-identified
  // with probability 1/P (a person with rows in several classes counts in each).
  const persons = best.persons && Array.from(best.persons).filter((_, g) => !best.suppressed[g]);
  const reidentification = reidentificationRisk(
    persons ?? retained,
    prepared.spec.report.riskThreshold,
    persons
      ? 'the generalized quasi-identifiers, per person (the persons in one equivalence class look alike)'
      : 'the generalized quasi-identifiers (rows in one equivalence class look alike)',
  );
  // Each sensitive attribute's histograms over the released (not suppressed) classes; with an
  // entity column over persons, as the models count them (one figure per attribute).
  const released = prepared.sensitive.map(({ attribute, values }) => ({
    sa: prepared.entity
      ? {
          ...attribute,
          distribution: personTable(
            { ...prepared, entity: prepared.entity },
            values,
            attribute.column.dictionary.length,
          ),
        }
      : attribute,
    classes: classHistograms(prepared, best, attribute, (g: number) => !best.suppressed[g]),
  }));
  return {
    satisfied: best.feasible,
    models: problem.models.map((m) => ({
      model: m.spec.model,
      params: paramsOf(m.spec),
      satisfied: best.feasible,
      achieved: achievedOf(m, best),
      monotonic: m.monotonic,
    })),
    k: best.minClassPersons ?? best.minClassSize,
    classes: best.retainedClasses,
    // With an entity column the classes are sized in persons, their rows beside.
    ecSizeHistogram: classSizeHistogram(persons ?? retained, persons && retained),
    prosecutorRisk: prosecutorFacts(reidentification),
    reidentification,
    ...populationRiskPart(
      persons ?? retained,
      prepared.spec.report.population,
      prepared.entity?.persons ?? prepared.table.rowCount,
      persons !== undefined,
    ),
    sensitive: released.flatMap(({ sa, classes }) => {
      const d = sensitiveDistribution(sa.name, classes, sa.distribution, sa.column.dictionary);
      return d ? [d] : [];
    }),
    disclosure: Object.fromEntries(
      released.map(({ sa, classes }) => [
        sa.name,
        disclosureMeasures(
          sa.name,
          classes,
          originalModes(prepared, originalNode, sa),
          sa.distribution,
          sa.column.dictionary,
          prepared.entity !== undefined,
        ),
      ]),
    ),
  };
}

/**
 * What a model achieves at a node: the worst value of its measure over the retained classes
 * (both ends of the range for δ-presence), or the release's own figure for a whole-release model.
 */
function achievedOf(model: PrivacyModel, best: NodeResult): Record<string, number> {
  if (model.overall) {
    const rows = best.sizes.reduce(
      (n, size, g) => n + (g < best.groups && !best.suppressed[g] ? size : 0),
      0,
    );
    return { averageRisk: rows === 0 ? Number.NaN : best.retainedClasses / rows };
  }
  const h = best.histograms.find((x) => x.attribute === model.attribute);
  let worst: number | undefined;
  let least: number | undefined;
  for (let g = 0; g < best.groups; g++) {
    if (best.suppressed[g]) continue;
    const v = model.measure({
      size: (best.persons ?? best.sizes)[g]!,
      histogram: h ? countsOfClass(h, g) : null,
      population: best.population?.[g],
    });
    if (worst === undefined || (model.higherIsBetter ? v < worst : v > worst)) worst = v;
    if (least === undefined || v < least) least = v;
  }
  // A model that reports more than its worst class says what (src/models).
  if (model.achieved) return model.achieved(worst ?? Number.NaN, least ?? Number.NaN);
  return { [model.measureName]: worst ?? Number.NaN };
}

/**
 * Per-class counts of a sensitive column at a node, from the tuples: the values each class
 * holds (a classes × values matrix would grow with their product for an attribute of many
 * values, an amount); with an entity column, person weights, classes × values.
 */
function classHistograms(
  prepared: Prepared,
  node: NodeResult,
  sa: SensitiveAttribute,
  keep: (g: number) => boolean,
): ClassHistogramSet | SparseClassHistograms {
  const width = sa.column.dictionary.length;
  const values = prepared.sensitive.find((s) => s.attribute.name === sa.name)!.values;
  const { entity } = prepared;
  if (entity) {
    const counts = personClassHistograms({ ...prepared, entity }, node.groupOf, node.groups, values, width);
    return { groups: node.groups, width, counts, keep };
  }
  return sparseClassHistograms(
    node.groupOf.subarray(0, values.length),
    node.groups,
    width,
    values,
    keep,
    prepared.tuples.counts,
  );
}

/**
 * The input's own classes' ModeCounts, one class's histogram at a time over the tuples sorted
 * by class: the input's classes are about as many as its tuples, and all their histograms at
 * once (classes × values cells) would outweigh everything else the report holds.
 */
function originalModes(prepared: Prepared, node: InputClasses, sa: SensitiveAttribute): ModeCounts {
  const values = prepared.sensitive.find((s) => s.attribute.name === sa.name)!.values;
  const weights = prepared.tuples.counts;
  const { groupOf, groups } = node;
  // A counting sort of the tuples by class: class g's are order[end[g - 1]..end[g]).
  const end = new Int32Array(groups);
  for (let t = 0; t < values.length; t++) end[groupOf[t]!]!++;
  for (let g = 1; g < groups; g++) end[g]! += end[g - 1]!;
  const order = new Int32Array(values.length);
  for (let t = values.length - 1; t >= 0; t--) order[--end[groupOf[t]!]!] = t;
  // (Each class's cells now start at end[g]: its end is the next class's start.)
  // With an entity column, a tuple weighs its rows over its person's rows in the class.
  const entity = prepared.entity;
  const mine = entity ? new Float64Array(entity.codes) : undefined;
  const histogram = entity
    ? new Float64Array(sa.column.dictionary.length)
    : new Int32Array(sa.column.dictionary.length);
  let correct = 0;
  let rows = 0;
  for (let g = 0; g < groups; g++) {
    const last = g + 1 < groups ? end[g + 1]! : values.length;
    let best = 0;
    if (entity && mine)
      for (let i = end[g]!; i < last; i++) mine[entity.of[order[i]!]!]! += weights[order[i]!]!;
    for (let i = end[g]!; i < last; i++) {
      const t = order[i]!;
      const w = entity && mine ? weights[t]! / mine[entity.of[t]!]! : weights[t]!;
      const c = (histogram[values[t]!]! += w);
      if (c > best) best = c;
      rows += w;
    }
    for (let i = end[g]!; i < last; i++) histogram[values[order[i]!]!] = 0;
    if (entity && mine) for (let i = end[g]!; i < last; i++) mine[entity.of[order[i]!]!] = 0;
    correct += best;
  }
  return { correct, rows };
}
