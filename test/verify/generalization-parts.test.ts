/**
 * Verification in pieces through its binary slices: each slice's classes split into
 * partitions, written as bytes and read back, compared a partition at a time. The bytes round
 * trip, bad bytes are refused, and a tampered part fails whatever the number of partitions.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import type { OutputColumn } from '../../src/data/table.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../../src/release-spec/spec.ts';
import { partitionOfLane } from '../../src/util/keys.ts';
import { dictionaryHashes, fold, KEY_SEED, QI_SEED } from '../../src/verify/fingerprint.ts';
import type { GeneralizationClaims } from '../../src/verify/generalization.ts';
import {
  type ClassEntries,
  checkPieces,
  decodePartition,
  encodePartition,
  expectShard,
  PiecesCheck,
  partitionOf,
  partitionsOf,
  ROWS_PER_PARTITION,
  summarizePart,
} from '../../src/verify/generalization-parts.ts';
import { encodeRows, failedChecks } from '../helpers/verify.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

// 600 rows: 100 ages × 2 sexes, each (age band, sex) class of 3 × 2 = 6 rows; 10 diagnoses.
const ROWS = Array.from({ length: 600 }, (_, r) => [
  String(20 + (r % 100)),
  r % 200 < 100 ? 'F' : 'M',
  `d${(r * 7) % 10}`,
]);
const NAMES = ['age', 'sex', 'diagnosis'];
const attributes = [
  { name: 'age', type: 'quasi-identifying' },
  { name: 'sex', type: 'quasi-identifying' },
  { name: 'diagnosis', type: 'sensitive' },
] as AttributeSpec[];
const band = (age: string) => `${Math.floor(Number(age) / 2) * 2}`;
const hierarchyRows = new Map([
  ['age', [...new Set(ROWS.map((r) => r[0]!))].map((v) => [v, band(v), '*'])],
  [
    'sex',
    [
      ['F', 'F', '*'],
      ['M', 'M', '*'],
    ],
  ],
]);
const RELEASED = ROWS.map((r) => [band(r[0]!), r[1]!, r[2]!]);
const diagnoses = [...new Set(ROWS.map((r) => r[2]!))];
const sensitive = new Map([
  [
    'diagnosis',
    {
      table: new Map(diagnoses.map((d) => [d, ROWS.filter((r) => r[2] === d).length / ROWS.length])),
      hierarchy: undefined,
    },
  ],
]);
const CLAIMS: GeneralizationClaims = {
  node: { age: 1, sex: 1 },
  privacy: [
    { model: 'k-anonymity', k: 6 },
    { model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 },
  ] as PrivacyModelSpec[],
  k: 6,
  maxSuppressedRows: 0,
  suppressedRows: 0,
  classes: 100,
  minClassSize: 6,
  suppressed: 'mask',
};

/** A staged part of `rows` (Arrow and CSV alike). */
function stage(rows: string[][]) {
  const base = join(dir, `part-${files++}`);
  const columns: OutputColumn[] = encodeRows(NAMES, rows).columns.map((c) => ({
    kind: 'dictionary' as const,
    ...c,
  }));
  writeFileSync(`${base}.arrow`, encodeArrow(columns));
  writeFileSync(`${base}.csv`, encodeCsv(columns, ';'));
  return { arrow: `${base}.arrow`, csv: `${base}.csv` };
}

/** The input in three shards and the release in two parts, as slices split into `partitions`. */
function slices(released: string[][], partitions: number) {
  const input = encodeRows(NAMES, ROWS);
  const shards = [0, 200, 400].map((from) =>
    expectShard({
      shard: {
        ...input,
        rowCount: 200,
        columns: input.columns.map((c) => ({ ...c, codes: c.codes.subarray(from, from + 200) })),
      },
      attributes,
      hierarchyRows,
      node: CLAIMS.node,
      sensitive: ['diagnosis'],
      partitions,
    }),
  );
  const parts = [released.slice(0, 250), released.slice(250)].map((rows) =>
    summarizePart({
      ...stage(rows),
      delimiter: ';',
      attributes,
      sensitive: ['diagnosis'],
      partitions,
    }),
  );
  return { shards, parts };
}

const check = (s: ReturnType<typeof slices>) =>
  checkPieces({ names: NAMES, attributes, claims: CLAIMS, sensitive, ...s });

const PARTITIONS = [1, 4, 7];

