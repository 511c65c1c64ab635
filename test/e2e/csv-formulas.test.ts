/**
 * Formula escaping in the released CSV (`format.escapeFormulas`): every method's CSV cells
 * that a spreadsheet would run as formulas carry a leading `'`, the Arrow files hold the
 * values unchanged, the verifiers (taking the option from the spec) pass such a release and
 * fail one with a cell left unescaped, and the commands that read a release's CSV read the
 * values back. Off by default, the CSV is written as before.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { initCommand } from '../../src/cli/init.ts';
import { readReleasedTable } from '../../src/cli/released-table.ts';
import { readArrow } from '../../src/data/arrow.ts';
import { escapeFormula, formatCsv, readCsv, unescapeFormulas } from '../../src/data/csv.ts';
import { SpecError, VerificationError } from '../../src/errors.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type MethodName, parseSpec } from '../../src/release-spec/spec.ts';
import { decodeTable } from '../../src/verify/common.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { buildInMemory, releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-csv-formulas-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Text a spreadsheet would run (or that starts like a formula), and an apostrophe-led value. */
const NOTES = ['=1+1', '@SUM(A1)', '+x', '-y', '\tz', '\rw', "'q", 'plain', '=a;b', '-5'];
const DIAGNOSES = ['flu', 'asthma', 'cancer', 'diabetes', '=HYPERLINK("x")', '-none'];
const ROWS = 240;

