/**
 * The verifier reads hierarchies with code of its own (src/verify/hierarchy.ts). It must agree
 * with the builders on every value a release can hold, and a builder that labels a value
 * wrongly must make the release fail verification.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import type { EncodedColumn, OutputColumn } from '../../src/data/table.ts';
import { VerificationError } from '../../src/errors.ts';
import { hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { type HierarchySpec, loadSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import {
  exactIntervalLabels,
  intervalHolds,
  verifierHierarchyRows,
  wholeIntervalLabels,
} from '../../src/verify/hierarchy.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { INTERVAL_SETTINGS, intervalValues } from '../helpers/interval-values.ts';
import { buildGeneralizationInMemory, stageBuilt } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-verify-hierarchy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function column(values: string[]): EncodedColumn {
  const dictionary = [...new Set(values)];
  return { name: 'c', dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
}

const byValue = (rows: string[][]) => new Map(rows.map((row) => [row[0]!, row]));

function agree(values: string[], spec: HierarchySpec): void {
  const c = column(values);
  expect(byValue(verifierHierarchyRows(c, spec))).toEqual(byValue(hierarchyRows(c, spec)));
}

describe('the verifier reads every hierarchy as the builders build it', () => {
  for (const example of ['examples/adult/release.json', 'examples/hospital/release.json']) {
    it(`every attribute of ${example}`, () => {
      const spec = loadSpec(example);
      const table = readInput(spec);
      let compared = 0;
      for (const a of spec.attributes) {
        if (!a.hierarchy) continue;
        const c = table.columns.find((x) => x.name === a.name)!;
        expect(byValue(verifierHierarchyRows(c, a.hierarchy)), a.name).toEqual(
          byValue(hierarchyRows(c, a.hierarchy)),
        );
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(5);
    });
  }

  it('intervals over random numbers, with and without bottom and top coding', () => {
    const random = new Random(7);
    const values = Array.from({ length: 400 }, () => String(random.below(3000) / 10 - 100));
    values.push('', ' ', '0', '-0', '1e2');
    for (const [bottom, top] of [
      [undefined, undefined],
      [10, 90],
      [-50, undefined],
      [undefined, 33],
    ] as const) {
      agree(values, { kind: 'intervals', widths: [5, 10, 40], bottom, top });
      agree(values, { kind: 'intervals', widths: [3, 7], bottom, top });
    }
  });

  it('masks from either side, values of different lengths and missing values', () => {
    const values = ['47906', '4790', '1', '', '12345678', 'ab', '  '];
    agree(values, { kind: 'mask', direction: 'right' });
    agree(values, { kind: 'mask', direction: 'left' });
  });

  it('dates in several formats, with leap days and impossible dates', () => {
    agree(['2021-03-15', '2020-02-29', '1999-12-31', '2021-1-5', ''], {
      kind: 'date',
      format: 'YYYY-MM-DD',
      levels: ['month', 'quarter', 'year', 'decade'],
    });
    agree(['5/7/2003', '29/02/2004', '31/12/1990'], { kind: 'date', format: 'DD/MM/YYYY', levels: ['year'] });
    agree(['20210315', '20001231'], { kind: 'date', format: 'YYYYMMDD', levels: ['month', 'decade'] });
    // Timestamps: a time of day after the date, with or without a zone.
    agree(
      [
        '2021-03-15T10:30:00',
        '2021-03-15 23:59:59.250+01:00',
        '2020-02-29T00:00Z',
        '1999-12-31T23:00:00-05:00',
      ],
      { kind: 'date', format: 'YYYY-MM-DD', levels: ['month', 'year'] },
    );
  });

  it('groupings with and without a single top label', () => {
    const kinds = { Flu: 'Respiratory', Asthma: 'Respiratory', Burn: 'Injury' };
    agree(['Flu', 'Burn', '', 'Asthma'], { kind: 'groups', levels: [kinds] });
    agree(['Flu', 'Burn'], {
      kind: 'groups',
      levels: [kinds, { Respiratory: 'Any', Injury: 'Any' }],
    });
  });

  it('a hierarchy file, with a missing value it does not list', () => {
    const path = join(dir, 'h.csv');
    writeFileSync(path, '\uFEFFa;x;*\r\nb;x;*\r\nc;y;*\r\n');
    agree(['a', 'b', 'c', ''], { kind: 'file', path });
  });
});

describe('the verifier reads exactly what float arithmetic and code units got wrong', () => {
  it('places decimals in the intervals that hold them, with plain decimal labels', () => {
    const rows = byValue(
      verifierHierarchyRows(column(['0.3', '0.31', '4.35', '-0.31', '0.6']), {
        kind: 'intervals',
        widths: [0.05, 0.1],
      }),
    );
    expect(rows.get('0.3')).toEqual(['0.3', '[0.3,0.35)', '[0.3,0.4)', '*']);
    expect(rows.get('0.31')).toEqual(['0.31', '[0.3,0.35)', '[0.3,0.4)', '*']);
    expect(rows.get('4.35')).toEqual(['4.35', '[4.35,4.4)', '[4.3,4.4)', '*']);
    expect(rows.get('-0.31')).toEqual(['-0.31', '[-0.35,-0.3)', '[-0.4,-0.3)', '*']);
    expect(rows.get('0.6')).toEqual(['0.6', '[0.6,0.65)', '[0.6,0.7)', '*']);
  });

  it('agrees with the builder on random decimals, with and without decimal bottom and top', () => {
    const random = new Random(11);
    const values = Array.from({ length: 400 }, () =>
      (random.below(30000) / 100 - 100).toFixed(random.below(4)),
    );
    values.push('0', '-0', '1e-2', '2.5E1', '0.29999999999999999', '-0.001');
    for (const [bottom, top] of [
      [undefined, undefined],
      [0.1, 90.25],
      [-50.5, undefined],
    ] as const) {
      agree(values, { kind: 'intervals', widths: [0.05, 0.1, 0.3], bottom, top });
      agree(values, { kind: 'intervals', widths: [0.25, 2.5], bottom, top });
    }
  });

  it('reads whole values in plain numbers exactly as in decimal, and agrees with the builder', () => {
    const values = intervalValues(5);
    let fast = 0;
    for (const [widths, bottom, top] of INTERVAL_SETTINGS) {
      const whole = wholeIntervalLabels(widths, bottom, top);
      const exact = exactIntervalLabels(widths, bottom, top);
      for (const value of values) {
        const labels = whole(value);
        if (labels === undefined) continue;
        fast++;
        expect(labels, value).toEqual(exact(value));
      }
      agree(values, { kind: 'intervals', widths, bottom, top });
    }
    expect(fast).toBeGreaterThan(3000);
  });

  it('reads a decimal text among whole widths by its decimals, not by the whole float it reads as', () => {
    const whole = wholeIntervalLabels([10], undefined, undefined);
    for (const value of ['29.999999999999999', '30.0', '3e1', '9007199254740993']) {
      expect(whole(value), value).toBeUndefined();
    }
    const rows = byValue(
      verifierHierarchyRows(column(['29.999999999999999', '30', '-29.999999999999999']), {
        kind: 'intervals',
        widths: [10],
      }),
    );
    expect(rows.get('29.999999999999999')).toEqual(['29.999999999999999', '[20,30)', '*']);
    expect(rows.get('30')).toEqual(['30', '[30,40)', '*']);
    expect(rows.get('-29.999999999999999')).toEqual(['-29.999999999999999', '[-30,-20)', '*']);
  });

  it('reads an interval label back and checks it holds the value it replaced', () => {
    // What float arithmetic labelled these values with: none holds its value.
    expect(intervalHolds('[0.25,0.3)', '0.3')).toBe(false);
    expect(intervalHolds('[4.3,4.35)', '4.35')).toBe(false);
    expect(intervalHolds('[0.5,0.6)', '0.6')).toBe(false);
    expect(intervalHolds('[0.3,0.35)', '0.3')).toBe(true);
    expect(intervalHolds('[0.30000000000000004,0.35000000000000003)', '0.3')).toBe(false);
    expect(intervalHolds('<18', '17.99')).toBe(true);
    expect(intervalHolds('<18', '18')).toBe(false);
    expect(intervalHolds('>=90', '90')).toBe(true);
    expect(intervalHolds('*', '90')).toBe(false);
  });

  it('masks whole characters as the builder does', () => {
    const values = ['😀1', '😁2', 'e\u0301x', 'ÄÖ', '12345', '👩‍👩‍👧x', ''];
    agree(values, { kind: 'mask', direction: 'right' });
    agree(values, { kind: 'mask', direction: 'left' });
    expect(
      byValue(verifierHierarchyRows(column(['😀1']), { kind: 'mask', direction: 'right' })).get('😀1'),
    ).toEqual(['😀1', '😀*', '*']);
  });

  it('cannot place an unpadded date of a format without separators, as the builder refuses it', () => {
    // 2020111 is 2020-11-1 or 2020-01-11.
    const dates = byValue(
      verifierHierarchyRows(column(['2020111', '20200111']), {
        kind: 'date',
        format: 'YYYYMMDD',
        levels: ['month'],
      }),
    );
    expect(dates.get('2020111')).toEqual(['2020111', '*', '*']);
    expect(dates.get('20200111')).toEqual(['20200111', '2020-01', '*']);
  });
});

describe('a builder that labels a value wrongly fails the release', () => {
  it('an age interval one off in the released table is not regenerated', () => {
    const spec = loadSpec('examples/hospital/release.json');
    const table = readInput(spec);
    const built = buildGeneralizationInMemory(spec, table);
    const staged = stageBuilt(built, join(dir, 'release'));
    const verify = () => verifierFor('generalization').verify({ spec, table, claims: built.claims, staged });
    expect(verify().every((c) => c.passed)).toBe(true);

    // What a builder off by one would have released: every label `[lo,hi)` of age as `[lo,hi+1)`.
    const released = readArrow(staged('data.arrow'));
    const columns: OutputColumn[] = released.columns.map((c) =>
      c.name === 'age'
        ? {
            name: c.name,
            kind: 'dictionary',
            dictionary: c.dictionary.map((v) => v.replace(/,(\d+)\)$/, (_, hi) => `,${Number(hi) + 1})`)),
            codes: c.codes,
          }
        : { name: c.name, kind: 'dictionary', dictionary: c.dictionary, codes: c.codes },
    );
    expect(columns.find((c) => c.name === 'age')!.kind === 'dictionary').toBe(true);
    writeFileSync(staged('data.arrow'), encodeArrow(columns));
    writeFileSync(staged('data.csv'), encodeCsv(columns, table.delimiter));
    expect(verify).toThrow(VerificationError);
  });
});
