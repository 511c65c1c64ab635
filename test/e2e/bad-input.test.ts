import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PpdpError } from '../../src/errors.ts';
import { runRelease } from '../../src/pipeline/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

interface Case {
  name: string;
  break: (ws: Workspace) => void;
  code: string;
  message: RegExp;
  /** Where --out points, relative to the workspace (default: out/release, absent). */
  out?: string;
}

const CASES: Case[] = [
  {
    name: 'missing input file',
    break: (ws) => ws.editSpec((s) => (s.input = 'nowhere.csv')),
    code: 'E_INPUT_MISSING',
    message: /nowhere\.csv/,
  },
  {
    name: 'ragged CSV row',
    break: (ws) => ws.write('adult.csv', `${ws.read('adult.csv').trimEnd()}\nMale;39;White\n`),
    code: 'E_CSV_RAGGED',
    message: /adult\.csv row 302/,
  },
  {
    name: 'value missing from a hierarchy',
    break: (ws) =>
      ws.write(
        'adult_hierarchy_race.csv',
        ws.read('adult_hierarchy_race.csv').replace(/^Black;\*\r?\n/m, ''),
      ),
    code: 'E_HIERARCHY_VALUE',
    message: /adult_hierarchy_race\.csv: column 'race' has a value missing from its hierarchy \('Black'\)/,
  },
  {
    name: 'hierarchy rows of unequal length',
    break: (ws) => ws.write('adult_hierarchy_sex.csv', 'Male;*\nFemale;Person;*\n'),
    code: 'E_HIERARCHY_RAGGED',
    message: /adult_hierarchy_sex\.csv row 2/,
  },
  {
    name: 'k < 1',
    break: (ws) => ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymity', k: 0 }])),
    code: 'E_SPEC_RANGE',
    message: /privacy\[0\]\.k/,
  },
  {
    name: 'k > rows',
    break: (ws) => ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymity', k: 301 }])),
    code: 'E_SPEC_RANGE',
    message: /privacy\[0\]\.k is 301, but the table has only 300 rows/,
  },
  {
    name: 'maxSuppression above 1',
    break: (ws) => ws.editSpec((s) => ((s.method as Record<string, unknown>).maxSuppression = 1.5)),
    code: 'E_SPEC_RANGE',
    message: /method\.maxSuppression must be a number in \[0, 1\]/,
  },
  {
    name: 'maxSuppression below 0',
    break: (ws) => ws.editSpec((s) => ((s.method as Record<string, unknown>).maxSuppression = -0.1)),
    code: 'E_SPEC_RANGE',
    message: /method\.maxSuppression/,
  },
  {
    name: 'unknown column',
    break: (ws) =>
      ws.editSpec((s) => {
        (s.attributes as Record<string, unknown>).zipcode = {
          type: 'quasi-identifying',
          hierarchy: { mask: 'right' },
        };
      }),
    code: 'E_SPEC_COLUMN',
    message: /attributes\.zipcode is not a column of adult\.csv/,
  },
  {
    name: 'unknown model name',
    break: (ws) => ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymty', k: 5 }])),
    code: 'E_SPEC_VALUE',
    message: /privacy\[0\]\.model is 'k-anonymty'.*did you mean 'k-anonymity'/,
  },
  {
    name: 'unknown field',
    break: (ws) => ws.editSpec((s) => ((s.method as Record<string, unknown>).maxSupression = 0.1)),
    code: 'E_SPEC_UNKNOWN',
    message: /unknown field 'method\.maxSupression' \(did you mean 'maxSuppression'\?\)/,
  },
  {
    name: 'empty table',
    break: (ws) => ws.write('adult.csv', `${ws.read('adult.csv').split('\n')[0]}\n`),
    code: 'E_INPUT_NO_ROWS',
    message: /adult\.csv/,
  },
  {
    name: '--out that is an existing file',
    break: (ws) => ws.write('taken', 'not a folder'),
    out: 'taken',
    code: 'E_OUT_NOT_DIR',
    message: /exists and is a file/,
  },
];

describe('bad input: a clear error, and nothing in --out', () => {
  it.each(CASES.map((c) => [c.name, c] as const))('%s', (_, c) => {
    const ws = adultWorkspace(300);
    c.break(ws);
    const out = join(ws.dir, c.out ?? 'out/release');
    const before = ws.list(c.out ?? 'out/release');
    let error: unknown;
    try {
      runRelease(ws.spec, out);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PpdpError);
    expect((error as PpdpError).code).toBe(c.code);
    expect((error as PpdpError).message).toMatch(c.message);
    expect((error as PpdpError).hint, 'every error says how to fix it').toBeTruthy();
    expect(ws.list(c.out ?? 'out/release')).toEqual(before);
  });

  it('the CLI exits non-zero with the error on stderr and leaves an existing --out as it was', () => {
    const ws = adultWorkspace(300);
    ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymity', k: 0 }]));
    mkdirSync(join(ws.dir, 'kept'));
    writeFileSync(join(ws.dir, 'kept', 'notes.txt'), 'mine');
    const r = spawnSync(process.execPath, [CLI, 'release', ws.spec, '--out', join(ws.dir, 'kept')], {
      encoding: 'utf8',
    });
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/ppdp: error: release\.json: privacy\[0\]\.k must be an integer/);
    expect(r.stderr).toMatch(/hint:/);
    expect(ws.list('kept')).toEqual(['notes.txt']);
  });

  it('the CLI prints help and rejects a missing --out', () => {
    const help = spawnSync(process.execPath, [CLI, '--help'], { encoding: 'utf8' });
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/ppdp release <release\.json> --out <dir>/);
    const sub = spawnSync(process.execPath, [CLI, 'release', '--help'], { encoding: 'utf8' });
    expect(sub.status).toBe(0);
    expect(sub.stdout).toMatch(/--kernel/);
    const noOut = spawnSync(process.execPath, [CLI, 'release', 'x.json'], { encoding: 'utf8' });
    expect(noOut.status).toBe(1);
    expect(noOut.stderr).toMatch(/needs --out/);
  });
});
