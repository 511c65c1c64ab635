/**
 * The release audit over parts read once (src/report/audit.ts): on random releases in parts,
 * with columns read as bytes (readArrow's `raw`) and non-ASCII values, its figures against
 * their definitions counted with maps of strings, the same whatever the parts, the
 * partitions, or whether a column is read as bytes or as a dictionary.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { rawStrings } from '../../src/data/raw.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { utf8Buffers } from '../../src/data/utf8.ts';
import type { ReleaseSpec } from '../../src/release-spec/spec.ts';
import {
  auditRawColumns,
  auditRelease,
  auditReleaseInPartitions,
  hashesOnce,
  hashIds,
  partsAudit,
  unchangedColumns,
} from '../../src/report/audit.ts';
import { gatherPairs } from '../../src/util/gather.ts';
import { Random } from '../../src/util/random.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-audit-parts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMES = ['q1', 'q2', 'open', 'bounded', 'note', 'stamp'];
const spec = {
  attributes: [
    { name: 'q1', type: 'quasi-identifying' },
    { name: 'q2', type: 'quasi-identifying' },
    { name: 'open', type: 'sensitive' },
    { name: 'bounded', type: 'sensitive' },
    { name: 'note', type: 'insensitive' },
    { name: 'stamp', type: 'insensitive' },
  ],
  privacy: [
    { model: 'k-anonymity', k: 2 },
    { model: 'distinct-l-diversity', attribute: 'bounded', l: 2 },
  ],
  method: { name: 'generalization' },
} as unknown as ReleaseSpec;

/** Seeded draws in [0, 1). */
function uniform(seed: number): () => number {
  const r = new Random(seed);
  return () => r.nextU32() / 2 ** 32;
}

/** Rows of strings: few classes, values with non-ASCII characters, notes mostly distinct. */
function randomRows(seed: number, n: number, distinctNotes = false): string[][] {
  const random = uniform(seed);
  const pick = <T>(xs: readonly T[]) => xs[Math.floor(random() * xs.length)]!;
  const q1 = ['*', '[20-29]', '[30-39]', 'Zürich'];
  const q2 = ['f', 'm', '日本', '*'];
  const open = ['a', 'b', 'é', '😀', ''];
  return Array.from({ length: n }, (_, r) => [
    pick(q1),
    pick(q2),
    random() < 0.7 ? 'a' : pick(open),
    pick(['x', 'y', 'ÿ']),
    random() < 0.2 && !distinctNotes
      ? pick(['same', 'même', ''])
      : `note ${r} ✓ ${Math.floor(random() * 1e6)}`,
    pick(['2026-01-01T00:00:00Z', '2026-01-02T00:00:00Z', '2026-01-03T00:00:00Z']),
  ]);
}

/** Rows as a table coded against dictionaries in order of first use. */
function coded(rows: readonly string[][]): EncodedTable {
  return {
    source: 'test',
    delimiter: ';',
    rowCount: rows.length,
    columns: NAMES.map((name, c) => {
      const index = new Map<string, number>();
      const dictionary: string[] = [];
      const codes = Int32Array.from(rows, (row) => {
        let k = index.get(row[c]!);
        if (k === undefined) index.set(row[c]!, (k = dictionary.push(row[c]!) - 1));
        return k;
      });
      return { name, dictionary, codes };
    }),
  };
}

/** The same table with its pass-through columns as bytes. */
function withRaw(rows: readonly string[][]): EncodedTable {
  const table = coded(rows);
  const raw = auditRawColumns(spec);
  return {
    ...table,
    columns: table.columns.map((column, c) =>
      raw.has(column.name)
        ? {
            name: column.name,
            dictionary: [],
            codes: new Int32Array(0),
            raw: utf8Buffers(rows.map((row) => row[c]!)),
          }
        : column,
    ),
  };
}

/** Whether a row is `*` in every QI: a row generalization suppressed and masked, in no class. */
const isMasked = (row: readonly string[]) => row[0] === '*' && row[1] === '*';

/**
 * The audit's figures from their definitions (docs/definitions.md), with maps of strings: over
 * the released classes, and (`masked`) over the suppressed rows, measured as one group.
 */
