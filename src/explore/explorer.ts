/**
 * The explorer's data: the frontier's distinct solutions and, for full-domain generalization,
 * the lattice under the spec's own parameters, each node judged optimal / feasible /
 * infeasible / not checked, with what the page shows of any choice (utility per attribute,
 * class sizes and risk, disclosure per sensitive attribute, the first released rows, and the
 * spec change or command that releases it). Everything is computed here and embedded in the
 * page, so it works offline from the file.
 *
 * Privacy: the page embeds released rows of ONE choice only — the spec's own (the release
 * `ppdp release` publishes with the spec as it is): its first PREVIEW_ROWS rows, as the
 * release writes them (generalized labels, `*` for masked cells), in its order. Any other
 * choice shows them only if its own first rows are the very same cells, and otherwise shows
 * none. Why one: previews of the same input rows at two nodes can be joined (by position, by
 * an unchanged column, by labels that fit together) and their intersection is finer than
 * either release (on Adult every preview row once came back at level 0); independently
 * drawn samples per choice still share rows that an unchanged column links. A page whose only
 * rows are a subset of one feasible release holds nothing finer than that release, whatever
 * an attacker combines (test/explore/page-leak.test.ts).
 */
import { basename } from 'node:path';
import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import type { HistogramBin } from '../contracts/report.ts';
import { DEFAULT_MAX_LATTICE_NODES } from '../data/limits.ts';
import type { EncodedTable } from '../data/table.ts';
import { NoSolutionError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import type { NodeResult } from '../methods/generalization/evaluate.ts';
import { openSearch, respecify } from '../methods/generalization/index.ts';
import { personClassHistograms, personTable } from '../methods/generalization/person-histograms.ts';
import type { Prepared } from '../methods/generalization/prepared.ts';
import { optimalSearch } from '../methods/generalization/search.ts';
import type { MethodReport } from '../methods/method.ts';
import { attributeT, type DisclosureMeasures, disclosureMeasures } from '../metrics/disclosure.ts';
import { classSizeHistogram, prosecutorFacts, reidentificationRisk } from '../metrics/privacy.ts';
import { smallestPassingClass } from '../models/index.ts';
import { equalEmd, hierarchicalEmd, orderedEmd } from '../models/t-closeness.ts';
import { streams } from '../pipeline/release.ts';
import { isReleasedType, type ReleaseSpec } from '../release-spec/spec.ts';
import {
  exploreFrontier,
  type Frontier,
  type FrontierPoint,
  type PointRun,
  specValue,
  specWith,
  type Vary,
} from './frontier.ts';
import { type SearchView, searchView } from './search.ts';

/** Released rows shown per choice. */
export const PREVIEW_ROWS = 50;
/** Lattices up to this many nodes are evaluated whole; of larger ones, the nodes the search checked. */
export const MAX_EVALUATED_NODES = 5000;
/** Lattices up to this many nodes are drawn (positions are computed in the page). */
export const MAX_DRAWN_NODES = 100_000;

export type NodeStatus = 'optimal' | 'feasible' | 'infeasible' | 'unchecked';

/** One choice the publisher may pick: a frontier solution or a lattice node. */
export interface Choice {
  readonly kind: 'solution' | 'node';
  /** The parameters it was judged under (varied ones and the spec's own). */
  readonly params: Record<string, number>;
  /** Frontier solutions: the values of the first parameter it spans, per second-parameter value. */
  readonly spans?: string;
  /** Generalization: the node's levels in QI order. */
  readonly levels?: number[];
  readonly status?: NodeStatus;
  readonly feasible: boolean;
  readonly reason?: string;
  readonly k?: number;
  readonly classes?: number;
  readonly suppressedRows?: number;
  readonly releasedRows?: number;
  readonly utility?: Record<string, number>;
  readonly objective?: { name: string; value: number };
  readonly risk?: { name: string; value: number };
  readonly prosecutor?: { max: number; mean: number; shareAbove: number; threshold: number };
  readonly ncpByAttribute?: Record<string, number>;
  readonly classSizes?: HistogramBin[];
  readonly disclosure?: {
    attribute: string;
    distinctL: number | null;
    entropyL: number | null;
    t: number;
    /** The distance t is measured with: the model's on the attribute, else the default rule's. */
    tDistance: string;
    delta: number;
    /** With an entity column: the figures count persons (docs/definitions.md, "Several rows per person"). */
    over?: 'persons';
  }[];
  /** True when the page's one embedded preview (`ExplorerData.preview`) is this choice's first rows. */
  readonly preview?: boolean;
  /** The spec's keys to change (JSON) and the command that releases the choice. */
  readonly specChange?: Record<string, unknown>;
  readonly command?: string;
}

export interface ExplorerData {
  readonly spec: string;
  readonly method: string;
  readonly rows: number;
  readonly seed: number;
  readonly suppressed?: 'mask' | 'remove';
  readonly parameters: { name: string; values: number[]; spec?: number }[];
  /** Per frontier point: its parameters and its choice (-1: no solution). */
  readonly points: { values: Record<string, number>; feasible: boolean; reason?: string; choice: number }[];
  readonly choices: Choice[];
  readonly lattice?: {
    readonly qis: string[];
    readonly heights: number[];
    readonly size: number;
    /** Every node evaluated, or (larger lattices) those the search checked and the chosen ones. */
    readonly evaluated: 'all' | 'checked';
    /** Node id → choice index (-1: not checked). Ids in mixed radix, the first QI slowest. */
    readonly choiceOf: number[];
    readonly drawn: boolean;
  };
  /**
   * The first released rows of one choice, the spec's own (absent when it has no solution):
   * the cells as the release writes them, in its order, and that choice's index. No other
   * rows are embedded.
   */
  readonly preview?: Preview & { readonly choice: number };
  /** The solutions the frontier's charts draw, first parameter along x. */
  readonly frontier: Frontier;
  /** The spec's own run, when it searched best-effort: its trajectory and how to continue it. */
  readonly search?: SearchView;
}

export interface ExploreOptions {
  /** The spec's path as the user gave it (for the commands shown). */
  readonly specPath: string;
  readonly kernel: GroupingKernel;
  readonly progress?: (line: string) => void;
  /** Evaluate the lattice (generalization; default true). */
  readonly lattice?: boolean;
  /** Lattices up to this many nodes are evaluated whole (default MAX_EVALUATED_NODES). */
  readonly maxEvaluatedNodes?: number;
  /** Releases per value of a spec that draws a secret sample (default DEFAULT_REPEATS, src/explore/repeats.ts). */
  readonly repeats?: number;
}

/** Sweeps the frontier, evaluates the lattice, and gathers every choice's details. */
export function explore(
  spec: ReleaseSpec,
  table: EncodedTable,
  varies: readonly Vary[],
  options: ExploreOptions,
): ExplorerData {
  const say = options.progress ?? (() => {});
  const previews = new PreviewBuilder(spec, table);
  /** Choice → its first released rows, of which at most one set is embedded. */
  const candidates = new Map<number, Preview>();
  const runs = new Map<number, PointRun>();
  let prepared: Prepared | undefined;
  const frontier = exploreFrontier(
    spec,
    table,
    varies,
    options.kernel,
    say,
    (i, run, p) => {
      runs.set(i, run);
      prepared = p;
    },
    options.repeats,
  );
  const choices: Choice[] = [];
  const generalizing = spec.method.name === 'generalization';
  const qiNames = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);

  // Frontier points with the same outcome are one solution, listed with the values it spans.
  const byOutcome = new Map<string, number>();
  const pointChoice = frontier.points.map((p, i) => {
    const run = runs.get(i);
    if (!p.feasible || !run) return -1;
    const key = JSON.stringify([
      p.node,
      p.suppressedRows,
      p.classes,
      p.kAchieved,
      p.objective?.value,
      generalizing ? undefined : p.values,
    ]);
    const known = byOutcome.get(key);
    if (known !== undefined) return known;
    byOutcome.set(key, choices.length);
    const levels = p.node ? qiNames.map((q) => p.node![q]!) : undefined;
    choices.push({
      kind: 'solution',
      params: allParams(run.spec, varies),
      ...(levels ? { levels } : {}),
      ...choiceFacts(run.report, p),
      specChange: specChange(spec, varies, p.values),
      command: `ppdp release ${options.specPath} --out out/release`,
    });
    const rows = run.tupleSuppressed
      ? previews.generalized(prepared!, levels!, (t) => run.tupleSuppressed![t] === 1, run.spec)
      : previews.fromCsv(run.files);
    if (rows) candidates.set(choices.length - 1, rows);
    return choices.length - 1;
  });
  for (const c of byOutcome.values())
    choices[c] = { ...choices[c]!, spans: spanText(frontier, pointChoice, c) };

  // The spec's own choice: its frontier solution when the sweep ran the spec's own values.
  const ownPoint = frontier.points.findIndex((p) =>
    Object.entries(p.values).every(([name, v]) => specValue(spec, name) === v),
  );
  let own = ownPoint >= 0 ? pointChoice[ownPoint]! : -1;
  // Best-effort or not, every run searched the same lattice the same way: one run tells.
  const search = [...runs.values()].some((r) => r.report.generalization?.trajectory)
    ? ownSearch(spec, table, varies, options, ownPoint >= 0 ? runs.get(ownPoint) : undefined)
    : undefined;
  // A lattice past what the optimal search enumerates is past what the page can list.
  const listable =
    !prepared || prepared.problem.lattice.size <= (spec.limits?.maxLatticeNodes ?? DEFAULT_MAX_LATTICE_NODES);
  if (generalizing && prepared && !listable && options.lattice !== false)
    say(`the lattice (${prepared.problem.lattice.size} nodes) is past what can be listed: left out`);
  let lattice: ExplorerData['lattice'];
  if (generalizing && prepared && listable && options.lattice !== false) {
    lattice = latticeChoices(
      respecify(prepared, spec),
      options,
      choices,
      (c, rows) => candidates.set(c, rows),
      previews,
      frontier,
      pointChoice,
      say,
    );
    // Else the lattice's optimum: the search a release runs, under the spec's own parameters.
    if (own < 0) own = choices.findIndex((c) => c.status === 'optimal');
  }
  // One preview embedded; a choice shows it only when its own first rows are those cells.
  const preview = own >= 0 ? candidates.get(own) : undefined;
  if (preview) {
    const same = JSON.stringify([preview.rows, preview.masked]);
    for (const [c, rows] of candidates)
      if (JSON.stringify([rows.rows, rows.masked]) === same) choices[c] = { ...choices[c]!, preview: true };
  }
  return {
    spec: basename(spec.file),
    method: spec.method.name,
    rows: table.rowCount,
    seed: spec.seed,
    ...(spec.method.name === 'generalization' ? { suppressed: spec.method.suppressed } : {}),
    parameters: varies.map((v) => {
      const own = specValue(spec, v.parameter);
      return { name: v.parameter, values: v.values, ...(own !== undefined ? { spec: own } : {}) };
    }),
    points: frontier.points.map((p, i) => ({
      values: p.values,
      feasible: p.feasible,
      ...(p.reason ? { reason: p.reason } : {}),
      choice: pointChoice[i]!,
    })),
    choices,
    ...(lattice ? { lattice } : {}),
    ...(preview ? { preview: { ...preview, choice: own } } : {}),
    frontier,
    ...(search ? { search } : {}),
  };
}