describe('a slice in binary', () => {
  it('round-trips each partition, and the partitions hold every class once, each in its own', () => {
    for (const partitions of PARTITIONS) {
      const { shards, parts } = slices(RELEASED, partitions);
      for (const classes of [...shards, ...parts].map((s) => s.classes)) {
        expect(classes.bounds.length).toBe(partitions + 1);
        const back: ClassEntries[] = [];
        for (let p = 0; p < partitions; p++) {
          const bytes = encodePartition(classes, p);
          const decoded = decodePartition(bytes, 'x');
          // Written again, the same bytes; read from a Buffer at an odd offset (as a store's), the same.
          expect(Buffer.from(encodePartition(decoded, 0)).equals(Buffer.from(bytes))).toBe(true);
          const odd = Buffer.concat([Buffer.from('xyz'), bytes]).subarray(3);
          expect(decodePartition(odd, 'x')).toEqual(decoded);
          const n = classes.bounds[p + 1]! - classes.bounds[p]!;
          expect(decoded.keys.length).toBe(4 * n);
          for (let i = 0; i < n; i++) expect(partitionOfLane(decoded.keys[4 * i + 2]!, partitions)).toBe(p);
          back.push(decoded);
        }
        const keys = back.flatMap((d) => [...d.keys]);
        expect(keys).toEqual([...classes.keys]);
        expect(back.flatMap((d) => [...d.sums])).toEqual([...classes.sums]);
        // The cells come back to the classes they belong to.
        for (const [p, d] of back.entries())
          for (const [a, cells] of d.cells.entries()) {
            const all = classes.cells[a]!;
            const from = classes.bounds[p]!;
            const mine = [];
            for (let t = 0; t < all.length; t += 3)
              if (all[t]! >= from && all[t]! < classes.bounds[p + 1]!)
                mine.push(all[t]! - from, all[t + 1]!, all[t + 2]!);
            expect([...cells]).toEqual(mine);
          }
      }
      // The sizes sum to the rows; a shard's classes here are halves of the release's.
      const sizes = (c: ClassEntries) =>
        c.sums.filter((_, i) => i % c.lanes === 0).reduce((a, b) => a + b, 0);
      for (const s of [...shards, ...parts]) expect(sizes(s.classes)).toBe(s.rows);
      expect(parts.reduce((n, p) => n + p.classes.keys.length / 4, 0)).toBeGreaterThanOrEqual(100);
    }
  });

  it('refuses bytes cut short, of another kind, or naming a class it does not hold', () => {
    const { parts } = slices(RELEASED, 1);
    const bytes = encodePartition(parts[0]!.classes, 0);
    expect(() => decodePartition(bytes.subarray(0, bytes.length - 4), 'verify/part-0/0.bin')).toThrow(
      /verify\/part-0\/0\.bin: not a verification slice's partition \(its length\)/,
    );
    const other = bytes.slice();
    other[0] ^= 1;
    expect(() => decodePartition(other, 'f')).toThrow(/its header/);
    // The first cell's class number set past the classes.
    const words = new Uint32Array(bytes.slice().buffer);
    const cells = words.length - 3 * words[5]!;
    words[cells] = words[3]!;
    expect(() => decodePartition(new Uint8Array(words.buffer), 'f')).toThrow(/a class out of range/);
  });

  it('splits a release into partitions by its rows', () => {
    expect(partitionsOf(1)).toBe(1);
    expect(partitionsOf(ROWS_PER_PARTITION)).toBe(1);
    expect(partitionsOf(ROWS_PER_PARTITION + 1)).toBe(2);
    expect(partitionsOf(100_000_000)).toBe(Math.ceil(100_000_000 / ROWS_PER_PARTITION));
  });
});

