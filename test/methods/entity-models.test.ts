/**
 * l-diversity, t-closeness and δ-disclosure over persons (docs/definitions.md, "Several rows per
 * person"): with an entity column each person of a class weighs 1, shared over their rows'
 * sensitive values there. A class that one person's many rows make diverse (or close to the
 * table) is not so by persons: the search repairs it, the verifier (which weighs persons from the
 * input itself) rejects a release judged by rows, every node is judged as a naive count over the
 * input's strings judges it, and the optimal search equals the exhaustive one.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EncodedTable } from '../../src/data/table.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { exhaustiveSearch, optimalSearch } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import {
  checkPersonClass,
  countPersons,
  personWeightedCounts,
  personWeightedTable,
} from '../../src/verify/entity.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { TupleCounts } from '../../src/verify/tuples.ts';
import { buildGeneralizationInMemory, releaseTo, stageBuilt } from '../helpers/release.ts';
import { failedChecks } from '../helpers/verify.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-entity-models-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let folders = 0;

const ZONE = { R1: 'North', R2: 'North', R3: 'North', R4: 'South', R5: 'South', R6: 'South' };
const REGIONS = Object.keys(ZONE);
const CATEGORIES = ['books', 'garden', 'toys', 'food', 'music'];

/** A spec folder with input.csv (`customer;age;region;sex;category`) and release.json. */
function fixture(rows: string[][], customer: string, privacy: object[], method: object = {}): string {
  const folder = join(dir, `f${folders++}`);
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'input.csv'),
    `customer;age;region;sex;category\n${rows.map((r) => r.join(';')).join('\n')}\n`,
  );
  const spec = {
    input: 'input.csv',
    format: { delimiter: ';' },
    attributes: {
      customer: { type: customer },
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
      region: { type: 'quasi-identifying', hierarchy: { groups: [ZONE] } },
      sex: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      category: { type: 'sensitive' },
    },
    privacy,
    method: { name: 'generalization', maxSuppression: 0, metric: 'ncp', ...method },
    seed: 1,
  };
  const path = join(folder, 'release.json');
  writeFileSync(path, JSON.stringify(spec));
  return path;
}

const build = buildGeneralizationInMemory;

/** Stages a built release's files in a fresh folder: the staged-file lookup. */
function stage(built: ReturnType<typeof build>): (name: string) => string {
  return stageBuilt(built, join(dir, `s${folders++}`));
}

/** `n` rows of one person with one value. */
function rowsOf(person: string, qi: [string, string, string], value: string, n = 1): string[][] {
  return Array.from({ length: n }, () => [person, ...qi, value]);
}

/**
 * Four classes at the bottom node. In the first, customer a has 10 books and 10 garden orders
 * and five customers one toys order each: by rows 10/10/5 (entropy 1.05 ≥ ln 2), by persons
 * a's weight of 1 is split 1/2 books, 1/2 garden, the toys weigh 5: 0.5/0.5/5 of 6 persons
 * (entropy 0.57 < ln 2). The other classes hold four customers with different values.
 */
function skewed(): string[][] {
  const first: [string, string, string] = ['31', 'R1', 'M'];
  return [
    ...rowsOf('a', first, 'books', 10),
    ...rowsOf('a', first, 'garden', 10),
    ...['b', 'c', 'd', 'e', 'f'].flatMap((p) => rowsOf(p, first, 'toys')),
    ...['g', 'h', 'i', 'j'].flatMap((p, i) => rowsOf(p, ['44', 'R2', 'F'], CATEGORIES[i]!)),
    ...['k', 'l', 'm', 'n'].flatMap((p, i) => rowsOf(p, ['52', 'R4', 'M'], CATEGORIES[i + 1]!)),
    ...['o', 'p', 'q', 'r'].flatMap((p, i) => rowsOf(p, ['67', 'R5', 'F'], CATEGORIES[(i + 2) % 5]!)),
  ];
}

