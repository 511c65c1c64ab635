/**
 * The entity column (docs/definitions.md, "Several rows per person"): on a transactions-shaped
 * table (orders by customers, several orders per customer), a class passes k when it holds k
 * distinct persons. The search repairs a release that is k-anonymous by rows only, the
 * verifier counts persons from the input and rejects a release that passes by rows only, the
 * searches equal an exhaustive search and a naive count over rows, the entity column reaches
 * no output, and methods and models that do not count persons refuse it by name.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { initCommand } from '../../src/cli/init.ts';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { PpdpError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { kMinimalSearch } from '../../src/methods/generalization/samarati.ts';
import { exhaustiveSearch, optimalSearch } from '../../src/methods/generalization/search.ts';
import { generalizationShards } from '../../src/methods/generalization/shards.ts';
import type { PopulationSpec } from '../../src/metrics/population-risk.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, METRIC_NAMES, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { countPersons } from '../../src/verify/entity.ts';
import { pieces, verifierFor } from '../../src/verify/index.ts';
import { TupleCounts } from '../../src/verify/tuples.ts';
import { buildGeneralizationInMemory, releaseTo, stageBuilt } from '../helpers/release.ts';
import { failedChecks } from '../helpers/verify.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-entity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let folders = 0;

const REGIONS = ['R1', 'R2', 'R3', 'R4', 'R5', 'R6'];
const ZONE = { R1: 'North', R2: 'North', R3: 'North', R4: 'South', R5: 'South', R6: 'South' };
const CATEGORIES = ['books', 'garden', 'toys', 'food', 'music'];

/**
 * Orders `customer;age;region;sex;category`: each customer has one age, region and sex and
 * 1 to `maxOrders` orders. Customer ids are `cust-<n>`, a shape no other column has.
 */
function orders(seed: number, customers: number, maxOrders: number): string[][] {
  const rng = new Random(seed);
  const rows: string[][] = [];
  for (let c = 0; c < customers; c++) {
    const age = String(18 + rng.below(60));
    const region = REGIONS[rng.below(REGIONS.length)]!;
    const sex = rng.below(2) === 0 ? 'M' : 'F';
    const n = 1 + rng.below(maxOrders);
    for (let o = 0; o < n; o++) rows.push([`cust-${c}`, age, region, sex, CATEGORIES[rng.below(5)]!]);
  }
  // Orders in a shuffled order, as a shop's log would hold them.
  for (let i = rows.length - 1; i > 0; i--) {
    const j = rng.below(i + 1);
    [rows[i], rows[j]] = [rows[j]!, rows[i]!];
  }
  return rows;
}

/** A spec folder with input.csv and release.json; `customer` is typed as given. */
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
      category: { type: 'insensitive' },
    },
    privacy,
    // Another method takes its own settings only.
    method:
      'name' in method ? method : { name: 'generalization', maxSuppression: 0.05, metric: 'ncp', ...method },
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

/**
 * Per released class (generalized QI labels from data.csv joined), the rows and the distinct
 * customers among the input rows with those labels — counted here over the input's strings.
 */
function classesOf(csv: string, rows: string[][], node: Record<string, number>) {
  const label = {
    age: (v: string, l: number) => {
      if (l === 0) return v;
      if (l === 4) return '*';
      const w = [5, 10, 20][l - 1]!;
      const lo = Math.floor(Number(v) / w) * w;
      return `[${lo},${lo + w})`;
    },
    region: (v: string, l: number) => [v, ZONE[v as keyof typeof ZONE], '*'][l]!,
    sex: (v: string, l: number) => (l === 0 ? v : '*'),
  };
  const released = new Map<string, number>();
  const lines = csv.trim().split('\n');
  const header = lines[0]!.split(';');
  const at = (name: string) => header.indexOf(name);
  for (const line of lines.slice(1)) {
    const cells = line.split(';');
    const key = [cells[at('age')], cells[at('region')], cells[at('sex')]].join('|');
    released.set(key, (released.get(key) ?? 0) + 1);
  }
  const persons = new Map<string, Set<string>>();
  for (const [customer, age, region, sex] of rows) {
    const key = [
      label.age(age!, node.age!),
      label.region(region!, node.region!),
      label.sex(sex!, node.sex!),
    ].join('|');
    if (!persons.has(key)) persons.set(key, new Set());
    persons.get(key)!.add(customer!);
  }
  return [...released].map(([key, n]) => ({ key, rows: n, persons: persons.get(key)?.size ?? 0 }));
}

