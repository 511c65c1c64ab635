/**
 * Registry-shaped inputs of any size for the benchmarks: a table shaped like real person-level
 * data rather than like Adult, whose few distinct values hide costs that grow with distinct
 * values. One row per person: a unique person id (identifying), age (intervals), sex (groups),
 * a 5-digit postcode uniform over 10000–99999 (mask), an exact birth date over 1930–2005 (date
 * builder) and a 10-value diagnosis (sensitive); k = 5 with at most 2 % suppressed. The
 * quasi-identifier tuples are almost all distinct. Seeded: the same size gives the same bytes.
 */
import { mkdtempSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { Random } from '../src/util/random.ts';
import { writeRows } from './adult-sample.ts';

const DIAGNOSES = ['J11', 'I10', 'E11', 'M54', 'F32', 'K21', 'N39', 'S72', 'C50', 'G43'];
const DAYS_IN_MONTH = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export const REGISTRY_SPEC = {
  input: 'registry.csv',
  format: { delimiter: ',' },
  attributes: {
    person_id: { type: 'identifying' },
    age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20], bottom: 0, top: 100 } },
    sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
    postcode: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
    birth_date: {
      type: 'quasi-identifying',
      hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year', 'decade'] },
    },
    diagnosis: { type: 'sensitive' },
  },
  privacy: [{ model: 'k-anonymity', k: 5 }],
  method: { name: 'generalization', maxSuppression: 0.02, metric: 'ncp' },
  seed: 1,
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');

/** Writes `rows` rows of the registry table to `file` (CSV, comma-separated, with a header). */
export async function writeRegistryCsv(file: string, rows: number, firstRow = 0): Promise<void> {
  const random = new Random(20261125 + firstRow);
  await writeRows(file, 'person_id,age,sex,postcode,birth_date,diagnosis', rows, (r) => {
    const year = 1930 + random.below(76);
    const month = random.below(12);
    const leap = month === 1 && year % 4 === 0 ? 1 : 0;
    const day = 1 + random.below(DAYS_IN_MONTH[month]! + leap);
    // Ages as of the release year, so age and birth date agree as they would in a registry.
    const age = 2026 - year - (random.below(2) === 0 ? 1 : 0);
    return (
      `P${pad(firstRow + r, 10)}-${pad(random.below(1_000_000), 6)},${age},${random.below(2) === 0 ? 'F' : 'M'},` +
      `${10000 + random.below(90000)},${year}-${pad(month + 1, 2)}-${pad(day, 2)},${DIAGNOSES[random.below(10)]}`
    );
  });
}

/** A folder with release.json and registry.csv of `rows` rows. */
export async function registrySample(rows: number): Promise<{ dir: string; spec: string; bytes: number }> {
  const dir = mkdtempSync(join(os.tmpdir(), `ppdp-registry-${rows}-`));
  writeFileSync(join(dir, 'release.json'), `${JSON.stringify(REGISTRY_SPEC, null, 2)}\n`);
  await writeRegistryCsv(join(dir, 'registry.csv'), rows);
  return { dir, spec: join(dir, 'release.json'), bytes: statSync(join(dir, 'registry.csv')).size };
}

// `tsx bench/registry-sample.ts <rows> <folder>` writes a sample where asked.
if (process.argv[1] && import.meta.url.endsWith(process.argv[1].split('/').pop()!)) {
  const rows = Number(process.argv[2] ?? 1000);
  const { dir, bytes } = await registrySample(rows);
  console.log(`${dir} (${(bytes / 2 ** 20).toFixed(1)} MiB)`);
}
