/**
 * Counts of one in the singular (counted): evaluate said "1 rows", "1 classes", "1 records", the
 * release's summary "1 rows suppressed (1 persons)", explore "over 1 runs".
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { suppressedSummary } from '../../src/cli/summary.ts';
import { counted } from '../../src/util/format.ts';
import { runCommand } from '../helpers/command.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-singular-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('counts of one', () => {
  it('counted takes a plural not made with s', () => {
    expect(counted(1, 'class', 'classes')).toBe('1 class');
    expect(counted(1_300, 'class', 'classes')).toBe('1,300 classes');
    expect(counted(2, 'row')).toBe('2 rows');
  });

  it('the release summary says 1 row suppressed (1 person)', () => {
    const report = { rows: { input: 3, released: 2, suppressed: 1 }, persons: { input: 2, suppressed: 1 } };
    expect(suppressedSummary(report as Parameters<typeof suppressedSummary>[0])).toBe(
      '1 row suppressed (1 person)',
    );
  });

  it('evaluate on a table of one row says 1 row, 1 class, 1 record', () => {
    const table = join(dir, 'one.csv');
    writeFileSync(table, 'age;sex;w\n30;M;3\n');
    const run = runCommand(() =>
      evaluateCommand([table, '--qi', 'age,sex', '--kernel', 'ts', '--special-uniques']),
    );
    expect(run.error).toBeUndefined();
    expect(run.stdout).toMatch(/^one\.csv: 1 row \(0 suppressed\), 1 class over age, sex$/m);
    expect(run.stdout).toMatch(/; 1 record \(100%\) above/m);
    expect(run.stdout).toMatch(/special uniques {7}1 record \(100%\)/m);
    expect(run.stdout).not.toMatch(/\b1 (rows|classes|records)\b/);
  });
});