describe('orders by customers: k counts persons', () => {
  const rows = orders(11, 150, 20);
  const privacy = [{ model: 'k-anonymity', k: 5 }];
  const byRows = loadSpec(fixture(rows, 'identifying', privacy));
  const byPersons = loadSpec(fixture(rows, 'entity', privacy));
  const table = readInput(byPersons);

  it('the fixture is transactions-shaped: ~1,000 orders by 150 customers', () => {
    expect(rows.length).toBeGreaterThan(1000);
    expect(rows.length).toBeLessThan(2000);
    expect(table.columns.find((c) => c.name === 'customer')!.dictionary).toHaveLength(150);
  });

  it('a release k-anonymous by rows holds classes of fewer than k persons; with the entity column every class holds k persons, verified', () => {
    const rowBuilt = build(byRows, table);
    const rowNode = (rowBuilt.claims as { node: Record<string, number> }).node;
    const rowCsv = readFileSync(stage(rowBuilt)('data.csv'), 'utf8');
    const rowClasses = classesOf(rowCsv, rows, rowNode).filter((c) => !c.key.startsWith('*|*|*'));
    expect(rowClasses.every((c) => c.rows >= 5)).toBe(true);
    expect(rowClasses.some((c) => c.persons < 5)).toBe(true);

    const built = build(byPersons, table);
    const node = (built.claims as { node: Record<string, number> }).node;
    expect(node).not.toEqual(rowNode);
    const staged = stage(built);
    const checks = verifierFor('generalization').verify({
      spec: byPersons,
      table,
      claims: built.claims,
      staged,
    });
    expect(checks.find((c) => c.name === 'persons')?.passed).toBe(true);
    const classes = classesOf(readFileSync(staged('data.csv'), 'utf8'), rows, node);
    const retained = classes.filter((c) => !(c.key === '*|*|*' && node.age !== 4));
    expect(retained.length).toBeGreaterThan(1);
    expect(retained.filter((c) => c.persons < 5)).toEqual([]);
    const claims = built.claims as { entity: { minClassPersons: number; suppressedPersons: number } };
    expect(claims.entity.minClassPersons).toBe(Math.min(...retained.map((c) => c.persons)));
    expect(claims.entity.suppressedPersons).toBeLessThanOrEqual(Math.floor(0.05 * 150));
    // The report counts persons: the input's, the suppressed, k as the fewest persons in a class.
    const report = built.report as { persons: Record<string, number>; privacy: { k: number } };
    expect(report.persons).toEqual({
      input: 150,
      suppressed: claims.entity.suppressedPersons,
      smallestClass: claims.entity.minClassPersons,
    });
    expect(report.privacy.k).toBe(claims.entity.minClassPersons);
  });

  it('an id written with blanks around it is the same person, not one more toward k', () => {
    const padded = rows.map((r, i) =>
      i % 3 === 0 ? [`${r[0]} `, ...r.slice(1)] : i % 3 === 1 ? [` ${r[0]}`, ...r.slice(1)] : r,
    );
    const spec = loadSpec(fixture(padded, 'entity', privacy));
    const read = readInput(spec);
    expect(read.columns.find((c) => c.name === 'customer')!.dictionary).toHaveLength(150);
    const claims = (b: ReturnType<typeof build>) => {
      const c = b.claims as { node: unknown; entity: unknown };
      return { node: c.node, entity: c.entity };
    };
    expect(claims(build(spec, read))).toEqual(claims(build(byPersons, table)));
  });

  it('the verifier rejects a release that holds k rows but not k persons per class', () => {
    const rowBuilt = build(byRows, table);
    const c = rowBuilt.claims as Record<string, unknown> & { enforced: Record<string, number> };
    // Its claims state the entity spec's requirements, and persons as the release has them:
    // only counting persons per class can find it wanting.
    const claims = {
      ...c,
      enforced: { ...c.enforced, maxSuppressedRows: table.rowCount, maxSuppressedPersons: 7 },
      entity: { suppressedPersons: 0, minClassPersons: 1 },
    };
    const failed = failedChecks(() =>
      verifierFor('generalization').verify({ spec: byPersons, table, claims, staged: stage(rowBuilt) }),
    );
    expect(failed).toContain('persons');
    expect(failed).toContain('k-anonymity');
  });

  it('with suppressed rows removed, the release is verified by persons too', () => {
    const spec = loadSpec(fixture(rows, 'entity', privacy, { suppressed: 'remove', maxSuppression: 0.1 }));
    const built = build(spec, table);
    const claims = built.claims as { entity: { suppressedPersons: number }; suppressedRows: number };
    expect(claims.entity.suppressedPersons).toBeGreaterThan(0);
    expect(claims.suppressedRows).toBeGreaterThan(claims.entity.suppressedPersons);
    const checks = verifierFor('generalization').verify({ spec, table, claims, staged: stage(built) });
    for (const name of ['persons', 'suppressed-persons', 'reported-persons', 'k-anonymity'])
      expect(checks.find((c) => c.name === name)?.passed, name).toBe(true);
  });

  it('the entity column reaches no output: neither data file nor the report holds a customer id', () => {
    const built = build(byPersons, table);
    const staged = stage(built);
    for (const name of ['data.csv', 'data.arrow']) {
      expect(readFileSync(staged(name)).toString('latin1')).not.toContain('cust-');
    }
    expect(readFileSync(staged('data.csv'), 'utf8').split('\n')[0]).toBe('age;region;sex;category');
    expect(JSON.stringify(built.report)).not.toContain('cust-');
    expect(JSON.stringify(built.claims)).not.toContain('cust-');
  });
});

