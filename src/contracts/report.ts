/**
 * The report contract: the shape of `report.json`, declared once. Its TypeScript type and its
 * validator both come from the declaration below, so they cannot drift. The release writes a
 * report only once it fits; `apply`, `evaluate` and `explore` read one back only through
 * `readReport`, which refuses another format by name.
 *
 * The keys are the users' contract: add fields (optional ones keep older reports readable),
 * never rename them; a changed meaning or a removed field takes a new `format`.
 */
import { PpdpError } from '../errors.ts';
import { type FieldKind, type Fields, type Shape, shapeProblem, type Writable } from './shape.ts';

export const REPORT_FORMAT = 'ppdp-report/1';

const opt = <const K extends FieldKind>(kind: K) => ({ optional: kind }) as const;
const obj = <const S extends Shape>(shape: S) => ({ object: shape }) as const;

const modelResultShape = {
  /** Spec name, e.g. `k-anonymity`, `distinct-l-diversity`. */
  model: 'string',
  /** The parameters as given in the spec (k, l, t, attribute, …). */
  params: { record: { either: ['number', 'string'] } },
  satisfied: 'boolean',
  /** The value actually achieved on the release (worst class), e.g. `{ k: 7 }`. */
  achieved: { record: 'number' },
  /** Whether the search may prune with this model (monotonic under suppression). */
  monotonic: 'boolean',
} as const satisfies Shape;

const histogramBinShape = {
  /** Human label, e.g. `5`, `6–10`, `101+`. */
  label: 'string',
  /** Smallest class size in the bin (inclusive). */
  from: 'count',
  /** Largest class size in the bin (inclusive); `null` for an open-ended last bin. */
  to: { nullable: 'count' },
  classes: 'count',
  /** The rows of the bin's classes. */
  rows: 'count',
  /** With an entity column the classes are sized in persons (`from`, `to`): the persons they hold, a person counted in each class they have rows in. */
  persons: opt('count'),
} as const satisfies Shape;

/** How a per-row risk is spread over the released rows. */
const riskDistributionShape = {
  threshold: 'number',
  max: 'number',
  /** Mean over released rows. */
  mean: 'number',
  /** Share of released rows whose risk exceeds `threshold`. */
  shareAbove: 'number',
  rows: 'count',
  /** Rows per risk bin (from, to]; the threshold is always a bin edge. */
  bins: { list: obj({ from: 'number', to: 'number', rows: 'count' }) },
} as const satisfies Shape;

/** Re-identification risk by linkage on what the release shows of each row. */
const reidentificationShape = {
  /** What rows are grouped by (e.g. the generalized quasi-identifiers). */
  basis: 'string',
  threshold: 'number',
  /** 1/|E| for a row in a group of |E| rows. */
  prosecutor: obj(riskDistributionShape),
  /** Needs a population table; with none the sample is the population and it equals prosecutor risk. */
  journalist: obj(riskDistributionShape),
  population: { oneOf: ['sample'] },
  /** Expected share of rows re-identified when an attacker matches every row: groups / rows. */
  marketer: 'number',
} as const satisfies Shape;

const UNIQUENESS_MODELS = ['pitman', 'zayatz', 'snb', 'dankar'] as const;
/**
 * A model's estimate; `uniques` and `share` are null when the model cannot be fitted to the
 * class sizes, with `notFitted` saying why (never reported as 0 uniques).
 */
const estimateShape = obj({
  uniques: { nullable: 'number' },
  share: { nullable: 'number' },
  notFitted: opt('string'),
});

/** Records unique in the population, per model (docs/risk.md). */
const populationUniquenessShape = {
  populationSize: 'number',
  samplingFraction: 'number',
  /** Records unique in the sample. */
  sampleUniques: 'count',
  /** Per model: the estimated number of records unique in the population and their share of it (null, with `notFitted`, when the model cannot be fitted). */
  estimates: obj({ pitman: estimateShape, zayatz: estimateShape, snb: estimateShape, dankar: estimateShape }),
  /** The model Dankar's rule chose, or null when no record is a sample unique. */
  dankarModel: { nullable: { oneOf: ['pitman', 'zayatz', 'snb'] } },
  /** With an entity column: the records are persons, a class's size its persons (docs/risk.md). */
  over: opt({ oneOf: ['persons'] }),
} as const satisfies Shape;

