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
import { gather } from '../../util/gather.ts';
import { rowNumbers } from '../../util/int32s.ts';
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
  /**
   * The distinct tuples the rows fall into (`rowToTuple`), with each named quasi-identifier's
   * code per tuple: its released codes are then made per tuple, not per row.
   */
  readonly tuples?: {
    readonly rowToTuple: Int32Array;
    readonly names: readonly string[];
    readonly columns: readonly Int32Array[];
    /**
     * Each tuple's class at `node` (`of`) and each class's first tuple (`reps`), as the search
     * grouped them: the released codes are then made per class, fewer than the tuples.
     */
    readonly classes?: { readonly of: Int32Array; readonly reps: Int32Array } | undefined;
  };
}

export function applyGeneralization(input: ApplyInput): OutputColumn[] {
  const { table, suppressedRow } = input;
  const rowAt = releasedRows(input);
  const n = rowAt ? rowAt.length : table.rowCount;
  const typeOf = new Map(input.attributes.map((a) => [a.name, a.type]));
  // Each released row's tuple (or class), gathered once for every quasi-identifier.
  const units =
    rowAt && input.tuples && input.suppressed === 'remove' && !input.suppressedCells
      ? releasedUnits(input.tuples, rowAt)
      : undefined;
  /** Per unit, its compact code: one buffer serves each quasi-identifier in turn. */
  const compactOf = new Int32Array(units ? units.first.length : 0);

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
          const codes = rowAt ? gather(source, rowAt) : source.subarray(0, n);
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
      if (rowAt && !cells && input.suppressed === 'remove') {
        const q = input.tuples?.names.indexOf(col.name) ?? -1;
        if (units && q >= 0)
          return compactUnits(
            col.name,
            dictionary,
            units.codes(input.tuples!.columns[q]!),
            levelTable,
            units.at,
            units.first,
            compactOf,
          );
        return compactGather(col.name, dictionary, source, rowAt, levelTable);
      }
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

/**
 * compactDictionary over the codes `source` holds at the rows `rowAt` names (through `mapped`,
 * code → code in `dictionary`, when given): the same column, its codes gathered and then
 * renumbered in place (no second column).
 */
function compactGather(
  name: string,
  dictionary: readonly string[],
  source: Int32Array,
  rowAt: Int32Array,
  mapped?: Int32Array,
): OutputColumn & { kind: 'dictionary' } {
  // The gather first, then the renumbering over it in place (plain loops run faster than one
  // that does both).
  const codes = gather(source, rowAt);
  if (mapped) for (let j = 0; j < codes.length; j++) codes[j] = mapped[codes[j]!]!;
  return compactDictionary(name, dictionary, codes, codes);
}

/**
 * compactGather over the released rows' units (tuples or classes: `unitAt`, each released row's
 * unit; `first`, each unit's first released row, -1 for none), a unit's code `unitCodes[u]`
 * mapped through `mapped` to `dictionary`: the same column, its labels numbered by their first
 * released row as there, found per unit, and the rows' codes then gathered without a test per row.
 */
function compactUnits(
  name: string,
  dictionary: readonly string[],
  unitCodes: Int32Array,
  mapped: Int32Array,
  unitAt: Int32Array,
  first: Int32Array,
  /** Scratch, a cell per unit (overwritten). */
  compactOf: Int32Array,
): OutputColumn & { kind: 'dictionary' } {
  const units = unitCodes.length;
  const none = unitAt.length;
  const firstOfLabel = new Int32Array(dictionary.length).fill(none);
  for (let u = 0; u < units; u++) {
    const f = first[u]!;
    if (f < 0) continue;
    const c = mapped[unitCodes[u]!]!;
    if (f < firstOfLabel[c]!) firstOfLabel[c] = f;
  }
  const released: number[] = [];
  for (let c = 0; c < dictionary.length; c++) if (firstOfLabel[c]! < none) released.push(c);
  released.sort((a, b) => firstOfLabel[a]! - firstOfLabel[b]!);
  const remap = new Int32Array(dictionary.length);
  const used = released.map((c, x) => {
    remap[c] = x;
    return dictionary[c]!;
  });
  for (let u = 0; u < units; u++) compactOf[u] = remap[mapped[unitCodes[u]!]!]!;
  return { name, kind: 'dictionary', dictionary: used, codes: gather(compactOf, unitAt) };
}

/**
 * The unit each released row falls in (`at`): its class when the search's classes are given
 * (a class's rows share every label), else its tuple; each unit's first position there
 * (`first`), and a quasi-identifier's code per unit from its code per tuple (`codes`).
 */
function releasedUnits(
  tuples: NonNullable<ApplyInput['tuples']>,
  rowAt: Int32Array,
): { at: Int32Array; first: Int32Array; codes: (perTuple: Int32Array) => Int32Array } {
  const tupleAt = gather(tuples.rowToTuple, rowAt);
  const { classes } = tuples;
  if (!classes) {
    const count = tuples.columns[0]?.length ?? 0;
    return { at: tupleAt, first: firstPositions(count, tupleAt), codes: (perTuple) => perTuple };
  }
  const at = gather(classes.of, tupleAt);
  return {
    at,
    first: firstPositions(classes.reps.length, at),
    codes: (perTuple) => gather(perTuple, classes.reps),
  };
}

/** Each unit's first position in `unitAt` (-1 where it has none). */
function firstPositions(units: number, unitAt: Int32Array): Int32Array {
  const first = new Int32Array(units).fill(-1);
  for (let j = unitAt.length - 1; j >= 0; j--) first[unitAt[j]!] = j;
  return first;
}

/**
 * The input row of each released row, in release order; undefined when that is every row in
 * input order (masked suppression, no shuffle: the common case of the shard steps).
 */
function releasedRows(input: ApplyInput): Int32Array | undefined {
  const { table, suppressedRow } = input;
  const remove = input.suppressed === 'remove';
  if (!remove && !input.shuffleWith) return undefined;
  // Every row in input order, or in the order of a permutation of all of them: removed rows
  // are then dropped from it. A release in parts shuffles each part's rows so, removed ones
  // included, before the search has chosen which rows go (pipeline/states/route.ts).
  const rows = input.shuffleWith ? input.shuffleWith.permutation(table.rowCount) : rowNumbers(table.rowCount);
  if (!remove) return rows;
  // Each row written, the next write moved past it when kept: no branch per row.
  let at = 0;
  for (let j = 0; j < rows.length; j++) {
    const r = rows[j]!;
    rows[at] = r;
    at += suppressedRow[r] === 0 ? 1 : 0;
  }
  return rows.subarray(0, at);
}