/** A CSV field as a person would write it (quoted when it holds `;`, a quote, CR or LF). */
const field = (s: string) => (/[;"\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
const lines = ['zip;temp;sex;balance;@note;diagnosis'];
for (let i = 0; i < ROWS; i++) {
  lines.push(
    [
      String(47901 + (i % 4)),
      String(-20 + ((i * 7) % 50)),
      i % 2 === 0 ? 'female' : 'male',
      String(((i * 13) % 21) - 10),
      NOTES[i % NOTES.length]!,
      DIAGNOSES[(i * 5) % DIAGNOSES.length]!,
    ]
      .map(field)
      .join(';'),
  );
}
writeFileSync(join(dir, 'table.csv'), `${lines.join('\n')}\n`);

const QI = {
  zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
  temp: { type: 'quasi-identifying', hierarchy: { intervals: [10, 20] }, scale: 'numeric' },
  sex: { type: 'quasi-identifying', hierarchy: { groups: [{ female: '*', male: '*' }] } },
};
const REST = {
  balance: { type: 'insensitive' },
  '@note': { type: 'insensitive' },
  diagnosis: { type: 'sensitive' },
};
const L3 = { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 3 };
const SPECS: Record<MethodName, Record<string, unknown>> = {
  generalization: {
    attributes: { ...QI, ...REST },
    privacy: [{ model: 'k-anonymity', k: 5 }],
    method: { name: 'generalization', maxSuppression: 0.1 },
  },
  mondrian: {
    attributes: { ...QI, ...REST },
    privacy: [{ model: 'k-anonymity', k: 5 }],
    method: { name: 'mondrian' },
  },
  anatomy: { attributes: { ...QI, ...REST }, privacy: [L3], method: { name: 'anatomy' } },
  slicing: {
    attributes: { ...QI, ...REST },
    privacy: [L3],
    method: {
      name: 'slicing',
      columnGroups: [['temp', '@note'], ['zip', 'sex', 'balance'], ['diagnosis']],
    },
  },
  randomization: {
    attributes: {
      zip: { type: 'quasi-identifying' },
      temp: { type: 'identifying' },
      sex: { type: 'quasi-identifying' },
      ...REST,
    },
    privacy: [{ model: 'attribute-disclosure', attribute: 'diagnosis', tau: 0.5 }],
    method: { name: 'randomization', scenario: 'rr-both', form: 'retention' },
  },
};
const METHODS = Object.keys(SPECS) as MethodName[];
/** The CSV files each method publishes. */
const csvFiles = (m: MethodName) => (m === 'anatomy' ? ['qit.csv', 'st.csv', 'data.csv'] : ['data.csv']);

function writeSpec(method: MethodName, escapeFormulas: boolean | undefined, name = `${method}.json`): string {
  const format = { delimiter: ';', ...(escapeFormulas === undefined ? {} : { escapeFormulas }) };
  const path = join(dir, name);
  writeFileSync(path, JSON.stringify({ input: 'table.csv', format, ...SPECS[method], seed: 3 }));
  return path;
}

/** Starts like a formula (or like an escape) without being escaped. */
const unescaped = (s: string) => /^[=+\-@\t\r']/.test(s);

describe('escapeFormula', () => {
  it("prefixes ' to cells starting with = + - @, tab, CR or ', and only to those", () => {
    expect(['=1+1', '+x', '-5', '@a', '\tz', '\rw', "'q"].map(escapeFormula)).toEqual([
      "'=1+1",
      "'+x",
      "'-5",
      "'@a",
      "'\tz",
      "'\rw",
      "''q",
    ]);
    expect(['', 'a=b', ' =x', '5', '*'].map(escapeFormula)).toEqual(['', 'a=b', ' =x', '5', '*']);
  });

  it('escapes before quoting, names and numbers included; off, writes the cells as they are', () => {
    const columns = [
      {
        name: '=n',
        kind: 'dictionary' as const,
        dictionary: ['=a;b', '\rx', 'ok'],
        codes: Int32Array.of(0, 1, 2),
      },
      { name: 'v', kind: 'number' as const, values: Float64Array.of(-5, 2, Number.NaN) },
    ];
    expect(formatCsv(columns, ';', { escapeFormulas: true })).toBe(`'=n;v\n"'=a;b";'-5\n"'\rx";2\nok;\n`);
    expect(formatCsv(columns, ';')).toBe(`=n;v\n"=a;b";-5\n"\rx";2\nok;\n`);
  });
});

describe('format.escapeFormulas in the spec', () => {
  it('is a boolean, false when left out; another value is an error naming the field', () => {
    const base = { input: 'table.csv', ...SPECS.generalization };
    expect(parseSpec(base, join(dir, 'x.json')).format.escapeFormulas).toBe(false);
    expect(
      parseSpec({ ...base, format: { escapeFormulas: true } }, join(dir, 'x.json')).format.escapeFormulas,
    ).toBe(true);
    const bad = () => parseSpec({ ...base, format: { escapeFormulas: 'yes' } }, join(dir, 'x.json'));
    expect(bad).toThrow(SpecError);
    expect(bad).toThrow(/format\.escapeFormulas/);
  });
});

describe.each(METHODS)('%s with format.escapeFormulas', (method) => {
  const out = join(dir, `out-${method}`);
  let report: Awaited<ReturnType<typeof releaseTo>>['report'];

  it('releases escaped CSV cells, exact Arrow values, and verifies', async () => {
    ({ report } = await releaseTo(writeSpec(method, true), out));
    expect(report.verification.verified).toBe(true);
    expect(report.spec.escapeFormulas).toBe(true);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain('CSV formula escaping');
    for (const file of csvFiles(method)) {
      const csv = readCsv(join(out, file), { delimiter: ';' });
      // Nothing starts like a formula unless escaped, and each escape is one '.
      for (const c of csv.columns) {
        for (const v of [c.name, ...c.dictionary]) {
          if (unescaped(v)) expect(v[0]).toBe("'");
        }
      }
      const arrow = decodeTable(readArrow(join(out, file.replace('.csv', '.arrow'))));
      expect(decodeTable(unescapeFormulas(csv))).toEqual(arrow);
      expect(decodeTable(readReleasedTable(join(out, file)))).toEqual(arrow);
    }
    // Escaped text and negative numbers at a cell's start (slicing's cells join a group's values).
    const text = readFileSync(join(out, 'data.csv'), 'utf8');
    expect(text).toMatch(/(^|;|")'[=@+]/m);
    expect(text).toMatch(/(^|;)'-\d/m);
  });

  it('fails verification when a cell that should be escaped is not', () => {
    const spec = loadSpec(writeSpec(method, true));
    const table = readInput(spec);
    const built = buildInMemory(spec, table, tsGroupingKernel);
    const staged = mkdtempSync(join(dir, 'staged-'));
    for (const f of built.files) writeFileSync(join(staged, f.name), f.content);
    const verify = () =>
      verifierFor(method).verify({ spec, table, claims: built.claims, staged: (n) => join(staged, n) });
    expect(verify().every((c) => c.passed)).toBe(true);
    // One escaped cell written as it is: the file no longer holds the release.
    const csv = readFileSync(join(staged, 'data.csv'), 'utf8');
    const at = csv.search(/'[=@+-]/);
    expect(at).toBeGreaterThan(0);
    writeFileSync(join(staged, 'data.csv'), csv.slice(0, at) + csv.slice(at + 1));
    expect(verify).toThrow(VerificationError);
    expect(verify).toThrow(/csv/i);
    // The same files under a spec with the option off fail too: the option comes from the spec.
    writeFileSync(join(staged, 'data.csv'), csv);
    const off = loadSpec(writeSpec(method, false, `${method}-off.json`));
    expect(() =>
      verifierFor(method).verify({ spec: off, table, claims: built.claims, staged: (n) => join(staged, n) }),
    ).toThrow(VerificationError);
  });
});

describe('format.escapeFormulas off (the default)', () => {
  it('writes the cells as they are, the same bytes with the field left out or false', async () => {
    await releaseTo(writeSpec('generalization', undefined, 'default.json'), join(dir, 'default'));
    const off = await releaseTo(writeSpec('generalization', false, 'off.json'), join(dir, 'off'));
    const a = readFileSync(join(dir, 'default', 'data.csv'));
    expect(readFileSync(join(dir, 'off', 'data.csv'))).toEqual(a);
    expect(a.toString('utf8')).toMatch(/;=1\+1(;|\n)/);
    expect(off.report.spec.escapeFormulas).toBe(false);
    expect(readFileSync(join(dir, 'off', 'report.html'), 'utf8')).toContain(
      'off — CSV cells are written as they are',
    );
  });

  it('a sharded release (its Assemble state) writes the same escaped bytes', async () => {
    const spec = writeSpec('generalization', true, 'sharded.json');
    await executeRelease({ spec, out: join(dir, 'sharded'), shards: 4 }, { engine: 'direct' });
    const csv = readFileSync(join(dir, 'sharded', 'data.csv'));
    expect(csv).toEqual(readFileSync(join(dir, 'out-generalization', 'data.csv')));
    expect(csv.includes("'=1+1")).toBe(true);
  });
});

describe('commands that read a release CSV', () => {
  it('ppdp evaluate measures an escaped data.csv as its data.arrow', () => {
    const out = join(dir, 'out-generalization');
    const spec = join(dir, 'generalization.json');
    const run = (table: string, json: string) => {
      const write = process.stdout.write;
      process.stdout.write = () => true;
      try {
        expect(evaluateCommand([table, '--spec', spec, '--out', json, '--kernel', 'ts'])).toBe(0);
      } finally {
        process.stdout.write = write;
      }
      const { source: _, ...rest } = JSON.parse(readFileSync(json, 'utf8'));
      return rest;
    };
    expect(run(join(out, 'data.csv'), join(dir, 'e-csv.json'))).toEqual(
      run(join(out, 'data.arrow'), join(dir, 'e-arrow.json')),
    );
    // Copied away from its report.json, the CSV is a plain CSV: read as it is.
    cpSync(join(out, 'data.csv'), join(dir, 'copied.csv'));
    expect(readReleasedTable(join(dir, 'copied.csv')).columns[0]!.name).toBe('zip');
    expect(readReleasedTable(join(dir, 'copied.csv')).columns.some((c) => c.name === "'@note")).toBe(true);
  });
});

describe('ppdp init', () => {
  const draft = (csv: string, name: string) => {
    writeFileSync(join(dir, `${name}.csv`), csv);
    const write = process.stdout.write;
    process.stdout.write = () => true;
    try {
      expect(initCommand([join(dir, `${name}.csv`), '--out', join(dir, `${name}.json`)])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    return JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8'));
  };

  it("drafts a column's missing texts where it holds numbers beside them, not for text", () => {
    const rows = Array.from(
      { length: 40 },
      (_, i) => `${i};${i % 9 === 0 ? 'NA' : i % 13 === 0 ? '-' : 20 + i};${['NA', 'EU', 'ASIA'][i % 3]}`,
    );
    const spec = draft(`id;age;region\n${rows.join('\n')}\n`, 'markers');
    expect(spec.attributes.age.missing).toEqual(['-', 'NA']);
    expect(spec.attributes.region.missing).toBeUndefined();
    expect(spec.format.emptyCells).toBe('value');
    expect(spec.attributes.age.hierarchy.intervals).toBeDefined();
    // NA is a region here: a value of its own.
    expect(Object.keys(spec.attributes.region.hierarchy.groups[0]).sort()).toEqual(['ASIA', 'EU', 'NA']);
  });

  it('drafts the words people type for a missing number (unknown, ?) as missing texts', () => {
    const rows = Array.from(
      { length: 40 },
      (_, i) =>
        `${i};${i % 9 === 0 ? 'unknown' : i % 13 === 0 ? '?' : 20 + i};${i % 11 === 0 ? 'Missing' : i}`,
    );
    const spec = draft(`id;age;visits\n${rows.join('\n')}\n`, 'words');
    expect(spec.attributes.age.missing).toEqual(['?', 'unknown']);
    expect(spec.attributes.age.hierarchy.intervals).toBeDefined();
    expect(spec.attributes.visits.missing).toEqual(['Missing']);
  });

  it('drafts e-mail addresses and phone numbers as identifying whatever their header, not dates, codes or numbers', () => {
    const phones = ['+49 170 1234567', '0170-7654321', '(555) 123-4567', '555.123.4567', '030 1234567'];
    const rows = Array.from({ length: 30 }, (_, i) =>
      [
        i,
        20 + (i % 7),
        `p${i}@example.org`,
        phones[i % phones.length],
        `0${1 + (i % 9)}.03.2024`,
        `0${1000 + i}-1234`,
        (0.1234567 + i / 1000).toFixed(7),
        `0${1234567 + i}`,
      ].join(';'),
    );
    const spec = draft(`id;age;contact;Telefon;month;zip4;ratio;code\n${rows.join('\n')}\n`, 'contacts');
    expect(spec.attributes.contact.type).toBe('identifying');
    expect(spec.attributes.Telefon.type).toBe('identifying');
    for (const name of ['month', 'zip4', 'ratio', 'code'])
      expect(spec.attributes[name].type, name).not.toBe('identifying');
    // No address or number reaches the draft.
    expect(JSON.stringify(spec)).not.toContain('example.org');
    expect(JSON.stringify(spec)).not.toContain('1234567');
  });

  it('drafts escapeFormulas when a released column holds formula-like text, not for negative numbers', () => {
    const rows = Array.from(
      { length: 30 },
      (_, i) => `${i};${20 + i};${i % 3 === 0 ? '=cmd()' : 'ok'};${i - 15}`,
    );
    expect(draft(`id;age;comment;delta\n${rows.join('\n')}\n`, 'formulas').format.escapeFormulas).toBe(true);
    const numbers = rows.map((r) => r.replace('=cmd()', 'x'));
    expect(
      draft(`id;age;comment;delta\n${numbers.join('\n')}\n`, 'numbers').format?.escapeFormulas,
    ).toBeUndefined();
    // Negative numbers written with decimal commas, their thousands grouped or not: numbers too.
    const commas = numbers.map((r, i) => `${r};${i % 2 === 0 ? '-1,5' : `-${i}.250,75`}`);
    const spec = draft(`id;age;comment;delta;amount\n${commas.join('\n')}\n`, 'commas');
    expect(spec.format.decimal).toBe(',');
    expect(spec.format.escapeFormulas).toBeUndefined();
  });
});
