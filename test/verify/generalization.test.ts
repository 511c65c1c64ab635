/**
 * The generalization verifier catches tampered releases: every check can fail, on the staged
 * files themselves (data.arrow and data.csv read from disk), and its CSV reader accepts every
 * way of writing the same table while rejecting any other table.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import type { VerificationCheck } from '../../src/contracts/report.ts';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import { encodeParquet } from '../../src/data/parquet-write.ts';
import type { OutputColumn } from '../../src/data/table.ts';
import { VerificationError } from '../../src/errors.ts';
import { tsCsvMatchKernel, wasmCsvMatchKernel } from '../../src/kernels/csv/match.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../../src/release-spec/spec.ts';
import { codedTable, releasedNames } from '../../src/verify/common.ts';
import {
  decodeTable,
  type GeneralizationClaims,
  type GeneralizationVerifyInput,
  verifyGeneralization,
} from '../../src/verify/generalization.ts';
import { checkPieces, expectShard, summarizePart } from '../../src/verify/generalization-parts.ts';
import { csvHoldsTable } from '../../src/verify/staged-csv.ts';
import { TupleCounts } from '../../src/verify/tuples.ts';
import { encodeRows, failedChecks } from '../helpers/verify.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-verify-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

function columnsOf(names: string[], rows: string[][]): OutputColumn[] {
  return encodeRows(names, rows).columns.map((c) => ({ kind: 'dictionary' as const, ...c }));
}

/** Stages data.arrow and data.csv (the CSV from other rows or as raw text when given). */
function stage(
  names: string[],
  rows: string[][],
  csv?: { rows?: string[][]; names?: string[]; text?: string },
) {
  const base = join(dir, `release-${files++}`);
  writeFileSync(`${base}.arrow`, encodeArrow(columnsOf(names, rows)));
  writeFileSync(
    `${base}.csv`,
    csv?.text ?? encodeCsv(columnsOf(csv?.names ?? names, csv?.rows ?? rows), ';'),
  );
  return { arrow: `${base}.arrow`, csv: `${base}.csv` };
}

// 12 people; ages to decades, ZIP codes to 3-digit prefixes; the lone 999xx row is suppressed.
const INPUT_NAMES = ['id', 'age', 'zip', 'disease'];
const INPUT_ROWS = [
  ['p1', '21', '13053', 'flu'],
  ['p2', '22', '13068', 'cold'],
  ['p3', '23', '13053', 'flu'],
  ['p4', '24', '13068', 'hiv'],
  ['p5', '35', '14850', 'cancer'],
  ['p6', '36', '14853', 'flu'],
  ['p7', '37', '14850', 'cold'],
  ['p8', '38', '14853', 'cold'],
  ['p9', '51', '13053', 'flu'],
  ['p10', '52', '13068', 'hiv'],
  ['p11', '53', '13053', 'cancer'],
  ['p12', '54', '99999', 'flu'],
];
const input = encodeRows(INPUT_NAMES, INPUT_ROWS);
const attributes: AttributeSpec[] = [
  { name: 'id', type: 'identifying' },
  { name: 'age', type: 'quasi-identifying' },
  { name: 'zip', type: 'quasi-identifying' },
  { name: 'disease', type: 'sensitive' },
] as AttributeSpec[];
const distinct = (col: number) => [...new Set(INPUT_ROWS.map((r) => r[col]!))];
const hierarchyRows = new Map([
  ['age', distinct(1).map((v) => [v, `${v[0]}0-${v[0]}9`, '*'])],
  ['zip', distinct(2).map((v) => [v, `${v.slice(0, 3)}**`, '*'])],
]);
const diseases = distinct(3);
const sensitive = new Map([
  [
    'disease',
    {
      table: new Map(
        diseases.map((d) => [d, INPUT_ROWS.filter((r) => r[3] === d).length / INPUT_ROWS.length]),
      ),
      hierarchy: diseases.map((d) => [d, d === 'flu' || d === 'cold' ? 'respiratory' : 'other', '*']),
    },
  ],
]);

