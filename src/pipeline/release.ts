/**
 * One release, end to end: spec → input → hierarchies → distinct tuples → optimal search →
 * apply → stage → verify independently → report → publish. Runtime-agnostic: the CLI calls
 * it directly; the serverless handlers call the same phases.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { encodeArrow, readArrow } from '../data/arrow.ts';
import { formatCsv, readCsv } from '../data/csv.ts';
import { readTable } from '../data/read.ts';
import type { EncodedColumn, EncodedTable } from '../data/table.ts';
import { SpecError } from '../errors.ts';
import { buildHierarchy, type Hierarchy, hierarchyRows } from '../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../kernels/grouping.ts';
import { wasmGroupingKernel } from '../kernels/grouping-wasm.ts';
import { applyGeneralization } from '../methods/generalization/apply.ts';
import {
  type GeneralizationProblem,
  NodeEvaluator,
  type NodeResult,
} from '../methods/generalization/evaluate.ts';
import { Lattice } from '../methods/generalization/lattice.ts';
import { optimalSearch } from '../methods/generalization/search.ts';
import { GeneralizationMetrics } from '../metrics/generalization.ts';
import { classSizeHistogram, prosecutorRisk } from '../metrics/privacy.ts';
import { buildModels, requiredK } from '../models/index.ts';
import { renderReportHtml } from '../report/html.ts';
import type { ReleaseReport } from '../report/types.ts';
import { loadSpec, type ReleaseSpec } from '../spec/spec.ts';
import { decodeTable, verifyGeneralization } from '../verify/verify.ts';
import { checkOutDir, type Manifest, Staging } from './publish.ts';

export const VERSION = '0.1.0';

export interface ReleaseOptions {
  readonly kernel?: GroupingKernel;
  /** Progress lines for a person (stderr in the CLI). */
  readonly progress?: (line: string) => void;
}

export interface ReleaseResult {
  readonly report: ReleaseReport;
  readonly manifest: Manifest;
  readonly out: string;
}

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

/** The phases up to the chosen node, shared by the release and the benchmarks. */
export interface Prepared {
  readonly spec: ReleaseSpec;
  readonly table: EncodedTable;
  readonly qis: EncodedColumn[];
  readonly hierarchies: Hierarchy[];
  readonly tuples: TupleSet;
  readonly problem: GeneralizationProblem;
}

