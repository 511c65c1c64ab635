/**
 * The report's distinct values of a column that passes through a sharded release as bytes: the
 * scan counts them by a 64-bit hash of their bytes (DistinctHashes), and Combine counts the union
 * of the pieces' hashes, the same count a set of the strings gives, whether the states share
 * memory or each reads the work area alone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { utf8Buffers } from '../../src/data/utf8.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import {
  DistinctHashes,
  decodeDistinctHashes,
  distinctHashCount,
  encodeDistinctHashes,
} from '../../src/pipeline/rows.ts';
import { Random } from '../../src/util/random.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const ROWS = 2000;

describe('distinct values of a pass-through column', () => {
  it('are counted exactly, in one piece and over files that share values', async () => {
    const ws = adultWorkspace(ROWS);
    const random = new Random(4);
    const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
    // Values repeated within and across the files, an empty one and non-ASCII ones.
    const pool = ['', 'café', '日本 😀', ...Array.from({ length: 700 }, (_, i) => `note ${i}`)];
    const notes = lines.map(() => pool[random.below(pool.length)]!);
    const rows = lines.map((line, i) => `${line};${notes[i]}`);
    ws.write('adult.csv', `${[`${header};note`, ...rows].join('\n')}\n`);
    ws.editSpec((s) => {
      (s.attributes as Record<string, unknown>).note = { type: 'insensitive' };
    });
    const expected = new Set(notes).size;
    const distinct = (report: { input: { columns: { name: string; distinct?: number }[] } }) =>
      report.input.columns.find((c) => c.name === 'note')!.distinct;

    const one = await executeRelease({ spec: ws.spec, out: join(ws.dir, 'out', 'one'), shards: 3 });
    expect(one.plan.mode).toBe('sharded');
    expect(distinct(one.report)).toBe(expected);

    mkdirSync(join(ws.dir, 'cut'));
    const cuts = [0, 500, 501, 1700, ROWS];
    for (let f = 0; f + 1 < cuts.length; f++)
      writeFileSync(
        join(ws.dir, 'cut', `part-${f}.csv`),
        `${[`${header};note`, ...rows.slice(cuts[f], cuts[f + 1])].join('\n')}\n`,
      );
    ws.editSpec((s) => (s.input = 'cut'));
    const files = await executeRelease({
      spec: ws.spec,
      out: join(ws.dir, 'out', 'files'),
      rowsPerShard: 300,
    });
    expect(files.plan.pieces).toBe(4);
    expect(distinct(files.report)).toBe(expected);
    // Every state reading only the work area: the pieces' values travel through it.
    const apart = await executeRelease(
      { spec: ws.spec, out: join(ws.dir, 'out', 'apart'), rowsPerShard: 300 },
      {
        wrap: (_, handler) => async (input) => {
          forgetAll();
          return handler(input);
        },
      },
    );
    expect(distinct(apart.report)).toBe(expected);
  }, 120_000);
});

/** Random values: empty, ASCII of every length near a hash's word, non-ASCII, near-duplicates. */
function randomValues(random: Random, n: number): string[] {
  const alphabet = ['a', 'b', 'Z', '0', ' ', ';', 'é', 'ß', '日', '本', '😀', '\u0000'];
  return Array.from({ length: n }, () => {
    const length = random.below(3) === 0 ? random.below(4) : random.below(12);
    let v = '';
    for (let i = 0; i < length; i++)
      v += alphabet[random.below(random.below(4) === 0 ? alphabet.length : 3)]!;
    return v;
  });
}