/**
 * The spec's own best-effort search, from its frontier run when the sweep ran the spec's own
 * values, else from a run of its own (undefined: no solution).
 */
function ownSearch(
  spec: ReleaseSpec,
  table: EncodedTable,
  varies: readonly Vary[],
  options: ExploreOptions,
  run: PointRun | undefined,
): SearchView | undefined {
  if (spec.method.name !== 'generalization') return undefined;
  let report = run?.report;
  if (!report) {
    try {
      exploreFrontier(
        spec,
        table,
        [],
        options.kernel,
        () => {},
        (_, r) => {
          report = r.report;
        },
      );
    } catch (e) {
      if (!(e instanceof NoSolutionError)) throw e;
    }
  }
  return report ? searchView(spec, report, varies, options.specPath) : undefined;
}

/** The varied parameters' values in a spec, and the spec's own k where it has one. */
function allParams(spec: ReleaseSpec, varies: readonly Vary[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const name of ['k', ...varies.map((v) => v.parameter)]) {
    const v = specValue(spec, name);
    if (v !== undefined) out[name] = v;
  }
  return out;
}

/** "k = 6–10" per value of the second parameter, for the points of one solution. */
function spanText(frontier: Frontier, pointChoice: number[], c: number): string {
  const [first, second] = frontier.parameters;
  const groups = new Map<string, number[]>();
  frontier.points.forEach((p, i) => {
    if (pointChoice[i] !== c) return;
    const key = second === undefined ? '' : `${second} = ${p.values[second]}`;
    groups.set(key, [...(groups.get(key) ?? []), p.values[first!]!]);
  });
  const all = frontier.points.map((p) => p.values[first!]!);
  const order = [...new Set(all)];
  return [...groups]
    .map(([key, vs]) => {
      // Consecutive values of the sweep as one range.
      const runs: number[][] = [];
      for (const v of vs) {
        const last = runs.at(-1);
        if (last && order.indexOf(v) === order.indexOf(last.at(-1)!) + 1) last.push(v);
        else runs.push([v]);
      }
      const text = runs.map((r) => (r.length === 1 ? `${r[0]}` : `${r[0]}–${r.at(-1)}`)).join(', ');
      return `${first} = ${text}${key ? ` (${key})` : ''}`;
    })
    .join('; ');
}

