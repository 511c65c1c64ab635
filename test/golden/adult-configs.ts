/** The Adult configurations whose optimum is pinned by the golden table (issue: foundation). */
import type { MetricName } from '../../src/release-spec/spec.ts';

export const ADULT_SPEC = new URL('../../examples/adult/release.json', import.meta.url).pathname;
export const KS = [2, 5, 10, 50] as const;
export const SUPPRESSIONS = [0, 0.02, 0.05] as const;
export const METRICS: readonly MetricName[] = ['ncp', 'discernibility'];

export interface GoldenRow {
  k: number;
  maxSuppression: number;
  metric: MetricName;
  node: Record<string, number>;
  value: number;
  suppressedRows: number;
  feasibleNodes: number;
}

/** The privacy-model configurations of the acceptance grid (k = 5 with one SA model each). */
export const PRIVACY_CONFIGS = [
  {
    name: 'distinct l=3',
    model: { model: 'distinct-l-diversity', attribute: 'occupation', l: 3 },
    maxSuppression: 0,
  },
  {
    name: 'distinct l=3',
    model: { model: 'distinct-l-diversity', attribute: 'occupation', l: 3 },
    maxSuppression: 0.02,
  },
  {
    name: 'entropy l=3',
    model: { model: 'entropy-l-diversity', attribute: 'occupation', l: 3 },
    maxSuppression: 0.02,
  },
  {
    name: 'recursive c=3 l=3',
    model: { model: 'recursive-cl-diversity', attribute: 'occupation', c: 3, l: 3 },
    maxSuppression: 0.02,
  },
  {
    name: 'equal t=0.2',
    model: { model: 't-closeness', attribute: 'occupation', t: 0.2, distance: 'equal' },
    maxSuppression: 0,
  },
  {
    name: 'equal t=0.2',
    model: { model: 't-closeness', attribute: 'occupation', t: 0.2, distance: 'equal' },
    maxSuppression: 0.02,
  },
  {
    name: 'hierarchical t=0.2',
    model: { model: 't-closeness', attribute: 'occupation', t: 0.2, distance: 'hierarchical' },
    maxSuppression: 0.05,
  },
  {
    name: 'delta=1.2',
    model: { model: 'delta-disclosure', attribute: 'occupation', delta: 1.2 },
    maxSuppression: 0.05,
  },
  {
    name: 'delta=2.0',
    model: { model: 'delta-disclosure', attribute: 'occupation', delta: 2.0 },
    maxSuppression: 0.05,
  },
] as const;

export const K_MINIMAL_KS = [2, 5, 10] as const;
export const K_MINIMAL_SUPPRESSIONS = [0, 0.02] as const;

export interface PrivacyGoldenRow {
  name: string;
  maxSuppression: number;
  node: Record<string, number>;
  value: number;
  suppressedRows: number;
}

export interface KMinimalGoldenRow {
  k: number;
  maxSuppression: number;
  /** Every k-minimal node as a level vector, in lattice order. */
  kMinimal: number[][];
}
