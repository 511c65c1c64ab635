import { describe, expect, it } from 'vitest';
import { SpecError } from '../../src/errors.ts';
import { denseKronecker } from '../../src/kernels/kronecker/kernel.ts';
import { tsKroneckerKernel } from '../../src/kernels/kronecker/reference.ts';
import { wasmKroneckerKernel } from '../../src/kernels/kronecker/wasm.ts';
import { laneState, thresholdsOf } from '../../src/kernels/perturb/kernel.ts';
import { wasmSimdPerturbKernel } from '../../src/kernels/perturb/wasm.ts';
import {
  binEdges,
  binOf,
  type CategoricalAttribute,
  DEFAULT_BINS,
} from '../../src/methods/randomization/domain.ts';
import { gridSearch } from '../../src/methods/randomization/grid.ts';
import { inverseOperator } from '../../src/methods/randomization/index.ts';
import {
  type Distortion,
  diagOf,
  gammaOf,
  inverseNormFactor,
  inverseOf,
  invert,
  maxDiagForGamma,
  minDiag,
  parameterOf,
  structuredDistortion,
  validateMatrix,
} from '../../src/methods/randomization/matrices.ts';
import {
  type OptimizeProblem,
  optimizeParameters,
  optimizeSteps,
} from '../../src/methods/randomization/optimize.ts';
import { expectedSquaredError } from '../../src/methods/randomization/plan.ts';
import {
  clipped,
  randomizationEstimator,
  reconstructDense,
  releasedCounts,
} from '../../src/methods/randomization/reconstruct.ts';
import { blockMatrix, blockRetention, smallDomainPlan } from '../../src/methods/randomization/rho.ts';
import { RiskEvaluator, type RiskOperand, riskTable } from '../../src/methods/randomization/risk.ts';
import { exactRhoCheck, gammaFor, SubsetSums, sumsWithoutOne } from '../../src/models/rho-privacy.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { Random } from '../../src/util/random.ts';
import { adultSpec } from '../helpers/adult.ts';

const rand = (rng: Random) => rng.nextU32() / 2 ** 32;

function randomStochastic(rng: Random, d: number): Float64Array {
  const m = new Float64Array(d * d);
  for (let v = 0; v < d; v++) {
    let s = 0;
    for (let u = 0; u < d; u++) s += m[u * d + v] = 0.05 + rand(rng) + (u === v ? 2 : 0);
    for (let u = 0; u < d; u++) m[u * d + v]! /= s;
  }
  return m;
}

const custom = (matrix: Float64Array, d: number): Distortion => ({
  d,
  matrix,
  form: 'custom',
  parameter: undefined,
  diag: undefined,
});

function categorical(
  name: string,
  role: CategoricalAttribute['role'],
  codes: Int32Array,
  d: number,
): CategoricalAttribute {
  return {
    name,
    role,
    categories: Array.from({ length: d }, (_, i) => `${name}${i}`),
    codes,
    discretization: { kind: 'values' },
  };
}

/** The seed's comparison setting (ESGRO): QIs education, salary-class, sex, race; SA occupation. */
function esgro(): CategoricalAttribute[] {
  const table = readInput(adultSpec());
  return ['education', 'salary-class', 'sex', 'race', 'occupation'].map((name, i) => {
    const c = table.columns.find((x) => x.name === name)!;
    return categorical(name, i < 4 ? 'quasi-identifying' : 'sensitive', c.codes, c.dictionary.length);
  });
}

/** A random table whose SA depends on the QIs, with every QI tuple present. */
function randomTable(rng: Random, dims: number[], n: number): CategoricalAttribute[] {
  const cols = dims.map(() => new Int32Array(n));
  for (let r = 0; r < n; r++) {
    let s = 0;
    dims.forEach((d, i) => {
      const v = i < dims.length - 1 ? rng.below(d) : (s + (rand(rng) < 0.6 ? 0 : rng.below(d))) % d;
      cols[i]![r] = v;
      s += v;
    });
  }
  return dims.map((d, i) =>
    categorical(`a${i}`, i < dims.length - 1 ? 'quasi-identifying' : 'sensitive', cols[i]!, d),
  );
}

