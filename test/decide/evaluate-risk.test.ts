/** `ppdp evaluate` with a population, a weight column and special uniques. */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { EVALUATE_HELP, evaluateCommand } from '../../src/cli/evaluate.ts';
import { PpdpError } from '../../src/errors.ts';
import type { Evaluation } from '../../src/evaluate/evaluate.ts';
import { populationUniqueness } from '../../src/metrics/population-risk.ts';
import { classRisk } from '../../src/metrics/special-uniques.ts';
import { parseSpec } from '../../src/release-spec/spec.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-evaluate-risk-'));
// classes over (age, sex): [30,M]×1, [40,F]×2, [50,M]×3, and a suppressed row
const table = join(dir, 'survey.csv');
writeFileSync(table, 'age;sex;w\n30;M;100\n40;F;50\n40;F;30\n50;M;10\n50;M;10\n50;M;10\n*;*;7\n');

let runs = 0;
function evaluate(...args: string[]): Evaluation {
  const out = join(dir, `e-${(runs++).toString()}.json`);
  const write = process.stdout.write;
  process.stdout.write = () => true;
  try {
    expect(evaluateCommand([table, '--qi', 'age,sex', '--out', out, '--kernel', 'ts', ...args])).toBe(0);
  } finally {
    process.stdout.write = write;
  }
  return JSON.parse(readFileSync(out, 'utf8'));
}

describe('ppdp evaluate: population risk, weights, special uniques', () => {
  it('measures the sample as a statistical office does, without options', () => {
    const e = evaluate();
    expect(e.risk.sample).toMatchObject({ records: 6, classes: 3, highestRisk: 1, sampleUniques: 1 / 6 });
    expect(e.risk.sample.marketer).toBe(3 / 6);
    expect(e.populationRisk).toBeUndefined();
    expect(e.weightedRisk).toBeUndefined();
    expect(e.specialUniques).toBeUndefined();
  });

  it('estimates population uniques against a size or a sampling fraction', () => {
    const bySize = evaluate('--population', '600');
    expect(bySize.populationRisk).toEqual(
      JSON.parse(JSON.stringify(populationUniqueness([1, 2, 3], { size: 600 }))),
    );
    expect(bySize.populationRisk?.populationSize).toBe(600);
    expect(bySize.populationRisk?.sampleUniques).toBe(1);
    // a fraction is the whole table's share, the suppressed row included: 7 / 0.01
    expect(evaluate('--sampling-fraction', '0.01').populationRisk?.populationSize).toBe(700);
  });

  it('sums the weighted individual risks, leaving suppressed rows out', () => {
    const w = evaluate('--weight', 'w').weightedRisk!;
    const expected = classRisk(1, 100) + 2 * classRisk(2, 80) + 3 * classRisk(3, 30);
    expect(w.records).toBe(6);
    expect(w.population).toBe(210);
    expect(w.expectedReidentifications).toBeCloseTo(expected, 14);
  });

  it('counts minimal sample uniques over the released rows', () => {
    const s = evaluate('--special-uniques').specialUniques!;
    // the 30 is alone on age and on nothing smaller; {age, sex} is not minimal for it
    expect(s).toMatchObject({ maxSize: 2, recordsWithMsu: 1, msusBySize: [1, 0] });
  });

  it('refuses contradictory or impossible populations, naming the option', () => {
    const refused = (args: string[], message: RegExp) =>
      expect(() =>
        evaluateCommand([table, '--qi', 'age,sex', '--out', join(dir, 'x.json'), ...args]),
      ).toThrow(message);
    refused(['--population', '600', '--sampling-fraction', '0.1'], /give one/);
    refused(['--population', 'many'], /--population must be a whole number/);
    refused(['--sampling-fraction', '2'], /--sampling-fraction must be in \(0, 1\]/);
    refused(['--population', '3'], /population size 3 is not a whole number at least the 6 records/);
    refused(['--weight', 'sex'], /^survey\.csv row 2, weight column sex: not a positive number/);
    refused(['--weight', 'nope'], /has no column nope/);
    expect(() => evaluateCommand([table, '--qi', 'age,sex', '--population', '3'])).toThrow(PpdpError);
  });

  it('documents the options', () => {
    for (const o of ['--population', '--sampling-fraction', '--weight', '--special-uniques']) {
      expect(EVALUATE_HELP).toContain(o);
    }
  });
});

describe('spec: report.population', () => {
  const spec = (report: unknown) =>
    parseSpec(
      {
        input: 'x.csv',
        attributes: { a: { type: 'quasi-identifying', hierarchy: { mask: 'right' } } },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
        report,
      },
      'release.json',
    );
  it('takes a size or a sampling fraction, exactly one', () => {
    expect(spec({ population: { size: 1000 } }).report.population).toEqual({ size: 1000 });
    expect(spec({ population: { samplingFraction: 0.1 } }).report.population).toEqual({
      samplingFraction: 0.1,
    });
    expect(spec({}).report.population).toBeUndefined();
    expect(() => spec({ population: {} })).toThrow(/exactly one of size and samplingFraction/);
    expect(() => spec({ population: { size: 10, samplingFraction: 0.1 } })).toThrow(/exactly one/);
    expect(() => spec({ population: { samplingFraction: 1.5 } })).toThrow(/samplingFraction/);
    expect(() => spec({ population: { size: 2.5 } })).toThrow(/size/);
    expect(() => spec({ population: { sise: 10 } })).toThrow(/did you mean 'size'/);
    const anatomy = {
      input: 'x.csv',
      attributes: { a: { type: 'quasi-identifying' }, s: { type: 'sensitive' } },
      privacy: [{ model: 'distinct-l-diversity', attribute: 's', l: 2 }],
      method: { name: 'anatomy' },
      report: { population: { size: 1000 } },
    };
    expect(() => parseSpec(anatomy, 'release.json')).toThrow(
      /measured on equivalence classes, which anatomy does not release/,
    );
    expect(() => parseSpec({ ...anatomy, report: {} }, 'release.json')).not.toThrow();
  });
});
