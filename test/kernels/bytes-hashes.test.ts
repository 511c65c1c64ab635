/**
 * The values' byte hashes: the WASM kernel gives the plain-TS reference's words, whatever the
 * values' lengths (every tail of 0–3 bytes, empty values, one value longer than a block), their
 * number (across the wrapper's blocks) and where their offsets start (a view on a larger column).
 */
import { describe, expect, it } from 'vitest';
import type { RawValues } from '../../src/data/raw.ts';
import { tsBytesHashes } from '../../src/kernels/bytes-hashes/reference.ts';
import { wasmBytesHashes } from '../../src/kernels/bytes-hashes/wasm.ts';
import { Random } from '../../src/util/random.ts';
import { bytesHashes } from '../../src/verify/fingerprint.ts';
import { randomValuesAsBytes } from '../helpers/kernels.ts';

const values = randomValuesAsBytes;

const both = (v: RawValues, seed0: number, seed1: number) => {
  const n = v.offsets.length - 1;
  const ts = new Int32Array(2 * n);
  const wasm = new Int32Array(2 * n);
  tsBytesHashes(v, seed0, seed1, ts);
  wasmBytesHashes(v, seed0, seed1, wasm);
  return { ts, wasm };
};

describe('the values’ byte hashes', () => {
  it('are the same words in WASM as in plain TS', () => {
    const rng = new Random(7);
    for (const [n, longest, skip] of [
      [1, 0, 0],
      [5, 3, 0],
      [1000, 9, 13],
      [70_000, 40, 0],
      [200_000, 7, 1],
    ] as const) {
      const v = values(rng, n, longest, skip);
      const { ts, wasm } = both(v, 0x3c6ef372, -1);
      expect(wasm, `${n} values up to ${longest} bytes from ${skip}`).toEqual(ts);
    }
  });

  it('hash a value longer than a block, and the values around it', () => {
    const long = 5 << 20;
    const offsets = Int32Array.of(0, 3, 3 + long, 3 + long + 2);
    const bytes = new Uint8Array(offsets[3]!).map((_, j) => (j * 131) & 255);
    const { ts, wasm } = both({ offsets, bytes }, 1, 2);
    expect(wasm).toEqual(ts);
  });

  it('tell values apart by a byte, by their length, and by the seeds', () => {
    const v: RawValues = {
      offsets: Int32Array.of(0, 3, 6, 10, 10),
      bytes: Uint8Array.from([97, 98, 99, 97, 98, 100, 97, 98, 99, 0]),
    };
    const { wasm } = both(v, 5, 6);
    const pair = (i: number) => `${wasm[2 * i]},${wasm[2 * i + 1]}`;
    expect(new Set([0, 1, 2, 3].map(pair)).size).toBe(4);
    expect(wasm[0]).not.toBe(wasm[1]);
    // Through bytesHashes: the kernel's answer for many values, the reference's for few.
    const many = values(new Random(3), 5000, 30);
    expect(bytesHashes(4, many)).toEqual(bytesHashes(4, many, undefined, tsBytesHashes));
    const few = values(new Random(4), 10, 30);
    expect(bytesHashes(4, few, undefined, wasmBytesHashes)).toEqual(bytesHashes(4, few));
  });
});