/**
 * The risk written straight from docs/definitions.md §5 with dense matrices: the attacker's posterior
 * Pr(μ | ν) = P[ν][μ]·π_μ/λ_ν and the reconstruction probability r(μ) = Σ_ν P[ν][μ]·Pr(μ | ν).
 */
function bruteForceRisk(
  attrs: CategoricalAttribute[],
  ops: (Distortion | null)[],
): { max: number; mean: number } {
  const qiDims = attrs.slice(0, -1).map((a) => a.categories.length);
  const dS = attrs[attrs.length - 1]!.categories.length;
  const n = attrs[0]!.codes.length;
  const D = qiDims.reduce((a, b) => a * b, 1);
  const P = denseKronecker(
    qiDims,
    ops.slice(0, -1).map((p) => (p ? p.matrix : null)),
  );
  const joint = new Float64Array(D * dS);
  for (let r = 0; r < n; r++) {
    let a = 0;
    attrs.slice(0, -1).forEach((x, i) => {
      a = a * qiDims[i]! + x.codes[r]!;
    });
    joint[a * dS + attrs[attrs.length - 1]!.codes[r]!]! += 1 / n;
  }
  const piQ = new Float64Array(D);
  for (let a = 0; a < D; a++) for (let u = 0; u < dS; u++) piQ[a]! += joint[a * dS + u]!;
  const lambda = new Float64Array(D);
  for (let b = 0; b < D; b++) for (let a = 0; a < D; a++) lambda[b]! += P[b * D + a]! * piQ[a]!;
  const PS = ops[ops.length - 1]?.matrix;
  let max = 0;
  let mean = 0;
  for (let a = 0; a < D; a++) {
    if (piQ[a] === 0) continue;
    let rq = 0;
    for (let b = 0; b < D; b++)
      if (P[b * D + a]! > 0) rq += P[b * D + a]! * ((P[b * D + a]! * piQ[a]!) / lambda[b]!);
    const cond = Float64Array.from({ length: dS }, (_, u) => joint[a * dS + u]! / piQ[a]!);
    for (let u = 0; u < dS; u++) {
      if (cond[u] === 0) continue;
      let rs = 1;
      if (PS) {
        rs = 0;
        for (let nu = 0; nu < dS; nu++) {
          let l = 0;
          for (let x = 0; x < dS; x++) l += PS[nu * dS + x]! * cond[x]!;
          if (PS[nu * dS + u]! > 0) rs += PS[nu * dS + u]! * ((PS[nu * dS + u]! * cond[u]!) / l);
        }
      }
      const risk = cond[u]! * rq * rs;
      max = Math.max(max, risk);
      mean += risk * joint[a * dS + u]!;
    }
  }
  return { max, mean };
}

