/**
 * Keys for a release's random streams. The spec's seed is published in report.json and has
 * only 32 bits: a stream derived from it alone could be replayed by anyone who has the
 * release — undoing its row shuffle or its perturbation. So every stream is keyed by the seed
 * *and* a digest of the input's content, which an attacker does not have:
 *
 *   table digest = SHA-256 over the columns in input order, each as its UTF-8 name, 0x00, its
 *                  distinct values in order of first appearance (each UTF-8, then 0x00), 0x00,
 *                  then the SHA-256 of every row's index into that list (u32 LE): the
 *                  indexes are hashed as the rows stream by, so no state holds the whole
 *                  table to compute it (CellDigest). A function of the decoded
 *                  cells alone (whatever order a file's dictionary lists them in), so CSV,
 *                  Arrow and the serverless row shards give the same digest
 *   key(purpose) = SHA-256("ppdp/stream/v1" ‖ 0x00 ‖ purpose ‖ 0x00 ‖ seed u32 LE ‖ table digest)[0..16)
 *
 * The one key scheme of ppdp: every stream (the row shuffle of every method, randomization's
 * `perturb` and `shuffle` streams) is a purpose's key. Same input, spec and seed → the same
 * keys, so releases stay byte-identical run to run.
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

/** SHA-256 of the table's cells (see above). */
export function tableDigest(table: EncodedTable): Uint8Array {
  return new CellDigest().add(table).digest();
}

/** The table digest built shard by shard, in input order: the same as the whole table's. */
export class CellDigest {
  private columns: {
    readonly name: string;
    readonly codes: ReturnType<typeof createHash>;
    /** Rank of first appearance by value, and the values in that order. */
    readonly rankOf: Map<string, number>;
    readonly values: string[];
  }[] = [];

  add(table: EncodedTable): this {
    if (this.columns.length === 0)
      this.columns = table.columns.map((c) => ({
        name: c.name,
        codes: createHash('sha256'),
        rankOf: new Map(),
        values: [],
      }));
    table.columns.forEach((col, i) => {
      const state = this.columns[i]!;
      // Ranks are looked up by value once per dictionary entry a row of this table uses.
      const rank = new Int32Array(col.dictionary.length).fill(-1);
      const codes = new Uint32Array(col.codes.length);
      for (let r = 0; r < codes.length; r++) {
        const c = col.codes[r]!;
        let x = rank[c]!;
        if (x < 0) {
          const v = col.dictionary[c]!;
          x = state.rankOf.get(v) ?? state.values.push(v) - 1;
          state.rankOf.set(v, x);
          rank[c] = x;
        }
        codes[r] = x;
      }
      state.codes.update(littleEndian(codes));
    });
    return this;
  }

  digest(): Uint8Array {
    const hash = createHash('sha256');
    const zero = Uint8Array.of(0);
    for (const col of this.columns) {
      hash.update(col.name);
      hash.update(zero);
      for (const v of col.values) {
        hash.update(v);
        hash.update(zero);
      }
      hash.update(zero);
      hash.update(col.codes.digest());
    }
    return hash.digest();
  }
}

const BIG_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 0;

/** The words' bytes in little-endian order, whatever the platform's. */
function littleEndian(words: Uint32Array): Uint8Array {
  const bytes = new Uint8Array(words.buffer, words.byteOffset, words.byteLength);
  if (!BIG_ENDIAN) return bytes;
  const out = new Uint8Array(bytes.length);
  const view = new DataView(out.buffer);
  for (let i = 0; i < words.length; i++) view.setUint32(4 * i, words[i]!, true);
  return out;
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

function mix32(x: number): number {
  let h = x | 0;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return h ^ (h >>> 16);
}
