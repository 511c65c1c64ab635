/**
 * Full-domain generalization with suppression as a release method: hierarchies → distinct
 * tuples → optimal lattice search → apply → files; verified by src/verify/.
 */
import { basename } from 'node:path';
import { drawsSecretSample, type SpecNamed } from '../../catalogue/catalogue.ts';
import { DIFFERENTIAL_PRIVACY } from '../../catalogue/differential-privacy.ts';
import { claimsOf, type GeneralizationClaims } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { inputRows } from '../../data/checks.ts';
import { encodeCsv } from '../../data/csv.ts';
import { checkLatticeSize, DEFAULT_MAX_LATTICE_NODES } from '../../data/limits.ts';
import { encodeParquet } from '../../data/parquet-write.ts';
import { columnRows, type EncodedTable } from '../../data/table.ts';
import { collapseRows, type TupleSet } from '../../data/tuples.ts';
import { NoSolutionError, PpdpError, SpecError } from '../../errors.ts';
import { buildHierarchy } from '../../hierarchy/hierarchy.ts';
import type { GroupingKernel } from '../../kernels/groupby/kernel.ts';
import { GeneralizationMetrics } from '../../metrics/generalization.ts';
import {
  dpSettings,
  SecretDraws,
  sampledRowIndices,
  sampledTable,
  uniform,
} from '../../models/differential-privacy.ts';
import {
  buildModels,
  personDistribution,
  requiredK,
  type SensitiveAttribute,
  sensitiveAttributes,
  sensitiveNames,
} from '../../models/index.ts';
import {
  entityOf,
  type GeneralizationMethodSpec,
  type ReleaseSpec,
  writesParquet,
} from '../../release-spec/spec.ts';
import { counted, latticeNodes, thousands } from '../../util/format.ts';
import { keyedRandom } from '../../util/keys.ts';
import type { Random, UniformDraws } from '../../util/random.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import { applyGeneralization } from './apply.ts';
import { type BestEffortOutcome, type BestEffortProgress, BestEffortSearch } from './best-effort.ts';
import {
  cellDescent,
  cellFlagsByRow,
  cellNode,
  cellSuppressionReport,
  suppressesCells,
  tupleDepths,
} from './cell-suppression.ts';
import { dpSearch } from './dp-search.ts';
import { type GeneralizationProblem, NodeEvaluator, type NodeResult } from './evaluate.ts';
import { Lattice } from './lattice.ts';
import { preparePopulation } from './population.ts';
import type { Prepared } from './prepared.ts';
import { generalizationReport } from './report.ts';
import { kMinimalSearch } from './samarati.ts';
import { optimalSearch, type SearchOutcome } from './search.ts';

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
  // Tuples are no rows of the input: each shard's hierarchies were built on its rows.
  const rows = precollapsed ? columnRows : inputRows(spec, table);
  const hierarchies = time('hierarchies', () =>
    qiSpecs.map((a, i) => buildHierarchy(qis[i]!, a.hierarchy!, rows)),
  );
  // Past limits.maxLatticeNodes the optimal search gives way to the best-effort one;
  // Samarati's k-minimal search enumerates, and no search numbers nodes past 2^53.
  checkLatticeSize(
    spec.file,
    hierarchies.map((h) => ({ name: h.attribute, height: h.height })),
    generalizationSpec(spec).strategy === 'k-minimal'
      ? spec.limits?.maxLatticeNodes
      : Number.MAX_SAFE_INTEGER,
  );
  // Distinct tuples over the QIs and every sensitive attribute: the search groups on the QIs
  // and counts per class the SA values its models need; the report measures disclosure for all.
  const sensitive = sensitiveAttributes(spec, table, true, precollapsed?.counts);
  // With an entity column, each tuple also carries its person (a class counts distinct persons).
  const entityName = entityOf(spec);
  if (entityName !== undefined && precollapsed) throw entityOverShards(spec);
  const entityColumn = table.columns.find((c) => c.name === entityName);
  const collapsed =
    precollapsed ??
    time('encode', () =>
      collapseRows(kernel, [
        ...qis,
        ...sensitive.map((s) => s.column),
        ...(entityColumn ? [entityColumn] : []),
      ]),
    );
  const tuples: TupleSet = { ...collapsed, columns: collapsed.columns.slice(0, qis.length) };
  const saTuples = sensitive.map((attribute, i) => ({
    attribute,
    values: collapsed.columns[qis.length + i]!,
  }));
  const entity = entityColumn && {
    of: collapsed.columns[qis.length + sensitive.length]!,
    codes: entityColumn.dictionary.length,
    persons: presentCodes(entityColumn.codes, entityColumn.dictionary.length),
  };
  const population = time('population', () => preparePopulation(spec, qis, hierarchies, tuples, kernel));
  return withSpec(spec, { table, qis, hierarchies, tuples, sensitive: saTuples, population, entity });
}

