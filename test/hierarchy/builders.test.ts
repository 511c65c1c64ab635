import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { hierarchyCommand } from '../../src/cli/hierarchy.ts';
import { tableRows } from '../../src/data/checks.ts';
import type { EncodedColumn } from '../../src/data/table.ts';
import { HierarchyError, PpdpError, SpecError } from '../../src/errors.ts';
import { exactIntervals, wholeIntervals } from '../../src/hierarchy/builders.ts';
import { buildHierarchy, hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { type HierarchySpec, parseSpec } from '../../src/release-spec/spec.ts';
import { INTERVAL_SETTINGS, intervalValues } from '../helpers/interval-values.ts';
import { writeParquet } from '../helpers/parquet.ts';
import { releaseTo } from '../helpers/release.ts';
import { thrown as thrownOf } from '../helpers/thrown.ts';

const thrown = (f: () => unknown) => thrownOf<HierarchyError | SpecError>(f, HierarchyError, SpecError);

const dir = mkdtempSync(join(tmpdir(), 'ppdp-builders-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A column holding `values` in this order (each value once per listed occurrence). */
function column(values: string[], name = 'c'): EncodedColumn {
  const dictionary = [...new Set(values)];
  return { name, dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
}

/** value → its row, built and checked as a release builds it (tree, one top, no cycle). */
function rowsOf(values: string[], spec: HierarchySpec): Map<string, string[]> {
  const c = column(values);
  buildHierarchy(c, spec);
  return new Map(hierarchyRows(c, spec).map((row) => [row[0]!, row]));
}

/** Parses a one-QI spec whose `age` column has the given hierarchy. */
function parseHierarchy(hierarchy: unknown): HierarchySpec {
  const spec = parseSpec(
    {
      input: 'data.csv',
      attributes: { age: { type: 'quasi-identifying', hierarchy } },
      privacy: [{ model: 'k-anonymity', k: 2 }],
      method: { name: 'generalization' },
    },
    join(dir, 'release.json'),
  );
  return spec.attributes[0]!.hierarchy!;
}

describe('date builder', () => {
  it('climbs day → month → quarter → year → decade, then *; a missing date stays missing up to *', () => {
    const spec = parseHierarchy({ date: 'YYYY-MM-DD', levels: ['month', 'quarter', 'year', 'decade'] });
    const rows = rowsOf(['2021-03-15', '1999-12-31', '', '2021-03-01'], spec);
    expect(rows.get('2021-03-15')).toEqual(['2021-03-15', '2021-03', '2021-Q1', '2021', '2020-2029', '*']);
    expect(rows.get('1999-12-31')).toEqual(['1999-12-31', '1999-12', '1999-Q4', '1999', '1990-1999', '*']);
    expect(rows.get('')).toEqual(['', '', '', '', '', '*']);
  });

  it('reads other formats and defaults to month, year, decade', () => {
    const spec = parseHierarchy({ date: 'DD/MM/YYYY' });
    expect(spec).toEqual({ kind: 'date', format: 'DD/MM/YYYY', levels: ['month', 'year', 'decade'] });
    expect(rowsOf(['5/7/2003', '29/02/2004'], spec).get('5/7/2003')).toEqual([
      '5/7/2003',
      '2003-07',
      '2003',
      '2000-2009',
      '*',
    ]);
  });

  it('counts the values that are not dates, names the column, the row and the format, never a value', () => {
    const spec = parseHierarchy({ date: 'YYYY-MM-DD' });
    const e = thrown(() => rowsOf(['2021-01-01', '2021-02-30', 'SECRET', '2021-13-01', 'SECRET'], spec));
    expect(e.code).toBe('E_HIERARCHY_DATE');
    expect(e.message).toBe(
      "column 'c': 3 distinct values are not a date in the format 'YYYY-MM-DD' of its date builder (the first in row 3)",
    );
    expect(e.hint).toMatch(/DD\/MM\/YYYY/);
    expect(e.hint).toMatch(/Excel workbook's date cells read as YYYY-MM-DD/);
  });

  it('generalizes a timestamp by its date; a time of day that cannot be is no date', () => {
    const spec = parseHierarchy({ date: 'YYYY-MM-DD', levels: ['month', 'year'] });
    expect(
      rowsOf(['2021-03-15T10:30:00Z', '2021-03-15 23:59:59.5+01:00'], spec).get('2021-03-15T10:30:00Z'),
    ).toEqual(['2021-03-15T10:30:00Z', '2021-03', '2021', '*']);
    const e = thrown(() =>
      rowsOf(['2021-03-15T24:00:00', '2021-03-15T10:60', '2021-03-15T10:30:00x', '2021-03-15T'], spec),
    );
    expect(e.message).toMatch(/^column 'c': 4 distinct values are not a date/);
  });

  it('refuses a format or levels it cannot use, naming the setting', () => {
    expect(() => parseHierarchy({ date: 'YYYY-MM' })).toThrow(
      /^release\.json: attributes\.age\.hierarchy\.date is 'YYYY-MM': a date format needs YYYY, MM and DD/,
    );
    expect(() => parseHierarchy({ date: 'YYYY-MM-DD', levels: ['year', 'month'] })).toThrow(
      /attributes\.age\.hierarchy\.levels must list some of month, quarter, year, decade, each once, finest first/,
    );
    expect(() => parseHierarchy({ date: 'YYYY-MM-DD', levels: ['week'] })).toThrow(/hierarchy\.levels/);
  });
});

describe('groups builder', () => {
  const groups = [
    { Flu: 'Respiratory', Asthma: 'Respiratory', Fracture: 'Injury' },
    { Respiratory: 'Acute', Injury: 'Acute' },
  ];

  it('maps values level by level; a top * is added unless the last level is one label', () => {
    const rows = rowsOf(['Flu', 'Fracture', '', 'Asthma'], parseHierarchy({ groups }));
    expect(rows.get('Flu')).toEqual(['Flu', 'Respiratory', 'Acute']);
    expect(rows.get('')).toEqual(['', '', 'Acute']); // the missing value reaches the one top label
    const withTop = rowsOf(['Flu', 'Fracture'], parseHierarchy({ groups: [groups[0]] }));
    expect(withTop.get('Fracture')).toEqual(['Fracture', 'Injury', '*']);
  });

  it('counts every value a level does not map, without naming one', () => {
    const e = thrown(() => rowsOf(['Flu', 'SECRET-A', 'SECRET-B', 'SECRET-A'], parseHierarchy({ groups })));
    expect(e.code).toBe('E_HIERARCHY_VALUE');
    expect(e.message).toBe(
      "column 'c': 2 distinct values are not a key of groups[0] of its groups builder (the first in row 3)",
    );
    expect(e.message).not.toMatch(/SECRET/);
    const upper = thrown(() =>
      rowsOf(['Flu', 'Fracture'], parseHierarchy({ groups: [groups[0], { Respiratory: 'Acute' }] })),
    );
    expect(upper.message).toMatch(/1 distinct value is led to labels that are not keys of groups\[1\]/);
  });

  it('refuses mappings that are not strings, naming the setting', () => {
    expect(() => parseHierarchy({ groups: [{ Flu: 1 }] })).toThrow(
      /attributes\.age\.hierarchy\.groups must be/,
    );
    expect(() => parseHierarchy({ groups: [] })).toThrow(/hierarchy\.groups/);
  });
});

describe('masking', () => {
  it('masks from the right or the left; a missing value stays missing', () => {
    const right = rowsOf(['47906', '47', ''], parseHierarchy({ mask: 'right' }));
    expect(right.get('47906')).toEqual(['47906', '4790*', '479**', '47***', '4****', '*']);
    expect(right.get('47')).toEqual(['47', '4*', '*', '*', '*', '*']);
    expect(right.get('')).toEqual(['', '', '', '', '', '*']);
    const left = rowsOf(['47906', '12345'], parseHierarchy({ mask: 'left' }));
    expect(left.get('47906')).toEqual(['47906', '*7906', '**906', '***06', '****6', '*']);
  });
});

describe('intervals with top and bottom coding', () => {
  it('codes values below bottom and from top on as <bottom and >=top, clipping intervals', () => {
    const spec = parseHierarchy({ intervals: [5, 10], bottom: 18, top: 90 });
    const rows = rowsOf(['3', '17', '18', '42', '88', '90', '104', ''], spec);
    expect(rows.get('3')).toEqual(['3', '<18', '<18', '*']);
    expect(rows.get('18')).toEqual(['18', '[18,20)', '[18,20)', '*']);
    expect(rows.get('42')).toEqual(['42', '[40,45)', '[40,50)', '*']);
    expect(rows.get('88')).toEqual(['88', '[85,90)', '[80,90)', '*']);
    expect(rows.get('104')).toEqual(['104', '>=90', '>=90', '*']);
    expect(rows.get('')).toEqual(['', '', '', '*']);
  });

  it('refuses bottom ≥ top and settings of another builder', () => {
    expect(() => parseHierarchy({ intervals: [5], bottom: 90, top: 18 })).toThrow(
      /attributes\.age\.hierarchy\.bottom \(90\) must be below top \(18\)/,
    );
    expect(() => parseHierarchy({ mask: 'right', top: 3 })).toThrow(
      /attributes\.age\.hierarchy\.top does not apply to the mask builder/,
    );
    expect(() => parseHierarchy({ intervals: [5], mask: 'right' })).toThrow(
      /must name exactly one builder \(found intervals, mask\)/,
    );
    expect(() => parseHierarchy({ mask: 'middle' })).toThrow(/hierarchy\.mask is 'middle'/);
  });

  it('counts non-numbers, naming the first row', () => {
    const e = thrown(() => rowsOf(['1', 'x', 'y', '2'], parseHierarchy({ intervals: [5] })));
    expect(e.message).toBe(
      "row 3, column 'c': not a number, but its hierarchy is an intervals builder (2 distinct values are not numbers)",
    );
  });
});

describe('intervals of decimal widths, worked out exactly in decimal', () => {
  it('puts each value in the interval that holds it, labelled with plain decimals', () => {
    const rows = rowsOf(
      ['0.3', '0.31', '4.35', '4.36', '0.6', '-0.3', '-0.31', '1.50', '1e-1'],
      parseHierarchy({ intervals: [0.05] }),
    );
    expect(rows.get('0.3')).toEqual(['0.3', '[0.3,0.35)', '*']);
    expect(rows.get('0.31')).toEqual(['0.31', '[0.3,0.35)', '*']);
    expect(rows.get('4.35')).toEqual(['4.35', '[4.35,4.4)', '*']);
    expect(rows.get('4.36')).toEqual(['4.36', '[4.35,4.4)', '*']);
    expect(rows.get('0.6')).toEqual(['0.6', '[0.6,0.65)', '*']);
    expect(rows.get('-0.3')).toEqual(['-0.3', '[-0.3,-0.25)', '*']);
    expect(rows.get('-0.31')).toEqual(['-0.31', '[-0.35,-0.3)', '*']);
    expect(rows.get('1.50')).toEqual(['1.50', '[1.5,1.55)', '*']);
    expect(rows.get('1e-1')).toEqual(['1e-1', '[0.1,0.15)', '*']);
    const nested = rowsOf(['0.6', '0.15', '4.35', '1.0'], parseHierarchy({ intervals: [0.1, 0.2] }));
    expect(nested.get('0.6')).toEqual(['0.6', '[0.6,0.7)', '[0.6,0.8)', '*']);
    expect(nested.get('0.15')).toEqual(['0.15', '[0.1,0.2)', '[0,0.2)', '*']);
    expect(nested.get('4.35')).toEqual(['4.35', '[4.3,4.4)', '[4.2,4.4)', '*']);
    expect(nested.get('1.0')).toEqual(['1.0', '[1,1.1)', '[1,1.2)', '*']);
  });

  it('reads a value as written, not as the nearest float', () => {
    // Both read as the float 0.3; the first is just below 0.3.
    const rows = rowsOf(
      ['0.29999999999999999', '0.30000000000000001'],
      parseHierarchy({ intervals: [0.05] }),
    );
    expect(rows.get('0.29999999999999999')).toEqual(['0.29999999999999999', '[0.25,0.3)', '*']);
    expect(rows.get('0.30000000000000001')).toEqual(['0.30000000000000001', '[0.3,0.35)', '*']);
  });

  it('places whole values in plain numbers exactly as in decimal, and leaves the rest to decimal', () => {
    let fast = 0;
    for (const [widths, bottom, top] of INTERVAL_SETTINGS) {
      const whole = wholeIntervals(widths, bottom, top);
      const exact = exactIntervals(widths, bottom, top);
      // Only whole settings within ±2^53 take plain numbers.
      expect(whole === undefined).toBe(
        widths.some((w) => !Number.isInteger(w)) || !Number.isInteger(bottom ?? 0),
      );
      for (const value of intervalValues(3)) {
        const x = whole?.read(value);
        const starts = x === undefined ? [] : widths.map((_, i) => whole!.start(x, i));
        if (x === undefined || starts.includes(undefined)) continue;
        fast++;
        expect(
          starts.map((start, i) => whole!.label(start!, i)),
          value,
        ).toEqual(exact(value));
      }
    }
    expect(fast).toBeGreaterThan(3000);
  });

  it('places a decimal text among whole widths by its decimals, not by the whole float it reads as', () => {
    const whole = wholeIntervals([10], undefined, undefined)!;
    for (const value of ['29.999999999999999', '30.0', '3e1', '9007199254740993']) {
      expect(whole.read(value), value).toBeUndefined();
    }
    const rows = rowsOf(
      ['29.999999999999999', '30', '-29.999999999999999', '9007199254740993'],
      parseHierarchy({ intervals: [10] }),
    );
    expect(rows.get('29.999999999999999')).toEqual(['29.999999999999999', '[20,30)', '*']);
    expect(rows.get('30')).toEqual(['30', '[30,40)', '*']);
    expect(rows.get('-29.999999999999999')).toEqual(['-29.999999999999999', '[-30,-20)', '*']);
    expect(rows.get('9007199254740993')).toEqual([
      '9007199254740993',
      '[9007199254740990,9007199254741000)',
      '*',
    ]);
  });

  it('codes decimal bottom and top, clipping the intervals to them', () => {
    const spec = parseHierarchy({ intervals: [0.5], bottom: 0.1, top: 2.25 });
    const rows = rowsOf(['0.05', '0.1', '0.7', '2.2', '2.25'], spec);
    expect(rows.get('0.05')).toEqual(['0.05', '<0.1', '*']);
    expect(rows.get('0.1')).toEqual(['0.1', '[0.1,0.5)', '*']);
    expect(rows.get('0.7')).toEqual(['0.7', '[0.5,1)', '*']);
    expect(rows.get('2.2')).toEqual(['2.2', '[2,2.25)', '*']);
    expect(rows.get('2.25')).toEqual(['2.25', '>=2.25', '*']);
  });

  it('takes a width that is a whole multiple of the one before in decimal, and refuses one that is not', () => {
    expect(parseHierarchy({ intervals: [0.1, 0.3] })).toMatchObject({ widths: [0.1, 0.3] });
    expect(parseHierarchy({ intervals: [0.05, 0.1, 0.3, 0.6] })).toMatchObject({
      widths: [0.05, 0.1, 0.3, 0.6],
    });
    expect(() => parseHierarchy({ intervals: [0.1, 0.25] })).toThrow(/each a multiple of the one before/);
    expect(() => parseHierarchy({ intervals: [5, 7] })).toThrow(/each a multiple of the one before/);
  });

  it('releases three classes of three at level 1 where float intervals split them and left only *', async () => {
    const d = join(dir, 'decimal-release');
    mkdirSync(d, { recursive: true });
    writeFileSync(
      join(d, 't.csv'),
      'id;x\n1;0.3\n2;0.31\n3;0.32\n4;0.6\n5;0.61\n6;0.62\n7;4.35\n8;4.36\n9;4.37\n',
    );
    writeFileSync(
      join(d, 'release.json'),
      JSON.stringify({
        input: 't.csv',
        attributes: {
          id: { type: 'identifying' },
          x: { type: 'quasi-identifying', hierarchy: { intervals: [0.05] } },
        },
        privacy: [{ model: 'k-anonymity', k: 3 }],
        method: { name: 'generalization', maxSuppression: 0.5 },
      }),
    );
    await releaseTo(join(d, 'release.json'), join(d, 'out'));
    const released = readFileSync(join(d, 'out', 'data.csv'), 'utf8')
      .trim()
      .split('\n')
      .slice(1)
      .sort();
    expect(released).toEqual([
      ...Array(3).fill('[0.3,0.35)'),
      ...Array(3).fill('[0.6,0.65)'),
      ...Array(3).fill('[4.35,4.4)'),
    ]);
  });
});

describe('masking whole characters', () => {
  it('hides an emoji or a letter with its combining accent as one character, never cutting it', () => {
    const decomposed = 'e\u0301x';
    const right = rowsOf(['😀1', '😁2', decomposed, 'ÄÖ', '12'], parseHierarchy({ mask: 'right' }));
    expect(right.get('😀1')).toEqual(['😀1', '😀*', '*']);
    expect(right.get(decomposed)).toEqual([decomposed, 'e\u0301*', '*']);
    expect(right.get('12')).toEqual(['12', '1*', '*']);
    const left = rowsOf(['😀1', decomposed, '👩‍👩‍👧x'], parseHierarchy({ mask: 'left' }));
    expect(left.get('😀1')).toEqual(['😀1', '*1', '*']);
    expect(left.get(decomposed)).toEqual([decomposed, '*x', '*']);
    expect(left.get('👩‍👩‍👧x')).toEqual(['👩‍👩‍👧x', '*x', '*']);
    for (const row of [...right.values(), ...left.values()]) {
      for (const label of row.slice(1)) {
        // No lone surrogate (written as U+FFFD) and no accent parted from its letter.
        expect(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/.test(label)).toBe(
          false,
        );
        expect(label.startsWith('\u0301') || label.includes('*\u0301')).toBe(false);
      }
    }
  });
});

describe('dates without separators', () => {
  it('takes only values of the format’s full length, refusing a shorter one by its row, never its value', () => {
    const spec = parseHierarchy({ date: 'YYYYMMDD', levels: ['month'] });
    expect(rowsOf(['20200111', '20201101'], spec).get('20200111')).toEqual(['20200111', '2020-01', '*']);
    const e = thrown(() => rowsOf(['20201101', '2020111', '20200111'], spec));
    expect(e.message).toBe(
      "column 'c': 1 distinct value is not a date in the format 'YYYYMMDD' of its date builder (the first in row 3); " +
        'a format without separators takes only dates of its full length (8 characters)',
    );
    expect(e.message).not.toContain('2020111');
    expect(e.hint).toMatch(/pad months and days to two digits.*separators/);
    expect(() => rowsOf(['1112020'], parseHierarchy({ date: 'DDMMYYYY' }))).toThrow(/full length/);
  });

  it('still reads a one-digit month or day between separators', () => {
    const rows = rowsOf(
      ['2020-1-11', '2020-11-1'],
      parseHierarchy({ date: 'YYYY-MM-DD', levels: ['month'] }),
    );
    expect(rows.get('2020-1-11')).toEqual(['2020-1-11', '2020-01', '*']);
    expect(rows.get('2020-11-1')).toEqual(['2020-11-1', '2020-11', '*']);
  });
});

describe('hierarchy files and the missing value', () => {
  it('adds a row keeping the missing value up to the top when the file has none', () => {
    const path = join(dir, 'sex.csv');
    writeFileSync(path, 'male;person;ANY\nfemale;person;ANY\n');
    const rows = rowsOf(['male', '', 'female'], { kind: 'file', path });
    expect(rows.get('')).toEqual(['', '', 'ANY']);
  });

  it('counts every value a file lacks, with rows, and names none of them', () => {
    const path = join(dir, 'short.csv');
    writeFileSync(path, 'male;*\n');
    const c = column(['male', 'SECRET-1', 'SECRET-2', 'SECRET-1']);
    const message = thrown(() => buildHierarchy(c, { kind: 'file', path })).message;
    expect(message).toBe(
      "short.csv: 2 values of column 'c' appear in the data but not in the hierarchy: 3 rows, first in rows 3, 4",
    );
    expect(message).not.toContain('SECRET');
  });

  it("keeps the file's own row for the missing value", () => {
    const path = join(dir, 'sex-listed.csv');
    writeFileSync(path, 'male;person;*\nfemale;person;*\n;person;*\n');
    const c = column(['male', '', 'female']);
    const h = buildHierarchy(c, { kind: 'file', path });
    expect(h.labels[1]![h.levelTables[1]![c.dictionary.indexOf('')]!]).toBe('person');
  });
});

describe("a builder's hierarchy made once per dictionary", () => {
  // Shards of one input share the input's dictionary (each its own decoded copy) and hold
  // different values of it: the hierarchy is made once, each shard's rows checked and counted.
  const dictionary = ['1', '7', 'x', '25', '60'];
  const shard = (codes: number[]): EncodedColumn => ({
    name: 'age',
    dictionary: [...dictionary],
    codes: Int32Array.from(codes),
  });
  /** How a shard's rows are named: rows from `firstRow` on of in.csv. */
  const rowsFrom = (firstRow: number, column: EncodedColumn) =>
    tableRows(
      {
        source: '/data/in.csv',
        rowCount: column.codes.length,
        columns: [column],
        delimiter: ',',
        origins: [{ source: '/data/in.csv', at: 0, firstRow }],
      },
      'csv',
    );
  const spec = parseHierarchy({ intervals: [10, 50] });

  it("counts each shard's own values and gives it tables of its own", () => {
    const a = buildHierarchy(shard([0, 1, 1]), spec);
    const b = buildHierarchy(shard([3, 4, 3, 0]), spec);
    expect(b.labels).toEqual(a.labels);
    expect(b.levelTables).toEqual(a.levelTables);
    expect([a.domain, b.domain]).toEqual([2, 3]);
    expect([a.rows, b.rows]).toEqual([2, 3]);
    expect(Array.from(a.leaves[1]!)).toEqual([2, 0, 0, 0]);
    expect(Array.from(b.leaves[1]!)).toEqual([1, 0, 1, 1]);
    expect(Array.from(b.rowsUnder[2]!)).toEqual([2, 0, 1]);
    // What one caller changes, the next shard's hierarchy does not see.
    a.levelTables[1]![0] = 99;
    a.labels[1]![0] = 'changed';
    const c = buildHierarchy(shard([0]), spec);
    expect(c.levelTables[1]![0]).toBe(0);
    expect(c.labels[1]![0]).toBe('[0,10)');
  });

  it('refuses a shard whose rows hold a value the builder refused, naming its row in the input', () => {
    buildHierarchy(shard([0, 1]), spec);
    const bad = shard([0, 2, 2]);
    const e = thrown(() => buildHierarchy(bad, spec, rowsFrom(100, bad)));
    expect(e.message).toContain("in.csv row 103, column 'age': not a number");
    // A shard without it is released.
    expect(buildHierarchy(shard([3]), spec).domain).toBe(1);
  });
});

describe('rows named where they are in the input', () => {
  // A folder's rows are named by their file and its row; a sheet's by its cell (its header
  // may be below row 1); an Arrow or Parquet file's by its row, counted from 1 (no header).
  const header = 'id,age,sex,d';
  const good = ['1,34,F,2021-01-04', '2,51,M,2021-02-11', '3,29,F,2021-03-20'];
  const attributes = {
    id: { type: 'identifying' },
    age: { type: 'quasi-identifying', hierarchy: { intervals: [10] } },
    sex: { type: 'quasi-identifying', hierarchy: 'sex.csv' },
    d: { type: 'quasi-identifying', hierarchy: { date: 'YYYY-MM-DD' } },
  };
  let cases = 0;

  /** A folder holding `files` (name → contents), its spec and sex.csv; the folder's path and the spec's. */
  function folder(files: Record<string, string | Uint8Array>, method: object = { name: 'generalization' }) {
    const root = join(dir, `rows-${cases++}`);
    mkdirSync(join(root, 'in'), { recursive: true });
    for (const [name, contents] of Object.entries(files)) writeFileSync(join(root, 'in', name), contents);
    writeFileSync(join(root, 'sex.csv'), 'F;*\nM;*\n');
    const spec = join(root, 'release.json');
    writeFileSync(
      spec,
      JSON.stringify({ input: 'in', attributes, privacy: [{ model: 'k-anonymity', k: 1 }], method }),
    );
    return { input: join(root, 'in'), spec, out: join(root, 'out') };
  }

  /** The error a release of `spec` fails with: read whole, and in shards of 2 rows. */
  async function refusals(spec: string, out: string): Promise<string[]> {
    const messages: string[] = [];
    for (const options of [{}, { rowsPerShard: 2 }]) {
      const e = await releaseTo(spec, `${out}-${messages.length}`, options).then(
        () => undefined,
        (err: unknown) => err,
      );
      if (!(e instanceof PpdpError)) throw new Error(`expected a refusal, got ${String(e)}`);
      messages.push(e.message);
    }
    return messages;
  }

  const csv = (rows: string[]) => `${[header, ...rows].join('\n')}\n`;

  it('names the file of a folder and its row, for a value a builder or a hierarchy file refuses in the second file', async () => {
    const date = folder({ 'a.csv': csv(good), 'b.csv': csv([...good, '4,40,M,SECRET']) });
    expect(await refusals(date.spec, date.out)).toEqual(
      Array(2).fill(
        "column 'd': 1 distinct value is not a date in the format 'YYYY-MM-DD' of its date builder (the first in b.csv row 5)",
      ),
    );
    const age = folder({ 'a.csv': csv(good), 'b.csv': csv(['4,SECRET,M,2021-01-01', ...good]) });
    expect(await refusals(age.spec, age.out)).toEqual(
      Array(2).fill("b.csv row 2, column 'age': not a number, but its hierarchy is an intervals builder"),
    );
    const sex = folder({ 'a.csv': csv(good), 'b.csv': csv([good[0]!, '5,40,SECRET,2021-01-01', ...good]) });
    expect(await refusals(sex.spec, sex.out)).toEqual(
      Array(2).fill(
        "sex.csv: a value of column 'sex' appears in the data but not in the hierarchy: 1 row, first in b.csv row 3",
      ),
    );
  });

  it("names a Mondrian numeric attribute's row in the folder's file", async () => {
    const numeric = folder(
      { 'a.csv': csv(good), 'b.csv': csv([...good, '4,SECRET,M,2021-01-01']) },
      { name: 'mondrian' },
    );
    const spec = JSON.parse(readFileSync(numeric.spec, 'utf8'));
    spec.attributes.age = { type: 'quasi-identifying', scale: 'numeric' };
    writeFileSync(numeric.spec, JSON.stringify(spec));
    const e = await releaseTo(numeric.spec, numeric.out).then(
      () => undefined,
      (err: unknown) => err as PpdpError,
    );
    expect(e?.message).toBe("b.csv row 5, column 'age': not a number, but the attribute is numeric");
  });

  it("ppdp hierarchy check (--data or --spec) names the rows the values it lacks are first in, in the folder's file", () => {
    const check = folder({ 'a.csv': csv(good), 'b.csv': csv([good[0]!, '5,40,X,2021-01-01', ...good]) });
    const sexCsv = join(check.input, '..', 'sex.csv');
    const expected =
      "sex.csv: a value of column 'sex' appears in the data but not in the hierarchy: 1 row, first in b.csv row 3";
    // The file as given on the command line; the spec's by its name.
    expect(
      thrown(() => hierarchyCommand(['check', sexCsv, '--data', check.input, '--column', 'sex'])).message,
    ).toBe(`${sexCsv.slice(0, -'sex.csv'.length)}${expected}`);
    expect(thrown(() => hierarchyCommand(['check', '--spec', check.spec, '--column', 'sex'])).message).toBe(
      expected,
    );
  });

  it('names the cell of a sheet whose header is below row 1, alone or in a folder', async () => {
    // Two empty rows above the header (row 3); the date column is C once id (A) is left out.
    const book = async (bad: boolean) => {
      const wb = new ExcelJS.Workbook();
      const sheet = wb.addWorksheet('Data');
      sheet.addRow([]);
      sheet.addRow([]);
      sheet.addRow(['id', 'age', 'd', 'sex']);
      for (const row of [...good, bad ? '4,40,M,SECRET' : '4,40,M,2021-05-05']) {
        const [id, age, sex, d] = row.split(',');
        sheet.addRow([Number(id), Number(age), d, sex]);
      }
      return Buffer.from(await wb.xlsx.writeBuffer());
    };
    const one = folder({ 'data.xlsx': await book(true) });
    expect(await refusals(one.spec, one.out)).toEqual(
      Array(2).fill(
        "column 'd': 1 distinct value is not a date in the format 'YYYY-MM-DD' of its date builder (the first in data.xlsx sheet \"Data\" cell C7)",
      ),
    );
    const two = folder({ '1.xlsx': await book(false), '2.xlsx': await book(true) });
    expect(await refusals(two.spec, two.out)).toEqual(
      Array(2).fill(
        "column 'd': 1 distinct value is not a date in the format 'YYYY-MM-DD' of its date builder (the first in 2.xlsx sheet \"Data\" cell C7)",
      ),
    );
  });

  it("names a Parquet file's row from 1: it has no header row", async () => {
    const parquet = (rows: string[]) => {
      const cells = rows.map((r) => r.split(','));
      const path = join(dir, `rows-${cases++}.parquet`);
      writeParquet(
        path,
        header
          .split(',')
          .map((name, i) => ({ name, data: cells.map((c) => c[i]!), type: 'STRING', nullable: false })),
      );
      return readFileSync(path);
    };
    const files = folder({ '1.parquet': parquet(good), '2.parquet': parquet([...good, '4,40,M,SECRET']) });
    expect(await refusals(files.spec, files.out)).toEqual(
      Array(2).fill(
        "column 'd': 1 distinct value is not a date in the format 'YYYY-MM-DD' of its date builder (the first in 2.parquet row 4)",
      ),
    );
  });
});