function expected(rows: readonly string[][]) {
  return { ...figures(rows.filter((row) => !isMasked(row))), masked: figures(rows.filter(isMasked)) };
}

function figures(rows: readonly string[][]) {
  const classOf = rows.map((row) => JSON.stringify([row[0], row[1]]));
  const count = (keys: readonly string[]) => {
    const n = new Map<string, number>();
    for (const k of keys) n.set(k, (n.get(k) ?? 0) + 1);
    return n;
  };
  const uniqueOn = (cols: readonly number[]) => {
    const keys = rows.map((row, r) => JSON.stringify([classOf[r], ...cols.map((c) => row[c])]));
    const n = count(keys);
    return keys.filter((k) => n.get(k) === 1).length;
  };
  const sizes = count(classOf);
  const linkable = [2, 4, 5]; // open, note, stamp: `bounded` is what its l-diversity bounds
  const all = uniqueOn(linkable);
  const contributions = Object.fromEntries(
    linkable.map((c) => [NAMES[c]!, all - uniqueOn(linkable.filter((x) => x !== c))]),
  );
  // The class where one value of `open` has the largest share (ties: the larger class).
  let worst = { share: 0, size: 0 };
  for (const [cls, size] of sizes) {
    const values = count(rows.filter((_, r) => classOf[r] === cls).map((row) => row[2]!));
    const share = Math.max(...values.values()) / size;
    if (share > worst.share || (share === worst.share && size > worst.size)) worst = { share, size };
  }
  return {
    rows: rows.length,
    classes: sizes.size,
    unique: Object.fromEntries(linkable.map((c) => [NAMES[c]!, uniqueOn([c])])),
    all,
    contributions,
    worst,
  };
}

/** A table cut into parts at random places (some of them empty). */
function cut(table: EncodedTable, seed: number, parts: number): EncodedTable[] {
  const random = uniform(seed);
  const at = [0, ...Array.from({ length: parts - 1 }, () => Math.floor(random() * table.rowCount))];
  at.sort((a, b) => a - b);
  at.push(table.rowCount);
  return at.slice(0, -1).map((from, i) => {
    const to = at[i + 1]!;
    return {
      ...table,
      rowCount: to - from,
      columns: table.columns.map((c) =>
        c.raw
          ? {
              ...c,
              raw: {
                offsets: c.raw.offsets.slice(from, to + 1),
                bytes: c.raw.bytes,
              },
            }
          : { ...c, codes: c.codes.slice(from, to) },
      ),
    };
  });
}

