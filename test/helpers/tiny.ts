/** An eight-row table and a generalization spec over it (k = 2), in a folder of their own, for CLI tests. */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll } from 'vitest';

const made: string[] = [];
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});

export const TINY_CSV = `id,zip,age,sex,diag
1,01234,30,F,flu
2,01234,30,F,flu
3,01234,30,F,cancer
4,01235,31,M,flu
5,01235,31,M,hiv
6,01236,40,F,flu
7,01237,41,M,flu
8,01237,41,M,flu
`;

/**
 * zip and age are released unchanged beside sex, the one quasi-identifier: the report's
 * verdict is amber (caution lines).
 */
export const TINY_SPEC = {
  input: 't.csv',
  attributes: {
    id: { type: 'identifying' },
    zip: { type: 'insensitive' },
    age: { type: 'insensitive' },
    sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
    diag: { type: 'sensitive' },
  },
  privacy: [{ model: 'k-anonymity', k: 2 }],
  method: { name: 'generalization' },
};

/** A new folder holding t.csv and spec.json (TINY_CSV, TINY_SPEC). */
export function tinyWorkspace(): { dir: string; csv: string; spec: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-tiny-'));
  made.push(dir);
  writeFileSync(join(dir, 't.csv'), TINY_CSV);
  writeFileSync(join(dir, 'spec.json'), JSON.stringify(TINY_SPEC));
  return { dir, csv: join(dir, 't.csv'), spec: join(dir, 'spec.json') };
}