/**
 * A node's feasibility counted naively over the input's rows: classes by generalized codes,
 * their distinct persons, and the persons with a row in a class of fewer than k persons.
 */
function naiveFeasible(
  table: EncodedTable,
  prepared: ReturnType<typeof prepareGeneralization>,
  levels: number[],
  k: number,
  maxPersons: number,
): boolean {
  const person = table.columns.find((c) => c.name === 'customer')!.codes;
  const keyOf = (r: number) =>
    prepared.qis.map((q, i) => prepared.hierarchies[i]!.levelTables[levels[i]!]![q.codes[r]!]).join(',');
  const persons = new Map<string, Set<number>>();
  for (let r = 0; r < table.rowCount; r++) {
    const key = keyOf(r);
    if (!persons.has(key)) persons.set(key, new Set());
    persons.get(key)!.add(person[r]!);
  }
  const suppressed = new Set<number>();
  let retained = 0;
  for (const set of persons.values()) {
    if (set.size < k) for (const p of set) suppressed.add(p);
    else retained++;
  }
  return retained > 0 && suppressed.size <= maxPersons;
}

describe('the searches with an entity column', () => {
  const cases = [
    { seed: 1, customers: 40, k: 3, maxSuppression: 0 },
    { seed: 2, customers: 60, k: 4, maxSuppression: 0.05 },
    { seed: 3, customers: 80, k: 5, maxSuppression: 0.2 },
    { seed: 4, customers: 30, k: 2, maxSuppression: 0.1 },
  ];

  it.each(cases)('every node judged as a naive count over rows judges it (seed $seed)', (c) => {
    const rows = orders(c.seed, c.customers, 8);
    const spec = loadSpec(
      fixture(rows, 'entity', [{ model: 'k-anonymity', k: c.k }], { maxSuppression: c.maxSuppression }),
    );
    const table = readInput(spec);
    const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
    const evaluator = openSearch(prepared, wasmGroupingKernel);
    const maxPersons = Math.floor(c.maxSuppression * c.customers + 1e-9);
    const { lattice } = prepared.problem;
    let feasible = 0;
    for (let id = 0; id < lattice.size; id++) {
      const naive = naiveFeasible(table, prepared, lattice.levels(id), c.k, maxPersons);
      expect(evaluator.evaluate(id).feasible, `node ${lattice.levels(id)}`).toBe(naive);
      if (naive) feasible++;
    }
    // Some nodes fail by persons that rows alone would pass.
    expect(feasible).toBeLessThan(lattice.size);
    evaluator.dispose();
  });

  it.each(cases)('the optimal search equals the exhaustive one for every metric (seed $seed)', (c) => {
    const rows = orders(c.seed, c.customers, 8);
    for (const metric of METRIC_NAMES) {
      const spec = loadSpec(
        fixture(rows, 'entity', [{ model: 'k-anonymity', k: c.k }], {
          maxSuppression: c.maxSuppression,
          metric,
        }),
      );
      const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
      const expected = exhaustiveSearch(openSearch(prepared, wasmGroupingKernel)).best;
      const found = optimalSearch(openSearch(prepared, wasmGroupingKernel)).best;
      expect(found.levels, metric).toEqual(expected.levels);
      expect(found.value).toBeCloseTo(expected.value, 9);
      expect(found.suppressedPersons).toBe(expected.suppressedPersons);
    }
  });

  it.each(cases)("Samarati's k-minimal nodes are the minimal feasible nodes by persons (seed $seed)", (c) => {
    const rows = orders(c.seed, c.customers, 8);
    const spec = loadSpec(
      fixture(rows, 'entity', [{ model: 'k-anonymity', k: c.k }], {
        maxSuppression: c.maxSuppression,
        strategy: 'k-minimal',
      }),
    );
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const { lattice } = prepared.problem;
    const all = openSearch(prepared, wasmGroupingKernel);
    const feasible = Array.from({ length: lattice.size }, (_, id) => all.evaluate(id).feasible);
    const minimal = feasible.flatMap((f, id) =>
      f &&
      Array.from({ length: lattice.m }, (_, i) => lattice.down(id, i)).every((d) => d < 0 || !feasible[d])
        ? [id]
        : [],
    );
    const outcome = kMinimalSearch(
      openSearch(prepared, wasmGroupingKernel),
      prepared.hierarchies.map((h) => h.levelTables),
      prepared.tuples.columns,
      'min-absolute-distance',
      'release.json',
    );
    expect(outcome.kMinimal.map((r) => r.id).sort((a, b) => a - b)).toEqual(minimal);
  });

  it('a best-effort search releases a verified node', () => {
    const rows = orders(5, 120, 12);
    const spec = loadSpec(fixture(rows, 'entity', [{ model: 'k-anonymity', k: 4 }], { nodeBudget: 30 }));
    const table = readInput(spec);
    const built = build(spec, table);
    const checks = verifierFor('generalization').verify({
      spec,
      table,
      claims: built.claims,
      staged: stage(built),
    });
    expect(checks.find((c) => c.name === 'persons')?.passed).toBe(true);
  });
});