/**
 * A sensitive attribute's value shares over the whole table and in the class that reveals most,
 * values ordered by their overall share (largest first) and never named: reports hold aggregates only.
 */
const sensitiveDistributionShape = {
  attribute: 'string',
  overall: { list: 'number' },
  /** The class with the largest share of one value (the most confident guess an attacker can make). */
  worstClass: { list: 'number' },
  worstClassSize: 'count',
  /**
   * A numeric attribute's spread as widths (never values): overall range and IQR, and over the
   * released classes the narrowest range (with its class's rows), the median range, the smallest IQR.
   */
  numeric: opt(
    obj({
      range: 'number',
      iqr: 'number',
      classes: 'count',
      narrowestClassRange: 'number',
      narrowestClassSize: 'count',
      medianClassRange: 'number',
      smallestClassIqr: 'number',
    }),
  ),
} as const satisfies Shape;

const verificationCheckShape = {
  name: 'string',
  passed: 'boolean',
  detail: 'string',
} as const satisfies Shape;

/** A method-specific block for a person: rendered as a facts table (and an optional bar chart). */
const reportSectionShape = {
  title: 'string',
  facts: { list: { tuple: ['string', { either: ['string', 'number'] }] } },
  note: opt('string'),
  /** Optional bars, e.g. per-attribute retention; the axes are named by `x` and `y`; a bar with no value is null. */
  chart: opt(
    obj({
      title: 'string',
      x: 'string',
      y: 'string',
      bars: { list: obj({ label: 'string', value: { nullable: 'number' } }) },
    }),
  ),
} as const satisfies Shape;

const CAUTION_CAUSES = [
  'keeps-nothing',
  'unique-with-unchanged-column',
  'unique-with-unchanged-columns',
  'sensitive-revealed',
  'not-audited',
  'identity-unbounded',
  'released-unperturbed',
] as const;

const cautionShape = {
  cause: { oneOf: CAUTION_CAUSES },
  /** The column the caution is about, when one is. */
  column: opt('string'),
  /** The measured figure: NCP, share of unique rows, or the revealing share. */
  value: opt('number'),
  /** Rows concerned (unique rows, or the revealing class's size). */
  rows: opt('count'),
  message: 'string',
} as const satisfies Shape;

const releaseAuditShape = {
  /** Every released column whose values are the input's, unchanged. */
  unchanged: 'strings',
  /** Whether the staged rows were measured (a release in parts is not). */
  measured: 'boolean',
  thresholds: obj({ keepsNothingNcp: 'number', uniqueRowsAllowed: 'number', revealShare: 'number' }),
  /** The classes over the released rows, and the mean NCP of their quasi-identifier cells. */
  classes: opt('count'),
  ncp: opt('number'),
  /**
   * Every linkable unchanged column at once with the quasi-identifiers as released: the rows
   * unique on them, their share, and per column the rows that stop being unique when it alone is
   * left out (docs/definitions.md, "Joint uniqueness").
   */
  linkage: opt(
    obj({ columns: 'strings', uniqueRows: 'count', share: 'number', contributions: { record: 'number' } }),
  ),
  cautions: { list: obj(cautionShape) },
} as const satisfies Shape;

const VERDICT_LEVELS = ['verified', 'caution', 'not-verified'] as const;