describe('the audit over parts read once', () => {
  it('gives the figures of their definitions, whatever the parts, partitions and columns as bytes', () => {
    // 30,000 rows: pairs of a class and a note too many for a direct table (hashed ids); the
    // last table's notes all differ (every grouping with them is a row each).
    for (const [seed, n, distinct] of [
      [1, 500, false],
      [2, 700, false],
      [3, 900, false],
      [4, 30_000, false],
      [5, 2_000, true],
    ] as const) {
      const rows = randomRows(seed, n, distinct);
      const input = coded(rows);
      const whole = auditRelease(spec, input, rows.length, input);
      const want = expected(rows);
      const { masked } = want;
      // Rows `*` in every QI, suppressed: in no class, measured apart.
      expect(masked.rows).toBeGreaterThan(0);
      expect(whole.classes).toBe(want.classes);
      expect(whole.linkage).toEqual({
        columns: ['open', 'note', 'stamp'],
        uniqueRows: want.all,
        share: want.all / want.rows,
        contributions: want.contributions,
      });
      const ofClasses = whole.cautions.filter((c) => !c.message.includes('suppressed row'));
      const ofMasked = whole.cautions.filter((c) => c.message.includes('suppressed row'));
      for (const column of ['open', 'note', 'stamp']) {
        const unique = (cautions: typeof whole.cautions) =>
          cautions.find((c) => c.cause === 'unique-with-unchanged-column' && c.column === column)?.rows ?? 0;
        expect(unique(ofClasses), column).toBe(want.unique[column]);
        expect(unique(ofMasked), column).toBe(masked.unique[column]);
      }
      const revealed = ofClasses.find((c) => c.cause === 'sensitive-revealed');
      expect(revealed?.value ?? null).toBe(want.worst.share >= 0.9 ? want.worst.share : null);
      if (revealed) expect(revealed.rows).toBe(want.worst.size);
      const maskedRevealed = ofMasked.find((c) => c.cause === 'sensitive-revealed');
      expect(maskedRevealed?.value ?? null).toBe(masked.worst.share >= 0.9 ? masked.worst.share : null);
      if (maskedRevealed) expect(maskedRevealed.rows).toBe(masked.rows);
      const joint = ofMasked.find((c) => c.cause === 'unique-with-unchanged-columns');
      expect(joint?.rows ?? 0).toBe(masked.all);
      if (joint)
        expect(joint.message).toContain(
          `left out: ${Object.entries(masked.contributions)
            .map(([c, n]) => `${c} ${n.toLocaleString('en-US')}`)
            .join(', ')}`,
        );
      for (const [parts, partitions] of [
        [1, 1],
        [3, 2],
        [5, 5],
        [7, 3],
      ] as const) {
        for (const table of [input, withRaw(rows)]) {
          const pieces = cut(table, seed * 10 + parts, parts);
          expect(
            auditReleaseInPartitions(spec, input, rows.length, pieces.length, (i) => pieces[i]!, partitions),
          ).toEqual(whole);
        }
        // The input's distinct counts (a column passed through as bytes has one): a column of
        // all distinct values is measured without its values, the same figures.
        const counted = {
          ...input,
          columns: input.columns.map((c) => ({ ...c, distinct: c.dictionary.length })),
        };
        const pieces = cut(withRaw(rows), seed * 10 + parts, parts);
        expect(
          auditReleaseInPartitions(spec, counted, rows.length, pieces.length, (i) => pieces[i]!, partitions),
        ).toEqual(whole);
        // Such a column need not be read at all: parts that leave it out, the same figures.
        const audit = partsAudit(spec, counted, rows.length);
        expect([...audit.unread]).toEqual(distinct ? ['note'] : []);
        if (distinct) {
          for (const piece of pieces)
            audit.add({
              ...piece,
              columns: piece.columns.filter((c) => c.name !== 'note'),
              omitted: ['note'],
            });
          expect(audit.finish(partitions)).toEqual(whole);
        }
      }
    }
  });

  it('a single linkable column: its linkage is its own uniqueness, less the rows unique on their class', () => {
    const one = {
      ...spec,
      attributes: spec.attributes.filter((a) => a.name !== 'note' && a.name !== 'stamp'),
    };
    const rows = randomRows(7, 400).map((row) => row.slice(0, 4));
    const table = { ...coded(rows), columns: coded(rows).columns.slice(0, 4) };
    const audit = auditRelease(one as ReleaseSpec, table, rows.length, table);
    // The rows of the released classes: those `*` in every QI are suppressed.
    const kept = rows.filter((row) => !isMasked(row));
    const classOf = kept.map((row) => `${row[0]}\u0000${row[1]}`);
    const pair = kept.map((row, r) => `${classOf[r]}\u0000${row[2]}`);
    const once = (keys: string[]) => keys.filter((k) => keys.indexOf(k) === keys.lastIndexOf(k)).length;
    expect(unchangedColumns(one as ReleaseSpec)).toEqual(['open', 'bounded']);
    expect(audit.linkage).toEqual({
      columns: ['open'],
      uniqueRows: once(pair),
      share: once(pair) / kept.length,
      contributions: { open: once(pair) - once(classOf) },
    });
  });

  it('reads staged Arrow parts with their pass-through columns as bytes, a dictionary or plain text', () => {
    const rows = randomRows(5, 500);
    const input = coded(rows);
    const whole = auditRelease(spec, input, rows.length, input);
    const raw = auditRawColumns(spec);
    const paths = cut(input, 9, 3).map((part, i) => {
      const path = join(dir, `part-${i}.arrow`);
      // Part 1 writes its pass-through columns as plain Utf8, the others as dictionaries.
      const columns = part.columns.map((c) =>
        i === 1 && raw.has(c.name)
          ? {
              kind: 'utf8' as const,
              name: c.name,
              values: utf8Buffers(Array.from(c.codes, (k) => c.dictionary[k]!)),
            }
          : { kind: 'dictionary' as const, name: c.name, dictionary: c.dictionary, codes: c.codes },
      );
      writeFileSync(path, encodeArrow(columns));
      return path;
    });
    const read = (i: number) => readArrow(paths[i]!, { raw });
    const parts = cut(input, 9, 3);
    for (const i of [0, 1, 2]) {
      const part = read(i);
      const note = part.columns.find((c) => c.name === 'note')!;
      const written = parts[i]!.columns.find((c) => c.name === 'note')!;
      expect(note.dictionary).toEqual([]);
      expect(rawStrings(note.raw!)).toEqual(Array.from(written.codes, (k) => written.dictionary[k]!));
      const q1 = part.columns.find((c) => c.name === 'q1')!;
      expect(q1.raw).toBeUndefined();
    }
    expect(auditReleaseInPartitions(spec, input, rows.length, 3, read, 2)).toEqual(whole);
  });
});

