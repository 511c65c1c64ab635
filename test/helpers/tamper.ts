import type { EncodedTable } from '../../src/data/table.ts';

/** A copy of `table` with cells replaced: `[column, row, value]`, value strings. */
export function withCells(table: EncodedTable, cells: readonly [string, number, string][]): EncodedTable {
  const columns = table.columns.map((c) => ({ ...c, dictionary: [...c.dictionary], codes: c.codes.slice() }));
  for (const [name, row, value] of cells) {
    const c = columns.find((x) => x.name === name)!;
    let code = c.dictionary.indexOf(value);
    if (code < 0) code = c.dictionary.push(value) - 1;
    c.codes[row] = code;
  }
  return { ...table, columns };
}
