/**
 * Full-domain generalization with suppression as a release method: hierarchies → distinct
 * tuples → optimal lattice search → apply → files; verified by src/verify/.
 */
import { basename } from 'node:path';
import { claimsOf, type GeneralizationClaims } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import { checkLatticeSize } from '../../data/limits.ts';
import { encodeParquet } from '../../data/parquet-write.ts';
import type { EncodedColumn, EncodedTable } from '../../data/table.ts';
import { NoSolutionError, SpecError } from '../../errors.ts';
import { buildHierarchy, type Hierarchy } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import { GeneralizationMetrics } from '../../metrics/generalization.ts';
import {
  buildModels,
  requiredK,
  type SensitiveAttribute,
  sensitiveAttributes,
  sensitiveNames,
} from '../../models/index.ts';
import { type GeneralizationMethodSpec, type ReleaseSpec, writesParquet } from '../../spec/spec.ts';
import { thousands } from '../../util/format.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import { applyGeneralization } from './apply.ts';
import { type GeneralizationProblem, NodeEvaluator, type NodeResult } from './evaluate.ts';
import { Lattice } from './lattice.ts';
import { type PopulationTuples, preparePopulation } from './population.ts';
import { generalizationReport } from './report.ts';
import { kMinimalSearch } from './samarati.ts';
import { optimalSearch, type SearchOutcome } from './search.ts';

/** Distinct QI tuples with their counts, and each row's tuple. */
export interface TupleSet {
  readonly columns: Int32Array[];
  readonly counts: Int32Array;
  readonly rowToTuple: Int32Array;
}

export function collapseRows(kernel: GroupingKernel, columns: readonly EncodedColumn[]): TupleSet {
  const session = kernel.open(
    { columns: columns.map((c) => c.codes), domains: columns.map((c) => c.dictionary.length) },
    columns.map(() => []),
  );
  const { groups, groupOf, sizes } = session.group(null);
  const tuples = session.keys(groups);
  session.dispose();
  return { columns: tuples, counts: sizes, rowToTuple: groupOf };
}

/** Everything up to the search, shared by the release, the tests and the benchmarks. */
export interface Prepared {
  readonly spec: ReleaseSpec;
  readonly method: GeneralizationMethodSpec;
  readonly table: EncodedTable;
  readonly qis: EncodedColumn[];
  readonly hierarchies: Hierarchy[];
  readonly tuples: TupleSet;
  readonly problem: GeneralizationProblem;
  /** Every sensitive attribute with its value per distinct tuple (for the disclosure measures). */
  readonly sensitive: { readonly attribute: SensitiveAttribute; readonly values: Int32Array }[];
  /** The population table of k-map and δ-presence, when the spec names one. */
  readonly population: PopulationTuples | undefined;
}

export function generalizationSpec(spec: ReleaseSpec): GeneralizationMethodSpec {
  if (spec.method.name !== 'generalization')
    throw new Error(`not a generalization spec: ${spec.method.name}`);
  return spec.method;
}

export function prepareGeneralization(
  spec: ReleaseSpec,
  table: EncodedTable,
  kernel: GroupingKernel,
  time: MethodContext['time'] = (_, work) => work(),
  /**
   * Rows already collapsed over `collapseColumnNames(spec)` (the serverless fan-out counts
   * shards). `table`'s columns then hold these tuples' codes, one position per tuple, not rows.
   */
  precollapsed?: TupleSet,
): Prepared {
  const qiSpecs = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const qis = qiSpecs.map((a) => table.columns.find((c) => c.name === a.name)!);
  const hierarchies = time('hierarchies', () =>
    qiSpecs.map((a, i) => buildHierarchy(qis[i]!, a.hierarchy!, true)),
  );
  checkLatticeSize(
    spec.file,
    hierarchies.map((h) => ({ name: h.attribute, height: h.height })),
    spec.limits?.maxLatticeNodes,
  );
  // Distinct tuples over the QIs and every sensitive attribute: the search groups on the QIs
  // and counts per class the SA values its models need; the report measures disclosure for all.
  const sensitive = sensitiveAttributes(spec, table, true, precollapsed?.counts);
  const collapsed =
    precollapsed ?? time('encode', () => collapseRows(kernel, [...qis, ...sensitive.map((s) => s.column)]));
  const tuples: TupleSet = { ...collapsed, columns: collapsed.columns.slice(0, qis.length) };
  const saTuples = sensitive.map((attribute, i) => ({
    attribute,
    values: collapsed.columns[qis.length + i]!,
  }));
  const population = time('population', () => preparePopulation(spec, qis, hierarchies, tuples, kernel));
  return withSpec(spec, { table, qis, hierarchies, tuples, sensitive: saTuples, population });
}

