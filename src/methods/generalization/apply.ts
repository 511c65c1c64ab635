/**
 * Applies a chosen node to every row: QIs become their labels at the node's levels, rows of
 * suppressed classes are masked (`*` in every QI) or removed, identifying columns are
 * dropped, and the released rows are shuffled with a keyed stream (src/util/keys.ts).
 */
import { compactDictionary, type EncodedTable, type OutputColumn } from '../../data/table.ts';
import type { Hierarchy } from '../../hierarchy/hierarchy.ts';
import type { AttributeSpec } from '../../spec/spec.ts';
import type { Random } from '../../util/random.ts';

export const SUPPRESSED = '*';

export interface ApplyInput {
  readonly table: EncodedTable;
  readonly attributes: readonly AttributeSpec[];
  /** QI name → its hierarchy. */
  readonly hierarchies: ReadonlyMap<string, Hierarchy>;
  /** QI name → chosen level. */
  readonly node: Readonly<Record<string, number>>;
  /** row → 1 when the row's class is suppressed. */
  readonly suppressedRow: Uint8Array;
  readonly suppressed: 'mask' | 'remove';
  /**
   * Shuffles the released rows; absent: input order (the serverless fan-out applies shards
   * apart and shuffles once at the merge, with the same stream).
   */
  readonly shuffleWith?: Random;
}

export function applyGeneralization(input: ApplyInput): OutputColumn[] {
  const { table, suppressedRow } = input;
  const kept: number[] = [];
  for (let r = 0; r < table.rowCount; r++) if (input.suppressed === 'mask' || !suppressedRow[r]) kept.push(r);
  const order = input.shuffleWith
    ? input.shuffleWith.permutation(kept.length)
    : Int32Array.from(kept, (_, j) => j);
  const typeOf = new Map(input.attributes.map((a) => [a.name, a.type]));

  return table.columns
    .filter((col) => typeOf.get(col.name) !== 'identifying')
    .map((col): OutputColumn => {
      const hierarchy =
        typeOf.get(col.name) === 'quasi-identifying' ? input.hierarchies.get(col.name) : undefined;
      const codes = new Int32Array(kept.length);
      if (!hierarchy) {
        for (let j = 0; j < kept.length; j++) codes[j] = col.codes[kept[order[j]!]!]!;
        return compactDictionary(col.name, col.dictionary, codes);
      }
      const level = input.node[col.name]!;
      const table = hierarchy.levelTables[level]!;
      const dictionary = hierarchy.labels[level]!.slice();
      let star = dictionary.indexOf(SUPPRESSED);
      if (star < 0) star = dictionary.push(SUPPRESSED) - 1;
      for (let j = 0; j < kept.length; j++) {
        const r = kept[order[j]!]!;
        codes[j] = suppressedRow[r] ? star : table[col.codes[r]!]!;
      }
      return compactDictionary(col.name, dictionary, codes);
    });
}
