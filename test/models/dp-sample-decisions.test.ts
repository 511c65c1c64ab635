import { describe, expect, it } from 'vitest';
import { sampledRowIndices, uniform } from '../../src/models/differential-privacy.ts';
import { UniformDraws } from '../../src/util/random.ts';

/** Gives the listed words in order, then again from the start. */
class Words extends UniformDraws {
  private at = 0;
  constructor(private readonly words: readonly number[]) {
    super();
  }
  nextU32(): number {
    return this.words[this.at++ % this.words.length]! >>> 0;
  }
}

describe('the sample’s decisions on draws next to β', () => {
  it('keeps a row exactly when uniform() < β, also where the high 27 bits equal the threshold’s', () => {
    for (const beta of [0.3934693402873664, 0.6321205588285576, 0.5 + 2 ** -53, 1 - 2 ** -53, 2 ** -40]) {
      const threshold = beta * 2 ** 53;
      const high = Math.floor(threshold / 2 ** 26);
      const low = threshold - high * 2 ** 26;
      // Rows whose draws straddle the threshold: high bits below, equal and above it, and with
      // equal high bits the low bits below, at and above the threshold's (and the extremes).
      const lows = [
        0,
        Math.floor(low) - 1,
        Math.floor(low),
        Math.ceil(low),
        Math.ceil(low) + 1,
        2 ** 26 - 1,
      ].filter((l) => l >= 0 && l < 2 ** 26);
      const pairs: [number, number][] = [];
      for (const h of [high - 1, high, high + 1, 0, 2 ** 27 - 1].filter((h) => h >= 0 && h < 2 ** 27))
        for (const l of lows) pairs.push([h * 32 + 31 * (l & 1), l * 64 + (h & 63)]);
      const words = pairs.flat();
      const expected = pairs.flatMap((_, r) => {
        const draw = new Words(words.slice(2 * r, 2 * r + 2));
        return uniform(draw) < beta ? [r] : [];
      });
      expect([...sampledRowIndices(pairs.length, beta, new Words(words))]).toEqual(expected);
      // Both outcomes occur among the tied rows (the test reaches the low bits' comparison).
      const tied = pairs.map((p, r) => [p, r] as const).filter(([p]) => p[0] >>> 5 === high);
      if (high < 2 ** 27 && low > 1) {
        expect(tied.some(([, r]) => expected.includes(r))).toBe(true);
        expect(tied.some(([, r]) => !expected.includes(r))).toBe(true);
      }
    }
  });
});
