/**
 * Cell suppression (docs/definitions.md, "Cell suppression"): the release on Adult through the
 * engine, the wildcard property recounted here from the released rows, the verifier rejecting a
 * release with one cell put back, and the spec's checks.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { readArrow } from '../../src/data/arrow.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import {
  cellDescent,
  suppressCells,
  suppressionOrder,
} from '../../src/methods/generalization/cell-suppression.ts';
import {
  openSearch,
  prepareGeneralization,
  search,
  searchRandom,
} from '../../src/methods/generalization/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { verifyCellSuppression } from '../../src/verify/cell-suppression.ts';
import { verifierHierarchyRows } from '../../src/verify/hierarchy.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const K = 5;

/** A copy of Adult released with cell suppression at k = 5 and the same node as rows would take. */
async function cellRelease(edit: (method: Record<string, unknown>) => void = () => {}) {
  const ws = adultWorkspace();
  ws.editSpec((s) => {
    const method = s.method as Record<string, unknown>;
    method.suppression = 'cells';
    method.importance = { age: 3, education: 2 };
    edit(method);
  });
  const out = join(ws.dir, 'out');
  const { report } = await releaseTo(ws.spec, out);
  return { ws, out, report };
}

/** Per released row, the number of released rows consistent with it (`*` matching all), from the file alone. */
function smallestConsistentCount(table: EncodedTable, qis: readonly string[]): number {
  const cols = qis.map((q) => table.columns.find((c) => c.name === q)!);
  const rows = Array.from({ length: table.rowCount }, (_, r) => cols.map((c) => c.dictionary[c.codes[r]!]!));
  const patterns = new Map<string, { cells: string[]; n: number }>();
  for (const cells of rows) {
    if (cells.every((v) => v === '*')) continue;
    const key = cells.join('\u0000');
    const p = patterns.get(key);
    if (p) p.n++;
    else patterns.set(key, { cells, n: 1 });
  }
  const list = [...patterns.values()];
  let least = Number.POSITIVE_INFINITY;
  // A row's own values are at least as specific as its cells: checking its pattern against every
  // other pattern (each `*` in either matching) bounds what any of its true values can reach.
  for (const p of list) {
    let n = 0;
    for (const q of list) if (q.cells.every((v, i) => v === '*' || v === p.cells[i])) n += q.n;
    least = Math.min(least, n);
  }
  return least;
}

