/**
 * Hints that name what works: NA cells in an intervals (or date) column point at the attribute's
 * "missing" list; an empty quasi-identifier cell is filled with what its hierarchy takes ("?" is
 * refused by an intervals builder); "10%" for maxSuppression is written 0.1 (the hint said 0); a
 * hierarchy file past the level limit is asked to be shortened, not to be given.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { PpdpError } from '../../src/errors.ts';
import { buildHierarchy } from '../../src/hierarchy/hierarchy.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-hints-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const column = (values: string[]) => ({
  name: 'age',
  dictionary: values,
  codes: Int32Array.from(values, (_, i) => i),
});

function refusal(work: () => unknown): PpdpError {
  try {
    work();
  } catch (e) {
    expect(e).toBeInstanceOf(PpdpError);
    return e as PpdpError;
  }
  throw new Error('expected a PpdpError');
}

/** The error a release of `csv` under `age`'s `hierarchy` (and `method`) stops with. */
async function releaseRefusal(
  name: string,
  csv: string,
  hierarchy: unknown,
  method: object = {},
): Promise<PpdpError> {
  writeFileSync(join(dir, `${name}.csv`), csv);
  const spec = join(dir, `${name}.json`);
  writeFileSync(
    spec,
    JSON.stringify({
      input: `${name}.csv`,
      format: { delimiter: ';' },
      attributes: { age: { type: 'quasi-identifying', hierarchy }, sex: { type: 'insensitive' } },
      privacy: [{ model: 'k-anonymity', k: 2 }],
      method: { name: 'generalization', maxSuppression: 0.5, ...method },
      seed: 1,
    }),
  );
  try {
    await releaseTo(spec, join(dir, `${name}-out`));
  } catch (e) {
    expect(e).toBeInstanceOf(PpdpError);
    return e as PpdpError;
  }
  throw new Error('expected the release to fail');
}

describe('hints', () => {
  it('NA in an intervals or a date column: the attribute\'s "missing" list', () => {
    const intervals = refusal(() =>
      buildHierarchy(column(['30', 'NA', '40']), { kind: 'intervals', widths: [10] }),
    );
    expect(intervals.hint).toContain('"missing": ["NA"]');
    const dates = refusal(() =>
      buildHierarchy(column(['2020-01-02', 'NA']), { kind: 'date', format: 'YYYY-MM-DD', levels: ['year'] }),
    );
    expect(dates.hint).toContain('"missing": ["NA"]');
  });

  it('decimal commas in an intervals column without format.decimal: set "format": { "decimal": "," }', () => {
    const commas = refusal(() =>
      buildHierarchy(column(['31,5', '1.204,25', '40', '']), { kind: 'intervals', widths: [10] }),
    );
    expect(commas.code).toBe('E_HIERARCHY_NUMERIC');
    expect(commas.message).toContain('its values are written with decimal commas (as 3,75)');
    expect(commas.hint).toContain('set "format": { "decimal": "," }');
    expect(`${commas.message}${commas.hint}`).not.toMatch(/31,5|1\.204,25/);
    // Texts among them are not numbers written with commas: the hint stays the "missing" list's.
    const texts = refusal(() => buildHierarchy(column(['31,5', 'NA']), { kind: 'intervals', widths: [10] }));
    expect(texts.hint).not.toContain('"decimal"');
  });

  it('an empty cell: filled with what the hierarchy takes, not "?" for intervals', async () => {
    const csv = 'age;sex\n30;m\n;f\n40;m\n35;f\n';
    const intervals = await releaseRefusal('empty-iv', csv, { intervals: [10] });
    expect(intervals.code).toBe('E_INPUT_EMPTY_CELL');
    expect(intervals.hint).toContain('with numbers');
    expect(intervals.hint).not.toContain('e.g. with "?"');
    const groups = await releaseRefusal('empty-groups', csv, { groups: [{ 30: '*', 35: '*', 40: '*' }] });
    expect(groups.hint).toContain('added as a key of groups[0]');
    expect(intervals.hint).toContain('"emptyCells": "value"');
  });

  it('"10%" for maxSuppression: the share, 0.1', async () => {
    const e = await releaseRefusal(
      'percent',
      'age;sex\n30;m\n40;f\n',
      { intervals: [10] },
      { maxSuppression: '10%' },
    );
    expect(e.hint).toContain('"maxSuppression": 0.1');
    expect(e.hint).not.toMatch(/"maxSuppression": 0(?!\.)/);
  });

  it('a hierarchy file of more than 1,000 levels: shorten the file', () => {
    const deep = join(dir, 'deep.csv');
    const levels = (v: string) => Array.from({ length: 1001 }, (_, l) => `${v}${l}`).join(';');
    writeFileSync(deep, `30;${levels('a')};*\n40;${levels('b')};*\n`);
    const e = refusal(() => buildHierarchy(column(['30', '40']), { kind: 'file', path: deep }));
    expect(e.message).toContain("deep.csv: the hierarchy of 'age' has 1,003 levels");
    expect(e.hint).toContain('write deep.csv with fewer levels');
    expect(e.hint).not.toContain('give the column a hierarchy file');
  });
});
