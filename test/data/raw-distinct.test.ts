/**
 * The report's distinct values of a column that passes through a sharded release as bytes: the
 * scan counts them from the bytes, and Combine counts the union of the pieces' values, exactly,
 * whether the states share memory or each reads the work area alone.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
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
