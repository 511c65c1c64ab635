import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type EncodedColumn, type EncodedTable, presentCodes } from '../../src/data/table.ts';
import { collapseRows } from '../../src/data/tuples.ts';
import { buildHierarchy } from '../../src/hierarchy/hierarchy.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { applyGeneralization } from '../../src/methods/generalization/apply.ts';
import { openSearch } from '../../src/methods/generalization/index.ts';
import { Lattice } from '../../src/methods/generalization/lattice.ts';
import type { AttributeSpec } from '../../src/release-spec/spec.ts';
import { gather } from '../../src/util/gather.ts';
import { Random } from '../../src/util/random.ts';
import { adultSpec, prepareAdult } from '../helpers/adult.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-apply-tuples-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function column(name: string, values: string[]): EncodedColumn {
  const dictionary = [...new Set(values)];
  return { name, dictionary, codes: Int32Array.from(values, (v) => dictionary.indexOf(v)) };
}

/** A hierarchy file over `values`: level 1 their first letter, level 2 `*`. */
function hierarchyFile(name: string, values: readonly string[]): string {
  const path = join(dir, `${name}.csv`);
  writeFileSync(path, `${[...new Set(values)].map((v) => `${v};${v[0]};*`).join('\n')}\n`);
  return path;
}

/** The tuples' classes under the level tables `maps` (numbered by first tuple), and each class's first tuple. */
function classesAt(
  columns: readonly Int32Array[],
  maps: readonly Int32Array[],
): { of: Int32Array; reps: Int32Array } {
  const ids = new Map<string, number>();
  const reps: number[] = [];
  const of = Int32Array.from({ length: columns[0]!.length }, (_, t) => {
    const key = columns.map((c, i) => maps[i]![c[t]!]).join(',');
    if (!ids.has(key)) ids.set(key, reps.push(t) - 1);
    return ids.get(key)!;
  });
  return { of, reps: Int32Array.from(reps) };
}

describe('the released columns made per distinct tuple', () => {
  it('are the columns made per row, as are those made per class: the same labels, codes and dictionaries, in the same shuffled order', () => {
    const random = new Random(11);
    const rows = 3000;
    const pick = (prefix: string, n: number) =>
      Array.from({ length: rows }, () => `${'abcdef'[random.below(6)]}${prefix}${random.below(n)}`);
    const a = column('a', pick('x', 30));
    const b = column('b', pick('y', 4));
    const c = column('c', pick('z', 50));
    const table: EncodedTable = { rowCount: rows, columns: [a, b, c], delimiter: ';' } as EncodedTable;
    const attributes = [
      { name: 'a', type: 'quasi-identifying' },
      { name: 'b', type: 'quasi-identifying' },
      { name: 'c', type: 'insensitive' },
    ] as AttributeSpec[];
    const hierarchies = new Map(
      [a, b].map((col) => [
        col.name,
        buildHierarchy(col, { kind: 'file', path: hierarchyFile(col.name, col.dictionary) }),
      ]),
    );
    const tuples = collapseRows(tsGroupingKernel, [a, b]);
    // Every third tuple's rows suppressed (removed).
    const suppressedRow = Uint8Array.from(tuples.rowToTuple, (t) => (t % 3 === 0 ? 1 : 0));
    for (const node of [
      { a: 0, b: 0 },
      { a: 1, b: 0 },
      { a: 2, b: 1 },
    ]) {
      const input = {
        table,
        attributes,
        hierarchies,
        node,
        suppressedRow,
        suppressed: 'remove' as const,
      };
      const perRow = applyGeneralization({ ...input, shuffleWith: new Random(5) });
      const perTuple = applyGeneralization({
        ...input,
        shuffleWith: new Random(5),
        tuples: { rowToTuple: tuples.rowToTuple, names: ['a', 'b'], columns: tuples.columns },
      });
      expect(perTuple).toEqual(perRow);
      // Made per class (the tuples grouped by their labels at the node): the same again.
      const perClass = applyGeneralization({
        ...input,
        shuffleWith: new Random(5),
        tuples: {
          rowToTuple: tuples.rowToTuple,
          names: ['a', 'b'],
          columns: tuples.columns,
          classes: classesAt(
            tuples.columns,
            [a.name, b.name].map((q) => hierarchies.get(q)!.levelTables[node[q as 'a' | 'b']]!),
          ),
        },
      });
      expect(perClass).toEqual(perRow);
      expect(perTuple[0]!.kind === 'dictionary' && perTuple[0]!.codes.length).toBe(
        suppressedRow.length - suppressedRow.reduce((s, x) => s + x, 0),
      );
    }
  });
});

describe('the lattice', () => {
  it("gives a node's levels alike before and after it tabulates them", () => {
    const heights = [1, 4, 2, 3, 0, 2];
    const fresh = new Lattice(heights);
    const before = Array.from({ length: fresh.size }, (_, id) => fresh.levels(id));
    // The first level asked makes the table; levels() then reads it.
    expect(fresh.level(fresh.top, 1)).toBe(4);
    const after = Array.from({ length: fresh.size }, (_, id) => fresh.levels(id));
    expect(after).toEqual(before);
    for (let id = 0; id < fresh.size; id++) {
      expect(fresh.index(before[id]!)).toBe(id);
      for (let i = 0; i < heights.length; i++) expect(fresh.level(id, i)).toBe(before[id]![i]);
    }
    expect(before[fresh.top]).toEqual(heights);
  });
});