describe('cell suppression on Adult (k = 5)', async () => {
  const { ws, out, report } = await cellRelease();
  const spec = loadSpec(ws.spec);
  const qis = spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name);
  const released = readArrow(join(out, 'data.arrow'));

  it('keeps rows and suppresses fewer cells than row suppression would', () => {
    const cells = report.generalization?.cellSuppression;
    expect(cells).toBeDefined();
    expect(cells!.cells).toBeGreaterThan(0);
    expect(cells!.cells + cells!.fallbackRows * qis.length).toBeLessThan(cells!.rowSuppressionCells);
    expect(report.rows.suppressed).toBe(cells!.fallbackRows);
    expect(Object.values(cells!.perAttribute).reduce((a, b) => a + b, 0)).toBe(cells!.cells);
    expect(report.verification.verified).toBe(true);
  });

  it('suppresses the least important attributes first', () => {
    const { perAttribute: per, order } = report.generalization!.cellSuppression!;
    // age and education have importance (3 and 2): they come last, education before age.
    expect(order.slice(-2)).toEqual(['education', 'age']);
    // Each step suppresses one more attribute of the order: cells only fall along it.
    for (let j = 1; j < order.length; j++) expect(per[order[j]!]).toBeLessThanOrEqual(per[order[j - 1]!]!);
  });

  it('every released record has at least k consistent records (recounted from data.arrow)', () => {
    const suppressedCells = qis
      .map((q) => released.columns.find((c) => c.name === q)!)
      .reduce((n, c) => n + c.codes.filter((code) => c.dictionary[code] === '*').length, 0);
    expect(suppressedCells).toBeGreaterThan(0);
    expect(smallestConsistentCount(released, qis)).toBeGreaterThanOrEqual(K);
  });

  it('the report.html shows the cells suppressed', () => {
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('Cell suppression');
    expect(html).toContain('Cells suppressed');
  });

  it('the verifier rejects the release with suppressed cells put back', () => {
    const input = readInput(spec);
    const hierarchyRows = new Map(
      spec.attributes
        .filter((a) => a.type === 'quasi-identifying')
        .map((a) => [
          a.name,
          verifierHierarchyRows(input.columns.find((c) => c.name === a.name)!, a.hierarchy!),
        ]),
    );
    const claims = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    const cells = claims.generalization.cellSuppression.perAttribute as Record<string, number>;
    const verify = (arrow: EncodedTable, perAttribute = cells) =>
      verifyCellSuppression({
        input,
        attributes: spec.attributes,
        hierarchyRows,
        arrow,
        claims: {
          node: claims.generalization.node,
          k: K,
          maxSuppressedRows: Math.floor(0.02 * input.rowCount),
          suppressed: 'mask',
          suppressedRows: claims.rows.suppressed,
          classes: claims.privacy.classes,
          minClassSize: claims.privacy.k,
          cells: perAttribute,
        },
      });
    expect(() => verify(released)).not.toThrow();
    // Suppressed cells put back to their generalized values until a record is exposed.
    const tampered = putBackCells(released, input, qis, claims.generalization.node, hierarchyRows);
    expect(tampered).toBeDefined();
    const fewer = Object.fromEntries(
      Object.entries(cells).map(([q, n]) => [q, n - (tampered!.perAttribute[q] ?? 0)]),
    );
    expect(() => verify(tampered!.table, fewer)).toThrow(/k-anonymity-wildcard/);
  });
});

/** Released rows (not every QI `*`) whose every QI cell is `*` or `v`'s value. */
function consistentCount(table: EncodedTable, qis: readonly string[], v: readonly string[]): number {
  const cols = qis.map((q) => table.columns.find((c) => c.name === q)!);
  let n = 0;
  for (let r = 0; r < table.rowCount; r++) {
    let all = true;
    let ok = true;
    for (let i = 0; i < cols.length && ok; i++) {
      const cell = cols[i]!.dictionary[cols[i]!.codes[r]!]!;
      if (cell !== '*') all = false;
      ok = cell === '*' || cell === v[i];
    }
    if (ok && !all) n++;
  }
  return n;
}

/**
 * The release with the `*` cells of one most-suppressed group put back, one at a time, each to
 * the generalized value of an input row the record may stand for (its other columns equal), until
 * some input row of the group has fewer than k consistent released records: the fewest cells
 * whose return breaks the property. Undefined when none does.
 */