describe('distortion matrices', () => {
  it('P⁻¹P = I for both forms (closed form) and for custom matrices (elimination)', () => {
    const rng = new Random(1);
    for (const d of [2, 3, 5, 14]) {
      const cases: Distortion[] = [
        structuredDistortion('retention', d, 0.3 + 0.6 * rand(rng)),
        structuredDistortion('uniform', d, diagOf('uniform', d, 0.2 + 0.7 * rand(rng))),
        custom(randomStochastic(rng, d), d),
      ];
      for (const p of cases) {
        const inv = inverseOf(p);
        for (let u = 0; u < d; u++) {
          for (let v = 0; v < d; v++) {
            let s = 0;
            for (let w = 0; w < d; w++) s += inv[u * d + w]! * p.matrix[w * d + v]!;
            expect(s).toBeCloseTo(u === v ? 1 : 0, 10);
          }
        }
      }
    }
  });

  it('the retention form keeps p and moves (1−p)/(d−1); uniform keeps p + (1−p)/d', () => {
    const r = structuredDistortion('retention', 4, 0.7);
    expect(r.matrix[0]).toBeCloseTo(0.7, 15);
    expect(r.matrix[1]).toBeCloseTo(0.1, 15);
    const u = structuredDistortion('uniform', 4, diagOf('uniform', 4, 0.6));
    expect(u.parameter).toBeCloseTo(0.6, 15);
    expect(u.matrix[0]).toBeCloseTo(0.6 + 0.4 / 4, 15);
    expect(u.matrix[1]).toBeCloseTo(0.1, 15);
    expect(parameterOf('uniform', 4, diagOf('uniform', 4, 0.37))).toBeCloseTo(0.37, 15);
    expect(inverseNormFactor(5, 1)).toBe(1);
    expect(inverseNormFactor(5, minDiag(5))).toBe(Number.POSITIVE_INFINITY);
  });

  it('validates user matrices: square, non-negative, columns sum to 1, invertible', () => {
    const ok = validateMatrix(
      [
        [0.8, 0.3],
        [0.2, 0.7],
      ],
      2,
      'spec.json',
      'method.matrices.sex.matrix',
    );
    expect(Array.from(ok)).toEqual([0.8, 0.3, 0.2, 0.7]);
    const bad: unknown[] = [
      [[1, 0]],
      [
        [1, 0],
        [0, 1, 0],
      ],
      [
        [1.2, 0],
        [-0.2, 1],
      ],
      [
        [0.5, 0.5],
        [0.4, 0.5],
      ],
      [
        [0.5, 0.5],
        [0.5, 0.5],
      ],
    ];
    for (const m of bad) {
      expect(() => validateMatrix(m, 2, 'spec.json', 'method.matrices.sex.matrix')).toThrow(SpecError);
      try {
        validateMatrix(m, 2, 'spec.json', 'method.matrices.sex.matrix');
      } catch (e) {
        expect((e as Error).message).toContain('method.matrices.sex.matrix');
      }
    }
    expect(invert(Float64Array.of(1, 2, 2, 4), 2)).toBeUndefined();
  });

  it('γ-amplification: uniform perturbation at p = (γ−1)/(m−1+γ) is exactly γ-amplifying', () => {
    for (const [rho1, rho2] of [
      [0.1, 0.5],
      [0.2, 0.6],
      [0.05, 0.3],
    ] as const) {
      const gamma = gammaFor(rho1, rho2);
      for (const m of [2, 5, 14]) {
        const diag = maxDiagForGamma(m, gamma);
        expect(parameterOf('uniform', m, diag)).toBeCloseTo((gamma - 1) / (m - 1 + gamma), 12);
        expect(gammaOf(structuredDistortion('uniform', m, diag).matrix, m)).toBeCloseTo(gamma, 9);
      }
    }
    expect(gammaOf(Float64Array.of(1, 0, 0, 1), 2)).toBe(Number.POSITIVE_INFINITY);
  });
});

