/**
 * Values' bytes moved to where a permutation puts them: the random writes of a shuffle of a
 * column passed through as bytes (src/data/raw.ts, gatherJoined). The plain-TS loop
 * (reference.ts) and the WASM one (assembly/gather-bytes.ts) write the same bytes.
 */
import type { ValuesAsBytes } from '../bytes-hashes/kernel.ts';

/**
 * Writes value i of `pieces` joined one after another to `out` at byte `targets[i]` (none when
 * it is -1). Each value's range must lie inside `out`, and no two may overlap.
 */
export type GatherBytesKernel = (
  pieces: readonly ValuesAsBytes[],
  targets: Int32Array,
  out: Uint8Array,
) => void;

/**
 * Rows `rows` of `pieces` joined one after another (row j is joined value `rows[j]`, each in
 * range): their offsets from 0 and bytes, each value written where the shuffle puts it (the
 * places found, then GatherBytesKernel's writes); undefined when a row is asked for twice.
 */
export type ShuffleBytesKernel = (
  pieces: readonly ValuesAsBytes[],
  rows: Int32Array,
) => ValuesAsBytes | undefined;
