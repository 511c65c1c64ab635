/**
 * A raw column's value lanes for the table digest: the WASM kernel (four values at a time, the
 * values that are not all ASCII hashed from their text) gives the plain-TS reference's words,
 * whatever the values' lengths (empty ones, lengths that differ inside a group of four, one
 * longer than a block just before the end), their number (groups of four and the rest, across
 * the wrapper's blocks), where their offsets start, and where the non-ASCII values fall.
 */
import { describe, expect, it } from 'vitest';
import type { RawValues } from '../../src/data/raw.ts';
import { LANES } from '../../src/kernels/digest/kernel.ts';
import { hashValue, tsRawLanes } from '../../src/kernels/digest/reference.ts';
import { wasmRawLanes } from '../../src/kernels/digest/wasm.ts';
import { Random } from '../../src/util/random.ts';

const NON_ASCII = ['é', '日本', '🙂', 'Zürich'];

/** `n` values of up to `longest` ASCII characters, a share `wide` of them with a non-ASCII one. */
function values(rng: Random, n: number, longest: number, wide: number, skip = 0): RawValues {
  const wideBytes = NON_ASCII.map((t) => Buffer.from(t, 'utf8'));
  const bytes = new Uint8Array(skip + n * (longest + 4));
  const offsets = new Int32Array(n + 1);
  let at = (offsets[0] = skip);
  for (let i = 0; i < n; i++) {
    const length = rng.below(longest + 1);
    const widened = rng.below(1000) < wide * 1000 ? rng.below(length + 1) : -1;
    for (let k = 0; k <= length; k++) {
      if (k === widened) {
        const w = wideBytes[rng.below(wideBytes.length)]!;
        bytes.set(w, at);
        at += w.length;
      }
      if (k < length) bytes[at++] = 32 + rng.below(95);
    }
    offsets[i + 1] = at;
  }
  return { offsets, bytes: bytes.subarray(0, at) };
}

describe('a raw column’s value lanes', () => {
  it('are the same words in WASM as in plain TS', () => {
    const rng = new Random(5);
    for (const [n, longest, wide, skip] of [
      [1, 0, 0, 0],
      [3, 5, 0, 0],
      [4, 1, 0, 0],
      [5, 9, 0.5, 0],
      [1000, 40, 0.01, 13],
      [70_001, 30, 0.001, 0],
      [200_003, 12, 0, 7],
    ] as const) {
      const v = values(rng, n, longest, wide, skip);
      for (const column of [0, 3])
        expect(wasmRawLanes(column, v), `${n} values up to ${longest}, column ${column}`).toEqual(
          tsRawLanes(column, v),
        );
    }
  });

  it('are the lanes of each value’s text, as a dictionary’s entry hashes', () => {
    const texts = [
      '',
      'a',
      'abcd',
      'referred in clinic #0 1qql',
      'Zürich',
      '2025-06-06T23:17:18',
      '日本',
      '35872.62',
    ];
    const bytes = texts.map((t) => Buffer.from(t, 'utf8'));
    const offsets = new Int32Array(texts.length + 1);
    bytes.forEach((b, i) => {
      offsets[i + 1] = offsets[i]! + b.length;
    });
    const got = wasmRawLanes(2, { offsets, bytes: new Uint8Array(Buffer.concat(bytes)) });
    texts.forEach((t, i) => {
      const want = new Uint32Array(LANES);
      hashValue(2, t, want, 0);
      expect(got.subarray(LANES * i, LANES * i + LANES), t).toEqual(want);
    });
    // The lanes tell the values apart.
    expect(new Set(texts.map((_, i) => got.subarray(LANES * i, LANES * i + LANES).join())).size).toBe(
      texts.length,
    );
  });

  it('hash a value longer than a block among short ones, at the end of the column too', () => {
    const long = 5 << 20;
    for (const at of [0, 2, 5]) {
      const lengths = [3, 0, 7, 1, 2, 4].map((l, i) => (i === at ? long : l));
      const offsets = new Int32Array(lengths.length + 1);
      lengths.forEach((l, i) => {
        offsets[i + 1] = offsets[i]! + l;
      });
      const bytes = new Uint8Array(offsets[lengths.length]!).map((_, j) => 33 + ((j * 7) % 90));
      expect(wasmRawLanes(1, { offsets, bytes }), `the long value at ${at}`).toEqual(
        tsRawLanes(1, { offsets, bytes }),
      );
    }
  });
});
