/**
 * The shape of `report.json`. Keys named in the issues and SPEC are the user's contract:
 * add fields, never rename these.
 */
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

export interface VerificationCheck {
  name: string;
  passed: boolean;
  detail: string;
}

export interface ReleaseReport {
  ppdp: { version: string; runId: string };
  spec: {
    file: string;
    method: string;
    seed: number;
    maxSuppression: number;
    suppressed: 'mask' | 'remove';
  };
  input: {
    file: string;
    columns: { name: string; type: string; distinct: number }[];
  };
  rows: { input: number; released: number; suppressed: number };
  generalization: {
    strategy: string;
    /** QI name → chosen level. */
    node: Record<string, number>;
    /** QI name → hierarchy height. */
    heights: Record<string, number>;
    latticeSize: number;
    nodesChecked: number;
    /** Distinct QI tuples the search grouped (rows are collapsed first). */
    distinctTuples: number;
  };
  privacy: {
    satisfied: boolean;
    models: ModelResult[];
    /** Smallest retained EC. */
    k: number;
    /** Number of retained ECs. */
    classes: number;
    ecSizeHistogram: HistogramBin[];
    prosecutorRisk: {
      max: number;
      mean: number;
      /** Share of released rows whose risk exceeds `threshold`. */
      threshold: number;
      shareAbove: number;
    };
  };
  utility: {
    metric: string;
    value: number;
    ncp: number;
    discernibility: number;
    precision: number;
    aecs: number;
    entropy: number;
  };
  verification: { verified: boolean; checks: VerificationCheck[] };
  /** Wall time per phase in ms. Excluded from byte comparisons between runs. */
  timings: Record<string, number>;
}
