/**
 * Wide tables whose lattices are far past what the optimal search enumerates. One seeded
 * stream each: the same rows for the same arguments.
 *
 * - `writeWideTable`: a marketing-style table, up to 24 quasi-identifiers — ages, dates,
 *   postcodes, amounts and categories with hierarchies from the builders; past 24, the first 8
 *   of them and a survey's answers (yes/no questions and a few 1–5 scales, drawn from a hidden
 *   respondent profile so that answers correlate), up to 40 quasi-identifiers with the lattice
 *   under 2^53 nodes. Used by bench/wide.ts and by the interruption test.
 * - `writeBankTable`: a table shaped like a public bank-marketing survey (17 columns, 45,211
 *   rows by default), none of whose headers names a person or something sensitive, so that
 *   `ppdp init` drafts every column quasi-identifying (a lattice of 8·10⁷ nodes). Used by
 *   bench/wide.ts, bench/cell-suppression.ts, bench/init-wide.ts and the init and explore tests
 *   of wide tables.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Random } from '../src/util/random.ts';

type Cell = (r: Random) => string;
interface Column {
  readonly name: string;
  readonly hierarchy: unknown;
  readonly draw: Cell;
}

const pad = (n: number, w: number) => String(n).padStart(w, '0');
/** Skewed pick: earlier values more likely (a Zipf-like draw over `n`). */
const skew = (r: Random, n: number) => Math.min(n - 1, Math.floor(n * (r.below(1000) / 1000) ** 2));

/** A two-level grouping of `values` into `groups` named groups, then '*'. */
function category(name: string, values: readonly string[], groups: number): Column {
  const size = Math.ceil(values.length / groups);
  const first: Record<string, string> = {};
  const second: Record<string, string> = {};
  values.forEach((v, i) => {
    const g = `${name}-group-${Math.floor(i / size) + 1}`;
    first[v] = g;
    second[g] = '*';
  });
  return {
    name,
    hierarchy: { groups: groups > 1 ? [first, second] : [Object.fromEntries(values.map((v) => [v, '*']))] },
    draw: (r) => values[skew(r, values.length)]!,
  };
}

