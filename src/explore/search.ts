/**
 * The explorer's view of a best-effort search (a lattice past what the optimal search
 * enumerates, or a spec that sets method.nodeBudget or method.timeLimit): the spec's own run's
 * trajectory — its best value and proved bound as nodes were checked — and how to continue it.
 * A page cannot search; continuing is running again with a larger budget: under a node budget
 * the search is reproducible for a seed, so a larger one retraces it and goes on from where it
 * stopped. `ppdp explore … --node-budget N --time-limit S` does that and draws the longer
 * trajectory; the spec change does it for a release.
 */
import { PpdpError } from '../errors.ts';
import { DEFAULT_NODE_BUDGET, DEFAULT_TIME_LIMIT_S } from '../methods/generalization/index.ts';
import type { MethodReport } from '../methods/method.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';
import { esc, fmtInt, fmtNum } from '../report/format.ts';
import { note } from '../report/markup.ts';
import { STOPS, type Trajectory, trajectoryChart } from '../report/search-progress.ts';
import type { Vary } from './frontier.ts';

export interface SearchView {
  readonly metric: string;
  readonly value: number;
  readonly lowerBound: number;
  readonly gap: number;
  readonly stoppedBy: string;
  readonly nodesChecked: number;
  readonly latticeSize: number;
  /** The budget the run had (the spec's, or the defaults). */
  readonly nodeBudget: number;
  readonly timeLimit: number;
  readonly trajectory: Trajectory;
  /** A budget twice as large and what runs it, when a budget stopped the search. */
  readonly more?: {
    readonly nodeBudget: number;
    readonly timeLimit: number;
    readonly explore: string;
    readonly specChange: Record<string, unknown>;
    readonly release: string;
  };
}

/** The spec with `--node-budget` / `--time-limit` as its method's (full-domain generalization only). */
export function withSearchBudget(spec: ReleaseSpec, nodeBudget?: string, timeLimit?: string): ReleaseSpec {
  if (nodeBudget === undefined && timeLimit === undefined) return spec;
  if (spec.method.name !== 'generalization') {
    throw new PpdpError(
      'E_USAGE',
      `--node-budget and --time-limit set the lattice search of full-domain generalization; the spec's method is ${spec.method.name}`,
      'leave them out for this spec',
    );
  }
  const budget = nodeBudget === undefined ? undefined : Number(nodeBudget);
  if (budget !== undefined && !(Number.isSafeInteger(budget) && budget >= 1)) {
    throw new PpdpError('E_USAGE', '--node-budget must be a whole number ≥ 1', 'e.g. --node-budget 40000');
  }
  const seconds = timeLimit === undefined ? undefined : Number(timeLimit);
  if (seconds !== undefined && !(Number.isFinite(seconds) && seconds > 0)) {
    throw new PpdpError('E_USAGE', '--time-limit must be a number of seconds > 0', 'e.g. --time-limit 60');
  }
  return {
    ...spec,
    method: {
      ...spec.method,
      ...(budget !== undefined ? { nodeBudget: budget } : {}),
      ...(seconds !== undefined ? { timeLimit: seconds } : {}),
    },
  };
}

/** The view of the spec's own run, when it searched best-effort (its report has a trajectory). */
export function searchView(
  spec: ReleaseSpec,
  report: MethodReport,
  varies: readonly Vary[],
  specPath: string,
): SearchView | undefined {
  const g = report.generalization;
  if (spec.method.name !== 'generalization' || !g?.trajectory || g.trajectory.length === 0) return undefined;
  const nodeBudget = spec.method.nodeBudget ?? DEFAULT_NODE_BUDGET;
  const timeLimit = spec.method.timeLimit ?? DEFAULT_TIME_LIMIT_S;
  const stoppedBy = g.stoppedBy ?? 'optimal';
  const budgetStop = stoppedBy === 'node budget' || stoppedBy === 'time limit';
  const more = { nodeBudget: 2 * nodeBudget, timeLimit: 2 * timeLimit };
  const vary = varies.map((v) => `--vary ${v.parameter}=${v.values.join(',')}`).join(' ');
  return {
    metric: report.utility.metric,
    value: report.utility.value,
    lowerBound: g.lowerBound ?? report.utility.value,
    gap: g.gap ?? 0,
    stoppedBy,
    nodesChecked: g.nodesChecked,
    latticeSize: g.latticeSize,
    nodeBudget,
    timeLimit,
    trajectory: g.trajectory,
    ...(budgetStop
      ? {
          more: {
            ...more,
            explore: `ppdp explore ${specPath} ${vary} --node-budget ${more.nodeBudget} --time-limit ${more.timeLimit}`,
            specChange: { method: more },
            release: `ppdp release ${specPath} --out out/release`,
          },
        }
      : {}),
  };
}

/** explore.html's section: the trajectory's chart, where the search stopped, and how to continue it. */
export function searchSection(view: SearchView): string {
  const facts = [
    `${esc(view.metric)} ${fmtNum(view.value)}; the optimum is ≥ ${fmtNum(view.lowerBound)} (gap ≤ ${fmtNum(100 * view.gap)} %)`,
    `${fmtInt(view.nodesChecked)} of ${fmtInt(view.latticeSize)} nodes checked, with a budget of ${fmtInt(view.nodeBudget)} nodes and ${fmtNum(view.timeLimit)} s`,
    `stopped ${STOPS[view.stoppedBy] ?? view.stoppedBy}`,
  ];
  const more = view.more;
  const next = more
    ? `<h3>Continue the search</h3>
<p class="meaning">A page cannot search. Under a node budget the search is reproducible for the spec's seed: run with a larger budget, it retraces this search and goes on from where it stopped (a time limit that stops it first makes the result depend on the machine's speed). This explorer again, with twice the budget:</p>
<pre class="snippet">${esc(more.explore)}</pre>
<p class="meaning">To release with it, set in the spec:</p>
<pre class="snippet">${esc(JSON.stringify(more.specChange))}</pre>
<p class="meaning">then:</p>
<pre class="snippet">${esc(more.release)}</pre>`
    : note(
        view.stoppedBy === 'converged'
          ? 'A larger budget would not change the result: the search ran out of new nodes to try before its budget.'
          : 'The search proved its node optimal: there is nothing left to search.',
      );
  return `<section id="search-progress" aria-labelledby="search-h"><h2 id="search-h">Best-effort search</h2>
<p class="meaning">The lattice has ${fmtInt(view.latticeSize)} nodes: the spec's own run searched it best-effort. Its best value only falls and its proved bound only rises; the gap between them is how far its node may be from the optimum.</p>
<ul>${facts.map((f) => `<li>${f}</li>`).join('')}</ul>
${trajectoryChart(view.trajectory, view.metric)}
${next}
</section>`;
}
