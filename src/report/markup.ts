/** Generic HTML pieces of the report: tables, fact lists, sections, notes. Cells are already-escaped HTML. */
import { esc } from './format.ts';

export interface Column {
  label: string;
  /** Right-aligned with tabular digits. */
  num?: boolean;
}

/** A row of already-escaped HTML cells, optionally with a CSS class (highlight, total). */
export type Row = string[] | { cells: string[]; cls: string };

export function table(columns: Column[], rows: Row[], caption?: string): string {
  const numClass = (i: number) => (columns[i]?.num ? ' class="num"' : '');
  const head = columns.map((c, i) => `<th scope="col"${numClass(i)}>${esc(c.label)}</th>`).join('');
  const body = rows
    .map((row) => {
      const { cells, cls } = Array.isArray(row) ? { cells: row, cls: '' } : row;
      const tds = cells.map((cell, i) => `<td${numClass(i)}>${cell}</td>`).join('');
      return `<tr${cls ? ` class="${cls}"` : ''}>${tds}</tr>`;
    })
    .join('\n');
  const cap = caption ? `<caption>${esc(caption)}</caption>` : '';
  return `<table>${cap}<thead><tr>${head}</tr></thead>\n<tbody>\n${body}\n</tbody></table>`;
}

/** A fact: its label, its value (escaped HTML) and, optionally, what it means. */
export type Fact = [label: string, value: string, meaning?: string];

/** Label/value table for summary facts; a third column explains them when any fact has a meaning. */
export function factsTable(facts: Fact[]): string {
  const explained = facts.some((f) => f[2] !== undefined);
  const rows = facts
    .map(([k, v, m]) => {
      const meaning = explained ? `<td class="meaning">${m === undefined ? '' : esc(m)}</td>` : '';
      return `<tr><th scope="row">${esc(k)}</th><td>${v}</td>${meaning}</tr>`;
    })
    .join('\n');
  return `<table class="facts"><tbody>\n${rows}\n</tbody></table>`;
}

export function mark(ok: boolean): string {
  return ok ? '<span class="ok" title="yes">✓</span>' : '<span class="bad" title="no">✗</span>';
}

export function section(id: string, title: string, body: string): string {
  return `<section id="${id}">\n<h2>${esc(title)}</h2>\n${body}\n</section>`;
}

export function note(text: string): string {
  return `<p class="note">${esc(text)}</p>`;
}
