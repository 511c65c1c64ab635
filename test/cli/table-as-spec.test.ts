/**
 * A table given where a spec belongs (arguments swapped) is named as a table, for every command
 * that reads a spec, and no JSON error quotes the file: not its first row (a person's record),
 * not an Arrow file's bytes, not a spec's data values.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { encodeArrow } from '../../src/data/arrow.ts';
import { tinyWorkspace } from '../helpers/tiny.ts';

async function run(argv: string[]): Promise<{ code: number; said: string }> {
  const said: string[] = [];
  const keep = ((chunk: string | Uint8Array) => {
    said.push(String(chunk));
    return true;
  }) as typeof process.stdout.write;
  const [stdout, stderr] = [process.stdout.write, process.stderr.write];
  process.stdout.write = keep;
  process.stderr.write = keep;
  try {
    return { code: await main(argv), said: said.join('') };
  } finally {
    process.stdout.write = stdout;
    process.stderr.write = stderr;
  }
}

const ws = tinyWorkspace();
const at = (name: string) => join(ws.dir, name);
writeFileSync(at('record.csv'), 'SECRET Ada Moss;47906;29;female;flu\nBen Hale;47906;31;male;asthma\n');
writeFileSync(
  at('record.arrow'),
  encodeArrow([{ name: 'name', kind: 'dictionary', dictionary: ['SECRET'], codes: Int32Array.of(0) }]),
);
const released = join(tinyWorkspace().dir, 'release');
beforeAll(async () => {
  expect((await run(['release', ws.spec, '--out', released, '--quiet'])).code).toBe(0);
});
const RECORD = /SECRET|Moss|47906|flu|ARROW/;
/** A control character other than a line break: raw bytes of a binary file. */
const controlBytes = (text: string) => [...text].some((c) => c < ' ' && c !== '\n');

const commands: [string, (spec: string) => string[]][] = [
  ['release', (spec) => ['release', spec, '--out', at('out')]],
  ['evaluate --spec', (spec) => ['evaluate', ws.csv, '--spec', spec]],
  ['apply', (spec) => ['apply', released, spec, '--out', at('applied')]],
  ['apply --node', (spec) => ['apply', '--node', 'sex=1', spec, '--out', at('applied')]],
  ['explore', (spec) => ['explore', spec, '--vary', 'k=2..3', '--out', at('explored')]],
  ['hierarchy check --spec', (spec) => ['hierarchy', 'check', '--spec', spec]],
  ['hierarchy', (spec) => ['hierarchy', spec, '--column', 'sex', '--out', at('h.csv')]],
];

describe.each(commands)('%s given a table for its spec', (_, argv) => {
  it.each([
    ['a CSV file', 'record.csv'],
    ['an Arrow file', 'record.arrow'],
  ])('%s: says it looks like a table, quoting none of it', async (kind, file) => {
    const r = await run(argv(at(file)));
    expect(r.code).not.toBe(0);
    expect(r.said).toContain(
      `${file}: this looks like a table (${kind}), not a release spec — were the arguments swapped?`,
    );
    expect(r.said).not.toMatch(RECORD);
    expect(controlBytes(r.said)).toBe(false);
  });
});

describe("a spec's JSON error", () => {
  it('gives the file, line, column and what was expected, without quoting the spec', async () => {
    writeFileSync(
      at('broken.json'),
      '{\n  "attributes": { "zip": { "hierarchy": { "groups": [["47906" "47907"]] } } }\n}\n',
    );
    const r = await run(['release', at('broken.json'), '--out', at('out')]);
    expect(r.code).not.toBe(0);
    expect(r.said).toContain(
      "broken.json line 2, column 63: not valid JSON (expected ',' or a closing bracket)",
    );
    expect(r.said).not.toMatch(/4790/);
  });
});

describe('a spec given where evaluate reads the table', () => {
  it('says it looks like a release spec, not a CSV quoting error', async () => {
    const r = await run(['evaluate', ws.spec, '--qi', 'sex']);
    expect(r.code).toBe(1);
    expect(r.said).toContain(
      'spec.json: this looks like a release spec (JSON), not a table — were the arguments swapped?',
    );
    expect(r.said).toContain('ppdp evaluate data.csv --spec release.json');
    expect(r.said).not.toMatch(/quote|row \d/);
  });
});