/** The spec's keys that change for a point: its privacy list and/or method. */
function specChange(spec: ReleaseSpec, varies: readonly Vary[], values: Record<string, number>) {
  const changed = Object.entries(values).reduce((s, [p, v]) => specWith(s, p, v), spec);
  const out: Record<string, unknown> = {};
  if (varies.some((v) => v.parameter !== 'maxSuppression')) out['privacy'] = changed.privacy;
  if (varies.some((v) => v.parameter === 'maxSuppression')) {
    const m = changed.method as { maxSuppression: number };
    out['method'] = { maxSuppression: m.maxSuppression };
  }
  return out;
}

/** A choice's figures from a method report. */
function choiceFacts(report: MethodReport, point?: FrontierPoint): Omit<Choice, 'kind' | 'params'> {
  const { privacy, rows, utility } = report;
  const numbers = Object.fromEntries(
    Object.entries(utility).filter(
      (e): e is [string, number] => typeof e[1] === 'number' && e[0] !== 'value' && Number.isFinite(e[1]),
    ),
  );
  const disclosure = (Object.values(privacy.disclosure ?? {}) as DisclosureMeasures[])
    .filter((d) => d?.release)
    .map((d) => {
      const t = attributeT(d.attribute, d, privacy.models)!;
      return {
        attribute: d.attribute,
        distinctL: d.release.distinctL,
        entropyL: d.release.entropyL,
        t: t.t,
        tDistance: t.distance,
        delta: d.release.delta,
        ...(d.over ? { over: d.over } : {}),
      };
    });
  return {
    feasible: true,
    ...(privacy.k !== undefined ? { k: privacy.k } : {}),
    ...(privacy.classes !== undefined ? { classes: privacy.classes } : {}),
    suppressedRows: rows.suppressed,
    releasedRows: rows.released,
    utility: numbers,
    objective: { name: utility.metric, value: utility.value },
    ...(point?.risk ? { risk: point.risk } : {}),
    ...(privacy.prosecutorRisk ? { prosecutor: privacy.prosecutorRisk } : {}),
    ...(report.generalization?.ncpByAttribute
      ? { ncpByAttribute: report.generalization.ncpByAttribute }
      : {}),
    ...(privacy.ecSizeHistogram ? { classSizes: privacy.ecSizeHistogram } : {}),
    ...(disclosure.length > 0 ? { disclosure } : {}),
  };
}

