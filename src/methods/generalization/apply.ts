/**
 * Applies a chosen node to every row: QIs become their labels at the node's levels, rows of
 * suppressed classes are masked (`*` in every QI) or removed, identifying columns are
 * dropped, and the released rows are shuffled with a keyed stream (src/util/keys.ts).
 */
import { gatherRaw, rawOfCodes } from '../../data/raw.ts';
import { compactDictionary, type EncodedTable, type OutputColumn } from '../../data/table.ts';
import { utf8Buffers } from '../../data/utf8.ts';
import type { Hierarchy } from '../../hierarchy/hierarchy.ts';
import { type AttributeSpec, isPassThroughType, isReleasedType } from '../../release-spec/spec.ts';
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
  /** Cell suppression: QI name → row → 1 where that cell is released as `*`. */
  readonly suppressedCells?: ReadonlyMap<string, Uint8Array> | undefined;
  /**
   * Shuffles the released rows; absent: input order (the serverless fan-out applies shards
   * apart and shuffles once at the merge, with the same stream).
   */
  readonly shuffleWith?: Random;
}

export function applyGeneralization(input: ApplyInput): OutputColumn[] {
  const { table, suppressedRow } = input;
  const rowAt = releasedRows(input);
  const n = rowAt ? rowAt.length : table.rowCount;
  const typeOf = new Map(input.attributes.map((a) => [a.name, a.type]));

  return table.columns
    .filter((col) => isReleasedType(typeOf.get(col.name)))
    .map((col): OutputColumn => {
      const hierarchy =
        typeOf.get(col.name) === 'quasi-identifying' ? input.hierarchies.get(col.name) : undefined;
      // A column that passes through as bytes stays bytes: its released rows' values gathered.
      if (col.raw) return { name: col.name, kind: 'utf8', values: gatherRaw(col.raw, rowAt ?? n) };
      const source = col.codes;
      if (!hierarchy) {
        // A pass-through column read as a dictionary, in a release built as one task, is
        // released as the bytes a sharded release carries.
        if (isPassThroughType(typeOf.get(col.name))) {
          const codes = rowAt ? gatherCodes(source, rowAt) : source.subarray(0, n);
          return { name: col.name, kind: 'utf8', values: rawOfCodes(utf8Buffers(col.dictionary), codes) };
        }
        if (rowAt) return compactGather(col.name, col.dictionary, source, rowAt);
        return compactDictionary(col.name, col.dictionary, source.subarray(0, n));
      }
      const level = input.node[col.name]!;
      const cells = input.suppressedCells?.get(col.name);
      const levelTable = hierarchy.levelTables[level]!;
      const dictionary = hierarchy.labels[level]!.slice();
      let star = dictionary.indexOf(SUPPRESSED);
      if (star < 0) star = dictionary.push(SUPPRESSED) - 1;
      // Removed rows never reach the release: the labels straight into their compact dictionary.
      if (rowAt && !cells && input.suppressed === 'remove')
        return compactGather(col.name, dictionary, source, rowAt, levelTable);
      const codes = new Int32Array(n);
      if (rowAt) {
        for (let j = 0; j < n; j++) {
          const r = rowAt[j]!;
          codes[j] = suppressedRow[r] ? star : levelTable[source[r]!]!;
        }
      } else {
        for (let r = 0; r < n; r++) codes[r] = suppressedRow[r] ? star : levelTable[source[r]!]!;
      }
      if (cells) for (let j = 0; j < n; j++) if (cells[rowAt ? rowAt[j]! : j]) codes[j] = star;
      return compactDictionary(col.name, dictionary, codes);
    });
}

/** `source` at the rows `rowAt` names, in that order. */
function gatherCodes(source: Int32Array, rowAt: Int32Array): Int32Array {
  const codes = new Int32Array(rowAt.length);
  for (let j = 0; j < rowAt.length; j++) codes[j] = source[rowAt[j]!]!;
  return codes;
}

/**
 * compactDictionary over the codes `source` holds at the rows `rowAt` names (through `mapped`,
 * code → code in `dictionary`, when given), in one pass: the same column, without the codes
 * gathered first.
 */
function compactGather(
  name: string,
  dictionary: readonly string[],
  source: Int32Array,
  rowAt: Int32Array,
  mapped?: Int32Array,
): OutputColumn & { kind: 'dictionary' } {
  const remap = new Int32Array(dictionary.length).fill(-1);
  const used: string[] = [];
  const codes = new Int32Array(rowAt.length);
  for (let j = 0; j < rowAt.length; j++) {
    const c = mapped ? mapped[source[rowAt[j]!]!]! : source[rowAt[j]!]!;
    let x = remap[c]!;
    if (x < 0) {
      x = remap[c] = used.length;
      used.push(dictionary[c]!);
    }
    codes[j] = x;
  }
  return { name, kind: 'dictionary', dictionary: used, codes };
}

/**
 * The input row of each released row, in release order; undefined when that is every row in
 * input order (masked suppression, no shuffle: the common case of the shard steps).
 */
function releasedRows(input: ApplyInput): Int32Array | undefined {
  const { table, suppressedRow } = input;
  let kept: Int32Array | undefined;
  if (input.suppressed === 'remove') {
    let count = 0;
    for (let r = 0; r < table.rowCount; r++) if (!suppressedRow[r]) count++;
    kept = new Int32Array(count);
    let at = 0;
    for (let r = 0; r < table.rowCount; r++) if (!suppressedRow[r]) kept[at++] = r;
  }
  if (!input.shuffleWith) return kept;
  const order = input.shuffleWith.permutation(kept ? kept.length : table.rowCount);
  if (!kept) return order;
  for (let j = 0; j < order.length; j++) order[j] = kept[order[j]!]!;
  return order;
}
