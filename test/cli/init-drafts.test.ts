/**
 * What `ppdp init` drafts and says for small and odd tables: a k the table can meet (a table of
 * 1 or 2 rows was drafted k = 5, which its release refused), counts in the singular for one,
 * format.emptyCells drafted from the columns it applies to, and interval widths as exact
 * decimals (float widths such as 0.00019999999999999998 failed the draft's own spec check).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initCommand } from '../../src/cli/init.ts';
import { runCommand } from '../helpers/command.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-init-drafts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The parts of a draft these tests read. */
interface Draft {
  readonly privacy: unknown[];
  readonly format: { readonly emptyCells?: string };
  readonly attributes: Record<string, { readonly type: string }>;
}

/** init on a CSV written from `text`: its stdout and its draft. */
function init(name: string, text: string): { out: string; spec: string; draft: Draft } {
  const csv = join(dir, `${name}.csv`);
  writeFileSync(csv, text);
  const spec = join(dir, `${name}.json`);
  const run = runCommand(() => initCommand([csv, '--out', spec]));
  expect(run.error).toBeUndefined();
  return { out: run.stdout, spec, draft: JSON.parse(readFileSync(spec, 'utf8')) };
}

describe('ppdp init on a table of fewer rows than its k', () => {
  it('drafts k = the row count for 2 rows, says so, and the draft releases', async () => {
    const { out, spec, draft } = init('two', 'age;sex\n30;m\n40;f\n');
    expect(draft.privacy).toEqual([{ model: 'k-anonymity', k: 2 }]);
    expect(out).toContain('k: 2 — the table has 2 rows, fewer than the k = 5');
    const { report } = await releaseTo(spec, join(dir, 'two-out'));
    expect(report.rows.input).toBe(2);
  });

  it('drafts k = 1 for one row and says that no useful k can be met', async () => {
    const { out, spec, draft } = init('one', 'age;sex\n30;m\n');
    expect(draft.privacy).toEqual([{ model: 'k-anonymity', k: 1 }]);
    expect(out).toContain('k: 1 — the table has 1 row: no k of 2 or more can be met');
    await releaseTo(spec, join(dir, 'one-out'));
  });

  it('keeps k = 5 for a table of 5 rows, without a note', () => {
    const { out, draft } = init('five', 'age;sex\n30;m\n40;f\n50;m\n60;f\n70;m\n');
    expect(draft.privacy).toEqual([{ model: 'k-anonymity', k: 5 }]);
    expect(out).not.toMatch(/^ {2}k: /m);
  });
});

describe('ppdp init counts in the singular for one', () => {
  it('says "1 row" and "1 distinct value"', () => {
    const { out } = init('single', 'city;diagnosis\nParis;flu\n');
    expect(out).toContain('(1 row); review the roles');
    expect(out).toContain('a place (1 distinct value)');
    expect(out).toContain('(1 quasi-identifier)');
    expect(out).not.toMatch(/\b1 (rows|distinct values|quasi-identifiers)\b/);
  });
});

describe('ppdp init drafts format.emptyCells from the columns it applies to', () => {
  it('not for empty cells of an insensitive column (a CSV releases them as they are)', () => {
    const { out, draft } = init('emptycol', 'a;b;c\n1;;x\n2;;y\n');
    expect(draft.attributes.b.type).toBe('insensitive');
    expect(draft.format.emptyCells).toBeUndefined();
    expect(out).not.toContain('emptyCells');
  });

  it('not for empty cells of a sensitive column', () => {
    const { draft } = init('emptysa', 'sex;diagnosis\nm;flu\nf;\nm;cold\nf;flu\nm;\n');
    expect(draft.attributes.diagnosis.type).toBe('sensitive');
    expect(draft.format.emptyCells).toBeUndefined();
  });

  it('for empty cells of a quasi-identifier, naming it alone (not the sensitive column)', () => {
    const { out, draft } = init('emptyqi', 'sex;diagnosis\nm;flu\n;cold\nm;\nf;cold\nf;flu\n');
    expect(draft.format.emptyCells).toBe('value');
    expect(out).toContain('format.emptyCells: "value" — sex has empty cells');
  });
});

describe('ppdp init drafts interval widths as exact decimals', () => {
  /** A CSV of 40 rows: an age and a column `x` cycling through `values`. */
  const table = (values: readonly string[]) =>
    `age;x\n${Array.from({ length: 40 }, (_, i) => `${20 + (i % 10)};${values[i % values.length]}`).join('\n')}\n`;
  const widths = (draft: Draft) =>
    (draft.attributes.x as unknown as { hierarchy: { intervals: number[] } }).hierarchy.intervals;

  it('of small decimals (0.001 to 0.004), and the draft releases', async () => {
    const { spec, draft } = init('small', table(['0.001', '0.002', '0.003', '0.004']));
    expect(widths(draft)).toEqual([0.0002, 0.0004, 0.0008]);
    const { report } = await releaseTo(spec, join(dir, 'small-out'));
    expect(report.rows.input).toBe(40);
  });

  it('written as the decimals they are (0.00001, not 9.999999999999999e-6)', () => {
    const values = Array.from({ length: 10 }, (_, i) => `0.000${String(2 * (i + 1)).padStart(2, '0')}`);
    const { draft } = init('tiny', table(values));
    expect(widths(draft)).toEqual([0.00001, 0.00002, 0.00004]);
  });

  it('of numbers near 10^25 (a large decimal column), and the draft releases', async () => {
    const { spec, draft } = init('huge', table(['1', '2', '4', '7'].map((d) => `${d}${'0'.repeat(25)}`)));
    expect(widths(draft)).toEqual([5e24, 1e25, 2e25]);
    await releaseTo(spec, join(dir, 'huge-out'));
  });
});
