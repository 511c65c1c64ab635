/**
 * An output part's verification slice reads its pass-through columns as bytes (summarizePart,
 * src/verify/generalization-parts.ts): its CSV checked against its Arrow file and its rows
 * fingerprinted from those bytes, with values a CSV must quote or escape and non-ASCII ones,
 * whether the Arrow file holds the column as plain Utf8 or as a dictionary. Tampering with
 * one byte of a value, or swapping two rows' values, shows.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Dictionary,
  Float64,
  Int16,
  Int32,
  LargeUtf8,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, readArrow, readArrowShards } from '../../src/data/arrow.ts';
import { encodeCsv } from '../../src/data/csv.ts';
import { rawStrings } from '../../src/data/raw.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { utf8Buffers } from '../../src/data/utf8.ts';
import type { AttributeSpec } from '../../src/release-spec/spec.ts';
import {
  decodeBytesHashes,
  encodeBytesHashes,
  expectShard,
  shardBytesHashes,
  summarizePart,
} from '../../src/verify/generalization-parts.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-part-raw-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const attributes = [
  { name: 'q', type: 'quasi-identifying' },
  { name: 'diagnosis', type: 'sensitive' },
  { name: 'note', type: 'insensitive' },
] as AttributeSpec[];

const NOTES = ['plain', 'a;b', 'say "hi"', 'two\nlines', 'Zürich ✓', '=1+2', '-3', '', "'quoted", '日本 😀'];
/** Rows (q, diagnosis, note): notes mostly distinct, some repeated. */
const ROWS: string[][] = Array.from({ length: 60 }, (_, r) => [
  r % 3 === 0 ? 'a' : 'b',
  r % 4 === 0 ? 'x' : 'y',
  r < NOTES.length ? NOTES[r]! : r % 7 === 0 ? 'same' : `note ${r} é`,
]);

let staged = 0;
/** Writes a part's Arrow file and CSV (the note as plain Utf8 or as a dictionary); their paths. */
function stage(
  arrowRows: readonly string[][],
  options: { plain?: boolean; escapeFormulas?: boolean; csvRows?: readonly string[][] } = {},
) {
  const columns = (rows: readonly string[][]): OutputColumn[] =>
    ['q', 'diagnosis', 'note'].map((name, c) => {
      const values = rows.map((row) => row[c]!);
      if (name === 'note' && options.plain) return { kind: 'utf8', name, values: utf8Buffers(values) };
      const dictionary = [...new Set(values)];
      return {
        kind: 'dictionary',
        name,
        dictionary,
        codes: Int32Array.from(values, (v) => dictionary.indexOf(v)),
      };
    });
  const arrow = join(dir, `part-${staged}.arrow`);
  const csv = join(dir, `part-${staged++}.csv`);
  writeFileSync(arrow, encodeArrow(columns(arrowRows)));
  writeFileSync(
    csv,
    encodeCsv(columns(options.csvRows ?? arrowRows), ';', {
      escapeFormulas: options.escapeFormulas === true,
    }),
  );
  return { arrow, csv };
}

function summary(files: { arrow: string; csv: string }, escapeFormulas = false) {
  return summarizePart({
    ...files,
    delimiter: ';',
    escapeFormulas,
    attributes,
    sensitive: ['diagnosis'],
    partitions: 1,
  });
}

/** One byte of row `r`'s note changed (an ASCII letter: the value stays UTF-8). */
function oneByteChanged(rows: readonly string[][], r: number): string[][] {
  return rows.map((row, i) => (i === r ? [row[0]!, row[1]!, `${row[2]!.slice(0, -1)}Z`] : [...row]));
}

