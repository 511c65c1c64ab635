/**
 * Bounds are compared exactly (docs/definitions.md): a class's EMD and the average risk are
 * ratios of integers, judged against the decimal number the spec wrote (`0.3` is 3/10), by the
 * search and by the verifier alike.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { release } from '../../src/api.ts';
import { deltaPresence } from '../../src/models/delta-presence.ts';
import { entropyLDiversity } from '../../src/models/l-diversity.ts';
import type { PrivacyModelSpec } from '../../src/release-spec/spec.ts';
import { checkClass, type SensitiveContext } from '../../src/verify/models.ts';
import { checkReleaseModels } from '../../src/verify/population.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-exact-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The double just below x > 0. */
const below = (x: number) => {
  const b = new DataView(new ArrayBuffer(8));
  b.setFloat64(0, x);
  b.setBigUint64(0, b.getBigUint64(0) - 1n);
  return b.getFloat64(0);
};

let n = 0;
/** Releases `rows` of (g, s) with g the QI (one level above it: '*') under `model`. */
async function releaseOf(rows: [string, string][], model: Record<string, unknown>, saHierarchy = false) {
  const at = join(dir, `r${n++}`);
  const groups = Object.fromEntries([...new Set(rows.map((r) => r[0]))].map((g) => [g, '*']));
  const values = Object.fromEntries([...new Set(rows.map((r) => r[1]))].map((s) => [s, '*']));
  const spec = {
    input: 'data.csv',
    attributes: {
      g: { type: 'quasi-identifying', hierarchy: { groups: [groups] } },
      s: { type: 'sensitive', ...(saHierarchy ? { hierarchy: { groups: [values] } } : {}) },
    },
    privacy: [model],
    method: { name: 'generalization', maxSuppression: 0 },
    seed: 1,
  };
  mkdirSync(at);
  writeFileSync(join(at, 'data.csv'), ['g,s', ...rows.map((r) => r.join(','))].join('\n'));
  writeFileSync(join(at, 'spec.json'), JSON.stringify(spec));
  const report = await release(join(at, 'spec.json'), { out: join(at, 'out') });
  return report.privacy.models[0]!;
}

const rep = (g: string, s: string, times: number) =>
  Array.from({ length: times }, () => [g, s] as [string, string]);
/** Two classes, each `a` rows of x and 10 − a of y or the other way round: EMD a/10 − 1/2 each. */
const twoClasses = (a: number) => [
  ...rep('A', 'x', a),
  ...rep('A', 'y', 10 - a),
  ...rep('B', 'x', 10 - a),
  ...rep('B', 'y', a),
];

describe('t-closeness compares the EMD with t exactly', () => {
  it('releases the top node when the classes lie 5e-13 above t (probe case t_tol)', async () => {
    // Both classes are exactly 1/10 from the table; t is below that.
    const m = await releaseOf(twoClasses(6), {
      model: 't-closeness',
      attribute: 's',
      t: 0.0999999999995,
      distance: 'equal',
    });
    expect(m.satisfied).toBe(true);
    expect(m.achieved.t).toBe(0);
  });

  for (const distance of ['equal', 'ordered', 'hierarchical'] as const) {
    const model = (t: number) => ({ model: 't-closeness', attribute: 's', t, distance });
    it(`${distance}: an EMD of exactly 1/10 passes t = 0.1 and fails the double below it`, async () => {
      const at = await releaseOf(twoClasses(6), model(0.1), distance === 'hierarchical');
      expect(at.satisfied).toBe(true);
      expect(at.achieved.t).toBeCloseTo(0.1, 12);
      const under = await releaseOf(twoClasses(6), model(below(0.1)), distance === 'hierarchical');
      expect(under.achieved.t).toBe(0);
    });
    it(`${distance}: an EMD of exactly 3/10 passes t = 0.3 (the decimal, though its double lies below 3/10)`, async () => {
      const at = await releaseOf(twoClasses(8), model(0.3), distance === 'hierarchical');
      expect(at.satisfied).toBe(true);
      expect(at.achieved.t).toBeCloseTo(0.3, 12);
      const under = await releaseOf(twoClasses(8), model(below(0.3)), distance === 'hierarchical');
      expect(under.achieved.t).toBe(0);
    });
  }
});

describe('average risk compares classes/rows with the threshold exactly', () => {
  const eight = [...rep('A', 'x', 2), ...rep('B', 'x', 3), ...rep('C', 'x', 3)];
  it('does not release 3 classes over 8 rows under 0.3749999999997 (probe case ar_tol)', async () => {
    const m = await releaseOf(eight, { model: 'average-risk', threshold: 0.3749999999997 });
    expect(m.satisfied).toBe(true);
    expect(m.achieved.averageRisk).toBe(1 / 8);
  });
  it('releases 3 classes over 8 rows under exactly 0.375', async () => {
    const m = await releaseOf(eight, { model: 'average-risk', threshold: 0.375 });
    expect(m.achieved.averageRisk).toBe(0.375);
  });
  it('releases 3 classes over 10 rows under 0.3 (3/10), not under the double below it', async () => {
    const ten = [...rep('A', 'x', 3), ...rep('B', 'x', 3), ...rep('C', 'x', 4)];
    expect((await releaseOf(ten, { model: 'average-risk', threshold: 0.3 })).achieved.averageRisk).toBe(0.3);
    const under = await releaseOf(ten, { model: 'average-risk', threshold: below(0.3) });
    expect(under.achieved.averageRisk).toBe(0.1);
  });
});

