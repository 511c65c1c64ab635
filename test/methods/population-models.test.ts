/**
 * Average re-identification risk, k-map and δ-presence under full-domain generalization: the
 * optimal search finds the exhaustive optimum, the search's population counts are those of a
 * count over the population's rows by their labels, a release under each model passes the
 * independent verification (whole-table and in pieces) and one that violates it fails, and
 * bad settings are refused by name.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { VerificationCheck } from '../../src/contracts/report.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { PpdpError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { exhaustiveSearch, optimalSearch } from '../../src/methods/generalization/search.ts';
import { derivedK } from '../../src/models/k-map.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { checkSpecFiles, loadSpec, METRIC_NAMES, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { pieces, verifierFor } from '../../src/verify/index.ts';
import { estimatedK } from '../../src/verify/population.ts';
import { buildGeneralizationInMemory, buildInMemory, stageBuilt } from '../helpers/release.ts';
import { ARX_LIB, requires } from '../helpers/requires.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-population-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let folders = 0;

const EDU = { a: 'low', b: 'low', c: 'high', d: 'high' };

/** Population rows `age;zip;edu;x` and the indices of those in the sample. */
function tables(seed: number, size: number, share: number) {
  const rng = new Random(seed);
  const population = Array.from({ length: size }, () => [
    String(18 + rng.below(50)),
    `${13000 + rng.below(3) * 100 + rng.below(30)}`,
    'abcd'[rng.below(4)]!,
    String(rng.below(3)),
  ]);
  const sample = population.filter(() => rng.below(1000) < share * 1000);
  return { population, sample: sample.length > 0 ? sample : population.slice(0, 1) };
}

const csv = (rows: string[][]) => `age;zip;edu;x\n${rows.map((r) => r.join(';')).join('\n')}\n`;

/** A spec folder with input.csv, population.csv and release.json; returns the spec's path. */
function fixture(
  rows: { population: string[][]; sample: string[][] },
  privacy: object[],
  method: object = {},
): string {
  const folder = join(dir, `f${folders++}`);
  mkdirSync(folder);
  writeFileSync(join(folder, 'input.csv'), csv(rows.sample));
  writeFileSync(join(folder, 'population.csv'), csv(rows.population));
  const spec = {
    input: 'input.csv',
    format: { delimiter: ';' },
    attributes: {
      age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
      zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
      edu: { type: 'quasi-identifying', hierarchy: { groups: [EDU] } },
      x: { type: 'insensitive' },
    },
    privacy,
    method: { name: 'generalization', maxSuppression: 0, metric: 'ncp', ...method },
    seed: 1,
  };
  const path = join(folder, 'release.json');
  writeFileSync(path, JSON.stringify(spec));
  return path;
}

/** The label of a value at a level, written out from the fixture's hierarchies. */
function label(column: 'age' | 'zip' | 'edu', value: string, level: number): string {
  if (level === 0) return value;
  if (column === 'age') {
    if (level === 4) return '*';
    const w = [5, 10, 20][level - 1]!;
    const lo = Math.floor(Number(value) / w) * w;
    return `[${lo},${lo + w})`;
  }
  if (column === 'zip') return level >= 5 ? '*' : value.slice(0, 5 - level) + '*'.repeat(level);
  return level === 1 ? EDU[value as keyof typeof EDU] : '*';
}

const MODELS = [
  (rng: Random) => ({ model: 'k-map', k: 2 + rng.below(12), population: 'population.csv' }),
  (rng: Random) => ({ model: 'average-risk', threshold: [0.1, 0.2, 0.3, 0.5][rng.below(4)]! }),
  (rng: Random) => ({
    model: 'delta-presence',
    deltaMin: [0, 0.05, 0.1][rng.below(3)]!,
    deltaMax: [0.4, 0.6, 0.8][rng.below(3)]!,
    population: 'population.csv',
  }),
  (rng: Random) => ({
    model: 'k-map',
    k: 2 + rng.below(30),
    populationSize: 2000 + rng.below(3000),
    estimator: rng.below(2) === 0 ? 'poisson' : 'zero-truncated-poisson',
    significance: [0.01, 0.05][rng.below(2)]!,
  }),
];