/**
 * The same table, hierarchies and distinct tuples under another spec's privacy models and
 * method settings (same attributes): `ppdp explore` prepares once and searches per value.
 */
export function respecify(prepared: Prepared, spec: ReleaseSpec): Prepared {
  return withSpec(spec, prepared);
}

function withSpec(
  spec: ReleaseSpec,
  data: Pick<Prepared, 'table' | 'qis' | 'hierarchies' | 'tuples' | 'sensitive' | 'population'>,
): Prepared {
  const method = generalizationSpec(spec);
  const { table, hierarchies, tuples, sensitive } = data;
  const named = new Set(sensitiveNames(spec));
  const models = buildModels(
    spec.privacy,
    table.rowCount,
    basename(spec.file),
    sensitive.map((s) => s.attribute).filter((s) => named.has(s.name)),
    true,
  );
  const k = requiredK(models);
  const problem: GeneralizationProblem = {
    lattice: new Lattice(hierarchies.map((h) => h.height)),
    rows: table.rowCount,
    counts: tuples.counts,
    models,
    sensitive: sensitive
      .filter((s) => named.has(s.attribute.name))
      .map(({ attribute, values }) => ({
        attribute: attribute.name,
        values,
        width: attribute.column.dictionary.length,
        distribution: attribute.distribution,
      })),
    maxSuppressedRows: Math.floor(method.maxSuppression * table.rowCount + 1e-9),
    metric: method.metric,
    metrics: new GeneralizationMetrics(hierarchies, tuples.columns, tuples.counts, table.rowCount, k, {
      ...method.loss,
      weights: hierarchies.map((h) => method.loss.weights?.[h.attribute] ?? 1),
    }),
    population: data.population,
  };
  return { ...data, spec, method, problem };
}

/** Opens a grouping session over the distinct tuples with every level table placed once. */
export function openSearch(prepared: Prepared, kernel: GroupingKernel): NodeEvaluator {
  const session = kernel.open(
    {
      columns: prepared.tuples.columns,
      counts: prepared.tuples.counts,
      domains: prepared.qis.map((c) => c.dictionary.length),
    },
    prepared.hierarchies.map((h) => h.levelTables),
  );
  const population = prepared.population;
  const populationSession =
    population &&
    kernel.open(
      { columns: population.columns, counts: population.counts, domains: population.domains },
      population.tables,
    );
  return new NodeEvaluator(prepared.problem, session, undefined, populationSession);
}

export const generalizationMethod: ReleaseMethod = {
  name: 'generalization',
  build: (ctx) => buildGeneralization(ctx),
};

/** The release at the optimal node, or at a given node (`ppdp apply` re-applies a saved one). */
export function buildGeneralization(ctx: MethodContext, fixed?: Record<string, number>): BuiltRelease {
  const { spec, table, kernel, time, say, random } = ctx;
  const prepared = prepareGeneralization(spec, table, kernel, time);
  const step = searchStep(prepared, kernel, time, say, fixed);
  const columns = time('apply', () => {
    const suppressedRow = new Uint8Array(table.rowCount);
    for (let r = 0; r < table.rowCount; r++)
      suppressedRow[r] = step.tupleSuppressed[prepared.tuples.rowToTuple[r]!]!;
    return applyGeneralization({
      table,
      attributes: spec.attributes,
      hierarchies: new Map(prepared.hierarchies.map((h) => [h.attribute, h])),
      node: step.node,
      suppressedRow,
      suppressed: prepared.method.suppressed,
      shuffleWith: random('shuffle'),
    });
  });
  const files = time('write', () => [
    { name: 'data.arrow', content: encodeArrow(columns) },
    { name: 'data.csv', content: encodeCsv(columns, table.delimiter, spec.format) },
    ...(writesParquet(spec) ? [{ name: 'data.parquet', content: encodeParquet(columns) }] : []),
  ]);
  return { files, report: step.report, claims: step.claims };
}

/** The spec's strategy: the optimal search, or Samarati's k-minimal generalizations. */
export function search(
  prepared: Prepared,
  kernel: GroupingKernel,
  /** A node to take instead of searching (QI name → level): it must be feasible. */
  fixed?: Record<string, number>,
): SearchOutcome & { kMinimal?: NodeResult[]; evaluator: NodeEvaluator } {
  const evaluator = openSearch(prepared, kernel);
  const outcome: SearchOutcome & { kMinimal?: NodeResult[] } = fixed
    ? fixedNode(prepared, evaluator, fixed)
    : prepared.method.strategy === 'optimal'
      ? optimalSearch(evaluator)
      : kMinimalSearch(
          evaluator,
          prepared.hierarchies.map((h) => h.levelTables),
          prepared.tuples.columns,
          prepared.method.preference,
          basename(prepared.spec.file),
        );
  // The search measures only the spec's metric; the report gives them all.
  return { ...outcome, best: evaluator.complete(outcome.best), evaluator };
}

