/**
 * The table digest's row loop (src/data/digest.ts, CellDigest): what it is given and the
 * constants both implementations use. The plain-TS loop (reference.ts) and the WASM one
 * (assembly/digest.ts) give the same sum.
 */
import type { ValuesAsBytes } from '../bytes-hashes/kernel.ts';

/** Lanes of the row hash: 4 × 32 bits. */
export const LANES = 4;

/** A lane's constant: the value hashes' and each lane's output mix use it. */
export const laneConstant = (l: number): number => (0x85ebca6b + l * 0x27d4eb2f) | 0;
/** Each lane's output constant, mixed into its last state before the sum. */
export const LANE_OUTPUTS: readonly number[] = [0, 1, 2, 3].map(laneConstant);

/** The rows `CellDigest.add` sums, with each column's value lanes and the leading columns' table. */
export interface RowsToDigest {
  readonly rowCount: number;
  /** Per column, row → code. */
  readonly codes: readonly Int32Array[];
  /** Per column, each code's four lanes. */
  readonly lanes: readonly Uint32Array[];
  /** Per column, its dictionary's size. */
  readonly sizes: readonly number[];
  /** The leading columns mixed ahead (`mixedAhead`), and their lanes for every combination. */
  readonly width: number;
  readonly ahead: Uint32Array;
}

/** Adds each row's hash to `sum`, lane by lane modulo 2^32. */
export type DigestRowsKernel = (rows: RowsToDigest, sum: Uint32Array) => void;

/**
 * Each value's four lanes (4 words a value, value i's at `4i`) of column number `column`, as
 * the value's text hashes (reference.ts, hashValue): `values` are UTF-8 bytes (a raw column's).
 */
export type RawLanesKernel = (column: number, values: ValuesAsBytes) => Uint32Array;