describe.each(PARTITIONS)('the reduce over %i partitions', (partitions) => {
  it('passes the honest release with the same checks as over one', () => {
    const checks = check(slices(RELEASED, partitions));
    expect(checks.every((c) => c.passed)).toBe(true);
    expect(checks).toEqual(check(slices(RELEASED, 1)));
    expect(checks.find((c) => c.name === 'reported-classes')!.detail).toMatch(/found 100, smallest 6/);
  });

  it('fails a part with a row moved to another class (one class broken, another grown)', () => {
    const moved = RELEASED.map((r, j) => (j === 5 ? ['40', r[1]!, r[2]!] : r));
    expect(moved[5]![0]).not.toBe(RELEASED[5]![0]);
    expect(failedChecks(() => check(slices(moved, partitions)))).toContain('rows-generalize-input');
  });

  it("fails a part with a row's sensitive value changed (sizes alike, fingerprints not)", () => {
    const changed = RELEASED.map((r, j) => (j === 301 ? [r[0]!, r[1]!, r[2] === 'd1' ? 'd2' : 'd1'] : r));
    expect(failedChecks(() => check(slices(changed, partitions)))).toEqual(['rows-generalize-input']);
  });

  it('fails a part with two rows swapped between classes, each keeping its size', () => {
    // Rows 0 and 2 are in different classes; their diagnoses swap: sizes equal, rows not.
    const swapped = RELEASED.map((r, j) =>
      j === 0 ? [r[0]!, r[1]!, RELEASED[2]![2]!] : j === 2 ? [r[0]!, r[1]!, RELEASED[0]![2]!] : r,
    );
    expect(swapped[0]![2]).not.toBe(RELEASED[0]![2]);
    expect(failedChecks(() => check(slices(swapped, partitions)))).toEqual(['rows-generalize-input']);
  });

  it('fails a part with rows added in a class the input does not make (suppressed rows removed)', () => {
    const added = [...RELEASED, ...Array.from({ length: 6 }, (_, i) => ['998', 'F', `d${i % 2}`])];
    const claims = { ...CLAIMS, suppressed: 'remove' as const, classes: 101 };
    expect(
      failedChecks(() =>
        checkPieces({ names: NAMES, attributes, claims, sensitive, ...slices(added, partitions) }),
      ),
    ).toEqual(['rows-generalize-input']);
  });

  it("fails when a part's partition file lacks a class it held", () => {
    const s = slices(RELEASED, partitions);
    const reduce = new PiecesCheck({ names: NAMES, attributes, claims: CLAIMS, sensitive, ...s });
    for (let p = 0; p < partitions; p++) {
      const parts = s.parts.map((x) => partitionOf(x.classes, p));
      const first = parts[0]!;
      // The part's first class in this partition dropped (its cells too).
      const n = first.keys.length / 4;
      if (p === 0 && n > 0)
        parts[0] = decodePartition(
          encodePartition(
            {
              ...first,
              keys: first.keys.subarray(4),
              sums: first.sums.subarray(first.lanes),
              bounds: Uint32Array.of(0, n - 1),
              cells: first.cells.map((t) => {
                const rest = t.filter((_, i) => t[i - (i % 3)]! > 0);
                return rest.map((x, i) => (i % 3 === 0 ? x - 1 : x));
              }),
            },
            0,
          ),
          'x',
        );
      reduce.add({ shards: s.shards.map((x) => partitionOf(x.classes, p)), parts });
    }
    expect(failedChecks(() => reduce.finish())).toContain('rows-generalize-input');
  });

  it('fails a class that breaks a model in one part only (its counts merged over parts)', () => {
    // Class (20, F) spans both parts; all of its diagnoses set to one value: l-diversity fails.
    const one = RELEASED.map((r) => (r[0] === '20' && r[1] === 'F' ? [r[0]!, r[1]!, 'd0'] : r));
    expect(failedChecks(() => check(slices(one, partitions)))).toEqual(
      expect.arrayContaining(['rows-generalize-input', 'distinct-l-diversity']),
    );
  });
});

describe("a class's key", () => {
  /** The key of a row of labels: each QI's value hash (4 lanes) folded in column order. */
  const keyOf = (labels: string[]) => {
    const k = [QI_SEED[0], QI_SEED[1], KEY_SEED[0], KEY_SEED[1]];
    labels.forEach((label, c) => {
      const h = dictionaryHashes(c, [label], 4);
      for (let l = 0; l < 4; l++) k[l] = fold(k[l]!, h[l]!);
    });
    return k.join(',');
  };

  // Few values (every QI folded ahead), 300 × 300 values (the first only: 90,000 combinations
  // pass the table's bound), and 33,000 values first (none ahead).
  it.each([
    ['few values', 7, 5],
    ['many combinations', 300, 300],
    ['a many-valued first column', 33_000, 3],
  ])('is its QI labels folded in column order, however many of them are folded ahead (%s)', (_, a, b) => {
    const rows = Array.from({ length: 2 * a }, (_, r) => [`a${r % a}`, `b${(r * 7) % b}`, `x${r % 3}`]);
    const base = join(dir, `keys-${files++}`);
    const columns: OutputColumn[] = ['a', 'b', 'x'].map((name, c) => {
      const codeOf = new Map<string, number>();
      const codes = Int32Array.from(rows, (row) => {
        if (!codeOf.has(row[c]!)) codeOf.set(row[c]!, codeOf.size);
        return codeOf.get(row[c]!)!;
      });
      return { name, kind: 'dictionary', dictionary: [...codeOf.keys()], codes };
    });
    writeFileSync(`${base}.arrow`, encodeArrow(columns));
    writeFileSync(`${base}.csv`, encodeCsv(columns, ';'));
    const { classes } = summarizePart({
      arrow: `${base}.arrow`,
      csv: `${base}.csv`,
      delimiter: ';',
      attributes: [
        { name: 'a', type: 'quasi-identifying' },
        { name: 'b', type: 'quasi-identifying' },
        { name: 'x', type: 'insensitive' },
      ] as AttributeSpec[],
      sensitive: [],
      partitions: 1,
    });
    const keys = new Set<string>();
    for (let i = 0; i < classes.keys.length; i += 4) keys.add([...classes.keys.subarray(i, i + 4)].join(','));
    expect(keys).toEqual(new Set(rows.map((r) => keyOf([r[0]!, r[1]!]))));
  });
});