const NAMES = ['age', 'zip', 'disease'];
/** The honest release at node {age: 1, zip: 1}, rows reversed (the order is free). */
const RELEASED = INPUT_ROWS.map((r) =>
  r[0] === 'p12' ? ['*', '*', r[3]!] : [`${r[1]![0]}0-${r[1]![0]}9`, `${r[2]!.slice(0, 3)}**`, r[3]!],
).reverse();
const CLAIMS: GeneralizationClaims = {
  node: { age: 1, zip: 1 },
  privacy: [
    { model: 'k-anonymity', k: 3 },
    { model: 'distinct-l-diversity', attribute: 'disease', l: 3 },
  ] as PrivacyModelSpec[],
  k: 3,
  maxSuppressedRows: 1,
  suppressedRows: 1,
  classes: 3,
  minClassSize: 3,
  suppressed: 'mask',
};

/**
 * The same checks in pieces, as a sharded release runs them: the input in two shards (sharing
 * their dictionaries, as the input reader's do), the staged files as one output part, their
 * classes split into three partitions and each partition read back from its bytes.
 */
function verifyInPieces(args: GeneralizationVerifyInput): VerificationCheck[] {
  if (typeof args.arrow !== 'string' || typeof args.csv !== 'string') throw new Error('staged files only');
  const names = [...args.sensitive.keys()];
  const half = Math.ceil(args.input.rowCount / 2);
  const shards = [
    [0, half],
    [half, args.input.rowCount],
  ].map(([from, to]) =>
    expectShard({
      shard: {
        ...args.input,
        rowCount: to! - from!,
        columns: args.input.columns.map((c) => ({ ...c, codes: c.codes.subarray(from, to) })),
      },
      attributes: args.attributes,
      hierarchyRows: args.hierarchyRows,
      node: args.claims.node,
      sensitive: names,
      partitions: 3,
    }),
  );
  const part = summarizePart({
    arrow: args.arrow,
    csv: args.csv,
    parquet: args.parquet,
    delimiter: args.input.delimiter,
    attributes: args.attributes,
    sensitive: names,
    partitions: 3,
  });
  return checkPieces({
    names: releasedNames(args.input, args.attributes),
    attributes: args.attributes,
    shards,
    parts: [part],
    claims: args.claims,
    sensitive: args.sensitive,
    parquet: args.parquet !== undefined,
  });
}

const VERIFIERS = [
  ['as a whole', verifyGeneralization],
  ['in pieces', verifyInPieces],
] as const;

/** The verifier the current describe block runs. */
let verifier: (args: GeneralizationVerifyInput) => VerificationCheck[] = verifyGeneralization;

function verify(
  files: { arrow: string; csv: string; parquet?: string },
  claims: Partial<GeneralizationClaims> = {},
) {
  return verifier({
    input,
    attributes,
    hierarchyRows,
    sensitive,
    ...files,
    claims: { ...CLAIMS, ...claims },
  });
}

/** Stages a data.parquet of `rows` beside staged files. */
function withParquet(files: { arrow: string; csv: string }, names: string[], rows: string[][]) {
  const parquet = files.arrow.replace(/\.arrow$/, '.parquet');
  writeFileSync(parquet, encodeParquet(columnsOf(names, rows)));
  return { ...files, parquet };
}

const replaced = (rows: string[][], at: number, row: string[]) => rows.map((r, j) => (j === at ? row : r));