describe('a class diverse by rows but not by persons', () => {
  const privacy = [
    { model: 'k-anonymity', k: 2 },
    { model: 'entropy-l-diversity', attribute: 'category', l: 2 },
  ];
  const rows = skewed();
  const byRows = loadSpec(fixture(rows, 'identifying', privacy));
  const byPersons = loadSpec(fixture(rows, 'entity', privacy));
  const table = readInput(byPersons);

  it('passes at the bottom node by rows, fails there by persons', () => {
    const rowSearch = openSearch(
      prepareGeneralization(byRows, table, wasmGroupingKernel),
      wasmGroupingKernel,
    );
    expect(rowSearch.evaluate(0).feasible).toBe(true);
    const personSearch = openSearch(
      prepareGeneralization(byPersons, table, wasmGroupingKernel),
      wasmGroupingKernel,
    );
    const bottom = personSearch.evaluate(0);
    expect(bottom.feasible).toBe(false);
    // The failing class is the first one (6 persons, 25 rows).
    const first = Array.from(bottom.sizes.subarray(0, bottom.groups)).indexOf(25);
    expect(bottom.persons![first]).toBe(6);
    expect(bottom.suppressed[first]).toBe(1);
  });

  it('the search repairs it by persons, and the verifier passes the repair', () => {
    const rowBuilt = build(byRows, table);
    const rowNode = (rowBuilt.claims as { node: Record<string, number> }).node;
    expect(Object.values(rowNode)).toEqual([0, 0, 0]);
    const built = build(byPersons, table);
    const node = (built.claims as { node: Record<string, number> }).node;
    expect(node).not.toEqual(rowNode);
    const checks = verifierFor('generalization').verify({
      spec: byPersons,
      table,
      claims: built.claims,
      staged: stage(built),
    });
    for (const name of ['persons', 'entropy-l-diversity', 'k-anonymity'])
      expect(checks.find((c) => c.name === name)?.passed, name).toBe(true);
  });

  it('the verifier rejects the release judged by rows', () => {
    const rowBuilt = build(byRows, table);
    const c = rowBuilt.claims as Record<string, unknown> & { enforced: Record<string, number> };
    const claims = {
      ...c,
      enforced: { ...c.enforced, maxSuppressedRows: table.rowCount, maxSuppressedPersons: 0 },
      entity: { suppressedPersons: 0, minClassPersons: 4 },
    };
    const failed = failedChecks(() =>
      verifierFor('generalization').verify({ spec: byPersons, table, claims, staged: stage(rowBuilt) }),
    );
    expect(failed).toEqual(['entropy-l-diversity']);
  });

  it('with suppression allowed, the bottom node suppresses that class whole, its 6 persons', () => {
    const spec = loadSpec(fixture(rows, 'entity', privacy, { maxSuppression: 0.4 }));
    const bottom = openSearch(
      prepareGeneralization(spec, table, wasmGroupingKernel),
      wasmGroupingKernel,
    ).evaluate(0);
    expect(bottom.feasible).toBe(true);
    expect(bottom.suppressedRows).toBe(25);
    expect(bottom.suppressedPersons).toBe(6);
    const built = build(spec, table);
    const checks = verifierFor('generalization').verify({
      spec,
      table,
      claims: built.claims,
      staged: stage(built),
    });
    for (const name of ['entropy-l-diversity', 'suppressed-persons'])
      expect(checks.find((x) => x.name === name)?.passed, name).toBe(true);
  });
});

