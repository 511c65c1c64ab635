/** The Adult configurations whose optimum is pinned by the golden table (issue: foundation). */
import type { MetricName } from '../../src/spec/spec.ts';

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
