/**
 * A CSV exported without its header row: its first row, a person's record, is read as the
 * header. No message quotes it (docs/release-spec.md, "Resource limits": a CSV header's names
 * are not echoed): init refuses a header holding numbers or dates, naming the columns by
 * position; a duplicate name is named by position; evaluate, hierarchy check and the release
 * count the columns instead of listing them.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { hierarchyCommand } from '../../src/cli/hierarchy.ts';
import { initCommand } from '../../src/cli/init.ts';
import type { PpdpError } from '../../src/errors.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { runCommand, said } from '../helpers/command.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-headerless-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const at = (name: string) => join(dir, name);
/** What the record holds: none of it may appear in a message. */
const RECORD = /SECRET|01234|1961/;

writeFileSync(
  at('noheader.csv'),
  'SECRET Alice;SECRET Smith;01234;1961-02-03;SECRET-HIV\nBob;Jones;01235;1970-01-01;flu\n',
);

describe('a CSV exported without its header row', () => {
  it('init refuses a header holding numbers or dates, naming the columns by position', () => {
    const r = runCommand(() => initCommand([at('noheader.csv'), '--out', at('noheader.json')]));
    expect(r.error?.code).toBe('E_INIT_HEADER');
    expect(r.error?.message).toBe(
      "noheader.csv: the header's columns 3 and 4 hold a number and a date, not names: the file seems to lack its header row (the row is not quoted here)",
    );
    expect(said(r)).not.toMatch(RECORD);
  });

  it('a name twice is named by its columns', () => {
    writeFileSync(at('dup.csv'), 'SECRET;SECRET;x\nJones;Jones;y\n');
    const r = runCommand(() => initCommand([at('dup.csv'), '--out', at('dup.json')]));
    expect(r.error?.message).toBe('dup.csv row 1: columns 1 and 2 have the same name');
    expect(said(r)).not.toMatch(RECORD);
  });

  it('evaluate and hierarchy check count the columns of a header row instead of listing them', () => {
    const evaluate = runCommand(() => evaluateCommand([at('noheader.csv'), '--qi', 'zip']));
    expect(evaluate.error?.hint).toMatch(/its 5 names are not quoted/);
    expect(said(evaluate)).not.toMatch(RECORD);
    writeFileSync(at('zip.csv'), '01235;*\n');
    const check = runCommand(() =>
      hierarchyCommand(['check', at('zip.csv'), '--data', at('noheader.csv'), '--column', 'zip']),
    );
    expect(check.error?.message).toBe("noheader.csv has no column 'zip'");
    expect(said(check).replace(at('zip.csv'), '')).not.toMatch(RECORD);
  });

  it("the release's missing-column error does not list the header", () => {
    // A spec drafted from another export, whose first record shared a cell with this one's.
    writeFileSync(
      at('other.csv'),
      'SECRET Carol;SECRET Smith;01299;1950-05-05;flu\nBob;Jones;01235;1970-01-01;flu\n',
    );
    writeFileSync(
      at('release.json'),
      JSON.stringify({
        input: 'other.csv',
        attributes: {
          'SECRET Smith': { type: 'insensitive' },
          zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      }),
    );
    let error: unknown;
    try {
      readInput(loadSpec(at('release.json')));
    } catch (e) {
      error = e;
    }
    expect((error as PpdpError).code).toBe('E_SPEC_COLUMN');
    expect((error as PpdpError).hint).toMatch(/not quoted here: a CSV's or a sheet's header row/);
    expect((error as PpdpError).describe()).not.toMatch(/Carol|01299|1950/);
  });
});
