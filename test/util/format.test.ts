import { describe, expect, it } from 'vitest';
import { byCodeUnits, inWords, thousands, withArticle } from '../../src/util/format.ts';
import { Random } from '../../src/util/random.ts';

describe('formatting without locale data', () => {
  it('thousands separates like toLocaleString("en") for integers of every size and sign', () => {
    const rng = new Random(3);
    const samples = [0, 7, 999, 1000, 30_162, 4_320, 1_000_000, 10_000_000, -1234, 2 ** 31, 2 ** 53 - 1];
    for (let i = 0; i < 500; i++) samples.push(rng.below(2 ** 31) * (rng.below(2) ? 1 : -1));
    for (const n of samples) expect(thousands(n)).toBe(n.toLocaleString('en'));
    expect(thousands(1234.5)).toBe((1234.5).toLocaleString('en'));
  });

  it('lists names in words, the first few of a long list and how many more', () => {
    expect(inWords(['a', 'b', 'c'])).toBe('a, b and c');
    expect(inWords(['a', 'b', 'c'], 10, ' or ')).toBe('a, b or c');
    expect(inWords(['a', 'b', 'c'], 10, ', ')).toBe('a, b, c');
    const names = Array.from({ length: 1000 }, (_, i) => `c${i}`);
    expect(inWords(names, 3)).toBe('c0, c1, c2 and 997 more');
    expect(inWords(names, 3, ' or ')).toBe('c0, c1, c2 or 997 more');
    expect(inWords([...names, ...names], 3, ', ')).toBe('c0, c1, c2 and 1,997 more');
  });

  it('puts a or an before a name by its first letter', () => {
    expect(withArticle('attribute-disclosure')).toBe('an attribute-disclosure');
    expect(withArticle('Excel')).toBe('an Excel');
    expect(withArticle('Arrow')).toBe('an Arrow');
    expect(withArticle('k-anonymity or distinct-l-diversity')).toBe('a k-anonymity or distinct-l-diversity');
    expect(withArticle('CSV')).toBe('a CSV');
  });

  it('orders file names by code units', () => {
    expect(['report.json', 'data.csv', 'Data.csv', 'data.arrow', 'report.html'].sort(byCodeUnits)).toEqual([
      'Data.csv',
      'data.arrow',
      'data.csv',
      'report.html',
      'report.json',
    ]);
  });
});
