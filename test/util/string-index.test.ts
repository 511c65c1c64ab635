import { describe, expect, it } from 'vitest';
import { Random } from '../../src/util/random.ts';
import { positionsIn } from '../../src/util/string-index.ts';

describe('each string’s position in a list', () => {
  it('is the position a Map of the list gives, -1 for a string not listed', () => {
    const random = new Random(3);
    const word = () =>
      Array.from({ length: 1 + random.below(12) }, () => 'abcdeé€𝄞x'[random.below(10)]).join('');
    for (const size of [0, 1, 7, 1000, 20_000]) {
      const list = Array.from({ length: size }, word);
      const values = [...Array.from({ length: 500 }, word), ...list.slice(0, 50), ''];
      const map = new Map(list.map((s, c) => [s, c]));
      expect([...positionsIn(values, list)]).toEqual(values.map((v) => map.get(v) ?? -1));
    }
  });

  it('gives a string listed twice its last position', () => {
    expect([...positionsIn(['b', 'a', 'c'], ['a', 'b', 'a'])]).toEqual([1, 2, -1]);
  });
});
