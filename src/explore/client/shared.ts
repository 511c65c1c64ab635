/**
 * The explorer page script's shared part: the embedded data, number formatting and escaping,
 * the pick slots (left, right) and the bar chart the panes draw. Like every part, it runs as
 * its own source inlined in the page and refers to nothing outside itself but `ctx`.
 */
import type { ClientContext, Json } from './context.ts';

export function clientShared(ctx: ClientContext): void {
  const data: Json = JSON.parse(document.getElementById('explorer-data')!.textContent!);
  const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };
  // Bidi controls shown as `<U+202E>`, as the report's esc() does, then HTML-escaped.
  const esc = (v: unknown) =>
    String(v)
      .replace(
        /[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/g,
        (c) => `<U+${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}>`,
      )
      .replace(/[&<>"']/g, (c) => ESC[c]!);
  const fmt = (n: number | null | undefined): string => {
    if (n === null || n === undefined || !Number.isFinite(n)) return '—';
    const whole = (x: number) =>
      (x < 0 ? '-' : '') +
      Math.abs(Math.round(x))
        .toString()
        .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    if (Number.isInteger(n) || Math.abs(n) >= 999.95) return whole(n);
    return String(Number(n.toPrecision(4)));
  };
  const pct = (share: number) => (Number.isFinite(share) ? `${fmt(share * 100)}%` : '—');
  const announce = (text: string) => {
    document.getElementById('announce')!.textContent = text;
  };

  let slot = 0;
  for (const r of document.querySelectorAll<HTMLInputElement>('input[name=slot]')) {
    r.addEventListener('change', () => {
      if (r.checked) slot = Number(r.value);
    });
  }

  function choiceTitle(c: Json): string {
    if (c.kind === 'node') return `Node ${c.levels.join(',')}`;
    return `Solution for ${c.spans}`;
  }

  /** A small bar chart with both axes labelled, in the report's style. */
  function bars(title: string, cats: string[], values: number[], xLabel: string, yLabel: string): string {
    const w = 560;
    const left = 64;
    const base = 170;
    const top = 12;
    const maxV = Math.max(0, ...values.filter((v) => Number.isFinite(v)));
    const raw = (maxV > 0 ? maxV : 1) / 4;
    const pow = 10 ** Math.floor(Math.log10(raw));
    const step = [1, 2, 2.5, 5, 10].map((f) => f * pow).find((s) => s >= raw)!;
    const axisTop = step * Math.ceil((maxV > 0 ? maxV : 1) / step - 1e-9);
    const y = (v: number) => base - (Math.max(0, v) / axisTop) * (base - top);
    const band = (w - left - 8) / Math.max(1, cats.length);
    const label = (c: string) => (c.length > 12 ? `${c.slice(0, 11)}…` : c);
    const tilt = Math.max(...cats.map((c) => label(c).length)) * 6 > band;
    const height = tilt ? 270 : 230;
    const out = [
      `<svg class="chart" viewBox="0 0 ${w} ${height}" width="${w}" height="${height}" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title>`,
    ];
    for (let t = 0; t <= axisTop + 1e-9; t += step) {
      out.push(
        `<line class="grid" x1="${left}" x2="${w - 8}" y1="${y(t)}" y2="${y(t)}"/><line class="tick" x1="${left - 5}" x2="${left}" y1="${y(t)}" y2="${y(t)}"/><text x="${left - 8}" y="${y(t) + 4}" text-anchor="end">${fmt(Number(t.toPrecision(12)))}</text>`,
      );
    }
    cats.forEach((c, i) => {
      const cx = left + band * (i + 0.5);
      const v = values[i]!;
      const bw = Math.max(2, band * 0.7);
      out.push(
        `<rect class="mark" x="${cx - bw / 2}" y="${y(v)}" width="${bw}" height="${base - y(v)}" fill="#0072B2"><title>${esc(`${c}: ${fmt(v)}`)}</title></rect>`,
        `<line class="tick" x1="${cx}" x2="${cx}" y1="${base}" y2="${base + 4}"/>`,
        // Labels tilt when the bars are narrow, so neighbours never overlap.
        tilt
          ? `<text x="${cx}" y="${base + 12}" text-anchor="end" font-size="10" transform="rotate(-30 ${cx} ${base + 12})">${esc(label(c))}</text>`
          : `<text x="${cx}" y="${base + 16}" text-anchor="middle" font-size="10">${esc(label(c))}</text>`,
      );
    });
    out.push(
      `<line class="axis" x1="${left}" x2="${left}" y1="${top}" y2="${base}"/><line class="axis" x1="${left}" x2="${w - 8}" y1="${base}" y2="${base}"/>`,
      `<text class="axis-label" x="${(left + w) / 2}" y="${height - 8}" text-anchor="middle">${esc(xLabel)}</text>`,
      `<text class="axis-label" x="14" y="${(top + base) / 2}" text-anchor="middle" transform="rotate(-90 14 ${(top + base) / 2})">${esc(yLabel)}</text></svg>`,
    );
    return `<figure>${out.join('')}<figcaption>${esc(title)}</figcaption></figure>`;
  }

  Object.assign(ctx, { data, esc, fmt, pct, announce, choiceTitle, bars, slot: () => slot });
}
