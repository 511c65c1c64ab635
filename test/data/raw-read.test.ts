/**
 * Pass-through columns read as their rows' bytes (ReadCsvOptions.raw): the CSV reader stores
 * them as it parses, the digest hashes them to the same value as the coded table's, their
 * distinct values are counted from the bytes' hashes, and the scan's row shards pass them on.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Table, tableFromIPC, tableToIPC } from 'apache-arrow';
import { afterAll, describe, expect, it } from 'vitest';
import { ShardedAdmission } from '../../src/data/admission.ts';
import { encodeArrow } from '../../src/data/arrow.ts';
import { readCsv, readCsvShards } from '../../src/data/csv.ts';
import { CellDigest, tableDigest } from '../../src/data/digest.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { readTableShards } from '../../src/data/read.ts';
import type { EncodedColumn, EncodedTable } from '../../src/data/table.ts';
import { tsDigestRows, tsRawLanes } from '../../src/kernels/digest/reference.ts';
import {
  DistinctHashes,
  decodeDistinctHashes,
  encodeDistinctHashes,
  RawShards,
} from '../../src/pipeline/rows.ts';
import { Random } from '../../src/util/random.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-raw-read-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function write(content: string | Uint8Array): string {
  const path = join(dir, `t${n++}.csv`);
  writeFileSync(path, content);
  return path;
}

/** A column's values, whether coded or raw. */
function valuesOf(c: EncodedColumn): string[] {
  return c.raw ? rawStrings(c.raw) : Array.from(c.codes, (code) => c.dictionary[code]!);
}

/** Every column's values over consecutive shards. */
function joined(shards: Iterable<EncodedTable>): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const shard of shards)
    for (const c of shard.columns) out.set(c.name, [...(out.get(c.name) ?? []), ...valuesOf(c)]);
  return out;
}

/** A file with every kind of field: quoted, escaped quotes, line breaks inside quotes, CRLF, empty, non-ASCII. */
const TRICKY =
  '\uFEFFid;note;amount\r\n' +
  '1;plain;3\r\n' +
  '2;"quoted; with delimiter";4\n' +
  '3;"say ""hi""";\r\n' +
  '4;;5\n' +
  '5;"line\nbreak\r\nand crlf";6\n' +
  '6;Zürich – 東京 🎉;7\n' +
  '7;"";8\n' +
  '8;trailing cr\r;9\n' +
  '9;last;10';

