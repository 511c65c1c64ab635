/**
 * Rows per item sized by what the rows hold (src/pipeline/states/item-rows.ts): rows that carry
 * pass-through columns come fewer to a shard and to an output part, so that an item holds what
 * its function was sized for with or without such columns; rows of coded cells keep the
 * setting's count.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import {
  PART_ITEM,
  passThroughBytesPerRow,
  rowsForWidth,
  SHARD_BYTES_PER_RAW_BYTE,
  SHARD_BYTES_PER_ROW,
  SHARD_ITEM,
} from '../../src/pipeline/states/item-rows.ts';
import { DEFAULT_ROWS_PER_PART } from '../../src/pipeline/states/types.ts';
import { unsealTrailer } from '../../src/pipeline/storage/sealed.ts';
import { Random } from '../../src/util/random.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const ROWS = 3000;
const NOTE_BYTES = 150;

/** The Adult workspace of `count` rows with a note of NOTE_BYTES bytes a row, unique, of `type`. */
function withNote(type: 'insensitive' | 'identifying', count = ROWS) {
  const ws = adultWorkspace(count);
  const random = new Random(5);
  const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
  const note = (i: number) =>
    `#${String(i).padStart(6, '0')} ${'x'.repeat(NOTE_BYTES - 8)}`.slice(0, NOTE_BYTES);
  const rows = lines.map((line, i) => `${line};${random.below(2) ? note(i) : note(i).toUpperCase()}`);
  ws.write('adult.csv', `${[`${header};note`, ...rows].join('\n')}\n`);
  ws.editSpec((s) => {
    (s.attributes as Record<string, unknown>).note = { type };
  });
  return ws;
}

/** The sealed plan.json of a run's work area (its seal checked and left out). */
function planFile(work: string): { scan: { rowsPerShard: number; pieces: unknown[] }; rowsPerPart: number } {
  return JSON.parse(
    Buffer.from(unsealTrailer(readFileSync(join(work, 'plan.json')), 'plan.json')).toString('utf8'),
  );
}

