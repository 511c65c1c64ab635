/**
 * A 2,000-row hospital-like table with empty cells in every column but the id, released by
 * generalization and by Mondrian with built hierarchies (intervals with top/bottom coding,
 * groups, masking, dates), verified; the same table as Arrow with nulls.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Table, tableToIPC, Utf8, vectorFromArray } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { readArrow } from '../../src/data/arrow.ts';
import { readCsv } from '../../src/data/csv.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { InputError, VerificationError } from '../../src/errors.ts';
import { hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { hospitalCsv, hospitalSpec } from '../helpers/hospital.ts';
import { releaseTo } from '../helpers/release.ts';
import { verifyMondrianTampered } from '../helpers/tamper.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-hospital-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const CSV = hospitalCsv(2000);
writeFileSync(join(dir, 'hospital.csv'), CSV);
let runs = 0;

function write(name: string, spec: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(spec, null, 2));
  return path;
}

/** The cells of one column of a CSV string (no quoted delimiters in the hospital table). */
function cellsOf(csv: string, name: string): string[] {
  const [header, ...lines] = csv.trimEnd().split('\n');
  const at = header!.split(',').indexOf(name);
  return lines.map((line) => line.split(',')[at]!);
}

/** A released column's strings, row by row. */
function released(table: EncodedTable, name: string): string[] {
  const c = table.columns.find((x) => x.name === name)!;
  return Array.from(c.codes, (code) => c.dictionary[code]!);
}

const missingAges = cellsOf(CSV, 'age').filter((v) => v === '').length;

describe('a hospital table with empty cells', () => {
  it('has empty cells in every column but the id', () => {
    for (const name of ['age', 'sex', 'zip', 'admission_date', 'diagnosis']) {
      expect(cellsOf(CSV, name).filter((v) => v === '').length, name).toBeGreaterThan(5);
    }
    expect(cellsOf(CSV, 'patient_id').every((v) => v !== '')).toBe(true);
  });

  it('releases by generalization with built hierarchies, verified', async () => {
    const out = join(dir, `out-${runs++}`);
    const { report } = await releaseTo(write('generalization.json', hospitalSpec('generalization')), out);
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.satisfied).toBe(true);
    expect(report.privacy.k).toBeGreaterThanOrEqual(5);
    expect(report.rows.input).toBe(2000);
    expect(report.rows.suppressed).toBeLessThanOrEqual(40);
    const data = readArrow(join(out, 'data.arrow'));
    // Missing ages are released as missing (empty), not as an interval or a coded value.
    const ages = released(data, 'age');
    expect(ages.filter((v) => v === '').length).toBeGreaterThan(0);
    expect(ages.filter((v) => v === '').length).toBeLessThanOrEqual(missingAges);
    const dates = released(data, 'admission_date');
    expect(dates.every((v) => /^(\d{4}-\d{2}-\d{2}|\d{4}-\d{2}|\d{4}|\d{4}-\d{4}|\*|)$/.test(v))).toBe(true);
  });

  it('releases by Mondrian: a missing age is its own part, released as missing with empty _lo/_hi', async () => {
    const out = join(dir, `out-${runs++}`);
    const { report } = await releaseTo(write('mondrian.json', hospitalSpec('mondrian')), out);
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.k).toBeGreaterThanOrEqual(5);
    const data = readCsv(join(out, 'data.csv'), { delimiter: ',' });
    const ages = released(data, 'age');
    const lo = released(data, 'age_lo');
    const hi = released(data, 'age_hi');
    // 51 missing ages ≥ k: the missingness cut holds, so every one is released as missing.
    expect(ages.filter((v) => v === '').length).toBe(missingAges);
    ages.forEach((v, j) => {
      if (v === '') expect([lo[j], hi[j]]).toEqual(['', '']);
      else expect(v).toBe(`[${lo[j]}-${hi[j]}]`);
    });
  });

  it('Mondrian releases * for a part that must keep a missing value with numbers (fewer than k missing)', async () => {
    const lines = CSV.trimEnd().split('\n');
    // Keep two missing ages only: fewer than k = 5, they cannot form a part of their own.
    let kept = 0;
    const few = lines.filter((line, i) => i === 0 || line.split(',')[1] !== '' || kept++ < 2);
    writeFileSync(join(dir, 'few.csv'), `${few.join('\n')}\n`);
    const spec = {
      ...hospitalSpec('mondrian'),
      input: 'few.csv',
      method: { name: 'mondrian', measures: false },
    };
    const out = join(dir, `out-${runs++}`);
    const { report } = await releaseTo(write('few.json', spec), out);
    expect(report.verification.verified).toBe(true);
    const ages = released(readArrow(join(out, 'data.arrow')), 'age');
    expect(ages.includes('')).toBe(false);
    expect(ages.filter((v) => v === '*').length).toBeGreaterThanOrEqual(5);
  });

  it('the Mondrian verifier rejects a missing age released as a range, and a range released as missing', async () => {
    const specPath = write('mondrian-verify.json', {
      ...hospitalSpec('mondrian'),
      method: { name: 'mondrian', measures: false },
    });
    const out = join(dir, `out-${runs++}`);
    const { report } = await releaseTo(specPath, out);
    const spec = loadSpec(specPath);
    const input = readInput(spec);
    const staged = readArrow(join(out, 'data.arrow'));
    const rows = new Map(
      spec.attributes
        .filter((a) => a.hierarchy && a.name !== 'age')
        .map((a) => [a.name, hierarchyRows(input.columns.find((c) => c.name === a.name)!, a.hierarchy!)]),
    );
    const verify = (cells: [string, number, string][]) =>
      verifyMondrianTampered({ spec, input, staged, report }, rows, cells);
    expect(verify([]).every((c) => c.passed)).toBe(true);
    const ages = released(staged, 'age');
    const missing = ages.indexOf('');
    const ranged = ages.findIndex((v) => v.startsWith('['));
    expect(() =>
      verify([
        ['age', missing, '[0-99]'],
        ['age_lo', missing, '0'],
        ['age_hi', missing, '99'],
      ]),
    ).toThrow(/rows-generalize-input/);
    expect(() =>
      verify([
        ['age', ranged, ''],
        ['age_lo', ranged, ''],
        ['age_hi', ranged, ''],
      ]),
    ).toThrow(VerificationError);
    // `*` matches anything, but costs NCP 1: the reported NCP no longer holds.
    expect(() =>
      verify([
        ['age', ranged, '*'],
        ['age_lo', ranged, ''],
        ['age_hi', ranged, ''],
      ]),
    ).toThrow(/reported-ncp/);
  });
});

