/**
 * The docs' tables render: every row of a Markdown table has as many cells as its header. A `|`
 * inside a cell (a class size |E| in a formula) must be written `\|`, or the row breaks into
 * cells of its own and the formula is lost.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('../../', import.meta.url).pathname;

const markdown = (dir: string): string[] =>
  readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdown(join(dir, e.name)) : e.name.endsWith('.md') ? [join(dir, e.name)] : [],
  );

/** Cells of a table row: split at each `|` not escaped by a backslash. */
const cells = (row: string): number => row.split(/(?<!\\)\|/).length - 2;

/** Rows whose cell count differs from their table's header: `file:line (cells, header's)`. */
function brokenRows(file: string, text: string): string[] {
  const lines = text.split('\n');
  const broken: string[] = [];
  let fence = false;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i]!.startsWith('```')) fence = !fence;
    const isTable = !fence && lines[i]!.startsWith('|') && /^\|[\s:|-]+\|$/.test(lines[i + 1] ?? '');
    if (!isTable) continue;
    const width = cells(lines[i]!);
    let j = i + 2;
    for (; j < lines.length && lines[j]!.startsWith('|'); j++) {
      const n = cells(lines[j]!);
      if (n !== width) broken.push(`${file}:${j + 1} (${n} cells, the header has ${width})`);
    }
    i = j;
  }
  return broken;
}

describe('the docs tables', () => {
  const files = ['README.md', ...markdown('docs'), ...markdown('examples')];

  it('every row has its header cells', () => {
    expect(files.flatMap((f) => brokenRows(f, readFileSync(join(ROOT, f), 'utf8')))).toEqual([]);
  });

  it('a formula with an unescaped |E| is caught', () => {
    const table =
      '| measure | formula |\n| --- | --- |\n| risk | `1 / min_E |E|` |\n| ok | `1 / min_E \\|E\\|` |\n';
    expect(brokenRows('t.md', table)).toEqual(['t.md:3 (4 cells, the header has 2)']);
  });
});