describe('the optimal search equals exhaustive search under each model', () => {
  const cases = Array.from({ length: 40 }, (_, seed) => seed);
  it.each(cases)('seed %i', (seed) => {
    const rng = new Random(1000 + seed);
    const model = MODELS[seed % MODELS.length]!(rng);
    const metric = METRIC_NAMES[Math.floor(seed / 3) % METRIC_NAMES.length]!;
    const maxSuppression = [0, 0.05, 0.2][rng.below(3)]!;
    const rows = tables(seed, 80 + rng.below(300), 0.2 + rng.below(5) / 10);
    const spec = loadSpec(fixture(rows, [model], { metric, maxSuppression }));
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const open = () => openSearch(prepared, wasmGroupingKernel);
    let expected: ReturnType<typeof exhaustiveSearch>['best'] | string;
    try {
      expected = exhaustiveSearch(open()).best;
    } catch (e) {
      expected = (e as PpdpError).code;
    }
    if (typeof expected === 'string') {
      expect(() => optimalSearch(open())).toThrow(PpdpError);
      return;
    }
    const found = optimalSearch(open()).best;
    expect(found.levels).toEqual(expected.levels);
    expect(found.value).toBeCloseTo(expected.value, 9);
    expect(found.suppressedRows).toBe(expected.suppressedRows);
    // The search's population counts, against a count of the population's rows by their labels.
    if (!('population' in model)) return;
    const names = ['age', 'zip', 'edu'] as const;
    const key = (row: string[]) => names.map((n, i) => label(n, row[i]!, found.levels[i]!)).join('|');
    const counts = new Map<string, number>();
    for (const row of rows.population) counts.set(key(row), (counts.get(key(row)) ?? 0) + 1);
    for (let g = 0; g < found.groups; g++) {
      const t = found.reps[g]!;
      const row = prepared.qis.map((q, i) => q.dictionary[prepared.tuples.columns[i]![t]!]!);
      expect(found.population![g]).toBe(counts.get(key(row)));
    }
  });
});

describe('δ-presence is not monotonic: the search checks what pruning would skip', () => {
  it('finds the one feasible node, below generalizations that fail', () => {
    // Ages in classes of width 5: 20–24 holds 2 of the population's 4, 30–34 holds 3 of 6;
    // 25–29 is the population's alone. Width 10 joins it to 20–29 (2 of 10): too few.
    const ages = (list: [number, number][]) =>
      list.flatMap(([age, n]) => Array.from({ length: n }, () => age));
    const row = (age: number) => [String(age), '13053', 'a', '0'];
    const population = ages([
      [20, 2],
      [21, 2],
      [26, 6],
      [31, 6],
    ]).map(row);
    const sample = ages([
      [20, 2],
      [31, 3],
    ]).map(row);
    const spec = loadSpec(
      fixture({ population, sample }, [
        { model: 'delta-presence', deltaMin: 0.4, deltaMax: 0.6, population: 'population.csv' },
      ]),
    );
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const open = () => openSearch(prepared, wasmGroupingKernel);
    const expected = exhaustiveSearch(open()).best;
    expect(expected.levels[0]).toBe(1);
    const evaluator = open();
    const { lattice } = prepared.problem;
    const infeasibleAbove = lattice.successors(expected.id).filter((id) => !evaluator.evaluate(id).feasible);
    expect(infeasibleAbove.length).toBeGreaterThan(0);
    expect(optimalSearch(open()).best.levels).toEqual(expected.levels);
  });
});

/** Stages a built release in a fresh folder; the verifier over it, whole and in pieces. */
function staged(spec: ReleaseSpec, table: EncodedTable, built: ReturnType<typeof build>) {
  const path = stageBuilt(built, join(dir, `s${folders++}`));
  return {
    whole: (s = spec): VerificationCheck[] =>
      verifierFor('generalization').verify({ spec: s, table, claims: built.claims, staged: path }),
    pieces: (s = spec): VerificationCheck[] =>
      pieces.check(
        s,
        table,
        built.claims,
        [pieces.expectShard(s, built.claims, table, table)],
        [pieces.summarizePart(s, table.delimiter, { arrow: path('data.arrow'), csv: path('data.csv') })],
      ),
  };
}

const build = buildGeneralizationInMemory;