describe('rows per item', () => {
  it('keep the setting for rows of coded cells, and hold the same bytes for wider rows', () => {
    expect(rowsForWidth(1_000_000, 0, SHARD_ITEM)).toBe(1_000_000);
    expect(rowsForWidth(Number.POSITIVE_INFINITY, 55, SHARD_ITEM)).toBe(Number.POSITIVE_INFINITY);
    const rows = rowsForWidth(1_000_000, 55, SHARD_ITEM);
    expect(rows % 1000).toBe(0);
    // As many bytes held as the setting's rows of coded cells, to within one step of rows.
    const held = rows * (SHARD_BYTES_PER_ROW + SHARD_BYTES_PER_RAW_BYTE * 55);
    expect(held).toBeLessThanOrEqual(1_000_000 * SHARD_BYTES_PER_ROW);
    expect(held + 1000 * (SHARD_BYTES_PER_ROW + SHARD_BYTES_PER_RAW_BYTE * 55)).toBeGreaterThan(
      1_000_000 * SHARD_BYTES_PER_ROW,
    );
    expect(rowsForWidth(DEFAULT_ROWS_PER_PART, 55, PART_ITEM)).toBeLessThan(DEFAULT_ROWS_PER_PART);
    // Below a step of rows, the exact count (never none).
    expect(rowsForWidth(1000, 10_000, SHARD_ITEM)).toBe(3);
    expect(rowsForWidth(1, 10_000, SHARD_ITEM)).toBe(1);
  });

  it("measure a row's pass-through bytes from its values", () => {
    const rows = {
      source: 't',
      rowCount: 3,
      delimiter: ',',
      columns: [
        { name: 'note', dictionary: ['ab', 'café'], codes: Int32Array.of(0, 1, 1) },
        { name: 'age', dictionary: ['1234567890'], codes: Int32Array.of(0, 0, 0) },
      ],
    };
    expect(passThroughBytesPerRow(rows, ['note'])).toBeCloseTo((2 + 5 + 5) / 3);
    expect(passThroughBytesPerRow(rows, [])).toBe(0);
    expect(passThroughBytesPerRow({ ...rows, rowCount: 0 }, ['note'])).toBe(0);
  });

  it('cut a table with a pass-through column in more shards, as many as without it when it is not read', async () => {
    const shards = async (type: 'insensitive' | 'identifying', shardsForFunctions = true) => {
      const ws = withNote(type);
      const work = join(ws.dir, 'work');
      const { plan } = await executeRelease(
        { spec: ws.spec, out: join(ws.dir, 'out'), work: pathToFileURL(`${work}/`).href },
        { rowsPerShard: 1000, shardsForFunctions },
      );
      return { plan, file: planFile(work) };
    };
    const without = await shards('identifying');
    expect(without.plan.shards).toBe(3);
    expect(without.file.scan.rowsPerShard).toBe(1000);
    expect(without.file.rowsPerPart).toBe(DEFAULT_ROWS_PER_PART);
    const wide = await shards('insensitive');
    const perShard = rowsForWidth(1000, NOTE_BYTES, SHARD_ITEM);
    expect(wide.file.scan.rowsPerShard).toBe(perShard);
    expect(wide.plan.shards).toBe(Math.ceil(ROWS / perShard));
    expect(wide.file.rowsPerPart).toBe(rowsForWidth(DEFAULT_ROWS_PER_PART, NOTE_BYTES, PART_ITEM));
    // On one machine too: a file this small is not cut into ranges (the workers share its shards).
    const here = await shards('insensitive', false);
    expect(here.file.scan.rowsPerShard).toBe(perShard);
    expect(here.plan.shards).toBe(wide.plan.shards);
  });

  it('on one machine, keep a large input’s shard rows when the input is then still cut into ranges', async () => {
    const shards = async (shardsForFunctions: boolean) => {
      const ws = withNote('insensitive', 12_000);
      const work = join(ws.dir, 'work');
      const { plan } = await executeRelease(
        { spec: ws.spec, out: join(ws.dir, 'out'), work: pathToFileURL(`${work}/`).href },
        { rowsPerShard: 3000, shardsForFunctions },
      );
      return { plan, file: planFile(work) };
    };
    const deployed = await shards(true);
    expect(deployed.file.scan.rowsPerShard).toBe(rowsForWidth(3000, NOTE_BYTES, SHARD_ITEM));
    const here = await shards(false);
    // The shards of a row without the note, read in ranges; the parts (the release) as deployed.
    expect(here.file.scan.rowsPerShard).toBe(3000);
    expect(here.file.scan.pieces.length).toBeGreaterThan(1);
    expect(here.plan.shards).toBeLessThan(deployed.plan.shards);
    expect(here.file.rowsPerPart).toBe(deployed.file.rowsPerPart);
  });

  it('on one machine, read a file not cut at that size in a range per worker, once the workers take it', async () => {
    const ranges = async (workers: number, workerMinRows: number, shardsForFunctions = false) => {
      const ws = withNote('insensitive', 20_000);
      const work = join(ws.dir, 'work');
      const { plan } = await executeRelease(
        { spec: ws.spec, out: join(ws.dir, 'out'), work: pathToFileURL(`${work}/`).href },
        { rowsPerShard: 30_000, shardsForFunctions, workers, workerMinRows },
      );
      return { plan, file: planFile(work) };
    };
    const two = await ranges(2, 1000);
    expect(two.file.scan.pieces.length).toBe(2);
    expect(two.plan.shards).toBe(2);
    expect(two.file.scan.rowsPerShard).toBe(30_000);
    expect(two.plan.rows).toBe(20_000);
    expect((await ranges(3, 1000)).file.scan.pieces.length).toBe(3);
    // A file the workers would not take (too small for them), or no workers: the functions' cut.
    const deployed = await ranges(2, 1000, true);
    expect(deployed.file.scan.rowsPerShard).toBe(rowsForWidth(30_000, NOTE_BYTES, SHARD_ITEM));
    for (const [workers, minRows] of [
      [2, 1_000_000],
      [1, 1000],
    ] as const) {
      const here = await ranges(workers, minRows);
      expect(here.file.scan.rowsPerShard).toBe(deployed.file.scan.rowsPerShard);
      expect(here.plan.shards).toBe(deployed.plan.shards);
    }
  });
});
