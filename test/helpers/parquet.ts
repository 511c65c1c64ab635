/** Parquet fixtures written in tests (hyparquet-writer, SNAPPY). */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ColumnSource, parquetWriteBuffer } from 'hyparquet-writer';

export function writeParquet(path: string, columnData: ColumnSource[], rowGroupSize = 1000): void {
  writeFileSync(path, new Uint8Array(parquetWriteBuffer({ columnData, rowGroupSize })));
}

/** Adult's rows as columns: age as INT32, the rest as strings. */
export function adultColumns(csv: string): { header: string[]; rows: string[][] } {
  const [head, ...lines] = csv.trimEnd().split('\n');
  return { header: head!.split(';'), rows: lines.map((l) => l.split(';')) };
}

export function adultParquet(path: string, header: string[], rows: string[][], rowGroupSize: number): void {
  writeParquet(
    path,
    header.map((name, i) =>
      name === 'age'
        ? { name, data: Int32Array.from(rows, (r) => Number(r[i])), type: 'INT32', nullable: false }
        : { name, data: rows.map((r) => r[i]!), type: 'STRING', nullable: false },
    ),
    rowGroupSize,
  );
}

/**
 * A folder `name` in `dir` holding Adult's rows as Parquet files cut at `cuts` (row indexes),
 * each in row groups of `rowGroupSize` rows.
 */
export function adultParquetFolder(
  dir: string,
  name: string,
  csv: string,
  cuts: number[],
  rowGroupSize: number,
): void {
  const { header, rows } = adultColumns(csv);
  mkdirSync(join(dir, name));
  const bounds = [0, ...cuts, rows.length];
  for (let k = 0; k + 1 < bounds.length; k++) {
    const part = rows.slice(bounds[k], bounds[k + 1]);
    adultParquet(join(dir, name, `part-${String(k).padStart(5, '0')}.parquet`), header, part, rowGroupSize);
  }
}
