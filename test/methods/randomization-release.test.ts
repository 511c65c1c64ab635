import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { reconstructCommand } from '../../src/cli/reconstruct.ts';
import { readCsv } from '../../src/data/csv.ts';
import { NoSolutionError, type PpdpError, SpecError, VerificationError } from '../../src/errors.ts';
import { diagOf, inverseNormFactor } from '../../src/methods/randomization/matrices.ts';
import type { MatricesFile } from '../../src/methods/randomization/matrices-file.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, parseSpec } from '../../src/release-spec/spec.ts';
import { verifyRandomization } from '../../src/verify/randomization.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const EXAMPLE = new URL('../../examples/adult-randomization/release.json', import.meta.url).pathname;
const ws = adultWorkspace();
const small = adultWorkspace(6000);
let runs = 0;

/** A spec in a workspace: the example's attributes with the given privacy and method. */
function spec(
  where: typeof ws,
  privacy: unknown[],
  method: Record<string, unknown>,
  edit?: (s: Record<string, unknown>) => void,
): string {
  const s = JSON.parse(readFileSync(EXAMPLE, 'utf8').replaceAll('../adult/', ''));
  delete s.root;
  s.privacy = privacy;
  s.method = { name: 'randomization', ...method };
  edit?.(s);
  const name = `randomization-${runs++}.json`;
  where.write(name, JSON.stringify(s, null, 2));
  return join(where.dir, name);
}

const out = (where: typeof ws) => join(where.dir, 'out', `run-${runs++}`);
const matricesOf = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'matrices.json'), 'utf8')) as MatricesFile;
const AD = (tau: number) => ({ model: 'attribute-disclosure', attribute: 'occupation', tau });

function marginal(csvPath: string, column: string): Map<string, number> {
  const t = readCsv(csvPath, { delimiter: ';' });
  const c = t.columns.find((x) => x.name === column)!;
  const m = new Map<string, number>();
  for (const code of c.codes) m.set(c.dictionary[code]!, (m.get(c.dictionary[code]!) ?? 0) + 1);
  return m;
}