describe('attribute disclosure risk (docs/definitions.md §5)', () => {
  it('with every p = 1 equals the group share π(α,u)/π(α)', () => {
    const attrs = randomTable(new Random(2), [3, 2, 4], 500);
    const table = riskTable(attrs);
    const detail = new RiskEvaluator(table, wasmKroneckerKernel).detail({ qi: [null, 1], sa: 1 });
    for (let i = 0; i < table.alphaIndex.length; i++) {
      for (let c = table.alphaStart[i]!; c < table.alphaStart[i + 1]!; c++) {
        expect(detail.cellRisk[c]).toBeCloseTo(table.cellCount[c]! / table.alphaCount[i]!, 14);
      }
    }
  });

  it('with pQI = 1/dQI the QI factor equals π(α), so risk = π(α,u)·r_S', () => {
    const attrs = randomTable(new Random(3), [3, 4, 5], 800);
    const table = riskTable(attrs);
    const ev = new RiskEvaluator(table, tsKroneckerKernel);
    const detail = ev.detail({ qi: [1 / 3, 1 / 4], sa: null });
    for (let i = 0; i < table.alphaIndex.length; i++) {
      expect(detail.rQI[i]).toBeCloseTo(table.alphaCount[i]! / table.rows, 12);
      for (let c = table.alphaStart[i]!; c < table.alphaStart[i + 1]!; c++) {
        expect(detail.cellRisk[c]).toBeCloseTo(table.cellCount[c]! / table.rows, 12);
      }
    }
  });

  it('equals the dense definition for retention, uniform and custom matrices, with both kernels', () => {
    const rng = new Random(4);
    for (let trial = 0; trial < 6; trial++) {
      const dims = [2 + rng.below(3), 2 + rng.below(3), 2 + rng.below(4)];
      const attrs = randomTable(rng, dims, 300 + rng.below(400));
      const ops: (Distortion | null)[] = dims.map((d, i) =>
        trial % 3 === 0 && i === 1
          ? null
          : trial % 3 === 1
            ? custom(randomStochastic(rng, d), d)
            : structuredDistortion(
                i % 2 ? 'uniform' : 'retention',
                d,
                minDiag(d) + (1 - minDiag(d)) * (0.2 + 0.8 * rand(rng)),
              ),
      );
      const expected = bruteForceRisk(attrs, ops);
      for (const kernel of [tsKroneckerKernel, wasmKroneckerKernel]) {
        const got = new RiskEvaluator(riskTable(attrs), kernel).summary({
          qi: ops.slice(0, -1),
          sa: ops[ops.length - 1]!,
        });
        expect(got.max).toBeCloseTo(expected.max, 12);
        expect(got.mean).toBeCloseTo(expected.mean, 12);
      }
    }
  });

  it('grows with every retention parameter (checked on random points of the seed setting)', () => {
    const attrs = esgro();
    const ev = new RiskEvaluator(riskTable(attrs), wasmKroneckerKernel);
    const dims = attrs.map((a) => a.categories.length);
    const rng = new Random(5);
    const at = (diags: number[]) =>
      ev.summary({ qi: diags.slice(0, -1) as RiskOperand[], sa: diags[4]! }).max;
    for (let trial = 0; trial < 40; trial++) {
      const diags = dims.map((d) => minDiag(d) + (1 - minDiag(d)) * (0.05 + 0.9 * rand(rng)));
      const i = rng.below(5);
      const up = diags.slice();
      up[i] = up[i]! + (1 - up[i]!) * rand(rng);
      expect(at(up)).toBeGreaterThanOrEqual(at(diags) - 1e-12);
    }
  });
});

function esgroProblem(
  attrs: CategoricalAttribute[],
  vars: number[],
  tau: number,
  ev: RiskEvaluator,
): OptimizeProblem {
  return {
    variables: vars.map((i) => {
      const d = attrs[i]!.categories.length;
      return { name: attrs[i]!.name, d, lo: minDiag(d), hi: 1 };
    }),
    tau,
    maxRisk: (diags) => {
      const ops: RiskOperand[] = attrs.map(() => null);
      vars.forEach((i, j) => {
        ops[i] = diags[j]!;
      });
      return ev.summary({ qi: ops.slice(0, -1), sa: ops[ops.length - 1]! }).max;
    },
  };
}

