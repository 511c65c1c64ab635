import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import { HierarchyError, SpecError } from '../../src/errors.ts';
import { buildHierarchy, hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { type HierarchySpec, parseSpec } from '../../src/release-spec/spec.ts';

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

function thrown(f: () => unknown): HierarchyError | SpecError {
  try {
    f();
  } catch (e) {
    if (e instanceof HierarchyError || e instanceof SpecError) return e;
    throw e;
  }
  throw new Error('expected an error');
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
      "column 'c' row 3: not a number, but its hierarchy is an intervals builder (2 distinct values are not numbers)",
    );
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
      "short.csv: 2 values of column 'c' appear in the data but not in the hierarchy: 3 rows, first in rows 3, 4 of the input",
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
  const shard = (codes: number[], firstRow: number): EncodedColumn => ({
    name: 'age',
    dictionary: [...dictionary],
    codes: Int32Array.from(codes),
    firstRow,
  });
  const spec = parseHierarchy({ intervals: [10, 50] });

  it("counts each shard's own values and gives it tables of its own", () => {
    const a = buildHierarchy(shard([0, 1, 1], 0), spec);
    const b = buildHierarchy(shard([3, 4, 3, 0], 3), spec);
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
    const c = buildHierarchy(shard([0], 9), spec);
    expect(c.levelTables[1]![0]).toBe(0);
    expect(c.labels[1]![0]).toBe('[0,10)');
  });

  it('refuses a shard whose rows hold a value the builder refused, naming its row in the input', () => {
    buildHierarchy(shard([0, 1], 0), spec);
    const e = thrown(() => buildHierarchy(shard([0, 2, 2], 100), spec));
    expect(e.message).toContain("column 'age' row 103: not a number");
    // A shard without it is released.
    expect(buildHierarchy(shard([3], 200), spec).domain).toBe(1);
  });
});
