/**
 * A numeric quasi-identifier near ±1.8e308, where a range's width `hi − lo` overflows to
 * Infinity: its share of the span stays finite for the partitioning, the release's NCP and the
 * verifier's own NCP, and the release is verified.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-extremes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('Mondrian over a numeric quasi-identifier of ±1e308', () => {
  const lines = ['id,x,sex,dis'];
  for (let r = 0; r < 12; r++) {
    const x = ['-1e+308', '1e+308', '-1', '0', '1e+308', '-1e+308'][r % 6];
    lines.push(`i${r},${x},${r % 3 ? 'F' : 'M'},${'ab'[r % 2]}`);
  }
  writeFileSync(join(dir, 't.csv'), `${lines.join('\n')}\n`);
  const spec = (k: number, escapeFormulas: boolean) => {
    const path = join(dir, `k${k}-${escapeFormulas}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        input: 't.csv',
        format: { escapeFormulas },
        attributes: {
          id: { type: 'identifying' },
          x: { type: 'quasi-identifying', scale: 'numeric' },
          sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
          dis: { type: 'sensitive' },
        },
        privacy: [{ model: 'k-anonymity', k }],
        method: { name: 'mondrian' },
      }),
    );
    return path;
  };

  it.each([
    [2, false],
    [4, true],
    [12, false],
  ])(
    'k = %i (CSV formulas escaped: %s): released and verified, NCP finite and agreed by the verifier',
    async (k, escaped) => {
      const { report, out } = await releaseTo(spec(k, escaped), join(dir, `out-${k}`));
      expect(report.verification.verified).toBe(true);
      expect(report.verification.checks.find((c) => c.name === 'reported-ncp')?.passed).toBe(true);
      const ncp = report.utility.ncp as number;
      expect(Number.isFinite(ncp)).toBe(true);
      expect(ncp).toBeGreaterThanOrEqual(0);
      expect(ncp).toBeLessThanOrEqual(1);
      expect(Number.isFinite(report.audit?.ncp)).toBe(true);
      const csv = readFileSync(join(out, 'data.csv'), 'utf8');
      expect(csv.split('\n')[0]).toBe('x,x_lo,x_hi,sex,dis');
      if (k === 12) {
        // One class: x spans the whole range, NCP 1 for x, and sex is `*`.
        expect(report.privacy.classes).toBe(1);
        expect(
          (report.details!.mondrian as { ncpByAttribute: Record<string, number> }).ncpByAttribute.x,
        ).toBe(1);
      }
    },
  );
});
