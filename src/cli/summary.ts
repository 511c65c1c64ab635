/**
 * The CLI's one-line summary of a release's k and suppression: with an entity column (several
 * rows per person) k counts persons and says so, and the persons with a suppressed row follow
 * the rows (docs/definitions.md, "Several rows per person").
 */
import type { ReleaseReport } from '../contracts/report.ts';

/** "k = N, " (or "k = N persons, "), or nothing when the release has no k. */
export function kSummary(report: Pick<ReleaseReport, 'privacy' | 'persons'>): string {
  if (report.privacy.k === undefined) return '';
  return `k = ${report.privacy.k}${report.persons ? ' persons' : ''}, `;
}

/** " (P persons)" after the suppressed rows with an entity column, else nothing. */
export function personsSuppressed(report: Pick<ReleaseReport, 'persons'>): string {
  return report.persons ? ` (${report.persons.suppressed} persons)` : '';
}
