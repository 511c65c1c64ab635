/**
 * Randomization releases at the edges the prober found: τ = 1, a sensitive attribute of one
 * value, a numeric quasi-identifier spanning ±1e308, attributes of very many values (refused
 * before the work, or released in a moment), and the audit of columns released unchanged.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { NoSolutionError, SpecError } from '../../src/errors.ts';
import { type MatricesFile, readMatricesFile } from '../../src/methods/randomization/matrices-file.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-rr-edges-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let runs = 0;

/** A table of `rows` rows: each row's cells from `cell(column, row)`. */
function table(columns: string[], rows: number, cell: (column: string, row: number) => string): string {
  const name = `t${runs++}.csv`;
  const lines = [columns.join(',')];
  for (let r = 0; r < rows; r++) lines.push(columns.map((c) => cell(c, r)).join(','));
  writeFileSync(join(dir, name), `${lines.join('\n')}\n`);
  return name;
}

/** A spec over `input` with QIs age (numeric) and sex, the sensitive attribute dis, and an insensitive ts. */
function spec(
  input: string,
  privacy: Record<string, unknown>[],
  method: Record<string, unknown>,
  attributes: Record<string, unknown> = {},
): string {
  const path = join(dir, `spec${runs++}.json`);
  writeFileSync(
    path,
    JSON.stringify({
      input,
      attributes: {
        id: { type: 'identifying' },
        age: { type: 'quasi-identifying', scale: 'numeric' },
        sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
        ts: { type: 'insensitive' },
        dis: { type: 'sensitive' },
        ...attributes,
      },
      privacy,
      method: { name: 'randomization', ...method },
      seed: 1,
    }),
  );
  return path;
}

const COLUMNS = ['id', 'age', 'sex', 'ts', 'dis'];
const AD = (tau: number) => ({ model: 'attribute-disclosure', attribute: 'dis', tau });
const RHO = { model: 'rho-privacy', attribute: 'dis', rho1: 0.1, rho2: 0.5 };
const out = () => join(dir, `out${runs++}`);
const matricesOf = (where: string) =>
  JSON.parse(readFileSync(join(where, 'matrices.json'), 'utf8')) as MatricesFile;

/** 300 rows; age distinct, ts distinct (an exact timestamp), dis in three values. */
const people = table(COLUMNS, 300, (c, r) =>
  c === 'id'
    ? `i${r}`
    : c === 'age'
      ? String(r)
      : c === 'sex'
        ? 'FM'[r % 2]!
        : c === 'ts'
          ? `2020-01-01T00:00:${String(r).padStart(3, '0')}`
          : 'abc'[r % 3]!,
);

describe('τ = 1', () => {
  // age as it is (not binned): every row its own group, of one sensitive value, at risk 1.
  const nominal = { age: { type: 'quasi-identifying' } };

  it('is met by any release: rr-s releases with the sensitive attribute unrandomized', async () => {
    const where = out();
    const { report } = await releaseTo(spec(people, [AD(1)], { scenario: 'rr-s' }, nominal), where);
    expect(report.verification.verified).toBe(true);
    expect(matricesOf(where).attributes).toEqual({});
    expect(matricesOf(where).privacy.maxRisk).toBe(1);
  });

  it('rr-s: the sensitive attribute, left without a matrix, is cautioned as released unperturbed and audited as unchanged', async () => {
    const { report } = await releaseTo(spec(people, [AD(1)], { scenario: 'rr-s' }, nominal), out());
    const caution = report.audit!.cautions.find((c) => c.cause === 'released-unperturbed')!;
    expect(caution).toMatchObject({ column: 'dis' });
    expect(caution.message).toBe(
      "dis is released unperturbed, exactly as in the input (it has no matrix: retention 1), because the privacy models' bounds hold without perturbing it",
    );
    expect(report.verdict!.causes).toContain(caution.message);
    expect(report.audit!.unchanged).toContain('dis');
    // The quasi-identifiers rr-s releases as they are by design: no caution.
    expect(report.audit!.cautions.filter((c) => c.cause === 'released-unperturbed')).toHaveLength(1);
    const facts = Object.fromEntries(report.sections!.find((s) => s.title === 'Randomization')!.facts);
    expect(facts.randomized).toBe('nothing');
    expect(facts['released unperturbed (retention 1)']).toBe('dis');
    expect(facts['retention dis']).toBe('1 (d = 3): released unperturbed');
    expect(facts['retention sex']).toBe('not randomized');
  });

  it('rr-both randomizes nothing: the identity is optimal (no retention 0.9999999990)', async () => {
    const where = out();
    await releaseTo(spec(people, [AD(1)], { scenario: 'rr-both' }, nominal), where);
    expect(matricesOf(where).attributes).toEqual({});
  });

  it('as l = 1 too', async () => {
    const where = out();
    await releaseTo(
      spec(
        people,
        [{ model: 'distinct-l-diversity', attribute: 'dis', l: 1 }],
        { scenario: 'rr-s' },
        nominal,
      ),
      where,
    );
    expect(matricesOf(where).attributes).toEqual({});
  });
});

