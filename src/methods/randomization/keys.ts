/**
 * The keys of a randomized release. The spec's seed is published (report.json) and has only
 * 32 bits, so a stream derived from it alone could be replayed by anyone: knowing each
 * cell's random draw reveals whether it was kept, which undoes the randomization. The keys
 * therefore also depend on the input's content, which an attacker does not have:
 *
 *   table digest = the input's digest of src/util/keys.ts (names, distinct values in order of
 *                  first appearance, each row's index into them)
 *   h = SHA-256("ppdp/randomization/v1" ‖ 0x00 ‖ seed as u32 LE ‖ table digest)
 *   perturbation key = h[0..16), shuffle key = h[16..32)   (each 4 u32, little-endian)
 *
 * The digest is of the decoded cells, not the file: the same table read from CSV or Arrow,
 * anywhere, gives the same keys. Same input, spec and seed → byte-identical release.
 */
import { createHash } from 'node:crypto';
import type { EncodedTable } from '../../data/table.ts';
import { tableDigest } from '../../util/keys.ts';

export { tableDigest };

export interface ReleaseKeys {
  readonly perturb: Uint32Array;
  readonly shuffle: Uint32Array;
}

export function releaseKeys(seed: number, digest: Uint8Array): ReleaseKeys {
  const seedBytes = new Uint8Array(4);
  new DataView(seedBytes.buffer).setUint32(0, seed >>> 0, true);
  const h = createHash('sha256')
    .update('ppdp/randomization/v1')
    .update(Uint8Array.of(0))
    .update(seedBytes)
    .update(digest)
    .digest();
  const view = new DataView(h.buffer, h.byteOffset, h.byteLength);
  const words = (offset: number) =>
    Uint32Array.from({ length: 4 }, (_, i) => view.getUint32(offset + 4 * i, true));
  return { perturb: words(0), shuffle: words(16) };
}

export function releaseKeysOf(seed: number, table: EncodedTable): ReleaseKeys {
  return releaseKeys(seed, tableDigest(table));
}
