/**
 * Order-free fingerprints of multisets of rows, for verification that runs in pieces: each
 * row is hashed from its cells' strings (column by column, through a non-linear mix, so the
 * hash depends on which values stand together in the row and in which column), and a
 * multiset's fingerprint is the sum of its rows' hashes in two 32-bit lanes. A column released
 * unchanged (insensitive) is hashed from its values' bytes instead (`bytesHashes`), on both sides. Sums merge in any
 * order, so input shards and output parts can be fingerprinted apart and compared in a reduce.
 */
import { createHash, hash as cryptoHash } from 'node:crypto';
import type { RawValues } from '../data/raw.ts';
import type { BytesHashesKernel } from '../kernels/bytes-hashes/kernel.ts';
import { murmur3Pair, tsBytesHashes } from '../kernels/bytes-hashes/reference.ts';
import { wasmBytesHashes } from '../kernels/bytes-hashes/wasm.ts';

/** A 64-bit fingerprint as two unsigned 32-bit lanes (JSON-friendly). */
export type Fingerprint = [number, number];

/** The hash of a value in column `column`: two 32-bit words of its SHA-256. */
export function valueHash(column: number, value: string): Fingerprint {
  const h = createHash('sha256').update(`${column}\u0000${value}`).digest();
  return [h.readUInt32LE(0), h.readUInt32LE(4)];
}

/**
 * Per column, the hashes of a dictionary's values, `lanes` 32-bit words of its SHA-256 each
 * (value i's at [lanes·i, lanes·i + lanes)). Two lanes fingerprint rows; four key classes.
 */
export function dictionaryHashes(
  column: number,
  dictionary: readonly string[],
  lanes = 2,
  /** Only the values whose entry is 1 are hashed (the others' lanes stay 0): the codes some row uses. */
  present?: Uint8Array,
): Int32Array {
  const out = new Int32Array(lanes * dictionary.length);
  const prefix = `${column}\u0000`;
  for (let i = 0; i < dictionary.length; i++) {
    if (present && present[i] === 0) continue;
    const h = sha256(prefix + dictionary[i]!);
    for (let l = 0; l < lanes; l++) out[lanes * i + l] = h.readUInt32LE(4 * l);
  }
  return out;
}

/**
 * Per value of a column that passes through unchanged (an insensitive one), 2 lanes of a hash
 * of its UTF-8 bytes — `values` are a dictionary's entries or a column's rows as bytes
 * (src/data/raw.ts) — so both sides of the comparison hash such a column alike from its bytes,
 * without a string per value. Such a column may hold a distinct value per row (a free-text
 * note): a SHA-256 a value would cost more than the rest of a slice. The lanes are MurmurHash3
 * (x86, 32-bit) under two seeds that depend on the column's number, hashed in the WASM core
 * (src/kernels/bytes-hashes/, whose plain-TS reference gives the same words) but for a few
 * values or only some of them.
 */
export function bytesHashes(
  column: number,
  values: RawValues,
  present?: Uint8Array,
  kernel: BytesHashesKernel = wasmBytesHashes,
): Int32Array {
  const { offsets, bytes } = values;
  const n = offsets.length - 1;
  const out = new Int32Array(2 * n);
  const seed0 = fold(0x3c6ef372, column);
  const seed1 = fold(0xa54ff53a, column);
  if (!present) {
    (n < FEW_VALUES ? tsBytesHashes : kernel)(values, seed0, seed1, out);
    return out;
  }
  for (let i = 0; i < n; i++) {
    if (present[i] === 0) continue;
    murmur3Pair(bytes, offsets[i]!, offsets[i + 1]!, seed0, seed1, out, 2 * i);
  }
  return out;
}

/** Values hashed in plain TS rather than through a WASM session. */
const FEW_VALUES = 256;

/** SHA-256 of a string's UTF-8 bytes: one call (crypto.hash) where Node has it, else a Hash. */
const sha256: (text: string) => Buffer =
  typeof cryptoHash === 'function'
    ? (text) => cryptoHash('sha256', text, 'buffer') as Buffer
    : (text) => createHash('sha256').update(text).digest();

/** Folds one cell's value hash into a row's running hash (one lane). */
export function fold(h: number, value: number): number {
  let x = (h ^ value) | 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return ((x ^ (x >>> 16)) + 0x9e3779b9) >>> 0;
}

/**
 * A row's hash, per lane: its quasi-identifiers folded in column order from QI_SEED, its other
 * cells likewise from OTHER_SEED, and the two joined by `join`. Split so that a class (one QI
 * tuple) hashes its QIs once, and a masked row is its class's mask joined with its own cells.
 */
export const QI_SEED: Fingerprint = [0x243f6a88, 0x85a308d3];
export const OTHER_SEED: Fingerprint = [0x13198a2e, 0x03707344];
/** Lanes 2 and 3 of a class key (its QIs folded as QI_SEED's lanes are, from words 2 and 3). */
export const KEY_SEED: Fingerprint = [0x452821e6, 0x38d01377];

/** Joins a row's QI hash and other-cells hash (one lane). */
export function join(qi: number, other: number, lane: number): number {
  return fold(fold(lane === 0 ? 0xa4093822 : 0x299f31d0, qi), other);
}

export function addInto(sum: Fingerprint, a: number, b: number): void {
  sum[0] = (sum[0] + a) >>> 0;
  sum[1] = (sum[1] + b) >>> 0;
}

export function sameFingerprint(a: Fingerprint, b: Fingerprint): boolean {
  return a[0] >>> 0 === b[0] >>> 0 && a[1] >>> 0 === b[1] >>> 0;
}