describe('DistinctHashes', () => {
  it('counts what a set of the strings counts, shard by shard', () => {
    const random = new Random(11);
    const set = new DistinctHashes();
    const seen = new Set<string>();
    // Shards of few values (the table doubles) and of many (sized from the first rows).
    for (const n of [10, 5000, 1, 0, 20_000, 300]) {
      const values = randomValues(random, n);
      for (const v of values) seen.add(v);
      set.addAll(utf8Buffers(values));
      expect(set.size).toBe(seen.size);
    }
    expect(seen.has('')).toBe(true);
    expect(seen.size).toBeGreaterThan(10_000);
  });

  it('counts a large batch into a large table region by region as one by one', () => {
    const random = new Random(14);
    const word = () => random.below(2 ** 32) | 0;
    // 300,000 hashes, a third of them repeated, some alike in the lane that places them, and
    // (0, 0): inserted in the table's region order (a large batch, a large table).
    const n = 300_000;
    const hashes = new Int32Array(2 * n);
    for (let v = 0; v < n; v++) {
      const from = v % 3 === 2 ? random.below(v) : v;
      if (from !== v) hashes.copyWithin(2 * v, 2 * from, 2 * from + 2);
      else {
        hashes[2 * v] = v % 7 === 0 ? 12345 : word();
        hashes[2 * v + 1] = word();
      }
    }
    hashes[2 * 17] = 0;
    hashes[2 * 17 + 1] = 0;
    const seen = new Set(Array.from({ length: n }, (_, v) => `${hashes[2 * v]},${hashes[2 * v + 1]}`));
    const batch = new DistinctHashes();
    batch.addHashes(hashes);
    const small = new DistinctHashes();
    for (let from = 0; from < n; from += 1000) small.addHashes(hashes.subarray(2 * from, 2 * from + 2000));
    expect(batch.size).toBe(seen.size);
    expect(small.size).toBe(seen.size);
    const held = (set: DistinctHashes) => {
      const out = set.hashes();
      return new Set(Array.from({ length: out.length / 2 }, (_, v) => `${out[2 * v]},${out[2 * v + 1]}`));
    };
    expect(held(batch)).toEqual(seen);
  });

  it('lists the hashes of values nearly all distinct and counts them when asked, batch after batch', () => {
    const random = new Random(15);
    const word = () => random.below(2 ** 32) | 0;
    const pair = (v: number): [number, number] => [v % 11 === 0 ? 99 : word(), word()];
    const set = new DistinctHashes();
    const seen = new Set<string>();
    const pool: [number, number][] = [];
    // Large batches of mostly new values (listed from the first), some repeated within and
    // across batches, one (0, 0); then a small batch, which is listed too.
    for (const [b, n] of [100_000, 80_000, 70_000, 5].entries()) {
      const hashes = new Int32Array(2 * n);
      for (let v = 0; v < n; v++) {
        const h = pool.length > 0 && v % 4 === 3 ? pool[random.below(pool.length)]! : pair(v);
        if (b === 1 && v === 1234) h.splice(0, 2, 0, 0);
        pool.push(h);
        hashes[2 * v] = h[0]!;
        hashes[2 * v + 1] = h[1]!;
        seen.add(`${h[0]},${h[1]}`);
      }
      set.addHashes(hashes);
      expect(set.size).toBe(seen.size);
      // Listed: at most the rows (the first batch's sample was placed, its repeats dropped).
      expect(set.atMost).toBeGreaterThan(set.size);
      expect(set.atMost).toBeLessThanOrEqual(pool.length);
    }
    expect(seen.has('0,0')).toBe(true);
    const out = set.hashes();
    expect(out.length).toBe(2 * set.atMost);
    expect(
      new Set(Array.from({ length: out.length / 2 }, (_, v) => `${out[2 * v]},${out[2 * v + 1]}`)),
    ).toEqual(seen);
    // A large batch of few values is placed in the table: its bound is its count.
    const few = new DistinctHashes();
    const hashes = new Int32Array(2 * 100_000);
    for (let v = 0; v < 100_000; v++) hashes[2 * v] = 1 + (v % 50);
    few.addHashes(hashes);
    expect(few.size).toBe(50);
    expect(few.atMost).toBe(50);
    set.clear();
    expect(set.size).toBe(0);
    expect(set.atMost).toBe(0);
  });

  it('counts values that differ in one byte, or only in length, apart', () => {
    const base = 'x'.repeat(9);
    const values = ['', ...Array.from({ length: 9 }, (_, i) => base.slice(0, i + 1))];
    for (let i = 0; i < 9; i++) values.push(`${base.slice(0, i)}y${base.slice(i + 1)}`);
    values.push('é', 'e\u0301', '\u00e9\u00e9');
    const set = new DistinctHashes();
    set.addAll(utf8Buffers([...values, ...values]));
    expect(set.size).toBe(new Set(values).size);
  });

  it('counts the union of pieces from their encoded hashes', () => {
    const random = new Random(12);
    const pieces = [4000, 1, 9000, 2500].map((n) => randomValues(random, n));
    const encoded = encodeDistinctHashes(
      pieces.map((values) => {
        const set = new DistinctHashes();
        set.addAll(utf8Buffers(values));
        return set.hashes();
      }),
    );
    // 8 bytes a value, none of a value's bytes.
    const sizes = pieces.map((values) => new Set(values).size);
    expect(encoded.byteLength).toBe(4 * (1 + pieces.length) + 8 * sizes.reduce((a, b) => a + b, 0));
    const union = new DistinctHashes();
    for (const hashes of decodeDistinctHashes(encoded)) union.addHashes(hashes);
    expect(union.size).toBe(new Set(pieces.flat()).size);
  });

  it('counts the union of lists as a set of them all would, split into partitions or not', () => {
    const random = new Random(13);
    const word = () => random.below(2 ** 32) | 0;
    // Lists of hashes that share some: many (split by their high bits) and few (one partition),
    // hashes alike in the lane that splits or in the lane that places, and the hash (0, 0).
    for (const sizes of [
      [40_000, 30_000, 1, 25_000],
      [5, 0, 7],
    ]) {
      const pool = Array.from({ length: sizes.reduce((a, b) => a + b, 0) }, (_, i) =>
        i % 5 === 0 ? [word(), 7] : i % 7 === 0 ? [7, word()] : [word(), word()],
      );
      pool.push([0, 0]);
      // Each pair taken whole from the pool: its two lanes from the same entry.
      const lists = sizes.map((n) => {
        const list = new Int32Array(2 * n);
        for (let v = 0; v < list.length; v += 2) list.set(pool[random.below(pool.length)]!, v);
        return list;
      });
      lists[0]!.set([0, 0], 0);
      const set = new DistinctHashes();
      for (const list of lists) set.addHashes(list);
      const strings = new Set(
        lists.flatMap((list) =>
          Array.from({ length: list.length / 2 }, (_, v) => `${list[2 * v]},${list[2 * v + 1]}`),
        ),
      );
      expect(distinctHashCount(lists)).toBe(strings.size);
      expect(distinctHashCount(lists)).toBe(set.size);
    }
    expect(distinctHashCount([])).toBe(0);
  });
});