describe('a hierarchy file kept per dictionary', () => {
  it('is read again on every build: a changed file gives its new labels', () => {
    const col = column('q', ['ab', 'ac', 'bd', 'ab']);
    const path = join(dir, 'changing.csv');
    writeFileSync(path, 'ab;a;*\nac;a;*\nbd;b;*\n');
    const first = buildHierarchy(col, { kind: 'file', path });
    expect(first.labels[1]).toEqual(['a', 'b']);
    // The same text and dictionary again: the same hierarchy.
    expect(buildHierarchy(col, { kind: 'file', path })).toEqual(first);
    writeFileSync(path, 'ab;x;*\nac;y;*\nbd;y;*\n');
    const second = buildHierarchy(col, { kind: 'file', path });
    expect(second.labels[1]).toEqual(['x', 'y']);
    expect(second.levelTables[1]).toEqual(Int32Array.from([0, 1, 1]));
    // Another column's rows under the same dictionary are counted afresh (domain: values present).
    const fewer = { ...col, codes: Int32Array.from([0, 0]) };
    expect(buildHierarchy(fewer, { kind: 'file', path }).domain).toBe(1);
    expect(buildHierarchy(col, { kind: 'file', path }).domain).toBe(3);
  });
});

describe('the codes present in a column', () => {
  it('are those its rows hold, whether or not every dictionary entry is among them', () => {
    const all = { name: 'c', dictionary: ['a', 'b', 'c'], codes: Int32Array.from([2, 0, 1, 1, 0, 2, 2]) };
    expect([...presentCodes(all)]).toEqual([1, 1, 1]);
    const some = { ...all, codes: Int32Array.from([2, 2, 0, 2, 0, 0, 0, 2]) };
    expect([...presentCodes(some)]).toEqual([1, 0, 1]);
    // The last row alone holds a code.
    expect([...presentCodes({ ...all, codes: Int32Array.from([0, 0, 0, 0, 1]) })]).toEqual([1, 1, 0]);
    expect([...presentCodes({ ...all, codes: new Int32Array(0) })]).toEqual([0, 0, 0]);
  });
});

describe('a shuffle in place', () => {
  it('puts at each position the value the permutation of the same draws names there', () => {
    for (const n of [0, 1, 2, 7, 1000]) {
      const values = Int32Array.from({ length: n }, (_, i) => 3 * i + 1);
      const p = new Random(21).permutation(n);
      const shuffled = new Random(21).shuffle(values.slice());
      expect([...shuffled]).toEqual([...p].map((j) => values[j]!));
    }
  });
});

describe('the bottom classes of tuples that carry the quasi-identifiers alone', () => {
  it('are the tuples, as grouping finds them; a node groups alike', () => {
    const base = adultSpec();
    const spec = {
      ...base,
      attributes: base.attributes.map((a) =>
        a.type === 'sensitive' ? { ...a, type: 'insensitive' as const } : a,
      ),
    };
    const prepared = prepareAdult(spec);
    expect(prepared.sensitive).toEqual([]);
    const taken = openSearch(prepared, wasmGroupingKernel);
    expect(taken.distinctTuples).toBe(true);
    const grouped = openSearch(prepared, wasmGroupingKernel);
    grouped.distinctTuples = false;
    const distinct = new Set(
      Array.from(prepared.table.columns[0]!.codes, (_, r) => prepared.qis.map((q) => q.codes[r]).join(',')),
    ).size;
    expect(taken.inputClasses().groups).toBe(distinct);
    expect(grouped.inputClasses().groups).toBe(distinct);
    expect([...taken.inputClasses().groupOf]).toEqual([...grouped.inputClasses().groupOf]);
    const node = prepared.problem.lattice.index([0, 2, 1, 1, 2, 2, 1, 0]);
    const a = taken.evaluate(node);
    const b = grouped.evaluate(node);
    expect([a.groups, [...a.sizes], a.suppressedRows, a.value]).toEqual([
      b.groups,
      [...b.sizes],
      b.suppressedRows,
      b.value,
    ]);
    taken.dispose();
    grouped.dispose();
  });
});

describe('a gather', () => {
  it('takes the source at every position named, in order, whatever the count left after fours', () => {
    const source = Int32Array.from({ length: 50 }, (_, i) => 1000 + i);
    for (let n = 0; n <= 9; n++) {
      const at = Int32Array.from({ length: n }, (_, i) => (i * 17 + 3) % 50);
      expect([...gather(source, at)]).toEqual([...at].map((i) => 1000 + i));
      const into = new Int32Array(n).fill(-1);
      expect(gather(source, at, into)).toBe(into);
      expect([...into]).toEqual([...at].map((i) => 1000 + i));
    }
  });
});
