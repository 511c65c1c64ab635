import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { bucketDiversity, type DiversityRequirement } from '../../src/methods/bucket-common.ts';
import { attributeDisclosure, disclosureBoundOfL } from '../../src/models/attribute-disclosure.ts';
import { deltaDisclosure } from '../../src/models/delta-disclosure.ts';
import { describeModel } from '../../src/models/describe.ts';
import { kAnonymity } from '../../src/models/k-anonymity.ts';
import {
  distinctLDiversity,
  distinctValuesNeeded,
  entropyLDiversity,
  lDiversity,
  posteriorHolds,
  posteriorLimit,
  recursiveClDiversity,
} from '../../src/models/l-diversity.ts';
import { gammaFor, impliedRho2, rhoPrivacy } from '../../src/models/rho-privacy.ts';
import { equalEmd, tCloseness } from '../../src/models/t-closeness.ts';

describe('every model describes itself as the report reads it', () => {
  const models = [
    [kAnonymity(5), 'k-anonymity', ['every class has at least k = 5 rows']],
    [distinctLDiversity('disease', 3), 'Distinct l-diversity', ['l ≥ 3']],
    [entropyLDiversity('disease', 2.5), 'Entropy l-diversity', ['l ≥ 2.5']],
    [recursiveClDiversity('disease', 3, 2), 'Recursive (c, l)-diversity', ['c = 3', 'l ≥ 2']],
    [
      tCloseness('disease', 0.2, 'equal', equalEmd(Float64Array.of(0.5, 0.5))),
      't-closeness',
      ['distance to the overall distribution ≤ t = 0.2', 'equal ground distance'],
    ],
    [deltaDisclosure('disease', 1.5, Float64Array.of(0.5, 0.5)), 'δ-disclosure privacy', ['δ ≤ 1.5']],
    [
      attributeDisclosure('disease', 0.25),
      'Attribute-disclosure bound',
      ['per-row disclosure risk ≤ τ = 0.25'],
    ],
    [
      rhoPrivacy('disease', 0.1, 0.5, 'spec.json', 'privacy[0]'),
      '(ρ1, ρ2)-privacy',
      ['prior ≤ ρ1 = 0.1', 'posterior ≤ ρ2 = 0.5'],
    ],
  ] as const;
  for (const [model, name, requirements] of models) {
    it(name, () => {
      expect(model.describe()).toEqual({ name, requirements });
      // The report describes the model from report.json's parameters: the same words.
      const { model: modelName, ...params } = model.spec;
      expect(describeModel(modelName, params)).toEqual(model.describe());
    });
  }

  it('numbers are written by the caller, unknown names and parameters read as they are', () => {
    expect(kAnonymity(5).describe((v) => `<${v}>`).requirements).toEqual([
      'every class has at least k = <5> rows',
    ]);
    expect(describeModel('future-model', { attribute: 'a', z: 2 }, String, (k, v) => `${k}:${v}`)).toEqual({
      name: 'future-model',
      requirements: ['z:2'],
    });
  });
});

describe('the attribute-disclosure bound', () => {
  it('holds when the highest per-row risk is at most τ', () => {
    const m = attributeDisclosure('disease', 0.25);
    expect([m.holds(0.25), m.holds(0.2500001)]).toEqual([true, false]);
    expect(m.from).toBe('attribute-disclosure τ = 0.25');
  });

  it('reads l-diversity as τ = 1/l, described as the l-diversity model it is', () => {
    const l = distinctLDiversity('disease', 4);
    const bound = disclosureBoundOfL(l);
    expect(bound.value).toBe(0.25);
    expect(bound.from).toBe('distinct-l-diversity l = 4 (τ = 1/l)');
    expect(bound.describe()).toEqual(l.describe());
    expect([bound.holds(0.25), bound.holds(0.26)]).toEqual([true, false]);
  });
});

