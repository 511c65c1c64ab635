/** What `ppdp release` and `ppdp evaluate` print: counts with thousands separators (1,234), one wording. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { main } from '../../src/cli/main.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-evaluate-summary-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// 1,300 rows unique on (age, sex) and 1,100 suppressed ones: counts above a thousand.
const table = join(dir, 'survey.csv');
const lines = ['age;sex;w'];
for (let i = 0; i < 1300; i++) lines.push(`${i % 650};${i < 650 ? 'M' : 'F'};3`);
for (let i = 0; i < 1100; i++) lines.push('*;*;3');
writeFileSync(table, `${lines.join('\n')}\n`);

function summary(...args: string[]): string {
  let text = '';
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    text += String(chunk);
    return true;
  });
  try {
    expect(evaluateCommand([table, '--qi', 'age,sex', '--kernel', 'ts', ...args])).toBe(0);
  } finally {
    write.mockRestore();
  }
  return text;
}

describe('ppdp evaluate’s summary', () => {
  it('writes counts with thousands separators and shares as the report does', () => {
    const text = summary('--population', '50000', '--special-uniques');
    expect(text).toMatch(/^survey\.csv: 2,400 rows \(1,100 suppressed\), 1,300 classes over age, sex$/m);
    expect(text).toMatch(/^ {2}prosecutor risk {7}max 1, mean 1; 1,300 records \(100%\) above 0\.2$/m);
    expect(text).toMatch(/^ {2}sample uniques {8}100% of records$/m);
    expect(text).toMatch(/zayatz 50,000/);
    expect(text).toMatch(/^ {2}special uniques {7}1,300 records \(100%\)/m);
    expect(text).not.toMatch(/\d{4}/);
  });
});

describe('ppdp evaluate’s journalist risk and population uniques', () => {
  const journalist = (text: string) => text.split('\n').find((l) => l.startsWith('  journalist risk'))!;

  it('gives the prosecutor risk as the journalist risk’s upper bound, with or without a population size', () => {
    const without = journalist(summary());
    expect(without).toBe(
      '  journalist risk       max 1 (the prosecutor risk, an upper bound of the journalist risk: there is no population table)',
    );
    // A population size is no population table: the table is not taken as "its own population".
    for (const args of [
      ['--population', '50000'],
      ['--sampling-fraction', '0.05'],
    ]) {
      const line = journalist(summary(...args));
      expect(line).toMatch(
        /^ {2}journalist risk {7}max 1 \(the prosecutor risk, an upper bound of the journalist risk: /,
      );
      expect(line).toMatch(
        /the population’s size, used for the population uniques, gives no class sizes in the population\)$/,
      );
      expect(line).not.toMatch(/own population/);
    }
  });

  it('names the population’s size and Dankar’s choice in words', () => {
    expect(summary('--population', '50000')).toMatch(
      /^ {2}population uniques {4}.* \(in a population of 50,000; Dankar's rule chose zayatz\)$/m,
    );
    // No sample uniques: every estimate is 0 and the rule has nothing to choose.
    const classes = join(dir, 'classes.csv');
    writeFileSync(classes, `age;sex;w\n${'30;M;1\n40;F;1\n'.repeat(3)}`);
    let text = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      text += String(chunk);
      return true;
    });
    try {
      expect(evaluateCommand([classes, '--qi', 'age,sex', '--kernel', 'ts', '--population', '600'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    expect(text).toMatch(/\(in a population of 600; no sample uniques, so none is estimated unique\)$/m);
  });
});

describe('ppdp release’s output', () => {
  it('writes the rows read, suppressed and made unique with thousands separators', async () => {
    // 1,200 visits; a free-text note released unchanged makes every row unique.
    const visits = join(dir, 'visits.csv');
    const rows = ['id,admitted,postcode,note'];
    for (let i = 0; i < 1200; i++) {
      rows.push(`V${10000 + i},2023-0${1 + (i % 9)}-1${i % 10},${10000 + (i % 4) * 25},"seen, ref ${i}"`);
    }
    writeFileSync(visits, `${rows.join('\n')}\n`);
    const spec = join(dir, 'release.json');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'visits.csv',
        attributes: {
          id: { type: 'identifying' },
          admitted: {
            type: 'quasi-identifying',
            hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year'] },
          },
          postcode: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
          note: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization', maxSuppression: 0 },
        seed: 1,
      }),
    );
    let out = '';
    let err = '';
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
      out += String(chunk);
      return true;
    });
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => {
      err += String(chunk);
      return true;
    });
    try {
      expect(await main(['release', spec, '--out', join(dir, 'out')])).toBe(0);
    } finally {
      stdout.mockRestore();
      stderr.mockRestore();
    }
    expect(err).toMatch(/ read 1,200 rows of visits\.csv$/m);
    expect(err).toMatch(/ read 1,200 rows \(1 shard of 1 file\)$/m);
    expect(out).toMatch(/note is released unchanged and makes 1,200 of 1,200 rows \(100%\) unique/);
    // No count without its separators (the folder's own name aside).
    expect(`${out}${err}`.replaceAll(dir, '')).not.toMatch(/\b\d{4,}\b/);
  });
});
