/**
 * Mondrian multidimensional partitioning (strict and relaxed) as a release method:
 * prepare (dimensions, models) → partition (WASM split steps, TS driver) → release values
 * and classes → files; verified by src/verify/mondrian.ts.
 */
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import { codeCounts } from '../../data/table.ts';
import type { MondrianKernel } from '../../kernels/mondrian/kernel.ts';
import { tsMondrianKernel } from '../../kernels/mondrian/reference.ts';
import { wasmMondrianKernel } from '../../kernels/mondrian/wasm.ts';
import {
  type DistributionMeasures,
  distributionMeasures,
  measureFigures,
} from '../../metrics/contingency.ts';
import { sensitiveDistribution } from '../../metrics/disclosure.ts';
import { classSizeHistogram, prosecutorFacts, reidentificationRisk } from '../../metrics/privacy.ts';
import type { ReportSection } from '../../report/types.ts';
import { thousands } from '../../util/format.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import { mondrianEstimator } from './estimator.ts';
import {
  type PartitionProblem,
  type PartitionResult,
  partitionMondrian,
  type RelaxedStrategy,
} from './partition.ts';
import { type PreparedMondrian, prepareMondrian } from './prepare.ts';
import { type Released, releaseColumns, releaseValues } from './release.ts';
import { transformationOf } from './transformation.ts';

export { prepareMondrian } from './prepare.ts';

export interface MondrianOutcome {
  readonly result: PartitionResult;
  readonly released: Released;
  /** The strategy whose partitions were released (`applied`: saved partitions, `ppdp apply`). */
  readonly strategy: 'strict' | RelaxedStrategy | 'applied';
  /** Relaxed: each strategy's NCP. */
  readonly candidates: { strategy: RelaxedStrategy; ncp: number }[];
}

/**
 * Partitions and derives the released values. Relaxed Mondrian runs both relaxed strategies
 * and keeps the one with the lower NCP (balanced-first on a tie): balanced cuts usually
 * keep more, but greedy splitting gives no guarantee, while strict-first is never worse than
 * strict Mondrian — so relaxed never is either.
 */
export function runMondrian(problem: PartitionProblem, kernel: MondrianKernel): MondrianOutcome {
  if (problem.mode === 'strict') {
    const result = partitionMondrian(problem, kernel);
    return { result, released: releaseValues(problem, result), strategy: 'strict', candidates: [] };
  }
  const tries = (['balanced-first', 'strict-first'] as const).map((strategy) => {
    const result = partitionMondrian({ ...problem, relaxed: strategy }, kernel);
    return { strategy, result, released: releaseValues(problem, result) };
  });
  const best = tries[1]!.released.ncp < tries[0]!.released.ncp ? tries[1]! : tries[0]!;
  return {
    ...best,
    candidates: tries.map((t) => ({ strategy: t.strategy, ncp: t.released.ncp })),
  };
}

/** The Mondrian kernel matching the run's kernel choice (`--kernel wasm|ts`). */
export function mondrianKernelFor(name: 'wasm' | 'ts'): MondrianKernel {
  return name === 'ts' ? tsMondrianKernel : wasmMondrianKernel;
}

export const mondrianMethod: ReleaseMethod = {
  name: 'mondrian',
  build(ctx: MethodContext): BuiltRelease {
    const { spec, table, time, say } = ctx;
    const prepared = time('prepare', () => prepareMondrian(spec, table));
    const { problem } = prepared;
    say(
      `${thousands(table.rowCount)} rows, ${problem.dims.length} quasi-identifiers ` +
        `(${problem.dims.map((d) => `${d.name}: ${d.kind}`).join(', ')}), ${problem.mode} Mondrian`,
    );
    const outcome = time('partition', () => runMondrian(problem, mondrianKernelFor(ctx.kernel.name)));
    const { result, released } = outcome;
    say(
      `${thousands(result.count)} partitions after ${thousands(result.splits)} splits` +
        `${outcome.strategy === 'strict' ? '' : ` (${outcome.strategy})`}, ` +
        `${thousands(released.classes)} classes, NCP ${released.ncp.toFixed(4)}`,
    );
    return releaseMondrian(ctx, prepared, outcome);
  },
};

/**
 * The release of a partitioning: files (the data and transformation.json, the partitions as
 * boxes that `ppdp apply` re-applies), report and verification.
 */
export function releaseMondrian(
  ctx: MethodContext,
  prepared: PreparedMondrian,
  outcome: MondrianOutcome,
): BuiltRelease {
  const { spec, table, time } = ctx;
  const { problem } = prepared;
  const { released } = outcome;
  const columns = time('apply', () =>
    releaseColumns(table, spec.attributes, problem, released, ctx.random('shuffle')),
  );
  const files = time('write', () => [
    { name: 'data.arrow', content: encodeArrow(columns) },
    { name: 'data.csv', content: encodeCsv(columns, table.delimiter) },
    {
      name: 'transformation.json',
      content: `${JSON.stringify(transformationOf(problem, released))}\n`,
    },
  ]);
  const measures = time('measure', () => distributionOf(prepared, outcome));
  const report = reportOf(prepared, outcome, measures);
  return {
    files,
    report,
    claims: {
      classes: released.classes,
      minClassSize: report.privacy.k!,
      ncp: released.ncp,
      numeric: problem.dims.filter((d) => d.kind === 'numeric').map((d) => d.name),
      generalized: problem.dims.filter((d) => d.kind !== 'numeric').map((d) => d.name),
    },
  };
}

