/**
 * The explorer page script's panes: a picked choice (a frontier solution or a lattice node)
 * rendered into the left or right pane, with its facts, charts, the one embedded preview
 * where it is this choice's, and how to release it.
 */
import type { ClientContext, Json } from './context.ts';

export function clientPanes(ctx: ClientContext): void {
  const { data, esc, fmt, pct, announce, choiceTitle, bars } = ctx;

  /** The page's one embedded preview (the spec's own choice), for the choices whose first rows it is. */
  function previewTable(c: Json): string {
    const pv = data.preview;
    if (!c.feasible) return '<p class="note">No rows: this choice cannot be released.</p>';
    if (!pv || !c.preview) {
      const own = pv ? ` (${esc(choiceTitle(data.choices[pv.choice]))})` : '';
      return `<p class="note preview-none">No rows shown for this choice: the page holds the first released rows of the spec's own choice only${own}, since rows of several choices could be joined into rows finer than any one release. Release this choice (below) to see its rows.</p>`;
    }
    const masked = new Set<number>(pv.masked);
    const head = pv.columns.map((n: string) => `<th scope="col">${esc(n)}</th>`).join('');
    const body = pv.rows
      .map((row: string[], j: number) => {
        const cells = row.map((cell, col) =>
          masked.has(j) && pv.quasiIdentifying[col] ? '<td class="masked">*</td>' : `<td>${esc(cell)}</td>`,
        );
        return `<tr>${cells.join('')}</tr>`;
      })
      .join('');
    return `<div class="scroll"><table class="preview"><caption>The first ${pv.rows.length} released rows (in release order; * = a suppressed row, masked)</caption><thead><tr>${head}</tr></thead><tbody>${body}</tbody></table></div>`;
  }

  function render(pane: HTMLElement, index: number): void {
    const c = data.choices[index];
    const facts: [string, string, number | undefined][] = [
      ['k achieved (smallest class)', fmt(c.k), c.k],
      ['Classes', fmt(c.classes), c.classes],
      [
        'Suppressed rows',
        c.suppressedRows === undefined ? '—' : `${fmt(c.suppressedRows)} of ${fmt(data.rows)}`,
        c.suppressedRows,
      ],
      ['Released rows', fmt(c.releasedRows), c.releasedRows],
    ];
    if (c.objective)
      facts.push([`Objective: ${c.objective.name}`, fmt(c.objective.value), c.objective.value]);
    for (const [name, v] of Object.entries(c.utility ?? {})) {
      if (name !== c.objective?.name) facts.push([name, fmt(v as number), v as number]);
    }
    if (c.prosecutor) {
      facts.push(
        [
          'Max prosecutor risk',
          `${fmt(c.prosecutor.max)}${c.prosecutor.max > 0 ? ` (1 in ${fmt(1 / c.prosecutor.max)})` : ''}`,
          c.prosecutor.max,
        ],
        ['Mean prosecutor risk', fmt(c.prosecutor.mean), c.prosecutor.mean],
        [
          `Rows above risk ${fmt(c.prosecutor.threshold)}`,
          pct(c.prosecutor.shareAbove),
          c.prosecutor.shareAbove,
        ],
      );
    } else if (c.risk) facts.push([c.risk.name, fmt(c.risk.value), c.risk.value]);
    const params = Object.entries(c.params)
      .map(([k, v]) => `${k} = ${v}`)
      .join(', ');
    const parts = [
      `<h3 data-choice="${index}">${esc(choiceTitle(c))}</h3>`,
      `<p>${c.status ? `<span class="status-${c.status}">${c.status === 'unchecked' ? 'not checked' : c.status}</span> · ` : ''}judged under ${esc(params)}</p>`,
      c.feasible ? '' : `<p class="bad">No release: ${esc(c.reason ?? 'no solution')}</p>`,
      `<table class="facts"><tbody>${facts
        .map(
          ([k, v, raw]) =>
            `<tr><th scope="row">${esc(k)}</th><td class="num" data-fact="${esc(k)}" data-value="${raw ?? ''}">${esc(v)}</td></tr>`,
        )
        .join('')}</tbody></table>`,
    ];
    if (c.ncpByAttribute) {
      const names = Object.keys(c.ncpByAttribute);
      parts.push(
        bars(
          'Information lost per quasi-identifier',
          names,
          names.map((n) => c.ncpByAttribute[n]),
          'quasi-identifier',
          'NCP (0–1)',
        ),
      );
    }
    if (c.classSizes && c.classSizes.length > 0) {
      parts.push(
        bars(
          'Released classes per size',
          c.classSizes.map((b: Json) => b.label),
          c.classSizes.map((b: Json) => b.classes),
          // Bins that add up persons size their classes in persons (an entity column).
          c.classSizes[0].persons === undefined ? 'class size (rows)' : 'class size (persons)',
          'classes',
        ),
      );
    }
    if (c.disclosure) {
      parts.push(
        `<table><caption>Disclosure per sensitive attribute (worst released class${c.disclosure.some((d: Json) => d.over === 'persons') ? ', counted over persons' : ''})</caption><thead><tr><th scope="col">Attribute</th><th scope="col" class="num">distinct l</th><th scope="col" class="num">entropy l</th><th scope="col" class="num">t (0–1, distance)</th><th scope="col" class="num">δ (nats)</th></tr></thead><tbody>${c.disclosure
          .map(
            (d: Json) =>
              `<tr><td>${esc(d.attribute)}</td><td class="num">${fmt(d.distinctL)}</td><td class="num">${fmt(d.entropyL)}</td><td class="num">${fmt(d.t)} (${esc(d.tDistance ?? 'equal')})</td><td class="num">${fmt(d.delta)}</td></tr>`,
          )
          .join('')}</tbody></table>`,
      );
    }
    parts.push(previewTable(c));
    if (c.feasible && c.command) {
      const change = c.specChange ? JSON.stringify(c.specChange, null, 2) : '';
      parts.push(
        '<h3>Release this choice</h3>',
        change
          ? `<p>Change in the spec:</p><pre class="snippet spec-change">${esc(change)}</pre><p>then run:</p>`
          : '<p>Run (the spec as it is):</p>',
        `<pre class="snippet command">${esc(c.command)}</pre>`,
      );
    }
    pane.innerHTML = parts.join('\n');
    pane.dataset.choice = String(index);
  }

  function pick(index: number, node?: number): void {
    if (index < 0) {
      announce('That run has no solution.');
      return;
    }
    const slot = ctx.slot();
    render(document.getElementById(`pane-${slot}`)!, index);
    ctx.pickedNodes[slot] = node ?? null;
    const c = data.choices[index];
    announce(`${slot === 0 ? 'Left' : 'Right'}: ${choiceTitle(c)} picked.`);
    ctx.drawPicked();
  }

  for (const el of document.querySelectorAll<HTMLElement | SVGElement>('[data-choice]')) {
    const go = () => {
      const c = Number(el.getAttribute('data-choice'));
      const levels = data.choices[c]?.levels;
      pick(c, levels && data.lattice ? ctx.indexOf(levels) : undefined);
    };
    el.addEventListener('click', go);
    el.addEventListener('keydown', (e) => {
      const k = (e as KeyboardEvent).key;
      if ((k === 'Enter' || k === ' ') && el.tagName !== 'BUTTON') {
        e.preventDefault();
        go();
      }
    });
  }

  ctx.pick = pick;
}
