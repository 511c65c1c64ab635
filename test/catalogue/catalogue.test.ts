/**
 * A privacy model added through the catalogue alone (its declaration and its check) is seen by
 * every consumer: the spec's validation, the models the search judges with, the verifier, the
 * report (report.json and report.html) and explore's parameters. Any consumer that switches on
 * model names again misses it and fails here.
 */
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { release } from '../../src/api.ts';
import { declaredModels, modelNames, registerModel } from '../../src/catalogue/catalogue.ts';
import type { ClassView, ModelDeclaration } from '../../src/catalogue/declaration.ts';
import { SpecError, VerificationError } from '../../src/errors.ts';
import { parseVary, specValue, specWith, varyParameters } from '../../src/explore/frontier.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { describeModel } from '../../src/models/describe.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { parseSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { buildInMemory, stageBuilt } from '../helpers/release.ts';

const ROOT = new URL('../..', import.meta.url).pathname;

/** The toy: no sensitive value makes up more than `share` of a class. */
function majority(spec: Readonly<Record<string, unknown>>, cls: ClassView) {
  let top = 0;
  for (const c of cls.counts?.values() ?? []) top = Math.max(top, c);
  const value = top / cls.size;
  return { value, holds: value <= (spec.share as number) + 1e-12 };
}

const TOY: ModelDeclaration = {
  name: 'toy-majority',
  fields: { attribute: { kind: 'attribute' }, share: { kind: 'number', min: 0, max: 1 } },
  title: 'Toy majority bound',
  wording: { share: (v) => `no value makes up more than ${v} of a class` },
  needs: ['sa-histogram'],
  scope: 'class',
  vary: { parameter: 'share', integer: false },
  measure: { name: 'share', higherIsBetter: false },
  check: majority,
};

const dir = mkdtempSync(join(tmpdir(), 'ppdp-catalogue-'));
copyFileSync(join(ROOT, 'examples/hospital/hospital.csv'), join(dir, 'hospital.csv'));
const hospital = JSON.parse(readFileSync(join(ROOT, 'examples/hospital/release.json'), 'utf8'));

let specs = 0;
/** The hospital example's spec with `privacy`, written beside its input. */
function specFile(privacy: unknown[]): { file: string; json: Record<string, unknown> } {
  const file = join(dir, `release-${specs++}.json`);
  const json = { ...hospital, privacy };
  writeFileSync(file, JSON.stringify(json));
  return { file, json };
}
function spec(privacy: unknown[]): ReleaseSpec {
  const { file, json } = specFile(privacy);
  return parseSpec(json, file);
}
const toy = (share: unknown) => ({ model: 'toy-majority', attribute: 'diagnosis', share });
const K = { model: 'k-anonymity', k: 5 };

let unregister: () => void;
beforeAll(() => {
  unregister = registerModel(TOY);
});
afterAll(() => {
  unregister();
  rmSync(dir, { recursive: true, force: true });
});

describe('a model added through the catalogue', () => {
  it('is checked by the spec: a bad parameter is refused naming the field, a good one parses', () => {
    expect(modelNames()).toContain('toy-majority');
    let error: unknown;
    try {
      spec([K, toy(2)]);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SpecError);
    expect((error as Error).message).toMatch(/privacy\[1\]\.share must be a number from 0 to 1/);
    expect(() => spec([K, { ...toy(0.5), extra: 1 }])).toThrow(/unknown field 'privacy\[1\]\.extra'/);
    expect(() => spec([K, { model: 'toy-majority', share: 0.5 }])).toThrow(
      /privacy\[1\]\.attribute is required/,
    );
    expect(spec([K, toy(0.6)]).privacy[1]).toEqual(toy(0.6));
  });

  it('is described for the report from its declaration', () => {
    expect(describeModel('toy-majority', { attribute: 'diagnosis', share: 0.6 })).toEqual({
      name: 'Toy majority bound',
      requirements: ['no value makes up more than 0.6 of a class'],
    });
  });

  it('is released under, and its wording is in report.json and report.html', async () => {
    const { file } = specFile([K, toy(0.6)]);
    const out = join(dir, 'out');
    const report = await release(file, { out, kernel: 'ts', engine: 'direct' });
    const m = report.privacy.models.find((x) => x.model === 'toy-majority')!;
    expect(m).toMatchObject({ params: { attribute: 'diagnosis', share: 0.6 }, satisfied: true });
    expect(m.achieved.share).toBeLessThanOrEqual(0.6);
    expect(report.verification.checks.find((c) => c.name === 'toy-majority')?.passed).toBe(true);
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(json.privacy.models.map((x: { model: string }) => x.model)).toContain('toy-majority');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('Toy majority bound');
    expect(html).toContain('no value makes up more than 0.6 of a class');
  });

  it('is verified: a release that violates it fails verification, one that holds passes', () => {
    const loose = spec([K, toy(0.95)]);
    const strict = spec([K, toy(0.3)]);
    const table = readInput(loose);
    const built = buildInMemory(loose, table, tsGroupingKernel);
    const staged = stageBuilt(built, join(dir, `staged-${specs++}`));
    const verify = (against: ReleaseSpec) =>
      verifierFor('generalization').verify({
        spec: against,
        table: readInput(against),
        claims: built.claims,
        staged,
      });
    const checks = verify(loose);
    expect(checks.find((c) => c.name === 'toy-majority')?.passed).toBe(true);
    // The release's worst class exceeds 0.3: the stricter spec fails it.
    expect(
      built.report.privacy.models.find((x) => x.model === 'toy-majority')!.achieved.share,
    ).toBeGreaterThan(0.3);
    let error: unknown;
    try {
      verify(strict);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(VerificationError);
    expect((error as Error).message).toMatch(/toy-majority/);
  });

  it("is one of explore's parameters", () => {
    expect(varyParameters().share).toEqual({ models: ['toy-majority'], integer: false });
    expect(parseVary('share=0.5..0.7:0.1')).toEqual({ parameter: 'share', values: [0.5, 0.6, 0.7] });
    const s = spec([K, toy(0.6)]);
    expect(specValue(s, 'share')).toBe(0.6);
    expect(specWith(s, 'share', 0.8).privacy[1]).toEqual(toy(0.8));
    expect(() => parseVary('share=2')).toThrow(/share must be from 0 to 1/);
  });
});

describe('the built-in catalogue', () => {
  it('gives every model a title, wording for each parameter and a measure', () => {
    for (const d of declaredModels()) {
      expect(d.title).not.toBe('');
      const params = [...Object.keys(d.fields), ...(d.variants ?? []).flatMap((v) => Object.keys(v))];
      for (const p of params.filter((p) => d.fields[p]?.kind !== 'attribute'))
        expect(d.wording[p]).toBeTypeOf('function');
    }
  });

  it('lets explore vary a parameter of every model but (ρ1, ρ2)-privacy', () => {
    // Differential privacy varies ε: explore runs its real release several times per value
    // (its sample is secret and random) and shows aggregates (test/explore/epsilon.test.ts).
    const varied = new Set(Object.values(varyParameters()).flatMap((p) => p.models));
    expect(modelNames().filter((n) => !varied.has(n))).toEqual(['rho-privacy']);
  });

  it('refuses a run-time model without its check', () => {
    expect(() => registerModel({ ...TOY, name: 'toy-unchecked', check: undefined })).toThrow(/by its check/);
  });
});
