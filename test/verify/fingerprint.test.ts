/**
 * The hashes of values as bytes (bytesHashes): two lanes of MurmurHash3 (x86, 32-bit) under
 * seeds that depend on the column, computed in one pass, the same as two hashes apart.
 */
import { describe, expect, it } from 'vitest';
import { utf8Buffers } from '../../src/data/utf8.ts';
import { bytesHashes, fold } from '../../src/verify/fingerprint.ts';

/** MurmurHash3 x86 32-bit, as published (a block at a time, then the tail and the final mix). */
function murmur3(bytes: Uint8Array, seed: number): number {
  let h = seed | 0;
  const blocks = bytes.length & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const tail = bytes.length & 3;
  if (tail > 0) {
    let k = 0;
    if (tail === 3) k ^= bytes[blocks + 2]! << 16;
    if (tail >= 2) k ^= bytes[blocks + 1]! << 8;
    k ^= bytes[blocks]!;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    h ^= Math.imul(k, 0x1b873593);
  }
  h ^= bytes.length;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return h ^ (h >>> 16);
}

describe('bytesHashes', () => {
  it('is MurmurHash3 of each value under the two seeds of its column', () => {
    // The published vectors, so that the reference above is the function.
    expect(murmur3(Buffer.from(''), 0)).toBe(0);
    expect(murmur3(Buffer.from('hello'), 0) >>> 0).toBe(0x248bfa47);
    expect(murmur3(Buffer.from('Hello, world!'), 1234) >>> 0).toBe(0xfaf6cdb3);
    const values = Array.from({ length: 40 }, (_, n) => 'é note #'.repeat(4).slice(0, n));
    for (const column of [0, 3]) {
      const got = bytesHashes(column, utf8Buffers(values));
      values.forEach((v, i) => {
        const bytes = Buffer.from(v, 'utf8');
        expect([got[2 * i], got[2 * i + 1]], v).toEqual([
          murmur3(bytes, fold(0x3c6ef372, column)),
          murmur3(bytes, fold(0xa54ff53a, column)),
        ]);
      });
    }
  });

  it('leaves the values no row uses at 0', () => {
    const got = bytesHashes(1, utf8Buffers(['a', 'b', 'c']), Uint8Array.of(1, 0, 1));
    expect([got[2], got[3]]).toEqual([0, 0]);
    expect(got[0]).not.toBe(0);
  });
});
