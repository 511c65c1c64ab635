/**
 * Reads a table a command was pointed at. A CSV that a ppdp release wrote with formula escaping
 * (its report.json, in the same folder, says so) is read back as the values it holds: the
 * leading `'` of each escaped cell dropped (see docs/release-spec.md, CSV formulas).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { readReport } from '../contracts/report.ts';
import { unescapeFormulas } from '../data/csv.ts';
import { formatOf, type ReadTableOptions, readTable } from '../data/read.ts';
import type { EncodedTable } from '../data/table.ts';

export function readReleasedTable(path: string, options: ReadTableOptions = {}): EncodedTable {
  const table = readTable(path, options);
  return (options.format ?? formatOf(path)) === 'csv' && escapedRelease(path)
    ? unescapeFormulas(table)
    : table;
}

/**
 * Whether the release folder holding `csv` escaped its CSV cells (false when it is no release).
 * A report.json beside it is read as a release's report: one of another format is refused.
 */
function escapedRelease(csv: string): boolean {
  const report = join(dirname(csv), 'report.json');
  if (!existsSync(report)) return false;
  let json: unknown;
  try {
    json = JSON.parse(readFileSync(report, 'utf8'));
  } catch {
    return false; // not a release's report: the table is read as it is
  }
  return readReport(json, report).spec.escapeFormulas === true;
}