describe('the hospital table under the other methods', () => {
  const l3 = [{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: 3 }];
  it.each([
    ['anatomy', { name: 'anatomy' }, l3],
    ['slicing', { name: 'slicing', columns: 2 }, l3],
    [
      'randomization',
      { name: 'randomization', scenario: 'rr-both', discretize: { age: { bins: 5 } } },
      [{ model: 'attribute-disclosure', attribute: 'diagnosis', tau: 0.5 }],
    ],
  ])('%s releases it with its empty cells, verified', async (name, method, privacy) => {
    const spec: Record<string, unknown> = { ...hospitalSpec('generalization'), method, privacy };
    if (name === 'randomization') {
      // A binned age (its missing value a category of its own) and sex are randomized.
      const attributes = structuredClone(spec.attributes) as Record<string, Record<string, unknown>>;
      attributes.age = { type: 'quasi-identifying' };
      attributes.zip = { type: 'insensitive' };
      attributes.admission_date = { type: 'insensitive' };
      spec.attributes = attributes;
    }
    const { report } = await releaseTo(write(`${name}.json`, spec), join(dir, `out-${runs++}`));
    expect(report.verification.verified).toBe(true);
    expect(report.rows.released).toBe(2000);
  });
});

describe('the hospital table as Arrow with nulls', () => {
  const names = CSV.split('\n', 1)[0]!.split(',');
  const columns = names.map((name) => cellsOf(CSV, name).map((v) => (v === '' ? null : v)));
  const data = new Table(
    Object.fromEntries(names.map((n, i) => [n, vectorFromArray(columns[i]!, new Utf8())])),
  );
  writeFileSync(join(dir, 'hospital.arrow'), tableToIPC(data, 'file'));

  it('releases with emptyCells "value": a null is the missing value', async () => {
    const spec = { ...hospitalSpec('generalization'), input: 'hospital.arrow' };
    const out = join(dir, `out-${runs++}`);
    const fromArrow = (await releaseTo(write('arrow.json', spec), out)).report;
    expect(fromArrow.verification.verified).toBe(true);
    const fromCsv = (
      await releaseTo(write('csv.json', hospitalSpec('generalization')), join(dir, `out-${runs++}`))
    ).report;
    expect(fromArrow.generalization).toEqual(fromCsv.generalization);
    expect(fromArrow.rows).toEqual(fromCsv.rows);
  });

  it('fails on the first null without emptyCells "value", saying how to opt in', async () => {
    const spec = { ...hospitalSpec('generalization'), input: 'hospital.arrow', format: {} };
    const path = write('arrow-default.json', spec);
    let error: unknown;
    try {
      await releaseTo(path, join(dir, `out-${runs++}`));
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).code).toBe('E_INPUT_NULL');
    expect((error as InputError).message).toMatch(/^hospital\.arrow column "age" row \d+: the value is null/);
    expect((error as InputError).hint).toMatch(/"emptyCells": "value"/);
  });
});

describe('examples/hospital', () => {
  const example = (name: string) =>
    readFileSync(new URL(`../../examples/hospital/${name}`, import.meta.url), 'utf8');
  it('is the generated table and the specs these tests release', () => {
    expect(example('hospital.csv')).toBe(CSV);
    expect(JSON.parse(example('release.json'))).toEqual(hospitalSpec('generalization'));
    expect(JSON.parse(example('release-mondrian.json'))).toEqual(hospitalSpec('mondrian'));
  });
});