describe('CSV columns read as bytes', () => {
  it('hold exactly the values the coded reader gives, at every chunk size and shard size', () => {
    const path = write(TRICKY);
    const coded = joined([readCsv(path)]);
    expect(coded.get('note')![4]).toBe('line\nbreak\r\nand crlf');
    for (const chunkBytes of [16, 17, 23, 64, 1 << 20]) {
      for (const rowsPerShard of [1, 2, 4, Number.POSITIVE_INFINITY]) {
        const shards = [
          ...readCsvShards(path, rowsPerShard, { chunkBytes, raw: new Set(['note', 'amount']) }),
        ];
        for (const s of shards) {
          expect(s.columns.find((c) => c.name === 'note')!.raw).toBeDefined();
          expect(s.columns.find((c) => c.name === 'id')!.raw).toBeUndefined();
        }
        expect(joined(shards), `chunk ${chunkBytes}, shard ${rowsPerShard}`).toEqual(coded);
      }
    }
  });

  it('keep a one-column file’s blank lines as empty values, and drop trailing ones', () => {
    const path = write('note\na\n\n\nb\n"c"\n\n\n');
    const coded = joined([readCsv(path)]);
    expect(coded.get('note')).toEqual(['a', '', '', 'b', 'c']);
    for (const chunkBytes of [16, 19, 1 << 20])
      for (const rowsPerShard of [1, 2, Number.POSITIVE_INFINITY])
        expect(joined(readCsvShards(path, rowsPerShard, { chunkBytes, raw: new Set(['note']) }))).toEqual(
          coded,
        );
  });

  it('hold long fields across many chunks, and cost their bytes and 4 bytes a row', () => {
    const random = new Random(5);
    const notes = Array.from({ length: 300 }, (_, i) =>
      i % 7 === 0 ? '' : 'x'.repeat(random.below(200)) + (i % 3 === 0 ? 'é' : ''),
    );
    const path = write(`k,note\n${notes.map((v, i) => `${i},"${v}"`).join('\n')}\n`);
    const [table] = [
      ...readCsvShards(path, Number.POSITIVE_INFINITY, { chunkBytes: 64, raw: new Set(['note']) }),
    ];
    const raw = table!.columns[1]!.raw!;
    expect(rawStrings(raw)).toEqual(notes);
    expect(raw.bytes.length).toBe(Buffer.byteLength(notes.join('')));
    expect(raw.offsets.length).toBe(notes.length + 1);
  });

  it('make a decimal comma a decimal point as the coded reader does', () => {
    const path = write('k;v\n1;"3,75"\n2; -0,5 \n3;a,b\n4;"1,2,3"\n5;7\n');
    const options = { decimal: ',' as const };
    const coded = joined(readTableShards(path, 2, options));
    expect(coded.get('v')).toEqual(['3.75', ' -0.5 ', 'a,b', '1,2,3', '7']);
    expect(joined(readTableShards(path, 2, { ...options, raw: new Set(['v']) }))).toEqual(coded);
  });

  it('come from an Arrow file as the coded reader reads them, shard by shard', () => {
    const coded = readCsv(write(TRICKY));
    const path = join(dir, `t${n++}.arrow`);
    writeFileSync(
      path,
      encodeArrow(
        coded.columns.map(({ name, dictionary, codes }) => ({ name, kind: 'dictionary', dictionary, codes })),
      ),
    );
    const expected = joined([coded]);
    for (const rowsPerShard of [2, Number.POSITIVE_INFINITY]) {
      const shards = [...readTableShards(path, rowsPerShard, { raw: new Set(['note']) })];
      expect(shards[0]!.columns.find((c) => c.name === 'note')!.raw).toBeDefined();
      expect(joined(shards)).toEqual(expected);
    }
  });

  it('come from an Arrow Utf8 column of one batch or of several, at any shard size', () => {
    const notes = ['plain', '', 'Zürich', 'say "hi"', '東京', 'x'.repeat(40), 'z'];
    const ids = notes.map((_, i) => String(i));
    const column = (from: number, to: number) => {
      const parts = notes.slice(from, to).map((v) => Buffer.from(v));
      const offsets = new Int32Array(parts.length + 1);
      parts.forEach((b, i) => {
        offsets[i + 1] = offsets[i]! + b.length;
      });
      return [
        {
          name: 'id',
          kind: 'number' as const,
          values: Float64Array.from(ids.slice(from, to), Number),
        },
        { name: 'note', kind: 'utf8' as const, values: { offsets, bytes: Buffer.concat(parts) } },
      ];
    };
    // One batch (a staged part: its rows are views of the batch read), then three batches.
    const one = join(dir, `t${n++}.arrow`);
    writeFileSync(one, encodeArrow(column(0, notes.length)));
    const batches = [tableFromIPC(encodeArrow(column(0, 2))), tableFromIPC(encodeArrow(column(2, 3)))];
    batches.push(tableFromIPC(encodeArrow(column(3, notes.length))));
    const several = join(dir, `t${n++}.arrow`);
    writeFileSync(several, tableToIPC(new Table(batches.flatMap((t) => t.batches)), 'file'));
    for (const path of [one, several])
      for (const rowsPerShard of [1, 2, 3, Number.POSITIVE_INFINITY]) {
        const shards = [...readTableShards(path, rowsPerShard, { raw: new Set(['note']) })];
        expect(shards.every((s) => s.columns[1]!.raw !== undefined)).toBe(true);
        expect(shards.flatMap((s) => rawStrings(s.columns[1]!.raw!))).toEqual(notes);
        expect(joined(shards).get('id')).toEqual(ids);
      }
  });

  it('are read coded from a folder of files (whose shards are assembled from coded pieces)', () => {
    const folder = mkdtempSync(join(dir, 'folder-'));
    writeFileSync(join(folder, 'a.csv'), 'k;v\n1;x\n2;y\n');
    writeFileSync(join(folder, 'b.csv'), 'k;v\n3;x\n');
    const shards = [...readTableShards(folder, 2, { raw: new Set(['v']) })];
    expect(shards.every((s) => s.columns.every((c) => c.raw === undefined))).toBe(true);
    expect(joined(shards).get('v')).toEqual(['x', 'y', 'x']);
  });
});