describe("the verifier's person count", () => {
  // Class 0 holds input rows of persons 0, 0, 0, 1, 2; class 1 rows of persons 3, 4; row 7 (person
  // 5) is in no released class.
  const entity = Int32Array.from([0, 1, 0, 2, 0, 3, 4, 5]);
  const classOf = [0, 0, 0, 0, 0, 1, 1, 2];
  const classes = new TupleCounts(1, [5]);
  classes.intern(Int32Array.of(0));
  classes.intern(Int32Array.of(1));
  const qi = [(r: number) => classOf[r]!];

  it('a class releasing all its rows holds all their persons; a row in no released class suppresses its person', () => {
    const counted = countPersons(entity, 8, qi, classes, Int32Array.of(5, 2));
    expect(Array.from(counted.perClass)).toEqual([3, 2]);
    expect(counted.suppressed).toBe(1);
    expect(counted.persons).toBe(6);
  });

  it('a class releasing part of its rows counts the fewest persons that can hold them, and suppresses all its persons', () => {
    const counted = countPersons(entity, 8, qi, classes, Int32Array.of(3, 2));
    // Three rows may all be person 0's; four need persons 0 and another.
    expect(Array.from(counted.perClass)).toEqual([1, 2]);
    expect(counted.suppressed).toBe(4);
    expect(Array.from(countPersons(entity, 8, qi, classes, Int32Array.of(4, 2)).perClass)).toEqual([2, 2]);
  });
});