describe('a sensitive attribute of one value', () => {
  const same = table(COLUMNS, 50, (c, r) =>
    c === 'id' ? `i${r}` : c === 'age' ? '40' : c === 'sex' ? 'F' : c === 'ts' ? '2020' : 'flu',
  );
  for (const scenario of ['rr-s', 'rr-both']) {
    it(`${scenario}: says that no randomization lowers the risk, not that the spec's matrices do`, async () => {
      const failure = releaseTo(spec(same, [AD(0.5)], { scenario }), out());
      await expect(failure).rejects.toThrow(NoSolutionError);
      await expect(failure).rejects.toThrow(
        /the sensitive attribute dis holds one value in every row: .* no randomization brings the attribute-disclosure risk below 1 \(τ = 0\.5\)/,
      );
      await expect(failure).rejects.not.toThrow(/given in the spec/);
    });
  }

  it('rr-qi with quasi-identifiers of one value each: names them, not the spec', async () => {
    const constQis = table(COLUMNS, 50, (c, r) =>
      c === 'id' ? `i${r}` : c === 'age' ? '40' : c === 'sex' ? 'F' : c === 'ts' ? '2020' : 'ab'[r % 2]!,
    );
    const failure = releaseTo(spec(constQis, [AD(0.3)], { scenario: 'rr-qi' }), out());
    await expect(failure).rejects.toThrow(
      /scenario rr-qi randomizes age, sex, which hold one value in every row: randomizing them changes nothing/,
    );
    // Its risk is 1/2 (two sensitive values): a τ from 0.5 on, or the sensitive attribute randomized.
    await expect(failure).rejects.toMatchObject({
      hint: 'raise τ to at least 0.5001, or randomize the sensitive attribute (scenario rr-s or rr-both)',
    });
  });
});

describe('the hint when τ is out of reach offers only what can be done', () => {
  const nominal = { age: { type: 'quasi-identifying' } };
  const hintOf = async (path: string): Promise<string> => {
    const e = await releaseTo(path, out()).then(
      () => undefined,
      (x: unknown) => x,
    );
    expect(e).toBeInstanceOf(NoSolutionError);
    return (e as NoSolutionError).hint ?? '';
  };

  it('rr-s, every row its own group: no τ below 1 is reachable, so neither τ nor l is offered', async () => {
    for (const privacy of [AD(0.5), { model: 'distinct-l-diversity', attribute: 'dis', l: 2 }]) {
      const hint = await hintOf(spec(people, [privacy], { scenario: 'rr-s' }, nominal));
      expect(hint).not.toMatch(/τ|lower l/);
      expect(hint).toMatch(/^randomize the QIs too \(scenario rr-qi or rr-both\)/);
    }
  });

  it('rr-both: the τ (or l) offered releases, and randomizing more is not offered', async () => {
    const hint = await hintOf(spec(people, [AD(0.001)], { scenario: 'rr-both' }));
    const tau = Number(/^raise τ to at least ([\d.]+)$/.exec(hint)?.[1]);
    expect(tau).toBeGreaterThan(0.001);
    expect(tau).toBeLessThan(1);
    const { report } = await releaseTo(spec(people, [AD(tau)], { scenario: 'rr-both' }), out());
    expect(report.verification.verified).toBe(true);
    const lHint = await hintOf(
      spec(people, [{ model: 'distinct-l-diversity', attribute: 'dis', l: 1000 }], { scenario: 'rr-both' }),
    );
    const l = Number(/^lower l to at most (\d+)$/.exec(lHint)?.[1]);
    expect(l).toBeGreaterThan(1);
    const lRelease = await releaseTo(
      spec(people, [{ model: 'distinct-l-diversity', attribute: 'dis', l }], { scenario: 'rr-both' }),
      out(),
    );
    expect(lRelease.report.verification.verified).toBe(true);
  });
});

