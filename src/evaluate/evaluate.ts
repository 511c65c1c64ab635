/**
 * Risk and utility of a table as it is — a ppdp release, another tool's output (a generalized
 * CSV from ARX, say) or raw input (`ppdp evaluate`). Equivalence classes are the rows sharing
 * every quasi-identifier value as written; a row whose quasi-identifiers are all `*` is
 * suppressed. Measured: re-identification risk (prosecutor, journalist, marketer), the k
 * achieved, each sensitive attribute's l, t and δ (src/metrics/disclosure.ts), each privacy
 * model of a spec checked per class (src/verify/models.ts), and, when the original table is
 * known, the information lost per cell (NCP) read from the released strings.
 */
import { modelOf, needs } from '../catalogue/catalogue.ts';
import type { HistogramBin, PopulationUniqueness } from '../contracts/report.ts';
import { columnsHint } from '../data/read.ts';
import type { EncodedColumn, EncodedTable, RowNames } from '../data/table.ts';
import { collapseRows } from '../data/tuples.ts';
import { PpdpError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import {
  type ClassHistogramSet,
  type DisclosureMeasures,
  disclosureMeasures,
  type SparseClassHistograms,
  sparseClassHistograms,
} from '../metrics/disclosure.ts';
import { labelLoss } from '../metrics/label-loss.ts';
import {
  type PopulationSpec,
  populationRiskPart,
  type SampleRisk,
  sampleRisk,
} from '../metrics/population-risk.ts';
import { classSizeHistogram, reidentificationRisk } from '../metrics/privacy.ts';
import { specialUniques, type WeightedRisk, weightedRisk } from '../metrics/special-uniques.ts';
import { specK } from '../models/index.ts';
import { isPopulationModel, type PrivacyModelSpec } from '../release-spec/spec.ts';
import { minOf } from '../util/extent.ts';
import { inWords } from '../util/format.ts';
import { emptyRecord } from '../util/record.ts';
import { checkClass, type SensitiveContext } from '../verify/models.ts';
import { checkReleaseModels, isReleaseModel } from '../verify/population.ts';
import { type PersonSetting, personFigures } from './persons.ts';

/** The value a suppressed cell holds (ppdp's mask, ARX's suppression). */
export const SUPPRESSED = '*';

export interface EvaluateInput {
  /** The table evaluated and where it came from (for the result). */
  readonly table: EncodedTable;
  readonly source: string;
  /** How messages name the table's rows (src/data/checks.ts, tableRows); by default as a CSV's. */
  readonly rows?: RowNames;
  readonly quasiIdentifiers: readonly string[];
  readonly sensitive: readonly string[];
  /** Columns a spec marks identifying: a release never holds them, so one in the table is a caution. */
  readonly identifying?: readonly string[];
  /** The input the table was made from: its values measure information loss and t, δ. */
  readonly original?: EncodedTable;
  /** Hierarchy rows `[value, level1, …]` per attribute, when known (labels' coverage, hierarchical t). */
  readonly hierarchies?: ReadonlyMap<string, string[][]>;
  /** Models to check per class (a spec's privacy list). */
  readonly privacy?: readonly PrivacyModelSpec[];
  /** Prosecutor risk above which a record counts as at risk. */
  readonly threshold: number;
  readonly kernel: GroupingKernel;
  /** The population the table was drawn from: population uniqueness is estimated when given. */
  readonly population?: PopulationSpec;
  /** A column of design weights: the survey-weighted individual risk. */
  readonly weight?: string;
  /** Search minimal sample uniques (up to 3 quasi-identifiers) per record. */
  readonly specialUniques?: boolean;
  /** An entity column (several rows per person): k, l, t, δ and the models count persons (src/evaluate/persons.ts). */
  readonly persons?: PersonSetting;
}

export interface Evaluation {
  source: string;
  /**
   * What the figures do not show, for a person (absent when nothing): an identifying column
   * present in the table names each person whatever the risk of the quasi-identifiers.
   */
  cautions?: string[];
  rows: number;
  /** Rows whose quasi-identifiers are all `*`, plus `removedRows`. */
  suppressedRows: number;
  /** Rows of the original the table lacks (a release that removes its suppressed rows): suppressed. */
  removedRows: number;
  quasiIdentifiers: string[];
  sensitive: string[];
  classes: number;
  /** Smallest class: the k the table achieves. */
  kAchieved: number;
  ecSizeHistogram: HistogramBin[];
  risk: {
    threshold: number;
    /** An attacker who knows the person is in the table: 1/|class|. */
    prosecutor: { max: number; mean: number; recordsAbove: number; shareAbove: number };
    /** An attacker matching against a population; without a population table the same as prosecutor (an upper bound). */
    journalist: { max: number; mean: number; note: string };
    /** Expected share of records re-identified when every record is matched: classes / rows. */
    marketer: number;
    /** The same measures as a statistical office (and ARX) reports them, with the share of sample uniques. */
    sample: SampleRisk;
  };
  /** Records unique in the population under Pitman's, Zayatz's and the SNB model and Dankar's rule (with a population). */
  populationRisk?: PopulationUniqueness;
  /** Survey-weighted individual risk (with a weight column). */
  weightedRisk?: WeightedRisk;
  /** Minimal sample uniques up to 3 quasi-identifiers, summarized (per record: msuCount, score). */
  specialUniques?: {
    maxSize: number;
    recordsWithMsu: number;
    shareWithMsu: number;
    msusBySize: number[];
    maxScore: number;
    meanScore: number;
  };
  /** Per sensitive attribute: l (distinct, entropy), t (its distance in `tDistance`: the default rule), δ, and baselines. */
  disclosure: Record<string, DisclosureMeasures>;
  /**
   * With an entity column: the persons, and k over them; `disclosure` and the class models then
   * count persons. When persons cannot be placed, `notMeasured` says why, and the figures
   * (over rows) are not shown beside the release's person-based ones.
   */
  persons?: { input: number; suppressed: number; kAchieved: number } | { notMeasured: string };
  models?: {
    model: string;
    params: Record<string, number | string>;
    satisfied: boolean;
    /** False for a model evaluate cannot measure (one that needs its population table). */
    measured?: false;
    /** Why it is not measured, when not for its population table (persons that cannot be placed). */
    notMeasured?: string;
    worst: number;
    classesFailing: number;
  }[];
  utility?: {
    /**
     * Mean information loss per QI cell of the original's rows (0 = as in the original, 1 = fully
     * generalized or suppressed; a removed row's cells 1).
     */
    ncp: number;
    ncpByAttribute: Record<string, number>;
    /** Σ|E|² over classes plus the original's rows × suppressed rows (removed ones included). */
    discernibility: number;
    /** Average class size over k: rows released / classes / `aecsK.k`. */
    aecs: number;
    /** The k AECS divides by: the spec's (its k-anonymity's k, else 1), or without a spec the k achieved. */
    aecsK: { k: number; from: 'spec' | 'achieved' };
    /**
     * Cells whose value is neither an original value, a hierarchy label, a range nor `*`: each
     * counts 0 in the NCP's mean over all cells, which is then a lower bound.
     */
    unmeasuredCells: number;
    originalRows: number;
  };
}

export function evaluateTable(input: EvaluateInput): Evaluation {
  const { table, original } = input;
  const column = (t: EncodedTable, name: string, what: string): EncodedColumn => {
    const c = t.columns.find((x) => x.name === name);
    if (!c) {
      throw new PpdpError('E_EVALUATE_COLUMN', `${what} has no column ${name}`, columnsHint(t));
    }
    return c;
  };
  if (input.quasiIdentifiers.length === 0) {
    throw new PpdpError(
      'E_EVALUATE_ROLES',
      'no quasi-identifiers named',
      'name them with --qi a,b,c or --spec',
    );
  }
  const qis = input.quasiIdentifiers.map((q) => column(table, q, input.source));
  const sas = input.sensitive.map((s) => column(table, s, input.source));
  const n = table.rowCount;

  // Classes: the distinct QI tuples; the all-`*` tuple holds the suppressed rows.
  const tuples = collapseRows(input.kernel, qis);
  const classes = tuples.counts.length;
  const suppressedTuple = tupleOfStars(tuples.columns, qis);
  const keep = (g: number) => g !== suppressedTuple;
  const sizes = Array.from(tuples.counts).filter((_, g) => keep(g));
  const released = n - (suppressedTuple < 0 ? 0 : tuples.counts[suppressedTuple]!);
  // Rows of the original the table lacks (a release made with "suppressed": "remove") were
  // suppressed: counted so, as the release's report counts them.
  const removedRows = original ? Math.max(0, original.rowCount - n) : 0;
  const suppressedRows = n - released + removedRows;
  const kAchieved = sizes.length > 0 ? minOf(sizes) : 0;

  const disclosure = emptyRecord<DisclosureMeasures>();
  const contexts = new Map<string, SensitiveContext>();
  const histograms = new Map<string, { set: SparseClassHistograms; dictionary: readonly string[] }>();
  for (const sa of sas) {
    const set = sparseClassHistograms(
      tuples.rowToTuple,
      tuples.counts.length,
      sa.dictionary.length,
      sa.codes,
      keep,
    );
    histograms.set(sa.name, { set, dictionary: sa.dictionary });
    const base = original ? column(original, sa.name, 'the original table') : sa;
    const share = new Map<string, number>();
    const counts = new Map<string, number>();
    const baseCounts = new Int32Array(base.dictionary.length);
    for (const c of base.codes) baseCounts[c]!++;
    base.dictionary.forEach((v, c) => {
      if (baseCounts[c]! > 0) {
        share.set(v, (share.get(v) ?? 0) + baseCounts[c]! / base.codes.length);
        counts.set(v, (counts.get(v) ?? 0) + baseCounts[c]!);
      }
    });
    const distribution = Float64Array.from(sa.dictionary, (v) => share.get(v) ?? 0);
    disclosure[sa.name] = disclosureMeasures(
      sa.name,
      set,
      original ? originalClasses(input, original, sa, base) : set,
      distribution,
      sa.dictionary,
    );
    contexts.set(sa.name, {
      table: share,
      hierarchy: input.hierarchies?.get(sa.name),
      rows: { counts, total: base.codes.length },
    });
  }
  // A class's SA counts by value, as the models' checks read them.
  const valueCounts = (attribute: string, g: number): Map<string, number> => {
    const { set, dictionary } = histograms.get(attribute)!;
    const m = new Map<string, number>();
    for (let i = set.offsets[g]!; i < set.offsets[g + 1]!; i++)
      m.set(dictionary[set.values[i]!]!, set.counts[i]!);
    return m;
  };

  const models = input.privacy?.map((model) => {
    const { model: name, ...params } = model as PrivacyModelSpec & Record<string, unknown>;
    if (isReleaseModel(model)) return releaseModel(model, params, sizes, n);
    const attribute = 'attribute' in model ? model.attribute : undefined;
    if (attribute !== undefined && !histograms.has(attribute)) {
      throw new PpdpError(
        'E_EVALUATE_ROLES',
        `${model.model} names ${attribute}, which is not a sensitive attribute here`,
        'mark it sensitive (--sensitive or the spec)',
      );
    }
    let satisfied = true;
    let worst: number | undefined;
    let classesFailing = 0;
    for (let g = 0; g < classes; g++) {
      if (!keep(g)) continue;
      const { value, holds } = checkClass(
        model,
        tuples.counts[g]!,
        attribute === undefined ? undefined : valueCounts(attribute, g),
        attribute === undefined ? undefined : contexts.get(attribute),
      );
      if (!holds) {
        satisfied = false;
        classesFailing++;
      }
      const higherIsBetter = modelOf(model).measure.higherIsBetter;
      if (worst === undefined || (higherIsBetter ? value < worst : value > worst)) worst = value;
    }
    return {
      model: name,
      params: params as Record<string, number | string>,
      satisfied,
      worst: worst ?? Number.NaN,
      classesFailing,
    };
  });

  // With an entity column, the figures over persons replace those over rows.
  const byPerson =
    input.persons && original
      ? personFigures(
          input.persons,
          original,
          { qis, columns: tuples.columns, counts: tuples.counts, keep },
          sas,
          input.hierarchies,
          contexts,
          input.privacy ?? [],
          isReleaseModel,
        )
      : input.persons
        ? 'the original table is not given'
        : undefined;
  if (typeof byPerson === 'object') {
    Object.assign(disclosure, byPerson.disclosure);
    models?.forEach((m, i) => {
      const p = byPerson.models[i];
      if (p) Object.assign(m, p);
    });
  } else if (typeof byPerson === 'string') {
    // Not counted over persons: no figure over rows stands in for the release's over persons.
    for (const sa of sas) delete disclosure[sa.name];
    input.privacy?.forEach((model, i) => {
      const m = models?.[i];
      if (m && !isReleaseModel(model))
        Object.assign(m, { measured: false, notMeasured: `not counted over persons: ${byPerson}` });
    });
  }
  // With persons placed, the risks are per person as in the release's report: one of a class's
  // P persons is re-identified with probability 1/P (a person with rows in several classes
  // counts in each).
  const riskSizes = typeof byPerson === 'object' ? byPerson.released.persons : sizes;
  const risk = reidentificationRisk(
    riskSizes,
    input.threshold,
    typeof byPerson === 'object'
      ? 'quasi-identifiers as released, per person'
      : 'quasi-identifiers as released',
  );
  const { prosecutor } = risk;
  // Each suppressed row is charged the whole input's rows (removed ones included).
  let discernibility = suppressedRows * (n + removedRows);
  for (const s of sizes) discernibility += s * s;
  // AECS divides by the k the spec asks for, as the release's report; without a spec, by the k achieved.
  const aecsK = input.privacy
    ? { k: specK(input.privacy), from: 'spec' as const }
    : { k: kAchieved, from: 'achieved' as const };
  // A column the spec drops from every release, still in the table: its rows name persons.
  const present = (input.identifying ?? []).filter((name) => table.columns.some((c) => c.name === name));
  const cautions =
    present.length === 0
      ? []
      : [
          `the table holds ${inWords(present)}, ${present.length === 1 ? 'a column' : 'columns'} the spec marks identifying (a release drops ${
            present.length === 1 ? 'it' : 'them'
          }): the risks here leave ${present.length === 1 ? 'it' : 'them'} out, and ${
            present.length === 1 ? 'it' : 'they'
          } may name the person of each row`,
        ];
  return {
    source: input.source,
    ...(cautions.length > 0 ? { cautions } : {}),
    rows: n,
    suppressedRows,
    removedRows,
    quasiIdentifiers: qis.map((q) => q.name),
    sensitive: sas.map((s) => s.name),
    classes: sizes.length,
    kAchieved,
    // With persons placed, classes sized in persons (their rows beside), as the release's report.
    ecSizeHistogram:
      typeof byPerson === 'object'
        ? classSizeHistogram(byPerson.released.persons, byPerson.released.rows)
        : classSizeHistogram(sizes),
    risk: {
      threshold: input.threshold,
      prosecutor: {
        max: prosecutor.max,
        mean: prosecutor.mean,
        recordsAbove: Math.round(prosecutor.shareAbove * prosecutor.rows),
        shareAbove: prosecutor.shareAbove,
      },
      journalist: {
        max: prosecutor.max,
        mean: prosecutor.mean,
        // Journalist risk is 1/|class in the population|: with no population table, only a
        // population size (or none), the sample's class is the best bound (docs/risk.md).
        note: input.population
          ? 'the prosecutor risk, an upper bound of the journalist risk: the population’s size, used for the population uniques, gives no class sizes in the population'
          : 'the prosecutor risk, an upper bound of the journalist risk: there is no population table',
      },
      marketer: risk.marketer,
      sample: sampleRisk(riskSizes),
    },
    ...(typeof byPerson === 'object'
      ? populationRiskPart(byPerson.released.persons, input.population, byPerson.counted.persons, true)
      : populationRiskPart(sizes, input.population, n)),
    ...(input.weight
      ? {
          weightedRisk: weightedRisk(
            tuples.rowToTuple,
            (r) => keep(tuples.rowToTuple[r]!),
            column(table, input.weight, input.source),
            input.threshold,
            input.rows,
          ),
        }
      : {}),
    ...(input.specialUniques
      ? { specialUniques: releasedSpecialUniques(qis, tuples.rowToTuple, keep, input.kernel) }
      : {}),
    disclosure,
    ...(byPerson === undefined
      ? {}
      : {
          persons:
            typeof byPerson === 'string'
              ? { notMeasured: byPerson }
              : {
                  input: byPerson.counted.persons,
                  suppressed: byPerson.counted.suppressed,
                  kAchieved: byPerson.kAchieved,
                },
        }),
    ...(models ? { models } : {}),
    ...(original
      ? {
          utility: {
            ...informationLoss(qis, original, removedRows, input.hierarchies, column),
            discernibility,
            aecs: sizes.length > 0 && aecsK.k > 0 ? released / sizes.length / aecsK.k : 0,
            aecsK,
            originalRows: original.rowCount,
          },
        }
      : {}),
  };
}

/** Minimal sample uniques over the released (not suppressed) rows. */
function releasedSpecialUniques(
  qis: EncodedColumn[],
  rowToTuple: Int32Array,
  keep: (g: number) => boolean,
  kernel: GroupingKernel,
): NonNullable<Evaluation['specialUniques']> {
  const rows: number[] = [];
  for (let r = 0; r < rowToTuple.length; r++) if (keep(rowToTuple[r]!)) rows.push(r);
  const released = qis.map((q) => ({ ...q, codes: Int32Array.from(rows, (r) => q.codes[r]!) }));
  const { maxSize, recordsWithMsu, shareWithMsu, msusBySize, maxScore, meanScore } = specialUniques(
    released,
    kernel,
  );
  return { maxSize, recordsWithMsu, shareWithMsu, msusBySize, maxScore, meanScore };
}

/** The original table's classes (its own QI values) with SA counts over the release's SA values. */
function originalClasses(
  input: EvaluateInput,
  original: EncodedTable,
  sa: EncodedColumn,
  base: EncodedColumn,
): ClassHistogramSet | SparseClassHistograms {
  const qis = input.quasiIdentifiers.map((q) => original.columns.find((c) => c.name === q));
  if (qis.some((q) => q === undefined))
    return { groups: 0, width: sa.dictionary.length, counts: new Int32Array(0), keep: () => false };
  const tuples = collapseRows(input.kernel, qis as EncodedColumn[]);
  const index = new Map(sa.dictionary.map((v, c) => [v, c]));
  // A value the release does not hold is not counted (-1).
  const codeOf = Int32Array.from(base.dictionary, (v) => index.get(v) ?? -1);
  const codes = Int32Array.from(base.codes, (c) => codeOf[c]!);
  return sparseClassHistograms(
    tuples.rowToTuple,
    tuples.counts.length,
    sa.dictionary.length,
    codes,
    () => true,
  );
}

/** Index of the tuple whose every QI is `*`, or -1. */
function tupleOfStars(columns: Int32Array[], qis: EncodedColumn[]): number {
  const star = qis.map((q) => q.dictionary.indexOf(SUPPRESSED));
  if (star.some((c) => c < 0)) return -1;
  const count = columns[0]?.length ?? 0;
  for (let t = 0; t < count; t++) if (columns.every((col, i) => col[t] === star[i])) return t;
  return -1;
}

/**
 * NCP read from the released strings (src/metrics/label-loss.ts): a cell holding an original
 * value loses 0, `*` loses 1, a hierarchy label (covering c of the attribute's d original
 * values) (c − 1)/(d − 1), a numeric range `[lo-hi]` (also `[lo, hi[` and `lo-hi`)
 * (hi − lo)/(max − min) of the original numbers; a removed row's cells lose 1 each. The mean is
 * over every cell of the original's rows (docs/definitions.md): a cell no rule explains counts
 * 0 there, so with `unmeasuredCells` the NCP is a lower bound. Each distinct string is measured once.
 */
function informationLoss(
  qis: EncodedColumn[],
  original: EncodedTable,
  removedRows: number,
  hierarchies: ReadonlyMap<string, string[][]> | undefined,
  column: (t: EncodedTable, name: string, what: string) => EncodedColumn,
): { ncp: number; ncpByAttribute: Record<string, number>; unmeasuredCells: number } {
  let total = 0;
  let unmeasured = 0;
  const ncpByAttribute = emptyRecord<number>();
  for (const q of qis) {
    const base = column(original, q.name, 'the original table');
    const present = new Uint8Array(base.dictionary.length);
    for (const c of base.codes) present[c] = 1;
    const values = base.dictionary.filter((_, c) => present[c]);
    const loss = q.dictionary.map(labelLoss(values, hierarchies?.get(q.name)));
    let sum = removedRows;
    for (const code of q.codes) {
      const l = loss[code];
      if (l === null || l === undefined) unmeasured++;
      else sum += l;
    }
    const rows = q.codes.length + removedRows;
    ncpByAttribute[q.name] = rows > 0 ? sum / rows : 0;
    total += sum;
  }
  const cells = qis.length * ((qis[0]?.codes.length ?? 0) + removedRows);
  return { ncp: cells > 0 ? total / cells : 0, ncpByAttribute, unmeasuredCells: unmeasured };
}

/**
 * A model of the release as a whole (average risk, k-map): measured over the released classes.
 * A model that needs its population table (k-map with a table, δ-presence) is not measured
 * here: the table's records would have to be generalized as the release was.
 */
function releaseModel(
  model: PrivacyModelSpec,
  params: Record<string, unknown>,
  sizes: readonly number[],
  rows: number,
): NonNullable<Evaluation['models']>[number] {
  const base = { model: model.model, params: params as Record<string, number | string> };
  if (isPopulationModel(model))
    return { ...base, satisfied: false, measured: false, worst: Number.NaN, classesFailing: 0 };
  let satisfied = false;
  const classes = sizes.map((size, i) => ({ key: String(i), size }));
  checkReleaseModels([model], classes, undefined, rows, (_, passed) => {
    satisfied = passed;
  });
  const released = sizes.reduce((a, b) => a + b, 0);
  const smallest = sizes.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  return {
    ...base,
    satisfied,
    // Average risk: classes per released row; estimated k-map: the smallest class.
    worst: needs(model, 'whole-release') ? sizes.length / released : smallest,
    classesFailing: 0,
  };
}
