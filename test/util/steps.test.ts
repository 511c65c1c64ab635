/**
 * sliced: work in slices measured by the clock it is given (a test's clock here), each slice
 * inside its wrapper and at least one unit long, the work's result passed through.
 */
import { describe, expect, it } from 'vitest';
import { runSteps, type Steps, sliced } from '../../src/util/steps.ts';

function* units(n: number, done: number[]): Steps<string> {
  for (let i = 0; i < n; i++) {
    done.push(i);
    yield;
  }
  return 'result';
}

describe('sliced', () => {
  it('groups the units into slices by the clock given, each inside the wrapper', () => {
    let t = 0;
    const now = () => t++; // one ms per reading
    const done: number[] = [];
    const slices: number[][] = [];
    const around = <R>(work: () => R): R => {
      const start = done.length;
      const r = work();
      slices.push(done.slice(start));
      return r;
    };
    expect(runSteps(sliced(units(10, done), around, 3, now))).toBe('result');
    expect(done).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
    // A slice reads the clock at its start and after each unit: 3 ms is three units.
    expect(slices.map((s) => s.length)).toEqual([3, 3, 3, 1]);
  });

  it('runs one unit a slice when the clock is past the slice at once', () => {
    let t = 0;
    const now = () => (t += 100);
    const done: number[] = [];
    let slices = 0;
    const around = <R>(work: () => R): R => {
      slices++;
      return work();
    };
    expect(runSteps(sliced(units(4, done), around, 50, now))).toBe('result');
    expect(done).toEqual([0, 1, 2, 3]);
    // Four units and the step that returns the result.
    expect(slices).toBe(5);
  });
});
