/**
 * Hierarchy files are read as the table reader reads CSV (src/data/hierarchy-file.ts): the
 * same line ends, quoting and encoding checks, with messages that name the file, a row and a
 * level, never a value; an empty label is refused; a value missing only for blanks, case or
 * Unicode normalization is told so.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import { HierarchyError, LimitError, type PpdpError } from '../../src/errors.ts';
import { buildHierarchy, hierarchyRows, readHierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { MAX_CSV_HEADER_BYTES } from '../../src/util/limits.ts';
import { verifierHierarchyRows } from '../../src/verify/hierarchy.ts';
import { releaseTo } from '../helpers/release.ts';
import { thrown } from '../helpers/thrown.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-hierarchy-file-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let files = 0;
/** A hierarchy file of these bytes (a string is written as UTF-8). */
function file(content: string | Buffer, name = `h${files++}.csv`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

function column(values: string[]): EncodedColumn {
  const dictionary = [...new Set(values)];
  return { name: 'sex', dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
}

/** The error `f` throws (it must throw a HierarchyError). */
function errorOf(f: () => unknown): PpdpError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(HierarchyError);
    return e as PpdpError;
  }
  throw new Error('expected an error');
}

/** What a person sees of it: no value of the file may be there. */
const shown = (e: PpdpError) => `${e.message}\n${e.hint ?? ''}`;

const FEMALE_MALE = [
  ['female', '*'],
  ['male', '*'],
];

