/**
 * Property-based tests (fast-check, bounded runs with fixed seeds so the suite stays fast and
 * reproducible): the spec parser throws nothing but SpecError, the CSV and Arrow readers
 * round-trip what the writers write, the WASM grouping kernel equals its TS reference, and
 * releases of random small tables under random specs always pass the independent verifier.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { formatCsv, formatNumber, readCsv } from '../../src/data/csv.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { NoSolutionError, SpecError } from '../../src/errors.ts';
import type { GroupingKernel, GroupingResult } from '../../src/kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { loadSpec, parseSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { trustedRelease, writeResults } from './helpers.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-props-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let seq = 0;
const fresh = (name: string) => join(dir, `${seq++}-${name}`);

/** Runs recorded for test/results/trust-properties.json. */
const runs: Record<string, number> = {};
afterAll(() => writeResults('properties', { runs, failures: 0 }));
function check<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  predicate: (value: T) => void,
  numRuns: number,
  seed: number,
) {
  fc.assert(fc.property(arb, predicate), { numRuns, seed, endOnFailure: true });
  runs[name] = (runs[name] ?? 0) + numRuns;
}

/** `check` for a predicate that awaits (a release through the engine). */
async function checkAsync<T>(
  name: string,
  arb: fc.Arbitrary<T>,
  predicate: (value: T) => Promise<void>,
  numRuns: number,
  seed: number,
) {
  await fc.assert(fc.asyncProperty(arb, predicate), { numRuns, seed, endOnFailure: true });
  runs[name] = (runs[name] ?? 0) + numRuns;
}

// ---------------------------------------------------------------------------------------------
// The spec parser

const VALID = {
  input: 'data.csv',
  format: { delimiter: ';' },
  attributes: {
    name: { type: 'identifying' },
    zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
    age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10] } },
    disease: { type: 'sensitive', hierarchy: 'disease.csv' },
  },
  privacy: [
    { model: 'k-anonymity', k: 2 },
    { model: 'distinct-l-diversity', attribute: 'disease', l: 2 },
  ],
  method: { name: 'generalization', maxSuppression: 0.1 },
  seed: 1,
  limits: { maxLatticeNodes: 1000 },
};

/** Replaces, adds or removes one value somewhere in `json`, following `path` choices. */
function mutate(json: unknown, choices: number[], replacement: unknown, mode: number): unknown {
  if (choices.length === 0 || json === null || typeof json !== 'object') return replacement;
  const [c, ...rest] = choices;
  if (Array.isArray(json)) {
    if (json.length === 0) return mode === 0 ? [replacement] : json;
    const i = c! % json.length;
    const copy = json.slice();
    if (mode === 1 && rest.length === 0) copy.splice(i, 1);
    else copy[i] = mutate(copy[i], rest, replacement, mode);
    return copy;
  }
  const obj = { ...(json as Record<string, unknown>) };
  const keys = Object.keys(obj);
  if (keys.length === 0 || (mode === 2 && rest.length === 0)) {
    obj[`x${c}`] = replacement;
    return obj;
  }
  const key = keys[c! % keys.length]!;
  if (mode === 1 && rest.length === 0) delete obj[key];
  else obj[key] = mutate(obj[key], rest, replacement, mode);
  return obj;
}

const awkwardValue = fc.oneof(
  fc.jsonValue({ maxDepth: 2 }),
  fc.constantFrom(
    0,
    -1,
    1.5,
    1e308,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    '..',
    '../x.csv',
    '/etc/passwd',
    '__proto__',
    'constructor',
    'toString',
    { __proto__: 1 },
    { intervals: [] },
    { intervals: [0] },
    { mask: 'left' },
    { level: -1 },
    [[]],
    [['zip']],
    null,
    true,
  ),
);

function onlySpecErrors(parse: () => unknown): void {
  try {
    parse();
  } catch (e) {
    if (!(e instanceof SpecError)) throw e;
    expect(e.code).toMatch(/^E_SPEC_[A-Z_]+$/);
    expect(e.hint).toBeTruthy();
  }
}

