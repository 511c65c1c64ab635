import { describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import {
  boundedDistributionMeasures,
  distributionMeasures,
  type Estimator,
  MAX_UNCERTAINTY_CELLS,
  marginalCounts,
  measureFigures,
  uncertaintyCoefficient,
} from '../../src/metrics/contingency.ts';

const column = (name: string, values: string[]): EncodedColumn => {
  const dictionary = [...new Set(values)];
  return { name, dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
};

/** The exact estimator: the original's own marginals. */
function exact(columns: EncodedColumn[]): Estimator {
  const n = columns[0]!.codes.length;
  return {
    marginal(attrs, cells) {
      return Float64Array.from({ length: cells[0]?.length ?? 1 }, (_, c) => {
        let count = 0;
        for (let r = 0; r < n; r++) if (attrs.every((a, j) => columns[a]!.codes[r] === cells[j]![c])) count++;
        return count / n;
      });
    },
  };
}

/** Independence: product of one-way marginals (what Anatomy-like releases keep). */
function independent(columns: EncodedColumn[]): Estimator {
  const n = columns[0]!.codes.length;
  const one = columns.map((c) => {
    const p = new Float64Array(c.dictionary.length);
    for (const code of c.codes) p[code]! += 1 / n;
    return p;
  });
  return {
    marginal: (attrs, cells) =>
      Float64Array.from({ length: cells[0]?.length ?? 1 }, (_, c) =>
        attrs.reduce((s, a, j) => s * one[a]![cells[j]![c]!]!, 1),
      ),
  };
}

describe('distribution measures', () => {
  const cols = [
    column('a', ['x', 'x', 'y', 'y', 'x', 'y', 'x', 'x']),
    column('b', ['1', '1', '2', '2', '1', '2', '1', '2']),
    column('s', ['p', 'q', 'p', 'q', 'p', 'q', 'p', 'p']),
  ];

  it('are zero for an exact reconstruction, and U is preserved', () => {
    const m = distributionMeasures(cols, exact(cols));
    expect(m.kl).toBeCloseTo(0, 12);
    expect(m.chi2).toBeCloseTo(0, 12);
    expect(m.queryErrorBase).toBeCloseTo(0, 12);
    expect(m.queryErrorCube).toBeCloseTo(0, 12);
    expect(m.cubeCells).toBe(2 + 2 + 2 + 3 + 4 + 4 + 5);
    for (const u of m.uncertainty) expect(u.after).toBeCloseTo(u.before, 12);
  });

  it('grow when correlations are lost, and U drops to 0 under independence', () => {
    const m = distributionMeasures(cols, independent(cols));
    expect(m.kl).toBeGreaterThan(0.05);
    expect(m.queryErrorBase).toBeGreaterThan(0.1);
    const ab = m.uncertainty.find((u) => u.x === 'a' && u.y === 'b')!;
    expect(ab.before).toBeGreaterThan(0.3);
    expect(ab.after).toBeCloseTo(0, 12);
  });

  it('U(X|Y) is 1 when Y determines X and 0 when independent', () => {
    expect(uncertaintyCoefficient(Float64Array.of(0.5, 0, 0, 0.5), 2, 2)).toBeCloseTo(1, 12);
    expect(uncertaintyCoefficient(Float64Array.of(0.25, 0.25, 0.25, 0.25), 2, 2)).toBeCloseTo(0, 12);
  });
});

describe('the uncertainty coefficients of columns of near-unique values', () => {
  it('leave out a pair whose joint table passes MAX_UNCERTAINTY_CELLS, and keep the others', () => {
    // Two columns of 3,000 distinct values each: a joint table of 9·10^6 cells, past the bound.
    const n = 3000;
    expect(n * n).toBeGreaterThan(MAX_UNCERTAINTY_CELLS);
    const columns = [
      column(
        'postcode',
        Array.from({ length: n }, (_, r) => `p${r}`),
      ),
      column(
        'date',
        Array.from({ length: n }, (_, r) => `d${(r * 7) % n}`),
      ),
      column(
        'sex',
        Array.from({ length: n }, (_, r) => (r % 2 ? 'F' : 'M')),
      ),
    ];
    const estimator: Estimator = {
      // The estimator is asked only for the pairs kept: a dense pair would ask for 9·10^6 cells.
      marginal(attrs, cells) {
        expect(cells[0]?.length ?? 0).toBeLessThanOrEqual(MAX_UNCERTAINTY_CELLS);
        return independent(columns).marginal(attrs, cells);
      },
    };
    const measures = distributionMeasures(columns, estimator);
    const pairs = measures.uncertainty.map((p) => `${p.x}|${p.y}`).sort();
    expect(pairs).toEqual(['date|sex', 'postcode|sex', 'sex|date', 'sex|postcode']);
  });
});

describe('measures left out are said to be, never a silent 0', () => {
  const n = 40;
  /** `m` columns of 2 to 4 values each. */
  const wide = (m: number) =>
    Array.from({ length: m }, (_, a) =>
      column(
        `c${a}`,
        Array.from({ length: n }, (_, r) => `${(r * (a + 3)) % (2 + (a % 3))}`),
      ),
    );

  it('past 12 attributes the CUBE is not measured, and the figures say why', () => {
    const cols = wide(13);
    const m = distributionMeasures(cols, independent(cols));
    expect(m.queryErrorCube).toBeUndefined();
    expect(m.cubeCells).toBeUndefined();
    expect(m.notMeasured.queryErrorCube).toMatch(/^13 released attributes, more than 12/);
    const figures = measureFigures(m);
    expect(figures.queryErrorCube).toMatch(/^not measured: 13 released attributes, more than 12/);
    expect(figures).not.toHaveProperty('cubeCells');
    expect(typeof figures.kl).toBe('number');
    // 12 attributes: measured.
    const twelve = measureFigures(distributionMeasures(wide(12), independent(wide(12))));
    expect(typeof twelve.queryErrorCube).toBe('number');
    expect(twelve.cubeCells).toBeGreaterThan(0);
  });

  it('the CUBE past its budget of steps: counting foreseen, or the estimator refusing', () => {
    const cols = wide(6);
    // Counting 2^6 − 1 group-bys over 40 rows: a step a row and attribute (6 · 2^5 of them)
    // and 8 a row's cell looked up.
    const counting = n * (6 * 2 ** 5 + 8 * 63);
    const tooFew = distributionMeasures(cols, independent(cols), counting - 1);
    expect(tooFew.queryErrorCube).toBeUndefined();
    expect(tooFew.notMeasured.queryErrorCube).toMatch(/counting its 63 group-bys over 40 rows passes/);
    const refusing: Estimator = {
      marginal(attrs, cells, budget) {
        if (budget && attrs.length > 1) {
          budget.needed = budget.steps + 1;
          return undefined;
        }
        return independent(cols).marginal(attrs, cells);
      },
    };
    const refused = distributionMeasures(cols, refusing, counting + 10);
    expect(refused.notMeasured.queryErrorCube).toMatch(/its 63 group-bys would take more than/);
    // The base group-by and every attribute's marginal are still measured.
    expect(refused.kl).toBeGreaterThan(0);
    expect(refused.marginals).toHaveLength(6);
  });

  it('uncertainty pairs past the budget: the smallest tables first, the rest named', () => {
    const cols = [
      column(
        'big',
        Array.from({ length: n }, (_, r) => `b${r % 20}`),
      ),
      column(
        'mid',
        Array.from({ length: n }, (_, r) => `m${r % 5}`),
      ),
      column(
        'small',
        Array.from({ length: n }, (_, r) => `s${r % 2}`),
      ),
    ];
    // Each pair's own work is n + 4·dx·dy steps: mid×small (10 cells) fits, big×small (40) does not.
    const steps = n + 4 * 10 + (n + 4 * 40) - 1;
    const m = distributionMeasures(cols, independent(cols), steps);
    expect(m.uncertainty.map((u) => `${u.x}|${u.y}`)).toEqual(['mid|small', 'small|mid']);
    expect(m.notMeasured.uncertainty).toBe(
      `uncertainty coefficients not measured for 2 of 3 attribute pairs: 2 past ${steps} steps (the smallest tables go first)`,
    );
    expect(measureFigures(m).uncertaintyNotMeasured).toBe(m.notMeasured.uncertainty);
    expect(distributionMeasures(cols, independent(cols)).notMeasured).toEqual({});
  });

  it('bounded: the base group-by itself past the budget leaves every measure out, with why', () => {
    const cols = wide(3);
    expect(boundedDistributionMeasures(cols, independent(cols), n * (3 + 8) - 1)).toEqual({
      notMeasured: 'counting the 40 rows over 3 attributes passes 439 steps',
    });
    const refusing: Estimator = {
      marginal(_attrs, _cells, budget) {
        if (budget) budget.needed = 5000;
        return undefined;
      },
    };
    const out = boundedDistributionMeasures(cols, refusing, 1000);
    expect(out).toEqual({
      notMeasured: expect.stringMatching(
        /^the base group-by \(\d+ cells, every released attribute\) would take about 5,000 steps/,
      ),
    });
  });

  it('asks an estimator with `pair` for each pair once, and both coefficients come from it', () => {
    const cols = [
      column('a', ['x', 'x', 'y', 'y', 'x', 'y', 'x', 'x']),
      column('b', ['1', '1', '2', '2', '1', '2', '1', '2']),
      column('s', ['p', 'q', 'p', 'q', 'p', 'q', 'p', 'p']),
    ];
    let asked = 0;
    const withPair: Estimator = {
      marginal: exact(cols).marginal,
      pair(x, y) {
        asked++;
        return exact(cols).marginal(
          [x, y],
          [
            Int32Array.from({ length: cols[x]!.dictionary.length * cols[y]!.dictionary.length }, (_, c) =>
              Math.floor(c / cols[y]!.dictionary.length),
            ),
            Int32Array.from(
              { length: cols[x]!.dictionary.length * cols[y]!.dictionary.length },
              (_, c) => c % cols[y]!.dictionary.length,
            ),
          ],
        );
      },
    };
    const a = distributionMeasures(cols, withPair);
    expect(asked).toBe(3);
    const b = distributionMeasures(cols, exact(cols));
    expect(a.uncertainty).toHaveLength(6);
    a.uncertainty.forEach((u, i) => {
      expect(u.x).toBe(b.uncertainty[i]!.x);
      expect(u.y).toBe(b.uncertainty[i]!.y);
      expect(u.after).toBeCloseTo(b.uncertainty[i]!.after, 12);
    });
  });
});

describe('the uncertainty coefficients of an attribute of one value', () => {
  it('are 0, where the rows’ shares sum to 1 − 1e-16 and H(X) would be noise', () => {
    // X constant against Y of 10 values, one row each: ten shares of 0.1 sum to 0.9999999999999999.
    const joint = new Float64Array(10).fill(0.1);
    expect(joint.reduce((a, b) => a + b, 0)).toBeLessThan(1);
    expect(uncertaintyCoefficient(joint, 1, 10)).toBe(0);
    expect(uncertaintyCoefficient(joint, 10, 1)).toBe(0);
  });
});

describe('marginalCounts', () => {
  it('counts the cells of domains whose product passes 2^53 as a string key would', () => {
    const rng = (seed: number) => (r: number) => (r * 2654435761 + seed) % 1000003;
    const cols = Array.from({ length: 4 }, (_, a) => {
      const dictionary = Array.from({ length: 70000 }, (_, v) => `v${v}`);
      const f = rng(a);
      return {
        name: `c${a}`,
        dictionary,
        codes: Int32Array.from({ length: 500 }, (_, r) => f(r % 97) % 70000),
      };
    });
    const { cells, counts } = marginalCounts(cols, [0, 1, 2, 3]);
    const expected = new Map<string, number>();
    for (let r = 0; r < 500; r++) {
      const key = cols.map((c) => c.codes[r]).join(',');
      expected.set(key, (expected.get(key) ?? 0) + 1);
    }
    expect(counts.length).toBe(expected.size);
    [...expected.entries()].forEach(([key, count], c) => {
      expect(cells.map((x) => x[c]).join(',')).toBe(key);
      expect(counts[c]).toBe(count);
    });
  });
});
