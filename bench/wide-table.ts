/**
 * A wide marketing-style table: up to 24 quasi-identifiers — ages, dates, postcodes,
 * amounts and categories with hierarchies from the builders — whose lattice is far past what
 * the optimal search enumerates. One seeded stream: the same rows for the same arguments.
 * Used by bench/wide.ts and by the interruption test.
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

export interface WideTable {
  readonly spec: string;
  readonly csv: string;
  readonly columns: readonly string[];
}

/**
 * Writes `wide.csv` (`rows` rows, the first `qis` quasi-identifiers and a sensitive
 * column) and `release.json` (k-anonymity, NCP, 2 % suppression) into `dir`.
 */
export function writeWideTable(
  dir: string,
  rows: number,
  qis: number,
  method: Record<string, unknown> = {},
  k = 5,
): WideTable {
  if (!(qis >= 1 && qis <= WIDE_COLUMNS.length)) throw new Error(`qis must be 1–${WIDE_COLUMNS.length}`);
  const columns = WIDE_COLUMNS.slice(0, qis);
  mkdirSync(dir, { recursive: true });
  const random = new Random(20260434);
  const lines = [['customer_id', ...columns.map((c) => c.name), 'spend_band'].join(',')];
  for (let r = 0; r < rows; r++)
    lines.push(
      [`C${pad(r, 8)}`, ...columns.map((c) => c.draw(random)), `band${1 + random.below(5)}`].join(','),
    );
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