/** An attribute's p(T, s) over persons (each weighing 1 over their rows). */
function personsOver(
  values: Int32Array,
  attribute: SensitiveAttribute,
  tuples: TupleSet,
  entity: NonNullable<Prepared['entity']>,
): Float64Array {
  const width = attribute.column.dictionary.length;
  return personDistribution(values, tuples.counts, entity.of, entity.codes, entity.persons, width);
}

/** How many of the codes [0, size) occur. */
function presentCodes(codes: Int32Array, size: number): number {
  const seen = new Uint8Array(size);
  let n = 0;
  for (let r = 0; r < codes.length; r++) {
    if (!seen[codes[r]!]) {
      seen[codes[r]!] = 1;
      n++;
    }
  }
  return n;
}

/** An entity spec over row shards: a person's rows may lie in several shards, whose tuples do not say whose they are. */
export function entityOverShards(spec: ReleaseSpec): SpecError {
  return new SpecError(
    'E_SPEC_ENTITY_METHOD',
    `${basename(spec.file)}: attributes.${entityOf(spec)} is "type": "entity", which generalization over row shards does not honour (a person's rows may lie in several shards)`,
    'release it as one task: with --workers 1, or on one machine',
  );
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
  data: Pick<Prepared, 'table' | 'qis' | 'hierarchies' | 'tuples' | 'sensitive' | 'population' | 'entity'>,
): Prepared {
  const method = generalizationSpec(spec);
  const { table, hierarchies, tuples, sensitive } = data;
  const named = new Set(sensitiveNames(spec));
  // With an entity column the models weigh persons: p(T, s) over persons (docs/definitions.md).
  const judged = sensitive
    .filter((s) => named.has(s.attribute.name))
    .map(({ attribute, values }) => ({
      attribute: data.entity
        ? { ...attribute, distribution: personsOver(values, attribute, tuples, data.entity) }
        : attribute,
      values,
    }));
  const models = buildModels(
    spec.privacy,
    table.rowCount,
    basename(spec.file),
    judged.map((s) => s.attribute),
    true,
    data.entity !== undefined,
  );
  const k = requiredK(models);
  const problem: GeneralizationProblem = {
    lattice: new Lattice(hierarchies.map((h) => h.height)),
    rows: table.rowCount,
    counts: tuples.counts,
    models,
    sensitive: judged.map(({ attribute, values }) => ({
      attribute: attribute.name,
      values,
      width: attribute.column.dictionary.length,
      distribution: attribute.distribution,
    })),
    // With an entity column, the limit counts persons (`entity`), not rows: any number of rows.
    maxSuppressedRows: data.entity
      ? table.rowCount
      : Math.floor(method.maxSuppression * table.rowCount + 1e-9),
    ...(data.entity
      ? {
          entity: {
            ...data.entity,
            maxSuppressedPersons: Math.floor(method.maxSuppression * data.entity.persons + 1e-9),
          },
        }
      : {}),
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
  const evaluator = new NodeEvaluator(prepared.problem, session, undefined, populationSession);
  evaluator.distinctTuples = prepared.sensitive.length === 0 && !prepared.entity;
  return evaluator;
}

export const generalizationMethod: ReleaseMethod = {
  name: 'generalization',
  build: (ctx) => buildGeneralization(ctx),
  buildAsync: (ctx) => buildGeneralizationAsync(ctx),
};

/**
 * The release, its best-effort search (if any) yielding to the event loop between slices so
 * that SIGINT/SIGTERM end the run within a slice; the pipeline's Build state calls this one.
 */
export async function buildGeneralizationAsync(ctx: MethodContext): Promise<BuiltRelease> {
  // A secret sample is drawn once, in the synchronous build (its search is a given node).
  if (drawsSecretSample(ctx.spec.privacy)) return buildGeneralization(ctx);
  const { spec, table, kernel, time, say } = ctx;
  const prepared = prepareGeneralization(spec, table, kernel, time);
  const step = await searchStepAsync(prepared, kernel, time, say, searchRandom(spec));
  return release(ctx, prepared, step);
}

/** The release at the optimal node, or at a given node (`ppdp apply` re-applies a saved one). */
export function buildGeneralization(
  ctx: MethodContext,
  fixed?: Record<string, number>,
  origin?: NodeOrigin,
): BuiltRelease {
  const dp = dpSample(ctx);
  if (dp) return dpRelease({ ...ctx, table: dp.table }, dp);
  const { spec, table, kernel, time, say } = ctx;
  const prepared = prepareGeneralization(spec, table, kernel, time);
  return release(ctx, prepared, searchStep(prepared, kernel, time, say, fixed, searchRandom(spec), origin));
}

/** The spec's (ε, δ)-differential privacy model with β, k and the split of ε. */
export interface DpPlan {
  readonly model: SpecNamed<typeof DIFFERENTIAL_PRIVACY.name>;
  readonly settings: ReturnType<typeof dpSettings>;
  /** Where the spec names the model, for errors: `release.json: privacy[0]`. */
  readonly where: string;
}

/** A differentially private release's sample and settings (docs/definitions.md, "Differential privacy"). */
interface DpSample extends DpPlan {
  readonly table: EncodedTable;
  readonly inputRows: number;
  /** The secret generator the sample was drawn from (the search draws from it too). */
  readonly random: SecretDraws;
}

/**
 * The spec's (ε, δ)-differential privacy model and its settings, checked against the method;
 * undefined when the spec names no such model. One task and shards check it alike.
 */
export function dpPlan(spec: ReleaseSpec): DpPlan | undefined {
  const i = spec.privacy.findIndex((m) => m.model === DIFFERENTIAL_PRIVACY.name);
  if (i < 0) return undefined;
  const model = spec.privacy[i] as SpecNamed<typeof DIFFERENTIAL_PRIVACY.name>;
  const where = `${basename(spec.file)}: privacy[${i}]`;
  const method = generalizationSpec(spec);
  if (method.maxSuppression !== 1 || method.suppressed !== 'remove') {
    throw new SpecError(
      'E_SPEC_MODEL_METHOD',
      `${where}: (ε, δ)-differential privacy suppresses every class under k, whatever their number, and must not release a suppressed row's other values`,
      'set "maxSuppression": 1 and "suppressed": "remove" in method',
    );
  }
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  const levels = 'levels' in model ? model.levels : undefined;
  const missing = levels ? qis.filter((q) => levels[q] === undefined) : [];
  const extra = levels ? Object.keys(levels).filter((q) => !qis.includes(q)) : [];
  if (!levels && method.metric !== 'loss') {
    throw new SpecError(
      'E_SPEC_MODEL_METHOD',
      `${where}: the private search scores nodes by the Loss metric's score, but method.metric is ${method.metric}`,
      'set "metric": "loss" in method, or fix the node in advance with "levels"',
    );
  }
  if (missing.length > 0 || extra.length > 0) {
    throw new SpecError(
      'E_SPEC_MODEL_METHOD',
      `${where}.levels must give a level to each quasi-identifier and to nothing else` +
        (missing.length > 0 ? ` (missing: ${missing.join(', ')})` : '') +
        (extra.length > 0 ? ` (not quasi-identifiers: ${extra.join(', ')})` : ''),
      'name the generalization node in advance, one level per quasi-identifier, e.g. "levels": { "age": 2, "zip": 1 }',
    );
  }
  return { model, settings: dpSettings(model, where), where };
}

/**
 * (ε, δ)-differential privacy in one task: each row sampled with probability β from a secret
 * stream (not the spec's seed), undefined when the spec names no such model. Over shards,
 * each piece's scan samples its own rows (src/pipeline/states/scan-piece.ts).
 */
function dpSample(ctx: MethodContext): DpSample | undefined {
  const plan = dpPlan(ctx.spec);
  if (!plan) return undefined;
  const { table, time } = ctx;
  const random = new SecretDraws();
  const sampled = time('sample', () =>
    sampledTable(table, sampledRowIndices(table.rowCount, plan.settings.beta, random)),
  );
  return { ...plan, table: sampled, inputRows: table.rowCount, random };
}

/** The sample generalized and suppressed, with the accounting (`dpStep`). */
function dpRelease(ctx: MethodContext, dp: DpSample): BuiltRelease {
  const { spec, table, kernel, time, say } = ctx;
  const prepared = prepareGeneralization(spec, table, kernel, time);
  return release(ctx, prepared, dpStep(prepared, kernel, time, say, dp, dp.inputRows, dp.random));
}

/**
 * The prepared sample generalized at the spec's node or at the node the private search draws
 * (from `random`, the secret generator), classes under k suppressed, with the accounting: the
 * report's section and the claims' sampling. The one-task build and the shards' search alike.
 */
export function dpStep(
  prepared: Prepared,
  kernel: GroupingKernel,
  time: MethodContext['time'],
  say: MethodContext['say'],
  dp: DpPlan,
  inputRows: number,
  random: UniformDraws,
): SearchStepResult {
  const { settings } = dp;
  const searched =
    'levels' in dp.model
      ? undefined
      : time('search', () => {
          const evaluator = openSearch(prepared, kernel);
          try {
            return dpSearch(
              prepared,
              evaluator,
              {
                stepEpsilon: settings.stepEpsilon,
                steps: settings.steps,
                k: settings.k,
                inputRows,
              },
              random,
              uniform,
            );
          } finally {
            evaluator.dispose();
          }
        });
  const node = searched ? searched.node : { ...('levels' in dp.model ? dp.model.levels : {}) };
  // (The node is given: no search draws, so no stream is keyed for one.)
  const step = searchStep(prepared, kernel, time, say, node, undefined, {
    kind: 'dp',
    field: dp.where,
    searched: searched !== undefined,
    beta: settings.beta,
    k: settings.k,
  });
  const sampledRows = prepared.table.rowCount;
  const fact = (name: string, value: number | string) => [name, value] as [string, number | string];
  const section = {
    title: '(ε, δ)-differential privacy',
    facts: [
      fact('ε', dp.model.epsilon),
      fact('δ', dp.model.delta),
      ...(searched
        ? [
            fact('ε spent on the search (ε_search)', settings.epsilonSearch),
            fact('ε per search step', settings.stepEpsilon),
            fact('Search steps allowed', settings.steps),
            fact('Search steps taken', searched.stepsTaken),
            fact('ε left for sampling and suppression', settings.epsilonAnon),
          ]
        : []),
      fact('Sampling probability β', settings.beta),
      // k is the threshold (ε, δ) set; the released classes are at least that, usually larger.
      fact('Class size threshold k (derived from ε and δ)', settings.k),
      fact('Smallest released class (rows)', step.claims.minClassSize),
      fact('Input rows', inputRows),
      fact('Rows sampled', sampledRows),
      fact('Sampled rows suppressed (classes under k)', step.claims.suppressedRows),
      searched
        ? fact('Generalization (chosen by the private search)', JSON.stringify(node))
        : fact('Generalization (fixed in advance)', JSON.stringify(node)),
    ],
    note:
      "Each input row was kept with probability β, drawn from the operating system's cryptographic generator (not the spec's seed: " +
      'the sample cannot be redone by anyone, the publisher included), the sample was generalized at ' +
      (searched
        ? 'a node chosen by a private search (each step draws among the candidate nodes by the exponential mechanism, favouring less information loss, from the same secret generator) '
        : 'the node the spec fixes ') +
      'and every class with fewer than k sampled rows was removed. (ε, δ)-differential privacy promises that adding or ' +
      "removing any one person's row changes the probability of any release by at most a factor e^ε, except with " +
      'probability δ: what anyone learns about one person is nearly what they would learn had that person not been in ' +
      "the input. It does not hide facts true of a population (a released class still shows its members' shared " +
      'generalized values and the values of its other columns), it covers one release (budgets add up over releases), ' +
      'and it protects records, not people with several rows. The counts of rows sampled and suppressed above are the ' +
      "publisher's: they are not part of the differentially private output, and publishing them spends privacy the " +
      'guarantee does not account for.' +
      (searched
        ? ' The node the search chose is covered: its draws spent ε_search, so the whole release (search, sample and ' +
          'suppression) spends ε_search plus the ε left for sampling, at most ε.'
        : ''),
  };
  return {
    ...step,
    report: { ...step.report, sections: [...(step.report.sections ?? []), section] },
    // The spec's limit (maxSuppression = 1) is over the input's rows, not the sample's.
    claims: {
      ...step.claims,
      enforced: { ...step.claims.enforced, maxSuppressedRows: inputRows },
      dp: {
        beta: settings.beta,
        k: settings.k,
        sampledRows,
        ...(searched
          ? {
              search: {
                epsilon: settings.epsilonSearch,
                stepEpsilon: settings.stepEpsilon,
                stepsTaken: searched.stepsTaken,
              },
            }
          : {}),
      },
    },
  };
}

function release(ctx: MethodContext, prepared: Prepared, step: SearchStepResult): BuiltRelease {
  const { spec, table, time, random } = ctx;
  const columns = time('apply', () => {
    const suppressedRow = new Uint8Array(table.rowCount);
    const flags = step.tupleSuppressed;
    const { rowToTuple } = prepared.tuples;
    for (let r = 0; r < suppressedRow.length; r++) suppressedRow[r] = flags[rowToTuple[r]!]! & 1;
    return applyGeneralization({
      table,
      attributes: spec.attributes,
      hierarchies: new Map(prepared.hierarchies.map((h) => [h.attribute, h])),
      node: step.node,
      suppressedRow,
      suppressed: prepared.method.suppressed,
      ...(step.claims.cells
        ? {
            suppressedCells: cellFlagsByRow(
              step.claims.cells.order,
              Uint8Array.from(prepared.tuples.rowToTuple, (t) => flags[t]! >> 1),
            ),
          }
        : {}),
      shuffleWith: random('shuffle'),
      tuples: {
        rowToTuple: prepared.tuples.rowToTuple,
        names: prepared.qis.map((q) => q.name),
        columns: prepared.tuples.columns,
        classes: step.tupleClasses,
      },
    });
  });
  const files = time('write', () => [
    { name: 'data.arrow', content: encodeArrow(columns) },
    { name: 'data.csv', content: encodeCsv(columns, table.delimiter, spec.format) },
    ...(writesParquet(spec) ? [{ name: 'data.parquet', content: encodeParquet(columns) }] : []),
  ]);
  return { files, report: step.report, claims: step.claims };
}

/** Default time limit of the best-effort search when the lattice is too large to enumerate (s). */
export const DEFAULT_TIME_LIMIT_S = 30;
/** Default node budget of the best-effort search (the deterministic stop). */
export const DEFAULT_NODE_BUDGET = 20_000;

/**
 * Whether the search is best-effort: the lattice is past limits.maxLatticeNodes, or the spec
 * sets a time limit or a node budget (the optimal search keeps its results everywhere else).
 */
export function bestEffort(prepared: Prepared): boolean {
  const { method, spec, problem } = prepared;
  if (method.strategy !== 'optimal') return false;
  return (
    method.timeLimit !== undefined ||
    method.nodeBudget !== undefined ||
    problem.lattice.size > (spec.limits?.maxLatticeNodes ?? DEFAULT_MAX_LATTICE_NODES)
  );
}

/** How the best-effort search runs: its stops, its random stream, its progress lines. */
export interface SearchOptions {
  readonly random?: Random;
  readonly say?: (line: string) => void;
  /** Who gave the node taken instead of searching (its errors speak to them): `ppdp apply`'s saved node by default. */
  readonly origin?: NodeOrigin;
}

/**
 * Who gives a node instead of a search: a published release's node (`ppdp apply <release>`),
 * `ppdp apply --node`, or the spec's (ε, δ)-differential privacy model at `field` (e.g.
 * `release.json: privacy[0]`), by its `levels` or by the node its private search chose.
 */
export type NodeOrigin =
  | { readonly kind: 'saved' }
  | { readonly kind: 'option' }
  | {
      readonly kind: 'dp';
      readonly field: string;
      readonly searched: boolean;
      readonly beta: number;
      readonly k: number;
    };

export type SearchResult = SearchOutcome & {
  kMinimal?: NodeResult[];
  evaluator: NodeEvaluator;
  /** The best-effort search's proved bound on the optimum and why it stopped. */
  bestEffort?: Pick<BestEffortOutcome, 'lowerBound' | 'stoppedBy' | 'trajectory'>;
};

function bestEffortSearch(
  prepared: Prepared,
  evaluator: NodeEvaluator,
  options: SearchOptions,
): BestEffortSearch {
  const { method, spec, problem } = prepared;
  const say = options.say;
  const metric = problem.metric;
  return new BestEffortSearch(evaluator, {
    nodeBudget: method.nodeBudget ?? DEFAULT_NODE_BUDGET,
    timeLimitMs: (method.timeLimit ?? DEFAULT_TIME_LIMIT_S) * 1000,
    random: options.random ?? searchRandom(spec),
    ...(say ? { progress: (p: BestEffortProgress) => say(progressLine(metric, p)) } : {}),
  });
}

/**
 * The search's stream for callers without a context's (the shard search, explore): keyed by
 * the seed alone, which is enough for a search (its draws are never released).
 */
export function searchRandom(spec: ReleaseSpec): Random {
  return keyedRandom(spec.seed, new Uint8Array(0), 'search');
}

function progressLine(metric: string, p: BestEffortProgress): string {
  const best = p.best === undefined ? 'none feasible yet' : `best ${metric} ${p.best.toPrecision(4)}`;
  const bound = Number.isFinite(p.lowerBound) ? `, the optimum is ≥ ${p.lowerBound.toPrecision(4)}` : '';
  return `best-effort search: ${thousands(p.nodesChecked)} nodes checked in ${(p.elapsedMs / 1000).toFixed(0)} s, ${best}${bound}`;
}

function withBound(outcome: BestEffortOutcome): SearchOutcome & Pick<SearchResult, 'bestEffort'> {
  const { lowerBound, stoppedBy, trajectory, ...rest } = outcome;
  return { ...rest, bestEffort: { lowerBound, stoppedBy, trajectory } };
}

/**
 * The search, yielding to the event loop between slices when it is best-effort (so that a
 * signal stops the run within a slice); otherwise the same as `search`.
 */
export async function searchAsync(
  prepared: Prepared,
  kernel: GroupingKernel,
  options: SearchOptions,
  time: MethodContext['time'] = (_, work) => work(),
): Promise<SearchResult> {
  if (!bestEffort(prepared)) return time('search', () => search(prepared, kernel, undefined, options));
  const evaluator = openSearch(prepared, kernel);
  try {
    const outcome = await bestEffortSearch(prepared, evaluator, options).runAsync(50, (w) =>
      time('search', w),
    );
    return { ...withBound(outcome), best: evaluator.complete(outcome.best), evaluator };
  } catch (e) {
    evaluator.dispose();
    throw e;
  }
}

/** The spec's strategy: the optimal search, or Samarati's k-minimal generalizations. */
export function search(
  prepared: Prepared,
  kernel: GroupingKernel,
  /** A node to take instead of searching (QI name → level): it must be feasible. */
  fixed?: Record<string, number>,
  options: SearchOptions = {},
): SearchResult {
  const evaluator = openSearch(prepared, kernel);
  const outcome: SearchOutcome & Pick<SearchResult, 'kMinimal' | 'bestEffort'> = fixed
    ? fixedNode(prepared, evaluator, fixed, options.origin ?? { kind: 'saved' })
    : bestEffort(prepared)
      ? withBound(bestEffortSearch(prepared, evaluator, options).run())
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
 * below k and the rows they hold, against the suppression limit), in the words of who gave the
 * node (`origin`).
 */
function fixedNode(
  prepared: Prepared,
  evaluator: NodeEvaluator,
  fixed: Record<string, number>,
  origin: NodeOrigin,
): SearchOutcome {
  const { qis, hierarchies, problem, spec } = prepared;
  const levels = qis.map((q, i) => {
    const level = Object.hasOwn(fixed, q.name) ? fixed[q.name] : undefined;
    const height = hierarchies[i]!.height;
    if (!(Number.isInteger(level) && level! >= 0 && level! <= height)) {
      evaluator.dispose();
      throw badLevel(origin, q.name, level, height);
    }
    return level!;
  });
  // One node: no staging node for later ones (cell suppression's descent, if any, stages again).
  evaluator.single = true;
  const best = evaluator.evaluate(problem.lattice.index(levels));
  evaluator.single = false;
  if (!best.feasible) {
    const k = requiredK(problem.models);
    let small = 0;
    let smallRows = 0;
    // (With an entity column, classes of fewer than k persons.)
    const counted = best.persons ?? best.sizes;
    for (let g = 0; g < best.groups; g++) {
      if (counted[g]! < k) {
        small++;
        smallRows += best.sizes[g]!;
      }
    }
    evaluator.dispose();
    if (origin.kind === 'dp') throw emptyDpRelease(origin, fixed, problem.rows);
    const what = problem.entity
      ? `${thousands(small)} classes of fewer than k=${k} persons (${thousands(best.suppressedPersons ?? 0)} persons)`
      : smallRows > problem.maxSuppressedRows
        ? `${thousands(small)} classes smaller than k=${k} (${thousands(smallRows)} rows)`
        : `the classes failing ${spec.privacy.map((m) => m.model).join(', ')}`;
    const limit = problem.entity
      ? `${thousands(problem.entity.maxSuppressedPersons)} persons with a suppressed row`
      : `${thousands(problem.maxSuppressedRows)} suppressed rows`;
    const node =
      origin.kind === 'option'
        ? `the node --node ${nodeText(fixed)}`
        : `the saved node ${JSON.stringify(fixed)}`;
    throw new NoSolutionError(
      'E_APPLY_INFEASIBLE',
      `${basename(spec.file)}: ${node} does not protect this table: ${what} would need suppressing, and the spec allows at most ${limit}`,
      origin.kind === 'option'
        ? 'choose a more generalized node (higher levels), allow more suppression in method.maxSuppression, or let `ppdp release` search'
        : 'release the new data with `ppdp release` (a new search), or allow more suppression in method.maxSuppression',
    );
  }
  return { best, nodesChecked: 1, strategy: 'applied' };
}

/** `sex=0,age=2`: a node as `--node` writes it. */
function nodeText(levels: Record<string, number>): string {
  return Object.entries(levels)
    .map(([q, l]) => `${q}=${l}`)
    .join(',');
}

/** A given node's level that the quasi-identifier's hierarchy does not have. */
function badLevel(origin: NodeOrigin, qi: string, level: number | undefined, height: number): PpdpError {
  switch (origin.kind) {
    case 'saved':
      return new SpecError(
        'E_APPLY_NODE',
        `the saved node has no valid level for quasi-identifier ${qi} (got ${level}, its hierarchy has levels 0–${height})`,
        'apply a release made with the same quasi-identifiers and hierarchies as the spec',
      );
    case 'option':
      return new PpdpError(
        'E_USAGE',
        `--node ${qi}=${level}: the hierarchy of ${qi} has levels 0–${height}`,
        `give ${qi} a level from 0 (its values as they are) to ${height} (the hierarchy's top)`,
      );
    case 'dp':
      return new SpecError(
        'E_SPEC_RANGE',
        `${origin.field}.levels.${qi} must be a level of the hierarchy of ${qi}, from 0 to ${height}, but found ${level}`,
        `give ${qi} a level from 0 (its values as they are) to ${height} (the hierarchy's top) in levels`,
      );
  }
}

/**
 * (ε, δ)-differential privacy at a node where every class of the sample holds fewer than k
 * rows: all would be removed, and an empty release is none. What helps is what makes classes of
 * k sampled rows: coarser levels, a search, a larger δ (a smaller k), more rows.
 */
function emptyDpRelease(
  origin: Extract<NodeOrigin, { kind: 'dp' }>,
  fixed: Record<string, number>,
  sampled: number,
): NoSolutionError {
  const { k } = origin;
  const node = origin.searched
    ? `the node its private search chose, ${JSON.stringify(fixed)},`
    : `its levels ${JSON.stringify(fixed)}`;
  const message =
    `${origin.field}: (ε, δ)-differential privacy releases only the classes of at least k = ${k} sampled rows, ` +
    `and at ${node} every class of the sample (${thousands(sampled)} rows drawn with probability β = ${Number(origin.beta.toPrecision(4))}) holds fewer: the release would be empty`;
  // Rows a class needs in the input to hold k sampled rows, on average.
  const needed = thousands(Math.ceil(k / origin.beta));
  const hint =
    sampled < k
      ? `the sample holds fewer than k rows, so no generalization can help: at these ε and δ a class needs about ${needed} input rows; release a larger table, or raise delta (a smaller k, a weaker guarantee)`
      : origin.searched
        ? `fix coarser levels in advance ("levels" instead of "searchBudget" and "steps": a class needs about ${needed} input rows), or raise delta (a smaller k, a weaker guarantee)`
        : `raise the levels (coarser generalizations make larger classes: a class needs about ${needed} input rows), let a private search choose them ("searchBudget" and "steps" instead of "levels"), or raise delta (a smaller k, a weaker guarantee)`;
  return new NoSolutionError('E_NO_SOLUTION', message, hint);
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
  // (With cell suppression, bits 1–7 hold how many attributes of claims.cells.order it loses.)
  /** Per distinct tuple its class at `node`, and per class its first tuple (not with cell suppression). */
  readonly tupleClasses?: { readonly of: Int32Array; readonly reps: Int32Array } | undefined;
  readonly report: BuiltRelease['report'];
  readonly claims: GeneralizationClaims;
}

export function searchStep(
  prepared: Prepared,
  kernel: GroupingKernel,
  time: MethodContext['time'],
  say: MethodContext['say'],
  fixed?: Record<string, number>,
  random?: Random,
  origin?: NodeOrigin,
): SearchStepResult {
  sayLattice(prepared, say);
  const outcome = time('search', () =>
    search(prepared, kernel, fixed, { say, ...(random ? { random } : {}), ...(origin ? { origin } : {}) }),
  );
  return afterSearch(prepared, outcome, time, say);
}

/** searchStep, yielding to the event loop during a best-effort search (signals stop it). */
export async function searchStepAsync(
  prepared: Prepared,
  kernel: GroupingKernel,
  time: MethodContext['time'],
  say: MethodContext['say'],
  random: Random,
): Promise<SearchStepResult> {
  sayLattice(prepared, say);
  return afterSearch(prepared, await searchAsync(prepared, kernel, { say, random }, time), time, say);
}

function sayLattice(prepared: Prepared, say: MethodContext['say']): void {
  const { problem, qis, table } = prepared;
  say(
    `${counted(table.rowCount, 'row')}, ${counted(qis.length, 'quasi-identifier')}, lattice of ${latticeNodes(problem.lattice.heights.map((h) => h + 1))}` +
      (bestEffort(prepared) ? ': best-effort search' : ''),
  );
}

function afterSearch(
  prepared: Prepared,
  outcome: SearchResult,
  time: MethodContext['time'],
  say: MethodContext['say'],
): SearchStepResult {
  const { problem, qis, tuples } = prepared;
  let { best, nodesChecked } = outcome;
  // Cell suppression: from the searched node down to the best node with cells suppressed; its
  // classes below k keep their rows and lose cells instead.
  const descent = suppressesCells(prepared)
    ? time('cells', () => cellDescent(prepared, outcome.evaluator, best, outcome.strategy === 'applied'))
    : undefined;
  if (descent) nodesChecked += descent.nodesChecked;
  const cells = descent?.cells;
  if (descent) best = cellNode(prepared, descent.node, descent.cells);
  const node = Object.fromEntries(qis.map((c, i) => [c.name, best.levels[i]!]));
  // The bottom node (the input's own classes) from the search's session: its classes are kept.
  // Its classes are the distinct QI combinations (the tuples also carry the sensitive values).
  const original = outcome.evaluator.inputClasses();
  say(
    `${thousands(original.groups)} distinct quasi-identifier combinations; ` +
      `chosen node ${JSON.stringify(node)} after checking ${thousands(nodesChecked)} of ${latticeNodes(problem.lattice.heights.map((h) => h + 1))}`,
  );
  const tupleDepth = descent && tupleDepths(descent.cells);
  const tupleSuppressed = new Uint8Array(tuples.counts.length);
  for (let t = 0; t < tupleSuppressed.length; t++) {
    tupleSuppressed[t] = best.suppressed[best.groupOf[t]!]! | (tupleDepth ? tupleDepth[t]! << 1 : 0);
  }
  const report = time('report', () => {
    const made = generalizationReport(prepared, { ...outcome, best, nodesChecked }, node, original);
    if (!cells || !made.generalization) return made;
    const { figures, section } = cellSuppressionReport(prepared, cells);
    // The search's optimality and bound are the row-suppression metric's: not the node's now.
    const { search: _s, lowerBound: _l, gap: _g, ...generalization } = made.generalization;
    return {
      ...made,
      generalization: { ...generalization, cellSuppression: figures },
      sections: [...(made.sections ?? []).filter((s) => s.title !== 'Lattice search'), section],
    };
  });
  outcome.evaluator.dispose();
  return {
    node,
    tupleSuppressed,
    tupleClasses: descent ? undefined : { of: best.groupOf, reps: best.reps.subarray(0, best.groups) },
    report,
    claims: claimsOf('generalization', {
      enforced: {
        k: requiredK(problem.models),
        maxSuppressedRows: problem.maxSuppressedRows,
        ...(problem.entity ? { maxSuppressedPersons: problem.entity.maxSuppressedPersons } : {}),
      },
      node,
      suppressedRows: best.suppressedRows,
      classes: best.retainedClasses,
      minClassSize: best.minClassSize,
      ...(problem.entity
        ? {
            entity: {
              suppressedPersons: best.suppressedPersons ?? 0,
              minClassPersons: best.minClassPersons ?? 0,
            },
          }
        : {}),
      ...(cells
        ? {
            cells: {
              order: cells.order.map((i) => qis[i]!.name),
              perAttribute: cellSuppressionReport(prepared, cells).figures.perAttribute,
            },
          }
        : {}),
    }),
  };
}
