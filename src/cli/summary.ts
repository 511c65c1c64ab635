/**
 * The CLI's one-line summary of a release's k and suppression: with an entity column (several
 * rows per person) k counts persons and says so, and the persons with a suppressed row follow
 * the rows (docs/definitions.md, "Several rows per person").
 */
import type { ReleaseReport } from '../contracts/report.ts';
import { counted, thousands } from '../util/format.ts';

/** "k = N, " (or "k = N persons, "), or nothing when the release has no k. */
export function kSummary(report: Pick<ReleaseReport, 'privacy' | 'persons'>): string {
  if (report.privacy.k === undefined) return '';
  return `k = ${thousands(report.privacy.k)}${report.persons ? ' persons' : ''}, `;
}

/** "N rows suppressed", with " (P persons)" after it with an entity column; counts as 1,234. */
export function suppressedSummary(report: Pick<ReleaseReport, 'rows' | 'persons'>): string {
  const persons = report.persons ? ` (${counted(report.persons.suppressed, 'person')})` : '';
  return `${counted(report.rows.suppressed, 'row')} suppressed${persons}`;
}
