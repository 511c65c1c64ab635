/**
 * `ppdp hierarchy` and `ppdp hierarchy check`, run in this process: check reads a column as the
 * spec's release reads it (--spec), --out never replaces what the command reads nor lands in
 * a release, and no message quotes a value of the table or a label of a hierarchy file (only
 * --show-values prints values, on stdout).
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { hierarchyCommand } from '../../src/cli/hierarchy.ts';
import { runCommand, said } from '../helpers/command.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-cli-hierarchy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);

const hierarchy = (...args: string[]) => runCommand(() => hierarchyCommand(args));

// Decimal commas, a missing text (NA) and an empty cell, as exports write them; SECRET marks
// values that must never be printed unless asked.
writeFileSync(
  at('dec.csv'),
  'id;amount;age;city;diagnosis\n' +
    '1;3,75;30;SECRET-Lodz;flu\n2;1.234,5;NA;Koeln;flu\n3;-0,5;;Koeln;cancer\n4;12,00;41;Koeln;flu\n',
);
const decSpec = {
  input: 'dec.csv',
  format: { delimiter: ';', decimal: ',', emptyCells: 'value' },
  attributes: {
    id: { type: 'identifying' },
    amount: { type: 'quasi-identifying', hierarchy: { intervals: [100, 200] } },
    age: { type: 'quasi-identifying', missing: ['NA'], hierarchy: { intervals: [10, 20] } },
    city: { type: 'quasi-identifying', hierarchy: { groups: [{ 'SECRET-Lodz': '*', Koeln: '*' }] } },
    diagnosis: { type: 'sensitive' },
  },
  privacy: [{ model: 'k-anonymity', k: 2 }],
  method: { name: 'generalization' },
};
writeFileSync(at('dec.json'), JSON.stringify(decSpec));

describe('hierarchy check --spec reads the column as a release does', () => {
  it('passes the hierarchies ppdp built, with decimal commas and missing texts', () => {
    expect(hierarchy(at('dec.json'), '--out', at('built')).status).toBe(0);
    for (const column of ['amount', 'age', 'city']) {
      const r = hierarchy('check', at(`built/${column}.csv`), '--spec', at('dec.json'), '--column', column);
      expect(r.error, column).toBeUndefined();
      expect(r.stdout).toMatch(new RegExp(`covers all \\d+ distinct values? of '${column}'`));
    }
    // Without the spec the same table is read as it is: 3,75 is no number, NA a value.
    const raw = hierarchy('check', at('built/amount.csv'), '--data', at('dec.csv'), '--column', 'amount');
    expect(raw.error?.code).toBe('E_HIERARCHY_VALUE');
  });

  it("checks the spec's own hierarchy files when no file is named", () => {
    const rows = readFileSync(at('built/city.csv'), 'utf8');
    writeFileSync(at('city.csv'), rows);
    writeFileSync(
      at('files.json'),
      JSON.stringify({
        ...decSpec,
        attributes: { ...decSpec.attributes, city: { type: 'quasi-identifying', hierarchy: 'city.csv' } },
      }),
    );
    const r = hierarchy('check', '--spec', at('files.json'));
    expect(r.error).toBeUndefined();
    expect(r.stdout).toBe("city.csv: a hierarchy of 1 level that covers all 2 distinct values of 'city'\n");
    const builder = hierarchy('check', '--spec', at('files.json'), '--column', 'age');
    expect(builder.error?.message).toBe(
      'files.json: attributes.age has a hierarchy builder, not a hierarchy file',
    );
  });
});

describe('hierarchy check names rows, never values, unless --show-values', () => {
  it('counts the values a file lacks and names their first rows', () => {
    writeFileSync(at('short.csv'), 'Koeln;*\n');
    const r = hierarchy('check', at('short.csv'), '--spec', at('dec.json'), '--column', 'city');
    expect(r.error?.code).toBe('E_HIERARCHY_VALUE');
    expect(r.error?.message).toMatch(/short\.csv: a value of column 'city' .* first in dec\.csv row 2$/);
    expect(r.error?.hint).toMatch(/add --show-values to list it on stdout/);
    expect(said(r)).not.toContain('SECRET');
    const shown = hierarchy(
      'check',
      at('short.csv'),
      '--spec',
      at('dec.json'),
      '--column',
      'city',
      '--show-values',
    );
    expect(shown.stdout).toBe('SECRET-Lodz\n');
    expect(shown.error?.describe()).not.toContain('SECRET');
    expect(shown.error?.hint).toMatch(/it is listed above/);
  });

  it("names a hierarchy file's rows and levels, never its labels", () => {
    const cases: [string, string, RegExp][] = [
      [
        'dup.csv',
        'SECRET-a;*\nKoeln;*\nSECRET-a;*\n',
        /^dup\.csv row 3: value listed twice \(also in row 1\)$/,
      ],
      [
        'tree.csv',
        'SECRET-Lodz;SECRET-x;SECRET-p;*\nKoeln;SECRET-x;SECRET-q;*\n',
        /^tree\.csv rows 1 and 2: .* the label these rows share at level 1 has two parents at level 2$/,
      ],
      [
        'cycle.csv',
        'SECRET-Lodz;SECRET-x;*\nSECRET-x;SECRET-Lodz;*\n',
        /^cycle\.csv row 2: .* has a cycle: a label generalizes, level by level, back to itself \(through rows 1 and 2\)$/,
      ],
      [
        'tops.csv',
        'SECRET-Lodz;*\nKoeln;SECRET-top\n',
        /^tops\.csv row 2: the top level \(level 1\) .* \(this row's differs from row 1's\)$/,
      ],
    ];
    for (const [file, text, message] of cases) {
      writeFileSync(at(file), text);
      const r = hierarchy('check', at(file), '--data', at('dec.csv'), '--column', 'city');
      expect(r.error?.message, file).toMatch(message);
      expect(said(r), file).not.toContain('SECRET');
    }
  });

  it('ignores trailing empty lines, names an empty line between rows, and counts levels in words', () => {
    writeFileSync(at('blank.csv'), 'SECRET-Lodz;*\nKoeln;*\n\n\n');
    const ok = hierarchy('check', at('blank.csv'), '--data', at('dec.csv'), '--column', 'city');
    expect(ok.stdout).toBe(
      `${at('blank.csv')}: a hierarchy of 1 level that covers all 2 distinct values of 'city'\n`,
    );
    writeFileSync(at('gap.csv'), 'SECRET-Lodz;*\n\nKoeln;*\n');
    const gap = hierarchy('check', at('gap.csv'), '--data', at('dec.csv'), '--column', 'city');
    expect(gap.error?.message).toBe(`${at('gap.csv')} row 2: the line is empty`);
    writeFileSync(at('ragged.csv'), 'SECRET-Lodz;x;*\nKoeln\n');
    const ragged = hierarchy('check', at('ragged.csv'), '--data', at('dec.csv'), '--column', 'city');
    expect(ragged.error?.message).toBe(`${at('ragged.csv')} row 2: 1 level, row 1 has 3`);
  });

  it('tells a value that differs from a row only in letter case, without quoting it', () => {
    writeFileSync(at('case.csv'), 'secret-lodz;*\nKoeln;*\n');
    const r = hierarchy('check', at('case.csv'), '--data', at('dec.csv'), '--column', 'city');
    expect(r.error?.code).toBe('E_HIERARCHY_VALUE');
    expect(r.error?.hint).toMatch(/^it matches a value of .*case\.csv but for letter case/);
    expect(`${r.error?.message}${r.error?.hint}${r.stdout}`).not.toMatch(/lodz/i);
  });

  it('names the file as given, and a delimiter given on the command line without a spec', () => {
    const empty = hierarchy('check', '/dev/null', '--data', at('dec.csv'), '--column', 'city');
    expect(empty.error?.message).toBe('/dev/null: hierarchy file is empty');
    const comma = hierarchy(
      'check',
      at('blank.csv'),
      '--data',
      at('dec.csv'),
      '--column',
      'city',
      '--delimiter',
      ',',
    );
    expect(comma.error?.code).toBe('E_CSV_DELIMITER');
    expect(comma.error?.message).not.toMatch(/spec/);
    expect(comma.error?.hint).toMatch(/--delimiter on the command line/);
  });
});

describe('hierarchy --out', () => {
  it('never writes over the spec, its input or its hierarchy files', () => {
    writeFileSync(at('spec-copy.json'), JSON.stringify(decSpec));
    const before = readFileSync(at('spec-copy.json'), 'utf8');
    for (const out of [at('spec-copy.json'), at('dec.csv'), `${dir}/built/../spec-copy.json`]) {
      const r = hierarchy(at('spec-copy.json'), '--column', 'age', '--out', out);
      expect(r.error?.code, out).toBe('E_OUT_IN_INPUT');
    }
    expect(readFileSync(at('spec-copy.json'), 'utf8')).toBe(before);
    expect(readFileSync(at('dec.csv'), 'utf8')).toMatch(/^id;amount/);
    const file = hierarchy(at('files.json'), '--column', 'city', '--out', at('city.csv'));
    expect(file.error?.message).toMatch(/: is the hierarchy of city \(.*city\.csv\), which ppdp reads;/);
    // A folder whose files would land on the input: dec.csv is the input, amount.csv is not.
    writeFileSync(at('dec-named.json'), JSON.stringify({ ...decSpec, input: 'amount.csv' }));
    writeFileSync(at('amount.csv'), readFileSync(at('dec.csv')));
    const folder = hierarchy(at('dec-named.json'), '--out', dir);
    expect(folder.error?.message).toMatch(/amount\.csv: is the input \(.*amount\.csv\), which ppdp reads;/);
  });

  it('never replaces a pipe, a device or a folder', () => {
    // Written through a rename, a pipe (or /dev/null, as root) would become a plain file.
    execFileSync('mkfifo', [at('pipe')]);
    expect(hierarchy(at('dec.json'), '--column', 'age', '--out', at('pipe')).error?.code).toBe(
      'E_OUT_NOT_FILE',
    );
    expect(hierarchy(at('dec.json'), '--column', 'age', '--out', dir).error?.code).toBe('E_OUT_IS_DIR');
    expect(statSync(at('pipe')).isFIFO()).toBe(true);
  });

  it('never writes into a release folder', () => {
    mkdirSync(at('release/data'), { recursive: true });
    writeFileSync(at('release/manifest.json'), '{"format":"ppdp-release/1"}');
    for (const out of [at('release/age.csv'), at('release/data/age.csv')]) {
      const r = hierarchy(at('dec.json'), '--column', 'age', '--out', out);
      expect(r.error?.code, out).toBe('E_OUT_IN_RELEASE');
    }
    expect(hierarchy(at('dec.json'), '--out', at('release/h')).error?.code).toBe('E_OUT_IN_RELEASE');
  });

  it("writes values and labels holding ';', quotes and line breaks quoted: the file releases what the builder does", async () => {
    const places = ['\uFEFFz', 'a;b', 'say "hi"', 'two\nlines', 'c,d', 'e'];
    const cell = (v: string) => (/[;"\n,]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    const lines = Array.from(
      { length: 24 },
      (_, i) => `${i},${cell(places[i % 6]!)},0123${i % 10},${i % 3 ? 'flu' : 'hiv'}`,
    );
    writeFileSync(at('semi.csv'), `id,place,zip,diag\n${lines.join('\n')}\n`);
    const groups = [
      { '\uFEFFz': 'p;q', 'a;b': 'p;q', 'say "hi"': '"r"', 'two\nlines': '"r"', 'c,d': 's\nt', e: 's\nt' },
      { 'p;q': 'x;y', '"r"': 'x;y', 's\nt': 'w' },
    ];
    const specOf = (place: unknown) => ({
      input: 'semi.csv',
      format: { lineBreaksInQuotes: true },
      attributes: {
        id: { type: 'identifying' },
        place: { type: 'quasi-identifying', hierarchy: place },
        zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
        diag: { type: 'sensitive' },
      },
      privacy: [{ model: 'k-anonymity', k: 8 }],
      method: { name: 'generalization', maxSuppression: 0 },
      seed: 3,
    });
    writeFileSync(at('semi.json'), JSON.stringify(specOf({ groups })));
    const r = hierarchy(at('semi.json'), '--out', at('semi'));
    expect(r.error).toBeUndefined();
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/semi\/place\.csv: hierarchy of 'place', 6 values/);
    expect(readFileSync(at('semi/place.csv'), 'utf8')).toContain('"a;b";"p;q";"x;y";*\n');
    writeFileSync(at('semi-file.json'), JSON.stringify(specOf('semi/place.csv')));
    const built = await releaseTo(at('semi.json'), at('semi-out-built'));
    const file = await releaseTo(at('semi-file.json'), at('semi-out-file'));
    for (const name of ['data.csv', 'data.arrow']) {
      const same = readFileSync(join(built.out, name)).equals(readFileSync(join(file.out, name)));
      expect(same, name).toBe(true);
    }
    // The release generalized place (its labels are in the file's rows, quoted or not).
    expect(readFileSync(join(built.out, 'data.csv'), 'utf8')).toMatch(/^(p;q|x;y),/m);
    // One column asked for: written the same way.
    expect(hierarchy(at('semi.json'), '--column', 'place', '--out', at('place.csv')).error).toBeUndefined();
    expect(readFileSync(at('place.csv'), 'utf8')).toBe(readFileSync(at('semi/place.csv'), 'utf8'));
  });
});