export function prepare(
  spec: ReleaseSpec,
  kernel: GroupingKernel,
  timings: Record<string, number>,
): Prepared {
  let t = performance.now();
  const lap = (phase: string) => {
    const now = performance.now();
    timings[phase] = Math.round((now - t) * 100) / 100;
    t = now;
  };
  const table = readTable(spec.input, { delimiter: spec.format.delimiter, format: spec.format.type });
  lap('read');
  checkColumns(spec, table);
  const qiSpecs = spec.attributes.filter((a) => a.type === 'quasi-identifying');
  const qis = qiSpecs.map((a) => table.columns.find((c) => c.name === a.name)!);
  const hierarchies = qiSpecs.map((a, i) => buildHierarchy(qis[i]!, a.hierarchy!, true));
  lap('hierarchies');
  const models = buildModels(spec.privacy, table.rowCount, basename(spec.file));
  const tuples = collapseRows(kernel, qis);
  lap('encode');
  const k = requiredK(models);
  const problem: GeneralizationProblem = {
    lattice: new Lattice(hierarchies.map((h) => h.height)),
    rows: table.rowCount,
    counts: tuples.counts,
    models,
    sensitive: [],
    maxSuppressedRows: Math.floor(spec.method.maxSuppression * table.rowCount + 1e-9),
    metric: spec.method.metric,
    metrics: new GeneralizationMetrics(hierarchies, tuples.columns, tuples.counts, table.rowCount, k),
  };
  return { spec, table, qis, hierarchies, tuples, problem };
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

export function runRelease(specPath: string, out: string, options: ReleaseOptions = {}): ReleaseResult {
  const kernel = options.kernel ?? wasmGroupingKernel;
  const say = options.progress ?? (() => {});
  const started = performance.now();
  const timings: Record<string, number> = {};
  const spec = loadSpec(specPath);
  checkOutDir(out, [spec.input, spec.file]);
  say(`reading ${basename(spec.input)}`);
  const prepared = prepare(spec, kernel, timings);
  const { table, problem, hierarchies, qis, tuples } = prepared;
  say(
    `${table.rowCount.toLocaleString('en')} rows, ${qis.length} quasi-identifiers, ` +
      `${tuples.counts.length.toLocaleString('en')} distinct tuples, lattice of ${problem.lattice.size.toLocaleString('en')} nodes`,
  );

  let t = performance.now();
  const evaluator = openSearch(prepared, kernel);
  const { best, nodesChecked, strategy } = optimalSearch(evaluator);
  timings.search = ms(t);
  const node = Object.fromEntries(qis.map((c, i) => [c.name, best.levels[i]!]));
  say(`optimal node ${JSON.stringify(node)} after checking ${nodesChecked} nodes (${timings.search} ms)`);

  t = performance.now();
  const suppressedRow = new Uint8Array(table.rowCount);
  for (let r = 0; r < table.rowCount; r++)
    suppressedRow[r] = best.suppressed[best.groupOf[tuples.rowToTuple[r]!]!]!;
  const columns = applyGeneralization({
    table,
    attributes: spec.attributes,
    hierarchies: new Map(hierarchies.map((h) => [h.attribute, h])),
    node,
    suppressedRow,
    suppressed: spec.method.suppressed,
    seed: spec.seed,
  });
  timings.apply = ms(t);

  const staging = new Staging();
  try {
    t = performance.now();
    staging.write('data.arrow', encodeArrow(columns));
    staging.write('data.csv', formatCsv(columns, table.delimiter));
    timings.write = ms(t);

    say('verifying the release independently');
    t = performance.now();
    const checks = verifyGeneralization({
      input: table,
      attributes: spec.attributes,
      hierarchyRows: new Map(
        spec.attributes
          .filter((a) => a.type === 'quasi-identifying')
          .map((a) => [a.name, hierarchyRows(qis.find((c) => c.name === a.name)!, a.hierarchy!)]),
      ),
      arrow: decodeTable(readArrow(staging.path('data.arrow'))),
      csv: decodeTable(readCsv(staging.path('data.csv'), { delimiter: table.delimiter })),
      claims: {
        node,
        k: requiredK(problem.models),
        maxSuppressedRows: problem.maxSuppressedRows,
        suppressedRows: best.suppressedRows,
        classes: best.retainedClasses,
        minClassSize: best.minClassSize,
        suppressed: spec.method.suppressed,
      },
    });
    timings.verify = ms(t);

    const runId = runIdOf(spec);
    const report = buildReport({ prepared, best, node, nodesChecked, strategy, checks, runId, timings });
    report.timings.total = ms(started);
    staging.write('report.json', `${JSON.stringify(report, null, 2)}\n`);
    staging.write('report.html', renderReportHtml(report));
    const manifest = staging.publish(out, runId);
    say(`published ${manifest.files.length} files and manifest.json to ${out}`);
    return { report, manifest, out };
  } finally {
    staging.dispose();
  }
}

function checkColumns(spec: ReleaseSpec, table: EncodedTable): void {
  const where = basename(spec.file);
  const names = new Set(table.columns.map((c) => c.name));
  for (const a of spec.attributes) {
    if (!names.has(a.name)) {
      throw new SpecError(
        'E_SPEC_COLUMN',
        `${where}: attributes.${a.name} is not a column of ${basename(table.source)}`,
        `the input's columns are: ${[...names].join(', ')}`,
      );
    }
  }
  const listed = new Set(spec.attributes.map((a) => a.name));
  const missing = table.columns.filter((c) => !listed.has(c.name)).map((c) => c.name);
  if (missing.length > 0) {
    throw new SpecError(
      'E_SPEC_UNLISTED',
      `${where}: the input column${missing.length > 1 ? 's' : ''} ${missing.join(', ')} ha${missing.length > 1 ? 've' : 's'} no type`,
      'list every input column under attributes (use "identifying" for columns that must be dropped)',
    );
  }
}

/** Same spec and input → same run id, so re-running a release is idempotent. */
function runIdOf(spec: ReleaseSpec): string {
  return createHash('sha256')
    .update(readFileSync(spec.file))
    .update(createHash('sha256').update(readFileSync(spec.input)).digest())
    .digest('hex')
    .slice(0, 16);
}

function ms(since: number): number {
  return Math.round((performance.now() - since) * 100) / 100;
}

function buildReport(a: {
  prepared: Prepared;
  best: NodeResult;
  node: Record<string, number>;
  nodesChecked: number;
  strategy: string;
  checks: ReleaseReport['verification']['checks'];
  runId: string;
  timings: Record<string, number>;
}): ReleaseReport {
  const { spec, table, hierarchies, tuples, problem } = a.prepared;
  const { best } = a;
  const retained = Array.from(best.sizes).filter((_, g) => !best.suppressed[g]);
  const released = spec.method.suppressed === 'mask' ? table.rowCount : table.rowCount - best.suppressedRows;
  return {
    ppdp: { version: VERSION, runId: a.runId },
    spec: {
      file: basename(spec.file),
      method: spec.method.name,
      seed: spec.seed,
      maxSuppression: spec.method.maxSuppression,
      suppressed: spec.method.suppressed,
    },
    input: {
      file: basename(table.source),
      columns: table.columns.map((c) => ({
        name: c.name,
        type: spec.attributes.find((x) => x.name === c.name)!.type,
        distinct: c.dictionary.length,
      })),
    },
    rows: { input: table.rowCount, released, suppressed: best.suppressedRows },
    generalization: {
      strategy: a.strategy,
      node: a.node,
      heights: Object.fromEntries(hierarchies.map((h) => [h.attribute, h.height])),
      latticeSize: problem.lattice.size,
      nodesChecked: a.nodesChecked,
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
    utility: { metric: spec.method.metric, value: best.value, ...best.values },
    verification: { verified: a.checks.every((c) => c.passed), checks: a.checks },
    timings: { ...a.timings },
  };
}
