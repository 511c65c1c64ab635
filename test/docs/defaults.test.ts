/**
 * Each default is stated once, in docs/release-spec.md's settings tables, and agrees with the
 * code: the Fields table's default column and the audit's thresholds table (The verdict) are
 * parsed and compared with the constants the code uses and with what parseSpec fills in.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_MAX_LATTICE_NODES } from '../../src/data/limits.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { DEFAULT_NODE_BUDGET, DEFAULT_TIME_LIMIT_S } from '../../src/methods/generalization/index.ts';
import { DEFAULT_RISK_THRESHOLD, parseSpec, withColumnDefaults } from '../../src/release-spec/spec.ts';
import {
  AUDIT_MAX_ROWS,
  KEEPS_NOTHING_NCP,
  REVEAL_SHARE,
  UNIQUE_ROWS_ALLOWED,
} from '../../src/report/audit.ts';

const DOC = readFileSync(new URL('../../docs/release-spec.md', import.meta.url), 'utf8');

/** A Markdown table's rows under the header whose first cell is `first`: first cell → cells. */
function tableRows(first: string): Map<string, string[]> {
  const lines = DOC.split('\n');
  const start = lines.findIndex((l) => l.startsWith('|') && l.split('|')[1]!.trim() === first);
  expect(start, `a table headed "${first}"`).toBeGreaterThanOrEqual(0);
  const rows = new Map<string, string[]>();
  for (let i = start + 2; i < lines.length && lines[i]!.startsWith('|'); i++) {
    const cells = lines[i]!.split(/(?<!\\)\|/)
      .slice(1, -1)
      .map((c) => c.trim());
    rows.set(cells[0]!.replace(/`/g, ''), cells);
  }
  return rows;
}

const SUPERSCRIPT: Record<string, string> = {
  '⁰': '0',
  '¹': '1',
  '²': '2',
  '³': '3',
  '⁴': '4',
  '⁵': '5',
  '⁶': '6',
  '⁷': '7',
  '⁸': '8',
  '⁹': '9',
};

/** A documented default as a value: the first code span or leading number (10⁷ and 1,000 read as numbers). */
function documented(cell: string): string | number {
  const code = cell.match(/`([^`]+)`/)?.[1];
  const text = (code ?? cell).trim();
  const power = text.match(/^10([⁰¹²³⁴⁵⁶⁷⁸⁹]+)/);
  if (power) return 10 ** Number([...power[1]!].map((c) => SUPERSCRIPT[c]).join(''));
  const number = text.match(/^-?[\d,]*\.?\d+/);
  if (number) return Number(number[0].replace(/,/g, ''));
  return text.replace(/^"|"$/g, '');
}

const minimal = parseSpec(
  {
    input: 'data.csv',
    attributes: {
      a: { type: 'quasi-identifying', hierarchy: { groups: [{ x: '*' }] } },
      s: { type: 'sensitive' },
    },
    privacy: [{ model: 'k-anonymity', k: 2 }],
    method: { name: 'generalization' },
  },
  new URL('../fixtures/defaults/release.json', import.meta.url).pathname,
);

describe('the documented defaults are the code’s', () => {
  const fields = tableRows('field');
  const fieldDefault = (name: string) => documented(fields.get(name)![2]!);

  it('the spec fields parseSpec fills in', () => {
    const m = minimal.method as {
      maxSuppression: number;
      metric: string;
      strategy?: string;
      suppressed?: string;
    };
    expect(fieldDefault('method.maxSuppression')).toBe(m.maxSuppression);
    expect(fieldDefault('method.metric')).toBe(m.metric);
    expect(fieldDefault('seed')).toBe(minimal.seed);
    expect(fieldDefault('report.riskThreshold')).toBe(minimal.report.riskThreshold);
    expect(fieldDefault('report.riskThreshold')).toBe(DEFAULT_RISK_THRESHOLD);
    if (m.strategy !== undefined) expect(fieldDefault('method.strategy')).toBe(m.strategy);
    if (m.suppressed !== undefined) expect(fieldDefault('method.suppressed')).toBe(m.suppressed);
  });

  it('the search’s limits', () => {
    expect(fieldDefault('limits.maxLatticeNodes')).toBe(DEFAULT_MAX_LATTICE_NODES);
    expect(fieldDefault('method.timeLimit')).toBe(DEFAULT_TIME_LIMIT_S);
    expect(fieldDefault('method.nodeBudget')).toBe(DEFAULT_NODE_BUDGET);
  });

  it('the audit’s thresholds (The verdict)', () => {
    const audit = tableRows('setting');
    const value = (name: string) => documented(audit.get(name)![1]!);
    expect(value('keeps-nothing NCP')).toBe(KEEPS_NOTHING_NCP);
    expect(value('unique rows allowed')).toBe(UNIQUE_ROWS_ALLOWED);
    expect(value('revealing share')).toBe(REVEAL_SHARE);
    expect(value('audited rows (in parts)')).toBe(AUDIT_MAX_ROWS);
  });

  it('the t-closeness distance rule: ordered when every value is a number, else equal', () => {
    expect(DOC).toMatch(
      /Without `distance`, t-closeness measures `ordered` when every value of the sensitive attribute\s+in the input is a number[^.]*and `equal` otherwise/,
    );
    const spec = parseSpec(
      {
        input: 'data.csv',
        attributes: {
          a: { type: 'quasi-identifying', hierarchy: { groups: [{ x: '*' }] } },
          s: { type: 'sensitive' },
        },
        privacy: [{ model: 't-closeness', attribute: 's', t: 0.5 }],
        method: { name: 'generalization' },
      },
      new URL('../fixtures/defaults/release.json', import.meta.url).pathname,
    );
    const table = (values: string[]) =>
      ({
        rowCount: values.length,
        columns: [
          { name: 'a', dictionary: ['x'], codes: new Int32Array(values.length) },
          { name: 's', dictionary: values, codes: Int32Array.from(values, (_, i) => i) },
        ],
      }) as unknown as EncodedTable;
    expect(withColumnDefaults(spec, table(['1', '2.5', '-3'])).privacy[0]).toMatchObject({
      distance: 'ordered',
    });
    expect(withColumnDefaults(spec, table(['1', 'two'])).privacy[0]).toMatchObject({ distance: 'equal' });
  });
});
