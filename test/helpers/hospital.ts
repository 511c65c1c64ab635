/**
 * A synthetic, hospital-like table made deterministically (a fixed linear congruential
 * stream): patient id, age, sex, zip, admission date, diagnosis, with a few empty cells in
 * every column but the id. No real person is in it. examples/hospital/hospital.csv is
 * `hospitalCsv(2000)`.
 */

export const DIAGNOSES = [
  'Flu',
  'Pneumonia',
  'Asthma',
  'Bronchitis',
  'Fracture',
  'Sprain',
  'Burn',
  'Diabetes',
  'Hypertension',
  'Migraine',
] as const;

/** The diagnoses grouped twice: by kind, then acute or chronic (a `groups` builder). */
export const DIAGNOSIS_GROUPS: Record<string, string>[] = [
  {
    Flu: 'Respiratory',
    Pneumonia: 'Respiratory',
    Asthma: 'Respiratory',
    Bronchitis: 'Respiratory',
    Fracture: 'Injury',
    Sprain: 'Injury',
    Burn: 'Injury',
    Diabetes: 'Metabolic',
    Hypertension: 'Circulatory',
    Migraine: 'Neurological',
  },
  {
    Respiratory: 'Acute',
    Injury: 'Acute',
    Metabolic: 'Chronic',
    Circulatory: 'Chronic',
    Neurological: 'Chronic',
  },
];

const ZIPS = ['47901', '47902', '47905', '47906', '47907', '47909', '47920', '47924'];

/** `rows` patients as CSV (`,`-separated, header first, `\n` line ends). */
export function hospitalCsv(rows: number, seed = 20240601): string {
  let x = seed >>> 0;
  const next = (n: number) => {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    return (x >>> 8) % n;
  };
  // About one cell in `per` is left empty.
  const maybe = (value: string, per: number) => (next(per) === 0 ? '' : value);
  const lines = ['patient_id,age,sex,zip,admission_date,diagnosis'];
  for (let r = 0; r < rows; r++) {
    const age = Math.min(99, next(60) + next(45));
    const year = 2015 + next(10);
    const month = 1 + next(12);
    const day = 1 + next(28);
    const date = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
    lines.push(
      [
        `P${String(100000 + r)}`,
        maybe(String(age), 40),
        maybe(next(2) === 0 ? 'F' : 'M', 100),
        maybe(ZIPS[next(ZIPS.length)]!, 80),
        maybe(date, 60),
        maybe(DIAGNOSES[next(DIAGNOSES.length)]!, 50),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

/** A release spec for hospital.csv with built hierarchies for every quasi-identifier. */
export function hospitalSpec(method: 'generalization' | 'mondrian'): Record<string, unknown> {
  return {
    input: 'hospital.csv',
    format: { emptyCells: 'value' },
    attributes: {
      patient_id: { type: 'identifying' },
      age:
        method === 'mondrian'
          ? { type: 'quasi-identifying', scale: 'numeric' }
          : { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20], bottom: 18, top: 90 } },
      sex: { type: 'quasi-identifying', hierarchy: { groups: [{ F: '*', M: '*' }] } },
      zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      admission_date: {
        type: 'quasi-identifying',
        hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year', 'decade'] },
      },
      diagnosis: { type: 'sensitive', hierarchy: { groups: DIAGNOSIS_GROUPS } },
    },
    privacy: [
      { model: 'k-anonymity', k: 5 },
      { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
    ],
    method:
      method === 'mondrian'
        ? { name: 'mondrian', mode: 'strict' }
        : { name: 'generalization', maxSuppression: 0.02 },
    seed: 1,
  };
}
