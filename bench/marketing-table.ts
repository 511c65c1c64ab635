/**
 * A wide marketing-survey table: the 17 columns of a bank's telephone campaign (age, job,
 * marital, education, default, balance, housing, loan, contact, day, month, duration,
 * campaign, pdays, previous, poutcome, y), none of whose headers names a person or something
 * sensitive, so `ppdp init` drafts every one of them quasi-identifying. Drawn from one seeded
 * stream: the same rows for the same row count. Used by bench/init-wide.ts and the init and
 * explore tests of wide tables.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Random } from '../src/util/random.ts';

export const MARKETING_COLUMNS = [
  'age',
  'job',
  'marital',
  'education',
  'default',
  'balance',
  'housing',
  'loan',
  'contact',
  'day',
  'month',
  'duration',
  'campaign',
  'pdays',
  'previous',
  'poutcome',
  'y',
] as const;

const JOBS = [
  'admin.',
  'blue-collar',
  'entrepreneur',
  'housemaid',
  'management',
  'retired',
  'self-employed',
  'services',
  'student',
  'technician',
  'unemployed',
  'unknown',
];
const MONTHS = ['jan', 'feb', 'mar', 'apr', 'may', 'jun', 'jul', 'aug', 'sep', 'oct', 'nov', 'dec'];

/** Skewed pick in [0, n): earlier values more likely. */
const skew = (r: Random, n: number) => Math.min(n - 1, Math.floor(n * (r.below(1000) / 1000) ** 2));
const pick = (r: Random, values: readonly string[]) => values[skew(r, values.length)]!;

function row(r: Random): string[] {
  const pdays = r.below(5) === 0 ? 1 + r.below(500) : -1;
  return [
    String(18 + skew(r, 78)),
    pick(r, JOBS),
    pick(r, ['married', 'single', 'divorced']),
    pick(r, ['secondary', 'tertiary', 'primary', 'unknown']),
    r.below(50) === 0 ? 'yes' : 'no',
    String(skew(r, 40_000) - 2000),
    r.below(2) === 0 ? 'yes' : 'no',
    r.below(6) === 0 ? 'yes' : 'no',
    pick(r, ['cellular', 'unknown', 'telephone']),
    String(1 + r.below(31)),
    pick(r, MONTHS),
    String(skew(r, 3000)),
    String(1 + skew(r, 40)),
    String(pdays),
    String(pdays < 0 ? 0 : 1 + skew(r, 30)),
    pdays < 0 ? 'unknown' : pick(r, ['failure', 'other', 'success']),
    r.below(8) === 0 ? 'yes' : 'no',
  ];
}

/** Writes `marketing.csv` with `rows` rows into `dir`; returns its path. */
export function writeMarketingTable(dir: string, rows: number): string {
  mkdirSync(dir, { recursive: true });
  const random = new Random(20261128);
  const lines = [MARKETING_COLUMNS.join(';')];
  for (let i = 0; i < rows; i++) lines.push(row(random).join(';'));
  const path = join(dir, 'marketing.csv');
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}
