/**
 * The privacy/utility frontier: one privacy parameter (k, l, t, δ or τ) swept over a range,
 * the method run for each value without publishing anything, and per value the transformation
 * chosen, its utility and its re-identification risk. The input is read once; generalization
 * prepares once (hierarchies, distinct tuples) and runs only its search per value (no released
 * table is built), other methods their whole build in memory.
 */
import { basename } from 'node:path';
import { declaredModels, varyParameters as declaredVary, modelOf } from '../catalogue/catalogue.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import { ATTRIBUTE_DISCLOSURE } from '../catalogue/randomization.ts';
import type { EncodedTable } from '../data/table.ts';
import { NoSolutionError, PpdpError, SpecError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import { prepareGeneralization, respecify, searchStep } from '../methods/generalization/index.ts';
import type { Prepared } from '../methods/generalization/prepared.ts';
import type { BuiltRelease, MethodContext, MethodReport } from '../methods/method.ts';
import { methodFor } from '../methods/registry.ts';
import { streams } from '../pipeline/release.ts';
import { entityOf, type PrivacyModelSpec, type ReleaseSpec } from '../release-spec/spec.ts';
import { counted, inWords, thousands, withArticle } from '../util/format.ts';
import { inputPersons } from '../verify/entity.ts';
import { DEFAULT_REPEATS, drawsSample, type RepeatedRuns, repeatedPoint } from './repeats.ts';

/**
 * The parameters `--vary` accepts, with the models that carry them, as the catalogue declares
 * them (src/catalogue/), and maxSuppression (no model: a setting of the method, generalization's).
 */
export function varyParameters(): Record<string, { models: string[]; integer: boolean }> {
  const [first, ...rest] = declaredVary();
  return Object.fromEntries([
    ...(first ? [first] : []),
    ['maxSuppression', { models: [], integer: false }],
    ...rest,
  ]);
}

export interface Vary {
  readonly parameter: string;
  readonly values: number[];
}

/** At most this many values per sweep: a typo like `k=2..50000` should not run for hours. */
export const MAX_VARY_VALUES = 1000;

/**
 * Parses `k=2..50`, `k=2..50:4`, `t=0.1..0.5:0.05` or a list `l=2,3,5` (τ may be written
 * `tau`). Integer ranges step by 1 unless told; fractional ones need a step. A repeated value
 * is kept once.
 */
export function parseVary(text: string): Vary {
  const usage = 'e.g. --vary k=2..50, --vary l=2..6, --vary t=0.1..0.5:0.05 or --vary k=2,5,10';
  const m = /^\s*([a-zA-Zτδε]+)\s*=\s*(.+)$/.exec(text);
  if (!m) throw new PpdpError('E_USAGE', `--vary ${text}: expected <parameter>=<range>`, usage);
  const parameter = ({ τ: 'tau', δ: 'delta', ε: 'epsilon' } as Record<string, string>)[m[1]!] ?? m[1]!;
  const known = varyParameters()[parameter];
  if (!known) {
    throw new PpdpError(
      'E_USAGE',
      `--vary ${text}: unknown parameter '${m[1]}'`,
      `vary one of ${Object.keys(varyParameters()).join(', ')}`,
    );
  }
  const number = (s: string): number => {
    const x = Number(s.trim());
    if (s.trim() === '' || !Number.isFinite(x))
      throw new PpdpError('E_USAGE', `--vary ${text}: '${s}' is not a number`, usage);
    return x;
  };
  let values: number[];
  const range = /^(.+?)\.\.(.+?)(?::(.+))?$/.exec(m[2]!);
  if (range) {
    const lo = number(range[1]!);
    const hi = number(range[2]!);
    const whole = Number.isInteger(lo) && Number.isInteger(hi);
    if (range[3] === undefined && !whole) {
      throw new PpdpError('E_USAGE', `--vary ${text}: a fractional range needs a step`, usage);
    }
    const step = range[3] === undefined ? 1 : number(range[3]);
    if (!(step > 0) || hi < lo) {
      throw new PpdpError('E_USAGE', `--vary ${text}: need from ≤ to and a step > 0`, usage);
    }
    const count = Math.floor((hi - lo) / step + 1e-9) + 1;
    if (count > MAX_VARY_VALUES) {
      throw new PpdpError(
        'E_USAGE',
        `--vary ${text}: ${count} values (at most ${MAX_VARY_VALUES})`,
        'use a larger step',
      );
    }
    // Rounded to the step's decimals so 0.1 + 2·0.05 prints as 0.2.
    const decimals = Math.min(12, Math.max(decimalsOf(lo), decimalsOf(step)));
    values = Array.from({ length: count }, (_, i) => Number((lo + i * step).toFixed(decimals)));
  } else {
    values = m[2]!.split(',').map(number);
    if (values.length > MAX_VARY_VALUES) {
      throw new PpdpError('E_USAGE', `--vary ${text}: more than ${MAX_VARY_VALUES} values`, usage);
    }
  }
  for (const v of values) checkValue(parameter, v, text);
  // A value given twice (`k=2,2,3`, or `2` and `2.0`) would run the same release twice and
  // draw it twice on the frontier: each runs once, in the order first given.
  return { parameter, values: [...new Set(values)] };
}

function decimalsOf(x: number): number {
  const s = String(x);
  return s.includes('.') ? s.length - s.indexOf('.') - 1 : 0;
}

function checkValue(parameter: string, v: number, text: string): void {
  const bad = (what: string) =>
    new PpdpError('E_USAGE', `--vary ${text}: ${parameter} = ${v} — ${what}`, 'choose values in range');
  if (parameter === 'k' && !(Number.isInteger(v) && v >= 1)) throw bad('k must be a whole number ≥ 1');
  if (parameter === 'l' && !(v >= 1)) throw bad('l must be ≥ 1');
  if ((parameter === 't' || parameter === 'tau') && !(v >= 0 && v <= 1)) throw bad('must be in [0, 1]');
  if (parameter === 'delta' && !(v >= 0)) throw bad('δ must be ≥ 0');
  if (parameter === 'epsilon' && !(v > 0)) throw bad('ε must be > 0');
  if (parameter === 'maxSuppression' && !(v >= 0 && v <= 1)) throw bad('a share of rows, in [0, 1]');
  // Every parameter: the widest range the models carrying it declare.
  const fields = declaredModels().flatMap((d) => {
    const f = d.vary?.parameter === parameter ? d.fields[parameter] : undefined;
    return f?.kind === 'number' ? [f] : [];
  });
  if (fields.length === 0) return;
  const min = Math.min(...fields.map((f) => f.min));
  const max = Math.max(...fields.map((f) => f.max));
  const integer = varyParameters()[parameter]!.integer;
  if (!(v >= min && v <= max && (!integer || Number.isInteger(v))))
    throw bad(`${parameter} must be ${integer ? 'a whole number ' : ''}from ${min} to ${max}`);
}

/**
 * What `--vary` can change in this spec, for errors caused by the option: `tau (attribute-disclosure)`,
 * `maxSuppression (generalization)`; or that its models carry none.
 */
export function specParameters(spec: ReleaseSpec): string {
  const carried = spec.privacy.flatMap((m) => {
    const p = modelOf(m).vary?.parameter;
    return p ? [`${p} (${m.model})`] : [];
  });
  if (spec.method.name === 'generalization') carried.push('maxSuppression (generalization)');
  const models = inWords([...new Set(spec.privacy.map((m) => m.model))]);
  return carried.length > 0
    ? `this spec's models take ${inWords([...new Set(carried)])}`
    : `this spec's models (${models}) have no parameter --vary changes`;
}

/**
 * The spec with the varied parameter set to `value` in every model that carries it; a
 * k-anonymity model is added when k is varied and the spec has none. Any other missing
 * model is an error: which attribute it protects is the user's choice.
 */
export function specWith(spec: ReleaseSpec, parameter: string, value: number): ReleaseSpec {
  const { models } = varyParameters()[parameter]!;
  if (parameter === 'maxSuppression') {
    if (spec.method.name !== 'generalization') {
      throw new SpecError(
        'E_SPEC_METHOD',
        `--vary maxSuppression: it is a setting of generalization, and ${basename(spec.file)}'s method is ${spec.method.name}; ${specParameters(spec)}`,
        "vary a parameter of the spec's privacy models instead (k, l, t, delta, tau)",
      );
    }
    return { ...spec, method: { ...spec.method, maxSuppression: value } };
  }
  if (!Number.isInteger(value)) {
    const integerOnly = spec.privacy.find((m) => models.includes(m.model) && modelOf(m).vary?.integer);
    if (integerOnly) {
      throw new PpdpError(
        'E_USAGE',
        `--vary ${parameter}: ${value} is not a whole number, but ${integerOnly.model} needs one`,
        `use an integer range, e.g. --vary ${parameter}=2..6`,
      );
    }
  }
  let found = false;
  const privacy = spec.privacy.map((m) => {
    if (!models.includes(m.model)) return m;
    found = true;
    return { ...m, [parameter]: value } as PrivacyModelSpec;
  });
  if (!found) {
    // k is added as a k-anonymity model, which randomization does not take (its models bound
    // disclosure per row): the option is refused, not the spec.
    if (parameter === 'k' && spec.method.name === 'randomization') {
      throw new PpdpError(
        'E_USAGE',
        `--vary k: ${basename(spec.file)}'s method is randomization, which takes no k-anonymity model; ${specParameters(spec)}`,
        "vary tau with an attribute-disclosure model (e.g. --vary tau=0.1..0.5:0.1), or l with an l-diversity model, in the spec's privacy list",
      );
    }
    if (parameter !== 'k') {
      const onAttribute = declaredModels().some(
        (d) => models.includes(d.name) && Object.values(d.fields).some((f) => f.kind === 'attribute'),
      );
      throw new SpecError(
        'E_SPEC_MODEL',
        `--vary ${parameter}: it needs ${withArticle(models.join(' or '))} model in privacy, and ${basename(spec.file)} has none; ${specParameters(spec)}`,
        onAttribute
          ? `add one to the spec's privacy list (it names the sensitive attribute), then vary its ${parameter}`
          : `explore a spec with ${withArticle(models.join(' or '))} model in its privacy list, or vary a parameter of this spec's models`,
      );
    }
    privacy.unshift({ model: K_ANONYMITY.name, k: value });
  }
  return { ...spec, privacy };
}

/** The spec's own value of a parameter (undefined when the spec has no model carrying it). */
export function specValue(spec: ReleaseSpec, parameter: string): number | undefined {
  if (parameter === 'maxSuppression')
    return spec.method.name === 'generalization' ? spec.method.maxSuppression : undefined;
  const { models } = varyParameters()[parameter]!;
  const m = spec.privacy.find((x) => models.includes(x.model)) as Record<string, unknown> | undefined;
  return typeof m?.[parameter] === 'number' ? (m[parameter] as number) : undefined;
}

/** One value of the sweep: what the method chose and what it keeps and risks. */
export interface FrontierPoint {
  /** The first varied parameter's value. */
  readonly value: number;
  /** Every varied parameter's value (one or two). */
  readonly values: Record<string, number>;
  /** false when no transformation satisfies the models at this value (`reason` says why). */
  readonly feasible: boolean;
  readonly reason?: string;
  /** Generalization: the chosen node (QI → level). */
  readonly node?: Record<string, number>;
  /** Equivalence classes released, and the smallest one (the k achieved). */
  readonly classes?: number;
  readonly kAchieved?: number;
  readonly suppressedRows?: number;
  /** Highest prosecutor risk of a released row (1 / smallest class), and the share of rows above `riskThreshold`. */
  readonly maxProsecutorRisk?: number;
  readonly shareAboveRisk?: number;
  /** The risk threshold `shareAboveRisk` counts above (the spec's, or the default). */
  readonly riskThreshold?: number;
  /** What the method optimized (e.g. ncp; randomization: its expected error) and its value. */
  readonly objective?: { readonly name: string; readonly value: number };
  /**
   * The release's worst-case risk: the maximum prosecutor risk for methods that release
   * classes, the maximum attribute-disclosure risk for randomization.
   */
  readonly risk?: { readonly name: string; readonly value: number };
  /** Every utility measure the method reports (ncp, discernibility, …; see docs). */
  readonly utility?: Record<string, number>;
  /** Each model's measure on the result, e.g. { "k-anonymity": { k: 7 } }. */
  readonly achieved?: Record<string, Record<string, number>>;
  /**
   * A spec whose release draws a secret sample: the value's several releases as aggregates
   * only (then `objective` is their mean and the per-run fields above are absent).
   */
  readonly repeats?: RepeatedRuns;
  readonly ms: number;
}

export interface Frontier {
  readonly spec: string;
  readonly method: string;
  /** The first varied parameter. */
  readonly parameter: string;
  /** Every varied parameter, the first varying slowest in `points`. */
  readonly parameters: string[];
  readonly rows: number;
  readonly points: FrontierPoint[];
}

/** What a feasible point's run produced beyond its summary (for the explorer page). */
export interface PointRun {
  readonly spec: ReleaseSpec;
  readonly report: MethodReport;
  /** Generalization: per distinct tuple of `prepared.tuples`, 1 when suppressed. */
  readonly tupleSuppressed?: Uint8Array;
  /** Other methods: the files their build made in memory (data.csv gives the preview). */
  readonly files?: BuiltRelease['files'];
}

/** Every combination of the varied values, the first parameter varying slowest. */
function combinations(varies: readonly Vary[]): Record<string, number>[] {
  let out: Record<string, number>[] = [{}];
  for (const v of varies) out = out.flatMap((c) => v.values.map((x) => ({ ...c, [v.parameter]: x })));
  return out;
}

/**
 * Runs the spec's method for each combination of the varied values on a table read once.
 * `onRun` receives each feasible point's run (its report, and what the preview needs).
 */
export function exploreFrontier(
  spec: ReleaseSpec,
  table: EncodedTable,
  vary: Vary | readonly Vary[],
  kernel: GroupingKernel,
  progress: (line: string) => void = () => {},
  onRun: (index: number, run: PointRun, prepared?: Prepared) => void = () => {},
  /** Releases per value of a spec that draws a secret sample (others run once: same seed, same release). */
  repeats = DEFAULT_REPEATS,
): Frontier {
  const varies = Array.isArray(vary) ? (vary as readonly Vary[]) : [vary as Vary];
  const names = varies.map((v) => v.parameter);
  if (new Set(names).size !== names.length) {
    throw new PpdpError(
      'E_USAGE',
      `--vary ${names.join(', ')}: a parameter is varied twice`,
      'vary each once',
    );
  }
  if (varies.length > 1 && drawsSample(spec)) {
    throw new PpdpError(
      'E_USAGE',
      `--vary ${names.join(', ')}: ${basename(spec.file)} releases a secret random sample, explored one parameter at a time`,
      'vary one parameter (e.g. --vary epsilon=0.5..3:0.5)',
    );
  }
  // Check every value's spec first: a bad sweep fails before the work starts.
  const k = varies.find((v) => v.parameter === 'k');
  // With an entity column a class's k counts persons (docs/release-spec.md): no k above them is met.
  const persons = entityOf(spec) === undefined ? undefined : inputPersons(table, spec.attributes);
  const [most, unit] = persons === undefined ? [table.rowCount, 'row'] : [persons, 'person'];
  const above = k?.values.filter((v) => v > most) ?? [];
  if (above.length > 0) {
    throw new PpdpError(
      'E_USAGE',
      `--vary k: ${inWords(above.map(String), 3)} ${above.length === 1 ? 'is' : 'are'} more than the table's ${counted(most, unit)} (${persons === undefined ? 'k is at most the number of rows' : `attributes.${entityOf(spec)} is an entity column: k counts persons, and is at most their number`})`,
      `vary k from 1 to ${most}, e.g. --vary k=${Math.min(2, most)}..${most}`,
    );
  }
  const combos = combinations(varies);
  const specs = combos.map((c) => Object.entries(c).reduce((s, [p, v]) => specWith(s, p, v), spec));
  const random = streams(spec, table);
  // Generalization: hierarchies and distinct tuples once; each value rebuilds only its models.
  let prepared: Prepared | undefined;
  const generalize = (s: ReleaseSpec): PointRun => {
    prepared = prepared ? respecify(prepared, s) : prepareGeneralization(s, table, kernel);
    const step = searchStep(
      prepared,
      kernel,
      (_, work) => work(),
      () => {},
    );
    return { spec: s, report: step.report, tupleSuppressed: step.tupleSuppressed };
  };
  const label = (c: Record<string, number>) =>
    Object.entries(c)
      .map(([p, v]) => `${p} = ${v}`)
      .join(', ');
  const points = specs.map((s, i) => {
    const values = combos[i]!;
    const value = values[names[0]!]!;
    const t0 = performance.now();
    let point: FrontierPoint;
    try {
      if (drawsSample(s)) {
        // Its own release, several times; no run reaches onRun (nothing of a single run is shown).
        point = { value, values, ...repeatedPoint(s, repeats, () => build(s, table, kernel, random)), ms: 0 };
      } else {
        const run = s.method.name === 'generalization' ? generalize(s) : runMethod(s, table, kernel, random);
        point = { value, values, feasible: true, ...summarize(run.report), ms: 0 };
        onRun(i, run, prepared);
      }
    } catch (e) {
      if (!(e instanceof NoSolutionError)) throw e;
      point = { value, values, feasible: false, reason: e.message, ms: 0 };
    }
    point = { ...point, ms: Math.round((performance.now() - t0) * 10) / 10 };
    const figure = (f?: { name: string; value: number }) =>
      f ? `${f.name} ${Number(f.value.toPrecision(4))}` : '';
    const r = point.repeats;
    progress(
      `${label(values)}: ${
        r
          ? `${r.runs} runs, β ${Number(r.beta.toPrecision(4))}, k ${r.k}, mean ${Number(r.sampledRows.mean.toPrecision(4))} rows sampled, ${Number(r.suppressedRows.mean.toPrecision(4))} suppressed, ${figure(point.objective)}`
          : point.feasible
            ? [
                point.classes === undefined ? '' : `${thousands(point.classes)} classes`,
                `${thousands(point.suppressedRows ?? 0)} rows suppressed`,
                figure(point.objective),
                figure(point.risk),
              ]
                .filter((x) => x)
                .join(', ')
            : 'no solution'
      } (${point.ms} ms)`,
    );
    return point;
  });
  return {
    spec: basename(spec.file),
    method: spec.method.name,
    parameter: names[0]!,
    parameters: names,
    rows: table.rowCount,
    points,
  };
}

/** Another method's report for one spec: its whole build, in memory. */
function runMethod(
  spec: ReleaseSpec,
  table: EncodedTable,
  kernel: GroupingKernel,
  random: MethodContext['random'],
): PointRun {
  const built = build(spec, table, kernel, random);
  return { spec, report: built.report, files: built.files };
}

/** The spec's method's whole build, in memory. */
function build(
  spec: ReleaseSpec,
  table: EncodedTable,
  kernel: GroupingKernel,
  random: MethodContext['random'],
): BuiltRelease {
  const time = <T>(_: string, work: () => T) => work();
  return methodFor(spec.method.name).build({ spec, table, kernel, time, say: () => {}, random });
}

function summarize(report: MethodReport): Omit<FrontierPoint, 'value' | 'values' | 'feasible' | 'ms'> {
  const { privacy, rows, utility } = report;
  const numbers = Object.fromEntries(
    Object.entries(utility).filter(
      (e): e is [string, number] => typeof e[1] === 'number' && e[0] !== 'value',
    ),
  );
  const disclosure = privacy.models.find((m) => m.model === ATTRIBUTE_DISCLOSURE.name)?.achieved.maxRisk;
  const risk = privacy.prosecutorRisk
    ? { name: 'max prosecutor risk', value: privacy.prosecutorRisk.max }
    : disclosure !== undefined
      ? { name: 'max attribute-disclosure risk', value: disclosure }
      : undefined;
  return {
    objective: { name: utility.metric, value: utility.value },
    ...(risk ? { risk } : {}),
    ...(report.generalization ? { node: report.generalization.node } : {}),
    ...(privacy.classes !== undefined ? { classes: privacy.classes } : {}),
    ...(privacy.k !== undefined ? { kAchieved: privacy.k } : {}),
    suppressedRows: rows.suppressed,
    ...(privacy.prosecutorRisk
      ? {
          maxProsecutorRisk: privacy.prosecutorRisk.max,
          shareAboveRisk: privacy.prosecutorRisk.shareAbove,
          riskThreshold: privacy.prosecutorRisk.threshold,
        }
      : {}),
    utility: numbers,
    achieved: Object.fromEntries(privacy.models.map((m) => [m.model, m.achieved])),
  };
}