/** Above this many rows the distribution measures (a CUBE over every released attribute) are left out. */
export const MEASURE_ROW_LIMIT = 100_000;

/**
 * KL, χ², count-query errors and uncertainty coefficients of what an analyst recovers (uniform
 * spread within classes) against the input, over the released attributes; null when the spec
 * says `"measures": false` or the table has more rows than MEASURE_ROW_LIMIT.
 */
export function distributionOf(
  prepared: PreparedMondrian,
  outcome: MondrianOutcome,
): DistributionMeasures | null {
  const { table, spec, problem } = prepared;
  if (!prepared.method.measures || table.rowCount > MEASURE_ROW_LIMIT) return null;
  const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
  const columns = table.columns.filter((c) => typeOf.get(c.name) !== 'identifying');
  return distributionMeasures(columns, mondrianEstimator(columns, problem, outcome.released));
}

function reportOf(
  prepared: PreparedMondrian,
  outcome: MondrianOutcome,
  measures: DistributionMeasures | null,
): BuiltRelease['report'] {
  const { problem, table, method } = prepared;
  const { result, released } = outcome;
  const W = result.histWidth;
  const sizes = Array.from(released.classSizes);
  const minSize = sizes.length > 0 ? Math.min(...sizes) : 0;
  let satisfied = true;
  const models = problem.models.map((model) => {
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
    satisfied &&= ok;
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
  const ncpByAttribute = Object.fromEntries(problem.dims.map((d, i) => [d.name, released.ncpByDim[i]!]));
  const reidentification = reidentificationRisk(
    sizes,
    prepared.spec.report.riskThreshold,
    'the generalized quasi-identifiers (rows in one equivalence class look alike)',
  );
  const sensitive = problem.sensitive.flatMap((sa, j) => {
    // The class histograms of this attribute, laid out contiguously.
    const counts = new Int32Array(released.classes * sa.width);
    for (let c = 0; c < released.classes; c++) {
      const from = c * W + result.histBase[j]!;
      counts.set(released.classHist.subarray(from, from + sa.width), c * sa.width);
    }
    const column = table.columns.find((col) => col.name === sa.name)!;
    const overall = Array.from(codeCounts(column), (n) => n / table.rowCount);
    const d = sensitiveDistribution(
      sa.name,
      { groups: released.classes, width: sa.width, counts, keep: () => true },
      overall,
    );
    return d ? [d] : [];
  });
  const splitsByAttribute = Object.fromEntries(problem.dims.map((d, i) => [d.name, result.splitsByDim[i]!]));
  const kinds = Object.fromEntries(problem.dims.map((d) => [d.name, d.kind]));
  const section: ReportSection = {
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
      ...(measures
        ? ([
            ['KL divergence (uniform spread within classes)', round(measures.kl)],
            [
              'Count-query error, base / CUBE',
              `${round(measures.queryErrorBase)} / ${round(measures.queryErrorCube)}`,
            ],
          ] as [string, string | number][])
        : ([
            [
              'Distribution measures',
              method.measures ? `left out above ${MEASURE_ROW_LIMIT} rows` : 'left out ("measures": false)',
            ],
          ] as [string, string][])),
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
  return {
    rows: { input: table.rowCount, released: table.rowCount, suppressed: 0 },
    privacy: {
      satisfied,
      models,
      k: minSize,
      classes: released.classes,
      ecSizeHistogram: classSizeHistogram(sizes),
      prosecutorRisk: prosecutorFacts(reidentification),
      reidentification,
      sensitive,
    },
    utility: {
      metric: 'ncp',
      value: released.ncp,
      ncp: released.ncp,
      ...(measures ? measureFigures(measures) : {}),
    },
    sections: [section],
    details: {
      mondrian: {
        mode: method.mode,
        strategy: outcome.strategy,
        candidates: outcome.candidates,
        partitions: result.count,
        splits: result.splits,
        attempts: result.attempts,
        classes: released.classes,
        kinds,
        splitsByAttribute,
        ncpByAttribute,
        ...(measures
          ? { uncertainty: measures.uncertainty }
          : {
              distributionMeasures: method.measures
                ? `left out: more than ${MEASURE_ROW_LIMIT} rows`
                : 'left out: "measures": false',
            }),
      },
    },
  };
}

function round(x: number): number {
  return Math.round(x * 1e6) / 1e6;
}