describe("an output part's pass-through columns, read as bytes", () => {
  it('agree with the CSV and fingerprint alike, as plain Utf8 or as a dictionary, escaped or not', () => {
    const asDictionary = summary(stage(ROWS));
    const asPlain = summary(stage(ROWS, { plain: true }));
    const escaped = summary(stage(ROWS, { plain: true, escapeFormulas: true }), true);
    for (const s of [asDictionary, asPlain, escaped]) {
      expect(s.filesAgree).toBe(true);
      expect(s.rows).toBe(ROWS.length);
    }
    expect(asPlain.classes.sums).toEqual(asDictionary.classes.sums);
    expect(escaped.classes.sums).toEqual(asDictionary.classes.sums);
    // A CSV written without the escapes its spec asks for does not hold the part.
    expect(summary(stage(ROWS, { plain: true }), true).filesAgree).toBe(false);
  });

  it('a byte of a value changed in the CSV alone: the files disagree', () => {
    for (const plain of [true, false]) {
      const files = stage(ROWS, { plain, csvRows: oneByteChanged(ROWS, 12) });
      expect(summary(files).filesAgree).toBe(false);
    }
  });

  it('a byte of a value changed in the Arrow file and the CSV: the fingerprint changes', () => {
    const honest = summary(stage(ROWS, { plain: true }));
    for (const plain of [true, false]) {
      const tampered = summary(stage(oneByteChanged(ROWS, 12), { plain }));
      expect(tampered.filesAgree).toBe(true);
      expect(tampered.classes.sums).not.toEqual(honest.classes.sums);
    }
  });

  it("two rows' values swapped in both files: the fingerprint changes", () => {
    const honest = summary(stage(ROWS, { plain: true }));
    // Rows 0 and 1 are in different classes: each note now stands with the other row.
    const swapped = ROWS.map((row) => [...row]);
    [swapped[0]![2], swapped[1]![2]] = [swapped[1]![2]!, swapped[0]![2]!];
    for (const plain of [true, false]) {
      const tampered = summary(stage(swapped, { plain }));
      expect(tampered.filesAgree).toBe(true);
      expect(tampered.classes.sums).not.toEqual(honest.classes.sums);
    }
  });
});

describe("an input shard's pass-through columns, hashed beside the search", () => {
  // The shard as its slice reads it: q and diagnosis as codes, the note as its rows' bytes.
  const shardOf = (rows: readonly string[][]): EncodedTable => {
    const coded = (c: number) => {
      const dictionary = [...new Set(rows.map((row) => row[c]!))];
      return Int32Array.from(rows, (row) => dictionary.indexOf(row[c]!));
    };
    const dictionaryOf = (c: number) => [...new Set(rows.map((row) => row[c]!))];
    return {
      source: 'shard',
      rowCount: rows.length,
      delimiter: ';',
      columns: [
        { name: 'q', dictionary: dictionaryOf(0), codes: coded(0) },
        { name: 'diagnosis', dictionary: dictionaryOf(1), codes: coded(1) },
        {
          name: 'note',
          dictionary: [],
          codes: new Int32Array(0),
          raw: utf8Buffers(rows.map((row) => row[2]!)),
        },
      ],
    };
  };
  const expectation = (shard: EncodedTable, bytesHashed?: ReadonlyMap<string, Int32Array>) =>
    expectShard({
      shard,
      attributes,
      hierarchyRows: new Map([['q', shard.columns[0]!.dictionary.map((v) => [v, '*'])]]),
      node: { q: 0 },
      sensitive: ['diagnosis'],
      partitions: 1,
      bytesHashed,
    });
  /** The shard without its bytes, and their hashes through their work file. */
  const hashedApart = (shard: EncodedTable) => {
    const bytes = { ...shard, columns: shard.columns.filter((c) => c.raw) };
    const hashes = shardBytesHashes(['q', 'diagnosis', 'note'], attributes, bytes);
    const file = Buffer.concat(encodeBytesHashes(['note'], hashes, shard.rowCount));
    const read = decodeBytesHashes(file, ['note'], shard.rowCount, 'verify/bytes-0.bin');
    const coded = shard.columns.map((c) =>
      c.raw ? { name: c.name, dictionary: [], codes: new Int32Array(0) } : c,
    );
    return { shard: { ...shard, columns: coded }, read, file };
  };

  it('expects the same classes from the hashes as from the bytes', () => {
    const shard = shardOf(ROWS);
    const apart = hashedApart(shard);
    expect(expectation(apart.shard, apart.read).classes).toEqual(expectation(shard).classes);
    // A note changed in the bytes the hashes were taken from: the expectation changes.
    const changed = hashedApart(shardOf(oneByteChanged(ROWS, 12)));
    expect(expectation(apart.shard, changed.read).classes.sums).not.toEqual(expectation(shard).classes.sums);
  });

  it('refuses a hashes file of other rows, other columns or cut short', () => {
    const { file } = hashedApart(shardOf(ROWS));
    expect(() => decodeBytesHashes(file, ['note'], ROWS.length + 1, 'verify/bytes-0.bin')).toThrow(
      /verify\/bytes-0.bin: not the hashes of 61 rows' columns note/,
    );
    expect(() => decodeBytesHashes(file, ['note', 'amount'], ROWS.length, 'f')).toThrow(/not the hashes/);
    expect(() => decodeBytesHashes(file.subarray(0, file.length - 4), ['note'], ROWS.length, 'f')).toThrow(
      /not the hashes/,
    );
    // Cut inside a word: the same refusal, not a failure to read it.
    expect(() => decodeBytesHashes(file.subarray(0, file.length - 2), ['note'], ROWS.length, 'f')).toThrow(
      /not the hashes/,
    );
    // Hashes of a shard of other rows: refused, not read as this one's.
    const shard = shardOf(ROWS);
    const fewer = hashedApart(shardOf(ROWS.slice(1)));
    expect(() => expectation(hashedApart(shard).shard, fewer.read)).toThrow(
      /59 rows hashed, the shard has 60/,
    );
  });
});