/**
 * The lattice under the spec's own parameters: every node evaluated when it is small enough,
 * else the nodes the spec's own search checked; each evaluated node becomes a choice.
 */
function latticeChoices(
  prepared: Prepared,
  options: ExploreOptions,
  choices: Choice[],
  candidate: (choice: number, rows: Preview) => void,
  previews: PreviewBuilder,
  frontier: Frontier,
  pointChoice: number[],
  say: (line: string) => void,
): ExplorerData['lattice'] {
  const { problem, qis } = prepared;
  const { lattice } = problem;
  const qiNames = qis.map((q) => q.name);
  const evaluator = openSearch(prepared, options.kernel);
  try {
    // The spec's own optimum: the search a release runs.
    const own = frontier.points.findIndex((p) =>
      Object.entries(p.values).every(([name, v]) => specValue(prepared.spec, name) === v),
    );
    let optimal = -1;
    const ownChoice = own >= 0 ? pointChoice[own]! : -1;
    if (ownChoice >= 0) optimal = lattice.index(choices[ownChoice]!.levels!);
    else {
      const run = exploreOwn(prepared, options.kernel);
      if (run) optimal = lattice.index(qiNames.map((q) => run[q]!));
    }
    const ids = nodesToEvaluate(
      prepared,
      options.kernel,
      [
        ...(optimal >= 0 ? [optimal] : []),
        ...choices.filter((c) => c.levels).map((c) => lattice.index(c.levels!)),
      ],
      options.maxEvaluatedNodes ?? MAX_EVALUATED_NODES,
    );
    say(`evaluating ${ids.length} of ${lattice.size} lattice nodes`);
    const choiceOf = new Array<number>(lattice.size).fill(-1);
    const k = smallestPassingClass(problem.models);
    const params = allParams(prepared.spec, []);
    for (const id of ids) {
      const r = evaluator.evaluate(id);
      const levels = lattice.levels(id);
      const status: NodeStatus = id === optimal ? 'optimal' : r.feasible ? 'feasible' : 'infeasible';
      choiceOf[id] = choices.length;
      choices.push(
        r.feasible
          ? feasibleNode(prepared, r, levels, status, params, options)
          : infeasibleNode(
              r,
              k,
              problem.entity?.maxSuppressedPersons ?? problem.maxSuppressedRows,
              levels,
              params,
            ),
      );
      // The rows of the node a preview may be embedded for: the optimum (the spec's own choice).
      if (r.feasible && id === optimal) {
        const groupOf = r.groupOf;
        candidate(
          choices.length - 1,
          previews.generalized(prepared, levels, (t) => r.suppressed[groupOf[t]!] === 1, prepared.spec),
        );
      }
    }
    return {
      qis: qiNames,
      heights: [...lattice.heights],
      size: lattice.size,
      evaluated: ids.length === lattice.size ? 'all' : 'checked',
      choiceOf,
      drawn: lattice.size <= MAX_DRAWN_NODES,
    };
  } finally {
    evaluator.dispose();
  }
}

