/**
 * The shared argument parsing (src/cli/args.ts): a value option given twice is refused, not
 * decided by the last one; a column named twice in a list is refused; a negative number after
 * a value option is its value, refused with the option's range (not "argument is ambiguous");
 * --endpoint with only local locations is refused; `ppdp help <command>` is that command's help.
 */
import { describe, expect, it } from 'vitest';
import { tinyWorkspace } from '../helpers/tiny.ts';
import { runCli } from '../trust/helpers.ts';

const ws = tinyWorkspace();
const out = (name: string) => `${ws.dir}/${name}`;

async function said(argv: string[]): Promise<{ status: number; text: string }> {
  const r = await runCli(argv);
  return { status: r.status, text: r.stdout + r.stderr };
}

describe('a value option given twice', () => {
  it.each([
    ['release', ['release', ws.spec, '--out', out('a'), '--out', out('b')], 'out'],
    ['hierarchy', ['hierarchy', ws.spec, '--column', 'sex', '--column', 'zip'], 'column'],
    ['evaluate', ['evaluate', ws.csv, '--qi', 'sex', '--threshold', '0.1', '--threshold=0.2'], 'threshold'],
  ])('%s: refused, naming the option', async (_, argv, option) => {
    const r = await said(argv as string[]);
    expect(r.status).toBe(1);
    expect(r.text).toContain(`--${option} is given more than once`);
    expect(r.text).toContain(`hint: give --${option} once`);
  });

  it('an option that may repeat (--vary, --hierarchy) and a repeated switch are not refused', async () => {
    const r = await said(['evaluate', ws.csv, '--qi', 'sex', '--force', '--force']);
    expect(r.status).toBe(0);
  });
});

describe('a column named twice in a list', () => {
  it('evaluate --qi sex,sex is refused, not measured as "sex, sex"', async () => {
    const r = await said(['evaluate', ws.csv, '--qi', 'sex, sex']);
    expect(r.status).toBe(1);
    expect(r.text).toContain("--qi: the column 'sex' is named more than once");
    expect(r.text).not.toContain('sex, sex');
  });
});

describe('a negative number as an option value', () => {
  it.each([
    [
      'release --workers -1',
      ['release', ws.spec, '--out', out('w'), '--workers', '-1'],
      "--workers must be a whole number from 0 to 64 (got '-1')",
    ],
    [
      'explore --time-limit -5',
      ['explore', ws.spec, '--vary', 'k=2..3', '--time-limit', '-5'],
      '--time-limit must be a number of seconds > 0',
    ],
  ])('%s: the option\'s range, not "ambiguous"', async (_, argv: string[], range: string) => {
    const r = await said(argv);
    expect(r.status).toBe(1);
    expect(r.text).toContain(range);
    expect(r.text).not.toContain('ambiguous');
  });
});

describe('--endpoint', () => {
  it('with a local spec and --out is refused: it only applies to s3:// locations', async () => {
    const r = await said(['release', ws.spec, '--out', out('e'), '--endpoint', 'http://127.0.0.1:1']);
    expect(r.status).toBe(1);
    expect(r.text).toContain('--endpoint only applies to s3:// locations');
  });
});

describe('ppdp help <command>', () => {
  it("prints the command's help, as <command> --help does", async () => {
    const help = await said(['help', 'release']);
    expect(help.status).toBe(0);
    expect(help.text).toBe((await said(['release', '--help'])).text);
    expect(help.text).toMatch(/^Usage: ppdp release /);
  });
});
