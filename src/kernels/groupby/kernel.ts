/**
 * The grouping kernel's contract, shared by the WASM implementation and the plain-TS reference.
 * Both must produce identical outputs (group ids in order of first appearance), which the
 * tests check on real and random inputs.
 */
import { kernelError, Status } from '../status.ts';
export interface GroupingInput {
  /** m columns of codes, each of length n. */
  readonly columns: readonly Int32Array[];
  /** Weight per tuple; omitted = 1 each. */
  readonly counts?: Int32Array | undefined;
  /** Per column: its code domain size (codes are in [0, domain)). */
  readonly domains: readonly number[];
}

/** Classes of the tuples under some levels: what a later rollup starts from. */
export interface Grouping {
  readonly groups: number;
  /** group → summed weight, length `groups`. */
  readonly sizes: Int32Array;
  /** group → its first tuple (the class's representative), length `groups`. */
  readonly reps: Int32Array;
}

export interface GroupingResult extends Grouping {
  /** tuple → group id, length n. */
  readonly groupOf: Int32Array;
}

export interface RollupResult extends Grouping {
  /** source class → group id, length `from.groups` (absent when the call asked not to keep it). */
  readonly map?: Int32Array;
}

/**
 * A kernel bound to one set of tuples and their generalization tables: `tables[i][l]` maps
 * column i's codes to their generalized codes at level l. `group(levels)` groups under one
 * level per column (a lattice node); `group(null)` groups the tuples as they are.
 * `rollup(levels, from)` groups the classes of a lower node instead of the tuples: the same
 * groups with the same ids (classes only merge as levels rise), for O(classes) work.
 */
export interface GroupingSession {
  readonly n: number;
  /** Per column: its code domain size. */
  readonly domains: readonly number[];
  group(levels: ArrayLike<number> | null): GroupingResult;
  /**
   * `from` must be a grouping at levels ≤ `levels` in every column. `withMap` false leaves out
   * the source → group map (an O(sources) copy) for callers that never compose it.
   */
  rollup(levels: ArrayLike<number>, from: Grouping, withMap?: boolean): RollupResult;
  /** A rollup's tuple → class map from its source's: `map[groupOf[t]]` for every tuple. */
  compose(groupOf: Int32Array, map: Int32Array): Int32Array;
  /** Per-group histogram of an extra column (e.g. the sensitive attribute): groups × width. */
  histogram(groupOf: Int32Array, groups: number, values: Int32Array, width: number): Int32Array;
  /** The generalized tuple (key) of each group of the last `group` call, column-major. */
  keys(groups: number): Int32Array[];
  dispose(): void;
}

export interface GroupingKernel {
  readonly name: 'wasm' | 'ts';
  open(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): GroupingSession;
  /**
   * The same kernel under a memory budget of `bytes` (a state's): the WASM kernel then holds a
   * large session's tuples in one instance, which is fastest, when half of what the budget leaves
   * beyond the process's resident memory holds it, instead of grouping them in parts. Absent: a
   * kernel with no such choice.
   */
  within?(bytes: number): GroupingKernel;
  /**
   * Whether a session of `tuples` tuples over `columns` columns would now be one WASM instance
   * (not grouped in parts). Absent: a kernel with no instances.
   */
  holdsInOne?(tuples: number, columns: number): boolean;
}

/**
 * Checks every code and table entry against its domain once, on the way in: the kernels use
 * unchecked loads, and an out-of-range code would silently read neighbouring memory.
 */
export function validateGroupingInput(
  input: GroupingInput,
  tables: readonly (readonly Int32Array[])[],
): number {
  const n = validateShapes(input, tables);
  validateCodes(input);
  return n;
}

/** The lengths of the columns, counts and level tables (the codes are checked apart). */
export function validateShapes(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): number {
  const n = input.columns[0]?.length ?? 0;
  for (const [i, col] of input.columns.entries()) {
    if (col.length !== n)
      throw kernelError('grouping', Status.BadShape, `column ${i} has ${col.length} codes, expected ${n}`);
    for (const [l, table] of (tables[i] ?? []).entries()) {
      if (table.length < input.domains[i]!)
        throw kernelError('grouping', Status.BadShape, `column ${i}, level ${l}: table shorter than domain`);
    }
  }
  if (input.counts && input.counts.length !== n)
    throw kernelError('grouping', Status.BadShape, 'counts length differs from n');
  return n;
}