describe('a release through the engine', () => {
  it('is verified, counts persons in report.json, and no file it writes holds a customer id', async () => {
    const rows = orders(17, 120, 15);
    const spec = fixture(rows, 'entity', [{ model: 'k-anonymity', k: 4 }]);
    const out = join(dir, `out${folders++}`);
    const { report } = await releaseTo(spec, out);
    const r = report as unknown as {
      verification: { verified: boolean; checks: { name: string; passed: boolean }[] };
      persons: { input: number };
    };
    expect(r.verification.verified).toBe(true);
    expect(r.verification.checks.find((c) => c.name === 'persons')?.passed).toBe(true);
    expect(r.persons.input).toBe(120);
    expect(readFileSync(join(out, 'report.html'), 'utf8')).toContain(
      'k achieved (fewest persons in a class)',
    );
    const files = readdirSync(out, { recursive: true, withFileTypes: true }).filter((f) => f.isFile());
    expect(files.length).toBeGreaterThan(3);
    for (const f of files) {
      expect(readFileSync(join(f.parentPath, f.name)).toString('latin1'), f.name).not.toContain('cust-');
    }
  });
});

/** The spec at `path` with `report.population` set. */
function withPopulation(path: string, population: PopulationSpec): ReleaseSpec {
  const spec = loadSpec(path);
  return { ...spec, report: { ...spec.report, population } };
}

/** The release's population estimates and class-size histogram. */
function riskFigures(built: ReturnType<typeof build>) {
  const { populationRisk, ecSizeHistogram } = (built.report as unknown as ReleaseReport).privacy;
  return { populationRisk: populationRisk!, ecSizeHistogram: ecSizeHistogram! };
}

/** Without an entity column, the orders table's figures as they were before persons were counted. */
const ROWS_BEFORE = {
  populationRisk: {
    populationSize: 31900,
    samplingFraction: 0.05,
    sampleUniques: 1,
    estimates: {
      pitman: {
        uniques: null,
        share: null,
        notFitted:
          'Pitman’s model could not be fitted to these class sizes (no root converged, or its estimate is 0 or outside [0, N] while the sample has uniques)',
      },
      zayatz: { uniques: 0.2593891225191691, share: 8.131320455146367e-6 },
      snb: {
        uniques: null,
        share: null,
        notFitted:
          'the SNB model could not be fitted to these class sizes (no root converged, or its estimate is 0 or outside [0, N] while the sample has uniques)',
      },
      dankar: { uniques: 0.2593891225191691, share: 8.131320455146367e-6 },
    },
    dankarModel: 'zayatz',
  },
  ecSizeHistogram: [
    { label: '1', from: 1, to: 1, classes: 1, rows: 1 },
    { label: '2', from: 2, to: 2, classes: 0, rows: 0 },
    { label: '3', from: 3, to: 3, classes: 0, rows: 0 },
    { label: '4', from: 4, to: 4, classes: 0, rows: 0 },
    { label: '5–9', from: 5, to: 9, classes: 0, rows: 0 },
    { label: '10–19', from: 10, to: 19, classes: 2, rows: 25 },
    { label: '20–49', from: 20, to: 49, classes: 5, rows: 186 },
    { label: '50–99', from: 50, to: 99, classes: 16, rows: 1149 },
    { label: '100–499', from: 100, to: 499, classes: 2, rows: 234 },
  ],
};

