import { describe, expect, it } from 'vitest';
import { forgetPerDictionary, keepPerDictionary, PerDictionary } from '../../src/util/per-dictionary.ts';

describe('PerDictionary', () => {
  it('makes a value once per key and dictionary values, found again from a copy of them', () => {
    const kept = new PerDictionary<number>(2);
    let made = 0;
    const make = () => ++made;
    expect(kept.get('a', ['x', 'y'], make)).toBe(1);
    expect(kept.get('a', ['x', 'y'].slice(), make)).toBe(1);
    expect(kept.get('b', ['x', 'y'], make)).toBe(2);
    expect(kept.get('a', ['x', 'z'], make)).toBe(3);
    expect(kept.get('a', ['x'], make)).toBe(4);
    // Two kept, the latest first: the first one made is gone.
    expect(kept.get('a', ['x', 'y'], make)).toBe(5);
    // A run's end drops them all.
    forgetPerDictionary();
    expect(kept.get('a', ['x', 'y'], make)).toBe(6);
  });

  it('keeps nothing when making throws', () => {
    const kept = new PerDictionary<number>(2);
    expect(() =>
      kept.get('a', ['x'], () => {
        throw new Error('no');
      }),
    ).toThrow('no');
    expect(kept.get('a', ['x'], () => 7)).toBe(7);
  });

  it('keeps nothing once told to (a Lambda function between invocations)', () => {
    const kept = new PerDictionary<number>(2);
    let made = 0;
    try {
      keepPerDictionary(false);
      kept.get('a', ['x'], () => ++made);
      kept.get('a', ['x'], () => ++made);
      expect(made).toBe(2);
    } finally {
      keepPerDictionary(true);
    }
    kept.get('a', ['x'], () => ++made);
    expect(kept.get('a', ['x'], () => ++made)).toBe(3);
  });
});