describe('property: the spec parser throws nothing but SpecError', () => {
  const file = join(dir, 'specs', 'release.json');

  it('on arbitrary JSON values', () => {
    check(
      'spec: arbitrary JSON',
      fc.jsonValue({ maxDepth: 4 }),
      (json) => onlySpecErrors(() => parseSpec(json, file)),
      400,
      1,
    );
  });

  it('on a valid spec with one part replaced, removed or added', () => {
    check(
      'spec: mutated valid spec',
      fc.tuple(
        fc.array(fc.nat({ max: 50 }), { minLength: 1, maxLength: 5 }),
        awkwardValue,
        fc.integer({ min: 0, max: 2 }),
      ),
      ([choices, replacement, mode]) =>
        onlySpecErrors(() => parseSpec(mutate(VALID, choices, replacement, mode), file)),
      800,
      2,
    );
  });

  it('on arbitrary text in release.json (syntax errors, duplicate keys, byte order marks)', () => {
    const path = fresh('release.json');
    const texts = fc.oneof(
      fc.string({ unit: 'binary', maxLength: 60 }),
      fc.json({ maxDepth: 3 }),
      fc.json({ maxDepth: 3 }).map((t) => `\ufeff${t}`),
      fc
        .tuple(fc.constantFrom('seed', 'input', 'k', '__proto__'), fc.jsonValue({ maxDepth: 1 }))
        .map(([k, v]) => JSON.stringify(VALID).replace('{', `{"${k}": ${JSON.stringify(v)}, `)),
    );
    check(
      'spec: arbitrary text',
      texts,
      (text) => {
        writeFileSync(path, text);
        onlySpecErrors(() => loadSpec(path));
      },
      300,
      3,
    );
  });

  it('the valid spec parses', () => {
    expect(parseSpec(VALID, file).privacy).toHaveLength(2);
  });
});

// ---------------------------------------------------------------------------------------------
// CSV and Arrow round trips

/** Cell text that stresses quoting: delimiters, quotes, line breaks, BOMs, any code point. */
const cell = fc.oneof(
  { weight: 3, arbitrary: fc.string({ unit: 'binary', maxLength: 6 }) },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      '',
      ' ',
      ';',
      ',',
      '\t',
      '"',
      '""',
      '\n',
      '\r',
      '\r\n',
      '\ufeff',
      'a;b',
      '"x"y',
    ),
  },
  {
    weight: 2,
    arbitrary: fc.string({
      unit: fc.constantFrom('a', ';', ',', '\t', '"', '\n', '\r', ' ', '\ufeff', 'é'),
      maxLength: 6,
    }),
  },
);

const columnName = fc
  .oneof(fc.string({ unit: 'binary', minLength: 1, maxLength: 5 }), cell)
  .filter((s) => s.trim() !== '');

interface RandomTable {
  names: string[];
  kinds: ('dictionary' | 'number')[];
  rows: (string | number)[][];
}

const number = fc.oneof(
  fc.double(),
  fc.integer({ min: -1000, max: 1000 }),
  fc.constantFrom(0, -0, 1e21, -1e21, 2 ** 53, 5e-324, Number.NaN),
);

const randomTable = (allowNumbers: boolean) =>
  fc
    .uniqueArray(columnName, { minLength: 1, maxLength: 4 })
    .chain((names) =>
      fc
        .tuple(
          fc.constant(names),
          fc.array(
            allowNumbers
              ? fc.constantFrom('dictionary' as const, 'number' as const)
              : fc.constant('dictionary' as const),
            {
              minLength: names.length,
              maxLength: names.length,
            },
          ),
          fc.integer({ min: 1, max: 25 }),
        )
        .chain(([names, kinds, n]) =>
          fc.tuple(
            fc.constant(names),
            fc.constant(kinds),
            fc.array(fc.tuple(...kinds.map((k) => (k === 'number' ? number : cell))), {
              minLength: n,
              maxLength: n,
            }),
          ),
        ),
    )
    .map(([names, kinds, rows]) => ({ names, kinds, rows }) as RandomTable);

function columnsOf(t: RandomTable): OutputColumn[] {
  return t.names.map((name, c) => {
    if (t.kinds[c] === 'number') {
      return { name, kind: 'number', values: Float64Array.from(t.rows, (r) => r[c] as number) };
    }
    const values = t.rows.map((r) => r[c] as string);
    const dictionary = [...new Set(values)];
    const index = new Map(dictionary.map((v, i) => [v, i]));
    return { name, kind: 'dictionary', dictionary, codes: Int32Array.from(values, (v) => index.get(v)!) };
  });
}

function decoded(t: EncodedTable): string[][] {
  return t.columns.map((c) => Array.from(c.codes, (code) => c.dictionary[code]!));
}