describe('optimal parameters', () => {
  const attrs = esgro();
  const ev = new RiskEvaluator(riskTable(attrs), wasmKroneckerKernel);

  for (const l of [2, 4, 7]) {
    it(`RR-QI on the seed setting, l = ${l}: max risk ≤ 1/l and no worse than the 0.01 grid`, () => {
      const problem = esgroProblem(attrs, [0, 1, 2, 3], 1 / l, ev);
      const best = optimizeParameters(problem);
      expect(problem.maxRisk(best.diags)).toBeLessThanOrEqual(1 / l);
      const grid = gridSearch(problem, { monotone: true });
      expect(grid.diags).toBeDefined();
      expect(best.objective).toBeLessThanOrEqual(grid.objective + 1e-12);
    });
  }

  it('RR-Both and RR-S on a small setting: no worse than the exhaustive 0.01 grid', () => {
    // QIs sex and race, SA salary-class: groups are large, so randomizing the SA pays.
    const table = readInput(adultSpec());
    const small = ['sex', 'race', 'salary-class'].map((name, i) => {
      const c = table.columns.find((x) => x.name === name)!;
      return categorical(name, i < 2 ? 'quasi-identifying' : 'sensitive', c.codes, c.dictionary.length);
    });
    const evSmall = new RiskEvaluator(riskTable(small), wasmKroneckerKernel);
    for (const [vars, tau] of [
      [[0, 1, 2], 0.75],
      [[0, 1, 2], 0.7],
      [[2], 0.95],
    ] as const) {
      const problem = esgroProblem(small, [...vars], tau, evSmall);
      const best = optimizeParameters(problem);
      expect(problem.maxRisk(best.diags)).toBeLessThanOrEqual(tau);
      const grid = gridSearch(problem);
      expect(grid.diags).toBeDefined();
      expect(best.objective).toBeLessThanOrEqual(grid.objective + 1e-12);
      // the monotone shortcut finds the same grid optimum
      expect(gridSearch(problem, { monotone: true }).objective).toBeCloseTo(grid.objective, 12);
    }
  });

  it('says when no parameters reach τ', () => {
    // RR-S cannot protect homogeneous QI groups: their risk stays 1.
    const problem = esgroProblem(attrs, [4], 0.5, ev);
    expect(() => optimizeParameters(problem)).toThrow(/no randomization of occupation/);
  });

  it('τ = 1 is met by every release: the identity, even with homogeneous groups (risk exactly 1)', () => {
    for (const vars of [[4], [0, 1, 2, 3, 4]]) {
      const best = optimizeParameters(esgroProblem(attrs, vars, 1, ev));
      expect(Array.from(best.diags)).toEqual(vars.map(() => 1));
      expect(best.maxRisk).toBe(1);
    }
  });

  it('yields after every risk evaluation, so that a caller can give the event loop its turn', () => {
    const problem = esgroProblem(attrs, [0, 1, 2, 3], 1 / 4, ev);
    const steps = optimizeSteps(problem);
    let yields = 0;
    let r = steps.next();
    for (; !r.done; r = steps.next()) yields++;
    // One yield per evaluation but the final one (finish evaluates without yielding).
    expect(yields).toBe(r.value.evaluations);
    expect(r.value.objective).toBe(optimizeParameters(problem).objective);
  });

  it('finds the boundary in fewer evaluations than bisection took (the seed setting, l = 4)', () => {
    // Bisection to 1e-6 (exploring) and 1e-11 (the answer) took 41,551 evaluations here.
    const best = optimizeParameters(esgroProblem(attrs, [0, 1, 2, 3], 1 / 4, ev));
    expect(best.evaluations).toBeLessThan(36_000);
  });
});

describe('numeric bins', () => {
  it('cut a range wider than the largest double into finite, increasing edges', () => {
    for (const [min, max] of [
      [-1e308, 1e308],
      [-Number.MAX_VALUE, Number.MAX_VALUE],
      [-1.5, 2.5],
    ] as const) {
      const edges = binEdges(min, max, DEFAULT_BINS);
      expect(edges).toHaveLength(DEFAULT_BINS + 1);
      expect(edges[0]).toBe(min);
      expect(edges[DEFAULT_BINS]).toBe(max);
      for (let i = 1; i < edges.length; i++) {
        expect(Number.isFinite(edges[i]!)).toBe(true);
        expect(edges[i]!).toBeGreaterThan(edges[i - 1]!);
      }
      expect(binOf(min, edges)).toBe(0);
      expect(binOf(max, edges)).toBe(DEFAULT_BINS - 1);
      if (min === -max) expect(binOf(0, edges)).toBe(DEFAULT_BINS / 2);
    }
    // A range that fits is cut as before (the release of ordinary data does not move).
    expect(binEdges(0, 10, 4)).toEqual([0, 2.5, 5, 7.5, 10]);
  });
});

