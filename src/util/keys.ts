/**
 * Keys for a release's random streams. The spec's seed is published in report.json and has
 * only 32 bits: a stream derived from it alone could be replayed by anyone who has the
 * release — undoing its row shuffle or its perturbation. So every stream is keyed by the seed
 * *and* a digest of the input's content, which an attacker does not have:
 *
 *   table digest = SHA-256 over the columns in input order, each as its UTF-8 name, 0x00, then
 *                  every cell's value (row order) as UTF-8 followed by 0x00 — of the decoded
 *                  cells, so CSV, Arrow and the serverless row shards give the same digest
 *   key(purpose) = SHA-256("ppdp/stream/v1" ‖ 0x00 ‖ purpose ‖ 0x00 ‖ seed u32 LE ‖ table digest)[0..16)
 *
 * Same input, spec and seed → the same keys, so releases stay byte-identical run to run.
 */
import { createHash } from 'node:crypto';
import type { EncodedTable } from '../data/table.ts';
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

/** SHA-256 of the table's cells, column by column (see above). */
export function tableDigest(table: EncodedTable): Uint8Array {
  const hash = createHash('sha256');
  const encoder = new TextEncoder();
  const zero = Uint8Array.of(0);
  const chunk = new Uint8Array(1 << 16);
  for (const col of table.columns) {
    hash.update(encoder.encode(col.name));
    hash.update(zero);
    const bytes = col.dictionary.map((v) => {
      const b = encoder.encode(v);
      const out = new Uint8Array(b.length + 1);
      out.set(b);
      return out;
    });
    let used = 0;
    for (const code of col.codes) {
      const b = bytes[code]!;
      if (used + b.length > chunk.length) {
        hash.update(chunk.subarray(0, used));
        used = 0;
      }
      if (b.length > chunk.length) hash.update(b);
      else {
        chunk.set(b, used);
        used += b.length;
      }
    }
    hash.update(chunk.subarray(0, used));
  }
  return hash.digest();
}
