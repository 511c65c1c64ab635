/**
 * `ppdp init`, `ppdp hierarchy` and `ppdp hierarchy check` through the bundled CLI
 * (bin/ppdp.mjs; `npm run build` first), on the synthetic hospital table.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { readHierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { hospitalCsv } from '../helpers/hospital.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const FIXTURES = new URL('../fixtures/defaults/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-cli-hierarchy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, 'hospital.csv'), hospitalCsv(2000));

const ppdp = (...args: string[]) =>
  spawnSync(process.execPath, [CLI, ...args], { encoding: 'utf8', cwd: dir });

describe('ppdp init', () => {
  it('drafts a valid spec whose release is verified', () => {
    const r = ppdp('init', 'hospital.csv', '--out', 'draft/release.json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/patient_id: identifying/);
    expect(r.stdout).toMatch(/admission_date: quasi-identifying — dates \(YYYY-MM-DD\)/);
    const spec = JSON.parse(readFileSync(join(dir, 'draft/release.json'), 'utf8'));
    // Outside the spec's folder: the path is absolute, which the spec takes as written.
    expect(spec.input).toBe(join(dir, 'hospital.csv'));
    expect(spec.format).toEqual({ delimiter: ',', emptyCells: 'value' });
    expect(r.stdout).toMatch(
      /format\.emptyCells: "value" — [^\n]+ empty cells: a release keeps them as the missing value/,
    );
    expect(spec.attributes).toMatchObject({
      patient_id: { type: 'identifying' },
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
      sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
      zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      admission_date: { type: 'quasi-identifying', hierarchy: { date: 'YYYY-MM-DD' } },
      diagnosis: { type: 'sensitive' },
    });
    expect(spec.privacy).toEqual([{ model: 'k-anonymity', k: 5 }]);
    expect(spec.method).toEqual({ name: 'generalization', maxSuppression: 0.02 });
    const release = ppdp('release', 'draft/release.json', '--out', 'out-init', '--quiet');
    expect(release.stderr).toBe('');
    expect(release.stdout).toMatch(/^verified release in out-init: k = \d+/);
  });

  it('drafts many-valued text and places as quasi-identifying, two values as groups, and reads decimal commas as numbers', () => {
    writeFileSync(join(dir, 'people.csv'), readFileSync(join(FIXTURES, 'people.csv')));
    const r = ppdp('init', 'people.csv', '--out', 'people.json');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const spec = JSON.parse(readFileSync(join(dir, 'people.json'), 'utf8'));
    expect(spec.attributes).toMatchObject({
      name: { type: 'identifying' },
      street_address: { type: 'identifying' },
      neighborhood: { type: 'quasi-identifying', hierarchy: { groups: [expect.any(Object)] } },
      employer: { type: 'quasi-identifying', hierarchy: { groups: [expect.any(Object)] } },
      gender: { type: 'quasi-identifying', hierarchy: { groups: [{ female: '*', male: '*' }] } },
      member: { type: 'quasi-identifying', hierarchy: { groups: [{ 0: '*', 1: '*' }] } },
      score: { type: 'quasi-identifying', hierarchy: { intervals: expect.any(Array) } },
    });
    expect(Object.values(spec.attributes).some((a) => (a as { type: string }).type === 'insensitive')).toBe(
      false,
    );
    expect(r.stdout).toMatch(
      /neighborhood: quasi-identifying — a place \(\d+ distinct values\): an attacker can link on it/,
    );
    expect(r.stdout).toMatch(
      /employer: quasi-identifying — text with \d+ distinct values: an attacker may know it/,
    );
    expect(r.stdout).toMatch(
      /format\.decimal: "," — score holds numbers with decimal commas \(3,75\): a release reads them as numbers/,
    );
    expect(spec.format.decimal).toBe(',');
    expect(r.stdout).toMatch(/no column looks sensitive: if score is an outcome to protect/);
  });

  it('drafts lineBreaksInQuotes for a CSV whose quoted fields hold line breaks, and the release reads it', () => {
    const lines = ['id,age,note', ...Array.from({ length: 40 }, (_, i) => `p${i},${20 + (i % 50)},"n${i}"`)];
    lines[30] = 'p29,49,"two\nlines"';
    writeFileSync(join(dir, 'notes.csv'), `${lines.join('\n')}\n`);
    const r = ppdp('init', 'notes.csv', '--out', 'notes.json');
    expect(r.stderr).toBe('');
    expect(r.stdout).toMatch(/format\.lineBreaksInQuotes: true — note holds quoted line breaks/);
    expect(JSON.parse(readFileSync(join(dir, 'notes.json'), 'utf8')).format.lineBreaksInQuotes).toBe(true);
    // Without such fields, no setting.
    expect(
      JSON.parse(readFileSync(join(dir, 'people.json'), 'utf8')).format.lineBreaksInQuotes,
    ).toBeUndefined();
    const release = ppdp('release', 'notes.json', '--out', 'out-notes', '--quiet');
    expect(release.stderr).toBe('');
    expect(release.status).toBe(0);
  });

  it('drafts intervals as wide as the numbers: three decimals are decimals, whole numbers get whole widths', () => {
    const rows = ['weight;children'];
    for (let i = 0; i < 60; i++) rows.push(`${(40 + ((i * 7919) % 80_000) / 1000).toFixed(3)};${i % 7}`);
    writeFileSync(join(dir, 'widths.csv'), `${rows.join('\n')}\n`);
    const r = ppdp('init', 'widths.csv', '--out', 'widths.json');
    expect(r.status, r.stderr).toBe(0);
    const spec = JSON.parse(readFileSync(join(dir, 'widths.json'), 'utf8'));
    // 40.000–119.999 kg in steps of 5 kg (a point before three digits is no thousands separator here).
    expect(spec.attributes.weight.hierarchy).toEqual({ intervals: [5, 10, 20] });
    expect(spec.format?.decimal).toBeUndefined();
    // 0–6 children: widths of whole children, not 0.5.
    expect(spec.attributes.children.hierarchy).toEqual({ intervals: [1, 2, 4] });
  });

  it('recognizes postal codes by their shape, whatever the header', () => {
    const rows = [
      'a;b;c;n',
      '01234;SW1A 1AA;12345-6789;120',
      '10115;M1 1AE;02134-0001;95',
      '80331;EC1A 1BB;94105-1234;101',
    ];
    writeFileSync(join(dir, 'codes.csv'), `${rows.join('\n')}\n`);
    const r = ppdp('init', 'codes.csv', '--out', 'codes.json');
    expect(r.status, r.stderr).toBe(0);
    const spec = JSON.parse(readFileSync(join(dir, 'codes.json'), 'utf8'));
    for (const column of ['a', 'b', 'c']) {
      expect(spec.attributes[column]).toEqual({ type: 'quasi-identifying', hierarchy: { mask: 'right' } });
    }
    // Plain numbers of one length without a leading zero stay numbers.
    expect(spec.attributes.n.hierarchy).toHaveProperty('intervals');
    expect(r.stdout).toMatch(/a: quasi-identifying — shaped like postal codes, masked from the right/);
  });

  it('names a sensitive header, and drafts a two-valued 0/1 column as groups', () => {
    writeFileSync(join(dir, 'wage.csv'), readFileSync(join(FIXTURES, 'wage.csv')));
    const r = ppdp('init', 'wage.csv', '--out', 'wage.json');
    expect(r.status).toBe(0);
    const spec = JSON.parse(readFileSync(join(dir, 'wage.json'), 'utf8'));
    expect(spec.attributes.wage).toEqual({ type: 'sensitive' });
    expect(spec.attributes.union).toEqual({
      type: 'quasi-identifying',
      hierarchy: { groups: [{ 0: '*', 1: '*' }] },
    });
    expect(r.stdout).not.toMatch(/no column looks sensitive/);
    // Released with k-anonymity alone, the wage goes out unchanged: verified, with a caution.
    const release = ppdp('release', 'wage.json', '--out', 'out-wage', '--quiet');
    expect(release.status, release.stderr).toBe(0);
    expect(release.stdout).toMatch(
      /^verified release in out-wage: .*\n {2}caution: wage is released unchanged and makes \d+ of 60 rows/,
    );
  });

  it('keeps an existing spec unless --force', () => {
    writeFileSync(join(dir, 'release.json'), '{}');
    const r = ppdp('init', 'hospital.csv');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/release\.json already exists/);
    expect(r.stderr).toMatch(/hint: .*--force/);
    expect(readFileSync(join(dir, 'release.json'), 'utf8')).toBe('{}');
    expect(ppdp('init', 'hospital.csv', '--force').status).toBe(0);
    expect(JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8')).input).toBe('hospital.csv');
  });

  it('has --help', () => {
    const r = ppdp('init', '--help');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: ppdp init <table> \[--sheet <name\|position>\]/);
    expect(r.stdout).toMatch(
      /\(CSV, Arrow IPC, Parquet or an Excel workbook's sheet, or a\s+folder of such files\)/,
    );
  });

  it('drafts from the Excel sheet --sheet names, by name or position, into format.sheet', async () => {
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Notes').addRow(['written by hand']);
    const data = wb.addWorksheet('Data');
    for (const line of hospitalCsv(300).trimEnd().split('\n')) data.addRow(line.split(','));
    writeFileSync(join(dir, 'book.xlsx'), Buffer.from(await wb.xlsx.writeBuffer()));
    // The first sheet is not the table (a header alone): init drafts from the one that is.
    const first = ppdp('init', 'book.xlsx', '--out', 'book.json');
    expect(first.stderr).toBe('');
    expect(first.stdout).toContain(
      'format.sheet: "Data" — the first visible sheet, "Notes", holds no rows: the draft reads this one',
    );
    expect(JSON.parse(readFileSync(join(dir, 'book.json'), 'utf8')).format).toMatchObject({ sheet: 'Data' });
    for (const sheet of ['Data', 2]) {
      const r = ppdp('init', 'book.xlsx', '--sheet', String(sheet), '--out', 'book.json', '--force');
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/drafted from book\.xlsx sheet .* \(300 rows\)/);
      const spec = JSON.parse(readFileSync(join(dir, 'book.json'), 'utf8'));
      expect(spec.format).toMatchObject({ sheet });
      expect(spec.attributes.zip).toEqual({ type: 'quasi-identifying', hierarchy: { mask: 'right' } });
    }
    const release = ppdp('release', 'book.json', '--out', 'out-book', '--quiet');
    expect(release.stderr).toBe('');
    expect(release.stdout).toMatch(/^verified release in out-book/);
    // Checked as format.sheet is, and named as the option; a sheet in a CSV is a conflict.
    const long = ppdp('init', 'book.xlsx', '--sheet', 'x'.repeat(32), '--out', 'long.json');
    expect(long.stderr).toMatch(/ppdp init: --sheet must be a sheet's name \(1 to 31 characters\)/);
    const csv = ppdp('init', 'hospital.csv', '--sheet', 'Data', '--out', 'csv.json');
    expect(csv.stderr).toMatch(/--sheet is set, but hospital\.csv is read as CSV/);
  });
});

describe('ppdp hierarchy', () => {
  const spec = () => {
    const s = JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8'));
    s.attributes.age.hierarchy = { intervals: [5, 10, 20], bottom: 18, top: 90 };
    writeFileSync(join(dir, 'built.json'), JSON.stringify(s));
    return 'built.json';
  };

  it('writes every built hierarchy as an ARX CSV the reader takes, the missing value included', () => {
    if (!existsSync(join(dir, 'release.json'))) ppdp('init', 'hospital.csv');
    const r = ppdp('hierarchy', spec(), '--out', 'hierarchies');
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(
      /hierarchies\/admission_date\.csv: hierarchy of 'admission_date', [\d,]+ values/,
    );
    const dates = readHierarchyRows(join(dir, 'hierarchies/admission_date.csv'));
    expect(dates.every((row) => row.length === 5)).toBe(true);
    const row = dates.find((x) => x[0] !== '')!;
    expect(row[1]).toBe(row[0]!.slice(0, 7));
    expect(dates.find((x) => x[0] === '')).toEqual(['', '', '', '', '*']);
    const ages = readHierarchyRows(join(dir, 'hierarchies/age.csv'));
    expect(ages.find((x) => x[0] === '95')).toEqual(['95', '>=90', '>=90', '>=90', '*']);
    const one = ppdp('hierarchy', spec(), '--column', 'zip', '--out', 'zip.csv');
    expect(one.status).toBe(0);
    expect(readFileSync(join(dir, 'zip.csv'), 'utf8')).toMatch(
      /^47\d{3};47\d{2}\*;47\d\*\*;47\*\*\*;4\*\*\*\*;\*$/m,
    );
  });

  it('a written file releases exactly as its builder', () => {
    const s = JSON.parse(readFileSync(join(dir, spec()), 'utf8'));
    const a = ppdp('release', 'built.json', '--out', 'out-builder', '--quiet');
    s.attributes.admission_date.hierarchy = 'hierarchies/admission_date.csv';
    writeFileSync(join(dir, 'from-file.json'), JSON.stringify(s));
    const b = ppdp('release', 'from-file.json', '--out', 'out-file', '--quiet');
    expect(a.status).toBe(0);
    expect(b.status).toBe(0);
    expect(readFileSync(join(dir, 'out-file/data.csv'), 'utf8')).toBe(
      readFileSync(join(dir, 'out-builder/data.csv'), 'utf8'),
    );
  });

  it('check: passes a covering hierarchy, and counts every uncovered value, naming rows, not values', () => {
    ppdp('hierarchy', spec(), '--out', 'hierarchies');
    const ok = ppdp('hierarchy', 'check', 'hierarchies/zip.csv', '--data', 'hospital.csv', '--column', 'zip');
    expect(ok.status).toBe(0);
    expect(ok.stdout).toMatch(
      /^hierarchies\/zip\.csv: a hierarchy of 5 levels that covers all \d+ distinct values of 'zip'/,
    );
    // Drop the rows of four zips: all four are counted, their first rows named; --show-values lists them.
    const rows = readFileSync(join(dir, 'hierarchies/zip.csv'), 'utf8').trimEnd().split('\n');
    const dropped = rows.filter((line) => /^479(01|02|05|06);/.test(line));
    expect(dropped).toHaveLength(4);
    writeFileSync(join(dir, 'zip-short.csv'), `${rows.filter((l) => !dropped.includes(l)).join('\n')}\n`);
    const bad = ppdp('hierarchy', 'check', 'zip-short.csv', '--data', 'hospital.csv', '--column', 'zip');
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(
      /zip-short\.csv: 4 values of column 'zip' appear in the data but not in the hierarchy: \d+ rows, first in hospital\.csv rows \d+, \d+, \d+, \d+(?! of the input)/,
    );
    expect(bad.stderr).not.toMatch(/4790[1256]/);
    const shown = ppdp(
      'hierarchy',
      'check',
      'zip-short.csv',
      '--data',
      'hospital.csv',
      '--column',
      'zip',
      '--show-values',
    );
    expect(shown.stdout.trim().split('\n').sort()).toEqual(dropped.map((l) => l.split(';')[0]).sort());
  });

  it('check: refuses a file that is not a hierarchy (ragged rows, not a tree)', () => {
    writeFileSync(join(dir, 'ragged.csv'), 'F;*\nM;x;*\n');
    const ragged = ppdp('hierarchy', 'check', 'ragged.csv', '--data', 'hospital.csv', '--column', 'sex');
    expect(ragged.status).toBe(1);
    expect(ragged.stderr).toMatch(/ragged\.csv row 2: 3 levels, row 1 has 2/);
    writeFileSync(join(dir, 'tree.csv'), 'F;a;A;*\nM;a;B;*\n');
    const tree = ppdp('hierarchy', 'check', 'tree.csv', '--data', 'hospital.csv', '--column', 'sex');
    expect(tree.status).toBe(1);
    expect(tree.stderr).toMatch(/is not a tree/);
  });

  it('has --help, and says what is missing', () => {
    expect(ppdp('hierarchy', '--help').stdout).toMatch(/ppdp hierarchy check <hierarchy\.csv>/);
    const r = ppdp('hierarchy', 'check', 'zip.csv');
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(
      /takes a hierarchy file with --spec \(or --data, a table without a spec\) and --column/,
    );
  });
});