describe.each(VERIFIERS)('the generalization verifier %s', (how, chosen) => {
  beforeEach(() => {
    verifier = chosen;
  });

  it('passes the honest release, with every check named', () => {
    const checks = verify(stage(NAMES, RELEASED));
    expect(checks.map((c) => c.name)).toEqual([
      'csv-equals-arrow',
      'columns',
      'rows-generalize-input',
      'suppression',
      'k-anonymity',
      'distinct-l-diversity',
      'reported-classes',
    ]);
    expect(checks.every((c) => c.passed)).toBe(true);
    expect(checks[2]!.detail).toContain('(11 retained)');
    expect(checks[4]!.detail).toBe('3 classes, 0 failing; worst class: 3');
  });

  it('passes the release with the suppressed row removed instead of masked', () => {
    const removed = RELEASED.filter((r) => r[0] !== '*');
    expect(verify(stage(NAMES, removed), { suppressed: 'remove' }).every((c) => c.passed)).toBe(true);
    // …but not as a masked release, nor a masked release as a removing one.
    expect(failedChecks(() => verify(stage(NAMES, removed)))).toContain('rows-generalize-input');
    expect(failedChecks(() => verify(stage(NAMES, RELEASED), { suppressed: 'remove' }))).toContain(
      'rows-generalize-input',
    );
  });

  it.runIf(how === 'as a whole')('passes decoded tables as well as staged files', () => {
    const files = stage(NAMES, RELEASED);
    const arrow = decodeTable(readArrow(files.arrow));
    expect(verify({ arrow, csv: arrow } as never).every((c) => c.passed)).toBe(true);
  });

  it('catches a released cell changed in both files', () => {
    const row = RELEASED.findIndex((r) => r[0] === '20-29');
    const sa = replaced(RELEASED, row, ['20-29', '130**', 'cancer']);
    expect(failedChecks(() => verify(stage(NAMES, sa)))).toEqual(['rows-generalize-input']);
    const qi = replaced(RELEASED, row, ['30-39', '130**', RELEASED[row]![2]!]);
    expect(failedChecks(() => verify(stage(NAMES, qi)))).toContain('rows-generalize-input');
    // A row generalized further than the node is not the row at the node either.
    const higher = replaced(RELEASED, row, ['*', '130**', RELEASED[row]![2]!]);
    expect(failedChecks(() => verify(stage(NAMES, higher)))).toContain('rows-generalize-input');
  });

  it('catches a row dropped, duplicated or suppressed without a claim', () => {
    // RELEASED[0] is the masked row: drop a retained one.
    expect(failedChecks(() => verify(stage(NAMES, RELEASED.slice(0, -1))))).toEqual(
      expect.arrayContaining(['rows-generalize-input', 'suppression']),
    );
    expect(failedChecks(() => verify(stage(NAMES, RELEASED.slice(1))))).toEqual(['rows-generalize-input']);
    expect(failedChecks(() => verify(stage(NAMES, [...RELEASED, RELEASED[0]!])))).toContain(
      'rows-generalize-input',
    );
    // An extra masked row in place of a retained one: more suppressed than claimed.
    const masked = replaced(RELEASED, 1, ['*', '*', RELEASED[1]![2]!]);
    expect(failedChecks(() => verify(stage(NAMES, masked)))).toEqual(
      expect.arrayContaining(['suppression', 'reported-classes']),
    );
    // A masked row whose SA value is not the suppressed row's, before or after the rows that
    // hold the value it took.
    const wrongSa = RELEASED.map((r) => (r[0] === '*' ? ['*', '*', 'cancer'] : r));
    expect(failedChecks(() => verify(stage(NAMES, wrongSa)))).toEqual(['rows-generalize-input']);
    expect(failedChecks(() => verify(stage(NAMES, [...wrongSa].reverse())))).toEqual([
      'rows-generalize-input',
    ]);
  });

  it('catches a class below k and a violated model', () => {
    expect(
      failedChecks(() => verify(stage(NAMES, RELEASED), { privacy: [{ model: 'k-anonymity', k: 4 }] })),
    ).toEqual(['k-anonymity']);
    const models: PrivacyModelSpec[] = [
      { model: 'distinct-l-diversity', attribute: 'disease', l: 4 },
      { model: 'entropy-l-diversity', attribute: 'disease', l: 3 },
      { model: 'recursive-cl-diversity', attribute: 'disease', c: 1, l: 2 },
      { model: 't-closeness', attribute: 'disease', t: 0.05, distance: 'equal' },
      { model: 't-closeness', attribute: 'disease', t: 0.05, distance: 'ordered' },
      { model: 't-closeness', attribute: 'disease', t: 0.05, distance: 'hierarchical' },
      { model: 'delta-disclosure', attribute: 'disease', delta: 0.5 },
    ] as PrivacyModelSpec[];
    for (const model of models) {
      expect(failedChecks(() => verify(stage(NAMES, RELEASED), { privacy: [model] }))).toEqual([model.model]);
    }
    // The same models, loose enough, hold.
    const loose = [
      { model: 'entropy-l-diversity', attribute: 'disease', l: 2 },
      { model: 'recursive-cl-diversity', attribute: 'disease', c: 3, l: 2 },
      { model: 't-closeness', attribute: 'disease', t: 0.5, distance: 'hierarchical' },
      { model: 'delta-disclosure', attribute: 'disease', delta: 2 },
    ] as PrivacyModelSpec[];
    expect(verify(stage(NAMES, RELEASED), { privacy: loose }).every((c) => c.passed)).toBe(true);
  });

  it('catches claims that do not match the files', () => {
    const files = stage(NAMES, RELEASED);
    expect(failedChecks(() => verify(files, { suppressedRows: 0 }))).toEqual(['suppression']);
    expect(failedChecks(() => verify(files, { maxSuppressedRows: 0 }))).toEqual(['suppression']);
    expect(failedChecks(() => verify(files, { classes: 4 }))).toEqual(['reported-classes']);
    expect(failedChecks(() => verify(files, { minClassSize: 4 }))).toEqual(['reported-classes']);
    expect(failedChecks(() => verify(files, { node: { age: 2, zip: 1 } }))).toContain(
      'rows-generalize-input',
    );
  });

  it('catches an identifying column released and input values outside the hierarchy', () => {
    const withId = INPUT_ROWS.map((r, j) => [r[0]!, ...RELEASED[RELEASED.length - 1 - j]!]);
    expect(failedChecks(() => verify(stage(['id', ...NAMES], withId)))).toContain('columns');
    const partial = new Map(hierarchyRows);
    partial.set('age', hierarchyRows.get('age')!.slice(1));
    expect(() =>
      verifier({
        input,
        attributes,
        hierarchyRows: partial,
        sensitive,
        ...stage(NAMES, RELEASED),
        claims: CLAIMS,
      }),
    ).toThrow(/1 input cells outside the hierarchies/);
  });

  it('checks data.parquet against data.arrow when there is one, and catches one that differs', () => {
    const honest = verify(withParquet(stage(NAMES, RELEASED), NAMES, RELEASED));
    expect(honest.find((c) => c.name === 'parquet-equals-arrow')).toMatchObject({ passed: true });
    expect(verify(stage(NAMES, RELEASED)).map((c) => c.name)).not.toContain('parquet-equals-arrow');
    const cell = replaced(RELEASED, 3, ['20-29', '130**', 'cancer']);
    const swapped = [RELEASED[1]!, RELEASED[0]!, ...RELEASED.slice(2)];
    for (const [names, rows] of [
      [NAMES, cell],
      [NAMES, swapped],
      [NAMES, RELEASED.slice(1)],
      [NAMES, [...RELEASED, RELEASED[0]!]],
      [['age', 'zip', 'illness'], RELEASED],
    ] as const) {
      expect(failedChecks(() => verify(withParquet(stage(NAMES, RELEASED), [...names], [...rows])))).toEqual([
        'parquet-equals-arrow',
      ]);
    }
    // A file cut short, or not there at all.
    const cut = withParquet(stage(NAMES, RELEASED), NAMES, RELEASED);
    writeFileSync(cut.parquet, readFileSync(cut.parquet).subarray(0, 100));
    expect(failedChecks(() => verify(cut))).toEqual(['parquet-equals-arrow']);
    const missing = { ...stage(NAMES, RELEASED), parquet: join(dir, 'no-such.parquet') };
    expect(failedChecks(() => verify(missing))).toEqual(['parquet-equals-arrow']);
  });

  it('catches data.csv that differs from data.arrow', () => {
    const cell = replaced(RELEASED, 3, ['20-29', '130**', 'cancer']);
    expect(failedChecks(() => verify(stage(NAMES, RELEASED, { rows: cell })))).toEqual(['csv-equals-arrow']);
    // The same multiset of rows in another order is another table.
    const swapped = [RELEASED[1]!, RELEASED[0]!, ...RELEASED.slice(2)];
    expect(RELEASED[0]).not.toEqual(RELEASED[1]);
    expect(failedChecks(() => verify(stage(NAMES, RELEASED, { rows: swapped })))).toEqual([
      'csv-equals-arrow',
    ]);
    expect(failedChecks(() => verify(stage(NAMES, RELEASED, { rows: RELEASED.slice(1) })))).toEqual([
      'csv-equals-arrow',
    ]);
    expect(failedChecks(() => verify(stage(NAMES, RELEASED, { rows: [...RELEASED, RELEASED[0]!] })))).toEqual(
      ['csv-equals-arrow'],
    );
    expect(failedChecks(() => verify(stage(NAMES, RELEASED, { names: ['age', 'zip', 'illness'] })))).toEqual([
      'csv-equals-arrow',
    ]);
  });
});

