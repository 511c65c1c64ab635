/**
 * What the verifiers of a release generalized at a node share (src/verify/generalization.ts,
 * src/verify/cell-suppression.ts): the staged files hold one table, the released columns are
 * the input's less the identifying ones, and each input value's released code at the node,
 * mapped once per distinct value through the hierarchy rows. Independent of the method: it
 * reads the staged files and the hierarchy rows, never the code that built the release.
 */
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec } from '../release-spec/spec.ts';
import { type CodedTable, type DecodedTable, releasedNames, SEP } from './common.ts';
import { asCsvCoded, csvHoldsTable } from './staged-csv.ts';
import { parquetHoldsTable } from './staged-parquet.ts';

/** An input value whose QI value is not in the hierarchy. */
export const UNMAPPED = -2;
/** An input value whose (generalized) value is not in the released column at all. */
export const UNRELEASED = -1;

type Add = (name: string, passed: boolean, detail: string) => void;

/** The staged files beside data.arrow, and how the CSV was written. */
export interface StagedFiles {
  /** data.csv's path (read with the input's delimiter), or the table already read. */
  readonly csv?: string | DecodedTable | undefined;
  readonly parquet?: string | undefined;
  /** The spec's `format.escapeFormulas`: the CSV holds its cells formula-escaped. */
  readonly escapeFormulas?: boolean | undefined;
}

/** data.csv and data.parquet, when staged, hold data.arrow's rows. */
export function checkStagedFiles(input: EncodedTable, arrow: CodedTable, files: StagedFiles, add: Add): void {
  if (files.csv !== undefined) {
    const written = asCsvCoded(arrow, files.escapeFormulas === true);
    const same =
      typeof files.csv === 'string'
        ? csvHoldsTable(files.csv, input.delimiter, written)
        : holdsDecoded(written, files.csv);
    add(
      'csv-equals-arrow',
      same,
      same ? 'data.csv and data.arrow hold the same rows' : 'data.csv and data.arrow differ',
    );
  }
  if (files.parquet === undefined) return;
  const parquet = parquetHoldsTable(files.parquet, arrow);
  add(
    'parquet-equals-arrow',
    parquet,
    parquet ? 'data.parquet and data.arrow hold the same rows' : 'data.parquet and data.arrow differ',
  );
}

/** No identifying column is released, every other input column is: the names, or undefined. */
export function checkReleasedColumns(
  input: EncodedTable,
  attributes: readonly AttributeSpec[],
  arrow: CodedTable,
  add: Add,
): string[] | undefined {
  const names = releasedNames(input, attributes);
  const namesOk = arrow.names.join(SEP) === names.join(SEP);
  add(
    'columns',
    namesOk,
    namesOk
      ? 'identifying columns dropped, all others released'
      : `released columns: ${arrow.names.join(', ')}`,
  );
  return namesOk ? names : undefined;
}

/** Value → its first code in a released dictionary. */
export function firstCodes(dictionary: readonly string[]): Map<string, number> {
  const index = new Map<string, number>();
  dictionary.forEach((v, k) => {
    if (!index.has(v)) index.set(v, k);
  });
  return index;
}

/**
 * Per released column, input code → released code: a quasi-identifier's value generalized at
 * the node through its hierarchy rows `[value, level1, …]` (UNMAPPED when the hierarchy does not
 * hold it), any other column's value as it is; UNRELEASED when the release does not hold it.
 */
export function releasedCodesAtNode(
  input: EncodedTable,
  names: readonly string[],
  isQi: readonly boolean[],
  releasedIndex: readonly ReadonlyMap<string, number>[],
  node: Readonly<Record<string, number>>,
  hierarchyRows: ReadonlyMap<string, string[][]>,
): Int32Array[] {
  const columnOf = new Map(input.columns.map((c) => [c.name, c]));
  return names.map((name, c) => {
    const { dictionary } = columnOf.get(name)!;
    const index = releasedIndex[c]!;
    if (!isQi[c]) return Int32Array.from(dictionary, (v) => index.get(v) ?? UNRELEASED);
    const level = node[name]!;
    const generalize = new Map((hierarchyRows.get(name) ?? []).map((row) => [row[0]!, row[level]!]));
    return Int32Array.from(dictionary, (v) => {
      const label = generalize.get(v);
      return label === undefined ? UNMAPPED : (index.get(label) ?? UNRELEASED);
    });
  });
}

/** Same names, same row count, same value in every cell. */
function holdsDecoded(table: CodedTable, csv: DecodedTable): boolean {
  if (csv.names.join(SEP) !== table.names.join(SEP)) return false;
  return table.codes.every((codes, c) => {
    const dictionary = table.dictionaries[c]!;
    const values = csv.columns[c]!;
    if (values.length !== table.rowCount) return false;
    for (let j = 0; j < values.length; j++) if (values[j] !== dictionary[codes[j]!]) return false;
    return true;
  });
}