/**
 * The given node, evaluated: feasible, or an error saying what fails on this table (classes
 * below k and the rows they hold, against the suppression limit).
 */
function fixedNode(
  prepared: Prepared,
  evaluator: NodeEvaluator,
  fixed: Record<string, number>,
): SearchOutcome {
  const { qis, hierarchies, problem, spec } = prepared;
  const levels = qis.map((q, i) => {
    const level = fixed[q.name];
    if (!(Number.isInteger(level) && level! >= 0 && level! <= hierarchies[i]!.height)) {
      evaluator.dispose();
      throw new SpecError(
        'E_APPLY_NODE',
        `the saved node has no valid level for quasi-identifier ${q.name} (got ${level}, its hierarchy has levels 0–${hierarchies[i]!.height})`,
        'apply a release made with the same quasi-identifiers and hierarchies as the spec',
      );
    }
    return level!;
  });
  const best = evaluator.evaluate(problem.lattice.index(levels));
  if (!best.feasible) {
    const k = requiredK(problem.models);
    let small = 0;
    let smallRows = 0;
    for (let g = 0; g < best.groups; g++) {
      if (best.sizes[g]! < k) {
        small++;
        smallRows += best.sizes[g]!;
      }
    }
    evaluator.dispose();
    const what =
      smallRows > problem.maxSuppressedRows
        ? `${thousands(small)} classes smaller than k=${k} (${thousands(smallRows)} rows)`
        : `the classes failing ${spec.privacy.map((m) => m.model).join(', ')}`;
    throw new NoSolutionError(
      'E_APPLY_INFEASIBLE',
      `${basename(spec.file)}: the saved node ${JSON.stringify(fixed)} does not protect this table: ${what} would need suppressing, and the spec allows at most ${thousands(problem.maxSuppressedRows)} suppressed rows`,
      'release the new data with `ppdp release` (a new search), or allow more suppression in method.maxSuppression',
    );
  }
  return { best, nodesChecked: 1, strategy: 'applied' };
}

// ---------------------------------------------------------------------------------------------
// The steps of build() that the shard steps (shards.ts) also run, on different machines.

/** The columns prepareGeneralization collapses rows over: the QIs, then the sensitive attributes. */
export function collapseColumnNames(spec: ReleaseSpec): string[] {
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  return [...qis, ...sensitiveNames(spec, true)];
}

/** What the search step hands to the later steps (JSON, except the per-tuple flags). */
export interface SearchStepResult {
  readonly node: Record<string, number>;
  /** Per distinct tuple of `prepared.tuples`: 1 when its class is suppressed. */
  readonly tupleSuppressed: Uint8Array;
  readonly report: BuiltRelease['report'];
  readonly claims: GeneralizationClaims;
}

export function searchStep(
  prepared: Prepared,
  kernel: GroupingKernel,
  time: MethodContext['time'],
  say: MethodContext['say'],
  fixed?: Record<string, number>,
): SearchStepResult {
  const { problem, qis, tuples, table } = prepared;
  say(
    `${thousands(table.rowCount)} rows, ${qis.length} quasi-identifiers, lattice of ${thousands(problem.lattice.size)} nodes`,
  );
  const outcome = time('search', () => search(prepared, kernel, fixed));
  const { best, nodesChecked } = outcome;
  const node = Object.fromEntries(qis.map((c, i) => [c.name, best.levels[i]!]));
  // The bottom node (the input's own classes) from the search's session: its classes are kept.
  // Its classes are the distinct QI combinations (the tuples also carry the sensitive values).
  const original = outcome.evaluator.evaluate(0);
  say(
    `${thousands(original.groups)} distinct quasi-identifier combinations; ` +
      `chosen node ${JSON.stringify(node)} after checking ${nodesChecked} of ${problem.lattice.size} nodes`,
  );
  const tupleSuppressed = new Uint8Array(tuples.counts.length);
  for (let t = 0; t < tupleSuppressed.length; t++) tupleSuppressed[t] = best.suppressed[best.groupOf[t]!]!;
  const report = time('report', () => generalizationReport(prepared, outcome, node, original));
  outcome.evaluator.dispose();
  return {
    node,
    tupleSuppressed,
    report,
    claims: claimsOf('generalization', {
      enforced: { k: requiredK(problem.models), maxSuppressedRows: problem.maxSuppressedRows },
      node,
      suppressedRows: best.suppressedRows,
      classes: best.retainedClasses,
      minClassSize: best.minClassSize,
    }),
  };
}
