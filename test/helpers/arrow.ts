/** Arrow fixtures written in tests: Adult's rows as one Arrow IPC file in record batches. */
import { writeFileSync } from 'node:fs';
import { Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import { encodeArrow } from '../../src/data/arrow.ts';
import { readTable } from '../../src/data/read.ts';

/**
 * Writes the rows of the CSV file `csv` to `path` as an Arrow IPC file (file format, one
 * dictionary per column), cut into record batches at the row indexes `cuts` (none: one batch).
 */
export function arrowInBatches(csv: string, path: string, cuts: readonly number[] = []): void {
  const table = readTable(csv);
  const one = tableFromIPC(
    encodeArrow(
      table.columns.map((c) => ({
        name: c.name,
        kind: 'dictionary',
        dictionary: c.dictionary,
        codes: c.codes,
      })),
    ),
  );
  const batch = one.batches[0]!;
  const ends = [...cuts, table.rowCount];
  const batches = ends.map((end, i) => batch.slice(i === 0 ? 0 : ends[i - 1]!, end));
  writeFileSync(path, tableToIPC(new Table(batches), 'file'));
}