/** A random table's rows: ASCII, non-ASCII, empty and repeated values. */
function randomRows(random: Random, rows: number, columns: number): string[][] {
  const pool = ['', 'a', 'ab', 'é', 'Zürich', '東京', '🎉x', ' ', '0', 'x'.repeat(40)];
  return Array.from({ length: rows }, () =>
    Array.from({ length: columns }, () =>
      random.below(3) === 0 ? pool[random.below(pool.length)]! : `v${random.below(rows)}`,
    ),
  );
}

/** Rows as a table, columns coded (dictionaries in order of first use) or, for `raw` ones, as bytes. */
function tableOf(names: string[], rows: string[][], raw: ReadonlySet<string>): EncodedTable {
  const columns: EncodedColumn[] = names.map((name, c) => {
    const dictionary: string[] = [];
    const index = new Map<string, number>();
    const codes = Int32Array.from(rows, (row) => {
      const v = row[c]!;
      let code = index.get(v);
      if (code === undefined) index.set(v, (code = dictionary.push(v) - 1));
      return code;
    });
    return { name, dictionary, codes };
  });
  return new RawShards(raw).convert({ source: 't.csv', rowCount: rows.length, columns, delimiter: ';' });
}

describe('the digest of a table with raw columns', () => {
  it('equals the digest of the same table coded, with either row loop, in one piece or in shards', () => {
    const random = new Random(11);
    for (let trial = 0; trial < 12; trial++) {
      const width = 1 + random.below(4);
      const names = Array.from({ length: width }, (_, c) => `c${c}`);
      const rows = randomRows(random, 1 + random.below(trial < 6 ? 40 : 3000), width);
      const raw = new Set(names.filter(() => random.below(2) === 0));
      const coded = Buffer.from(tableDigest(tableOf(names, rows, new Set()))).toString('hex');
      const withRaw = tableOf(names, rows, raw);
      expect(Buffer.from(tableDigest(withRaw)).toString('hex')).toBe(coded);
      expect(Buffer.from(new CellDigest(tsDigestRows).add(withRaw).digest()).toString('hex')).toBe(coded);
      expect(
        Buffer.from(new CellDigest(tsDigestRows, tsRawLanes).add(withRaw).digest()).toString('hex'),
      ).toBe(coded);
      // Shards of the rows, each its own table, summed into one digest.
      const cut = random.below(rows.length + 1);
      const pieces = new CellDigest()
        .add(tableOf(names, rows.slice(0, cut), raw))
        .add(tableOf(names, rows.slice(cut), raw));
      expect(Buffer.from(pieces.digest()).toString('hex')).toBe(coded);
    }
  });

  it('changes when a raw value changes (a non-ASCII one included)', () => {
    const names = ['a', 'b'];
    const rows = [
      ['1', 'Zürich'],
      ['2', 'x'],
    ];
    const raw = new Set(['b']);
    const d = (r: string[][]) => Buffer.from(tableDigest(tableOf(names, r, raw))).toString('hex');
    expect(d([rows[0]!, ['2', 'y']])).not.toBe(d(rows));
    expect(d([['1', 'Zurich'], rows[1]!])).not.toBe(d(rows));
  });
});