describe('a release under each model passes the independent verification; one that violates it fails', () => {
  const rows = tables(7, 600, 0.3);
  const specs = {
    'k-map': [{ model: 'k-map', k: 6, population: 'population.csv' }],
    'average-risk': [{ model: 'average-risk', threshold: 0.15 }],
    'delta-presence': [
      { model: 'delta-presence', deltaMin: 0.1, deltaMax: 0.45, population: 'population.csv' },
    ],
  } as const;

  it.each(Object.keys(specs) as (keyof typeof specs)[])('%s', (name) => {
    const spec = loadSpec(fixture(rows, [...specs[name]], { maxSuppression: 0.05 }));
    const table = readInput(spec);
    const built = build(spec, table);
    const release = staged(spec, table, built);
    for (const verify of [release.whole, release.pieces]) {
      const checks = verify();
      expect(checks.find((c) => c.name === name)?.passed).toBe(true);
    }
    // What the report says the model achieved, within what it requires.
    const privacy = built.report.privacy as {
      models: { achieved: Record<string, number> }[];
      classes: number;
    };
    const achieved = privacy.models[0]!.achieved;
    const released = table.rowCount - (built.report.rows as { suppressed: number }).suppressed;
    if (name === 'k-map') expect(achieved.populationMatches).toBeGreaterThanOrEqual(6);
    if (name === 'average-risk') expect(achieved.averageRisk).toBeCloseTo(privacy.classes / released, 12);
    if (name === 'delta-presence') {
      expect(achieved.minPresence).toBeGreaterThanOrEqual(0.1);
      expect(achieved.maxPresence).toBeLessThanOrEqual(0.45);
    }
    // The same data released with no generalization (k = 1 at the bottom node) violates the model
    // (built under the spec's suppression limit, so its claims state the spec's requirements).
    const plain = loadSpec(fixture(rows, [{ model: 'k-anonymity', k: 1 }], { maxSuppression: 0.05 }));
    const bare = build(plain, table);
    const violating = staged(spec, table, bare);
    for (const verify of [violating.whole, violating.pieces]) expect(verify).toThrow(`${name} (`);
  });

  it('the verifier reads the population again: a population without some records fails k-map', () => {
    const path = fixture(rows, [...specs['k-map']], { maxSuppression: 0.05 });
    const spec = loadSpec(path);
    const table = readInput(spec);
    const release = staged(spec, table, build(spec, table));
    expect(release.whole().find((c) => c.name === 'k-map')?.passed).toBe(true);
    // Keep only the sample's own rows in the population: classes now match fewer records.
    writeFileSync(join(path, '..', 'population.csv'), csv(rows.sample));
    expect(release.whole).toThrow('k-map (');
    expect(release.pieces).toThrow('k-map (');
  });

  it("the verifier takes the bounds from the spec, not from the method's claims", () => {
    const spec = loadSpec(fixture(rows, [...specs['delta-presence']], { maxSuppression: 0.05 }));
    const table = readInput(spec);
    const release = staged(spec, table, build(spec, table));
    expect(release.whole().every((c) => c.passed)).toBe(true);
    const stricter = { ...spec, privacy: [{ ...spec.privacy[0]!, deltaMax: 0.05 }] } as ReleaseSpec;
    expect(() => release.whole(stricter)).toThrow('delta-presence (');
    const risk = loadSpec(fixture(rows, [...specs['average-risk']], { maxSuppression: 0.05 }));
    const riskRelease = staged(risk, table, build(risk, table));
    const lower = { ...risk, privacy: [{ model: 'average-risk', threshold: 0.01 }] } as ReleaseSpec;
    expect(() => riskRelease.pieces(lower)).toThrow('average-risk (');
  });
});