describe('classes close to the table by rows but not by persons', () => {
  // Customer a's 10 books and 10 garden orders beside five toys customers; six customers with
  // one order each, two of each value. By rows both classes are near the table (books, garden,
  // toys 12/31, 12/31, 7/31: EMD 0.03 and 0.11); by persons the table is 2.5/12, 2.5/12, 7/12, the first class
  // 0.5/6, 0.5/6, 5/6 and the second a third each: both 0.25 from it in EMD.
  const first: [string, string, string] = ['31', 'R1', 'M'];
  const rows = [
    ...rowsOf('a', first, 'books', 10),
    ...rowsOf('a', first, 'garden', 10),
    ...['b', 'c', 'd', 'e', 'f'].flatMap((p) => rowsOf(p, first, 'toys')),
    ...['g', 'h', 'i', 'j', 'k', 'l'].flatMap((p, i) => rowsOf(p, ['44', 'R2', 'F'], CATEGORIES[i % 3]!)),
  ];
  const models = [
    { model: 't-closeness', attribute: 'category', t: 0.15, distance: 'equal' },
    { model: 'delta-disclosure', attribute: 'category', delta: 0.5 },
  ];

  it.each(models)(
    '$model: the bottom node passes by rows only; the verifier rejects the release by rows and passes the one by persons',
    (model) => {
      const byRows = loadSpec(fixture(rows, 'identifying', [model]));
      const byPersons = loadSpec(fixture(rows, 'entity', [model]));
      const table = readInput(byPersons);
      const rowBuilt = build(byRows, table);
      expect(Object.values((rowBuilt.claims as { node: Record<string, number> }).node)).toEqual([0, 0, 0]);
      const prepared = prepareGeneralization(byPersons, table, wasmGroupingKernel);
      expect(openSearch(prepared, wasmGroupingKernel).evaluate(0).feasible).toBe(false);
      const c = rowBuilt.claims as Record<string, unknown> & { enforced: Record<string, number> };
      const claims = {
        ...c,
        enforced: { ...c.enforced, maxSuppressedRows: table.rowCount, maxSuppressedPersons: 0 },
        entity: { suppressedPersons: 0, minClassPersons: 6 },
      };
      const failed = failedChecks(() =>
        verifierFor('generalization').verify({ spec: byPersons, table, claims, staged: stage(rowBuilt) }),
      );
      expect(failed).toEqual([model.model]);
      const built = build(byPersons, table);
      const checks = verifierFor('generalization').verify({
        spec: byPersons,
        table,
        claims: built.claims,
        staged: stage(built),
      });
      expect(checks.find((x) => x.name === model.model)?.passed).toBe(true);
    },
  );
});

describe('distinct l-diversity over persons', () => {
  // One customer's three values make the first class 3-diverse by rows; it has one person.
  const rows = [
    ...['books', 'garden', 'toys'].flatMap((v) => rowsOf('a', ['31', 'R1', 'M'], v)),
    ...['b', 'c', 'd'].flatMap((p, i) => rowsOf(p, ['44', 'R2', 'F'], CATEGORIES[i]!)),
    ...['e', 'f', 'g'].flatMap((p, i) => rowsOf(p, ['52', 'R4', 'M'], CATEGORIES[i + 2]!)),
  ];
  const privacy = [{ model: 'distinct-l-diversity', attribute: 'category', l: 3 }];

  it('a class of fewer than l persons fails whatever its values; the verifier rejects the release by rows', () => {
    const byRows = loadSpec(fixture(rows, 'identifying', privacy));
    const byPersons = loadSpec(fixture(rows, 'entity', privacy));
    const table = readInput(byPersons);
    const prepared = prepareGeneralization(byPersons, table, wasmGroupingKernel);
    expect(openSearch(prepared, wasmGroupingKernel).evaluate(0).feasible).toBe(false);
    const rowBuilt = build(byRows, table);
    expect(Object.values((rowBuilt.claims as { node: Record<string, number> }).node)).toEqual([0, 0, 0]);
    const c = rowBuilt.claims as Record<string, unknown> & { enforced: Record<string, number> };
    const claims = {
      ...c,
      enforced: { ...c.enforced, maxSuppressedRows: table.rowCount, maxSuppressedPersons: 0 },
      entity: { suppressedPersons: 0, minClassPersons: 1 },
    };
    const failed = failedChecks(() =>
      verifierFor('generalization').verify({ spec: byPersons, table, claims, staged: stage(rowBuilt) }),
    );
    expect(failed).toContain('distinct-l-diversity');
    const built = build(byPersons, table);
    const checks = verifierFor('generalization').verify({
      spec: byPersons,
      table,
      claims: built.claims,
      staged: stage(built),
    });
    expect(checks.find((x) => x.name === 'distinct-l-diversity')?.passed).toBe(true);
  });
});