const reportShape = {
  format: { oneOf: [REPORT_FORMAT] },
  ppdp: obj({ version: 'string', runId: 'string' }),
  spec: obj({
    file: 'string',
    method: 'string',
    seed: 'number',
    /** Generalization only. */
    maxSuppression: opt('number'),
    suppressed: opt({ oneOf: ['mask', 'remove'] }),
    /** Generalization only: how records in classes below k are protected (rows or cells). */
    suppression: opt({ oneOf: ['rows', 'cells'] }),
    /** Each quasi-identifier's hierarchy as a digest of its definition (src/report/spec-summary.ts). */
    hierarchies: opt({ record: 'string' }),
    /** Whether the release's CSV cells are formula-escaped (the spec's `format.escapeFormulas`). */
    escapeFormulas: opt('boolean'),
  }),
  input: obj({
    file: 'string',
    /** `distinct` is absent for identifying columns: they are dropped as read, never counted. */
    columns: { list: obj({ name: 'string', type: 'string', distinct: opt('count') }) },
  }),
  rows: obj({ input: 'count', released: 'count', suppressed: 'count' }),
  /**
   * With an entity column (several rows per person): the input's persons, those with a
   * suppressed row, and the fewest persons in a released class.
   */
  persons: opt(obj({ input: 'count', suppressed: 'count', smallestClass: 'count' })),
  /** Full-domain generalization only. */
  generalization: opt(
    obj({
      strategy: 'string',
      /** QI name → chosen level. */
      node: 'levels',
      /** QI name → hierarchy height. */
      heights: 'levels',
      latticeSize: 'number',
      nodesChecked: 'count',
      /** Distinct combinations of the quasi-identifiers' values in the input (the search's bottom classes). */
      distinctTuples: 'count',
      /** With strategy k-minimal: every k-minimal node (QI name → level). */
      kMinimal: opt({ list: 'levels' }),
      /** QI name → its NCP at the chosen node (suppressed cells count 1). */
      ncpByAttribute: opt({ record: 'number' }),
      /** 'optimal' (proved), or 'best-effort' (a lattice past enumeration, or a time limit / node budget). */
      search: opt('string'),
      /** A proved lower bound on the optimum's metric (the spec's metric). */
      lowerBound: opt('number'),
      /** (value − lowerBound) / value: how far the node may be from the optimum at most (0: optimal). */
      gap: opt('number'),
      /** Why a best-effort search stopped: 'optimal', 'node budget', 'time limit' or 'converged'. */
      stoppedBy: opt('string'),
      /**
       * A best-effort search's progress: a point each time its best value or its proved bound
       * improved, the last one its result (at most 200 points, thinned evenly). `ms` is wall
       * time and varies between runs, like `timings`; the rest is reproducible under a node budget.
       */
      trajectory: opt({
        list: obj({ ms: 'number', nodesChecked: 'count', best: 'number', bound: 'number' }),
      }),
      /**
       * With `method.suppression: "cells"`: the cells released as `*` (in all and per QI), the
       * rows they kept, the rows suppressed whole all the same (also in `rows.suppressed`), and
       * the cells row suppression would have taken at the node (its rows × the QIs).
       */
      cellSuppression: opt(
        obj({
          cells: 'count',
          perAttribute: 'levels',
          /** The quasi-identifiers in the order their cells are suppressed (least important first). */
          order: 'strings',
          protectedRows: 'count',
          fallbackRows: 'count',
          rowSuppressionCells: 'count',
        }),
      ),
    }),
  ),
  privacy: obj({
    satisfied: 'boolean',
    models: { list: obj(modelResultShape) },
    /** Smallest retained class (partitioning methods). */
    k: opt('count'),
    /** Number of retained classes. */
    classes: opt('count'),
    ecSizeHistogram: opt({ list: obj(histogramBinShape) }),
    prosecutorRisk: opt(obj({ max: 'number', mean: 'number', threshold: 'number', shareAbove: 'number' })),
    /** Re-identification risk distribution (prosecutor, journalist, marketer) at `report.riskThreshold`. */
    reidentification: opt(obj(reidentificationShape)),
    /** With the spec's `report.population`: records unique in the population per model (docs/risk.md). */
    populationRisk: opt(obj(populationUniquenessShape)),
    /** Randomization: the per-row attribute-disclosure risk, against `report.riskThreshold`. */
    attributeRisk: opt(obj(riskDistributionShape)),
    /** Per sensitive attribute: its value shares overall and in the class that reveals most. */
    sensitive: opt({ list: obj(sensitiveDistributionShape) }),
    /** Attribute-disclosure measures and the trivial-sanitization baselines. */
    disclosure: opt({ record: 'json' }),
  }),
  /**
   * `metric` and `value` name what the method optimized; every other entry is a measure, or a
   * note (a string): a measure left out holds `not measured: <why>` in place of its number.
   */
  utility: { object: { metric: 'string', value: 'number' }, rest: { either: ['number', 'string'] } },
  /** Method-specific facts for a person. */
  sections: opt({ list: obj(reportSectionShape) }),
  /** Method-specific machine-readable details (mondrian, anatomy, slicing, randomization…). */
  details: opt({ record: 'json' }),
  verification: obj({ verified: 'boolean', checks: { list: obj(verificationCheckShape) } }),
  /** The release audit: the columns released unchanged and the cautions. */
  audit: opt(obj(releaseAuditShape)),
  /** The verdict: `caution` names each cause (the audit's cautions). */
  verdict: opt(obj({ level: { oneOf: VERDICT_LEVELS }, causes: 'strings' })),
  /** Wall time per phase in ms. Excluded from byte comparisons between runs. */
  timings: { record: 'number' },
} as const satisfies Shape;

