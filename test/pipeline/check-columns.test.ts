/**
 * The release's checks of a spec's attributes against the input's columns (docs/release-spec.md):
 * an input column the spec does not list is named by its place in the file (`column 5`, several
 * listed), not by a count; a spec name that matches a column only up to letter case or Unicode
 * normalization (two names that look the same on screen) gets a hint saying which.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { PpdpError } from '../../src/errors.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-check-columns-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** name;zip;âge (composed);sex;diagnosis, and a spec of `attributes` over it. */
function errorOf(attributes: Record<string, unknown>): PpdpError {
  writeFileSync(
    join(dir, 'p.csv'),
    'name;zip;\u00e2ge;sex;diagnosis\nAda;47906;29;F;flu\nBen;47906;31;M;flu\n',
  );
  writeFileSync(
    join(dir, 'release.json'),
    JSON.stringify({
      input: 'p.csv',
      attributes,
      privacy: [{ model: 'k-anonymity', k: 2 }],
      method: { name: 'generalization' },
    }),
  );
  try {
    readInput(loadSpec(join(dir, 'release.json')));
  } catch (e) {
    return e as PpdpError;
  }
  throw new Error('read without an error');
}

const QI = { type: 'quasi-identifying', hierarchy: { mask: 'right' } };
const ALL = {
  name: { type: 'identifying' },
  zip: QI,
  '\u00e2ge': { type: 'insensitive' },
  sex: { type: 'insensitive' },
  diagnosis: { type: 'sensitive' },
};
const without = (...names: string[]) =>
  Object.fromEntries(Object.entries(ALL).filter(([n]) => !names.includes(n)));

describe('an input column the spec does not list', () => {
  it('is named by its place in the file', () => {
    const e = errorOf(without('sex'));
    expect(e.code).toBe('E_SPEC_UNLISTED');
    expect(e.message).toBe("release.json: the input's column 4 has no type");
  });

  it('several are listed by place, counting the identifying column the reader left out', () => {
    const e = errorOf({ ...without('sex', 'diagnosis'), '\u00e2ge': QI });
    expect(e.message).toBe("release.json: the input's columns 4 and 5 have no type");
    expect(e.hint).toMatch(/the input has 5 columns, the spec lists 3 of them/);
  });
});

describe('a spec name that matches a column only up to', () => {
  it('letter case', () => {
    const { zip, ...rest } = ALL;
    const e = errorOf({ ...rest, Zip: zip });
    expect(e.code).toBe('E_SPEC_COLUMN');
    expect(e.message).toBe('release.json: attributes.Zip is not a column of p.csv');
    expect(e.hint).toMatch(/^the header names it with other capital letters/);
  });

  it('Unicode normalization (a decomposed â against a composed one)', () => {
    const { '\u00e2ge': age, ...rest } = ALL;
    const e = errorOf({ ...rest, 'a\u0302ge': age });
    expect(e.code).toBe('E_SPEC_COLUMN');
    expect(e.hint).toMatch(/^the header names it with the same letters encoded differently/);
  });

  it('blanks around it, as before', () => {
    const { zip, ...rest } = ALL;
    const e = errorOf({ ...rest, ' zip ': zip });
    expect(e.hint).toMatch(/^the header names it with blanks around it/);
  });
});
