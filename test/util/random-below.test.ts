/**
 * Random.below: a uniform integer in [0, n) by rejection, its remainders taken without the
 * floating-point `%` and still exactly the ones `%` gives (a seeded release's bytes depend on
 * every draw), for n from 1 to 2^32.
 */
import { describe, expect, it } from 'vitest';
import { Random, UniformDraws } from '../../src/util/random.ts';

/** below() as it was written first: the limit and the draw's remainder by `%`. */
function belowByRemainder(random: Random, n: number): number {
  const limit = 2 ** 32 - (2 ** 32 % n);
  for (;;) {
    const x = random.nextU32();
    if (x < limit) return x % n;
  }
}

describe('Random.below', () => {
  it('draws the same integers as the remainder by % for every size of range', () => {
    const sizes = [
      1,
      2,
      3,
      7,
      10,
      1000,
      30_162,
      65_536,
      2 ** 31 - 1,
      2 ** 31,
      2 ** 31 + 1,
      3_000_000_019,
      2 ** 32 - 1,
      2 ** 32,
    ];
    const pick = new Random(1);
    for (let i = 0; i < 200; i++) sizes.push(1 + pick.nextU32());
    for (const n of sizes) {
      const a = new Random(n);
      const b = new Random(n);
      const drawn = Array.from({ length: 200 }, () => a.below(n));
      const expected = Array.from({ length: 200 }, () => belowByRemainder(b, n));
      expect({ n, drawn }).toEqual({ n, drawn: expected });
    }
  });

  it('shuffles as the remainder by % would', () => {
    const p = new Random(42).permutation(5000);
    const random = new Random(42);
    const q = Int32Array.from({ length: 5000 }, (_, i) => i);
    for (let i = 4999; i > 0; i--) {
      const j = belowByRemainder(random, i + 1);
      [q[i], q[j]] = [q[j]!, q[i]!];
    }
    expect([...p]).toEqual([...q]);
  });
});

describe('Random.shuffle', () => {
  // Random's shuffle holds the generator's state in locals: the same draws as the generic
  // shuffle (below, nextU32), the same order, and the same state after.
  it('makes the permutation the generic shuffle makes, and leaves the same state', () => {
    const generic = UniformDraws.prototype.shuffle;
    for (const n of [0, 1, 2, 3, 100, 65_537, 300_000]) {
      for (const key of [Uint32Array.of(1, 2, 3, 4), Uint32Array.of(0xffffffff, 7, 0x80000000, 9)]) {
        const a = Random.fromKey(key);
        const b = Random.fromKey(key);
        const fast = a.shuffle(Int32Array.from({ length: n }, (_, i) => i));
        const slow = generic.call(
          b,
          Int32Array.from({ length: n }, (_, i) => i),
        );
        expect(fast, `${n} values`).toEqual(slow);
        expect([a.nextU32(), a.nextU32()]).toEqual([b.nextU32(), b.nextU32()]);
      }
    }
  });
});