export type ReleaseReport = Writable<Fields<typeof reportShape>>;
export type ModelResult = Writable<Fields<typeof modelResultShape>>;
export type HistogramBin = Writable<Fields<typeof histogramBinShape>>;
export type RiskDistribution = Writable<Fields<typeof riskDistributionShape>>;
export type Reidentification = Writable<Fields<typeof reidentificationShape>>;
export type PopulationUniqueness = Writable<Fields<typeof populationUniquenessShape>>;
export type UniquenessModel = (typeof UNIQUENESS_MODELS)[number];
export type SensitiveDistribution = Writable<Fields<typeof sensitiveDistributionShape>>;
export type VerificationCheck = Writable<Fields<typeof verificationCheckShape>>;
export type ReportSection = Writable<Fields<typeof reportSectionShape>>;
export type CautionCause = (typeof CAUTION_CAUSES)[number];
export type Caution = Writable<Fields<typeof cautionShape>>;
export type ReleaseAudit = Writable<Fields<typeof releaseAuditShape>>;
export type VerdictLevel = (typeof VERDICT_LEVELS)[number];

/**
 * One attribute's marginal: the input's shares and what an analyst reconstructs from the release,
 * values ordered by their input share (largest first) and never named.
 */
export interface MarginalComparison {
  attribute: string;
  original: number[];
  reconstructed: number[];
}

/** The first field of `json` that does not fit the report's shape, or undefined. */
export function reportProblem(json: unknown): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'it is not a JSON object';
  const { format } = json as { format?: unknown };
  if (format !== REPORT_FORMAT) {
    const found =
      typeof format === 'string'
        ? `'${format.slice(0, 40)}'`
        : format === undefined
          ? 'missing'
          : 'not a string';
    return `its 'format' is ${found}, expected '${REPORT_FORMAT}'`;
  }
  return shapeProblem(json, reportShape, '', undefined, 'the report');
}

/** A report.json that does not fit the contract: E_REPORT_FORMAT. */
export class ReportFormatError extends PpdpError {}

/**
 * `json` (read from `source`) as a report, or ReportFormatError naming the source and the
 * first field that does not fit.
 */
export function readReport(json: unknown, source: string): ReleaseReport {
  const problem = reportProblem(json);
  if (problem) {
    throw new ReportFormatError(
      'E_REPORT_FORMAT',
      `${source} is not a ${REPORT_FORMAT} report: ${problem}`,
      'give the folder of a release made by this version of ppdp, or release it again with this version',
    );
  }
  return json as ReleaseReport;
}

/** Throws when a report about to be written does not fit its own contract (a bug, not bad input). */
export function assertReport(report: ReleaseReport): ReleaseReport {
  const problem = reportProblem(report);
  if (problem) throw new Error(`the report does not fit ${REPORT_FORMAT}: ${problem}`);
  return report;
}