/** The spec's own optimal node when the sweep did not run the spec's own values (undefined: none). */
function exploreOwn(prepared: Prepared, kernel: GroupingKernel): Record<string, number> | undefined {
  try {
    const f = exploreFrontier(prepared.spec, prepared.table, [], kernel);
    return f.points[0]?.node;
  } catch {
    return undefined;
  }
}

/**
 * Every node of a small lattice. Of a larger one, the nodes the spec's own optimal search
 * checked (its evaluator's calls, recorded), for k-minimal the chosen nodes and their neighbours; at most
 * `max`, the chosen ones first.
 */
function nodesToEvaluate(
  prepared: Prepared,
  kernel: GroupingKernel,
  chosen: number[],
  max: number,
): number[] {
  const { lattice } = prepared.problem;
  if (lattice.size <= max) return Array.from({ length: lattice.size }, (_, i) => i);
  const ids = new Set<number>(chosen);
  if (prepared.method.strategy === 'optimal') {
    const evaluator = openSearch(prepared, kernel);
    const record = evaluator as unknown as Record<string, (id: number) => unknown>;
    for (const name of ['evaluate', 'rowsBelowK', 'groupingBound']) {
      const call = record[name]!.bind(evaluator);
      record[name] = (id: number) => {
        ids.add(id);
        return call(id);
      };
    }
    try {
      optimalSearch(evaluator);
    } catch (e) {
      if (!(e instanceof NoSolutionError)) throw e;
    } finally {
      evaluator.dispose();
    }
  } else {
    for (const id of chosen)
      for (const n of [...lattice.predecessors(id), ...lattice.successors(id)]) ids.add(n);
  }
  return [...ids].slice(0, max).sort((a, b) => a - b);
}