/** Every code inside its column's domain (throws naming the first that is not). */
export function validateCodes(input: GroupingInput): void {
  for (const [i, col] of input.columns.entries()) {
    const domain = input.domains[i]!;
    for (let t = 0; t < col.length; t++) {
      const c = col[t]!;
      if (c < 0 || c >= domain)
        throw kernelError(
          'grouping',
          Status.CodeOutOfDomain,
          `column ${i}, tuple ${t}: code outside [0, ${domain})`,
        );
    }
  }
}

/**
 * Checks a rollup's source is whole and has at most the session's n classes (a grouping of n
 * tuples never has more; the WASM kernel's regions hold n); with `tuples`, also that every class
 * names one of the n tuples (the kernels trust those indices; the WASM kernel checks them itself).
 */
export function validateRollup(from: Grouping, n: number, tuples: boolean): void {
  const { groups, reps, sizes } = from;
  if (reps.length < groups || sizes.length < groups)
    throw kernelError('rollup', Status.TupleOutOfRange, 'source shorter than its groups');
  if (groups > n)
    throw kernelError('rollup', Status.TupleOutOfRange, `a source of ${groups} classes over ${n} tuples`);
  if (!tuples) return;
  for (let g = 0; g < groups; g++) {
    const t = reps[g]!;
    if (t < 0 || t >= n)
      throw kernelError(
        'rollup',
        Status.TupleOutOfRange,
        `source class ${g} names tuple ${t} outside [0, ${n})`,
      );
  }
}

/** Hash-table capacity: the smallest power of two ≥ 2n (load factor ≤ 0.5). */
export function tableCapacity(n: number): number {
  let c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}

/** Generalized keys of groups from their representatives: column-major, `groups` each. */
export function keysOf(
  columns: readonly Int32Array[],
  maps: readonly (Int32Array | null)[],
  reps: Int32Array,
  groups: number,
): Int32Array[] {
  return columns.map((col, i) => {
    const map = maps[i];
    const out = new Int32Array(groups);
    if (map) for (let g = 0; g < groups; g++) out[g] = map[col[reps[g]!]!]!;
    else for (let g = 0; g < groups; g++) out[g] = col[reps[g]!]!;
    return out;
  });
}

/**
 * Slots of the session's table: enough to hash n tuples at load ≤ 0.5, and at least 2^20 so
 * that nodes whose generalized domains multiply to fewer codes index it directly.
 */
export function directCapacity(n: number): number {
  return Math.max(tableCapacity(n), 1 << 20);
}

/** Per column, per level: the number of generalized codes (the digit base of packed keys). */
export function levelBases(
  domains: readonly number[],
  tables: readonly (readonly Int32Array[])[],
): number[][] {
  return domains.map((d, i) =>
    (tables[i] ?? []).map((t) => {
      let max = 0;
      for (let c = 0; c < d; c++) if (t[c]! > max) max = t[c]!;
      return max + 1;
    }),
  );
}

/** The digit bases of one node (`null`: the codes as they are) and their product. */
export function radices(
  domains: readonly number[],
  bases: readonly number[][],
  levels: ArrayLike<number> | null,
): { radix: number[]; product: number } {
  let product = 1;
  const radix = domains.map((d, i) => {
    const base = levels ? bases[i]![levels[i]!]! : d;
    product *= base;
    return base;
  });
  return { radix, product };
}

/** Key packing needs a place-value table per code: columns with more codes than this compare whole tuples. */
export const PACKED_CODES_LIMIT = 1 << 22;

/**
 * How a node's keys are formed: `direct` (packed, and the packed key indexes a table of
 * `capacity` slots), `packed` (one 53-bit key, hashed) or `tuple` (whole tuples hashed and
 * compared: the product of the bases passes 2^53, or the domains are too wide to tabulate).
 */
export function keyMode(product: number, codes: number, capacity: number): 'direct' | 'packed' | 'tuple' {
  if (product >= 2 ** 53 || codes > PACKED_CODES_LIMIT) return 'tuple';
  return product <= capacity ? 'direct' : 'packed';
}

/** A compose's sizes: one class id per tuple, a map of at most one entry per tuple. */
export function validateCompose(groupOf: Int32Array, map: Int32Array, n: number): void {
  if (groupOf.length !== n || map.length > n)
    throw kernelError('compose', Status.BadShape, 'sizes differ from n');
}
