/**
 * The explorer's data: the frontier's distinct solutions and, for full-domain generalization,
 * the lattice under the spec's own parameters, each node judged optimal / feasible /
 * infeasible / not checked, with what the page shows of any choice (utility per attribute,
 * class sizes and risk, disclosure per sensitive attribute, the first released rows, and the
 * spec change or command that releases it). Everything is computed here and embedded in the
 * page, so it works offline from the file.
 *
 * Privacy: the preview holds released rows only — generalized labels of rows a feasible choice
 * releases, `*` for masked ones — and a label is embedded only when some choice's preview
 * shows it: no input value the choices would not publish reaches the page.
 */
import { basename } from 'node:path';
import type { EncodedTable } from '../data/table.ts';
import { NoSolutionError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import type { NodeResult } from '../methods/generalization/evaluate.ts';
import { openSearch, type Prepared, respecify } from '../methods/generalization/index.ts';
import { optimalSearch } from '../methods/generalization/search.ts';
import type { MethodReport } from '../methods/method.ts';
import { type DisclosureMeasures, disclosureMeasures } from '../metrics/disclosure.ts';
import { classSizeHistogram, prosecutorFacts, reidentificationRisk } from '../metrics/privacy.ts';
import { smallestPassingClass } from '../models/index.ts';
import { streams } from '../pipeline/release.ts';
import type { HistogramBin } from '../report/types.ts';
import type { ReleaseSpec } from '../spec/spec.ts';
import {
  exploreFrontier,
  type Frontier,
  type FrontierPoint,
  type PointRun,
  specValue,
  specWith,
  type Vary,
} from './frontier.ts';

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
    delta: number;
  }[];
  /** Positions into `preview.orders[order]`; `masked` lists the positions shown as `*`. */
  readonly preview?: { order: number; masked: number[] };
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
  /** Released rows of the previews: columns, rows (QI cells per level), and each choice's order. */
  readonly preview: {
    readonly columns: string[];
    /** Per column: true when its cell holds a label per level (a generalized QI). */
    readonly leveled: boolean[];
    readonly rows: (string | (string | null)[])[][];
    readonly orders: number[][];
  };
  /** The solutions the frontier's charts draw, first parameter along x. */
  readonly frontier: Frontier;
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
  const runs = new Map<number, PointRun>();
  let prepared: Prepared | undefined;
  const frontier = exploreFrontier(spec, table, varies, options.kernel, say, (i, run, p) => {
    runs.set(i, run);
    prepared = p;
  });
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
      preview: run.tupleSuppressed
        ? previews.generalized(prepared!, levels!, (t) => run.tupleSuppressed![t] === 1, run.spec)
        : previews.fromCsv(run.files),
      specChange: specChange(spec, varies, p.values),
      command: `ppdp release ${options.specPath} --out out/release`,
    });
    return choices.length - 1;
  });
  for (const c of byOutcome.values())
    choices[c] = { ...choices[c]!, spans: spanText(frontier, pointChoice, c) };

  let lattice: ExplorerData['lattice'];
  if (generalizing && prepared && options.lattice !== false) {
    lattice = latticeChoices(
      respecify(prepared, spec),
      options,
      choices,
      previews,
      frontier,
      pointChoice,
      say,
    );
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
    preview: previews.data(),
    frontier,
  };
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
    .map((d) => ({
      attribute: d.attribute,
      distinctL: d.release.distinctL,
      entropyL: d.release.entropyL,
      t: d.release.t,
      delta: d.release.delta,
    }));
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
    if (own >= 0 && pointChoice[own]! >= 0) optimal = lattice.index(choices[pointChoice[own]!]!.levels!);
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
          ? feasibleNode(prepared, r, levels, status, params, previews, options)
          : infeasibleNode(r, k, problem.maxSuppressedRows, levels, params),
      );
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