// Random tables with values that need quoting, random nodes and suppressed rows: the honest
// release passes (staged files, and CSV written another valid way), a tampered one does not.
const VALUES = ['a', 'b;c', 'say "x"', 'two\nlines', 'é', '', ' sp ', 'cr\r\nlf', '"', ';', ',', '\t', 'x'];

interface RandomCase {
  rows: { q1: number; q2: number; s: number; i: number }[];
  labels: number[];
  levels: [number, number];
  suppressed: boolean[];
  mode: 'mask' | 'remove';
  delimiter: string;
  tamper: { row: number; column: number; kind: 'cell' | 'drop' | 'csv-cell' | 'csv-swap' };
}

const randomCase: fc.Arbitrary<RandomCase> = fc
  .record({
    rows: fc.array(
      fc.record({
        q1: fc.nat({ max: VALUES.length - 1 }),
        q2: fc.nat({ max: VALUES.length - 1 }),
        s: fc.nat({ max: VALUES.length - 1 }),
        i: fc.nat({ max: VALUES.length - 1 }),
      }),
      { minLength: 1, maxLength: 40 },
    ),
    labels: fc.array(fc.nat({ max: VALUES.length - 1 }), {
      minLength: VALUES.length,
      maxLength: VALUES.length,
    }),
    levels: fc.tuple(fc.nat({ max: 2 }), fc.nat({ max: 2 })),
    suppressed: fc.array(fc.boolean(), { minLength: 40, maxLength: 40 }),
    mode: fc.constantFrom('mask' as const, 'remove' as const),
    delimiter: fc.constantFrom(';', ',', '\t'),
    tamper: fc.record({
      row: fc.nat(),
      column: fc.nat({ max: 3 }),
      kind: fc.constantFrom('cell' as const, 'drop' as const, 'csv-cell' as const, 'csv-swap' as const),
    }),
  })
  // '*' is never a value or label, so masked rows are told apart from generalized ones.
  .filter((c) => c.rows.some((_, r) => !c.suppressed[r]));

