/**
 * Independent checks of the models judged on the release as a whole or against a population
 * table (docs/definitions.md): average re-identification risk, k-map and δ-presence. They
 * start from the spec's requirements, the released classes (their QI labels and sizes, as the
 * verifier read them from the staged files) and the population table read again from its
 * file, generalized at the release's node with the verifier's own hierarchy rows — never from
 * what the method claims.
 */
import { AVERAGE_RISK } from '../catalogue/average-risk.ts';
import { findModel, type ModelName, type ModelsIn, type SpecNamed } from '../catalogue/catalogue.ts';
import { DIFFERENTIAL_PRIVACY } from '../catalogue/differential-privacy.ts';
import { DELTA_PRESENCE, K_MAP } from '../catalogue/population.ts';
import { formatOf, readTable } from '../data/read.ts';
import {
  isPopulationModel,
  missingTexts,
  type PrivacyModelSpec,
  type ReleaseSpec,
} from '../release-spec/spec.ts';
import { ratioAtLeast, ratioAtMost } from '../util/exact.ts';
import { SEP } from './common.ts';
import { checkDpClasses } from './differential-privacy.ts';
import { verifierHierarchyRows } from './hierarchy.ts';

/** A released class: its QI labels joined by SEP (in the released columns' order) and its rows. */
export interface ReleasedClass {
  readonly key: string;
  readonly size: number;
}

/** Whether a model is checked here rather than class by class in src/verify/models.ts. */
export function isReleaseModel(model: PrivacyModelSpec): boolean {
  return findModel(model.model)?.scope === 'release' || isPopulationModel(model);
}

/**
 * The population's records per generalized QI tuple at `node` (keys as ReleasedClass's), or
 * undefined when no model names a population. `qis` are the released QI columns in order;
 * `sampleRows` the verifier's hierarchy rows of the input's values, whose height is the
 * lattice's: the population's own values take their hierarchy's label below it and the
 * input's top label at it.
 */
