/**
 * The readers' dictionary keyed by a value's UTF-8 bytes (src/data/dictionary.ts): the codes a
 * map of the strings gives (order of first appearance), whatever the values' lengths around the
 * 8 bytes it compares in its entries, and values told apart by their bytes when their hashes are
 * equal.
 */
import { describe, expect, it } from 'vitest';
import { ByteDictionary } from '../../src/data/dictionary.ts';
import { Random } from '../../src/util/random.ts';

/** Values of 0 to 20 bytes: ASCII, non-ASCII, NUL bytes, near-duplicates (one byte apart). */
function randomValues(random: Random, n: number): string[] {
  const alphabet = ['0', '1', 'a', '-', 'é', '日', '😀', '\u0000'];
  return Array.from({ length: n }, () => {
    const length = random.below(random.below(2) === 0 ? 10 : 21);
    let v = '';
    while (Buffer.byteLength(v) < length) v += alphabet[random.below(random.below(5) === 0 ? 8 : 3)]!;
    return v;
  });
}

/** Each value's code, from one buffer of the values' bytes; `hash` fixes every value's hash (else FNV-1a). */
function codes(values: readonly string[], hash?: number): { codes: number[]; dictionary: string[] } {
  const buffer = Buffer.from(values.join(''));
  const dictionary = new ByteDictionary();
  let at = 0;
  const out = values.map((v) => {
    const end = at + Buffer.byteLength(v);
    const code =
      hash === undefined ? dictionary.codeOf(buffer, at, end) : dictionary.code(buffer, at, end, hash);
    at = end;
    return code;
  });
  return { codes: out, dictionary: dictionary.values };
}

function expected(values: readonly string[]): { codes: number[]; dictionary: string[] } {
  const index = new Map<string, number>();
  const out = values.map((v) => {
    let code = index.get(v);
    if (code === undefined) index.set(v, (code = index.size));
    return code;
  });
  return { codes: out, dictionary: [...index.keys()] };
}

describe('ByteDictionary', () => {
  it('codes values as a map of the strings does, in order of first appearance', () => {
    const values = randomValues(new Random(5), 40_000);
    expect(new Set(values).size).toBeGreaterThan(5000);
    expect(codes(values)).toEqual(expected(values));
  });

  it('tells apart values with the same hash by their bytes, before and past the 8th', () => {
    const base = [
      '',
      'a',
      'ab',
      '12345',
      '12346',
      '1234567',
      '12345678',
      '12345679',
      '123456789',
      '123456780',
    ];
    const values = [
      ...base,
      ...base.map((v) => `${v}é`),
      '\u0000',
      '\u0000\u0000',
      'x'.repeat(30),
      `${'x'.repeat(29)}y`,
    ];
    const all = [...values, ...values.slice().reverse(), ...values];
    expect(codes(all, 42)).toEqual(expected(all));
    expect(codes(all, 0)).toEqual(expected(all));
  });
});