function releaseOf(c: RandomCase) {
  const names = ['id', 'q1', 'q2', 's', 'i'];
  const rows = c.rows.map((r, j) => [`p${j}`, VALUES[r.q1]!, VALUES[r.q2]!, VALUES[r.s]!, VALUES[r.i]!]);
  const table = { ...encodeRows(names, rows), delimiter: c.delimiter };
  // Level 1 labels are values too (with every special character); level 2 is 'all'.
  const label = (v: string) => `${VALUES[c.labels[VALUES.indexOf(v)]!]!}|1`;
  const hierarchy = new Map(
    ['q1', 'q2'].map((q, n) => [
      q,
      [...new Set(rows.map((r) => r[n + 1]!))].map((v) => [v, label(v), 'all']),
    ]),
  );
  const at = (v: string, level: number) => [v, label(v), 'all'][level]!;
  const released: string[][] = [];
  rows.forEach((r, j) => {
    if (!c.suppressed[j]) released.push([at(r[1]!, c.levels[0]), at(r[2]!, c.levels[1]), r[3]!, r[4]!]);
    else if (c.mode === 'mask') released.push(['*', '*', r[3]!, r[4]!]);
  });
  const sizes = new Map<string, number>();
  for (const r of released)
    if (r[0] !== '*') sizes.set(`${r[0]}\u0000${r[1]}`, (sizes.get(`${r[0]}\u0000${r[1]}`) ?? 0) + 1);
  const suppressedRows = rows.filter((_, j) => c.suppressed[j]).length;
  const claims: GeneralizationClaims = {
    node: { q1: c.levels[0], q2: c.levels[1] },
    privacy: [{ model: 'k-anonymity', k: 1 }] as PrivacyModelSpec[],
    k: 1,
    maxSuppressedRows: suppressedRows,
    suppressedRows,
    classes: sizes.size,
    minClassSize: Math.min(...sizes.values()),
    suppressed: c.mode,
  };
  const args = {
    input: table,
    attributes: [
      { name: 'id', type: 'identifying' },
      { name: 'q1', type: 'quasi-identifying' },
      { name: 'q2', type: 'quasi-identifying' },
      { name: 's', type: 'sensitive' },
      { name: 'i', type: 'insensitive' },
    ] as AttributeSpec[],
    hierarchyRows: hierarchy,
    sensitive: new Map(),
    claims,
  };
  return { released, args };
}

