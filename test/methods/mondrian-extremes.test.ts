/**
 * A numeric quasi-identifier near ±1.8e308, where a range's width `hi − lo` overflows to
 * Infinity: its share of the span stays finite for the partitioning, the release's NCP and the
 * verifier's own NCP, and the release is verified. Near 1e-7, where the ranges are written
 * with exponents (`[3.35e-7-5.06e-7]`): the audit and `ppdp evaluate` read them as ranges.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import type { Evaluation } from '../../src/evaluate/evaluate.ts';
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

describe('Mondrian over doses of about 1e-7 grams, its ranges written with exponents', () => {
  it('the audit and ppdp evaluate read every range, at the NCP the release reports', async () => {
    const lines = ['id,measured,postcode,dose,diagnosis'];
    for (let r = 0; r < 60; r++) {
      const dose = (((r * 7919) % 900) + 1) * 1e-9;
      lines.push(
        `S${500 + r},2023-0${1 + (r % 9)}-1${r % 10},${10000 + (r % 6) * 25},${dose.toPrecision(3)},${['flu', 'asthma', 'covid'][r % 3]}`,
      );
    }
    writeFileSync(join(dir, 'doses.csv'), `${lines.join('\n')}\n`);
    const spec = join(dir, 'doses.json');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'doses.csv',
        attributes: {
          id: { type: 'identifying' },
          measured: { type: 'insensitive' },
          postcode: { type: 'quasi-identifying', scale: 'numeric' },
          dose: { type: 'quasi-identifying', scale: 'numeric' },
          diagnosis: { type: 'sensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 4 }],
        method: { name: 'mondrian' },
      }),
    );
    const { report, out } = await releaseTo(spec, join(dir, 'out-doses'));
    expect(readFileSync(join(out, 'data.csv'), 'utf8')).toMatch(/\[\d(?:\.\d+)?e-7-\d(?:\.\d+)?e-7\]/);
    const ncp = report.utility.ncp as number;
    expect(ncp).toBeGreaterThan(0);
    expect(report.audit?.ncp).toBeCloseTo(ncp, 12);
    const json = join(dir, 'doses-evaluate.json');
    const write = vi.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(evaluateCommand([out, '--spec', spec, '--out', json])).toBe(0);
    } finally {
      write.mockRestore();
    }
    const e = JSON.parse(readFileSync(json, 'utf8')) as Evaluation;
    expect(e.utility!.unmeasuredCells).toBe(0);
    expect(e.utility!.ncp).toBeCloseTo(ncp, 12);
  });
});
