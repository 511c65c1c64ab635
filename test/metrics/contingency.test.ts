import { describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import {
  distributionMeasures,
  type Estimator,
  MAX_UNCERTAINTY_CELLS,
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