/** A node's t for an attribute: under the distance of the spec's t-closeness model on it, else the default rule's. */
function nodeT(
  spec: ReleaseSpec,
  sa: Prepared['sensitive'][number]['attribute'],
  classes: { groups: number; width: number; counts: Int32Array | Float64Array; keep: (g: number) => boolean },
  d: DisclosureMeasures,
): { t: number; tDistance: string } {
  const model = spec.privacy.find(
    (m) => m.model === T_CLOSENESS.name && 'attribute' in m && m.attribute === sa.name,
  ) as { distance?: string } | undefined;
  const distance = model?.distance;
  if (!distance || distance === d.tDistance) return { t: d.release.t, tDistance: d.tDistance };
  const emd =
    distance === 'hierarchical' && sa.hierarchy
      ? hierarchicalEmd(sa.distribution, sa.hierarchy)
      : distance === 'ordered'
        ? orderedEmd(sa.distribution, sa.order)
        : equalEmd(sa.distribution);
  let t = 0;
  for (let g = 0; g < classes.groups; g++) {
    if (!classes.keep(g)) continue;
    const h = classes.counts.subarray(g * classes.width, (g + 1) * classes.width);
    let size = 0;
    for (const c of h) size += c;
    if (size > 0) t = Math.max(t, emd(h, size));
  }
  return { t, tDistance: distance };
}