describe('the population estimates and the class sizes count persons', () => {
  const rows = orders(11, 150, 20);
  // k = 1 keeps classes of one person: sample uniques for the estimates to work on.
  const privacy = [{ model: 'k-anonymity', k: 1 }];
  const method = { maxSuppression: 0 };
  /** One row per customer and class: a customer's QIs are theirs, the same on all their orders. */
  const seen = new Set<string>();
  const perPerson = rows.filter(([customer]) => !seen.has(customer!) && seen.add(customer!));
  const coarser = { age: 2, region: 1, sex: 0 };

  it.each([{ samplingFraction: 0.05 }, { size: 40_000 }])(
    'equal the estimates on the table of one row per person and class, not the rows’ (%o)',
    (population) => {
      const byPersons = withPopulation(fixture(rows, 'entity', privacy, method), population);
      const deduplicated = withPopulation(fixture(perPerson, 'identifying', privacy, method), population);
      const byRows = withPopulation(fixture(rows, 'identifying', privacy, method), population);
      expect(perPerson).toHaveLength(150);
      // The node the search finds (the input's own classes), and a coarser one.
      for (const node of [undefined, coarser]) {
        const persons = riskFigures(build(byPersons, readInput(byPersons), node));
        const expected = riskFigures(build(deduplicated, readInput(deduplicated), node));
        expect(persons.populationRisk).toEqual({ ...expected.populationRisk, over: 'persons' });
        expect(persons.populationRisk.sampleUniques).toBeGreaterThan(0);
        const overRows = riskFigures(build(byRows, readInput(byRows), node)).populationRisk;
        expect(overRows.over).toBeUndefined();
        expect(overRows.sampleUniques).not.toBe(persons.populationRisk.sampleUniques);
        expect(overRows.estimates.dankar).not.toEqual(persons.populationRisk.estimates.dankar);
        // The histogram of the deduplicated table is the entity release's over persons.
        expect(persons.ecSizeHistogram.map(({ rows: _, ...bin }) => bin)).toEqual(
          expected.ecSizeHistogram.map(({ rows: n, ...bin }) => ({ ...bin, persons: n })),
        );
      }
    },
  );

  it('a person with rows in two classes counts in each: the table of one row per person and class', () => {
    // Some customers' later orders carry another age: their rows lie in two classes.
    const moved = rows.map((r, i) =>
      i % 7 === 0 ? [r[0]!, String(((Number(r[1]) + 23) % 60) + 18), ...r.slice(2)] : r,
    );
    const pairs = new Set<string>();
    const label = (r: string[]) =>
      `${r[0]}|${Math.floor(Number(r[1]) / 10)}|${ZONE[r[2] as keyof typeof ZONE]}|${r[3]}`;
    const perClass = moved.filter((r) => !pairs.has(label(r)) && pairs.add(label(r)));
    const population = { size: 40_000 };
    const byPersons = withPopulation(fixture(moved, 'entity', privacy, method), population);
    const deduplicated = withPopulation(fixture(perClass, 'identifying', privacy, method), population);
    const persons = riskFigures(build(byPersons, readInput(byPersons), coarser));
    const expected = riskFigures(build(deduplicated, readInput(deduplicated), coarser));
    expect(perClass.length).toBeGreaterThan(new Set(moved.map((r) => r[0])).size);
    expect(persons.populationRisk).toEqual({ ...expected.populationRisk, over: 'persons' });
  });

  it('the histogram sizes the released classes by their distinct persons, counted naively', () => {
    const spec = loadSpec(fixture(rows, 'entity', [{ model: 'k-anonymity', k: 5 }]));
    const built = build(spec, readInput(spec));
    const node = (built.claims as { node: Record<string, number> }).node;
    const classes = classesOf(readFileSync(stage(built)('data.csv'), 'utf8'), rows, node).filter(
      (c) => !(c.key === '*|*|*' && node.age !== 4),
    );
    const bins = riskFigures(built).ecSizeHistogram;
    expect(bins.reduce((n, b) => n + b.classes, 0)).toBe(classes.length);
    for (const bin of bins) {
      const inBin = classes.filter((c) => c.persons >= bin.from && (bin.to === null || c.persons <= bin.to));
      expect(bin, bin.label).toEqual({
        ...bin,
        classes: inBin.length,
        persons: inBin.reduce((n, c) => n + c.persons, 0),
        rows: inBin.reduce((n, c) => n + c.rows, 0),
      });
    }
    expect(bins.some((b) => b.persons! < b.rows)).toBe(true);
  });

  it('without an entity column the figures are as they were, byte for byte', () => {
    const spec = withPopulation(fixture(rows, 'identifying', privacy, method), { samplingFraction: 0.05 });
    const figures = riskFigures(build(spec, readInput(spec), coarser));
    expect(JSON.stringify(figures)).toBe(JSON.stringify(ROWS_BEFORE));
  });
});