describe('randomization release on Adult (the setting of the attribute-disclosure paper)', async () => {
  const dirA = join(ws.dir, 'out', 'example-a');
  const a = await releaseTo(EXAMPLE, dirA);

  it('measures its rows at risk against τ unless the spec sets a threshold', () => {
    expect(a.report.privacy.attributeRisk!.threshold).toBe(0.25);
    const set = parseSpec(
      { ...JSON.parse(readFileSync(EXAMPLE, 'utf8')), report: { riskThreshold: 0.2 } },
      EXAMPLE,
    );
    expect(set.report).toEqual({ riskThreshold: 0.2, riskThresholdSet: true });
  });

  it('is verified, keeps every row, and meets max risk ≤ τ', () => {
    const { report } = a;
    expect(report.verification.verified).toBe(true);
    expect(report.rows).toEqual({ input: 30162, released: 30162, suppressed: 0 });
    const model = report.privacy.models[0]!;
    expect(model.model).toBe('attribute-disclosure');
    expect(model.satisfied).toBe(true);
    expect(model.achieved.maxRisk).toBeLessThanOrEqual(0.25);
    expect(model.achieved.maxRisk).toBeGreaterThan(0.2499);
    expect(report.utility.metric).toBe('expected-squared-error');
    for (const k of ['kl', 'chi2', 'queryErrorBase', 'queryErrorCube', 'uncertaintyQiSaAfter']) {
      expect(typeof report.utility[k]).toBe('number');
    }
    const names = report.verification.checks.map((c) => c.name);
    for (const check of [
      'one released row per input row',
      'every matrix valid',
      'release reproduced from the input, the seed and matrices.json',
      'transitions follow the matrices',
      'max risk ≤ τ',
      'release differs from the input',
    ]) {
      expect(names).toContain(check);
    }
  });

  it('writes matrices.json in the docs/release-spec.md shape', () => {
    const m = matricesOf(dirA);
    expect(m.scenario).toBe('rr-both');
    expect(m.attributeOrder).toEqual(['sex', 'race', 'education', 'salary-class', 'occupation']);
    for (const [name, e] of Object.entries(m.attributes)) {
      const d = e.categories.length;
      expect(e.matrix.length, name).toBe(d);
      for (let v = 0; v < d; v++) expect(e.matrix.reduce((s, row) => s + row[v]!, 0)).toBeCloseTo(1, 12);
      expect(e.retention).toBeGreaterThan(1 / d);
      expect(e.matrix[0]![0]).toBeCloseTo(e.retention!, 15);
    }
    // The optimum keeps the sensitive attribute here (the attribute-disclosure paper's formula: randomizing S does not
    // lower the risk of homogeneous QI groups), so it is listed as released unchanged.
    expect(Object.keys(m.attributes).sort()).toEqual(['education', 'race', 'salary-class', 'sex']);
    expect(m.released.occupation!.categories).toHaveLength(14);
  });

  it('same seed → identical files; another seed → another release with the same marginals', async () => {
    const dirB = join(ws.dir, 'out', 'example-b');
    await releaseTo(EXAMPLE, dirB);
    for (const f of ['data.csv', 'data.arrow', 'matrices.json']) {
      expect(readFileSync(join(dirB, f)).equals(readFileSync(join(dirA, f))), f).toBe(true);
    }
    const other = spec(ws, [AD(0.25)], { scenario: 'rr-both' }, (s) => {
      s.seed = 2;
    });
    const dirC = out(ws);
    await releaseTo(other, dirC);
    expect(readFileSync(join(dirC, 'data.csv')).equals(readFileSync(join(dirA, 'data.csv')))).toBe(false);
    const n = 30162;
    for (const column of ['education', 'sex', 'race']) {
      const ma = marginal(join(dirA, 'data.csv'), column);
      const mc = marginal(join(dirC, 'data.csv'), column);
      for (const [value, count] of ma) {
        const p = count / n;
        // two independent draws: difference has sd √(2·n·p(1−p))
        expect(Math.abs(count - (mc.get(value) ?? 0)), `${column}`).toBeLessThanOrEqual(
          5 * Math.sqrt(2 * n * p * (1 - p)) + 1,
        );
      }
    }
  });

  it('ppdp reconstruct estimates contingency tables close to the truth, as CSV and JSON', () => {
    const csvOut = join(ws.dir, 'sex-salary.csv');
    let said = '';
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      said += String(chunk);
      return true;
    });
    try {
      expect(reconstructCommand([dirA, '--attributes', 'sex,salary-class', '--out', csvOut])).toBe(0);
    } finally {
      stderr.mockRestore();
    }
    // Counts with thousands separators, as the rest of ppdp's output.
    expect(said).toMatch(/^ppdp: reconstructed sex × salary-class \(4 cells\) from 30,162 rows; /);
    const lines = readFileSync(csvOut, 'utf8').trim().split('\n');
    expect(lines[0]).toBe('sex,salary-class,released,estimate,estimate_count,clipped,clipped_count');
    expect(lines).toHaveLength(5);
    const truth = new Map<string, number>();
    const input = readInput(loadSpec(EXAMPLE));
    const sex = input.columns.find((c) => c.name === 'sex')!;
    const sal = input.columns.find((c) => c.name === 'salary-class')!;
    for (let r = 0; r < input.rowCount; r++) {
      const key = `${sex.dictionary[sex.codes[r]!]},${sal.dictionary[sal.codes[r]!]}`;
      truth.set(key, (truth.get(key) ?? 0) + 1);
    }
    for (const line of lines.slice(1)) {
      const [s, c, , , count] = line.split(',');
      const t = truth.get(`${s},${c}`)!;
      expect(Math.abs(Number(count) - t)).toBeLessThan(0.05 * t + 100);
    }
    const jsonOut = join(ws.dir, 'edu-occ.json');
    expect(reconstructCommand([dirA, '--attributes', 'education,occupation', '--out', jsonOut])).toBe(0);
    const j = JSON.parse(readFileSync(jsonOut, 'utf8'));
    expect(j.cells).toHaveLength(16 * 14);
    expect(j.cells.reduce((s: number, c: { estimate: number }) => s + c.estimate, 0)).toBeCloseTo(1, 10);
    expect(j.cells.reduce((s: number, c: { clipped: number }) => s + c.clipped, 0)).toBeCloseTo(1, 10);
    expect(j.cells.every((c: { clipped: number }) => c.clipped >= 0)).toBe(true);
    expect(j.attributes.map((x: { randomized: boolean }) => x.randomized)).toEqual([true, false]);
    expect(() => reconstructCommand([dirA, '--attributes', 'sex,nope'])).toThrow(
      /not a column of the release/,
    );
    expect(() => reconstructCommand([dirA])).toThrow(/needs --attributes/);
    expect(() => reconstructCommand([ws.dir, '--attributes', 'sex'])).toThrow(/not a randomized release/);
  });

  it('the verifier rejects a tampered release', () => {
    const specParsed = loadSpec(EXAMPLE);
    const input = readInput(specParsed);
    const copy = join(ws.dir, 'tampered');
    mkdirSync(copy, { recursive: true });
    for (const f of ['data.csv', 'data.arrow', 'matrices.json']) copyFileSync(join(dirA, f), join(copy, f));
    const claims = {
      maxRisk: a.report.privacy.models[0]!.achieved.maxRisk!,
      meanRisk: a.report.privacy.models[0]!.achieved.meanRisk!,
    };
    const verify = () =>
      verifyRandomization({
        spec: specParsed,
        input,
        dataArrow: join(copy, 'data.arrow'),
        dataCsv: join(copy, 'data.csv'),
        matrices: join(copy, 'matrices.json'),
        claims,
      });
    expect(verify().every((c) => c.passed)).toBe(true);
    // A matrix that is not the one used: swap the two columns' off-diagonal mass for sex.
    const m = matricesOf(dirA);
    const p = m.attributes.sex!.retention!;
    m.attributes.sex!.matrix = [
      [p - 0.01, 1 - p + 0.01],
      [1 - p + 0.01, p - 0.01],
    ];
    writeFileSync(join(copy, 'matrices.json'), JSON.stringify(m));
    expect(verify).toThrow(VerificationError);
    // A matrix whose columns do not sum to 1.
    m.attributes.sex!.matrix = [
      [0.9, 0.1],
      [0.2, 0.9],
    ];
    writeFileSync(join(copy, 'matrices.json'), JSON.stringify(m));
    expect(verify).toThrow(/every matrix valid/);
    copyFileSync(join(dirA, 'matrices.json'), join(copy, 'matrices.json'));
    // One cell changed in the CSV only.
    const text = readFileSync(join(dirA, 'data.csv'), 'utf8').split('\n');
    text[1] = text[1]!.startsWith('Male')
      ? text[1]!.replace('Male', 'Female')
      : text[1]!.replace('Female', 'Male');
    writeFileSync(join(copy, 'data.csv'), text.join('\n'));
    expect(verify).toThrow(/data.arrow equals data.csv/);
    // A different claim of risk.
    copyFileSync(join(dirA, 'data.csv'), join(copy, 'data.csv'));
    expect(() =>
      verifyRandomization({
        spec: specParsed,
        input,
        dataArrow: join(copy, 'data.arrow'),
        dataCsv: join(copy, 'data.csv'),
        matrices: join(copy, 'matrices.json'),
        claims: { ...claims, maxRisk: claims.maxRisk * 1.01 },
      }),
    ).toThrow(/risk as reported/);
  });
});

