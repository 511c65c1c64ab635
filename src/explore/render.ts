/**
 * The frontier's files: frontier.json (every point as computed), frontier.csv (one row per
 * value, for spreadsheets) and frontier.html (a line chart of NCP and maximum prosecutor
 * risk against the parameter, both on [0, 1], and the table).
 */
import type { Frontier, FrontierPoint } from './frontier.ts';

const CSV_COLUMNS: [string, (p: FrontierPoint) => string | number | undefined][] = [
  ['feasible', (p) => String(p.feasible)],
  ['classes', (p) => p.classes],
  ['k_achieved', (p) => p.kAchieved],
  ['suppressed_rows', (p) => p.suppressedRows],
  ['objective', (p) => p.objective?.name],
  ['objective_value', (p) => p.objective?.value],
  ['risk', (p) => p.risk?.name],
  ['risk_value', (p) => p.risk?.value],
  ['ncp', (p) => p.utility?.ncp],
  ['discernibility', (p) => p.utility?.discernibility],
  ['max_prosecutor_risk', (p) => p.maxProsecutorRisk],
  ['share_above_0.2', (p) => p.shareAboveRisk],
  ['node', (p) => (p.node ? Object.values(p.node).join('/') : undefined)],
  ['ms', (p) => p.ms],
];

export function frontierJson(frontier: Frontier): string {
  return `${JSON.stringify(frontier, null, 2)}\n`;
}

