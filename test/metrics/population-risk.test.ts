import { describe, expect, it } from 'vitest';
import { PpdpError } from '../../src/errors.ts';
import {
  hypergeometricOne,
  logGamma,
  populationRiskPart,
  populationSize,
  populationUniqueness,
  sampleRisk,
  sizeHistogram,
} from '../../src/metrics/population-risk.ts';

describe('sample risk', () => {
  it('reads the class sizes', () => {
    // classes of 1, 1, 2, 4 → 8 records
    const r = sampleRisk([4, 1, 2, 1]);
    expect(sizeHistogram([4, 1, 2, 1])).toEqual([
      [1, 2],
      [2, 1],
      [4, 1],
    ]);
    expect(r).toMatchObject({ records: 8, classes: 4, highestRisk: 1, prosecutor: 1, journalist: 1 });
    expect(r.recordsAtHighestRisk).toBe(2 / 8);
    expect(r.sampleUniques).toBe(2 / 8);
    expect(r.averageRisk).toBe(4 / 8);
    expect(r.marketer).toBe(4 / 8);
    expect(sampleRisk([3, 3, 6]).sampleUniques).toBe(0);
    expect(sampleRisk([3, 3, 6]).recordsAtHighestRisk).toBe(6 / 12);
  });
});

describe('population', () => {
  it('takes a size or a sampling fraction, and refuses impossible ones', () => {
    expect(populationSize(100, { size: 1000 })).toBe(1000);
    expect(populationSize(100, { samplingFraction: 0.3 })).toBe(333);
    const refused = (f: () => unknown) => expect(f).toThrow(PpdpError);
    refused(() => populationSize(100, { size: 50 }));
    refused(() => populationSize(100, { size: 1e3 + 0.5 }));
    refused(() => populationSize(100, { samplingFraction: 0 }));
    refused(() => populationSize(100, { samplingFraction: 1.5 }));
  });

  it('over persons: N from the input’s persons, at least the persons the classes add up to', () => {
    // 40 persons, released in classes of 1, 1, 2 and 6 persons: N = 40 / 0.1.
    const part = populationRiskPart([1, 1, 2, 6], { samplingFraction: 0.1 }, 40, true).populationRisk!;
    expect(part).toEqual({
      ...populationUniqueness([1, 1, 2, 6], { size: 400 }),
      over: 'persons',
    });
    // Three persons, one with rows in two classes: four persons in the classes, the whole population.
    const spanning = populationRiskPart([2, 1, 1], { samplingFraction: 1 }, 3, true).populationRisk!;
    expect(spanning.populationSize).toBe(4);
    expect(spanning.samplingFraction).toBe(1);
    // Over rows nothing is added: the figures as they were.
    expect(populationRiskPart([1, 1, 2, 6], { samplingFraction: 0.1 }, 40).populationRisk).toEqual(
      populationUniqueness([1, 1, 2, 6], { size: 400 }),
    );
  });

  it('no sample unique: no population unique under any model', () => {
    const p = populationUniqueness([2, 3, 5], { samplingFraction: 0.01 });
    expect(p.estimates.dankar.uniques).toBe(0);
    expect(p.dankarModel).toBeNull();
  });
});

describe('numerics', () => {
  it('hypergeometric P(X = 1) equals the direct count', () => {
    const choose = (n: number, k: number) => {
      let r = 1;
      for (let i = 1; i <= k; i++) r = (r * (n - k + i)) / i;
      return r;
    };
    for (const [N, K, n] of [
      [50, 1, 10],
      [50, 7, 10],
      [40, 30, 12],
      [30, 29, 2],
    ] as const) {
      const direct = (K * choose(N - K, n - 1)) / choose(N, n);
      expect(hypergeometricOne(N, K, n)).toBeCloseTo(direct, 14);
    }
    expect(hypergeometricOne(10, 9, 5)).toBe(0);
  });

  it('log Γ', () => {
    expect(logGamma(10)).toBeCloseTo(Math.log(362880), 13);
    expect(logGamma(0.5)).toBeCloseTo(0.5 * Math.log(Math.PI), 14);
    expect(logGamma(1)).toBeCloseTo(0, 14);
    expect(logGamma(171)).toBeCloseTo(706.5730622457874, 10);
  });
});