describe("readArrow's raw option (the columns the verifier reads as bytes)", () => {
  const write = (table: Table, format: 'file' | 'stream' = 'file') => {
    const path = join(dir, `raw-${staged++}.arrow`);
    writeFileSync(path, tableToIPC(table, format));
    return path;
  };
  const valuesOf = (table: EncodedTable, name: string) => {
    const column = table.columns.find((c) => c.name === name)!;
    return column.raw ? rawStrings(column.raw) : Array.from(column.codes, (k) => column.dictionary[k]!);
  };

  it('gives each type the text the coded read gives, in any shards, from both IPC formats', () => {
    const table = new Table({
      s: vectorFromArray(['b', 'ä', '', 'c', '日本', 'b', 'x'], new Utf8()),
      ls: vectorFromArray(['x', 'x', 'ÿ', '', 'y', 'z', 'x'], new LargeUtf8()),
      d: vectorFromArray(['p', 'q', 'p', 'é', 'q', 'p', 'p'], new Dictionary(new Utf8(), new Int16())),
      n: vectorFromArray([1.5, -2, 1.5, 0, 3, 7, 1e-7], new Float64()),
    });
    const raw = new Set(['s', 'ls', 'd', 'n']);
    for (const format of ['file', 'stream'] as const) {
      const path = write(table, format);
      const coded = readArrow(path);
      for (const rowsPerShard of [Number.POSITIVE_INFINITY, 3, 1]) {
        const shards = [...readArrowShards(path, rowsPerShard, { raw })];
        for (const name of raw) {
          expect(shards.every((s) => s.columns.find((c) => c.name === name)!.raw !== undefined)).toBe(true);
          expect(
            shards.flatMap((s) => valuesOf(s, name)),
            name,
          ).toEqual(valuesOf(coded, name));
        }
      }
    }
  });

  it('reads a null as the missing value, or fails on it, as the coded read does', () => {
    const table = new Table({
      s: vectorFromArray(['a', null, 'c'], new Utf8()),
      d: vectorFromArray(['p', null, 'q'], new Dictionary(new Utf8(), new Int32())),
    });
    const path = write(table);
    for (const name of ['s', 'd']) {
      const raw = new Set([name]);
      const want = name === 's' ? ['a', '', 'c'] : ['p', '', 'q'];
      expect(valuesOf(readArrow(path, { nulls: 'missing', raw }), name)).toEqual(want);
      expect(() => readArrow(path, { raw })).toThrow(/row 2: the value is null/);
    }
  });
});
