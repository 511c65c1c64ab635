import type { ReleaseReport } from '../../src/contracts/report.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import { verifyMondrian } from '../../src/verify/mondrian.ts';

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

/**
 * The Mondrian verifier over a copy of a release's staged table with cells replaced (withCells),
 * age released as numeric ranges, the claims the release's report makes (with `claims` over them).
 */
export function verifyMondrianTampered(
  release: { spec: ReleaseSpec; input: EncodedTable; staged: EncodedTable; report: ReleaseReport },
  hierarchyRows: ReadonlyMap<string, string[][]>,
  cells: readonly [string, number, string][],
  claims = {},
) {
  const { spec, input, staged, report } = release;
  const copy = withCells(staged, cells);
  return verifyMondrian({
    input,
    attributes: spec.attributes,
    privacy: spec.privacy,
    numeric: ['age'],
    hierarchyRows,
    arrow: copy,
    csv: copy,
    claims: {
      classes: report.privacy.classes!,
      minClassSize: report.privacy.k!,
      ncp: report.utility.value,
      ...claims,
    },
  });
}
