/**
 * What `ppdp init` drafts and says for small and odd tables: a k the table can meet (a table of
 * 1 or 2 rows was drafted k = 5, which its release refused), counts in the singular for one,
 * and format.emptyCells drafted from the columns it applies to.
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
