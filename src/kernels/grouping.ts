/**
 * The grouping kernel's contract, shared by the WASM implementation and the plain-TS reference.
 * Both must produce identical outputs (group ids in order of first appearance), which the
 * tests check on real and random inputs.
 */
export interface GroupingInput {
  /** m columns of codes, each of length n. */
  readonly columns: readonly Int32Array[];
  /** Weight per tuple; omitted = 1 each. */
  readonly counts?: Int32Array | undefined;
  /** Per column: its code domain size (codes are in [0, domain)). */
  readonly domains: readonly number[];
}

export interface GroupingResult {
  readonly groups: number;
  /** tuple → group id, length n. */
  readonly groupOf: Int32Array;
  /** group → summed weight, length `groups`. */
  readonly sizes: Int32Array;
}

/**
 * A kernel bound to one set of tuples and their generalization tables: `tables[i][l]` maps
 * column i's codes to their generalized codes at level l. `group(levels)` groups under one
 * level per column (a lattice node); `group(null)` groups the tuples as they are.
 */
export interface GroupingSession {
  readonly n: number;
  group(levels: ArrayLike<number> | null): GroupingResult;
  /** Per-group histogram of an extra column (e.g. the sensitive attribute): groups × width. */
  histogram(groupOf: Int32Array, groups: number, values: Int32Array, width: number): Int32Array;
  /** The generalized tuple (key) of each group of the last `group` call, column-major. */
  keys(groups: number): Int32Array[];
  dispose(): void;
}

export interface GroupingKernel {
  readonly name: 'wasm' | 'ts';
  open(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): GroupingSession;
}

/**
 * Checks every code and table entry against its domain once, on the way in: the kernels use
 * unchecked loads, and an out-of-range code would silently read neighbouring memory.
 */
export function validateGroupingInput(
  input: GroupingInput,
  tables: readonly (readonly Int32Array[])[],
): number {
  const n = input.columns[0]?.length ?? 0;
  for (const [i, col] of input.columns.entries()) {
    if (col.length !== n)
      throw new RangeError(`grouping: column ${i} has ${col.length} codes, expected ${n}`);
    const domain = input.domains[i]!;
    for (let t = 0; t < n; t++) {
      const c = col[t]!;
      if (c < 0 || c >= domain)
        throw new RangeError(`grouping: column ${i}, tuple ${t}: code outside [0, ${domain})`);
    }
    for (const [l, table] of (tables[i] ?? []).entries()) {
      if (table.length < domain)
        throw new RangeError(`grouping: column ${i}, level ${l}: table shorter than domain`);
    }
  }
  if (input.counts && input.counts.length !== n)
    throw new RangeError('grouping: counts length differs from n');
  return n;
}

/** Hash-table capacity: the smallest power of two ≥ 2n (load factor ≤ 0.5). */
export function tableCapacity(n: number): number {
  let c = 16;
  while (c < 2 * n) c *= 2;
  return c;
}