/**
 * Orders by customers; a customer's age drifts between orders in a share of them, so that a
 * person's rows may lie in several classes.
 */
function orders(seed: number, customers: number, maxOrders: number): string[][] {
  const rng = new Random(seed);
  const rows: string[][] = [];
  for (let c = 0; c < customers; c++) {
    const age = 18 + rng.below(60);
    const region = REGIONS[rng.below(REGIONS.length)]!;
    const sex = rng.below(2) === 0 ? 'M' : 'F';
    const favourite = CATEGORIES[rng.below(5)]!;
    const n = 1 + rng.below(maxOrders);
    for (let o = 0; o < n; o++) {
      const drift = rng.below(4) === 0 ? rng.below(7) : 0;
      const category = rng.below(3) === 0 ? CATEGORIES[rng.below(5)]! : favourite;
      rows.push([`cust-${c}`, String(age + drift), region, sex, category]);
    }
  }
  return rows;
}

/**
 * A model's verdict on one class from its persons' weights and the table's person-weighted
 * shares (the formulas of docs/definitions.md §2).
 */
type Judge = (weights: Map<string, number>, persons: number, table: Map<string, number>) => boolean;

const JUDGES: Record<string, (m: { l: number; c?: number; t?: number; delta?: number }) => Judge> = {
  'distinct-l-diversity':
    ({ l }) =>
    (w, p) =>
      p >= l && [...w.values()].filter((x) => x > 0).length >= l,
  'entropy-l-diversity':
    ({ l }) =>
    (w, p) => {
      let h = 0;
      for (const x of w.values()) h -= (x / p) * Math.log(x / p);
      return p >= Math.ceil(l) && h >= Math.log(l) - 1e-9;
    },
  'recursive-cl-diversity':
    ({ l, c }) =>
    (w, p) => {
      const sorted = [...w.values()].sort((a, b) => b - a);
      if (p < l || sorted.length < l) return false;
      const tail = sorted.slice(l - 1).reduce((a, b) => a + b, 0);
      return sorted[0]! / tail < c!;
    },
  't-closeness':
    ({ t }) =>
    (w, p, table) => {
      let emd = 0;
      for (const [v, share] of table) emd += Math.abs((w.get(v) ?? 0) / p - share);
      return emd / 2 <= t! + 1e-9;
    },
  'delta-disclosure':
    ({ delta }) =>
    (w, p, table) =>
      [...w].every(([v, x]) => Math.abs(Math.log(x / p / table.get(v)!)) < delta!),
};

/** A node's feasibility counted naively over the input's strings, persons weighed per class. */
function naiveFeasible(
  table: EncodedTable,
  prepared: ReturnType<typeof prepareGeneralization>,
  levels: number[],
  k: number,
  judge: Judge,
  maxPersons: number,
): boolean {
  const column = (name: string) => table.columns.find((c) => c.name === name)!;
  const person = column('customer');
  const category = column('category');
  const keyOf = (r: number) =>
    prepared.qis.map((q, i) => prepared.hierarchies[i]!.levelTables[levels[i]!]![q.codes[r]!]).join(',');
  const classes = new Map<string, Map<string, string[]>>();
  for (let r = 0; r < table.rowCount; r++) {
    const key = keyOf(r);
    if (!classes.has(key)) classes.set(key, new Map());
    const byPerson = classes.get(key)!;
    const p = person.dictionary[person.codes[r]!]!;
    if (!byPerson.has(p)) byPerson.set(p, []);
    byPerson.get(p)!.push(category.dictionary[category.codes[r]!]!);
  }
  // The table's shares over persons: each person weighs 1 over all their rows.
  const all = new Map<string, string[]>();
  for (const byPerson of classes.values())
    for (const [p, values] of byPerson) all.set(p, [...(all.get(p) ?? []), ...values]);
  const shares = new Map<string, number>();
  for (const values of all.values())
    for (const v of values) shares.set(v, (shares.get(v) ?? 0) + 1 / values.length / all.size);
  const suppressed = new Set<string>();
  let retained = 0;
  for (const byPerson of classes.values()) {
    const weights = new Map<string, number>();
    for (const values of byPerson.values())
      for (const v of values) weights.set(v, (weights.get(v) ?? 0) + 1 / values.length);
    if (byPerson.size >= k && judge(weights, byPerson.size, shares)) retained++;
    else for (const p of byPerson.keys()) suppressed.add(p);
  }
  return retained > 0 && suppressed.size <= maxPersons;
}

