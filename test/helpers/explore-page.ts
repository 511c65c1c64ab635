/** explore.html's embedded data, read as an attacker would (test/explore/page-leak.test.ts). */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { exploreCommand } from '../../src/cli/explore.ts';
import type { Workspace } from './workspace.ts';

/** One label the page holds for a row: the row's identity, its column, level and label. */
export interface Observation {
  identity: string;
  column: string;
  level: number;
  label: string;
}

// biome-ignore lint/suspicious/noExplicitAny: the page's JSON, read as an attacker would
export type Json = any;

/**
 * `ppdp explore` on the workspace's spec over k = 3..8 × maxSuppression 0, 0.05 (on the whole
 * Adult table, every node of its 4,320-node lattice evaluated): the folder and the page.
 */
export async function exploreGrid(ws: Workspace): Promise<{ out: string; html: string }> {
  const out = join(ws.dir, 'explore');
  await exploreCommand([
    ws.spec,
    '--vary',
    'k=3..8',
    '--vary',
    'maxSuppression=0,0.05',
    '--out',
    out,
    '--quiet',
  ]);
  return { out, html: readFileSync(join(out, 'explore.html'), 'utf8') };
}

/** The page's embedded data JSON. */
export function embeddedData(html: string): Json {
  const found = /<script type="application\/json" id="explorer-data">([\s\S]*?)<\/script>/.exec(html);
  expect(found, 'the page embeds its data').not.toBeNull();
  return JSON.parse(found![1]!);
}

/**
 * Every quasi-identifier label the page embeds, per row identity. Rows that carry a label per
 * level (the page's own row ids) give every level they hold; rows shown per choice give the
 * choice's level for each unmasked cell, keyed by their place in the preview.
 */
export function observations(data: Json): Observation[] {
  const out: Observation[] = [];
  const pv = data.preview;
  if (!pv) return out;
  const qis: string[] = data.lattice?.qis ?? [];
  if (Array.isArray(pv.orders)) {
    // Rows with ids, each cell a label per level (null: withheld).
    (pv.rows as Json[][]).forEach((cells, ref) => {
      cells.forEach((cell, col) => {
        if (!Array.isArray(cell)) return;
        cell.forEach((label: string | null, level: number) => {
          if (label !== null) out.push({ identity: `row ${ref}`, column: pv.columns[col], level, label });
        });
      });
    });
    return out;
  }
  // Rows by position, shown by every choice that previews them.
  data.choices.forEach((c: Json) => {
    if (!c.preview || !c.levels) return;
    const masked = new Set<number>(pv.masked ?? []);
    (pv.rows as string[][]).forEach((cells, j) => {
      if (masked.has(j)) return;
      cells.forEach((label, col) => {
        const qi = qis.indexOf(pv.columns[col]);
        if (qi >= 0)
          out.push({ identity: `position ${j}`, column: pv.columns[col], level: c.levels[qi], label });
      });
    });
  });
  return out;
}