function stageWith(delimiter: string, arrowRows: string[][], csv: string | string[][]) {
  const base = join(dir, `random-${files++}`);
  const names = ['q1', 'q2', 's', 'i'];
  writeFileSync(`${base}.arrow`, encodeArrow(columnsOf(names, arrowRows)));
  writeFileSync(`${base}.csv`, typeof csv === 'string' ? csv : encodeCsv(columnsOf(names, csv), delimiter));
  return { arrow: `${base}.arrow`, csv: `${base}.csv` };
}

/** Every field quoted, CRLF line ends: the same table written another way. */
function quotedCsv(rows: string[][], delimiter: string): string {
  const q = (v: string) => `"${v.replaceAll('"', '""')}"`;
  return [['q1', 'q2', 's', 'i'], ...rows].map((r) => r.map(q).join(delimiter)).join('\r\n');
}

describe('the generalization verifier on random releases', () => {
  it('passes honest releases and fails tampered ones', () => {
    fc.assert(
      fc.property(randomCase, (c) => {
        const { released, args } = releaseOf(c);
        // ppdp suppresses whole classes; in pieces, a class released in part fails verification.
        const classOf = (r: RandomCase['rows'][number]) =>
          [r.q1, r.q2]
            .map((v, q) => (c.levels[q] === 0 ? v : c.levels[q] === 1 ? c.labels[v] : 'all'))
            .join();
        const wholeClasses = c.rows.every((r, j) =>
          c.rows.every((o, k) => classOf(r) !== classOf(o) || c.suppressed[j] === c.suppressed[k]),
        );
        for (const [how, verifyWith] of VERIFIERS) {
          const run = (files: { arrow: string; csv: string }) => verifyWith({ ...args, ...files });
          if (how === 'in pieces' && !wholeClasses) {
            expect(() => run(stageWith(c.delimiter, released, released))).toThrow(VerificationError);
            continue;
          }
          expect(run(stageWith(c.delimiter, released, released)).every((x) => x.passed)).toBe(true);
          expect(run(stageWith(c.delimiter, released, quotedCsv(released, c.delimiter))).length).toBe(6);

          const j = c.tamper.row % released.length;
          const changed = released.map((r, n) =>
            n === j ? r.map((v, col) => (col === c.tamper.column ? `${v}~` : v)) : r,
          );
          let files: { arrow: string; csv: string };
          if (c.tamper.kind === 'cell') files = stageWith(c.delimiter, changed, changed);
          else if (c.tamper.kind === 'drop') {
            const dropped = released.filter((_, n) => n !== j);
            files = stageWith(c.delimiter, dropped, dropped);
          } else if (c.tamper.kind === 'csv-cell') files = stageWith(c.delimiter, released, changed);
          else {
            const k = (j + 1) % released.length;
            if (released[j]!.join('\u0000') === released[k]!.join('\u0000')) return;
            const swapped = released.map((r, n) => (n === j ? released[k]! : n === k ? released[j]! : r));
            files = stageWith(c.delimiter, released, swapped);
          }
          // (data.arrow without rows is refused by its reader, before any check.)
          if (c.tamper.kind === 'drop' && released.length === 1) expect(() => run(files)).toThrow();
          else expect(() => run(files)).toThrow(VerificationError);
        }
      }),
      { numRuns: 150, seed: 42 },
    );
  });
});

