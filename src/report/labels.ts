/**
 * Human names and one-line meanings for every key of report.json the HTML page shows, so a
 * reader never meets a raw JSON key. A key missing here is humanized (`fooBar` → `foo bar`).
 */
import { humanize } from './format.ts';

export interface Label {
  name: string;
  meaning: string;
}

/** Utility measures, keyed as in `report.utility` (and the metric names methods report). */
export const UTILITY_LABELS: Record<string, Label> = {
  ncp: {
    name: 'NCP (information loss)',
    meaning: 'Average normalized certainty penalty per cell: 0 = original data, 1 = everything suppressed.',
  },
  discernibility: {
    name: 'Discernibility',
    meaning: 'Sum of squared equivalence class sizes, plus N for each suppressed row; lower is better.',
  },
  precision: {
    name: 'Precision loss',
    meaning: "Sweeney's precision loss: average generalization level relative to hierarchy height (0 to 1).",
  },
  aecs: {
    name: 'Average class size (AECS)',
    meaning: 'Average equivalence class size relative to k; 1 is the ideal.',
  },
  loss: {
    name: 'Loss (as in ARX)',
    meaning:
      'Information loss with each domain counted over its hierarchy (suppression weighed by the gs-factor), averaged over the quasi-identifiers: 0 = original data, 1 = everything suppressed.',
  },
  entropy: {
    name: 'Entropy loss',
    meaning: 'Non-uniform entropy loss in bits: information removed by generalization.',
  },
  kl: {
    name: 'KL divergence',
    meaning:
      'Kullback–Leibler divergence of the distribution reconstructed from the release from the original, in nats: 0 = identical; higher = further apart, with no upper bound.',
  },
  klFullJoint: {
    name: 'KL divergence, full joint',
    meaning:
      'The same divergence over the joint distribution of every released attribute together, in nats: 0 = identical; higher = further apart.',
  },
  chi2: {
    name: 'χ² distance',
    meaning:
      'χ² distance Σ(π − π̂)²/π between the original and the reconstructed distributions, summed over cells: 0 = identical; higher = further apart, with no upper bound.',
  },
  queryErrorBase: {
    name: 'Query error (all attributes)',
    meaning:
      'Average relative error of count queries over every released attribute at once, answered from the release, as a share of the true count: 0 = exact; 0.1 = off by 10 % on average; higher = less accurate.',
  },
  queryErrorCube: {
    name: 'Query error (every subset)',
    meaning:
      'Average relative error of count queries over every subset of the attributes (the CUBE), answered from the release, as a share of the true count: 0 = exact; 0.1 = off by 10 % on average.',
  },
  cubeCells: {
    name: 'Cells the query error averages over',
    meaning: 'Non-empty cells of every group-by in the CUBE workload.',
  },
  'expected-squared-error': {
    name: 'Expected squared error of the reconstruction',
    meaning:
      'E‖π̂ − π‖²: how far, on average, the contingency table an analyst reconstructs is from the true one; lower is better.',
  },
  objective: {
    name: 'Optimizer objective',
    meaning: 'The value the randomization optimizer minimized when it chose the retention probabilities.',
  },
  uncertaintyQiQi: {
    name: 'Association between quasi-identifiers',
    meaning:
      'Mean uncertainty coefficient over pairs of quasi-identifiers (0 = independent, 1 = one determines the other).',
  },
  uncertaintyQiSa: {
    name: 'Association of quasi-identifiers with the sensitive attribute',
    meaning: 'Mean uncertainty coefficient between each quasi-identifier and the sensitive attribute.',
  },
};

/** Metric names that differ from their measure's key in `report.utility`. */
const METRIC_ALIASES: Record<string, string> = { 'kl-divergence': 'kl' };

export function utilityLabel(key: string): Label {
  return (
    knownUtilityLabel(key) ?? {
      name: humanize(METRIC_ALIASES[key] ?? key),
      meaning: 'Method-specific utility measure; see the documentation of the release method.',
    }
  );
}

/** The label of a utility measure ppdp names, or undefined for another key (a note, a method's own figure). */
export function knownUtilityLabel(key: string): Label | undefined {
  const k = METRIC_ALIASES[key] ?? key;
  return (
    UTILITY_LABELS[k] ??
    UTILITY_LABELS[Object.keys(UTILITY_LABELS).find((x) => x.toLowerCase() === k.toLowerCase()) ?? '']
  );
}

/** The key under which `report.utility` holds the metric's value (e.g. `kl` for `kl-divergence`). */
export function metricKey(metric: string): string {
  return METRIC_ALIASES[metric] ?? metric;
}

/** What a model achieved, keyed as in `ModelResult.achieved`. */
export const ACHIEVED_LABELS: Record<string, string> = {
  k: 'smallest class',
  l: 'l of the worst class',
  t: 't of the worst class',
  delta: 'δ of the worst class',
  c: 'c',
  maxRisk: 'highest per-row risk',
  meanRisk: 'mean per-row risk',
  tau: 'bound τ',
  maxP: 'largest chance of one sensitive value for a tuple',
  bucketDistinctL: 'fewest distinct sensitive values in a bucket',
  gamma: 'γ (amplification) of the matrix',
  impliedRho2: 'posterior bound ρ2 it implies',
  worstUpwardPosterior: 'worst posterior of a rare property',
  worstDownwardPosterior: 'worst posterior of a common property',
  averageRisk: 'average re-identification risk of the released rows',
  populationMatches: 'fewest population records a class matches',
  minPresence: 'lowest share of a class’s population in the input',
  maxPresence: 'highest share of a class’s population in the input',
  estimatedClassSize: 'class size that stands for k people of the estimated population',
};

/** Attribute-disclosure measures of `privacy.disclosure[attribute].release`. */
export const DISCLOSURE_LABELS: Record<string, Label> = {
  distinctL: { name: 'Distinct l', meaning: 'Fewest distinct sensitive values in a released class.' },
  entropyL: {
    name: 'Entropy l',
    meaning: 'exp(entropy) of the least diverse class: the number of equally likely values it amounts to.',
  },
  t: {
    name: 't (closeness)',
    meaning:
      'Largest distance between a class’s sensitive distribution and the overall one (0 = identical, 1 = disjoint).',
  },
  delta: {
    name: 'δ (disclosure)',
    meaning:
      'Largest |ln(class share / overall share)| of a value present in a class: how much a class shifts belief.',
  },
  knowledgeGain: {
    name: 'Knowledge gain',
    meaning:
      'Mean Jensen–Shannon divergence between a row’s class distribution and the overall one (0 = nothing learnt).',
  },
  accuracyGain: {
    name: 'Accuracy gain',
    meaning:
      'How much more often an attacker guesses the sensitive value right than from the overall distribution alone.',
  },
};

/** The columns of the disclosure table: the release and the two trivial sanitizations. */
export const DISCLOSURE_BASELINES: [key: string, name: string][] = [
  ['release', 'This release'],
  ['qisWithheld', 'QIs withheld'],
  ['saWithheld', 'Sensitive attribute withheld'],
];

export const ACCURACY_LABELS: Record<string, string> = {
  release: 'from this release',
  qisWithheld: 'with the quasi-identifiers withheld',
  saWithheld: 'with the sensitive attribute withheld (a uniform guess)',
  original: 'from the original data',
};

export function achievedLabel(key: string): string {
  return ACHIEVED_LABELS[key] ?? humanize(key);
}