describe('hashIds', () => {
  it('numbers hashes by first appearance, in buckets of any size', () => {
    const random = new Random(21);
    const n = 5000;
    // Hashes drawn from a pool (repeats, hashes alike in one lane, the hash (0, 0)).
    const pool = Array.from({ length: 1500 }, (_, i) =>
      i % 9 === 0
        ? [i, 0]
        : i % 11 === 0
          ? [0, random.nextU32() | 0]
          : [random.nextU32() | 0, random.nextU32() | 0],
    );
    pool[3] = [0, 0];
    const hashes = new Int32Array(2 * n);
    for (let r = 0; r < n; r++) hashes.set(pool[random.below(pool.length)]!, 2 * r);
    const every = Int32Array.from({ length: n }, (_, r) => r);
    const some = every.filter(() => random.below(3) === 0);
    for (const rows of [every, some, new Int32Array(0)]) {
      const ids = new Map<string, number>();
      const want = Array.from(rows, (r) => {
        const key = `${hashes[2 * r]},${hashes[2 * r + 1]}`;
        if (!ids.has(key)) ids.set(key, ids.size);
        return ids.get(key)!;
      });
      for (const bucketRows of [1, 7, 300, 1 << 15]) {
        const got = hashIds(hashes, rows, bucketRows);
        expect(got.width).toBe(ids.size);
        expect(Array.from(got.codes)).toEqual(want);
      }
    }
  });
});

describe('hashesOnce', () => {
  it('marks a row only when no other of the rows has its hash, whatever the bitmap (collisions left unmarked)', () => {
    const random = new Random(22);
    for (const n of [0, 1, 2, 100, 20_000]) {
      // Mostly distinct hashes, some repeated, some alike in one lane.
      const hashes = new Int32Array(2 * n);
      for (let r = 0; r < n; r++) {
        const from = random.below(10) === 0 && r > 0 ? random.below(r) : -1;
        if (from >= 0) hashes.set(hashes.subarray(2 * from, 2 * from + 2), 2 * r);
        else hashes.set([random.below(4) === 0 ? 7 : random.nextU32() | 0, random.nextU32() | 0], 2 * r);
      }
      const every = Int32Array.from({ length: n }, (_, r) => r);
      const some = every.filter(() => random.below(2) === 0);
      for (const rows of [every, some]) {
        const key = (r: number) => `${hashes[2 * r]},${hashes[2 * r + 1]}`;
        const count = new Map<string, number>();
        for (const r of rows) count.set(key(r), (count.get(key(r)) ?? 0) + 1);
        const own = [...count.values()].filter((c) => c === 1).length;
        for (const bitsPerRow of [1 / 64, 1, 16, 64]) {
          const once = hashesOnce(gatherPairs(hashes, rows), bitsPerRow);
          let marked = 0;
          rows.forEach((r, i) => {
            // Never a shared hash marked; with room enough, most hashes of their own are.
            if (once[i] === 1) expect(count.get(key(r)), `row ${r}`).toBe(1);
            marked += once[i]!;
          });
          if (bitsPerRow >= 16) expect(marked).toBeGreaterThanOrEqual(Math.floor(own * 0.85));
        }
      }
    }
  });
});