describe('a hierarchy file is read as the table reader reads CSV', () => {
  it('CR LF, CR alone (Excel\'s "CSV (Macintosh)") and a byte order mark read as LF does', () => {
    expect(readHierarchyRows(file('female;*\r\nmale;*\r\n'))).toEqual(FEMALE_MALE);
    expect(readHierarchyRows(file('female;*\rmale;*\r'))).toEqual(FEMALE_MALE);
    expect(readHierarchyRows(file('\uFEFFfemale;*\nmale;*\n'))).toEqual(FEMALE_MALE);
  });

  it('CR CR LF is refused, saying how to mend it (not read as labels ending in CR)', () => {
    const e = errorOf(() => readHierarchyRows(file('female;*\r\r\nmale;*\r\r\n', 'crcr.csv')));
    expect(e.code).toBe('E_CSV_LINE_ENDS');
    expect(e.message).toMatch(/^crcr\.csv: each line ends with CR CR LF/);
    expect(e.hint).toMatch(/sed/);
  });

  it('quoted cells are unquoted (R write.csv, Excel), a quoted delimiter or quote is part of its label', () => {
    expect(readHierarchyRows(file('"female","*"\n"male","*"\n'))).toEqual(FEMALE_MALE);
    expect(readHierarchyRows(file('"female";*\n"male";*\n'))).toEqual(FEMALE_MALE);
    expect(readHierarchyRows(file('a;"x;y";*\nb;"say ""hi""";*\n'))).toEqual([
      ['a', 'x;y', '*'],
      ['b', 'say "hi"', '*'],
    ]);
  });

  it('the delimiter is the first of ;, tab, comma that the first line holds (commas in a ; file are labels)', () => {
    expect(readHierarchyRows(file('Married, civ, spouse;Married, any;*\nDivorced;Other;*\n'))).toEqual([
      ['Married, civ, spouse', 'Married, any', '*'],
      ['Divorced', 'Other', '*'],
    ]);
    expect(readHierarchyRows(file('female\t*\nmale\t*\n'))).toEqual(FEMALE_MALE);
    expect(readHierarchyRows(file('female,*\nmale,*\n'))).toEqual(FEMALE_MALE);
    // A `;` inside quotes does not choose it.
    expect(readHierarchyRows(file('"a;b",x,*\nc,x,*\n'))).toEqual([
      ['a;b', 'x', '*'],
      ['c', 'x', '*'],
    ]);
  });

  it('UTF-16 and Latin-1 are refused naming the encoding, the row and level, never a value', () => {
    const utf16 = errorOf(() =>
      readHierarchyRows(file(Buffer.from('\uFEFFfemale;*\nmale;*\n', 'utf16le'), 'u16.csv')),
    );
    expect(utf16.code).toBe('E_INPUT_ENCODING');
    expect(utf16.message).toMatch(/^u16\.csv: the file is UTF-16/);
    expect(utf16.hint).toMatch(/iconv/);
    const noBom = errorOf(() => readHierarchyRows(file(Buffer.from('female;*\nmale;*\n', 'utf16le'))));
    expect(noBom.message).toMatch(/UTF-16 little-endian without a byte order mark/);
    const e = errorOf(() =>
      readHierarchyRows(file(Buffer.from('female;X;*\nmal\xe9;Y;*\n', 'latin1'), 'l1.csv')),
    );
    expect(e.code).toBe('E_INPUT_ENCODING');
    expect(e.message).toMatch(/^l1\.csv row 2, the value \(column 1\): bytes that are not valid UTF-8/);
    expect(e.hint).toMatch(/iconv -f latin1/);
    const label = errorOf(() =>
      readHierarchyRows(file(Buffer.from('female;X;*\nmale;\xe9;*\n', 'latin1'), 'l2.csv')),
    );
    expect(label.message).toMatch(/^l2\.csv row 2, level 1 \(column 2\): /);
    expect(shown(label)).not.toMatch(/female|male/);
  });

  it('shape errors keep their hierarchy codes and wording', () => {
    const ragged = errorOf(() => readHierarchyRows(file('female;F;*\nmale;*\n', 'sex.csv')));
    expect(ragged.code).toBe('E_HIERARCHY_RAGGED');
    expect(ragged.message).toBe('sex.csv row 2: 2 levels, row 1 has 3');
    const blank = errorOf(() => readHierarchyRows(file('female;*\n\nmale;*\n', 'sex.csv')));
    expect(blank.code).toBe('E_HIERARCHY_RAGGED');
    expect(blank.message).toBe('sex.csv row 2: the line is empty');
    for (const content of ['', '\uFEFF', '\n\n\n']) {
      const empty = errorOf(() => readHierarchyRows(file(content, 'sex.csv')));
      expect(empty.code).toBe('E_HIERARCHY_EMPTY');
      expect(empty.message).toBe('sex.csv: hierarchy file is empty');
    }
    const missing = errorOf(() => readHierarchyRows(join(dir, 'nowhere.csv')));
    expect(missing.code).toBe('E_HIERARCHY_MISSING');
    // Empty lines (and an export's rows of delimiters) after the last row are not rows.
    expect(readHierarchyRows(file('female;*\nmale;*\n\n;\n'))).toEqual(FEMALE_MALE);
  });

  it('a blank first line is named as a blank line, not as a short row 1 (any line ends, a byte order mark)', () => {
    for (const content of [
      '\nfemale;*\nmale;*\n',
      '\uFEFF\r\nfemale;*\r\nmale;*\r\n',
      '\rfemale;*\rmale;*\r',
    ]) {
      const path = file(content, 'sex.csv');
      const sexes = column(['female', 'male']);
      for (const read of [
        () => readHierarchyRows(path),
        () => verifierHierarchyRows(sexes, { kind: 'file', path }),
      ]) {
        const e = errorOf(read);
        expect(e.code).toBe('E_HIERARCHY_RAGGED');
        expect(e.message).toBe('sex.csv row 1: the line is empty');
        expect(e.hint).toMatch(/^a hierarchy file may hold no blank line before or between its rows/);
      }
    }
    // One between rows says the same.
    const between = errorOf(() => readHierarchyRows(file('female;*\n\nmale;*\n', 'sex.csv')));
    expect(between.hint).toMatch(/^a hierarchy file may hold no blank line before or between its rows/);
  });

  it('a first line over the limit is not called a header row (a hierarchy file has none)', () => {
    const label = 'x'.repeat(MAX_CSV_HEADER_BYTES + 1);
    const e = thrown(() => readHierarchyRows(file(`female;${label}\nmale;*\n`, 'long.csv')), LimitError);
    expect(e.code).toBe('E_LIMIT_COLUMNS');
    expect(e.message).toBe(
      "long.csv row 1: the first line is longer than 16 MiB (the limit for a file's first line)",
    );
    expect(shown(e)).not.toMatch(/header|female|xxx/);
  });

  it('the verifier reads the same rows as the builder (quoted, CR alone)', () => {
    const c = column(['female', 'male', 'x;y']);
    for (const content of [
      '"female";F;*\r"male";M;*\r"x;y";"X;Y";*\r',
      '"female","F","*"\n"male","M","*"\n"x;y","X;Y","*"\n',
    ]) {
      const spec = { kind: 'file', path: file(content) } as const;
      expect(verifierHierarchyRows(c, spec)).toEqual(hierarchyRows(c, spec));
      expect(hierarchyRows(c, spec)).toContainEqual(['x;y', 'X;Y', '*']);
    }
  });
});

