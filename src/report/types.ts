/**
 * The shape of `report.json`. Its keys are the user's contract: add fields, never rename these.
 */
import type { PopulationUniqueness } from '../metrics/population-risk.ts';

export interface ModelResult {
  /** Spec name, e.g. `k-anonymity`, `distinct-l-diversity`. */
  model: string;
  /** The parameters as given in the spec (k, l, t, attribute, …). */
  params: Record<string, number | string>;
  satisfied: boolean;
  /** The value actually achieved on the release (worst EC), e.g. `{ k: 7 }`. */
  achieved: Record<string, number>;
  /** Whether the search may prune with this model (monotonic under suppression). */
  monotonic: boolean;
}

export interface HistogramBin {
  /** Human label, e.g. `5`, `6–10`, `101+`. */
  label: string;
  /** Smallest EC size in the bin (inclusive). */
  from: number;
  /** Largest EC size in the bin (inclusive); `null` for an open-ended last bin. */
  to: number | null;
  classes: number;
  rows: number;
}

/** How a per-row risk is spread over the released rows. */
export interface RiskDistribution {
  threshold: number;
  max: number;
  /** Mean over released rows. */
  mean: number;
  /** Share of released rows whose risk exceeds `threshold`. */
  shareAbove: number;
  rows: number;
  /** Rows per risk bin (from, to]; the threshold is always a bin edge. */
  bins: { from: number; to: number; rows: number }[];
}

/** Re-identification risk by linkage on what the release shows of each row. */
export interface Reidentification {
  /** What rows are grouped by (e.g. the generalized quasi-identifiers). */
  basis: string;
  threshold: number;
  /** 1/|E| for a row in a group of |E| rows. */
  prosecutor: RiskDistribution;
  /** Needs a population table; with none the sample is the population and it equals prosecutor risk. */
  journalist: RiskDistribution;
  population: 'sample';
  /** Expected share of rows re-identified when an attacker matches every row: groups / rows. */
  marketer: number;
}

/**
 * A sensitive attribute's value shares over the whole table and in the class that reveals most,
 * values ordered by their overall share (largest first) and never named: reports hold aggregates only.
 */
export interface SensitiveDistribution {
  attribute: string;
  overall: number[];
  /** The class with the largest share of one value (the most confident guess an attacker can make). */
  worstClass: number[];
  worstClassSize: number;
}

/**
 * One attribute's marginal: the input's shares and what an analyst reconstructs from the release,
 * values ordered by their input share (largest first) and never named.
 */
export interface MarginalComparison {
  attribute: string;
  original: number[];
  reconstructed: number[];
}

export interface VerificationCheck {
  name: string;
  passed: boolean;
  detail: string;
}

/** A method-specific block for a person: rendered as a facts table (and an optional bar chart). */
export interface ReportSection {
  title: string;
  facts: [string, string | number][];
  note?: string;
  /** Optional bars, e.g. per-attribute retention; the axes are named by `x` and `y`. */
  chart?: { title: string; x: string; y: string; bars: { label: string; value: number }[] };
}

export type CautionCause =
  | 'keeps-nothing'
  | 'unique-with-unchanged-column'
  | 'sensitive-revealed'
  | 'not-audited';

export interface Caution {
  cause: CautionCause;
  /** The column the caution is about, when one is. */
  column?: string;
  /** The measured figure: NCP, share of unique rows, or the revealing share. */
  value?: number;
  /** Rows concerned (unique rows, or the revealing class's size). */
  rows?: number;
  message: string;
}

export interface ReleaseAudit {
  /** Every released column whose values are the input's, unchanged. */
  unchanged: string[];
  /** Whether the staged rows were measured (a release in parts is not). */
  measured: boolean;
  thresholds: { keepsNothingNcp: number; uniqueRowsAllowed: number; revealShare: number };
  /** The classes over the released rows, and the mean NCP of their quasi-identifier cells. */
  classes?: number;
  ncp?: number;
  cautions: Caution[];
}

/** What the report says of the release as a whole: red unless verified, amber on a caution. */
export type VerdictLevel = 'verified' | 'caution' | 'not-verified';

export interface ReleaseReport {
  ppdp: { version: string; runId: string };
  spec: {
    file: string;
    method: string;
    seed: number;
    /** Generalization only. */
    maxSuppression?: number;
    suppressed?: 'mask' | 'remove';
    /** Whether the release's CSV cells are formula-escaped (the spec's `format.escapeFormulas`). */
    escapeFormulas?: boolean;
  };
  input: {
    file: string;
    /** `distinct` is absent for identifying columns: they are dropped as read, never counted. */
    columns: { name: string; type: string; distinct?: number }[];
  };
  rows: { input: number; released: number; suppressed: number };
  /** Full-domain generalization only. */
  generalization?: {
    strategy: string;
    /** QI name → chosen level. */
    node: Record<string, number>;
    /** QI name → hierarchy height. */
    heights: Record<string, number>;
    latticeSize: number;
    nodesChecked: number;
    /** Distinct combinations of the quasi-identifiers' values in the input (the search's bottom classes). */
    distinctTuples: number;
    /** With strategy k-minimal: every k-minimal node (QI name → level). */
    kMinimal?: Record<string, number>[];
    /** QI name → its NCP at the chosen node (suppressed cells count 1). */
    ncpByAttribute?: Record<string, number>;
  };
  privacy: {
    satisfied: boolean;
    models: ModelResult[];
    /** Smallest retained EC (partitioning methods). */
    k?: number;
    /** Number of retained ECs. */
    classes?: number;
    ecSizeHistogram?: HistogramBin[];
    prosecutorRisk?: {
      max: number;
      mean: number;
      /** Share of released rows whose risk exceeds `threshold`. */
      threshold: number;
      shareAbove: number;
    };
    /** Re-identification risk distribution (prosecutor, journalist, marketer) at `report.riskThreshold`. */
    reidentification?: Reidentification;
    /** With the spec's `report.population`: records unique in the population per model (docs/risk.md). */
    populationRisk?: PopulationUniqueness;
    /** Randomization: the per-row attribute-disclosure risk, against `report.riskThreshold`. */
    attributeRisk?: RiskDistribution;
    /** Per sensitive attribute: its value shares overall and in the class that reveals most. */
    sensitive?: SensitiveDistribution[];
    /** Attribute-disclosure measures and the trivial-sanitization baselines. */
    disclosure?: Record<string, unknown>;
  };
  /** `metric` and `value` name what the method optimized; every other entry is a measure. */
  utility: { metric: string; value: number; [measure: string]: number | string };
  /** Method-specific facts for a person. */
  sections?: ReportSection[];
  /** Method-specific machine-readable details (mondrian, anatomy, slicing, randomization…). */
  details?: Record<string, unknown>;
  verification: { verified: boolean; checks: VerificationCheck[] };
  /** The release audit (src/report/audit.ts): the columns released unchanged and the cautions. */
  audit?: ReleaseAudit;
  /** The verdict: `caution` names each cause (the audit's cautions). */
  verdict?: { level: VerdictLevel; causes: string[] };
  /** Wall time per phase in ms. Excluded from byte comparisons between runs. */
  timings: Record<string, number>;
}