describe('a numeric quasi-identifier spanning ±1e308', () => {
  it('is cut into finite bins and released (the verifier bins it alike)', async () => {
    const input = table(COLUMNS, 40, (c, r) =>
      c === 'id'
        ? `i${r}`
        : c === 'age'
          ? ['-1e+308', '1e+308', '0', '5e307'][r % 4]!
          : c === 'sex'
            ? 'FM'[r % 2]!
            : c === 'ts'
              ? '2020'
              : 'ab'[(r >> 1) % 2]!,
    );
    const where = out();
    const { report } = await releaseTo(spec(input, [AD(0.9)], { scenario: 'rr-both' }), where);
    expect(report.verification.verified).toBe(true);
    const m = matricesOf(where);
    const age = m.attributes.age ?? m.released.age!;
    expect(age.discretization).toMatchObject({ kind: 'bins', bins: 10 });
    const edges = (age.discretization as { edges: number[] }).edges;
    expect(edges.every(Number.isFinite)).toBe(true);
  });
});

describe('attributes of very many values', () => {
  it('are refused before the work, with their count and how to bin them', async () => {
    // 1,001 distinct amounts: a 1,001 × 1,001 matrix (the probe's 4,968 never finished).
    const input = table(COLUMNS, 1001, (c, r) =>
      c === 'id' ? `i${r}` : c === 'age' ? '40' : c === 'sex' ? 'F' : c === 'ts' ? 'x' : `${r}.5`,
    );
    const failure = releaseTo(spec(input, [RHO], { scenario: 'rr-s', form: 'uniform' }), out());
    await expect(failure).rejects.toThrow(SpecError);
    await expect(failure).rejects.toThrow(/attributes\.dis has 1,001 categories; .*at most 1,000/);
    await expect(failure).rejects.toMatchObject({
      code: 'E_SPEC_TOO_LARGE',
      hint: expect.stringMatching(/^bin it: "scale": "numeric" in attributes\.dis/),
    });
    // Binned as the hint says, the same table releases.
    const binned = await releaseTo(
      spec(
        input,
        [RHO],
        { scenario: 'rr-s', form: 'uniform' },
        { dis: { type: 'sensitive', scale: 'numeric' } },
      ),
      out(),
    );
    expect(binned.report.verification.verified).toBe(true);
  });

  it('a sensitive attribute of 600 values releases under rho-privacy and verifies', async () => {
    // The exact (ρ1, ρ2) check was exponential in the values of one count (50 took 40 s); the
    // verifier's transition test flagged cells of tiny expected counts by chance.
    const input = table(COLUMNS, 3000, (c, r) =>
      c === 'id'
        ? `i${r}`
        : c === 'age'
          ? String(20 + (r % 50))
          : c === 'sex'
            ? 'FM'[r % 2]!
            : c === 'ts'
              ? 'x'
              : `v${(r * 7) % 600}`,
    );
    const where = out();
    const { report } = await releaseTo(spec(input, [RHO], { scenario: 'rr-s', form: 'uniform' }), where);
    expect(report.verification.verified).toBe(true);
    expect(matricesOf(where).attributes.dis!.categories).toHaveLength(600);
    expect(matricesOf(where).privacy.worstUpwardPosterior).toBeLessThanOrEqual(0.5);
  });

  it('small-domain randomization refuses more than 100 values, saying how to proceed', async () => {
    const input = table(COLUMNS, 404, (c, r) =>
      c === 'id' ? `i${r}` : c === 'age' ? '40' : c === 'sex' ? 'F' : c === 'ts' ? 'x' : `v${r % 101}`,
    );
    const failure = releaseTo(spec(input, [RHO], { scenario: 'rr-s', smallDomain: true }), out());
    await expect(failure).rejects.toThrow(/its 101 categories are more than 100/);
    await expect(failure).rejects.toMatchObject({ hint: expect.stringMatching(/or drop smallDomain/) });
  });
});

