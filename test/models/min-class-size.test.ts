import { describe, expect, it } from 'vitest';
import { deltaDisclosure } from '../../src/models/delta-disclosure.ts';
import { kAnonymity } from '../../src/models/k-anonymity.ts';
import { distinctLDiversity, entropyLDiversity, recursiveClDiversity } from '../../src/models/l-diversity.ts';
import type { PrivacyModel } from '../../src/models/model.ts';
import { equalEmd, smallestEqualClose, tCloseness } from '../../src/models/t-closeness.ts';
import { Random } from '../../src/util/random.ts';

/** Every histogram of `size` rows over `width` values. */
function* histograms(size: number, width: number): Generator<Int32Array> {
  const h = new Int32Array(width);
  function* place(i: number, left: number): Generator<Int32Array> {
    if (i === width - 1) {
      h[i] = left;
      yield h;
      return;
    }
    for (let c = 0; c <= left; c++) {
      h[i] = c;
      yield* place(i + 1, left - c);
    }
  }
  yield* place(0, size);
}

/** The smallest size some histogram passes, by enumeration (or `limit + 1`). */
function bruteSmallest(model: PrivacyModel, width: number, limit: number): number {
  for (let size = 1; size <= limit; size++) {
    for (const h of histograms(size, width)) if (model.holds({ size, histogram: h })) return size;
  }
  return limit + 1;
}

describe('minClassSize: no smaller class can pass, and the size is tight where computed', () => {
  it('equal-distance t-closeness: the rounding argument equals enumeration', () => {
    const rng = new Random(5);
    for (let trial = 0; trial < 40; trial++) {
      const width = 2 + rng.below(3);
      const raw = Array.from({ length: width }, () => 1 + rng.below(20));
      const total = raw.reduce((a, b) => a + b, 0);
      const table = Float64Array.from(raw, (x) => x / total);
      const t = [0.05, 0.1, 0.2, 0.3][rng.below(4)]!;
      const smallest = smallestEqualClose(table, t, 12);
      const model = tCloseness('sa', t, 'equal', equalEmd(table), smallest);
      expect({ trial, smallest }).toEqual({ trial, smallest: bruteSmallest(model, width, 12) });
    }
  });

  it('k, distinct, entropy and recursive l-diversity: classes below the size fail', () => {
    const width = 4;
    const models = [
      kAnonymity(3),
      distinctLDiversity('sa', 3),
      entropyLDiversity('sa', 2.5),
      entropyLDiversity('sa', 3),
      recursiveClDiversity('sa', 3, 3),
    ];
    for (const model of models) {
      const brute = bruteSmallest(model, width, 8);
      expect(model.minClassSize, model.spec.model).toBeLessThanOrEqual(brute);
      expect(model.minClassSize, model.spec.model).toBe(brute);
    }
    // δ-disclosure claims nothing beyond 1
    expect(deltaDisclosure('sa', 1.2, Float64Array.of(0.25, 0.25, 0.25, 0.25)).minClassSize).toBe(1);
  });
});
