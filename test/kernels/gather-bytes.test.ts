/**
 * The gather of values' bytes: the WASM kernel writes the plain-TS reference's bytes, whatever
 * the values' lengths (empty, past the 8-byte stores, past the reference's long-value copy),
 * their number and bytes (across the wrapper's blocks), the pieces (offsets starting inside a
 * larger column) and the values sent nowhere; and it refuses a value that would write past the
 * output, before any store.
 */
import { describe, expect, it } from 'vitest';
import type { RawValues } from '../../src/data/raw.ts';
import type { GatherBytesKernel } from '../../src/kernels/gather-bytes/kernel.ts';
import { tsGatherBytes, tsShuffleBytes } from '../../src/kernels/gather-bytes/reference.ts';
import { wasmGatherBytes, wasmShuffleBytes } from '../../src/kernels/gather-bytes/wasm.ts';
import { Random } from '../../src/util/random.ts';
import { randomValuesAsBytes } from '../helpers/kernels.ts';

const values = randomValuesAsBytes;

/** Each value's target when the joined values are written in `order`, those left out at -1. */
function targetsOf(pieces: readonly RawValues[], order: Int32Array, keep: (r: number) => boolean) {
  const lengths = pieces.flatMap(({ offsets }) =>
    Array.from({ length: offsets.length - 1 }, (_, i) => offsets[i + 1]! - offsets[i]!),
  );
  const targets = new Int32Array(lengths.length).fill(-1);
  let at = 0;
  for (const r of order) {
    if (!keep(r)) continue;
    targets[r] = at;
    at += lengths[r]!;
  }
  return { targets, bytes: at };
}

const run = (kernel: GatherBytesKernel, pieces: readonly RawValues[], targets: Int32Array, size: number) => {
  const out = new Uint8Array(size);
  kernel(pieces, targets, out);
  return out;
};

/** Byte for byte (vitest's deep equality takes minutes over megabytes). */
const same = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b) === 0;

describe('gatherBytes', () => {
  it('writes what the reference writes, in blocks and pieces, values sent nowhere left out', () => {
    const rng = new Random(21);
    for (const [pieceCount, n, longest] of [
      [1, 10, 3],
      [3, 1000, 40],
      [2, 70_000, 20], // more values than a block holds
      [2, 200, 50_000], // more bytes than a block holds
    ] as const) {
      const pieces = Array.from({ length: pieceCount }, (_, p) => values(rng, n + p, longest, p * 7));
      const total = pieces.reduce((s, v) => s + v.offsets.length - 1, 0);
      const order = rng.permutation(total);
      for (const keep of [() => true, (r: number) => r % 3 !== 1]) {
        const { targets, bytes } = targetsOf(pieces, order, keep);
        const want = run(tsGatherBytes, pieces, targets, bytes);
        expect(same(run(wasmGatherBytes, pieces, targets, bytes), want)).toBe(true);
        // The reference against its definition: each value's bytes where its target says.
        let r = 0;
        for (const { offsets, bytes: from } of pieces)
          for (let i = 0; i + 1 < offsets.length; i++, r++) {
            const at = targets[r]!;
            const value = from.subarray(offsets[i]!, offsets[i + 1]!);
            if (at >= 0 && Buffer.compare(want.subarray(at, at + value.length), value) !== 0)
              expect.fail(`value ${r} is not at ${at}`);
          }
      }
    }
  });

  it('leaves no byte of an earlier session in what it does not write', () => {
    const rng = new Random(22);
    const pieces = [values(rng, 2000, 30)];
    const order = rng.permutation(2000);
    const full = targetsOf(pieces, order, () => true);
    run(wasmGatherBytes, pieces, full.targets, full.bytes); // leaves the instance's memory full
    // Only every other value, at the same places: the gaps stay zero, as in a fresh array.
    const half = full.targets.map((t, r) => (r % 2 === 0 ? t : -1));
    expect(run(wasmGatherBytes, pieces, half, full.bytes)).toEqual(
      run(tsGatherBytes, pieces, half, full.bytes),
    );
  });

  it('refuses a value that would be written past the output', () => {
    const pieces = [values(new Random(23), 5, 10)];
    const targets = Int32Array.of(0, -1, -1, -1, 4);
    const length = pieces[0]!.offsets[5]! - pieces[0]!.offsets[4]!;
    expect(() => run(wasmGatherBytes, pieces, targets, 4 + length - 1)).toThrow(RangeError);
  });
});

describe('the shuffle of values as bytes', () => {
  it('gives the reference’s offsets and bytes, over pieces and subsets, and none for a repeated row', () => {
    const rng = new Random(23);
    for (const [pieceCount, n, longest] of [
      [1, 1, 0],
      [3, 1000, 40],
      [4, 70_000, 30],
      [2, 300, 20_000],
    ] as const) {
      const pieces = Array.from({ length: pieceCount }, (_, p) => values(rng, n + p, longest, p * 5));
      const total = pieces.reduce((s, v) => s + v.offsets.length - 1, 0);
      const order = rng.permutation(total);
      for (const rows of [order, order.subarray(0, total >> 1), new Int32Array(0)]) {
        const ts = tsShuffleBytes(pieces, rows)!;
        const wasm = wasmShuffleBytes(pieces, rows)!;
        expect([...wasm.offsets]).toEqual([...ts.offsets]);
        expect(same(wasm.bytes, ts.bytes)).toBe(true);
        // The reference against its definition: row j holds joined value rows[j].
        const joined = pieces.flatMap(({ offsets, bytes }) =>
          Array.from({ length: offsets.length - 1 }, (_, i) =>
            Buffer.from(bytes.subarray(offsets[i]!, offsets[i + 1]!)),
          ),
        );
        const j = rows.length >> 1;
        if (rows.length > 0)
          expect(
            Buffer.from(ts.bytes.subarray(ts.offsets[j]!, ts.offsets[j + 1]!)).equals(joined[rows[j]!]!),
          ).toBe(true);
      }
      if (total > 1) {
        const twice = Int32Array.of(0, 1, 0);
        expect(tsShuffleBytes(pieces, twice)).toBeUndefined();
        expect(wasmShuffleBytes(pieces, twice)).toBeUndefined();
      }
    }
  });
});
