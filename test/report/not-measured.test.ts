/**
 * A measure left out is reported as not measured, with why, in report.json (a string where its
 * number would be, which the contract allows) and in report.html (its row says so): never 0,
 * which reads as exact. Mondrian, Anatomy and Slicing over 14 released attributes, past the
 * CUBE's 12.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readReport } from '../../src/contracts/report.ts';
import { Random } from '../../src/util/random.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-not-measured-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const QIS = Array.from({ length: 12 }, (_, i) => `q${i}`);
const rng = new Random(7);
writeFileSync(
  join(dir, 't.csv'),
  `${[...QIS, 'o', 's'].join(',')}\n${Array.from({ length: 160 }, () =>
    [...QIS.map(() => rng.below(3)), rng.below(4), 'abcd'[rng.below(4)]].join(','),
  ).join('\n')}\n`,
);

function spec(method: Record<string, unknown>, privacy: unknown[], qi: boolean): string {
  const path = join(dir, `${method.name}.json`);
  const star = { groups: [{ 0: '*', 1: '*', 2: '*' }] };
  writeFileSync(
    path,
    JSON.stringify({
      input: 't.csv',
      attributes: {
        ...Object.fromEntries(
          QIS.map((q) => [
            q,
            qi ? { type: 'quasi-identifying', hierarchy: star } : { type: 'quasi-identifying' },
          ]),
        ),
        o: { type: 'insensitive' },
        s: { type: 'sensitive' },
      },
      privacy,
      method,
      seed: 1,
    }),
  );
  return path;
}

const diversity = [{ model: 'distinct-l-diversity', attribute: 's', l: 2 }];

describe('the CUBE query error past 12 released attributes', () => {
  it.each([
    ['mondrian', spec({ name: 'mondrian' }, [{ model: 'k-anonymity', k: 3 }], true)],
    ['anatomy', spec({ name: 'anatomy' }, diversity, false)],
    ['slicing', spec({ name: 'slicing' }, diversity, false)],
  ])('%s: "not measured" and why, in report.json and report.html', async (method, path) => {
    const { report, out } = await releaseTo(path, join(dir, `out-${method}`));
    expect(report.verification.verified).toBe(true);
    const written = readReport(JSON.parse(readFileSync(join(out, 'report.json'), 'utf8')), 'report.json');
    expect(written.utility.queryErrorCube).toBe(
      'not measured: 14 released attributes, more than 12: the CUBE would have 2^14 − 1 = 16,383 group-bys',
    );
    expect(written.utility).not.toHaveProperty('cubeCells');
    expect(typeof written.utility.queryErrorBase).toBe('number');
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain(
      '<tr><td>Query error (every subset)</td><td class="num">not measured</td><td><span class="meaning">14 released attributes, more than 12: the CUBE would have 2^14 − 1 = 16,383 group-bys</span></td></tr>',
    );
    expect(html).not.toContain('Cells the query error averages over');
  });
});