/** A read-back string equals the written cell: strings exactly, numbers as numbers. */
function expectSameCells(t: RandomTable, read: EncodedTable, numberText: (x: number) => string): void {
  expect(read.columns.map((c) => c.name)).toEqual(t.names);
  expect(read.rowCount).toBe(t.rows.length);
  const cols = decoded(read);
  t.names.forEach((_, c) => {
    const expected = t.rows.map((r) =>
      t.kinds[c] === 'number' ? numberText(r[c] as number) : (r[c] as string),
    );
    expect(cols[c]).toEqual(expected);
  });
}

describe('property: the readers round-trip what the writers write', () => {
  it('CSV, with each delimiter', () => {
    // A name starting with U+FEFF is refused (E_INPUT_NAME: an Arrow reader would drop it).
    check(
      'csv round trip',
      fc.tuple(
        randomTable(true).filter((t) => t.names.every((n) => !n.startsWith('\ufeff'))),
        fc.constantFrom(';', ',', '\t'),
      ),
      ([t, delimiter]) => {
        const path = fresh('t.csv');
        writeFileSync(path, formatCsv(columnsOf(t), delimiter));
        expectSameCells(t, readCsv(path, { delimiter }), formatNumber);
      },
      300,
      4,
    );
  });

  it('CSV, with the delimiter detected from a header of two or more plain names', () => {
    // One column leaves nothing to detect from: values may then hold any candidate.
    check(
      'csv round trip, detected delimiter',
      fc
        .tuple(randomTable(false), fc.constantFrom(';', ',', '\t'))
        .filter(
          ([t]) =>
            t.names.length > 1 && t.names.every((n) => !/[;,\t"\r\n]/.test(n) && !n.startsWith('\ufeff')),
        ),
      ([t, delimiter]) => {
        const path = fresh('d.csv');
        writeFileSync(path, formatCsv(columnsOf(t), delimiter));
        const read = readCsv(path);
        expect(read.delimiter).toBe(delimiter);
        expectSameCells(t, read, formatNumber);
      },
      200,
      5,
    );
  });

  it('Arrow', () => {
    // Column names are decoded by the Arrow library, which drops a leading U+FEFF: such names
    // are left out here (values keep it: readArrow decodes them itself).
    check(
      'arrow round trip',
      randomTable(true).filter((t) => t.names.every((n) => !n.startsWith('\ufeff'))),
      (t) => {
        const path = fresh('t.arrow');
        writeFileSync(path, encodeArrow(columnsOf(t)));
        // Arrow holds the doubles themselves: read back as JavaScript prints them, NaN as the
        // missing value (empty), as a released CSV writes it.
        expectSameCells(t, readArrow(path), (x) => (Number.isNaN(x) ? '' : String(x)));
      },
      300,
      6,
    );
  });

  it('CSV and Arrow agree on every string table', () => {
    check(
      'csv equals arrow',
      fc.tuple(
        randomTable(false).filter((t) => t.names.every((n) => !n.startsWith('\ufeff'))),
        fc.constantFrom(';', ',', '\t'),
      ),
      ([t, delimiter]) => {
        const cols = columnsOf(t);
        const a = fresh('a.arrow');
        const c = fresh('c.csv');
        writeFileSync(a, encodeArrow(cols));
        writeFileSync(c, formatCsv(cols, delimiter));
        expect(decoded(readCsv(c, { delimiter }))).toEqual(decoded(readArrow(a)));
      },
      150,
      7,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// The grouping kernel

interface KernelCase {
  n: number;
  domains: number[];
  columns: Int32Array[];
  counts: Int32Array | undefined;
  /** Per column, level tables (empty for huge domains: grouping as-is only). */
  tables: Int32Array[][];
  levels: number[][];
  width: number;
  values: Int32Array;
}

const HUGE = 2 ** 31 - 1; // codes up to 2^31 − 2: the largest an Int32 code can be

const kernelCase: fc.Arbitrary<KernelCase> = fc
  .record({
    n: fc.oneof(fc.constantFrom(0, 1, 2), fc.integer({ min: 0, max: 300 })),
    domains: fc.array(
      fc.oneof(fc.integer({ min: 1, max: 6 }), fc.integer({ min: 1, max: 5000 }), fc.constant(HUGE)),
      {
        minLength: 1,
        maxLength: 5,
      },
    ),
    weighted: fc.boolean(),
    seed: fc.integer(),
  })
  .map(({ n, domains, weighted, seed }) => {
    // Deterministic filling from the case's seed keeps shrinking meaningful and the case small.
    let x = seed >>> 0 || 1;
    const next = (bound: number) => {
      x ^= x << 13;
      x ^= x >>> 17;
      x ^= x << 5;
      x >>>= 0;
      return bound <= 1 ? 0 : Math.floor((x / 2 ** 32) * bound);
    };
    const columns = domains.map((d) => {
      const col = Int32Array.from({ length: n }, () => (next(3) === 0 ? d - 1 : next(Math.min(d, 8))));
      if (n > 0) col[n - 1] = d - 1; // the largest code of the domain, always
      return col;
    });
    const tables = domains.map((d) => {
      if (d === HUGE) return [];
      const levels = 1 + next(3);
      return Array.from({ length: levels }, (_, l) =>
        l === 0
          ? Int32Array.from({ length: d }, (_, c) => c)
          : Int32Array.from({ length: d }, () => next(Math.max(1, d >> l))),
      );
    });
    const levelChoices = Array.from({ length: 4 }, () =>
      tables.map((t) => (t.length === 0 ? -1 : next(t.length))),
    );
    const width = 1 + next(6);
    return {
      n,
      domains,
      columns,
      counts: weighted ? Int32Array.from({ length: n }, () => 1 + next(50)) : undefined,
      tables,
      levels: levelChoices,
      width,
      values: Int32Array.from({ length: n }, () => next(width)),
    };
  });

function same(a: GroupingResult, b: GroupingResult): void {
  expect(a.groups).toBe(b.groups);
  expect(Array.from(a.groupOf)).toEqual(Array.from(b.groupOf));
  expect(Array.from(a.sizes)).toEqual(Array.from(b.sizes));
}

describe('property: the WASM grouping kernel equals the TS reference', () => {
  it('on random inputs: sizes 0 and 1, weights, codes at the top of their domain (up to 2^31 − 2)', () => {
    check(
      'grouping kernel wasm = ts',
      kernelCase,
      (k) => {
        const input = { columns: k.columns, counts: k.counts, domains: k.domains };
        const open = (kernel: GroupingKernel) => kernel.open(input, k.tables);
        const wasm = open(wasmGroupingKernel);
        const ts = open(tsGroupingKernel);
        try {
          const a = wasm.group(null);
          same(a, ts.group(null));
          expect(wasm.keys(a.groups).map((c) => Array.from(c))).toEqual(
            ts.keys(a.groups).map((c) => Array.from(c)),
          );
          expect(Array.from(wasm.histogram(a.groupOf, a.groups, k.values, k.width))).toEqual(
            Array.from(ts.histogram(a.groupOf, a.groups, k.values, k.width)),
          );
          if (k.tables.every((t) => t.length > 0)) {
            for (const levels of k.levels) {
              const g = wasm.group(levels);
              same(g, ts.group(levels));
              expect(wasm.keys(g.groups).map((c) => Array.from(c))).toEqual(
                ts.keys(g.groups).map((c) => Array.from(c)),
              );
            }
          }
        } finally {
          wasm.dispose();
          ts.dispose();
        }
      },
      150,
      8,
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Random releases pass the verifier

interface ReleaseCase {
  rows: { zip: string; age: number; sex: string; disease: string }[];
  k: number;
  maxSuppression: number;
  metric: string;
  suppressed: 'mask' | 'remove';
  seed: number;
  l: number | undefined;
  qis: ('zip' | 'age' | 'sex')[];
}

const releaseCase: fc.Arbitrary<ReleaseCase> = fc
  .record({
    rows: fc.array(
      fc.record({
        zip: fc.constantFrom('47901', '47902', '47911', '48001', '1234'),
        age: fc.integer({ min: 0, max: 99 }),
        sex: fc.constantFrom('m', 'f', 'x'),
        disease: fc.constantFrom('flu', 'asthma', 'cancer', 'gout'),
      }),
      { minLength: 1, maxLength: 60 },
    ),
    kFraction: fc.double({ min: 0, max: 1, noNaN: true }),
    maxSuppression: fc.constantFrom(0, 0.05, 0.2, 0.5, 1),
    metric: fc.constantFrom('ncp', 'discernibility', 'precision', 'aecs', 'entropy'),
    suppressed: fc.constantFrom('mask' as const, 'remove' as const),
    seed: fc.nat({ max: 2 ** 32 - 1 }),
    l: fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }),
    qis: fc.subarray(['zip', 'age', 'sex'] as ('zip' | 'age' | 'sex')[], { minLength: 1 }),
  })
  .map(({ kFraction, ...c }) => ({ ...c, k: 1 + Math.floor(kFraction * (c.rows.length - 1)) }));

function writeReleaseCase(c: ReleaseCase): string {
  const root = fresh('release');
  const ws = join(root, 'in');
  const lines = [
    'id;zip;age;sex;disease',
    ...c.rows.map((r, i) => `P${i};${r.zip};${r.age};${r.sex};${r.disease}`),
  ];
  mkdirSync(ws, { recursive: true });
  writeFileSync(join(ws, 'data.csv'), `${lines.join('\n')}\n`);
  writeFileSync(join(ws, 'sex.csv'), 'm;person;*\nf;person;*\nx;*;*\n');
  const attributes: Record<string, unknown> = {
    id: { type: 'identifying' },
    zip: { type: 'insensitive' },
    age: { type: 'insensitive' },
    sex: { type: 'insensitive' },
    disease: { type: 'sensitive' },
  };
  const hierarchy = { zip: { mask: 'right' }, age: { intervals: [10, 20, 40] }, sex: 'sex.csv' };
  for (const q of c.qis) attributes[q] = { type: 'quasi-identifying', hierarchy: hierarchy[q] };
  const spec = {
    input: 'data.csv',
    format: { delimiter: ';' },
    attributes,
    privacy: [
      { model: 'k-anonymity', k: c.k },
      ...(c.l === undefined ? [] : [{ model: 'distinct-l-diversity', attribute: 'disease', l: c.l }]),
    ],
    method: {
      name: 'generalization',
      maxSuppression: c.maxSuppression,
      metric: c.metric,
      suppressed: c.suppressed,
    },
    seed: c.seed,
  };
  writeFileSync(join(ws, 'release.json'), JSON.stringify(spec));
  return root;
}

describe('property: releases of random small tables pass the verifier', () => {
  it('generalization with random k, l, suppression limit, metric, suppressed-row handling and seed', async () => {
    let released = 0;
    let noSolution = 0;
    await checkAsync(
      'random releases verified',
      releaseCase,
      async (c) => {
        const root = writeReleaseCase(c);
        const out = join(root, 'out');
        let report: ReleaseReport;
        try {
          report = (await releaseTo(join(root, 'in', 'release.json'), out)).report;
        } catch (e) {
          // Only l-diversity can be unsatisfiable (k ≤ rows always holds at the top node).
          if (e instanceof NoSolutionError && c.l !== undefined) {
            noSolution++;
            return;
          }
          throw e;
        }
        released++;
        expect(report.verification.verified).toBe(true);
        expect(trustedRelease(out)).not.toBeNull();
        // An independent look at the CSV: every released class has ≥ k rows, ids are gone.
        const text = readFileSync(join(out, 'data.csv'), 'utf8');
        expect(text).not.toMatch(/\bP\d+\b/);
        const [header, ...lines] = text.trimEnd().split('\n');
        const names = header!.split(';');
        const qi = c.qis.map((q) => names.indexOf(q));
        const classes = new Map<string, number>();
        for (const line of lines) {
          const cells = line.split(';');
          const key = qi.map((i) => cells[i]).join('\u0000');
          classes.set(key, (classes.get(key) ?? 0) + 1);
        }
        // Rows masked to * in every QI are suppressed rows or one class: few enough, or ≥ k.
        const allStars = qi.map(() => '*').join('\u0000');
        const limit = Math.floor(c.maxSuppression * c.rows.length + 1e-9);
        for (const [key, size] of classes) {
          if (key === allStars) expect(size <= limit || size >= c.k).toBe(true);
          else expect(size).toBeGreaterThanOrEqual(c.k);
        }
        expect(lines.length).toBe(
          c.suppressed === 'remove' ? c.rows.length - report.rows.suppressed : c.rows.length,
        );
        rmSync(root, { recursive: true, force: true });
      },
      40,
      9,
    );
    expect(released).toBeGreaterThan(20);
    runs['random releases: published'] = released;
    runs['random releases: no solution (l-diversity)'] = noSolution;
  });
});