function feasibleNode(
  prepared: Prepared,
  r: NodeResult,
  levels: number[],
  status: NodeStatus,
  params: Record<string, number>,
  previews: PreviewBuilder,
  options: ExploreOptions,
): Choice {
  const { problem, qis, tuples, table, method, sensitive } = prepared;
  // What generalizationReport gives a release, measured here without its per-call passes
  // over the input's own classes.
  // Entropy (a pass over every tuple per node) only where it is the spec's metric: r has that.
  const values = { ...problem.metrics.values(levels, r, 'ncp'), [method.metric]: r.value };
  const ncp = problem.metrics.ncpByAttribute(levels, r);
  const retained = Array.from(r.sizes).filter((_, g) => !r.suppressed[g]);
  const risk = prosecutorFacts(reidentificationRisk(retained, prepared.spec.report.riskThreshold, ''));
  const groupOf = r.groupOf;
  const disclosure = sensitive.map(({ attribute: sa, values: codes }) => {
    const width = sa.column.dictionary.length;
    const counts = new Int32Array(r.groups * width);
    for (let t = 0; t < codes.length; t++) counts[groupOf[t]! * width + codes[t]!]! += tuples.counts[t]!;
    const keep = (g: number) => !r.suppressed[g];
    // The input's own classes only feed the accuracy baseline, which the page does not show.
    const none = { groups: 0, width, counts: counts.subarray(0, 0), keep };
    const d = disclosureMeasures(sa.name, { groups: r.groups, width, counts, keep }, none, sa.distribution);
    return {
      attribute: sa.name,
      distinctL: d.release.distinctL,
      entropyL: d.release.entropyL,
      t: d.release.t,
      delta: d.release.delta,
    };
  });
  const nodeArg = qis.map((q, i) => `${q.name}=${levels[i]}`).join(',');
  return {
    kind: 'node',
    params,
    levels,
    status,
    feasible: true,
    k: r.minClassSize,
    classes: r.retainedClasses,
    suppressedRows: r.suppressedRows,
    releasedRows: method.suppressed === 'mask' ? table.rowCount : table.rowCount - r.suppressedRows,
    utility: Object.fromEntries(Object.entries(values).filter(([, v]) => Number.isFinite(v))),
    objective: { name: method.metric, value: values[method.metric] },
    risk: { name: 'max prosecutor risk', value: risk.max },
    prosecutor: risk,
    ncpByAttribute: Object.fromEntries(qis.map((q, i) => [q.name, ncp[i]!])),
    classSizes: classSizeHistogram(retained),
    ...(disclosure.length > 0 ? { disclosure } : {}),
    preview: previews.generalized(prepared, levels, (t) => r.suppressed[groupOf[t]!] === 1, prepared.spec),
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
    smallest = Math.min(smallest, size);
    if (size < k) below += size;
  }
  const reason =
    below > limit
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

/** Collects the released rows the choices preview, embedding only the cells some preview shows. */
class PreviewBuilder {
  private readonly orders: number[][] = [];
  private readonly orderIds = new Map<string, number>();
  /** Input row → its preview row index (generalization), and its needed labels per QI and level. */
  private readonly rowIndex = new Map<number, number>();
  private readonly rowRefs: number[] = [];
  private readonly needed: Set<number>[][] = [];
  private readonly csvRows: string[][] = [];
  private readonly permutations = new Map<number, Int32Array>();
  private prepared: Prepared | undefined;
  private columns: string[] = [];
  private leveled: boolean[] = [];

  constructor(
    private readonly spec: ReleaseSpec,
    private readonly table: EncodedTable,
  ) {}

  private order(rows: number[]): number {
    const key = rows.join(',');
    let id = this.orderIds.get(key);
    if (id === undefined) {
      id = this.orders.push(rows) - 1;
      this.orderIds.set(key, id);
    }
    return id;
  }

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
  ): Choice['preview'] {
    const { table, tuples, qis } = prepared;
    if (!this.prepared) {
      this.prepared = prepared;
      const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
      const released = table.columns.filter((c) => typeOf.get(c.name) !== 'identifying');
      this.columns = released.map((c) => c.name);
      this.leveled = released.map((c) => typeOf.get(c.name) === 'quasi-identifying');
    }
    const suppressedRow = (r: number) => suppressedTuple(tuples.rowToTuple[r]!);
    const remove = spec.method.name === 'generalization' && spec.method.suppressed === 'remove';
    let rows: number[];
    if (remove) {
      const kept: number[] = [];
      for (let r = 0; r < table.rowCount; r++) if (!suppressedRow(r)) kept.push(r);
      const p = this.shuffle(kept.length);
      rows = Array.from(p.subarray(0, PREVIEW_ROWS), (j) => kept[j]!);
    } else rows = Array.from(this.shuffle(table.rowCount).subarray(0, PREVIEW_ROWS));
    const refs = rows.map((r) => {
      let at = this.rowIndex.get(r);
      if (at === undefined) {
        at = this.rowRefs.push(r) - 1;
        this.rowIndex.set(r, at);
        this.needed.push(qis.map(() => new Set<number>()));
      }
      return at;
    });
    const masked: number[] = [];
    rows.forEach((r, j) => {
      if (suppressedRow(r)) masked.push(j);
      else {
        for (let i = 0; i < qis.length; i++) this.needed[refs[j]!]![i]!.add(levels[i]!);
      }
    });
    return { order: this.order(refs), masked };
  }

  /** The first data rows of a method's data.csv built in memory. */
  fromCsv(files: PointRun['files']): Choice['preview'] {
    const csv = files?.find((f) => f.name === 'data.csv');
    if (!csv) return undefined;
    const text = typeof csv.content === 'string' ? csv.content : Buffer.from(csv.content).toString('utf8');
    const lines = parseCsvHead(text, this.table.delimiter, PREVIEW_ROWS + 1);
    if (this.columns.length === 0) {
      this.columns = lines[0] ?? [];
      this.leveled = this.columns.map(() => false);
    }
    const refs = lines.slice(1).map((cells) => this.csvRows.push(cells) - 1 + 1_000_000_000);
    return { order: this.order(refs), masked: [] };
  }

  data(): ExplorerData['preview'] {
    const rows: (string | (string | null)[])[][] = [];
    const prepared = this.prepared;
    if (prepared) {
      const { table, qis, hierarchies } = prepared;
      const byName = new Map(table.columns.map((c) => [c.name, c]));
      this.rowRefs.forEach((r, at) => {
        rows.push(
          this.columns.map((name, c) => {
            const col = byName.get(name)!;
            if (!this.leveled[c]) return col.dictionary[col.codes[r]!]!;
            const i = qis.findIndex((q) => q.name === name);
            const h = hierarchies[i]!;
            return Array.from({ length: h.height + 1 }, (_, l) =>
              this.needed[at]![i]!.has(l) ? h.labels[l]![h.levelTables[l]![col.codes[r]!]!]! : null,
            );
          }),
        );
      });
    }
    // CSV previews' rows follow the generalization ones (their refs are offset to tell them apart).
    const offset = rows.length;
    for (const cells of this.csvRows) rows.push(cells);
    const orders = this.orders.map((o) =>
      o.map((ref) => (ref >= 1_000_000_000 ? ref - 1_000_000_000 + offset : ref)),
    );
    return { columns: this.columns, leveled: this.leveled, rows, orders };
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