function putBackCells(
  released: EncodedTable,
  input: EncodedTable,
  qis: readonly string[],
  node: Record<string, number>,
  hierarchyRows: ReadonlyMap<string, string[][]>,
): { table: EncodedTable; perAttribute: Record<string, number> } | undefined {
  const columns = released.columns.map((c) => ({
    ...c,
    dictionary: [...c.dictionary],
    codes: c.codes.slice(),
  }));
  const table = { ...released, columns };
  const cols = qis.map((q) => columns.find((c) => c.name === q)!);
  const cell = (r: number, i: number) => cols[i]!.dictionary[cols[i]!.codes[r]!]!;
  const generalize = qis.map((q) => {
    const map = new Map(hierarchyRows.get(q)!.map((row) => [row[0]!, row[node[q]!]!]));
    const c = input.columns.find((x) => x.name === q)!;
    return (u: number) => map.get(c.dictionary[c.codes[u]!]!)!;
  });
  const others = columns.filter((c) => !qis.includes(c.name));
  const sameOthers = (r: number, u: number) =>
    others.every((c) => {
      const ic = input.columns.find((y) => y.name === c.name)!;
      return c.dictionary[c.codes[r]!] === ic.dictionary[ic.codes[u]!];
    });
  const byPattern = new Map<string, number[]>();
  for (let r = 0; r < released.rowCount; r++) {
    const key = qis.map((_, i) => cell(r, i)).join('\u0000');
    byPattern.set(key, [...(byPattern.get(key) ?? []), r]);
  }
  const stars = (r: number) => qis.filter((_, i) => cell(r, i) === '*').length;
  const groups = [...byPattern.values()]
    .filter((rows) => stars(rows[0]!) > 0 && stars(rows[0]!) < qis.length)
    .sort((a, b) => stars(b[0]!) - stars(a[0]!) || a.length - b.length);
  const deepest = groups[0];
  if (!deepest) return undefined;
  const pattern = qis.map((_, i) => cell(deepest[0]!, i));
  const sources: number[] = [];
  for (let u = 0; u < input.rowCount; u++) {
    if (qis.every((_, i) => pattern[i] === '*' || pattern[i] === generalize[i]!(u))) sources.push(u);
  }
  const tuples = [
    ...new Map(
      sources.map((u) => {
        const v = qis.map((_, y) => generalize[y]!(u));
        return [v.join('\u0000'), v] as const;
      }),
    ).values(),
  ];
  const put: Record<string, number> = {};
  const used = new Set<number>();
  for (const r of deepest) {
    const u = sources.find((x) => !used.has(x) && sameOthers(r, x));
    if (u === undefined) continue;
    used.add(u);
    for (let i = 0; i < qis.length; i++) {
      if (cell(r, i) !== '*') continue;
      const value = generalize[i]!(u);
      let code = cols[i]!.dictionary.indexOf(value);
      if (code < 0) code = cols[i]!.dictionary.push(value) - 1;
      cols[i]!.codes[r] = code;
      put[qis[i]!] = (put[qis[i]!] ?? 0) + 1;
      const broken = tuples.some((v) => consistentCount(table, qis, v) < K);
      if (broken) return { table, perAttribute: put };
    }
  }
  return undefined;
}

/** A table of string columns, dictionary-encoded. */
function tableOf(columns: Record<string, string[]>): EncodedTable {
  const names = Object.keys(columns);
  return {
    rowCount: columns[names[0]!]!.length,
    delimiter: ',',
    columns: names.map((name) => {
      const dictionary: string[] = [];
      const codes = Int32Array.from(columns[name]!, (v) => {
        const k = dictionary.indexOf(v);
        return k >= 0 ? k : dictionary.push(v) - 1;
      });
      return { name, dictionary, codes };
    }),
  } as EncodedTable;
}

describe('cell suppression with rows suppressed whole removed', async () => {
  // k = 10 and 5 %: some records no cells protect, removed.
  const ws = adultWorkspace();
  ws.editSpec((s) => {
    s.method = { ...(s.method as object), suppression: 'cells', suppressed: 'remove', maxSuppression: 0.05 };
    s.privacy = [{ model: 'k-anonymity', k: 10 }];
  });
  const out = join(ws.dir, 'out');
  const { report } = await releaseTo(ws.spec, out);

  it('releases every row but those suppressed whole, verified', () => {
    const cells = report.generalization!.cellSuppression!;
    expect(cells.cells).toBeGreaterThan(0);
    expect(report.rows.suppressed).toBe(cells.fallbackRows);
    expect(cells.fallbackRows).toBeGreaterThan(0);
    expect(report.rows.released).toBe(report.rows.input - cells.fallbackRows);
    expect(readArrow(join(out, 'data.arrow')).rowCount).toBe(report.rows.released);
    expect(report.verification.verified).toBe(true);
  });
});

