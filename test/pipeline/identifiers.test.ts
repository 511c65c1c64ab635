/**
 * Identifying columns never leave the reader: no shard, dictionary, digest, work file or
 * released file holds one of their cells, whatever the input format and the shard count.
 */
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { encodeArrow } from '../../src/data/arrow.ts';
import { readTableShards } from '../../src/data/read.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const ROWS = 3000;

/** Every file below a folder, recursively. */
function filesBelow(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesBelow(path) : [path];
  });
}

/** A copy of the Adult cut with a unique person id in front of every row. */
function adultWithIds() {
  const ws = adultWorkspace(ROWS);
  const lines = ws.read('adult.csv').trimEnd().split('\n');
  const ids = lines.slice(1).map((_, i) => `PERSON${(7919 * i + 104729).toString(36).toUpperCase()}X`);
  ws.write(
    'adult.csv',
    `${[`id;${lines[0]}`, ...lines.slice(1).map((l, i) => `${ids[i]};${l}`)].join('\n')}\n`,
  );
  ws.editSpec((s) => {
    (s.attributes as Record<string, unknown>) = {
      id: { type: 'identifying' },
      ...(s.attributes as Record<string, unknown>),
    };
  });
  return { ws, ids };
}

describe('identifying columns', () => {
  it('are left out by the readers (CSV and Arrow) and listed as omitted', () => {
    const { ws } = adultWithIds();
    const omit = new Set(['id']);
    for (const table of readTableShards(join(ws.dir, 'adult.csv'), 1000, { omit })) {
      expect(table.columns.map((c) => c.name)).not.toContain('id');
      expect(table.omitted).toEqual(['id']);
      expect(table.rowCount).toBe(1000);
    }
    const csv = [...readTableShards(join(ws.dir, 'adult.csv'), Number.POSITIVE_INFINITY, { omit })][0]!;
    const full = [...readTableShards(join(ws.dir, 'adult.csv'), Number.POSITIVE_INFINITY)][0]!;
    writeFileSync(
      join(ws.dir, 'adult.arrow'),
      encodeArrow(full.columns.map((c) => ({ ...c, kind: 'dictionary' as const }))),
    );
    const arrow = [...readTableShards(join(ws.dir, 'adult.arrow'), Number.POSITIVE_INFINITY, { omit })][0]!;
    expect(arrow.omitted).toEqual(['id']);
    expect(arrow.columns.map((c) => [c.name, c.dictionary])).toEqual(
      csv.columns.map((c) => [c.name, c.dictionary]),
    );
  });

  it('reach no work file and no released file, sharded; the release is the same as without the column', async () => {
    const { ws, ids } = adultWithIds();
    const work = join(ws.dir, 'work');
    const out = join(ws.dir, 'out', 'with-ids');
    const result = await executeRelease({
      spec: ws.spec,
      out,
      work: pathToFileURL(`${work}/`).href,
      shards: 3,
    });
    expect(result.plan.shards).toBe(3);
    const files = [...filesBelow(work), ...filesBelow(out)];
    expect(files.some((f) => f.endsWith('.arrow') && f.includes('rows'))).toBe(true);
    // Every id starts with PERSON: a substring search finds any copy of one.
    for (const file of files) {
      const text = readFileSync(file).toString('latin1');
      expect(text.includes('PERSON'), file).toBe(false);
    }
    expect(ids.length).toBe(ROWS);
    const report = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(report.input.columns).toContainEqual({ name: 'id', type: 'identifying' });

    // The same table without the id column releases the same bytes: the column was never read in.
    const plain = adultWorkspace(ROWS);
    const bare = join(plain.dir, 'out', 'bare');
    await executeRelease({ spec: plain.spec, out: bare, shards: 3 });
    for (const name of ['data.csv', 'data.arrow']) {
      expect(readFileSync(join(out, name)).equals(readFileSync(join(bare, name))), name).toBe(true);
    }
  });
});