describe("the verifier's own checks compare exactly", () => {
  // The input: 10 x and 10 y; the class: 8 x and 2 y, exactly 3/10 from it under every distance.
  const context: SensitiveContext = {
    table: new Map([
      ['x', 0.5],
      ['y', 0.5],
    ]),
    hierarchy: [
      ['x', '*'],
      ['y', '*'],
    ],
    rows: {
      counts: new Map([
        ['x', 10],
        ['y', 10],
      ]),
      total: 20,
    },
  };
  const cls = new Map([
    ['x', 8],
    ['y', 2],
  ]);
  for (const distance of ['equal', 'ordered', 'hierarchical'] as const) {
    it(`${distance}: EMD 3/10 passes t = 0.3 and fails the double below it`, () => {
      const check = (t: number) =>
        checkClass(
          { model: 't-closeness', attribute: 's', t, distance } as PrivacyModelSpec,
          10,
          cls,
          context,
        );
      expect(check(0.3).holds).toBe(true);
      expect(check(below(0.3)).holds).toBe(false);
    });
  }
  it('average risk 3/8 fails 0.3749999999997 and passes 0.375', () => {
    const classes = [2, 3, 3].map((size, i) => ({ key: `${i}`, size }));
    const passed = (threshold: number) => {
      let ok: boolean | undefined;
      checkReleaseModels(
        [{ model: 'average-risk', threshold } as PrivacyModelSpec],
        classes,
        undefined,
        8,
        (_, p) => {
          ok = p;
        },
      );
      return ok;
    };
    expect(passed(0.3749999999997)).toBe(false);
    expect(passed(0.375)).toBe(true);
  });
});

describe('δ-presence compares each share with its bounds exactly', () => {
  // Half of the class's population records are in the sample.
  it('in the search', () => {
    const cls = { size: 5, histogram: null, population: 10 };
    expect(deltaPresence(0, 0.5, 'p.csv').holds(cls)).toBe(true);
    expect(deltaPresence(0, 0.4999999999998, 'p.csv').holds(cls)).toBe(false);
    expect(deltaPresence(0.5, 1, 'p.csv').holds(cls)).toBe(true);
    expect(deltaPresence(0.5000000000002, 1, 'p.csv').holds(cls)).toBe(false);
  });
  it('in the verifier', () => {
    const passed = (deltaMin: number, deltaMax: number) => {
      let ok: boolean | undefined;
      const model = { model: 'delta-presence', deltaMin, deltaMax, population: 'p.csv' } as PrivacyModelSpec;
      checkReleaseModels([model], [{ key: 'a', size: 5 }], new Map([['a', 10]]), 5, (_, p) => {
        ok = p;
      });
      return ok;
    };
    expect(passed(0.5, 0.5)).toBe(true);
    expect(passed(0, 0.4999999999998)).toBe(false);
    expect(passed(0.5000000000002, 1)).toBe(false);
  });
});

describe('entropy l-diversity keeps only the slack of rounding', () => {
  // Three values, equally frequent: the entropy is exactly ln 3.
  const uniform = Int32Array.of(4, 4, 4);
  const counts = new Map([
    ['a', 4],
    ['b', 4],
    ['c', 4],
  ]);
  const context: SensitiveContext = {
    table: new Map([...counts].map(([v]) => [v, 1 / 3])),
    hierarchy: undefined,
  };
  const verified = (l: number) =>
    checkClass({ model: 'entropy-l-diversity', attribute: 's', l } as PrivacyModelSpec, 12, counts, context)
      .holds;
  it('passes l = 3 and fails an l 1e-12 above it, in the search and in the verifier', () => {
    expect(entropyLDiversity('s', 3).holds({ size: 12, histogram: uniform })).toBe(true);
    expect(entropyLDiversity('s', 3.000000000001).holds({ size: 12, histogram: uniform })).toBe(false);
    expect(verified(3)).toBe(true);
    expect(verified(3.000000000001)).toBe(false);
  });
  it('passes exactly uniform classes of many sizes', () => {
    for (const l of [2, 3, 5, 6, 7, 10, 49, 1000]) {
      const h = new Int32Array(l).fill(7);
      expect(entropyLDiversity('s', l).holds({ size: 7 * l, histogram: h })).toBe(true);
    }
  });
});