describe('the searches with an entity column and l, t or δ', () => {
  const models = [
    { model: 'distinct-l-diversity', attribute: 'category', l: 2 },
    { model: 'entropy-l-diversity', attribute: 'category', l: 1.8 },
    { model: 'recursive-cl-diversity', attribute: 'category', c: 3, l: 2 },
    { model: 't-closeness', attribute: 'category', t: 0.2, distance: 'equal' },
    { model: 'delta-disclosure', attribute: 'category', delta: 1.2 },
  ];
  const cases = [
    { seed: 1, customers: 40, k: 2, maxSuppression: 0, model: 0 },
    { seed: 2, customers: 60, k: 3, maxSuppression: 0.05, model: 1 },
    { seed: 3, customers: 80, k: 2, maxSuppression: 0.2, model: 2 },
    { seed: 4, customers: 50, k: 1, maxSuppression: 0.1, model: 1 },
    { seed: 5, customers: 70, k: 2, maxSuppression: 0.1, model: 0 },
    { seed: 6, customers: 60, k: 2, maxSuppression: 0.1, model: 3 },
    { seed: 7, customers: 80, k: 1, maxSuppression: 0, model: 3 },
    { seed: 8, customers: 60, k: 2, maxSuppression: 0.1, model: 4 },
    { seed: 9, customers: 80, k: 1, maxSuppression: 0.05, model: 4 },
  ];

  it.each(cases)(
    'every node judged as a naive count judges it, and optimal equals exhaustive (seed $seed)',
    (c) => {
      const rows = orders(c.seed, c.customers, 8);
      const model = models[c.model]!;
      const privacy = [{ model: 'k-anonymity', k: c.k }, model];
      const spec = loadSpec(fixture(rows, 'entity', privacy, { maxSuppression: c.maxSuppression }));
      const table = readInput(spec);
      const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
      const judge = JUDGES[model.model]!(model as { l: number });
      const maxPersons = Math.floor(c.maxSuppression * c.customers + 1e-9);
      const evaluator = openSearch(prepared, wasmGroupingKernel);
      const { lattice } = prepared.problem;
      let feasible = 0;
      for (let id = 0; id < lattice.size; id++) {
        const naive = naiveFeasible(table, prepared, lattice.levels(id), c.k, judge, maxPersons);
        expect(evaluator.evaluate(id).feasible, `node ${lattice.levels(id)}`).toBe(naive);
        if (naive) feasible++;
      }
      expect(feasible).toBeGreaterThan(0);
      expect(feasible).toBeLessThan(lattice.size);
      evaluator.dispose();
      const expected = exhaustiveSearch(openSearch(prepared, wasmGroupingKernel)).best;
      const found = optimalSearch(openSearch(prepared, wasmGroupingKernel)).best;
      expect(found.levels).toEqual(expected.levels);
      expect(found.value).toBeCloseTo(expected.value, 9);
      // The release at that node is verified, persons weighed by the verifier itself.
      const built = build(spec, table);
      const checks = verifierFor('generalization').verify({
        spec,
        table,
        claims: built.claims,
        staged: stage(built),
      });
      expect(checks.find((x) => x.name === model.model)?.passed).toBe(true);
    },
  );
});

describe('the best-effort search with an entity column and l-diversity', () => {
  it('releases a node the verifier passes, persons weighed', () => {
    const rows = orders(12, 120, 10);
    const spec = loadSpec(
      fixture(
        rows,
        'entity',
        [
          { model: 'k-anonymity', k: 2 },
          { model: 'entropy-l-diversity', attribute: 'category', l: 2 },
        ],
        { nodeBudget: 20, maxSuppression: 0.05 },
      ),
    );
    const table = readInput(spec);
    const built = build(spec, table);
    const checks = verifierFor('generalization').verify({
      spec,
      table,
      claims: built.claims,
      staged: stage(built),
    });
    for (const name of ['persons', 'entropy-l-diversity', 'suppressed-persons'])
      expect(checks.find((c) => c.name === name)?.passed, name).toBe(true);
  });
});