const labels = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i + 1}`);
const date = (from: number, years: number): Cell => {
  return (r) => `${from + r.below(years)}-${pad(1 + r.below(12), 2)}-${pad(1 + r.below(28), 2)}`;
};

/** The columns in the order they are added as the table widens. */
export const WIDE_COLUMNS: readonly Column[] = [
  {
    name: 'age',
    hierarchy: { intervals: [5, 10, 20], bottom: 18, top: 90 },
    draw: (r) => String(18 + r.below(70)),
  },
  { name: 'sex', hierarchy: { groups: [{ F: '*', M: '*' }] }, draw: (r) => (r.below(2) ? 'F' : 'M') },
  {
    name: 'postcode',
    hierarchy: { mask: 'right' },
    draw: (r) => String(10000 + 100 * skew(r, 900) + r.below(10)),
  },
  {
    name: 'birth_date',
    hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year', 'decade'] },
    draw: date(1936, 70),
  },
  category('marital', ['single', 'married', 'divorced', 'widowed', 'partner'], 2),
  category('education', labels('edu', 8), 3),
  {
    name: 'income',
    hierarchy: { intervals: [5000, 20000, 100000], bottom: 0, top: 200000 },
    draw: (r) => String(1000 * skew(r, 200)),
  },
  { name: 'household', hierarchy: { intervals: [2, 4] }, draw: (r) => String(1 + skew(r, 7)) },
  category('occupation', labels('occ', 12), 4),
  category('region', labels('reg', 16), 4),
  { name: 'signup_date', hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year'] }, draw: date(2015, 10) },
  category('channel', ['web', 'app', 'store', 'phone', 'mail', 'partner'], 2),
  category('device', ['ios', 'android', 'windows', 'mac', 'linux', 'other'], 3),
  category('loyalty', ['none', 'bronze', 'silver', 'gold', 'platinum'], 2),
  { name: 'children', hierarchy: { intervals: [2] }, draw: (r) => String(skew(r, 5)) },
  category('car', labels('car', 10), 3),
  {
    name: 'last_purchase',
    hierarchy: { date: 'YYYY-MM-DD', levels: ['month', 'year'] },
    draw: date(2020, 6),
  },
  category('newsletter', ['yes', 'no'], 1),
  category('payment', ['card', 'cash', 'transfer', 'wallet'], 2),
  category('language', labels('lang', 6), 2),
  { name: 'visits', hierarchy: { intervals: [5, 10] }, draw: (r) => String(skew(r, 60)) },
  category('segment', labels('seg', 9), 3),
  category('housing', ['own', 'rent', 'family', 'other'], 2),
  category('pet', ['none', 'dog', 'cat', 'other'], 2),
];

/** Columns after the first `SURVEY_BASE` of WIDE_COLUMNS in tables of more than 24 QIs. */
const SURVEY_BASE = 8;
const PROFILES = 8;

/** Survey answer `q` (1-based): a 1–5 scale every 16th question, else yes/no. */
function surveyColumn(q: number): Column & { readonly answer: (r: Random, profile: number) => string } {
  const name = `q${pad(q, 2)}`;
  // Each profile's leaning on this question, fixed by the question's number.
  const lean = (profile: number) => ((q * 7919 + profile * 104729) % 1000) / 1000;
  if (q % 16 === 0)
    return {
      name,
      hierarchy: {
        groups: [
          { '1': 'low', '2': 'low', '3': 'mid', '4': 'high', '5': 'high' },
          { low: '*', mid: '*', high: '*' },
        ],
      },
      draw: (r) => String(1 + r.below(5)),
      // The profile's point on the scale, one step either way now and then.
      answer: (r, profile) =>
        String(1 + Math.max(0, Math.min(4, Math.floor(lean(profile) * 5) + r.below(3) - 1))),
    };
  return {
    name,
    hierarchy: { groups: [{ yes: '*', no: '*' }] },
    draw: (r) => (r.below(2) ? 'yes' : 'no'),
    // Mostly the profile's answer, one time in eight the other.
    answer: (r, profile) => (lean(profile) < 0.5 !== (r.below(8) === 0) ? 'yes' : 'no'),
  };
}

export interface WideTable {
  readonly spec: string;
  readonly csv: string;
  readonly columns: readonly string[];
}

/**
 * Writes `wide.csv` (`rows` rows, `qis` quasi-identifiers and a sensitive column) and
 * `release.json` (k-anonymity, NCP, 2 % suppression) into `dir`.
 */
export function writeWideTable(
  dir: string,
  rows: number,
  qis: number,
  method: Record<string, unknown> = {},
  k = 5,
): WideTable {
  const most = SURVEY_BASE + 32;
  if (!(qis >= 1 && qis <= most)) throw new Error(`qis must be 1–${most}`);
  const survey = qis > WIDE_COLUMNS.length;
  const questions = survey ? Array.from({ length: qis - SURVEY_BASE }, (_, q) => surveyColumn(q + 1)) : [];
  const columns: readonly Column[] = survey
    ? [...WIDE_COLUMNS.slice(0, SURVEY_BASE), ...questions]
    : WIDE_COLUMNS.slice(0, qis);
  mkdirSync(dir, { recursive: true });
  const random = new Random(20260434);
  const lines = [['customer_id', ...columns.map((c) => c.name), 'spend_band'].join(',')];
  for (let r = 0; r < rows; r++) {
    const base = columns.slice(0, survey ? SURVEY_BASE : columns.length).map((c) => c.draw(random));
    const profile = survey ? random.below(PROFILES) : 0;
    const answers = questions.map((q) => q.answer(random, profile));
    lines.push([`C${pad(r, 8)}`, ...base, ...answers, `band${1 + random.below(5)}`].join(','));
  }
  const csv = join(dir, 'wide.csv');
  writeFileSync(csv, `${lines.join('\n')}\n`);
  const spec = join(dir, 'release.json');
  writeFileSync(
    spec,
    `${JSON.stringify(
      {
        input: 'wide.csv',
        format: { delimiter: ',' },
        attributes: {
          customer_id: { type: 'identifying' },
          ...Object.fromEntries(
            columns.map((c) => [c.name, { type: 'quasi-identifying', hierarchy: c.hierarchy }]),
          ),
          spend_band: { type: 'sensitive' },
        },
        privacy: [{ model: 'k-anonymity', k }],
        method: { name: 'generalization', maxSuppression: 0.02, metric: 'ncp', ...method },
        seed: 1,
      },
      null,
      2,
    )}\n`,
  );
  return { spec, csv, columns: columns.map((c) => c.name) };
}

const JOBS = [
  ['blue-collar', 215],
  ['management', 209],
  ['technician', 168],
  ['admin.', 114],
  ['services', 92],
  ['retired', 50],
  ['self-employed', 35],
  ['entrepreneur', 33],
  ['unemployed', 29],
  ['housemaid', 27],
  ['student', 21],
  ['unknown', 7],
] as const;
const MONTHS = [
  ['may', 304],
  ['jul', 153],
  ['aug', 138],
  ['jun', 118],
  ['nov', 88],
  ['apr', 65],
  ['feb', 59],
  ['jan', 31],
  ['oct', 16],
  ['sep', 13],
  ['mar', 11],
  ['dec', 5],
] as const;

/** A draw from `[value, weight]` pairs. */
function weighted(r: Random, pairs: readonly (readonly [string, number])[]): string {
  let total = 0;
  for (const [, w] of pairs) total += w;
  let x = r.below(total);
  for (const [v, w] of pairs) {
    if (x < w) return v;
    x -= w;
  }
  return pairs[pairs.length - 1]![0];
}

/** Yes with probability `per1000`/1000. */
const yes = (r: Random, per1000: number) => (r.below(1000) < per1000 ? 'yes' : 'no');
/** A long-tailed count ≥ `from`: each step on with probability `per1000`/1000, at most `most`. */
function tail(r: Random, from: number, per1000: number, most: number): number {
  let n = from;
  while (n < most && r.below(1000) < per1000) n++;
  return n;
}

/**
 * One row of the bank-marketing-shaped table, column by column as in the public survey:
 * client (age, job, marital, education, default, balance, housing, loan), last contact
 * (contact, day, month, duration), campaign (campaign, pdays, previous, poutcome) and outcome y.
 */
function bankRow(r: Random): string[] {
  const age = 18 + Math.min(77, Math.floor((r.below(43) + r.below(43) + r.below(30)) * 0.85));
  const job =
    age >= 61 && r.below(3) > 0 ? 'retired' : age <= 24 && r.below(3) === 0 ? 'student' : weighted(r, JOBS);
  const marital =
    age < 28 && r.below(2) === 0
      ? 'single'
      : weighted(r, [
          ['married', 602],
          ['single', 283],
          ['divorced', 115],
        ]);
  const education =
    job === 'management' && r.below(4) > 0
      ? 'tertiary'
      : weighted(r, [
          ['secondary', 513],
          ['tertiary', 294],
          ['primary', 151],
          ['unknown', 42],
        ]);
  const balance =
    r.below(12) === 0 ? -r.below(2000) : Math.floor(Math.exp(r.below(1000) / 100)) - 1 + r.below(50);
  const contact = weighted(r, [
    ['cellular', 648],
    ['unknown', 288],
    ['telephone', 64],
  ]);
  const duration = Math.floor(-258 * Math.log(1 - r.below(999) / 1000));
  const contacted = r.below(1000) < 183;
  const pdays = contacted ? 1 + tail(r, 0, 996, 870) : -1;
  const previous = contacted ? tail(r, 1, 600, 275) : 0;
  const poutcome = contacted
    ? weighted(r, [
        ['failure', 600],
        ['other', 225],
        ['success', 175],
      ])
    : 'unknown';
  const y = yes(r, poutcome === 'success' ? 650 : duration > 500 ? 400 : 70);
  return [
    String(age),
    job,
    marital,
    education,
    yes(r, 18),
    String(balance),
    yes(r, 556),
    yes(r, 160),
    contact,
    String(1 + r.below(31)),
    weighted(r, MONTHS),
    String(duration),
    String(tail(r, 1, 630, 63)),
    String(pdays),
    String(previous),
    poutcome,
    y,
  ];
}

export const BANK_COLUMNS = [
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

/** Writes `bank.csv` (`rows` rows of the 17 columns, `;`-separated as the public file) into `dir`. */
export function writeBankTable(dir: string, rows = 45_211): string {
  mkdirSync(dir, { recursive: true });
  const random = new Random(20260435);
  const lines = [BANK_COLUMNS.join(';')];
  for (let i = 0; i < rows; i++) lines.push(bankRow(random).join(';'));
  const csv = join(dir, 'bank.csv');
  writeFileSync(csv, `${lines.join('\n')}\n`);
  return csv;
}
