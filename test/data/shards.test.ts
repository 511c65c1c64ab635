/**
 * Reading an input as row shards, one at a time (what Plan does): the shards hold the whole
 * table's rows in order, each shard's dictionaries are a prefix of the next one's, the table
 * digest built shard by shard is the whole table's, and errors name rows counted from the file's start.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readTableShards } from '../../src/data/read.ts';
import { InputError } from '../../src/errors.ts';
import { readInputShards } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { ADULT_DIR } from '../helpers/adult.ts';
import { checkShards as checkShardsOf } from '../helpers/shards.ts';

const FIXTURES = join(import.meta.dirname, '../fixtures/bad');
const dir = mkdtempSync(join(tmpdir(), 'ppdp-shards-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const checkShards = (path: string, rowsPerShard: number, options = {}) =>
  checkShardsOf(path, rowsPerShard, options).length;

describe('reading an input in row shards', () => {
  it('CSV: the shards are the table, in order, with growing dictionaries and the same digest', () => {
    const path = join(ADULT_DIR, 'adult.csv');
    expect(checkShards(path, 7000)).toBe(5);
    expect(checkShards(path, 1)).toBe(30162);
    expect(checkShards(path, 1e9)).toBe(1);
    // Quoted fields with line breaks and CRLF line ends keep rows whole across shards.
    const quoted = join(dir, 'quoted.csv');
    writeFileSync(quoted, 'a;b\r\n"x\r\ny";1\r\nz;"2;3"\r\n"";4\r\nw;5\r\n');
    expect(checkShards(quoted, 1)).toBe(4);
    expect(checkShards(quoted, 3)).toBe(2);
  });

  it('Arrow: batches are sliced where a shard ends, nulls included', () => {
    expect(checkShards(join(FIXTURES, 'ok-arrow/data.arrow'), 7)).toBe(6);
    expect(
      checkShards(join(FIXTURES, 'ok-arrow-null-value/data.arrow'), 3, { nulls: 'missing' }),
    ).toBeGreaterThan(1);
  });

  it('a bad row deep in the input is named by its row in the file', () => {
    const path = join(dir, 'ragged.csv');
    writeFileSync(path, `a;b\n${'1;2\n'.repeat(10)}3\n`);
    const read = () => [...readTableShards(path, 4)];
    expect(read).toThrow(InputError);
    expect(read).toThrow(/row 12/);
    const spec = join(dir, 'empty-cells.json');
    const input = join(dir, 'empty-cells.csv');
    writeFileSync(join(dir, 'zip.csv'), '1;*\n2;*\n');
    writeFileSync(
      spec,
      JSON.stringify({
        input: 'empty-cells.csv',
        format: { delimiter: ';' },
        attributes: {
          age: { type: 'insensitive' },
          zip: { type: 'quasi-identifying', hierarchy: 'zip.csv' },
        },
        privacy: [{ model: 'k-anonymity', k: 2 }],
        method: { name: 'generalization' },
      }),
    );
    writeFileSync(input, `age;zip\n${'30;1\n'.repeat(6)}31;\n`);
    expect(() => [...readInputShards(loadSpec(spec), 2)]).toThrow(/row 8, column "zip"/);
  });
});