describe('the wildcard verifier on a small release (k = 2)', () => {
  // Two QIs with a one-step hierarchy each (value → *), node at level 0. The class (a1, b1) has
  // 2 rows; (a2, b2) and (a2, b3) have 1 each: b suppressed in both makes the group (a2, *) of 2.
  const input = tableOf({
    a: ['a1', 'a1', 'a2', 'a2'],
    b: ['b1', 'b1', 'b2', 'b3'],
    s: ['x', 'y', 'z', 'w'],
  });
  const attributes = [
    { name: 'a', type: 'quasi-identifying', hierarchy: undefined, scale: 'nominal' },
    { name: 'b', type: 'quasi-identifying', hierarchy: undefined, scale: 'nominal' },
    { name: 's', type: 'insensitive', hierarchy: undefined, scale: 'nominal' },
  ] as const;
  const hierarchyRows = new Map([
    ['a', ['a1', 'a2'].map((v) => [v, '*'])],
    ['b', ['b1', 'b2', 'b3'].map((v) => [v, '*'])],
  ]);
  const claims = {
    node: { a: 0, b: 0 },
    k: 2,
    maxSuppressedRows: 2,
    suppressed: 'mask' as const,
    suppressedRows: 0,
    classes: 2,
    minClassSize: 2,
    cells: { a: 0, b: 2 },
  };
  const verify = (released: EncodedTable, over: Partial<typeof claims> = {}) =>
    verifyCellSuppression({
      input,
      attributes: attributes.map((a) => ({ ...a })),
      hierarchyRows: new Map(
        [...hierarchyRows].map(([k, rows]) => [k, rows.map((r) => [r[0]!, r[0]!, r[1]!])]),
      ),
      arrow: released,
      claims: { ...claims, ...over },
    });

  it('accepts the release with both b cells suppressed', () => {
    const ok = tableOf({ a: ['a2', 'a1', 'a2', 'a1'], b: ['*', 'b1', '*', 'b1'], s: ['w', 'y', 'z', 'x'] });
    expect(verify(ok).every((c) => c.passed)).toBe(true);
  });

  it('rejects it with one b cell put back: (a2, b3) then has one consistent record', () => {
    const back = tableOf({
      a: ['a2', 'a1', 'a2', 'a1'],
      b: ['*', 'b1', 'b2', 'b1'],
      s: ['w', 'y', 'z', 'x'],
    });
    expect(() => verify(back, { cells: { a: 0, b: 1 }, classes: 3, minClassSize: 1 })).toThrow(
      /k-anonymity-wildcard/,
    );
  });

  it('rejects a suppressed cell the claims do not count, and a row that generalizes no input row', () => {
    const ok = tableOf({ a: ['a2', 'a1', 'a2', 'a1'], b: ['*', 'b1', '*', 'b1'], s: ['w', 'y', 'z', 'x'] });
    expect(() => verify(ok, { cells: { a: 0, b: 1 } })).toThrow(/cells-suppressed/);
    // Two rows lose a cell: over a limit of one row.
    expect(() => verify(ok, { maxSuppressedRows: 1 })).toThrow(/suppression \(0 rows suppressed whole/);
    const wrong = tableOf({
      a: ['a2', 'a1', 'a1', 'a1'],
      b: ['*', 'b1', '*', 'b1'],
      s: ['w', 'y', 'z', 'x'],
    });
    expect(() => verify(wrong)).toThrow(/rows-generalize-input/);
  });
});

describe('the spec', () => {
  const parse = (method: Record<string, unknown>, privacy: unknown[] = [{ model: 'k-anonymity', k: 5 }]) => {
    const ws = adultWorkspace(50);
    ws.editSpec((s) => {
      s.method = { ...(s.method as object), ...method };
      s.privacy = privacy;
    });
    return loadSpec(ws.spec);
  };

  it('leaves a spec without the settings as it was', () => {
    const method = parse({}).method;
    expect('suppression' in method).toBe(false);
    expect('importance' in method).toBe(false);
  });

  it('reads suppression and importance', () => {
    const method = parse({ suppression: 'cells', importance: { age: 2 } }).method;
    expect(method).toMatchObject({ suppression: 'cells', importance: { age: 2 } });
  });

  it('names a wrong setting', () => {
    expect(() => parse({ suppression: 'cell' })).toThrow(/method\.suppression/);
    expect(() => parse({ suppression: 'cells', importance: { agee: 1 } })).toThrow(/did you mean 'age'/);
    expect(() => parse({ suppression: 'cells', importance: { age: -1 } })).toThrow(/method\.importance\.age/);
    expect(() => parse({ importance: { age: 1 } })).toThrow(/cell suppression only/);
  });

  it('refuses a model other than k-anonymity by name', () => {
    expect(() =>
      parse({ suppression: 'cells' }, [
        { model: 'k-anonymity', k: 5 },
        { model: 'distinct-l-diversity', attribute: 'occupation', l: 2 },
      ]),
    ).toThrow(/privacy\[1\] is distinct-l-diversity/);
  });
});

describe('the algorithm', () => {
  it('protects every class below k or suppresses it whole, deterministically', () => {
    const base = loadSpec(new URL('../../examples/adult/release.json', import.meta.url).pathname);
    const spec = { ...base, method: { ...base.method, suppression: 'cells' as const } };
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    // A node with many small classes: every QI at level 1 or its top, whichever is lower.
    const levels = prepared.hierarchies.map((h) => Math.min(1, h.height));
    const node = evaluator.complete(evaluator.evaluate(prepared.problem.lattice.index(levels)));
    const spec0 = { ...prepared, method: { ...prepared.method, maxSuppression: 1 } };
    const problem = { ...prepared.problem, maxSuppressedRows: prepared.table.rowCount };
    const a = suppressCells({ ...spec0, problem }, node, K)!;
    const b = suppressCells({ ...spec0, problem }, node, K)!;
    expect(Array.from(a.depth)).toEqual(Array.from(b.depth));
    expect(a.smallRows).toBeGreaterThan(0);
    expect(a.protectedRows + a.fallbackRows).toBe(a.smallRows);
    expect(a.minClassSize).toBeGreaterThanOrEqual(K);
    expect(a.cells + a.fallbackRows * levels.length).toBeLessThan(a.smallRows * levels.length);
    expect(suppressionOrder(prepared, levels)).toEqual(a.order);
    evaluator.dispose();
  });

  it('descends from the searched node to a better one with cells, within the limit; keeps a given node', () => {
    const base = loadSpec(new URL('../../examples/adult/release.json', import.meta.url).pathname);
    const spec = {
      ...base,
      privacy: [{ model: 'k-anonymity' as const, k: 20 }],
      method: { ...base.method, maxSuppression: 0.1, suppression: 'cells' as const },
    };
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const found = search(prepared, wasmGroupingKernel, undefined, { random: searchRandom(spec) });
    const { metrics, metric, maxSuppressedRows } = prepared.problem;
    const valueAt = (d: ReturnType<typeof cellDescent>) =>
      metrics.values(d.node.levels, d.cells.released, metric)[metric];
    const kept = cellDescent(prepared, found.evaluator, found.best, true);
    const moved = cellDescent(prepared, found.evaluator, found.best, false);
    expect(kept.node.levels).toEqual(found.best.levels);
    expect(moved.node.levels).not.toEqual(found.best.levels);
    expect(valueAt(moved)).toBeLessThan(valueAt(kept));
    expect(moved.cells.smallRows).toBeLessThanOrEqual(maxSuppressedRows);
    // Each step goes one level down on one QI.
    expect(moved.node.levels.every((l, i) => l <= found.best.levels[i]!)).toBe(true);
    found.evaluator.dispose();
  });
});