describe('an empty label', () => {
  it('is refused naming the file, row and level (it would release a value as a missing one)', () => {
    const e = errorOf(() => readHierarchyRows(file('female;;*\nmale;;*\n', 'sex.csv')));
    expect(e.code).toBe('E_HIERARCHY_LABEL');
    expect(e.message).toBe('sex.csv row 1, level 1: the label is empty');
    const blanks = errorOf(() => readHierarchyRows(file('female;F;*\nmale;  ;*\n', 'sex.csv')));
    expect(blanks.message).toBe('sex.csv row 2, level 1: the label is empty (blanks only)');
  });

  it('at the top of every row is named as a delimiter ending each line', () => {
    const e = errorOf(() => readHierarchyRows(file('female;*;\nmale;*;\n', 'sex.csv')));
    expect(e.message).toBe('sex.csv row 1, level 2: the label is empty (every row ends with the delimiter)');
    expect(e.hint).toMatch(/remove the delimiter from the end of each line/);
  });

  it('is the missing value keeping itself in its own row (docs: `;;*`)', () => {
    expect(readHierarchyRows(file('female;F;*\n;;*\n'))).toEqual([
      ['female', 'F', '*'],
      ['', '', '*'],
    ]);
    const c = column(['female', '', 'female']);
    const h = buildHierarchy(c, { kind: 'file', path: file('female;F;*\n;;*\n') });
    expect(h.labels[1]).toEqual(['F', '']);
  });
});

describe('a value the hierarchy lacks only for an unseen difference', () => {
  const hintFor = (values: string[], content: string) =>
    errorOf(() => buildHierarchy(column(values), { kind: 'file', path: file(content, 'sex.csv') }));

  it('blanks around it, letter case, Unicode normalization: the hint says which, never the value', () => {
    const blanks = hintFor(['female', 'male'], 'female ;*\nmale;*\n');
    expect(blanks.code).toBe('E_HIERARCHY_VALUE');
    expect(blanks.hint).toMatch(/^it matches a value of sex\.csv but for surrounding blanks: /);
    expect(hintFor(['Female', 'male'], 'female;*\nmale;*\n').hint).toMatch(/but for letter case/);
    const nfd = 'Fe\u0301minin';
    const nfc = nfd.normalize('NFC');
    const norm = hintFor([nfd, 'male'], `${nfc};*\nmale;*\n`);
    expect(norm.hint).toMatch(/but for Unicode normalization \(.*NFC.*NFD\)/);
    expect(shown(norm)).not.toContain(nfc);
    expect(shown(norm)).not.toContain(nfd);
    const both = hintFor([' Female', 'MALE', 'other'], 'female;*\nmale;*\n');
    expect(both.hint).toMatch(
      /^2 of them match a value of sex\.csv but for surrounding blanks, letter case or/,
    );
    expect(shown(both)).not.toMatch(/female|other/i);
  });

  it('a value that is simply not there gets the plain hint', () => {
    expect(hintFor(['female', 'other'], 'female;*\nmale;*\n').hint).toMatch(/^add a row for that value/);
  });
});

describe('releases', () => {
  const data =
    'name;sex;age\n' +
    Array.from({ length: 12 }, (_, i) => `P${i};${i % 2 ? 'male' : 'female'};${30 + i}`).join('\n') +
    '\n';

  function spec(hierarchy: string): string {
    writeFileSync(join(dir, 'data.csv'), data);
    writeFileSync(join(dir, 'sex-h.csv'), hierarchy);
    const path = join(dir, 'release.json');
    writeFileSync(
      path,
      JSON.stringify({
        input: 'data.csv',
        attributes: {
          name: { type: 'identifying' },
          sex: { type: 'quasi-identifying', hierarchy: 'sex-h.csv' },
          age: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization', maxSuppression: 0 },
        seed: 1,
      }),
    );
    return path;
  }

  it('an R-style quoted hierarchy releases its values unquoted, and verifies', async () => {
    const { out } = await releaseTo(spec('"female","*"\n"male","*"\n'), join(dir, 'out-quoted'));
    const released = readFileSync(join(out, 'data.csv'), 'utf8');
    expect(released).not.toContain('"');
    expect(released).toMatch(/female/);
  });

  it('CR CR LF and empty labels release nothing', async () => {
    await expect(releaseTo(spec('female;*\r\r\nmale;*\r\r\n'), join(dir, 'out-crcr'))).rejects.toMatchObject({
      code: 'E_CSV_LINE_ENDS',
    });
    await expect(releaseTo(spec('female;;*\nmale;;*\n'), join(dir, 'out-empty'))).rejects.toMatchObject({
      code: 'E_HIERARCHY_LABEL',
    });
  });
});