describe('randomization: models, forms and options', () => {
  it('an l-diversity model is read as τ = 1/l', async () => {
    const viaL = await releaseTo(
      spec(small, [{ model: 'distinct-l-diversity', attribute: 'occupation', l: 4 }], { scenario: 'rr-qi' }),
      out(small),
    );
    const viaTau = await releaseTo(spec(small, [AD(0.25)], { scenario: 'rr-qi' }), out(small));
    expect(viaL.report.privacy.models[0]!.achieved.maxRisk).toBeLessThanOrEqual(0.25);
    expect(viaL.report.details!.randomization).toEqual(viaTau.report.details!.randomization);
  });

  it('rho-privacy: uniform perturbation of the SA at p = (γ−1)/(m−1+γ)', async () => {
    const dir = out(small);
    const { report } = await releaseTo(
      spec(small, [{ model: 'rho-privacy', attribute: 'occupation', rho1: 0.1, rho2: 0.5 }], {
        scenario: 'rr-s',
        form: 'uniform',
      }),
      dir,
    );
    const gamma = (0.5 * 0.9) / (0.1 * 0.5);
    const m = matricesOf(dir);
    expect(m.attributes.occupation!.retention).toBeCloseTo((gamma - 1) / (14 - 1 + gamma), 12);
    expect(m.attributes.occupation!.gamma).toBeCloseTo(gamma, 9);
    const model = report.privacy.models[0]!;
    expect(model.satisfied).toBe(true);
    expect(model.achieved.impliedRho2).toBeCloseTo(0.5, 9);
    expect(report.verification.checks.map((c) => c.name)).toContain('posteriors within (ρ1, ρ2)');
    expect(Object.keys(m.attributes)).toEqual(['occupation']);
  });

  it('small-domain randomization: sub-domains, larger retention, the exact guarantee checked', async () => {
    const dir = out(small);
    const { report } = await releaseTo(
      spec(small, [{ model: 'rho-privacy', attribute: 'occupation', rho1: 0.1, rho2: 0.9 }], {
        scenario: 'rr-s',
        form: 'uniform',
        smallDomain: true,
      }),
      dir,
    );
    const m = matricesOf(dir);
    expect(m.smallDomain!.blocks.length).toBeGreaterThan(1);
    expect(m.smallDomain!.blocks.flatMap((b) => b.categories).sort()).toEqual(
      [...m.attributes.occupation!.categories].sort(),
    );
    const gamma = (0.9 * 0.9) / (0.1 * 0.1);
    const whole = (gamma - 1) / (14 - 1 + gamma);
    // Σ_blocks π(block)·‖P_b⁻¹‖²_F/m_b — the SA's factor of the expected squared error — is below
    // whole-domain uniform perturbation at the γ bound.
    const factor = m.smallDomain!.blocks.reduce(
      (s, b) => s + b.share * inverseNormFactor(b.categories.length, b.diagonal),
      0,
    );
    expect(factor).toBeLessThan(inverseNormFactor(14, diagOf('uniform', 14, whole)));
    expect(m.smallDomain!.guarantee).toMatch(/Checked exactly/);
    const checks = report.verification.checks.map((c) => c.name);
    expect(checks).toContain('sub-domains match the matrix');
    expect(checks).toContain('posteriors within (ρ1, ρ2)');
    // every released value stays in its row's sub-domain: no transition across blocks
    expect(report.verification.checks.find((c) => c.name === 'transitions follow the matrices')!.passed).toBe(
      true,
    );
  });

  it('user matrices, explicit retention and numeric discretization', async () => {
    const dir = out(small);
    const { report } = await releaseTo(
      spec(
        small,
        [{ model: 'rho-privacy', attribute: 'occupation', rho1: 0.1, rho2: 0.5 }],
        {
          scenario: 'rr-both',
          retention: { age: 0.8 },
          matrices: {
            sex: {
              categories: ['Male', 'Female'],
              matrix: [
                [0.9, 0.3],
                [0.1, 0.7],
              ],
            },
          },
          discretize: { age: { bins: 4 } },
        },
        (s) => {
          (s.attributes as Record<string, unknown>).age = { type: 'quasi-identifying', scale: 'numeric' };
        },
      ),
      dir,
    );
    expect(report.verification.verified).toBe(true);
    const m = matricesOf(dir);
    expect(m.attributes.age!.categories).toEqual([
      '[17,35.25)',
      '[35.25,53.5)',
      '[53.5,71.75)',
      '[71.75,90]',
    ]);
    expect(m.attributes.age!.retention).toBe(0.8);
    // categories sorted (Female, Male): the user's matrix reordered accordingly
    expect(m.attributes.sex!.categories).toEqual(['Female', 'Male']);
    expect(m.attributes.sex!.matrix).toEqual([
      [0.7, 0.1],
      [0.3, 0.9],
    ]);
    expect(m.attributes.sex!.form).toBe('custom');
    const released = readCsv(join(dir, 'data.csv'), { delimiter: ';' });
    expect(new Set(released.columns.find((c) => c.name === 'age')!.dictionary)).toEqual(
      new Set(m.attributes.age!.categories),
    );
  });

  it('refuses what it cannot do, naming the field', async () => {
    const cases: [unknown[], Record<string, unknown>, RegExp, ((s: Record<string, unknown>) => void)?][] = [
      [
        [{ model: 'k-anonymity', k: 5 }],
        { scenario: 'rr-qi' },
        /k-anonymity, which randomization does not implement/,
      ],
      [
        [{ model: 'rho-privacy', attribute: 'occupation', rho1: 0.1, rho2: 0.5 }],
        { scenario: 'rr-qi' },
        /scenario rr-qi releases it unchanged/,
      ],
      [[AD(0.25)], { scenario: 'rr-both', smallDomain: true }, /smallDomain/],
      [
        [AD(0.25)],
        { scenario: 'rr-s', retention: { sex: 0.9 } },
        /method.retention.sex names an attribute scenario rr-s does not randomize/,
      ],
      [
        [AD(0.25)],
        { scenario: 'rr-qi', retention: { race: 0.2 } },
        /method.retention.race = 0.2 makes a singular matrix/,
      ],
      [
        [AD(0.25)],
        {
          scenario: 'rr-qi',
          matrices: {
            sex: {
              categories: ['Male', 'Female'],
              matrix: [
                [1, 0],
                [0, 0.5],
              ],
            },
          },
        },
        /method.matrices.sex.matrix column 1 sums to/,
      ],
      [
        [AD(0.25)],
        { scenario: 'rr-qi', matrices: { sex: { categories: ['Male'], matrix: [[1]] } } },
        /method.matrices.sex.categories .*\(1 of its categories not listed\)$/,
      ],
      [
        // The category the spec wrote is named; the one it left out (an input value) is counted.
        [AD(0.25)],
        {
          scenario: 'rr-qi',
          matrices: {
            sex: {
              categories: ['Male', 'X'],
              matrix: [
                [0.9, 0.1],
                [0.1, 0.9],
              ],
            },
          },
        },
        /method.matrices.sex.categories must list .* \(not a category of sex: "X"; 1 of its categories not listed\)$/,
      ],
      [
        [AD(0.25)],
        {
          scenario: 'rr-qi',
          matrices: {
            sex: {
              categories: ['Male', 'Male'],
              matrix: [
                [0.9, 0.1],
                [0.1, 0.9],
              ],
            },
          },
        },
        // A label listed twice is a category, an input value (or, binned, its edges): placed, not quoted.
        /\(method\.matrices\.sex\.categories\[1\] repeats \[0\]; 1 of its categories not listed\)$/,
      ],
      [[AD(0.25)], { scenario: 'rr-qi', discretize: { sex: { level: 1 } } }, /no hierarchy/],
      [
        [AD(0.25), { model: 'rho-privacy', attribute: 'occupation', rho1: 0.5, rho2: 0.1 }],
        { scenario: 'rr-both' },
        /0 < rho1 < rho2 < 1/,
      ],
    ];
    for (const [privacy, method, message, edit] of cases) {
      const file = spec(small, privacy, method, edit);
      let error: unknown;
      try {
        await releaseTo(file, out(small));
      } catch (e) {
        error = e;
      }
      expect(error, String(message)).toBeInstanceOf(SpecError);
      expect((error as PpdpError).message).toMatch(message);
    }
    await expect(releaseTo(spec(small, [AD(0.5)], { scenario: 'rr-s' }), out(small))).rejects.toThrow(
      NoSolutionError,
    );
  });
});