describe('the audit of a randomized release', () => {
  it('rr-s: an exact timestamp released unchanged makes rows unique with the quasi-identifiers', async () => {
    const { report } = await releaseTo(spec(people, [AD(1)], { scenario: 'rr-s' }), out());
    const audit = report.audit!;
    expect(audit.measured).toBe(true);
    expect(audit.ncp).toBeUndefined();
    const ts = audit.cautions.find((c) => c.column === 'ts')!;
    expect(ts).toMatchObject({ cause: 'unique-with-unchanged-column', rows: 300 });
    expect(ts.message).toBe(
      'ts is released unchanged and makes 300 of 300 rows (100%) unique together with the quasi-identifiers',
    );
    expect(report.verdict!.causes).toContain(ts.message);
  });

  it('small-domain (ρ1, ρ2) that perturbs nothing: cautions that the column is released unperturbed, not "randomized"', async () => {
    // Every value of dis holds a third of the rows: no property has a prior ≤ ρ1 = 0.1, so the
    // bound holds without perturbation and every sub-domain keeps retention 1.
    const rho = { ...RHO, rho2: 0.9 };
    const where = out();
    const { report } = await releaseTo(spec(people, [rho], { scenario: 'rr-s', smallDomain: true }), where);
    expect(report.verification.verified).toBe(true);
    expect(matricesOf(where).smallDomain!.blocks.every((b) => b.retention === 1)).toBe(true);
    const caution = report.audit!.cautions.find((c) => c.cause === 'released-unperturbed')!;
    expect(caution).toMatchObject({ column: 'dis' });
    expect(caution.message).toBe(
      'dis is released unperturbed, exactly as in the input (its matrix keeps every value: retention 1), because the (ρ1, ρ2) bound holds without perturbing it',
    );
    expect(report.verdict!.causes).toContain(caution.message);
    expect(report.audit!.unchanged).toContain('dis');
    const facts = Object.fromEntries(report.sections!.find((s) => s.title === 'Randomization')!.facts);
    expect(facts.randomized).toBe('nothing');
    expect(facts['released unperturbed (retention 1)']).toBe('dis');
  });

  it('rr-both: the randomized quasi-identifiers are left out; the timestamp alone makes rows unique', async () => {
    const { report } = await releaseTo(spec(people, [AD(0.9)], { scenario: 'rr-both' }), out());
    const ts = report.audit!.cautions.find((c) => c.column === 'ts')!;
    expect(ts.message).toMatch(
      /^ts is released unchanged and makes 300 of 300 rows \(100%\) unique on its own \(scenario rr-both randomizes the quasi-identifiers\)$/,
    );
    // No "keeps nothing" from the one class that randomized quasi-identifiers leave.
    expect(report.audit!.cautions.map((c) => c.cause)).not.toContain('keeps-nothing');
  });
});

describe('a damaged matrices.json', () => {
  it('is located by line and column, its text never quoted (it holds the categories)', () => {
    const path = join(dir, 'matrices.json');
    writeFileSync(path, '{\n  "attributes": { "dis": { "categories": ["Secret-Value", x] } }\n}\n');
    expect(() => readMatricesFile(path)).toThrow(
      expect.objectContaining({
        code: 'E_MATRICES',
        message: expect.stringMatching(/matrices\.json line 2, column \d+: not valid JSON \(/),
      }),
    );
    expect(() => readMatricesFile(path)).not.toThrow(/Secret/);
  });
});
