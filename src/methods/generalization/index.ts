/**
 * Full-domain generalization with suppression as a release method: hierarchies → distinct
 * tuples → optimal lattice search → apply → files; verified by src/verify/.
 */
import { basename } from 'node:path';
import { encodeArrow, readArrow } from '../../data/arrow.ts';
import { formatCsv, readCsv } from '../../data/csv.ts';
import type { EncodedColumn, EncodedTable } from '../../data/table.ts';
import { buildHierarchy, type Hierarchy, hierarchyRows } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/grouping.ts';
import { GeneralizationMetrics } from '../../metrics/generalization.ts';
import { classSizeHistogram, prosecutorRisk } from '../../metrics/privacy.ts';
import { buildModels, requiredK } from '../../models/index.ts';
import type { GeneralizationMethodSpec, ReleaseSpec } from '../../spec/spec.ts';
import { decodeTable, verifyGeneralization } from '../../verify/verify.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import { applyGeneralization } from './apply.ts';
import { type GeneralizationProblem, NodeEvaluator, type NodeResult } from './evaluate.ts';
import { Lattice } from './lattice.ts';
import { optimalSearch } from './search.ts';

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
): Prepared {
  const method = generalizationSpec(spec);
  const qiSpecs = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const qis = qiSpecs.map((a) => table.columns.find((c) => c.name === a.name)!);
  const hierarchies = time('hierarchies', () =>
    qiSpecs.map((a, i) => buildHierarchy(qis[i]!, a.hierarchy!, true)),
  );
  const models = buildModels(spec.privacy, table.rowCount, basename(spec.file));
  const tuples = time('encode', () => collapseRows(kernel, qis));
  const k = requiredK(models);
  const problem: GeneralizationProblem = {
    lattice: new Lattice(hierarchies.map((h) => h.height)),
    rows: table.rowCount,
    counts: tuples.counts,
    models,
    sensitive: [],
    maxSuppressedRows: Math.floor(method.maxSuppression * table.rowCount + 1e-9),
    metric: method.metric,
    metrics: new GeneralizationMetrics(hierarchies, tuples.columns, tuples.counts, table.rowCount, k),
  };
  return { spec, method, table, qis, hierarchies, tuples, problem };
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
  return new NodeEvaluator(prepared.problem, session);
}

export const generalizationMethod: ReleaseMethod = {
  name: 'generalization',
  build(ctx: MethodContext): BuiltRelease {
    const { spec, table, kernel, time, say } = ctx;
    const prepared = prepareGeneralization(spec, table, kernel, time);
    const { problem, hierarchies, qis, tuples, method } = prepared;
    say(
      `${table.rowCount.toLocaleString('en')} rows, ${qis.length} quasi-identifiers, ` +
        `${tuples.counts.length.toLocaleString('en')} distinct tuples, lattice of ${problem.lattice.size.toLocaleString('en')} nodes`,
    );
    const { best, nodesChecked, strategy } = time('search', () =>
      optimalSearch(openSearch(prepared, kernel)),
    );
    const node = Object.fromEntries(qis.map((c, i) => [c.name, best.levels[i]!]));
    say(
      `optimal node ${JSON.stringify(node)} after checking ${nodesChecked} of ${problem.lattice.size} nodes`,
    );

    const columns = time('apply', () => {
      const suppressedRow = new Uint8Array(table.rowCount);
      for (let r = 0; r < table.rowCount; r++) {
        suppressedRow[r] = best.suppressed[best.groupOf[tuples.rowToTuple[r]!]!]!;
      }
      return applyGeneralization({
        table,
        attributes: spec.attributes,
        hierarchies: new Map(hierarchies.map((h) => [h.attribute, h])),
        node,
        suppressedRow,
        suppressed: method.suppressed,
        seed: spec.seed,
      });
    });
    const files = time('write', () => [
      { name: 'data.arrow', content: encodeArrow(columns) },
      { name: 'data.csv', content: formatCsv(columns, table.delimiter) },
    ]);

    return {
      files,
      report: reportOf(prepared, best, node, nodesChecked, strategy),
      verify: (path) =>
        verifyGeneralization({
          input: table,
          attributes: spec.attributes,
          hierarchyRows: new Map(
            spec.attributes
              .filter((a) => a.type === 'quasi-identifying')
              .map((a) => [a.name, hierarchyRows(qis.find((c) => c.name === a.name)!, a.hierarchy!)]),
          ),
          arrow: decodeTable(readArrow(path('data.arrow'))),
          csv: decodeTable(readCsv(path('data.csv'), { delimiter: table.delimiter })),
          claims: {
            node,
            k: requiredK(problem.models),
            maxSuppressedRows: problem.maxSuppressedRows,
            suppressedRows: best.suppressedRows,
            classes: best.retainedClasses,
            minClassSize: best.minClassSize,
            suppressed: method.suppressed,
          },
        }),
    };
  },
};

function reportOf(
  prepared: Prepared,
  best: NodeResult,
  node: Record<string, number>,
  nodesChecked: number,
  strategy: string,
): BuiltRelease['report'] {
  const { method, table, hierarchies, tuples, problem } = prepared;
  const retained = Array.from(best.sizes).filter((_, g) => !best.suppressed[g]);
  const released = method.suppressed === 'mask' ? table.rowCount : table.rowCount - best.suppressedRows;
  return {
    specFacts: { maxSuppression: method.maxSuppression, suppressed: method.suppressed },
    rows: { input: table.rowCount, released, suppressed: best.suppressedRows },
    generalization: {
      strategy,
      node,
      heights: Object.fromEntries(hierarchies.map((h) => [h.attribute, h.height])),
      latticeSize: problem.lattice.size,
      nodesChecked,
      distinctTuples: tuples.counts.length,
    },
    privacy: {
      satisfied: best.feasible,
      models: problem.models.map((m) => ({
        model: m.spec.model,
        params: Object.fromEntries(Object.entries(m.spec).filter(([key]) => key !== 'model')),
        satisfied: best.feasible,
        achieved: (m.spec.model === 'k-anonymity' ? { k: best.minClassSize } : {}) as Record<string, number>,
        monotonic: m.monotonic,
      })),
      k: best.minClassSize,
      classes: best.retainedClasses,
      ecSizeHistogram: classSizeHistogram(retained),
      prosecutorRisk: prosecutorRisk(retained, 0.2),
    },
    utility: { metric: method.metric, value: best.value, ...best.values },
  };
}