describe('(ρ1, ρ2)-privacy and small-domain randomization', () => {
  /** The worst posteriors by enumerating every property of every released value. */
  function bruteRho(m: Float64Array, d: number, counts: number[], rho1: number, rho2: number) {
    const n = counts.reduce((x, y) => x + y, 0);
    let up = 0;
    let down = 0;
    for (let y = 0; y < d; y++) {
      let lambda = 0;
      for (let x = 0; x < d; x++) lambda += m[y * d + x]! * counts[x]!;
      if (!(lambda > 0)) continue;
      for (let mask = 0; mask < 1 << d; mask++) {
        let post = 0;
        let rows = 0;
        for (let x = 0; x < d; x++) {
          if (mask & (1 << x)) {
            post += m[y * d + x]! * counts[x]!;
            rows += counts[x]!;
          }
        }
        if (rows <= rho1 * n + 1e-9) up = Math.max(up, post / lambda);
        if (rows <= (1 - rho2) * n + 1e-9) down = Math.max(down, post / lambda);
      }
    }
    return { up, down };
  }

  it('the exact check equals enumerating every property: structured, block and custom matrices, tied counts', () => {
    const rng = new Random(6);
    for (let t = 0; t < 300; t++) {
      const d = 1 + rng.below(9);
      // Few distinct counts, so that values tie (the case that was exponential).
      const counts = Array.from({ length: d }, () => 1 + rng.below(t % 2 ? 3 : 40));
      const rho1 = 0.05 + 0.4 * rand(rng);
      const rho2 = rho1 + (0.95 - rho1) * rand(rng);
      const kind = t % 3;
      const m =
        kind === 0
          ? structuredDistortion('uniform', d, diagOf('uniform', d, rand(rng))).matrix
          : kind === 1
            ? blockMatrix(
                d,
                [
                  { values: Array.from({ length: Math.ceil(d / 2) }, (_, i) => i), retention: rand(rng) },
                  {
                    values: Array.from({ length: d - Math.ceil(d / 2) }, (_, i) => Math.ceil(d / 2) + i),
                    retention: rand(rng),
                  },
                ].filter((b) => b.values.length > 0),
              )
            : randomStochastic(rng, d);
      const got = exactRhoCheck(m, d, counts, rho1, rho2);
      const want = bruteRho(m, d, counts, rho1, rho2);
      expect(got.worstUpward).toBeCloseTo(want.up, 12);
      expect(got.worstDownward).toBeCloseTo(want.down, 12);
    }
  });

  it('the exact check of a 200-value attribute with tied counts takes a moment (was exponential)', () => {
    // Branch and bound over single values explored every subset of a tie: 50 values took 40 s.
    const d = 200;
    const counts = Array.from({ length: d }, (_, i) => 2 + (i % 3));
    const [rho1, rho2] = [0.1, 0.5];
    const m = structuredDistortion('uniform', d, maxDiagForGamma(d, gammaFor(rho1, rho2))).matrix;
    const check = exactRhoCheck(m, d, counts, rho1, rho2);
    expect(check.satisfied).toBe(true);
    // The worst upward property: the released value itself and as many rows as ρ1 allows.
    expect(check.worstUpward).toBeGreaterThan(0);
    expect(check.worstUpward).toBeLessThanOrEqual(rho2);
  });

  it('subset sums: without one item of each weight, against recomputing', () => {
    const rng = new Random(8);
    for (let t = 0; t < 40; t++) {
      const weights = Array.from({ length: 1 + rng.below(12) }, () => 1 + rng.below(t % 2 ? 4 : 60));
      const cap = rng.below(200);
      const got = sumsWithoutOne(weights, cap, (c) => [cap, cap - c, Math.floor(cap / 2)]);
      for (const c of new Set(weights)) {
        const rest = weights.slice();
        rest.splice(rest.indexOf(c), 1);
        const sums = SubsetSums.empty(cap);
        for (const w of rest) sums.add(w);
        expect(got.get(c)).toEqual([cap, cap - c, Math.floor(cap / 2)].map((x) => sums.largestAtMost(x)));
        // and the bitset against brute force
        let best = 0;
        for (let mask = 0; mask < 1 << rest.length; mask++) {
          let sum = 0;
          for (let i = 0; i < rest.length; i++) if (mask & (1 << i)) sum += rest[i]!;
          if (sum <= cap) best = Math.max(best, sum);
        }
        expect(sums.largestAtMost(cap)).toBe(best);
      }
    }
  });

  it('uniform perturbation at the γ bound passes the exact check for any prior; above it a prior breaks it', () => {
    const rng = new Random(7);
    const [rho1, rho2] = [0.1, 0.5];
    const m = 6;
    const diag = maxDiagForGamma(m, gammaFor(rho1, rho2));
    for (let t = 0; t < 20; t++) {
      const counts = Float64Array.from({ length: m }, () => 1 + Math.round(1000 * rand(rng) ** 3));
      expect(
        exactRhoCheck(structuredDistortion('uniform', m, diag).matrix, m, counts, rho1, rho2).satisfied,
      ).toBe(true);
    }
    // The worst prior for one value: exactly ρ1 on it (10 of 100 rows).
    const counts = Float64Array.from({ length: m }, (_, i) => (i === 0 ? 10 : 18));
    const over = structuredDistortion('uniform', m, diag + 0.02).matrix;
    expect(exactRhoCheck(over, m, counts, rho1, rho2).satisfied).toBe(false);
  });

  it('small-domain partitions: every block passes exactly and the error factor is no worse than one whole domain', () => {
    const table = readInput(adultSpec());
    const occ = table.columns.find((c) => c.name === 'occupation')!;
    const d = occ.dictionary.length;
    const counts = new Float64Array(d);
    for (const c of occ.codes) counts[c]! += 1;
    for (const [rho1, rho2] of [
      [0.1, 0.9],
      [0.2, 0.8],
      [0.1, 0.5],
    ] as const) {
      const plan = smallDomainPlan(counts, rho1, rho2)!;
      expect(plan).toBeDefined();
      expect(exactRhoCheck(plan.matrix, d, counts, rho1, rho2).satisfied).toBe(true);
      expect(new Set(plan.blocks.flatMap((b) => b.values)).size).toBe(d);
      const whole = blockRetention(
        Array.from({ length: d }, (_, i) => i),
        counts,
        occ.codes.length,
        rho1,
        rho2,
      )!;
      const wholeFactor = inverseNormFactor(d, diagOf('uniform', d, whole));
      expect(plan.errorFactor).toBeLessThanOrEqual(wholeFactor + 1e-12);
      if (rho2 === 0.9) expect(plan.blocks.length).toBeGreaterThan(1);
      // A block below 1 − ρ2 of the rows would reveal a property of prior ≤ 1 − ρ2 with posterior 1.
      for (const b of plan.blocks) expect(b.share).toBeGreaterThan(1 - rho2);
    }
  });
});

