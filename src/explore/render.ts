/**
 * The frontier's data files: frontier.json (every point as computed) and frontier.csv (one
 * row per run, for spreadsheets). The page is explore.html (page.ts).
 */
import type { Frontier, FrontierPoint } from './frontier.ts';
import { REPEAT_CSV_COLUMNS } from './repeats-page.ts';

const CSV_COLUMNS: [string, (p: FrontierPoint) => string | number | undefined][] = [
  ['feasible', (p) => String(p.feasible)],
  ['classes', (p) => p.classes],
  ['k_achieved', (p) => p.kAchieved],
  ['suppressed_rows', (p) => p.suppressedRows],
  ['objective', (p) => p.objective?.name],
  ['objective_value', (p) => p.objective?.value],
  ['risk', (p) => p.risk?.name],
  ['risk_value', (p) => p.risk?.value],
  ['ncp', (p) => p.utility?.ncp],
  ['discernibility', (p) => p.utility?.discernibility],
  ['max_prosecutor_risk', (p) => p.maxProsecutorRisk],
  ['risk_threshold', (p) => p.riskThreshold],
  ['share_above_risk_threshold', (p) => p.shareAboveRisk],
  ['node', (p) => (p.node ? Object.values(p.node).join('/') : undefined)],
  ['ms', (p) => p.ms],
];

export function frontierJson(frontier: Frontier): string {
  return `${JSON.stringify(frontier, null, 2)}\n`;
}

/** One row per value; a spec whose release draws a secret sample gets its runs' aggregates instead. */
export function frontierCsv(frontier: Frontier): string {
  const columns = frontier.points.some((p) => p.repeats)
    ? [...REPEAT_CSV_COLUMNS, ...CSV_COLUMNS.filter(([name]) => name === 'feasible' || name === 'ms')]
    : CSV_COLUMNS;
  const header = [...frontier.parameters, ...columns.map(([name]) => name)].join(',');
  const lines = frontier.points.map((p) =>
    [...frontier.parameters.map((name) => p.values[name]), ...columns.map(([, get]) => get(p))]
      .map((v) => (v === undefined ? '' : String(v)))
      .join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}
