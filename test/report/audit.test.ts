/**
 * The amber verdict (src/report/audit.ts) on two small synthetic tables that a release once
 * called verified without a word: a wage table whose t-closeness (equal distance) released
 * every quasi-identifier as '*', and a people table releasing a many-valued neighborhood column
 * unchanged next to the quasi-identifiers. Also the t-closeness distance's default by column.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTable } from '../../src/data/read.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { parseSpec, withColumnDefaults } from '../../src/release-spec/spec.ts';
import { auditRelease, unchangedColumns } from '../../src/report/audit.ts';
import { releaseTo } from '../helpers/release.ts';
import { WAGE_ATTRIBUTES } from '../helpers/wage.ts';

const FIXTURES = new URL('../fixtures/defaults/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-audit-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function writeSpec(name: string, spec: Record<string, unknown>): string {
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify(spec, null, 2));
  return path;
}

const wageSpec = (distance?: string) => ({
  input: join(FIXTURES, 'wage.csv'),
  attributes: WAGE_ATTRIBUTES,
  privacy: [{ model: 't-closeness', attribute: 'wage', t: 0.2, ...(distance ? { distance } : {}) }],
  method: { name: 'generalization', maxSuppression: 0 },
  seed: 1,
});

const peopleSpec = {
  input: join(FIXTURES, 'people.csv'),
  format: { delimiter: ';' },
  attributes: {
    name: { type: 'identifying' },
    street_address: { type: 'identifying' },
    birth_date: { type: 'quasi-identifying', hierarchy: { date: 'YYYY-MM-DD', levels: ['year', 'decade'] } },
    gender: { type: 'quasi-identifying', hierarchy: { groups: [{ female: '*', male: '*' }] } },
    neighborhood: { type: 'insensitive' },
    employer: { type: 'insensitive' },
    city: { type: 'insensitive' },
    member: { type: 'insensitive' },
    score: { type: 'insensitive' },
  },
  privacy: [{ model: 'k-anonymity', k: 3 }],
  method: { name: 'generalization', maxSuppression: 0 },
  seed: 1,
};

describe('the amber verdict', () => {
  it('a release that keeps nothing (one class, every QI as *) is amber, not green', async () => {
    const { report, out } = await releaseTo(
      writeSpec('wage-equal.json', wageSpec('equal')),
      join(dir, 'equal'),
    );
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.classes).toBe(1);
    expect(report.verdict?.level).toBe('caution');
    const cause = report.audit!.cautions.find((c) => c.cause === 'keeps-nothing')!;
    expect(cause.message).toMatch(
      /all 60 released rows form a single class, the quasi-identifiers as released telling no row from another \(mean NCP 1(\.0+)?\)/,
    );
    expect(report.verdict!.causes).toContain(cause.message);
    // wage is released unchanged, and no model but t-closeness names it: it governs it.
    expect(report.audit!.unchanged).toEqual(['union', 'wage']);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/class="verdict warn"[\s\S]*Verified, with cautions[\s\S]*single class/);
    expect(html).not.toMatch(/Verified: every privacy guarantee holds/);
    expect(html).toMatch(/Released unchanged:<\/strong> <code>union<\/code>, <code>wage<\/code>/);
    expect(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')).verdict.level).toBe('caution');
  });

  it('rows alike on every quasi-identifier in the input are one class as they are: it keeps all they had', () => {
    writeFileSync(join(dir, 'same.csv'), `age,sex,dis\n${'40,M,flu\n'.repeat(20)}`);
    const spec = parseSpec(
      {
        input: 'same.csv',
        attributes: {
          age: { type: 'quasi-identifying', scale: 'numeric' },
          sex: { type: 'quasi-identifying', hierarchy: { groups: [{ M: '*' }] } },
          dis: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 5 }],
        method: { name: 'mondrian' },
      },
      join(dir, 'same.json'),
    );
    const table = readTable(join(dir, 'same.csv'));
    // Released as it is: one class, nothing generalized.
    const audit = auditRelease(spec, table, table.rowCount, table);
    expect(audit.classes).toBe(1);
    expect(audit.ncp).toBe(0);
    expect(audit.cautions.map((c) => c.cause)).not.toContain('keeps-nothing');
  });

  it('t-closeness on a numeric sensitive attribute measures the ordered distance unless told', async () => {
    const spec = parseSpec(wageSpec(), join(dir, 'wage-default.json'));
    expect(spec.pending).toEqual({ distance: [0] });
    const table = readTable(join(FIXTURES, 'wage.csv'));
    expect(withColumnDefaults(spec, table).privacy[0]).toMatchObject({ distance: 'ordered' });
    // Text: equal. Given: as given.
    const text = {
      ...table,
      columns: table.columns.map((c) => ({ ...c, dictionary: c.dictionary.map((v) => `${v}€`) })),
    };
    expect(withColumnDefaults(spec, text).privacy[0]).toMatchObject({ distance: 'equal' });
    const given = parseSpec(wageSpec('equal'), join(dir, 'wage-given.json'));
    expect(given.pending).toBeUndefined();
    const { report } = await releaseTo(writeSpec('wage-default.json', wageSpec()), join(dir, 'default'));
    expect(report.privacy.models[0]!.params).toMatchObject({ distance: 'ordered' });
    expect(report.privacy.classes).toBeGreaterThan(1);
  });

  it('a column released unchanged that makes rows unique with the QIs is amber, and named', async () => {
    const { report, out } = await releaseTo(writeSpec('people.json', peopleSpec), join(dir, 'people'));
    expect(report.verification.verified).toBe(true);
    expect(report.verdict?.level).toBe('caution');
    expect(report.audit!.unchanged).toEqual(['neighborhood', 'employer', 'city', 'member', 'score']);
    const hood = report.audit!.cautions.find((c) => c.column === 'neighborhood')!;
    expect(hood.cause).toBe('unique-with-unchanged-column');
    expect(hood.rows).toBeGreaterThan(0);
    expect(hood.message).toMatch(
      /^neighborhood is released unchanged and makes \d+ of 63 rows \(\d+(\.\d+)?\s?%\) unique together with the quasi-identifiers$/,
    );
    expect(report.audit!.cautions.map((c) => c.column)).toContain('employer');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toMatch(/Verified, with cautions[\s\S]*neighborhood is released unchanged/);
    // No data value is named: the causes carry column names and counts only.
    expect(JSON.stringify(report.verdict)).not.toMatch(/Park|Mill|Harbor|Aston|Brill/);
  });

  it('is measured on the staged table: recomputed from it, the same audit', async () => {
    const spec = parseSpec(peopleSpec, join(dir, 'people.json'));
    const input = readTable(join(FIXTURES, 'people.csv'), {
      omit: new Set(['name', 'street_address']),
      delimiter: ';',
    });
    const out = join(dir, 'people');
    const staged = readTable(join(out, 'data.arrow'));
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(auditRelease(spec, input, input.rowCount, staged)).toEqual(report.audit);
  });

  it('audits a release in parts as one table', async () => {
    const spec = writeSpec('people.json', peopleSpec);
    const { report } = await executeRelease({ spec, out: join(dir, 'people-parts'), rowsPerPart: 20 });
    expect(readdirSync(join(dir, 'people-parts', 'data')).filter((f) => f.endsWith('.arrow'))).toHaveLength(
      4,
    );
    const whole = JSON.parse(readFileSync(join(dir, 'people', 'report.json'), 'utf8'));
    expect(report.audit).toEqual(whole.audit);
    expect(report.verdict).toEqual(whole.verdict);
  });

  it('measures NCP as the release does when a numeric QI has empty cells (a range spans the numbers)', async () => {
    // examples/hospital: ages 1–99 and 51 empty cells, released by Mondrian as ranges.
    const hospital = new URL('../../examples/hospital/', import.meta.url).pathname;
    const spec = JSON.parse(readFileSync(join(hospital, 'release-mondrian.json'), 'utf8'));
    spec.input = join(hospital, spec.input);
    const { report } = await releaseTo(writeSpec('mondrian.json', spec), join(dir, 'mondrian'));
    expect(report.audit!.ncp).toBeCloseTo(report.utility.ncp as number, 12);
  });

  it('names the columns each method releases unchanged', () => {
    const example = (name: string, edit: (s: Record<string, unknown>) => void = () => {}) => {
      const path = new URL(`../../examples/${name}/release.json`, import.meta.url).pathname;
      const json = JSON.parse(readFileSync(path, 'utf8'));
      edit(json);
      return unchangedColumns(parseSpec(json, path));
    };
    expect(example('adult')).toEqual(['occupation']);
    // Anatomy publishes every value exactly, in buckets.
    expect(example('adult-anatomy')).toHaveLength(9);
    // Randomization: what its scenario does not randomize.
    expect(example('adult-randomization')).toEqual([]);
    const rrS = example('adult-randomization', (s) =>
      Object.assign(s.method as object, { scenario: 'rr-s' }),
    );
    expect(rrS).toEqual(['sex', 'race', 'education', 'salary-class']);
  });

  it('a sensitive attribute no model bounds, concentrated in a class, is amber', () => {
    const spec = parseSpec(
      {
        input: join(FIXTURES, 'wage.csv'),
        attributes: {
          age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
          sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
          education: { type: 'insensitive' },
          union: { type: 'sensitive' },
          wage: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      },
      join(dir, 'sensitive.json'),
    );
    const input = readTable(join(FIXTURES, 'wage.csv'));
    // A staged table of two classes; the second class's union is all 1.
    const rows = [
      'age,sex,education,union,wage',
      '20-39,F,a,0,1',
      '20-39,F,a,1,2',
      '40-59,M,a,1,3',
      '40-59,M,a,1,4',
      '40-59,M,a,1,5',
    ];
    writeFileSync(join(dir, 'staged.csv'), `${rows.join('\n')}\n`);
    const audit = auditRelease(spec, input, input.rowCount, readTable(join(dir, 'staged.csv')));
    const revealed = audit.cautions.find((c) => c.cause === 'sensitive-revealed')!;
    expect(revealed).toMatchObject({ column: 'union', value: 1, rows: 3 });
    expect(revealed.message).toMatch(
      /union is sensitive and no privacy model bounds it: in a class of 3 rows one value has a share of 100/,
    );
  });
});