function feasibleNode(
  prepared: Prepared,
  r: NodeResult,
  levels: number[],
  status: NodeStatus,
  params: Record<string, number>,
  options: ExploreOptions,
): Choice {
  const { problem, qis, tuples, table, method, sensitive } = prepared;
  // What generalizationReport gives a release, measured here without its per-call passes
  // over the input's own classes.
  // Entropy (a pass over every tuple per node) only where it is the spec's metric: r has that.
  const values = { ...problem.metrics.values(levels, r, 'ncp'), [method.metric]: r.value };
  const ncp = problem.metrics.ncpByAttribute(levels, r);
  // With an entity column, k and the risk count persons (as the release's report does).
  const retained = Array.from(r.persons ?? r.sizes).filter((_, g) => !r.suppressed[g]);
  const risk = prosecutorFacts(reidentificationRisk(retained, prepared.spec.report.riskThreshold, ''));
  const groupOf = r.groupOf;
  // With an entity column, over persons (as the models count them and the release's report shows).
  const entity = prepared.entity;
  const disclosure = sensitive.map(({ attribute, values: codes }) => {
    const width = attribute.column.dictionary.length;
    const sa = entity
      ? { ...attribute, distribution: personTable({ ...prepared, entity }, codes, width) }
      : attribute;
    let counts: Int32Array | Float64Array;
    if (entity) counts = personClassHistograms({ ...prepared, entity }, groupOf, r.groups, codes, width);
    else {
      counts = new Int32Array(r.groups * width);
      for (let t = 0; t < codes.length; t++) counts[groupOf[t]! * width + codes[t]!]! += tuples.counts[t]!;
    }
    const keep = (g: number) => !r.suppressed[g];
    // The input's own classes only feed the accuracy baseline, which the page does not show.
    const none = { groups: 0, width, counts: counts.subarray(0, 0), keep };
    const d = disclosureMeasures(
      sa.name,
      { groups: r.groups, width, counts, keep },
      none,
      sa.distribution,
      sa.column.dictionary,
      entity !== undefined,
    );
    return {
      attribute: sa.name,
      distinctL: d.release.distinctL,
      entropyL: d.release.entropyL,
      ...nodeT(prepared.spec, sa, { groups: r.groups, width, counts, keep }, d),
      delta: d.release.delta,
      ...(d.over ? { over: d.over } : {}),
    };
  });
  const nodeArg = qis.map((q, i) => `${q.name}=${levels[i]}`).join(',');
  return {
    kind: 'node',
    params,
    levels,
    status,
    feasible: true,
    k: r.minClassPersons ?? r.minClassSize,
    classes: r.retainedClasses,
    suppressedRows: r.suppressedRows,
    releasedRows: method.suppressed === 'mask' ? table.rowCount : table.rowCount - r.suppressedRows,
    utility: Object.fromEntries(Object.entries(values).filter(([, v]) => Number.isFinite(v))),
    objective: { name: method.metric, value: values[method.metric] },
    risk: { name: 'max prosecutor risk', value: risk.max },
    prosecutor: risk,
    ncpByAttribute: Object.fromEntries(qis.map((q, i) => [q.name, ncp[i]!])),
    // With an entity column sized in persons, the classes' rows beside (as the release's report).
    classSizes: r.persons
      ? classSizeHistogram(
          retained,
          Array.from(r.sizes).filter((_, g) => !r.suppressed[g]),
        )
      : classSizeHistogram(retained),
    ...(disclosure.length > 0 ? { disclosure } : {}),
    command:
      status === 'optimal'
        ? `ppdp release ${options.specPath} --out out/release`
        : `ppdp apply --node ${nodeArg} ${options.specPath} --out out/node-${levels.join('-')}`,
  };
}

/** An infeasible node: the rows in classes too small to keep, against the suppression limit. */
function infeasibleNode(
  r: NodeResult,
  k: number,
  limit: number,
  levels: number[],
  params: Record<string, number>,
): Choice {
  let below = 0;
  let smallest = Number.POSITIVE_INFINITY;
  for (let g = 0; g < r.groups; g++) {
    const size = r.sizes[g]!;
    smallest = Math.min(smallest, r.persons?.[g] ?? size);
    if ((r.persons?.[g] ?? size) < k) below += size;
  }
  // With an entity column, k and the limit count persons (`limit` is then in persons).
  const reason = r.persons
    ? `${r.suppressedPersons} persons have rows in classes of fewer than ${k} persons; at most ${limit} may be suppressed`
    : below > limit
      ? `${below} rows are in classes smaller than ${k}; at most ${limit} may be suppressed`
      : `the classes failing the privacy models hold more than the ${limit} rows that may be suppressed`;
  return {
    kind: 'node',
    params,
    levels,
    status: 'infeasible',
    feasible: false,
    reason,
    classes: r.groups,
    k: smallest,
  };
}

/** A choice's first released rows: the cells as its release writes them, in its order. */
export interface Preview {
  readonly columns: string[];
  /** Per column: whether it is a quasi-identifier (generalized, `*` where masked). */
  readonly quasiIdentifying: boolean[];
  readonly rows: string[][];
  /** Rows shown masked (their quasi-identifiers `*`). */
  readonly masked: number[];
}

