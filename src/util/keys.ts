/**
 * Keys for a release's random streams. The spec's seed is published in report.json and has
 * only 32 bits: a stream derived from it alone could be replayed by anyone who has the
 * release — undoing its row shuffle or its perturbation. So every stream is keyed by the seed
 * *and* a digest of the input's content, which an attacker does not have:
 *
 *   table digest = SHA-256("ppdp/table/v2" ‖ 0x00 ‖ each column's UTF-8 name, 0x00 ‖ 0x00 ‖
 *                  the row count (u64 LE) ‖ the row sum), where the row sum is the sum, lane by
 *                  lane modulo 2^32, of a 128-bit hash of every row. A row's hash binds its cells
 *                  together, in column order (a hash of each value, mixed lane by lane across the
 *                  columns), so it depends on which values share a row, not on the marginals a
 *                  release shows. A sum needs no order: each scanned piece of the input adds its
 *                  rows' hashes, and the pieces' sums add up to the table's (CellDigest.merge), so
 *                  no state reads the whole input to compute it. A function of the decoded cells
 *                  alone, so CSV, Arrow, Parquet, one file or many give the same digest
 *   key(purpose) = SHA-256("ppdp/stream/v1" ‖ 0x00 ‖ purpose ‖ 0x00 ‖ seed u32 LE ‖ table digest)[0..16)
 *
 * The one key scheme of ppdp: every stream (the row shuffle of every method, randomization's
 * `perturb` and `shuffle` streams) is a purpose's key. Same input, spec and seed → the same
 * keys, so releases stay byte-identical run to run.
 */
import { createHash } from 'node:crypto';
import { Random } from './random.ts';

/** The 128-bit key of one named stream. */
export function streamKey(seed: number, digest: Uint8Array, purpose: string): Uint32Array {
  const seedBytes = new Uint8Array(4);
  new DataView(seedBytes.buffer).setUint32(0, seed >>> 0, true);
  const h = createHash('sha256')
    .update('ppdp/stream/v1')
    .update(Uint8Array.of(0))
    .update(purpose)
    .update(Uint8Array.of(0))
    .update(seedBytes)
    .update(digest)
    .digest();
  const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
  return Uint32Array.from({ length: 4 }, (_, i) => view.getUint32(4 * i, true));
}

/** A seeded generator for one purpose (e.g. `shuffle`), keyed by seed and input digest. */
export function keyedRandom(seed: number, digest: Uint8Array, purpose: string): Random {
  return Random.fromKey(streamKey(seed, digest, purpose));
}

/**
 * Which of `parts` output parts each released row goes to: a keyed hash of its input row
 * (purpose `scatter`), so a row's part depends on neither the shards nor its neighbours, and
 * only a holder of the key can tell which rows share a part.
 */
export function scatterParts(seed: number, digest: Uint8Array, parts: number): (row: number) => number {
  if (parts === 1) return () => 0;
  const [k0, k1, k2, k3] = streamKey(seed, digest, 'scatter') as unknown as [number, number, number, number];
  return (row) => {
    // Two rounds of a 32-bit finalizer over the row's low and high words, keyed.
    let h = mix32((row >>> 0) ^ k0) ^ k1;
    h = mix32(h ^ Math.floor(row / 2 ** 32) ^ k2) ^ k3;
    return Math.floor(((h >>> 0) * parts) / 2 ** 32);
  };
}

/**
 * Which of `count` partitions (at most 65,536) a key falls in whose mixed 32-bit lane, signed or
 * not, is `lane`: the lane's top 16 bits scaled to the count. Integer arithmetic throughout,
 * where `%` of an unsigned lane divides in floating point, several times slower a key.
 */
export function partitionOfLane(lane: number, count: number): number {
  return ((lane >>> 16) * count) >>> 16;
}

/** A 32-bit finalizer (murmur3's): the mixing step of the row hashes and the scatter. */
export function mix32(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
