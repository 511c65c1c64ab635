/**
 * A best-effort search's progress (report.json's `generalization.trajectory`): its best value
 * and its proved lower bound on the optimum, step by step as nodes were checked. Drawn in
 * report.html and in explore.html.
 */
import type { ReleaseReport } from '../contracts/report.ts';
import { PALETTE, stepChart } from './charts.ts';
import { fmtInt, fmtNum } from './format.ts';
import { note, section } from './markup.ts';

export type Trajectory = NonNullable<NonNullable<ReleaseReport['generalization']>['trajectory']>;

/** Why a search stopped, as the end of "The search stopped …". */
export const STOPS: Record<string, string> = {
  optimal: 'once its bound proved the node optimal',
  converged: 'having converged (its local search found no new node to try)',
  'node budget': 'at its node budget (method.nodeBudget)',
  'time limit': 'at its time limit (method.timeLimit)',
};

/** The chart: the best value and the bound against the nodes checked (wall time on hover). */
export function trajectoryChart(trajectory: Trajectory, metric: string): string {
  const nodes = (i: number) => trajectory[i]!.nodesChecked;
  return stepChart({
    title: `Best ${metric} found and the proved bound on the optimum, by nodes checked`,
    series: [
      { name: `best ${metric}`, color: PALETTE[0]!, points: trajectory.map((p) => [p.nodesChecked, p.best]) },
      {
        name: 'optimum ≥ (proved bound)',
        color: PALETTE[1]!,
        points: trajectory.map((p) => [p.nodesChecked, p.bound]),
        dashed: true,
      },
    ],
    xAxis: 'nodes checked',
    yAxis: metric,
    hover: (_, i) => `${fmtInt(nodes(i))} nodes, ${fmtNum(trajectory[i]!.ms / 1000)} s`,
  });
}

/** report.html's section: the chart and how to read it (nothing when the search was not best-effort). */
export function renderSearchProgress(report: ReleaseReport): string {
  const g = report.generalization;
  if (!g?.trajectory || g.trajectory.length === 0) return '';
  const last = g.trajectory.at(-1)!;
  return section(
    'search-progress',
    'Search progress',
    `${trajectoryChart(g.trajectory, report.utility.metric)}\n${note(
      `The best value only falls and the bound only rises; the gap between them is how far the released node may be from the optimum. ` +
        `The search stopped ${STOPS[g.stoppedBy ?? ''] ?? 'at its end'} after ${fmtInt(last.nodesChecked)} nodes and ${fmtNum(last.ms / 1000)} s. ` +
        'Under a node budget the search is reproducible: a larger method.nodeBudget (and method.timeLimit) retraces it and goes on.',
    )}`,
  );
}
