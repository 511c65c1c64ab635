/**
 * Two 32-bit lanes of a hash of each value's UTF-8 bytes (MurmurHash3, x86 32-bit, under two
 * seeds): the hash by which a column passed through as bytes is fingerprinted, counted and
 * audited (src/verify/fingerprint.ts, bytesHashes). The plain-TS loop (reference.ts) and the
 * WASM one (assembly/bytes-hashes.ts) give the same words.
 */

/** Values as bytes: value i is `bytes[offsets[i], offsets[i + 1])` (a column's RawValues). */
export interface ValuesAsBytes {
  readonly offsets: Int32Array;
  readonly bytes: Uint8Array;
}

/** Writes value i's lanes to `out[2i]` and `out[2i + 1]` (`out` holds two words a value). */
export type BytesHashesKernel = (
  values: ValuesAsBytes,
  seed0: number,
  seed1: number,
  out: Int32Array,
) => void;
