import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PpdpError } from '../../src/errors.ts';
import { checkSpecFiles, loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;

interface Case {
  name: string;
  break: (ws: Workspace) => void;
  code: string;
  message: RegExp;
  /** What the hint must say (every hint is checked to be there). */
  hint?: RegExp;
  /** Where --out points, relative to the workspace (default: out/release, absent). */
  out?: string;
}

const CASES: Case[] = [
  {
    name: 'missing input file',
    break: (ws) => ws.editSpec((s) => (s.input = 'nowhere.csv')),
    code: 'E_INPUT_MISSING',
    message:
      /^release\.json: input 'nowhere\.csv' not found: paths in a spec are relative to the spec's folder, \/.+, so it was looked for at \/.+\/nowhere\.csv$/,
    hint: /put the file at \/.+\/nowhere\.csv, or change input in release\.json/,
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
    // Counted and located, never quoted: a value missing from a hierarchy is often a rare one.
    message:
      /^adult_hierarchy_race\.csv: a value of column 'race' appears in the data but not in the hierarchy: \d+ rows, first in adult\.csv row \d+$/,
    hint: /add a row for that value to adult_hierarchy_race\.csv/,
  },
  {
    name: 'several values missing from a hierarchy',
    break: (ws) => ws.write('adult_hierarchy_race.csv', 'White;*\n'),
    code: 'E_HIERARCHY_VALUE',
    message:
      /^adult_hierarchy_race\.csv: 4 values of column 'race' appear in the data but not in the hierarchy: \d+ rows, first in adult\.csv rows \d+, \d+, \d+, \d+$/,
    hint: /add a row for each of these values/,
  },
  {
    name: 'a hierarchy file that is not there',
    break: (ws) =>
      ws.editSpec(
        (s) => ((s.attributes as Record<string, { hierarchy: string }>).sex!.hierarchy = 'h/sex.csv'),
      ),
    code: 'E_HIERARCHY_MISSING',
    message:
      /^release\.json: attributes\.sex\.hierarchy 'h\/sex\.csv' not found: .*spec's folder, (\/.+), so it was looked for at \1\/h\/sex\.csv$/,
  },
  {
    name: 'k given as the string "5"',
    break: (ws) => ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymity', k: '5' }])),
    code: 'E_SPEC_TYPE',
    message: /^release\.json: privacy\[0\]\.k must be a whole number ≥ 1, but found the string "5"$/,
    hint: /^write 5 without quotes: "k": 5$/,
  },
  {
    name: 'k = 5.5',
    break: (ws) => ws.editSpec((s) => (s.privacy = [{ model: 'k-anonymity', k: 5.5 }])),
    code: 'E_SPEC_RANGE',
    message: /^release\.json: privacy\[0\]\.k must be a whole number ≥ 1, but found 5\.5$/,
    hint: /"k": 5 or "k": 6/,
  },
  {
    name: 'a spec that is not JSON',
    break: (ws) => ws.write('release.json', ws.read('release.json').replace('"seed": 1', '"seed": 1,')),
    code: 'E_SPEC_JSON',
    message: /^release\.json line \d+, column 12: not valid JSON \(a comma where '}' closes the list\)$/,
    hint: /remove this comma/,
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
    message: /^release\.json: privacy\[0\]\.k must be a whole number ≥ 1, but found 0$/,
    hint: /^use a whole number ≥ 1, e\.g\. "k": 5$/,
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
    message: /method\.maxSuppression must be a number from 0 to 1, but found 1\.5$/,
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
    name: 'blanks around every name of the header',
    break: (ws) =>
      ws.write(
        'adult.csv',
        ws.read('adult.csv').replace(/^[^\n]*/, (h) =>
          h
            .split(';')
            .map((n) => ` ${n} `)
            .join(';'),
        ),
      ),
    code: 'E_INPUT_HEADER',
    message: /none of the \d+ column names is an attribute/,
    hint: /the header's names have blanks around them/,
  },
  {
    name: 'blanks around one name of the header',
    break: (ws) => ws.write('adult.csv', ws.read('adult.csv').replace(/^([^\n]*?)\bage\b/, '$1age ')),
    code: 'E_SPEC_COLUMN',
    message: /attributes\.age is not a column of adult\.csv/,
    hint: /the header names it with blanks around it/,
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
  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_, c) => {
    const ws = adultWorkspace(300);
    c.break(ws);
    const out = join(ws.dir, c.out ?? 'out/release');
    const before = ws.list(c.out ?? 'out/release');
    let error: unknown;
    try {
      await releaseTo(ws.spec, out);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PpdpError);
    expect((error as PpdpError).code).toBe(c.code);
    expect((error as PpdpError).message).toMatch(c.message);
    expect((error as PpdpError).hint, 'every error says how to fix it').toBeTruthy();
    if (c.hint) expect((error as PpdpError).hint).toMatch(c.hint);
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
    expect(r.stderr).toMatch(
      /ppdp: error: release\.json: privacy\[0\]\.k must be a whole number ≥ 1, but found 0/,
    );
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

  it('a spec read from a bucket names missing files by their s3:// place, not the local copy', () => {
    const ws = adultWorkspace(300);
    ws.editSpec((s) => (s.input = 'data/nowhere.csv'));
    const e = (() => {
      try {
        checkSpecFiles(loadSpec(ws.spec), 's3://bucket/inbox/adult/');
      } catch (err) {
        return err as PpdpError;
      }
    })();
    expect(e?.code).toBe('E_INPUT_MISSING');
    expect(e?.message).toBe(
      "release.json: input 'data/nowhere.csv' not found: paths in a spec are relative to the spec's folder, " +
        's3://bucket/inbox/adult, so it was looked for at s3://bucket/inbox/adult/data/nowhere.csv',
    );
  });

  it('the CLI suggests the nearest command and flag for a typo', () => {
    const command = spawnSync(process.execPath, [CLI, 'relase', 'x.json'], { encoding: 'utf8' });
    expect(command.status).toBe(1);
    expect(command.stderr).toMatch(
      /^ppdp: error: unknown command 'relase' \(did you mean release\?\)\n {2}hint: /,
    );
    const flag = spawnSync(process.execPath, [CLI, 'release', 'x.json', '--out', 'o', '--kernal', 'ts'], {
      encoding: 'utf8',
    });
    expect(flag.status).toBe(2);
    expect(flag.stderr).toMatch(
      /unknown option '--kernal' \(did you mean --kernel\?\)\n {2}hint: write --kernel/,
    );
    const far = spawnSync(process.execPath, [CLI, 'release', 'x.json', '--colour'], { encoding: 'utf8' });
    expect(far.stderr).toMatch(/unknown option '--colour'\n {2}hint: run `ppdp release --help`/);
    const other = spawnSync(process.execPath, [CLI, 'reconstruct', 'dir', '--atributes', 'a'], {
      encoding: 'utf8',
    });
    expect(other.stderr).toMatch(/did you mean --attributes\?/);
  });
});