describe('k-map under an estimated population', () => {
  it('derives the class size as ARX does, and the verifier derives the same', () => {
    // k = 5 with a sample of a tenth: Poisson(0.5) reaches 0.95 at 2 (k′ = 4) and 0.99 at 3
    // (k′ = 5); zero-truncated, 0.95 at 2 (k′ = 3).
    expect(derivedK(5, 0.1, 'poisson', 0.05, 1000)).toBe(4);
    expect(derivedK(5, 0.1, 'poisson', 0.01, 1000)).toBe(5);
    expect(derivedK(5, 0.1, 'zero-truncated-poisson', 0.05, 1000)).toBe(3);
    expect(derivedK(50, 0.01, 'poisson', 0.05, 3)).toBe(3); // at most the rows
    for (const estimator of ['poisson', 'zero-truncated-poisson'] as const)
      for (const k of [1, 2, 3, 5, 10, 20, 50, 100])
        for (const fraction of [0.001, 0.01, 0.1, 0.3, 0.9, 1])
          for (const significance of [0.001, 0.01, 0.05, 0.2])
            expect(estimatedK(k, 1000, 1000 / fraction, estimator, significance)).toBe(
              derivedK(k, fraction, estimator, significance, 1000),
            );
  });

  // ARX itself, run live: its jars from ARX_LIB or beside the repository (../shared/peers/arx/lib).
  const lib = ARX_LIB;
  requires('arx').it(
    'derives the class size ARX derives (ARX run live)',
    () => {
      const out = join(dir, 'arx');
      const source = new URL('./arx/KMapDerived.java', import.meta.url).pathname;
      const javac = spawnSync('javac', ['-cp', `${lib}/*`, '-d', out, source], { encoding: 'utf8' });
      expect(javac.status, javac.stderr).toBe(0);
      const cases: string[] = [];
      for (const estimator of ['poisson', 'zero-truncated-poisson'])
        for (const k of [2, 5, 30])
          for (const size of [400, 10_000, 1_000_000])
            for (const significance of [0.01, 0.1])
              cases.push(`${k},100,${size},${estimator},${significance}`);
      const java = spawnSync('java', ['-cp', `${lib}/*:${out}`, 'KMapDerived', ...cases], {
        encoding: 'utf8',
      });
      expect(java.status, java.stderr).toBe(0);
      const arx = Object.fromEntries(
        java.stdout
          .trim()
          .split('\n')
          .map((line) => line.split('=') as [string, string]),
      );
      for (const c of cases) {
        const [k, rows, size, estimator, significance] = c.split(',');
        const ours = derivedK(
          Number(k),
          Number(rows) / Number(size),
          estimator as 'poisson' | 'zero-truncated-poisson',
          Number(significance),
          Number(rows),
        );
        expect(ours, c).toBe(Number(arx[c]));
      }
    },
    60_000,
  );

  it('a release passes the verifier; one with classes below the derived size fails it', () => {
    const rows = tables(11, 600, 0.3);
    const model = {
      model: 'k-map',
      k: 10,
      populationSize: 1000,
      estimator: 'zero-truncated-poisson',
      significance: 0.05,
    };
    const spec = loadSpec(fixture(rows, [model], { maxSuppression: 0.05 }));
    const table = readInput(spec);
    const k = derivedK(10, table.rowCount / 1000, 'zero-truncated-poisson', 0.05, table.rowCount);
    expect(k).toBeGreaterThan(1);
    const built = build(spec, table);
    const release = staged(spec, table, built);
    for (const verify of [release.whole, release.pieces])
      expect(verify().find((c) => c.name === 'k-map')?.passed).toBe(true);
    const achieved = (built.report.privacy as { models: { achieved: Record<string, number> }[] }).models[0]!
      .achieved;
    expect(achieved).toEqual({ k: expect.any(Number), estimatedClassSize: k });
    expect(achieved.k).toBeGreaterThanOrEqual(k);
    const bare = staged(
      spec,
      table,
      build(loadSpec(fixture(rows, [{ model: 'k-anonymity', k: 1 }], { maxSuppression: 0.05 })), table),
    );
    for (const verify of [bare.whole, bare.pieces]) expect(verify).toThrow('k-map (');
  });

  it('takes a table or a size, not both; a size below the input rows is refused', () => {
    const rows = tables(3, 200, 0.4);
    expect(() =>
      loadSpec(fixture(rows, [{ model: 'k-map', k: 3, population: 'population.csv', populationSize: 1000 }])),
    ).toThrow(/privacy\[0\] \(k-map\) needs one of population and populationSize/);
    expect(() => loadSpec(fixture(rows, [{ model: 'k-map', k: 3 }]))).toThrow(/population or populationSize/);
    expect(() =>
      loadSpec(fixture(rows, [{ model: 'k-map', k: 3, population: 'population.csv', estimator: 'poisson' }])),
    ).toThrow(/privacy\[0\]\.estimator applies to an estimated population/);
    const small = loadSpec(fixture(rows, [{ model: 'k-map', k: 3, populationSize: 2 }]));
    expect(() => prepareGeneralization(small, readInput(small), wasmGroupingKernel)).toThrow(
      /privacy\[0\]\.populationSize is 2/,
    );
  });
});