export function frontierCsv(frontier: Frontier): string {
  const header = [frontier.parameter, ...CSV_COLUMNS.map(([name]) => name)].join(',');
  const lines = frontier.points.map((p) =>
    [p.value, ...CSV_COLUMNS.map(([, get]) => get(p))]
      .map((v) => (v === undefined ? '' : String(v)))
      .join(','),
  );
  return `${[header, ...lines].join('\n')}\n`;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
const escapeHtml = (s: string | number) => String(s).replace(/[&<>"]/g, (c) => ESCAPES[c]!);

const W = 720;
const H = 360;
const M = { left: 56, right: 20, top: 20, bottom: 48 };

/** Line chart of the feasible points: NCP and max prosecutor risk (both in [0, 1]) per value. */
export function frontierSvg(frontier: Frontier): string {
  const points = frontier.points.filter((p) => p.feasible);
  const xs = frontier.points.map((p) => p.value);
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const x = (v: number) => M.left + (hi === lo ? 0.5 : (v - lo) / (hi - lo)) * (W - M.left - M.right);
  const name = (get: (p: FrontierPoint) => { name: string } | undefined) =>
    points.map(get).find((f) => f)?.name ?? '';
  const series = [
    { name: name((p) => p.objective), color: '#0072B2', get: (p: FrontierPoint) => p.objective?.value },
    { name: name((p) => p.risk), color: '#D55E00', get: (p: FrontierPoint) => p.risk?.value },
  ];
  // The y axis from 0 to a round value above every point (NCP and risks stay within 0–1).
  const top = niceCeil(Math.max(0, ...points.flatMap((p) => series.map((s) => s.get(p) ?? 0))));
  const y = (v: number) => H - M.bottom - (Math.max(0, v) / top) * (H - M.top - M.bottom);
  const parts: string[] = [];
  for (let i = 0; i <= 5; i++) {
    const v = (top * i) / 5;
    parts.push(
      `<line x1="${M.left}" x2="${W - M.right}" y1="${y(v)}" y2="${y(v)}" stroke="#ddd"/>`,
      `<text x="${M.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${escapeHtml(Number(v.toPrecision(3)))}</text>`,
    );
  }
  for (const v of ticks(lo, hi)) {
    parts.push(
      `<line x1="${x(v)}" x2="${x(v)}" y1="${H - M.bottom}" y2="${H - M.bottom + 4}" stroke="#333"/>`,
      `<text x="${x(v)}" y="${H - M.bottom + 16}" text-anchor="middle" font-size="11">${escapeHtml(round(v))}</text>`,
    );
  }
  parts.push(
    `<line x1="${M.left}" x2="${W - M.right}" y1="${H - M.bottom}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<line x1="${M.left}" x2="${M.left}" y1="${M.top}" y2="${H - M.bottom}" stroke="#333"/>`,
    `<text x="${(M.left + W - M.right) / 2}" y="${H - 10}" text-anchor="middle" font-size="12">${escapeHtml(frontier.parameter)}</text>`,
    `<text x="14" y="${(M.top + H - M.bottom) / 2}" text-anchor="middle" font-size="12" transform="rotate(-90 14 ${(M.top + H - M.bottom) / 2})">value</text>`,
  );
  series.forEach((s, i) => {
    const pts = points.filter((p) => s.get(p) !== undefined);
    if (pts.length > 0) {
      const path = pts.map((p) => `${x(p.value).toFixed(1)},${y(s.get(p)!).toFixed(1)}`).join(' ');
      parts.push(`<polyline fill="none" stroke="${s.color}" stroke-width="2" points="${path}"/>`);
      for (const p of pts) {
        parts.push(
          `<circle cx="${x(p.value).toFixed(1)}" cy="${y(s.get(p)!).toFixed(1)}" r="2.5" fill="${s.color}"><title>${escapeHtml(`${frontier.parameter} = ${p.value}: ${s.name} ${round(s.get(p)!)}`)}</title></circle>`,
        );
      }
    }
    const ly = M.top + 4 + i * 16;
    parts.push(
      `<rect x="${W - M.right - 190}" y="${ly}" width="12" height="3" fill="${s.color}"/>`,
      `<text x="${W - M.right - 172}" y="${ly + 5}" font-size="11">${escapeHtml(s.name)}</text>`,
    );
  });
  return `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${H}" viewBox="0 0 ${W} ${H}" role="img" aria-label="privacy/utility frontier">${parts.join('')}</svg>`;
}

export function frontierHtml(frontier: Frontier): string {
  const infeasible = frontier.points.filter((p) => !p.feasible).map((p) => p.value);
  const head = [frontier.parameter, ...CSV_COLUMNS.map(([name]) => name)];
  const rows = frontier.points.map(
    (p) =>
      `<tr>${[p.value, ...CSV_COLUMNS.map(([, get]) => get(p))]
        .map((v) => `<td>${v === undefined ? '—' : escapeHtml(typeof v === 'number' ? round(v) : v)}</td>`)
        .join('')}</tr>`,
  );
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ppdp frontier — ${escapeHtml(frontier.spec)}</title>
<style>body{font:14px system-ui,sans-serif;margin:2em;color:#222}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:right}</style>
</head><body>
<h1>Privacy/utility frontier</h1>
<p>${escapeHtml(frontier.spec)}, method ${escapeHtml(frontier.method)}, ${frontier.rows} rows: ${escapeHtml(frontier.parameter)} from ${frontier.points[0]?.value} to ${frontier.points.at(-1)?.value}.
The blue line is what the method optimizes (NCP: the information lost, 0 = data as given, 1 = every value fully generalized), the orange one the worst-case risk (the maximum prosecutor risk is 1 / the smallest released class).
Nothing was published: each value ran the method's search only.${infeasible.length > 0 ? ` No solution for ${escapeHtml(frontier.parameter)} = ${infeasible.join(', ')}.` : ''}</p>
${frontierSvg(frontier)}
<table><thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table>
</body></html>
`;
}

/** 1, 2 or 5 times a power of ten, at least x (1 for x = 0). */
function niceCeil(x: number): number {
  if (!(x > 0)) return 1;
  const mag = 10 ** Math.floor(Math.log10(x));
  return [1, 2, 5, 10].map((f) => f * mag).find((v) => v >= x * (1 - 1e-12))!;
}

function ticks(lo: number, hi: number): number[] {
  if (hi === lo) return [lo];
  const raw = (hi - lo) / 8;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

function round(x: number): number {
  return Math.round(x * 1e4) / 1e4;
}