describe('reconstruction', () => {
  it('converges to the truth as N grows (fixed seed; max cell error ≤ 4·sd of the estimator at each N)', () => {
    const dims = [3, 4, 5];
    const truth = Float64Array.from({ length: 60 }, (_, i) => 1 + ((i * 7) % 11));
    const total = truth.reduce((a, b) => a + b, 0);
    truth.forEach((x, i) => {
      truth[i] = x / total;
    });
    const ps = dims.map((d, i) =>
      structuredDistortion(i === 1 ? 'uniform' : 'retention', d, [0.7, 0.6, 0.5][i]!),
    );
    const errors: number[] = [];
    for (const n of [2_000, 20_000, 200_000]) {
      // draw n rows from the truth, randomize them
      const rng = new Random(n);
      const cum = truth.map(
        (
          (s) => (x: number) =>
            (s += x)
        )(0),
      );
      const cols = dims.map(() => new Int32Array(n));
      for (let r = 0; r < n; r++) {
        const x = rand(rng);
        let cell = cum.findIndex((c) => x < c);
        if (cell < 0) cell = 59;
        for (let j = dims.length - 1; j >= 0; j--) {
          cols[j]![r] = cell % dims[j]!;
          cell = Math.floor(cell / dims[j]!);
        }
      }
      const state = laneState(Uint32Array.of(n, 2, 3, 4));
      const released = cols.map((c, j) =>
        wasmSimdPerturbKernel.perturb(c, thresholdsOf(ps[j]!.matrix, dims[j]!), state),
      );
      const est = reconstructDense(
        wasmKroneckerKernel,
        ps.map((p) => ({ d: p.d, inverse: inverseOperator(p) })),
        releasedCounts(released, dims),
        n,
      );
      const attrs = cols.map((c, j) =>
        categorical(`a${j}`, j < 2 ? 'quasi-identifying' : 'sensitive', c, dims[j]!),
      );
      const sd = Math.sqrt(expectedSquaredError(attrs, ps) / 60);
      let worst = 0;
      for (let i = 0; i < 60; i++) worst = Math.max(worst, Math.abs(est[i]! - truth[i]!));
      expect(worst).toBeLessThanOrEqual(4 * sd * Math.sqrt(Math.log(60)) + 1e-9);
      expect(est.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 10);
      expect(clipped(est).every((x) => x >= 0)).toBe(true);
      errors.push(worst);
    }
    expect(errors[2]!).toBeLessThan(errors[0]!);
    expect(errors[2]!).toBeLessThan(0.006);
  });

  it('the expected squared error formula matches repeated randomizations within 15 %', () => {
    const dims = [3, 4];
    const n = 3000;
    const rng = new Random(9);
    const cols = dims.map((d) => Int32Array.from({ length: n }, () => rng.below(d)));
    const ps = dims.map((d) => structuredDistortion('retention', d, 0.6));
    const attrs = cols.map((c, j) =>
      categorical(`a${j}`, j === 0 ? 'quasi-identifying' : 'sensitive', c, dims[j]!),
    );
    const truth = releasedCounts(cols, dims).map((x) => x / n);
    let sum = 0;
    const reps = 300;
    const state = laneState(Uint32Array.of(1, 1, 2, 3));
    for (let t = 0; t < reps; t++) {
      const released = cols.map((c, j) =>
        wasmSimdPerturbKernel.perturb(c, thresholdsOf(ps[j]!.matrix, dims[j]!), state),
      );
      const est = reconstructDense(
        tsKroneckerKernel,
        ps.map((p) => ({ d: p.d, inverse: inverseOperator(p) })),
        releasedCounts(released, dims),
        n,
      );
      for (let i = 0; i < est.length; i++) sum += (est[i]! - truth[i]!) ** 2;
    }
    const expected = expectedSquaredError(attrs, ps);
    expect(Math.abs(sum / reps - expected) / expected).toBeLessThan(0.15);
  });

  it('the estimator agrees between its dense and sparse paths', () => {
    const rng = new Random(10);
    const dims = [70, 70, 60];
    const n = 5000;
    const codes = dims.map((d) => Int32Array.from({ length: n }, () => rng.below(d)));
    const ps = [null, structuredDistortion('retention', 70, 0.8), custom(randomStochastic(rng, 60), 60)];
    const modes = ps.map((p, i) => ({ d: dims[i]!, inverse: inverseOperator(p) }));
    const estimator = randomizationEstimator(wasmKroneckerKernel, modes, codes);
    const cells = dims.map(() => new Int32Array(200));
    for (let c = 0; c < 200; c++) {
      const r = rng.below(n);
      dims.forEach((_, j) => {
        cells[j]![c] = codes[j]![r]!;
      });
    }
    const sparse = estimator.marginal([0, 1, 2], cells)!; // 294,000 cells: the sparse path
    const dense = reconstructDense(tsKroneckerKernel, modes, releasedCounts(codes, dims), n);
    for (let c = 0; c < 200; c++) {
      const index = (cells[0]![c]! * 70 + cells[1]![c]!) * 60 + cells[2]![c]!;
      expect(sparse[c]).toBeCloseTo(dense[index]!, 12);
    }
  });
});