describe('the admission of raw columns', () => {
  it('counts their values for the scan only, and fewer bytes a value than a dictionary’s', () => {
    const random = new Random(8);
    const rows = Array.from({ length: 4000 }, (_, i) => [
      `q${random.below(50)}`,
      `note ${i} ${random.below(1e9)}`,
    ]);
    const budget = { bytes: 2 ** 40, source: 'test' };
    const project = (raw: ReadonlySet<string>, names = ['q', 'note']) => {
      const admission = new ShardedAdmission(new Set(['q']), 2000, {
        Plan: budget,
        shard: budget,
        Search: budget,
      });
      let p: ReturnType<ShardedAdmission['observe']>;
      const shards = new RawShards(raw);
      // A reader's shards: each column's dictionary the values read so far.
      const whole = tableOf(
        names,
        rows.map((r) => r.slice(0, names.length)),
        new Set(),
      );
      for (const from of [0, 2000]) {
        const columns = whole.columns.map((c) => {
          const codes = c.codes.slice(from, from + 2000);
          const seen = Math.max(...c.codes.subarray(0, from + 2000)) + 1;
          return { ...c, dictionary: c.dictionary.slice(0, seen), codes };
        });
        const table = shards.convert({ ...whole, rowCount: 2000, columns });
        p = admission.observe({ ...table, progress: (from + 2000) / 8000 });
      }
      return p!;
    };
    const coded = project(new Set());
    const raw = project(new Set(['note']));
    const without = project(new Set(), ['q']);
    // The same values projected (every note distinct: twice the rows read so far).
    expect(raw.values).toBe(coded.values);
    expect(raw.valueBytes).toBeCloseTo(coded.valueBytes, -3);
    expect(raw.needs.Plan).toBeLessThan(coded.needs.Plan);
    expect(raw.needs.Plan).toBeGreaterThan(without.needs.Plan);
    // Search never holds a raw column's values; the shard states hold a shard's rows of it.
    expect(raw.needs.Search).toBe(without.needs.Search);
    expect(raw.needs.shard).toBeGreaterThan(without.needs.shard);
    expect(raw.needs.shard).toBeLessThan(coded.needs.shard);
  });
});

describe('distinct values of raw columns', () => {
  it('are counted by their hashes across shards, and survive their encoding', () => {
    const random = new Random(3);
    const rows = randomRows(random, 5000, 2);
    const shards = new RawShards(new Set(['c1']));
    const seen = new Set<string>();
    let last: EncodedColumn | undefined;
    for (let from = 0; from < rows.length; from += 1234) {
      const part = rows.slice(from, from + 1234);
      for (const row of part) seen.add(row[1]!);
      last = shards.convert(tableOf(['c0', 'c1'], part, new Set(['c1']))).columns[1]!;
      expect(last.distinct).toBe(seen.size);
    }
    const set = shards.distinct.get('c1')!;
    expect(set.size).toBe(seen.size);
    // Two pieces' hashes, encoded and decoded, counted as one union.
    const more = ['', 'new', 'é', ...[...seen].slice(0, 10)];
    const other = new DistinctHashes();
    other.addAll(
      tableOf(
        ['v'],
        more.map((v) => [v]),
        new Set(['v']),
      ).columns[0]!.raw!,
    );
    const [a, b] = decodeDistinctHashes(encodeDistinctHashes([set.hashes(), other.hashes()]));
    expect(a).toEqual(set.hashes());
    expect(b!.length).toBe(2 * new Set(more).size);
    const union = new DistinctHashes();
    union.addHashes(a!);
    union.addHashes(b!);
    expect(union.size).toBe(new Set([...seen, ...more]).size);
  });

  it('are counted exactly when a shard of (nearly) distinct values sizes the set at once', () => {
    const random = new Random(9);
    for (const share of [1, 0.6, 0.3]) {
      const values = Array.from({ length: 30_000 }, (_, i) =>
        random.below(1000) < share * 1000 ? `v ${i} é` : `r${random.below(100)}`,
      );
      const set = new DistinctHashes();
      // Two shards: the second sized from its own first rows, on top of the first's values.
      for (const part of [values.slice(0, 12_000), values.slice(12_000)]) {
        const table = tableOf(
          ['v'],
          part.map((v) => [v]),
          new Set(['v']),
        );
        set.addAll(table.columns[0]!.raw!);
      }
      expect(set.size).toBe(new Set(values).size);
    }
  });

  it('are told apart when their hashes share a slot, and the hash (0, 0) counts once', () => {
    // Hashes equal in their first lane (one slot) but the second, and the empty slot's mark.
    const pairs = [...Array.from({ length: 3000 }, (_, i) => [7, i + 1]), [0, 0], [0, 5], [5, 0]];
    const hashes = Int32Array.from([...pairs, ...pairs].flat());
    const set = new DistinctHashes();
    set.addHashes(hashes);
    expect(set.size).toBe(pairs.length);
    const again = new DistinctHashes();
    again.addHashes(decodeDistinctHashes(encodeDistinctHashes([set.hashes()]))[0]!);
    expect(again.size).toBe(pairs.length);
  });
});