describe('bad settings are refused by name', () => {
  const rows = tables(3, 200, 0.4);
  const code = (f: () => unknown): { code: string; message: string } => {
    try {
      f();
    } catch (e) {
      return { code: (e as PpdpError).code, message: (e as Error).message };
    }
    return { code: 'none', message: '' };
  };

  it('δmin above δmax', () => {
    const r = code(() =>
      loadSpec(
        fixture(rows, [
          { model: 'delta-presence', deltaMin: 0.6, deltaMax: 0.5, population: 'population.csv' },
        ]),
      ),
    );
    expect(r.code).toBe('E_SPEC_RANGE');
    expect(r.message).toContain('privacy[0].deltaMin');
  });

  it('a missing population file', () => {
    const spec = loadSpec(fixture(rows, [{ model: 'k-map', k: 3, population: 'nowhere.csv' }]));
    const r = code(() => checkSpecFiles(spec));
    expect(r.code).toBe('E_POPULATION_MISSING');
    expect(r.message).toContain("privacy[0].population 'nowhere.csv'");
  });

  it('a population without a quasi-identifier', () => {
    const path = fixture(rows, [{ model: 'k-map', k: 3, population: 'population.csv' }]);
    writeFileSync(join(path, '..', 'population.csv'), 'age;edu\n30;a\n');
    const spec = loadSpec(path);
    const r = code(() => prepareGeneralization(spec, readInput(spec), wasmGroupingKernel));
    expect(r.code).toBe('E_POPULATION_COLUMN');
    expect(r.message).toContain("privacy[0].population (population.csv) has no column 'zip'");
  });

  it('a sample that is not a subset of the population', () => {
    const spec = loadSpec(
      fixture({ sample: rows.sample, population: rows.population.filter((r) => r !== rows.sample[0]) }, [
        { model: 'delta-presence', deltaMin: 0, deltaMax: 1, population: 'population.csv' },
      ]),
    );
    const r = code(() => prepareGeneralization(spec, readInput(spec), wasmGroupingKernel));
    expect(r.code).toBe('E_POPULATION_SUBSET');
    expect(r.message).toContain('privacy[0].population');
  });

  it('a population outside the folder of a spec read from a bucket', () => {
    const path = fixture(rows, [{ model: 'k-map', k: 3, population: '../population.csv' }]);
    const r = code(() => loadSpec(path, 's3://bucket/inbox/x/'));
    expect(r.code).toBe('E_SPEC_PATH');
    expect(r.message).toContain("privacy[0].population '../population.csv'");
  });

  it('two population models naming different tables', () => {
    const r = code(() =>
      loadSpec(
        fixture(rows, [
          { model: 'k-map', k: 3, population: 'population.csv' },
          { model: 'delta-presence', deltaMin: 0, deltaMax: 1, population: 'input.csv' },
        ]),
      ),
    );
    expect(r.code).toBe('E_SPEC_CONFLICT');
  });

  it('Mondrian and the k-minimal strategy refuse them', () => {
    const path = fixture(rows, [{ model: 'k-map', k: 3, population: 'population.csv' }]);
    const spec = loadSpec(path);
    const mondrian = {
      ...spec,
      method: { name: 'mondrian', mode: 'strict', measures: false },
    } as ReleaseSpec;
    const table = readInput(spec);
    const r = code(() => buildInMemory(mondrian, table));
    expect(r.code).toBe('E_SPEC_MODEL_METHOD');
    expect(r.message).toContain("privacy[0].model 'k-map'");
    const kMinimal = { ...spec, method: { ...spec.method, strategy: 'k-minimal' } } as ReleaseSpec;
    expect(code(() => build(kMinimal, table)).code).toBe('E_SPEC_CONFLICT');
  });
});
