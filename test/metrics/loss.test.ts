/**
 * The Loss metric (docs/definitions.md §6) on a table small enough to work by hand, its spec
 * settings' errors, and the optimal search under it against exhaustive search on Adult (its
 * bounds must never prune the optimum). test/arx/loss.test.ts compares it with ARX itself.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization, search } from '../../src/methods/generalization/index.ts';
import { exhaustiveSearch } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { type LossSpec, loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { adultSpec } from '../helpers/adult.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-loss-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Six people; zip's hierarchy lists d, which the data lacks: 4 rows where the data has 3 values.
writeFileSync(join(dir, 'data.csv'), 'zip;sex\na;M\na;M\nb;F\nb;F\nc;M\nc;F\n');
writeFileSync(join(dir, 'zip.csv'), 'a;ab;*\nb;ab;*\nc;cd;*\nd;cd;*\n');
writeFileSync(join(dir, 'sex.csv'), 'M;*\nF;*\n');

function smallSpec(method: Record<string, unknown> = {}): string {
  const file = join(dir, `release-${Math.random().toString(36).slice(2)}.json`);
  writeFileSync(
    file,
    JSON.stringify({
      input: 'data.csv',
      format: { delimiter: ';' },
      attributes: {
        zip: { type: 'quasi-identifying', hierarchy: 'zip.csv' },
        sex: { type: 'quasi-identifying', hierarchy: 'sex.csv' },
      },
      privacy: [{ model: 'k-anonymity', k: 2 }],
      method: { name: 'generalization', maxSuppression: 0.5, metric: 'loss', ...method },
    }),
  );
  return file;
}

/** Loss at zip level 1, sex level 0: classes (ab, M) and (ab, F) of 2 kept, (cd, M) and (cd, F) suppressed. */
function lossAtNode(loss: Record<string, unknown>): number {
  const spec = loadSpec(smallSpec({ loss }));
  const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
  const outcome = search(prepared, wasmGroupingKernel, { zip: 1, sex: 0 });
  outcome.evaluator.dispose();
  expect(outcome.best.suppressedRows).toBe(2);
  return outcome.best.values.loss;
}

describe('Loss by hand', () => {
  // zip: 4 released cells of share 2/4 and 2 suppressed cells of 1: C = 4, least 6/4, ℓ = 5/9.
  // sex: 4 released cells of share 1/2 and 2 suppressed of 1: C = 4, least 6/2, ℓ = 1/3.
  it('geometric mean (the default): √((1 + 5/9)(1 + 1/3)) − 1', () => {
    expect(lossAtNode({})).toBeCloseTo(Math.sqrt((14 / 9) * (4 / 3)) - 1, 14);
  });

  it('arithmetic mean: (5/9 + 1/3)/2', () => {
    expect(lossAtNode({ aggregate: 'arithmetic' })).toBeCloseTo(4 / 9, 14);
  });

  it('weights, divided by the largest: (5/9 + ½·1/3)/2', () => {
    expect(lossAtNode({ aggregate: 'arithmetic', weights: { zip: 2, sex: 1 } })).toBeCloseTo(13 / 36, 14);
  });

  // gs-factor 0.25: a suppressed cell costs s + ½(1 − s) = 3/4; zip ℓ = (3.5 − 1.5)/4.5, sex (3.5 − 3)/3.
  it('gs-factor below 0.5 makes suppression cheaper: (4/9 + 1/6)/2', () => {
    expect(lossAtNode({ aggregate: 'arithmetic', gsFactor: 0.25 })).toBeCloseTo(11 / 36, 14);
  });

  // gs-factor 0.75: released cells weigh 1/2; zip ℓ = (1 + 2 − 0.75)/(6 − 0.75), sex (1 + 2 − 1.5)/(6 − 1.5).
  it('gs-factor above 0.5 makes generalization cheaper', () => {
    expect(lossAtNode({ aggregate: 'arithmetic', gsFactor: 0.75 })).toBeCloseTo(
      (2.25 / 5.25 + 1.5 / 4.5) / 2,
      14,
    );
  });
});

describe('method.loss in the spec', () => {
  it('refuses a weight for a column that is not a quasi-identifier, naming it', () => {
    expect(() => loadSpec(smallSpec({ loss: { weights: { zap: 1 } } }))).toThrow(
      expect.objectContaining({
        code: 'E_SPEC_VALUE',
        message: expect.stringMatching(/method\.loss\.weights names 'zap'.*did you mean 'zip'/),
      }),
    );
  });

  it('refuses a weight that is not above 0', () => {
    expect(() => loadSpec(smallSpec({ loss: { weights: { zip: 0 } } }))).toThrow(SpecError);
    expect(() => loadSpec(smallSpec({ loss: { weights: { zip: 0 } } }))).toThrow(
      /weights\.zip must be a number above 0/,
    );
  });

  it('refuses an unknown aggregate and a gs-factor outside [0, 1]', () => {
    expect(() => loadSpec(smallSpec({ loss: { aggregate: 'median' } }))).toThrow(SpecError);
    expect(() => loadSpec(smallSpec({ loss: { gsFactor: 1.5 } }))).toThrow(SpecError);
  });
});

describe('the optimal search under loss', () => {
  const configs: [string, number, LossSpec][] = [
    ['geometric, 2 %', 0.02, { aggregate: 'geometric', gsFactor: 0.5, weights: undefined }],
    [
      'arithmetic, 5 %, weights, gs-factor 0.3',
      0.05,
      { aggregate: 'arithmetic', gsFactor: 0.3, weights: { age: 0.5 } },
    ],
    ['geometric, 5 %, weights', 0.05, { aggregate: 'geometric', gsFactor: 0.5, weights: { education: 0.2 } }],
  ];
  for (const [name, maxSuppression, loss] of configs) {
    it(`reaches exhaustive search's optimum on Adult, k = 5 (${name})`, () => {
      const base = adultSpec();
      const spec = {
        ...base,
        method: { ...base.method, maxSuppression, metric: 'loss', loss },
      } as ReleaseSpec;
      const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
      const found = search(prepared, wasmGroupingKernel);
      found.evaluator.dispose();
      const evaluator = openSearch(prepared, wasmGroupingKernel);
      const { best } = exhaustiveSearch(evaluator);
      evaluator.dispose();
      expect(found.best.levels).toEqual(best.levels);
      expect(found.best.value).toBe(best.value);
      expect(found.nodesChecked).toBeLessThan(prepared.problem.lattice.size);
    });
  }
});
