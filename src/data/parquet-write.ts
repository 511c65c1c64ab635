/**
 * The released table as Parquet (hyparquet-writer): dictionary columns as strings (the writer
 * chooses dictionary encoding or not), columns of values as bytes as their bytes PLAIN-encoded
 * (the writer writes a STRING's bytes as it would a string's, with no string made per value),
 * number columns as doubles, none nullable, SNAPPY, fixed row groups and writer name, so the same
 * columns always give the same bytes. The input reader (src/data/parquet.ts) reads it back as
 * the cells data.csv holds before formula escaping.
 */
import { ByteWriter, type ColumnSource, ParquetWriter, schemaFromColumnData } from 'hyparquet-writer';
import { type RawValues, rawLength } from './raw.ts';
import type { OutputColumn } from './table.ts';

/** Rows per row group of a released Parquet file. */
const ROW_GROUP_ROWS = 250_000;

/** Rows `[from, to)` of `raw`, each a view of its bytes. */
function rawViews(raw: RawValues, from: number, to: number): Uint8Array[] {
  const { offsets, bytes } = raw;
  const out = new Array<Uint8Array>(to - from);
  for (let r = from; r < to; r++) out[r - from] = bytes.subarray(offsets[r]!, offsets[r + 1]!);
  return out;
}

/** Rows `[from, to)` of the columns as the writer takes them. */
function slice(columns: readonly OutputColumn[], from: number, to: number): ColumnSource[] {
  return columns.map((col) =>
    col.kind === 'dictionary'
      ? {
          name: col.name,
          data: Array.from(col.codes.subarray(from, to), (code) => col.dictionary[code]!),
          type: 'STRING',
          nullable: false,
        }
      : col.kind === 'utf8'
        ? // No dictionary page: such a column (a note, a timestamp) has about as many values as rows.
          {
            name: col.name,
            data: rawViews(col.values, from, to),
            type: 'STRING',
            nullable: false,
            encoding: 'PLAIN',
          }
        : { name: col.name, data: col.values.subarray(from, to), type: 'DOUBLE', nullable: false },
  );
}

export function encodeParquet(columns: readonly OutputColumn[]): Uint8Array {
  const first = columns[0];
  const rows = !first
    ? 0
    : first.kind === 'dictionary'
      ? first.codes.length
      : first.kind === 'utf8'
        ? rawLength(first.values)
        : first.values.length;
  const writer = new ByteWriter();
  const parquet = new ParquetWriter({
    writer,
    schema: schemaFromColumnData({ columnData: slice(columns, 0, 0) }),
    codec: 'SNAPPY',
    createdBy: 'ppdp',
  });
  // One row group at a time: only its cells are ever held as strings.
  for (let from = 0; from < rows; from += ROW_GROUP_ROWS) {
    const to = Math.min(rows, from + ROW_GROUP_ROWS);
    // Without a type each column's schema comes from the one above.
    const columnData = slice(columns, from, to).map(({ type: _, nullable: __, ...c }) => c);
    parquet.write({ columnData, rowGroupSize: ROW_GROUP_ROWS });
  }
  parquet.finish();
  return new Uint8Array(writer.getBuffer());
}