export function populationClasses(
  spec: ReleaseSpec,
  qis: readonly string[],
  node: Readonly<Record<string, number>>,
  sampleRows: ReadonlyMap<string, string[][]>,
): Map<string, number> | undefined {
  const model = spec.privacy.find(isPopulationModel);
  if (!model) return undefined;
  const path = model.population;
  const table = readTable(path, {
    delimiter: formatOf(path) === 'csv' ? spec.format.delimiter : undefined,
    ...(spec.format.decimal ? { decimal: spec.format.decimal } : {}),
    missing: missingTexts(spec),
  });
  const labelsOf = qis.map((name) => {
    const column = table.columns.find((c) => c.name === name);
    if (!column) return undefined;
    const level = node[name]!;
    const sample = sampleRows.get(name) ?? [];
    const height = (sample[0]?.length ?? 1) - 1;
    if (level >= height) return column.dictionary.map(() => sample[0]?.[height] ?? '*');
    const hierarchy = spec.attributes.find((a) => a.name === name)!.hierarchy!;
    const rows = new Map(verifierHierarchyRows(column, hierarchy).map((row) => [row[0]!, row]));
    return column.dictionary.map((v) => {
      const row = rows.get(v);
      return row === undefined ? undefined : row[Math.min(level, row.length - 1)];
    });
  });
  const counts = new Map<string, number>();
  if (labelsOf.some((l) => l === undefined)) return counts; // a QI the population lacks: no record matches
  const columns = qis.map((name) => table.columns.find((c) => c.name === name)!.codes);
  const parts = new Array<string>(qis.length);
  for (let r = 0; r < table.rowCount; r++) {
    let placed = true;
    for (let q = 0; q < qis.length; q++) {
      const label = labelsOf[q]![columns[q]![r]!];
      if (label === undefined) placed = false;
      parts[q] = label ?? '';
    }
    if (!placed) continue; // a value no hierarchy row places matches no released class
    const key = parts.join(SEP);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return counts;
}

/**
 * One check per release-level model of `privacy`, over the released classes: average risk
 * from their number and sizes, k-map and δ-presence from each class's population records.
 */
export function checkReleaseModels(
  privacy: readonly PrivacyModelSpec[],
  classes: readonly ReleasedClass[],
  population: ReadonlyMap<string, number> | undefined,
  /** Rows of the input (the sample an estimated population is drawn for). */
  inputRows: number,
  add: (name: string, passed: boolean, detail: string) => void,
): void {
  const rows = classes.reduce((n, c) => n + c.size, 0);
  const at: ReleaseFacts = { classes, rows, population, inputRows, add };
  for (const model of privacy) {
    const check = (RELEASE_CHECKS as Readonly<Record<string, ReleaseCheck<ModelName>>>)[model.model];
    check?.(model as never, at);
  }
}

/** What a release-level check reads: the released classes, their rows, the population's records per class. */
interface ReleaseFacts {
  readonly classes: readonly ReleasedClass[];
  readonly rows: number;
  readonly population: ReadonlyMap<string, number> | undefined;
  readonly inputRows: number;
  readonly add: (name: string, passed: boolean, detail: string) => void;
}

type ReleaseCheck<N extends ModelName> = (model: SpecNamed<N>, at: ReleaseFacts) => void;

/** The verifier's own check of every release-level model: one left out is a compile error. */
const RELEASE_CHECKS: { readonly [N in ModelsIn<'release'>]: ReleaseCheck<N> } = {
  [DIFFERENTIAL_PRIVACY.name]: (model, { classes, add }) => checkDpClasses(model, classes, add),
  [AVERAGE_RISK.name]: (model, { classes, rows, add }) => {
    const risk = rows === 0 ? Number.NaN : classes.length / rows;
    // classes/rows against the threshold's exact value: no rounding either way.
    const passed = rows > 0 && ratioAtMost(classes.length, rows, model.threshold);
    add(
      model.model,
      passed,
      `${classes.length} classes over ${rows} released rows: average risk ${round(risk)} (threshold ${model.threshold})`,
    );
  },
  [K_MAP.name]: (model, { classes, population, inputRows, add }) => {
    if (!('population' in model)) {
      // Estimated: every class at least the size that stands for k people.
      const least = classes.reduce((m, c) => Math.min(m, c.size), Number.POSITIVE_INFINITY);
      const k = estimatedK(model.k, inputRows, model.populationSize, model.estimator, model.significance);
      add(
        model.model,
        least >= k,
        `${classes.length} classes, smallest ${classes.length === 0 ? '—' : least}; k = ${model.k} of a population of ${model.populationSize} estimated (${model.estimator}, significance ${model.significance}) as classes of at least ${k} rows`,
      );
      return;
    }
    let failing = 0;
    let least = Number.POSITIVE_INFINITY;
    for (const c of classes) {
      const p = population?.get(c.key) ?? 0;
      least = Math.min(least, p);
      if (p < model.k) failing++;
    }
    add(
      model.model,
      population !== undefined && failing === 0,
      `${classes.length} classes, ${failing} failing; fewest population records matching a class: ${classes.length === 0 ? '—' : least} (k = ${model.k})`,
    );
  },
  [DELTA_PRESENCE.name]: (model, { classes, population, add }) => {
    let failing = 0;
    let low = Number.POSITIVE_INFINITY;
    let high = 0;
    for (const c of classes) {
      const p = population?.get(c.key) ?? 0;
      const share = p === 0 ? Number.POSITIVE_INFINITY : c.size / p;
      low = Math.min(low, share);
      high = Math.max(high, share);
      if (!(p > 0 && ratioAtLeast(c.size, p, model.deltaMin) && ratioAtMost(c.size, p, model.deltaMax)))
        failing++;
    }
    add(
      model.model,
      population !== undefined && failing === 0,
      `${classes.length} classes, ${failing} failing; sample share of a class's population from ${round(low)} to ${round(high)} (δmin = ${model.deltaMin}, δmax = ${model.deltaMax})`,
    );
  },
};

/**
 * The class size that stands for k-map under an estimated population, worked out afresh: the
 * population's class sizes are Poisson (or zero-truncated Poisson) with mean k·n/N; the size
 * is the first c whose cumulative probability reaches 1 − significance, plus 2 (Poisson) or
 * plus 1 (zero-truncated), as ARX counts, and at most k and n.
 */
export function estimatedK(
  k: number,
  rows: number,
  populationSize: number,
  estimator: 'poisson' | 'zero-truncated-poisson',
  significance: number,
): number {
  const mean = (k * rows) / populationSize;
  const logPmf = (c: number) => {
    let logFactorial = 0;
    for (let i = 2; i <= c; i++) logFactorial += Math.log(i);
    return c * Math.log(mean) - mean - logFactorial;
  };
  const zeroTruncated = estimator === 'zero-truncated-poisson';
  const scale = zeroTruncated ? 1 - Math.exp(-mean) : 1;
  let cumulative = 0;
  for (let c = zeroTruncated ? 1 : 0; c <= k; c++) {
    if (cumulative >= 1 - significance) return Math.min(k, rows, zeroTruncated ? c : c + 1);
    cumulative += Math.exp(logPmf(c)) / scale;
  }
  return Math.min(k, rows);
}

function round(x: number): number {
  return Number.isFinite(x) ? Number(x.toPrecision(6)) : x;
}
