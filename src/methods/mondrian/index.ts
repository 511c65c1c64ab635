/**
 * Mondrian multidimensional partitioning (strict and relaxed) as a release method:
 * prepare (dimensions, models) → partition (WASM split steps, TS driver) → release values
 * and classes → files; verified by src/verify/mondrian.ts.
 */
import { claimsOf } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import type { MondrianKernel } from '../../kernels/mondrian/kernel.ts';
import { tsMondrianKernel } from '../../kernels/mondrian/reference.ts';
import { wasmMondrianKernel } from '../../kernels/mondrian/wasm.ts';
import { boundedDistributionMeasures } from '../../metrics/contingency.ts';
import { thousands } from '../../util/format.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import { mondrianEstimator } from './estimator.ts';
import type { MondrianOutcome } from './outcome.ts';
import { type PartitionProblem, partitionMondrian } from './partition.ts';
import { type PreparedMondrian, prepareMondrian } from './prepare.ts';
import { releaseColumns, releaseValues } from './release.ts';
import { type Measures, mondrianReport } from './report.ts';
import { transformationOf } from './transformation.ts';

export { prepareMondrian } from './prepare.ts';

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
    { name: 'data.csv', content: encodeCsv(columns, table.delimiter, spec.format) },
    {
      name: 'transformation.json',
      content: `${JSON.stringify(transformationOf(problem, released))}\n`,
    },
  ]);
  const measures = time('measure', () => distributionOf(prepared, outcome));
  const report = mondrianReport(prepared, outcome, measures);
  return {
    files,
    report,
    claims: claimsOf('mondrian', {
      classes: released.classes,
      minClassSize: report.privacy.k!,
      ncp: released.ncp,
      numeric: problem.dims.filter((d) => d.kind === 'numeric').map((d) => d.name),
      generalized: problem.dims.filter((d) => d.kind !== 'numeric').map((d) => d.name),
    }),
  };
}

/**
 * KL, χ², count-query errors and uncertainty coefficients of what an analyst recovers (uniform
 * spread within classes) against the input, over the released attributes; null when the spec
 * says `"measures": false`; why not when the base group-by alone would pass the measures' budget
 * (its cells each checked against the classes they may fall in: src/metrics/contingency.ts).
 */
export function distributionOf(prepared: PreparedMondrian, outcome: MondrianOutcome): Measures {
  const { table, spec, problem } = prepared;
  if (!prepared.method.measures) return null;
  const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
  const columns = table.columns.filter((c) => typeOf.get(c.name) !== 'identifying');
  return boundedDistributionMeasures(columns, mondrianEstimator(columns, problem, outcome.released));
}
