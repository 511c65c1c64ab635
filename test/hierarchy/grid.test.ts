import { describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import { HierarchyError } from '../../src/errors.ts';
import { buildHierarchy, hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import type { HierarchySpec } from '../../src/release-spec/spec.ts';

function column(dictionary: string[], name = 'c'): EncodedColumn {
  return { name, dictionary, codes: Int32Array.from(dictionary, (_, i) => i) };
}

describe('hierarchies built as grids of label codes', () => {
  it('a mask over 300,000 distinct values builds, each label masked as one value alone would be', () => {
    const values = Array.from({ length: 300_000 }, (_, i) => String(100_000 + i * 3));
    const c = column(values, 'postcode');
    const h = buildHierarchy(c, { kind: 'mask', direction: 'right' });
    expect(h.height).toBe(6);
    expect(h.labels.map((l) => l.length)).toEqual([300_000, 90_000, 9_000, 900, 90, 9, 1]);
    const code = values.indexOf('472345');
    expect(h.levelTables.map((t, l) => h.labels[l]![t[code]!])).toEqual([
      '472345',
      '47234*',
      '4723**',
      '472***',
      '47****',
      '4*****',
      '*',
    ]);
    // Every value's leaves: the 10-wide level-1 block holds 3 or 4 of the values (a step of 3).
    expect(Math.max(...h.leaves[1]!)).toBe(4);
    expect(h.domain).toBe(300_000);
  });

  it('a groups builder whose mappings swap two labels is refused as a cycle, naming it', () => {
    const c = column(['a', 'b']);
    const spec: HierarchySpec = {
      kind: 'groups',
      levels: [
        { a: 'b', b: 'a' },
        { a: '*', b: '*' },
      ],
    };
    expect(hierarchyRows(c, spec)).toEqual([
      ['a', 'b', '*'],
      ['b', 'a', '*'],
    ]);
    let error: unknown;
    try {
      buildHierarchy(c, spec);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(HierarchyError);
    expect((error as HierarchyError).code).toBe('E_HIERARCHY_CYCLE');
    expect((error as HierarchyError).message).toBe(
      "groups builder row 2: the hierarchy of 'c' has a cycle: a label generalizes, level by level, back to itself (through rows 1 and 2)",
    );
  });
});