describe('a release through the engine', () => {
  it('with entropy l-diversity and t-closeness over persons is verified, and no file holds a customer id', async () => {
    const rows = orders(21, 120, 10);
    const spec = fixture(
      rows,
      'entity',
      [
        { model: 'k-anonymity', k: 3 },
        { model: 'entropy-l-diversity', attribute: 'category', l: 2 },
        { model: 't-closeness', attribute: 'category', t: 0.3, distance: 'equal' },
      ],
      { maxSuppression: 0.05 },
    );
    const out = join(dir, `out${folders++}`);
    const { report } = await releaseTo(spec, out);
    const r = report as unknown as {
      verification: { verified: boolean; checks: { name: string; passed: boolean }[] };
    };
    expect(r.verification.verified).toBe(true);
    for (const name of ['persons', 'entropy-l-diversity', 't-closeness'])
      expect(r.verification.checks.find((c) => c.name === name)?.passed, name).toBe(true);
    const files = readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    for (const f of files)
      expect(readFileSync(join(f.parentPath, f.name)).toString('latin1'), f.name).not.toContain('cust-');
  });
});

describe("the verifier's person weights", () => {
  // Class 0 holds rows of persons 0 (x, x, y), 1 (z) and 2 (x); class 1 of persons 3 (y) and 4
  // (z); row 7 (person 5, x) is in no released class.
  const entity = Int32Array.from([0, 1, 0, 2, 0, 3, 4, 5]);
  const value = ['x', 'z', 'x', 'x', 'y', 'y', 'z', 'x'];
  const classOf = [0, 0, 0, 0, 0, 1, 1, 2];
  const classes = new TupleCounts(1, [5]);
  classes.intern(Int32Array.of(0));
  classes.intern(Int32Array.of(1));
  const qi = [(r: number) => classOf[r]!];
  const cell = (r: number) => value[r]!;

  it('each person weighs 1 in a class, over their rows there; the table weighs every row', () => {
    const counted = countPersons(entity, 8, qi, classes, Int32Array.of(5, 2));
    const [first, second] = personWeightedCounts(counted, cell);
    expect(first!.get('x')).toBeCloseTo(5 / 3, 12);
    expect(first!.get('y')).toBeCloseTo(1 / 3, 12);
    expect(first!.get('z')).toBeCloseTo(1, 12);
    expect(Object.fromEntries(second!)).toEqual({ y: 1, z: 1 });
    const table = personWeightedTable(counted, cell);
    expect(table.get('x')! * 6).toBeCloseTo(2 / 3 + 1 + 1, 12);
    expect(table.get('y')! * 6).toBeCloseTo(1 / 3 + 1, 12);
    expect(table.get('z')! * 6).toBeCloseTo(2, 12);
  });

  it('a class of fewer than l persons, or released in part, fails l-diversity', () => {
    const whole = countPersons(entity, 8, qi, classes, Int32Array.of(5, 2));
    const model = { model: 'distinct-l-diversity', attribute: 'v', l: 2 } as const;
    const context = { table: personWeightedTable(whole, cell), hierarchy: undefined };
    const weights = personWeightedCounts(whole, cell);
    expect(checkPersonClass(model, whole, 0, weights[0]!, context).holds).toBe(true);
    expect(checkPersonClass(model, whole, 1, weights[1]!, context).holds).toBe(true);
    expect(checkPersonClass({ ...model, l: 3 }, whole, 1, weights[1]!, context).holds).toBe(false);
    const part = countPersons(entity, 8, qi, classes, Int32Array.of(4, 2));
    expect(checkPersonClass(model, part, 0, personWeightedCounts(part, cell)[0]!, context).holds).toBe(false);
  });
});