describe('(ρ1, ρ2)-privacy', () => {
  it('validates its bounds with the spec error', () => {
    for (const [rho1, rho2] of [
      [0.5, 0.1],
      [0.3, 0.3],
      [0, 0.5],
      [0.1, 1],
    ]) {
      const error = (() => {
        try {
          rhoPrivacy('disease', rho1!, rho2!, 'spec.json', 'privacy[1]');
        } catch (e) {
          return e;
        }
      })();
      expect(error).toBeInstanceOf(SpecError);
      expect((error as SpecError).code).toBe('E_SPEC_RANGE');
      expect((error as SpecError).message).toBe(
        `spec.json: privacy[1] needs 0 < rho1 < rho2 < 1 (got rho1 = ${rho1}, rho2 = ${rho2})`,
      );
    }
  });

  it('allows γ = ρ2(1−ρ1)/(ρ1(1−ρ2)), which implies exactly ρ2 back', () => {
    const m = rhoPrivacy('disease', 0.1, 0.5, 'spec.json', 'privacy[0]');
    expect(m.gamma).toBeCloseTo(9, 12);
    expect(m.gamma).toBe(gammaFor(0.1, 0.5));
    expect(impliedRho2(m.gamma, 0.1)).toBeCloseTo(0.5, 12);
    expect(impliedRho2(Number.POSITIVE_INFINITY, 0.1)).toBe(1);
  });

  it('checks a matrix exactly: the identity breaches, the uniform matrix does not', () => {
    const m = rhoPrivacy('disease', 0.1, 0.5, 'spec.json', 'privacy[0]');
    const prior = Float64Array.of(1, 9, 10); // rows per value: priors 0.05, 0.45, 0.5
    const identity = Float64Array.of(1, 0, 0, 0, 1, 0, 0, 0, 1);
    const uniform = new Float64Array(9).fill(1 / 3);
    expect(m.check(identity, 3, prior).satisfied).toBe(false);
    expect(m.check(identity, 3, prior).worstUpward).toBe(1);
    expect(m.check(uniform, 3, prior).satisfied).toBe(true);
  });
});

describe('l-diversity in its posterior form', () => {
  it('allows no SA value more likely than 1/l (up to rounding)', () => {
    expect(posteriorHolds(1 / 3, 3)).toBe(true);
    expect(posteriorHolds(0.34, 3)).toBe(false);
    expect(posteriorLimit(4)).toBeGreaterThanOrEqual(0.25);
    expect(posteriorLimit(4)).toBeLessThan(0.2500001);
  });

  it('needs l distinct values, rounded up for entropy l-diversity', () => {
    expect([distinctValuesNeeded(3), distinctValuesNeeded(2.5), distinctValuesNeeded(1)]).toEqual([3, 3, 1]);
    expect(lDiversity({ model: 'entropy-l-diversity', attribute: 'a', l: 2.5 }).distinctValues).toBe(3);
    expect(lDiversity({ model: 'distinct-l-diversity', attribute: 'a', l: 2 }).measureName).toBe('l');
  });
});

describe('buckets judged by the l-diversity model', () => {
  const requirement = (model: DiversityRequirement['model'], l: number): DiversityRequirement => ({
    attribute: 'a',
    column: { name: 'a', dictionary: ['x', 'y', 'z'], codes: new Int32Array(0) },
    model,
    l,
    diversity: lDiversity({ model, attribute: 'a', l }),
  });
  // Two buckets over three SA values: (1, 1, 1) and (2, 1, 0).
  const histograms = Int32Array.of(1, 1, 1, 2, 1, 0);
  const sizes = [3, 3];

  it('distinct: the fewest distinct values, and whether every bucket has l', () => {
    expect(bucketDiversity(requirement('distinct-l-diversity', 2), histograms, sizes, 3)).toEqual({
      achievedL: 2,
      satisfied: true,
    });
    expect(bucketDiversity(requirement('distinct-l-diversity', 3), histograms, sizes, 3).satisfied).toBe(
      false,
    );
  });

  it('entropy: exp(entropy) of the least diverse bucket', () => {
    const { achievedL, satisfied } = bucketDiversity(
      requirement('entropy-l-diversity', 1.8),
      histograms,
      sizes,
      3,
    );
    const h = -((2 / 3) * Math.log(2 / 3) + (1 / 3) * Math.log(1 / 3));
    expect(achievedL).toBeCloseTo(Math.exp(h), 12);
    expect(satisfied).toBe(Math.exp(h) >= 1.8);
    expect(bucketDiversity(requirement('entropy-l-diversity', 1.9), histograms, sizes, 3).satisfied).toBe(
      false,
    );
  });
});
