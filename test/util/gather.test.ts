/**
 * gather: a column at the positions named, in their order, for every length (the positions
 * past a multiple of four are taken apart from the rest), into a new array or the one given.
 */
import { describe, expect, it } from 'vitest';
import { gather } from '../../src/util/gather.ts';

describe('gather', () => {
  const source = Int32Array.from({ length: 50 }, (_, i) => 1000 + 7 * i);

  it('takes each position in order for every length, whatever it leaves past a multiple of four', () => {
    for (let n = 0; n <= 13; n++) {
      const at = Int32Array.from({ length: n }, (_, i) => (i * 17 + 3) % source.length);
      expect([...gather(source, at)]).toEqual([...at].map((p) => source[p]));
    }
  });

  it('writes into the array given and returns it', () => {
    const at = Int32Array.of(4, 0, 49, 4, 9);
    const into = new Int32Array(5);
    expect(gather(source, at, into)).toBe(into);
    expect([...into]).toEqual([1028, 1000, 1343, 1028, 1063]);
  });
});
