/**
 * ppdp's sample-based risks and population uniqueness against ARX's, live: the Java harness
 * (test/arx/RiskRun.java) is compiled against ARX's library into a temporary folder and run
 * once on the same tables and quasi-identifiers, at several population sizes.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { readTable } from '../../src/data/read.ts';
import { collapseRows } from '../../src/data/tuples.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { populationUniqueness, sampleRisk } from '../../src/metrics/population-risk.ts';
import { ARX_LIB, requires } from '../helpers/requires.ts';

const LIB = ARX_LIB;
const peer = requires('arx');
const ADULT_QIS = 'sex,age,race,marital-status,education,native-country,workclass,salary-class';
const HOSPITAL_QIS = 'age,sex,zip,admission_date';

/** table, delimiter, QIs, population: the USA (ARX's region), 10× the table, and sizes taking each branch of Dankar's rule. */
const JOBS: [string, string, string, string][] = [
  ['examples/adult/adult.csv', ';', ADULT_QIS, 'USA'],
  ['examples/adult/adult.csv', ';', ADULT_QIS, '301620'],
  ['examples/adult/adult.csv', ';', ADULT_QIS, '33000'],
  ['examples/adult/adult.csv', ';', 'age,sex,race', '40000'],
  ['examples/hospital/hospital.csv', ',', HOSPITAL_QIS, 'USA'],
  ['examples/hospital/hospital.csv', ',', HOSPITAL_QIS, '20000'],
  ['examples/hospital/hospital.csv', ',', 'age,sex,zip', '20000'],
  ['examples/hospital/hospital.csv', ',', 'age,sex', '2500'],
];

let dir = '';
let arx: Record<string, number | string>[] = [];

beforeAll(() => {
  if (!peer.available) return;
  dir = mkdtempSync(join(tmpdir(), 'ppdp-arx-risk-'));
  const cp = `${LIB}/*`;
  execFileSync('javac', ['-cp', cp, '-d', dir, join(import.meta.dirname, '../arx/RiskRun.java')]);
  // C1 only: a short run, where the optimizing compiler would cost more than it saves.
  const out = execFileSync(
    'java',
    ['-XX:TieredStopAtLevel=1', '-cp', `${cp}:${dir}`, 'RiskRun', ...JOBS.map((j) => j.join('|'))],
    {
      encoding: 'utf8',
    },
  );
  arx = out
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l));
}, 120_000);

afterAll(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** |a − b| within `rel` of |b| (or both zero: a model ARX found no estimate for). */
function close(a: number, b: number, rel: number): boolean {
  return Math.abs(a - b) <= rel * Math.abs(b);
}

peer.describe('population risk equals ARX 3.9.2', () => {
  it.each(JOBS.map((j, i) => [i, j.join(' ')] as const))('job %i: %s', (i) => {
    const [csv, delimiter, qiList] = JOBS[i]!;
    const table = readTable(csv, { delimiter });
    const qis = qiList.split(',').map((q) => table.columns.find((c) => c.name === q)!);
    const sizes = Array.from(collapseRows(tsGroupingKernel, qis).counts);
    const a = arx[i]!;
    const s = sampleRisk(sizes);
    for (const key of [
      'sampleUniques',
      'highestRisk',
      'recordsAtHighestRisk',
      'averageRisk',
      'prosecutor',
      'journalist',
      'marketer',
    ] as const) {
      expect(close(s[key], a[key] as number, 1e-12), `${key}: ppdp ${s[key]}, ARX ${a[key]}`).toBe(true);
    }
    const p = populationUniqueness(sizes, { size: a.populationSize as number });
    for (const model of ['pitman', 'zayatz', 'snb', 'dankar'] as const) {
      const ours = p.estimates[model].share ?? 0; // ARX reports a model it cannot fit as 0
      expect(close(ours, a[model] as number, 1e-9), `${model}: ppdp ${ours}, ARX ${a[model]}`).toBe(true);
    }
    expect(p.dankarModel ?? 'dankar').toBe(a.dankarModel);
  });

  it('covers each of Dankar’s choices and an SNB estimate', () => {
    expect(new Set(arx.map((a) => a.dankarModel))).toEqual(new Set(['pitman', 'zayatz', 'snb']));
    expect(arx.some((a) => (a.snb as number) > 0)).toBe(true);
    expect(arx.some((a) => a.pitman === 0 && (a.zayatz as number) > 0)).toBe(true);
  });
});