describe("the verifier's CSV reader", () => {
  const names = ['a', 'b;c', 'd'];
  const rows = [
    ['x', 'say "hi"', ''],
    ['', 'two\nlines', 'é'],
    ['x', 'a;b', 'crlf\r\nkept'],
    ['long value of some length', 'x', 'y'],
  ];
  const text = (lineEnd: string, last: string) =>
    'a;"b;c";d' +
    lineEnd +
    `x;"say ""hi""";${lineEnd}` +
    `"";"two\nlines";"é"${lineEnd}` +
    `"x";"a;b";"crlf\r\nkept"${lineEnd}` +
    `long value of some length;x;y${last}`;
  const table = () => codedTable(readArrow(stage(names, rows).arrow));
  // The same columns as their rows' bytes (columns that pass through), as a part's check reads them.
  const rawTable = () => {
    const part = readArrow(stage(names, rows).arrow, { raw: new Set(names) });
    return { ...codedTable(part), raw: part.columns.map((c) => c.raw) };
  };
  // Both kernels of the fast path, coded or as bytes: their answers must agree, whatever falls
  // back to the reader.
  const holds = (csv: string, chunk?: number) => {
    const path = join(dir, `reader-${files++}.csv`);
    writeFileSync(path, csv);
    const answers = [tsCsvMatchKernel, wasmCsvMatchKernel].flatMap((kernel) =>
      [table(), rawTable()].map((t) => csvHoldsTable(path, ';', t, chunk, kernel)),
    );
    expect(answers).toEqual(answers.map(() => answers[0]));
    return answers[0];
  };

  it('accepts the table however it is quoted, with LF or CRLF, with or without a final line end', () => {
    expect(rawTable().raw.every((r) => r !== undefined)).toBe(true);
    for (const chunk of [16, 17, 23, 64, undefined]) {
      expect(holds(text('\n', '\n'), chunk)).toBe(true);
      expect(holds(text('\r\n', '\r\n'), chunk)).toBe(true);
      expect(holds(text('\n', ''), chunk)).toBe(true);
      expect(holds(`\ufeff${text('\n', '\n')}`, chunk)).toBe(true);
      expect(holds(Buffer.from(encodeCsv(columnsOf(names, rows), ';')).toString('utf8'), chunk)).toBe(true);
    }
  });

  it('rejects any other table', () => {
    const good = text('\n', '\n');
    for (const chunk of [16, 64, undefined]) {
      expect(holds(good.replace('é', 'e'), chunk)).toBe(false);
      expect(holds(good.replace('long value', 'long valu'), chunk)).toBe(false);
      expect(holds(good.replace('of some length;', 'of some lengthy;'), chunk)).toBe(false);
      expect(holds(good.replace('"a;b"', 'a;b'), chunk)).toBe(false);
      expect(holds(good.replace('""hi""', '"hi"'), chunk)).toBe(false);
      expect(holds(good.replace('x;y\n', 'x;y;\n'), chunk)).toBe(false);
      expect(holds(good.replace('x;y\n', 'x\n'), chunk)).toBe(false);
      expect(holds(`${good}x;y;z\n`, chunk)).toBe(false);
      expect(holds(good.slice(0, good.lastIndexOf('long')), chunk)).toBe(false);
      expect(holds(good.replace('a;"b;c";d', 'a;b;d'), chunk)).toBe(false);
      expect(holds(good.replace('\r\nkept', '\nkept'), chunk)).toBe(false);
      expect(holds(good.replace('x;"say', 'x\r;"say'), chunk)).toBe(false);
    }
    expect(holds('')).toBe(false);
  });
});

describe('TupleCounts', () => {
  it('counts like a map of strings in every mode (direct, hashed keys, hashed tuples)', () => {
    let seed = 7;
    const random = (n: number) => {
      seed = (Math.imul(seed, 1103515245) + 12345) | 0;
      return ((seed >>> 8) % n) - 2;
    };
    for (const radices of [
      [5, 7, 3],
      [1000, 1000, 1000, 1000, 1000],
      [1000, 1000, 1000, 1000, 1000, 1000],
      [2 ** 20, 2 ** 20, 2 ** 20, 4],
      [],
    ]) {
      for (const directLimit of [0, 1 << 22]) {
        const counts = new TupleCounts(radices.length, radices, directLimit);
        const reference = new Map<string, number>();
        const ids = new Map<string, number>();
        const tuple = new Int32Array(radices.length);
        for (let i = 0; i < 5000; i++) {
          radices.forEach((r, k) => {
            tuple[k] = random(Math.min(r, 40));
          });
          const key = tuple.join(',');
          if (i % 3 === 0) {
            expect(counts.find(tuple)).toBe(ids.get(key) ?? -1);
            continue;
          }
          const id = counts.intern(tuple);
          if (!ids.has(key)) ids.set(key, ids.size);
          expect(id).toBe(ids.get(key));
          counts.counts[id]++;
          reference.set(key, (reference.get(key) ?? 0) + 1);
        }
        expect(counts.size).toBe(ids.size);
        for (const [key, id] of ids) expect(counts.counts[id]).toBe(reference.get(key));
      }
    }
  });
});