describe('ppdp init proposes the entity column', () => {
  it('a repeating id-shaped column named for a customer is the entity; an id in every row stays identifying', () => {
    const folder = join(dir, `init${folders++}`);
    mkdirSync(folder);
    // Some ids with a blank after them, as spreadsheets export them: still the entity.
    const rows = orders(13, 60, 10).map((r, i) => [
      `ord-${i}`,
      i % 4 === 0 ? `${r[0]} ` : r[0]!,
      ...r.slice(1),
    ]);
    const data = join(folder, 'orders.csv');
    writeFileSync(
      data,
      `order_id;customer_id;age;region;sex;category\n${rows.map((r) => r.join(';')).join('\n')}\n`,
    );
    const out = join(folder, 'release.json');
    const write = process.stdout.write;
    process.stdout.write = (() => true) as typeof process.stdout.write;
    try {
      expect(initCommand([data, '--out', out])).toBe(0);
    } finally {
      process.stdout.write = write;
    }
    const spec = JSON.parse(readFileSync(out, 'utf8')) as { attributes: Record<string, { type: string }> };
    expect(spec.attributes.customer_id!.type).toBe('entity');
    expect(spec.attributes.order_id!.type).toBe('identifying');
    expect(loadSpec(out).attributes.find((a) => a.type === 'entity')?.name).toBe('customer_id');
  });
});

describe('what cannot count persons refuses the entity column by name', () => {
  const rows = orders(9, 20, 4);
  const refused = (path: () => string, code: string, words: string) => {
    let error: unknown;
    try {
      path();
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(PpdpError);
    expect((error as PpdpError).code).toBe(code);
    expect((error as Error).message).toContain(words);
  };

  it('a method other than generalization', () => {
    for (const name of ['mondrian', 'anatomy', 'slicing', 'randomization']) {
      const privacy =
        name === 'mondrian'
          ? [{ model: 'k-anonymity', k: 2 }]
          : [{ model: 'distinct-l-diversity', attribute: 'category', l: 2 }];
      refused(
        () => {
          const path = fixture(rows, 'entity', privacy, { name });
          const text = readFileSync(path, 'utf8').replace(
            '"category":{"type":"insensitive"}',
            '"category":{"type":"sensitive"}',
          );
          writeFileSync(path, text);
          return loadSpec(path).file;
        },
        'E_SPEC_ENTITY_METHOD',
        `method ${name}`,
      );
    }
  });

  it('a model not judged over persons', () => {
    refused(
      () => {
        const path = fixture(rows, 'entity', [
          { model: 'k-anonymity', k: 2 },
          { model: 'average-risk', threshold: 0.5 },
        ]);
        return loadSpec(path).file;
      },
      'E_SPEC_ENTITY_MODEL',
      'privacy[1]',
    );
  });

  it('two entity columns, or an entity column with a hierarchy', () => {
    refused(
      () => {
        const path = fixture(rows, 'entity', [{ model: 'k-anonymity', k: 2 }]);
        writeFileSync(
          path,
          readFileSync(path, 'utf8').replace(
            '"category":{"type":"insensitive"}',
            '"category":{"type":"entity"}',
          ),
        );
        return loadSpec(path).file;
      },
      'E_SPEC_ENTITY',
      'attributes.category is a second entity column',
    );
    refused(
      () => {
        const path = fixture(rows, 'entity', [{ model: 'k-anonymity', k: 2 }]);
        writeFileSync(
          path,
          readFileSync(path, 'utf8').replace(
            '"customer":{"type":"entity"}',
            '"customer":{"type":"entity","hierarchy":{"mask":"right"}}',
          ),
        );
        return loadSpec(path).file;
      },
      'E_SPEC_ENTITY',
      'attributes.customer.hierarchy',
    );
  });

  it('verification in pieces (a release over row shards)', () => {
    const spec = loadSpec(fixture(rows, 'entity', [{ model: 'k-anonymity', k: 2 }]));
    const table = readInput(spec);
    const built = build(spec, table);
    const path = stage(built);
    const failed = failedChecks(() =>
      pieces.check(
        spec,
        table,
        built.claims,
        [pieces.expectShard(spec, built.claims, table, table)],
        [pieces.summarizePart(spec, table.delimiter, { arrow: path('data.arrow'), csv: path('data.csv') })],
      ),
    );
    expect(failed).toEqual(['persons']);
  });

  it('generalization over row shards', () => {
    const spec = loadSpec(fixture(rows, 'entity', [{ model: 'k-anonymity', k: 2 }]));
    refused(
      () => String(generalizationShards.count(spec, readInput(spec), wasmGroupingKernel)),
      'E_SPEC_ENTITY_METHOD',
      'row shards',
    );
  });
});
