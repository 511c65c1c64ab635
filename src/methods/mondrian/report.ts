/**
 * Mondrian's part of the report, one builder per part: each model judged over the released
 * classes, the SA per class, the partitioning section a person reads, the details.
 */

import type { ModelResult, ReportSection } from '../../contracts/report.ts';
import { codeCounts } from '../../data/table.ts';
import { type DistributionMeasures, measureFigures } from '../../metrics/contingency.ts';
import {
  disclosureMeasures,
  inputModeCounts,
  sensitiveDistribution,
  sparseClassHistograms,
} from '../../metrics/disclosure.ts';
import { populationRiskPart } from '../../metrics/population-risk.ts';
import { classSizeHistogram, prosecutorFacts, reidentificationRisk } from '../../metrics/privacy.ts';
import { minOf } from '../../util/extent.ts';
import type { BuiltRelease } from '../method.ts';
import type { MondrianOutcome } from './outcome.ts';
import type { PreparedMondrian } from './prepare.ts';

type MethodReport = BuiltRelease['report'];

/** The distribution measures; why not when past their budget; null with `"measures": false`. */
export type Measures = DistributionMeasures | { notMeasured: string } | null;

const measured = (m: Measures): m is DistributionMeasures => m !== null && typeof m.notMeasured !== 'string';

/** Why the measures are not there: the spec's choice, or what they would have cost. */
function leftOut(m: Exclude<Measures, DistributionMeasures>): string {
  return m === null
    ? 'left out ("measures": false)'
    : `not measured: ${m.notMeasured} ("measures": false skips them without counting)`;
}

export function mondrianReport(
  prepared: PreparedMondrian,
  outcome: MondrianOutcome,
  measures: Measures,
): MethodReport {
  const { table } = prepared;
  const { released } = outcome;
  const sizes = Array.from(released.classSizes);
  const models = modelResults(prepared, outcome);
  const reidentification = reidentificationRisk(
    sizes,
    prepared.spec.report.riskThreshold,
    'the generalized quasi-identifiers (rows in one equivalence class look alike)',
  );
  return {
    rows: { input: table.rowCount, released: table.rowCount, suppressed: 0 },
    privacy: {
      satisfied: models.every((m) => m.satisfied),
      models,
      k: sizes.length > 0 ? minOf(sizes) : 0,
      classes: released.classes,
      ecSizeHistogram: classSizeHistogram(sizes),
      prosecutorRisk: prosecutorFacts(reidentification),
      reidentification,
      ...populationRiskPart(sizes, prepared.spec.report.population, table.rowCount),
      ...sensitiveOf(prepared, outcome),
    },
    utility: {
      metric: 'ncp',
      value: released.ncp,
      ncp: released.ncp,
      ...(measured(measures)
        ? measureFigures(measures)
        : measures === null
          ? {}
          : {
              distributionMeasures: `Distribution measures (KL, χ², query errors, uncertainty) ${leftOut(measures)}`,
            }),
    },
    sections: [partitioningSection(prepared, outcome, measures)],
    details: { mondrian: detailsOf(prepared, outcome, measures) },
  };
}

/** Each model over the released classes: whether every class passes, and the worst class's measure. */
function modelResults({ problem }: PreparedMondrian, { result, released }: MondrianOutcome): ModelResult[] {
  const W = result.histWidth;
  return problem.models.map((model) => {
    const sa = problem.sensitive.findIndex((s) => s.name === model.attribute);
    let ok = true;
    let worst: number | undefined;
    for (let c = 0; c < released.classes; c++) {
      const histogram =
        sa < 0
          ? null
          : released.classHist.subarray(
              c * W + result.histBase[sa]!,
              c * W + result.histBase[sa]! + problem.sensitive[sa]!.width,
            );
      const cls = { size: released.classSizes[c]!, histogram };
      if (!model.holds(cls)) ok = false;
      const v = model.measure(cls);
      if (worst === undefined || (model.higherIsBetter ? v < worst : v > worst)) worst = v;
    }
    return {
      model: model.spec.model,
      params: Object.fromEntries(Object.entries(model.spec).filter(([key]) => key !== 'model')) as Record<
        string,
        number | string
      >,
      satisfied: ok,
      achieved: { [model.measureName]: worst ?? 0 },
      monotonic: model.monotonic,
    };
  });
}