/** The first released rows of a choice, as its release would write them. */
class PreviewBuilder {
  private readonly permutations = new Map<number, Int32Array>();

  constructor(
    private readonly spec: ReleaseSpec,
    private readonly table: EncodedTable,
  ) {}

  private shuffle(n: number): Int32Array {
    let p = this.permutations.get(n);
    if (!p) {
      // The release's own shuffle (applyGeneralization): the same keyed stream, one per length.
      p = streams(this.spec, this.table)('shuffle').permutation(n);
      this.permutations.set(n, p);
    }
    return p;
  }

  /** The first released rows of a generalization choice, as applyGeneralization orders them. */
  generalized(
    prepared: Prepared,
    levels: number[],
    /** Whether a distinct tuple's class is suppressed. */
    suppressedTuple: (t: number) => boolean,
    spec: ReleaseSpec,
  ): Preview {
    const { table, tuples, qis, hierarchies } = prepared;
    const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
    const released = table.columns.filter((c) => isReleasedType(typeOf.get(c.name)));
    const suppressedRow = (r: number) => suppressedTuple(tuples.rowToTuple[r]!);
    const remove = spec.method.name === 'generalization' && spec.method.suppressed === 'remove';
    let rows: number[];
    if (remove) {
      const kept: number[] = [];
      for (let r = 0; r < table.rowCount; r++) if (!suppressedRow(r)) kept.push(r);
      const p = this.shuffle(kept.length);
      rows = Array.from(p.subarray(0, PREVIEW_ROWS), (j) => kept[j]!);
    } else rows = Array.from(this.shuffle(table.rowCount).subarray(0, PREVIEW_ROWS));
    const qiOf = released.map((c) => qis.findIndex((q) => q.name === c.name));
    const masked: number[] = [];
    const cells = rows.map((r, j) => {
      const hidden = suppressedRow(r);
      if (hidden) masked.push(j);
      return released.map((col, c) => {
        const i = qiOf[c]!;
        if (i < 0) return col.dictionary[col.codes[r]!]!;
        if (hidden) return '*';
        const h = hierarchies[i]!;
        return h.labels[levels[i]!]![h.levelTables[levels[i]!]![col.codes[r]!]!]!;
      });
    });
    return {
      columns: released.map((c) => c.name),
      quasiIdentifying: qiOf.map((i) => i >= 0),
      rows: cells,
      masked,
    };
  }

  /** The first data rows of a method's data.csv built in memory. */
  fromCsv(files: PointRun['files']): Preview | undefined {
    const csv = files?.find((f) => f.name === 'data.csv');
    if (!csv) return undefined;
    const text = typeof csv.content === 'string' ? csv.content : Buffer.from(csv.content).toString('utf8');
    const lines = parseCsvHead(text, this.table.delimiter, PREVIEW_ROWS + 1);
    const columns = lines[0] ?? [];
    const qi = new Set(this.spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name));
    return { columns, quasiIdentifying: columns.map((c) => qi.has(c)), rows: lines.slice(1), masked: [] };
  }
}

/** The first `count` records of a CSV text (quotes honoured). */
export function parseCsvHead(text: string, delimiter: string, count: number): string[][] {
  const out: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length && out.length < count; i++) {
    const ch = text[i]!;
    if (quoted) {
      if (ch === '"' && text[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (ch === '"') quoted = false;
      else cell += ch;
    } else if (ch === '"' && cell === '') quoted = true;
    else if (ch === delimiter) {
      row.push(cell);
      cell = '';
    } else if (ch === '\n' || ch === '\r') {
      if (ch === '\r' && text[i + 1] === '\n') i++;
      row.push(cell);
      out.push(row);
      row = [];
      cell = '';
    } else cell += ch;
  }
  if ((cell !== '' || row.length > 0) && out.length < count) out.push([...row, cell]);
  return out;
}