/** Each sensitive attribute's distribution per class against the input's. */
function sensitiveOf({ problem, table, qis }: PreparedMondrian, { released }: MondrianOutcome) {
  const qiCodes = qis.map((a) => table.columns.find((c) => c.name === a.name)!.codes);
  const each = problem.sensitive.map((sa) => {
    const column = table.columns.find((col) => col.name === sa.name)!;
    const overall = Float64Array.from(codeCounts(column), (n) => n / table.rowCount);
    // Each class's values, counted from the rows: a classes × values matrix would grow with
    // their product for an attribute of many values (an amount).
    const classes = sparseClassHistograms(
      released.classOf,
      released.classes,
      sa.width,
      column.codes,
      () => true,
    );
    return {
      distribution: sensitiveDistribution(sa.name, classes, overall, column.dictionary),
      // Against the input's own classes (every QI as given), as for a generalization release.
      disclosure: [
        sa.name,
        disclosureMeasures(
          sa.name,
          classes,
          inputModeCounts(qiCodes, column.codes, sa.width),
          overall,
          column.dictionary,
        ),
      ] as const,
    };
  });
  return {
    sensitive: each.flatMap((e) => (e.distribution ? [e.distribution] : [])),
    disclosure: Object.fromEntries(each.map((e) => e.disclosure)),
  };
}

/** The mode, the strategy, the partitions, NCP and the distribution measures, per attribute too. */
function partitioningSection(
  { problem, method }: PreparedMondrian,
  outcome: MondrianOutcome,
  measures: Measures,
): ReportSection {
  const { result, released } = outcome;
  return {
    title: 'Mondrian partitioning',
    facts: [
      ['Mode', method.mode],
      ...(outcome.candidates.length > 0
        ? ([
            [
              'Relaxed strategy',
              `${outcome.strategy} (NCP ${outcome.candidates.map((c) => `${c.strategy} ${round(c.ncp)}`).join(', ')})`,
            ],
          ] as [string, string][])
        : []),
      ['Partitions', result.count],
      ['Splits', result.splits],
      ['Candidate cuts tried', result.attempts],
      ['Equivalence classes', released.classes],
      ['NCP (0 = original, 1 = fully generalized)', round(released.ncp)],
      ...(measured(measures)
        ? ([
            ['KL divergence (uniform spread within classes)', round(measures.kl)],
            [
              'Count-query error, base / CUBE',
              `${round(measures.queryErrorBase)} / ${measures.queryErrorCube === undefined ? 'not measured' : round(measures.queryErrorCube)}`,
            ],
          ] as [string, string | number][])
        : ([['Distribution measures', leftOut(measures)]] as [string, string][])),
      ...problem.dims.map((d, i): [string, string | number] => [
        `${d.name} (${d.kind === 'numeric' ? 'numeric range' : d.kind === 'ordinal' ? 'ordinal, hierarchy labels' : 'hierarchy labels'})`,
        `${result.splitsByDim[i]} splits, NCP ${round(released.ncpByDim[i]!)}`,
      ]),
    ],
    note:
      method.mode === 'strict'
        ? 'Strict Mondrian: rows equal to a median always stay on one side of the cut, so released ranges never overlap.'
        : 'Relaxed Mondrian: rows equal to a median may be divided between the halves to balance them, so two ranges may share their boundary value. Two strategies run — balanced-first (divide whenever that passes) and strict-first (divide only where strict Mondrian stops, never worse than strict) — and the one with the lower NCP is released.',
  };
}

/** The machine-readable details. */
function detailsOf({ problem, method }: PreparedMondrian, outcome: MondrianOutcome, measures: Measures) {
  const { result, released } = outcome;
  return {
    mode: method.mode,
    strategy: outcome.strategy,
    candidates: outcome.candidates,
    partitions: result.count,
    splits: result.splits,
    attempts: result.attempts,
    classes: released.classes,
    kinds: Object.fromEntries(problem.dims.map((d) => [d.name, d.kind])),
    splitsByAttribute: Object.fromEntries(problem.dims.map((d, i) => [d.name, result.splitsByDim[i]!])),
    ncpByAttribute: Object.fromEntries(problem.dims.map((d, i) => [d.name, released.ncpByDim[i]!])),
    ...(measured(measures)
      ? { uncertainty: measures.uncertainty }
      : { distributionMeasures: leftOut(measures) }),
  };
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
