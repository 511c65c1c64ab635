/**
 * explore.html: one self-contained page (the report's stylesheet, inline SVG, the data as
 * embedded JSON, an inline script; its Content-Security-Policy forbids any outside request
 * and allows only its own stylesheet and script, by hash): the frontier charts and its
 * distinct solutions, the lattice (generalization), and two panels that show any picked
 * solution or node side by side.
 */
import { ticks } from '../report/charts.ts';
import { esc, fmtNum, px } from '../report/format.ts';
import { CSS, contentSecurityPolicy, swatch } from '../report/style.ts';
import { newClientContext } from './client/context.ts';
import { clientLattice } from './client/lattice.ts';
import { clientPanes } from './client/panes.ts';
import { clientShared } from './client/shared.ts';
import type { ExplorerData } from './explorer.ts';
import { repeatsSection } from './repeats-page.ts';
import { searchSection } from './search.ts';

/** The page script's parts, in the order they run: each reads what the ones before it put in `ctx`. */
const CLIENT_PARTS = [clientShared, clientPanes, clientLattice];

// Each part is inlined as its own source, so none may refer to anything outside itself but
// `ctx`. Transpilers that keep function names wrap nested functions in __name(): an identity here.
const CLIENT = [
  'var __name = (f) => f;',
  '(() => {',
  `const ctx = (${newClientContext.toString()})();`,
  ...CLIENT_PARTS.map((part) => `(${part.toString()})(ctx);`),
  '})();',
].join('\n');

const STYLE = () => `${CSS}${EXTRA_CSS}`;

/** The page's Content-Security-Policy (the same for every page: its script and stylesheet are fixed). */
export function explorerCsp(): string {
  return contentSecurityPolicy([STYLE()], [CLIENT]);
}

const W = 600;
const H = 300;
const M = { left: 72, right: 16, top: 16, bottom: 52 };
const SERIES = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#999999'];

/** What a parameter is, for axis labels. */
export const PARAMETER_LABELS: Record<string, string> = {
  k: 'k (smallest class, rows)',
  l: 'l (well-represented values)',
  t: 't (distance, 0–1)',
  delta: 'δ (nats)',
  tau: 'τ (probability)',
  maxSuppression: 'maxSuppression (share of rows)',
};

/** What a measure is, with its unit, for axis labels. */
function measureLabel(name: string): string {
  const known: Record<string, string> = {
    ncp: 'NCP (information lost, 0–1)',
    'max prosecutor risk': 'max prosecutor risk (probability)',
    'max attribute-disclosure risk': 'max attribute-disclosure risk (probability)',
    suppressed: 'suppressed rows (rows)',
    discernibility: 'discernibility (rows²)',
    'expected-squared-error': 'expected squared error (of estimated shares)',
  };
  return known[name] ?? name;
}

const EXTRA_CSS = `
main { max-width: 1240px; }
.cols { display: grid; grid-template-columns: repeat(auto-fit, minmax(420px, 1fr)); gap: 16px; }
.pane { min-width: 0; }
.scroll { overflow: auto; max-height: 420px; border: 1px solid var(--line); border-radius: 6px; }
.scroll table { margin: 0; }
.scroll th { position: sticky; top: 0; background: #fff; }
.lattice-wrap { border: 1px solid var(--line); border-radius: 6px; background: #fcfcfd; }
#lattice { width: 100%; height: 480px; touch-action: none; cursor: crosshair; }
#lattice:focus { outline: 3px solid #2563eb; outline-offset: 2px; }
.controls { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; margin: 8px 0; font-size: 14px; }
.controls input[type=text] { font: inherit; padding: 4px 8px; width: 14em; }
button { font: inherit; padding: 3px 10px; border: 1px solid #cbd5e1; border-radius: 6px; background: #fff; cursor: pointer; }
button:focus-visible, .pt:focus-visible { outline: 3px solid #2563eb; outline-offset: 2px; }
.pt { cursor: pointer; }
pre.snippet { background: #f3f4f6; padding: 8px 12px; border-radius: 6px; overflow-x: auto; white-space: pre-wrap; word-break: break-all; font-size: 13px; }
.status-optimal { color: #1d4ed8; font-weight: 700; }
.status-feasible { color: var(--ok); }
.status-infeasible { color: var(--bad); }
.status-unchecked { color: var(--muted); }
td.masked { color: var(--muted); }
`;

/** The explorer page for the data `explore()` gathered. */
export function explorerHtml(data: ExplorerData): string {
  const json = JSON.stringify(data).replace(/</g, '\\u003c');
  const params = data.parameters.map((p) => `${p.name} ∈ {${p.values.join(', ')}}`).join(', ');
  const solutions = new Set(data.points.map((p) => p.choice).filter((c) => c >= 0)).size;
  // A release drawing a secret sample: aggregates of several runs per value, no choices to pick.
  const repeated = data.frontier.points.some((p) => p.repeats);
  const summary = repeated
    ? `${fmtNum(data.points.length)} values, each released ${fmtNum(data.frontier.points.find((p) => p.repeats)!.repeats!.runs)} times in memory to measure it. Nothing was published.`
    : `${fmtNum(data.points.length)} runs gave ${fmtNum(solutions)} distinct solution${solutions === 1 ? '' : 's'}. Nothing was published: pick a solution or a node to see what releasing it would give, and the command that releases it.`;
  const picked = `<section id="picked" aria-labelledby="picked-h"><h2 id="picked-h">Picked choices, side by side</h2>
<div class="controls" role="radiogroup" aria-label="Where a pick goes">Picks go to:
<label><input type="radio" name="slot" value="0" checked> left</label>
<label><input type="radio" name="slot" value="1"> right</label></div>
<p id="announce" class="meaning" aria-live="polite"></p>
<div class="cols"><div class="pane" id="pane-0" aria-label="Left choice"><p class="note">Nothing picked yet.</p></div>
<div class="pane" id="pane-1" aria-label="Right choice"><p class="note">Nothing picked yet.</p></div></div>
</section>`;
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${explorerCsp()}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>ppdp explore — ${esc(data.spec)}</title>
<style>${STYLE()}</style>
</head><body><main>
<header><h1>Explore the choices of ${esc(data.spec)}</h1>
<p>Method <code>${esc(data.method)}</code>, ${fmtNum(data.rows)} input rows, seed ${data.seed}; varied: ${esc(params)}.
${summary}</p></header>
${repeated ? repeatsSection(data) : frontierSection(data)}
${data.search ? searchSection(data.search) : ''}
${data.lattice ? latticeSection(data) : ''}
${repeated ? '' : picked}
<footer>Made by <code>ppdp explore</code>. ${repeated ? 'The page holds no rows and no single run: only the aggregates above, for choosing a value; release the spec to publish.' : previewNote(data)}</footer>
</main>
<script type="application/json" id="explorer-data">${json}</script>
<script>${CLIENT}</script>
</body></html>
`;
}

/** What rows the page holds, and why only those. */
function previewNote(data: ExplorerData): string {
  const why =
    'Released rows of several choices could be joined into rows finer than any one release publishes, so the page holds the rows of one choice only';
  if (!data.preview) {
    return `${why}, the spec's own, which is not among the choices here (its own values were not swept, or have no solution): it holds no rows. Release a choice to see its rows.`;
  }
  const own = data.choices[data.preview.choice]!;
  const title = own.kind === 'node' ? `node ${own.levels!.join(',')}` : `the solution for ${own.spans ?? ''}`;
  return `${why}: the first ${fmtNum(data.preview.rows.length)} rows of the spec's own choice (${esc(title)}), as its release writes them (generalized, or masked as <code>*</code>) in its order for seed ${data.seed}. Other choices show their figures and how to release them, not rows.`;
}

function frontierSection(data: ExplorerData): string {
  const f = data.frontier;
  const first = data.parameters[0]!;
  const second = data.parameters[1];
  const feasible = f.points.filter((p) => p.feasible);
  const riskName = feasible.find((p) => p.risk)?.risk?.name ?? 'max prosecutor risk';
  const objName = feasible.find((p) => p.objective)?.objective?.name ?? 'ncp';
  const charts = [
    lineChart(data, objName, (i) => f.points[i]!.objective?.value),
    lineChart(data, riskName, (i) => f.points[i]!.risk?.value),
    ...(data.method === 'generalization' || feasible.some((p) => (p.suppressedRows ?? 0) > 0)
      ? [lineChart(data, 'suppressed', (i) => f.points[i]!.suppressedRows)]
      : []),
  ];
  const infeasible = data.points.filter((p) => !p.feasible).length;
  const rows = [...new Set(data.points.map((p) => p.choice).filter((c) => c >= 0))].map((c) => {
    const ch = data.choices[c]!;
    const own = data.points.some(
      (p) => p.choice === c && data.parameters.every((q) => q.spec === p.values[q.name]),
    );
    const cells = [
      `${esc(ch.spans ?? '')}${own ? ' <span class="badge">spec</span>' : ''}`,
      ch.levels ? `<code>${ch.levels.join(',')}</code>` : '—',
      fmtNum(ch.k ?? Number.NaN),
      fmtNum(ch.classes ?? Number.NaN),
      fmtNum(ch.suppressedRows ?? Number.NaN),
      fmtNum(ch.objective?.value ?? Number.NaN),
      fmtNum(ch.risk?.value ?? Number.NaN),
      `<button type="button" data-choice="${c}" aria-label="Pick the solution for ${esc(ch.spans ?? '')}">Pick</button>`,
    ];
    return `<tr${own ? ' class="chosen"' : ''}>${cells.map((x, i) => `<td${i >= 2 && i <= 6 ? ' class="num"' : ''}>${x}</td>`).join('')}</tr>`;
  });
  const head = [
    'Values',
    'Node (levels)',
    'k achieved',
    'Classes',
    'Suppressed rows',
    measureLabel(objName),
    measureLabel(riskName),
    '',
  ];
  return `<section id="frontier" aria-labelledby="frontier-h"><h2 id="frontier-h">Frontier: ${esc(first.name)}${second ? ` × ${esc(second.name)}` : ''}</h2>
<p class="meaning">Each point is the method's own choice for those values${second ? `; one line per ${esc(second.name)}` : ''}. The dashed line marks the spec's own ${esc(first.name)}${first.spec !== undefined ? ` (${first.spec})` : ''}. Click or press Enter on a point to pick it.${infeasible > 0 ? ` ${infeasible} run${infeasible === 1 ? ' has' : 's have'} no solution (not drawn).` : ''}</p>
<div class="cols">${charts.join('')}</div>
<h3>Distinct solutions</h3>
<div class="scroll"><table><caption>Runs with the same outcome (node, classes, suppressed rows) are one solution, listed with the values it spans.</caption>
<thead><tr>${head.map((h, i) => `<th scope="col"${i >= 2 && i <= 6 ? ' class="num"' : ''}>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table></div>
</section>`;
}

/** One measure against the first parameter, one line per value of the second. */
function lineChart(data: ExplorerData, measure: string, get: (i: number) => number | undefined): string {
  const first = data.parameters[0]!;
  const second = data.parameters[1];
  const xs = first.values;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const x = (v: number) => M.left + (hi === lo ? 0.5 : (v - lo) / (hi - lo)) * (W - M.left - M.right);
  const values = data.points.map((_, i) => get(i)).filter((v): v is number => v !== undefined);
  const axis = ticks(Math.max(0, ...values));
  const top = axis.at(-1)!;
  const base = H - M.bottom;
  const y = (v: number) => base - (Math.max(0, v) / top) * (base - M.top);
  const title = `${measureLabel(measure)} against ${first.name}`;
  const parts: string[] = [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="group" aria-label="${esc(title)}"><title>${esc(title)}</title>`,
  ];
  for (const t of axis) {
    parts.push(
      `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${px(y(t))}" y2="${px(y(t))}"/>` +
        `<line class="tick" x1="${M.left - 5}" x2="${M.left}" y1="${px(y(t))}" y2="${px(y(t))}"/>` +
        `<text x="${M.left - 8}" y="${px(y(t) + 4)}" text-anchor="end">${fmtNum(t)}</text>`,
    );
  }
  for (const v of xTicks(lo, hi, xs)) {
    parts.push(
      `<line class="tick" x1="${px(x(v))}" x2="${px(x(v))}" y1="${base}" y2="${base + 5}"/>` +
        `<text x="${px(x(v))}" y="${base + 18}" text-anchor="middle">${fmtNum(v)}</text>`,
    );
  }
  if (first.spec !== undefined && first.spec >= lo && first.spec <= hi) {
    parts.push(
      `<line class="spec-mark" x1="${px(x(first.spec))}" x2="${px(x(first.spec))}" y1="${M.top}" y2="${base}" stroke="#111827" stroke-dasharray="4 3"/>` +
        // Right of the line, or left of it near the right edge.
        (x(first.spec) > W - M.right - 90
          ? `<text x="${px(x(first.spec) - 4)}" y="${M.top + 10}" text-anchor="end">`
          : `<text x="${px(x(first.spec) + 4)}" y="${M.top + 10}">`) +
        `spec: ${esc(first.name)} = ${fmtNum(first.spec)}</text>`,
    );
  }
  const groups = second ? second.values : [undefined];
  const legend: string[] = [];
  groups.forEach((g, s) => {
    const color = SERIES[s % SERIES.length]!;
    const pts = data.points
      .map((p, i) => ({ p, i, v: get(i) }))
      .filter(
        ({ p, v }) => v !== undefined && p.feasible && (g === undefined || p.values[second!.name] === g),
      );
    if (pts.length > 1) {
      parts.push(
        `<polyline fill="none" stroke="${color}" stroke-width="2" points="${pts.map(({ p, v }) => `${px(x(p.values[first.name]!))},${px(y(v!))}`).join(' ')}"/>`,
      );
    }
    for (const { p, i, v } of pts) {
      const label = `${Object.entries(p.values)
        .map(([n, val]) => `${n} = ${val}`)
        .join(', ')}: ${measure} ${fmtNum(v!)}`;
      parts.push(
        `<circle class="pt mark" tabindex="0" role="button" data-point="${i}" data-choice="${p.choice}" aria-label="${esc(`Pick ${label}`)}" cx="${px(x(p.values[first.name]!))}" cy="${px(y(v!))}" r="4.5" fill="${color}"><title>${esc(label)}</title></circle>`,
      );
    }
    if (second) legend.push(`<span>${swatch(color)}${esc(second.name)} = ${g}</span>`);
  });
  parts.push(
    `<line class="axis" x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${base}"/>` +
      `<line class="axis" x1="${M.left}" y1="${base}" x2="${W - M.right}" y2="${base}"/>` +
      `<text class="axis-label" x="${px((M.left + W - M.right) / 2)}" y="${H - 10}" text-anchor="middle">${esc(PARAMETER_LABELS[first.name] ?? first.name)}</text>` +
      `<text class="axis-label" x="14" y="${px((M.top + base) / 2)}" text-anchor="middle" transform="rotate(-90 14 ${px((M.top + base) / 2)})">${esc(measureLabel(measure))}</text>`,
    '</svg>',
  );
  return `<figure>${parts.join('\n')}${legend.length > 0 ? `<div class="legend">${legend.join('')}</div>` : ''}<figcaption>${esc(title)}</figcaption></figure>`;
}

/** Ticks along the parameter axis: the values themselves when few, else round steps. */
function xTicks(lo: number, hi: number, values: number[]): number[] {
  if (values.length <= 10) return [...new Set(values)];
  const raw = (hi - lo) / 8;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((f) => f * mag).find((s) => s >= raw)!;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + 1e-9; v += step) out.push(Number(v.toFixed(10)));
  return out;
}

function latticeSection(data: ExplorerData): string {
  const l = data.lattice!;
  const evaluated = l.evaluated === 'all' ? 'every node' : 'the nodes the search checked';
  return `<section id="lattice-section" aria-labelledby="lattice-h"><h2 id="lattice-h">Generalization lattice</h2>
<p class="meaning">${fmtNum(l.size)} nodes, one per vector of levels (${esc(l.qis.join(', '))}), by total level: the input as given at the bottom, everything generalized at the top. Status under the spec's own parameters; ${evaluated} evaluated.</p>
<div class="legend"><span>${swatch('#1d4ed8')}optimal (the search's choice)</span><span>${swatch('#15803d')}feasible</span><span>${swatch('#dc2626')}infeasible</span><span>${swatch('#cbd5e1')}not checked</span><span>${swatch('#f59e0b')}picked</span></div>
<form class="controls" id="node-search" role="search" aria-label="Find a node">
<label for="node-query">Node (levels in the order ${esc(l.qis.join(', '))}):</label>
<input type="text" id="node-query" placeholder="${l.heights.map(() => '0').join(',')}" autocomplete="off">
<button type="submit">Find and pick</button>
<button type="button" id="zoom-in" aria-label="Zoom in">+</button><button type="button" id="zoom-out" aria-label="Zoom out">−</button><button type="button" id="zoom-fit">Fit</button>
<span id="search-msg" class="meaning" aria-live="polite"></span></form>
${
  l.drawn
    ? `<div class="lattice-wrap"><svg id="lattice" tabindex="0" role="application" aria-roledescription="lattice" aria-label="Lattice of ${fmtNum(l.size)} nodes. Arrow keys move between nodes (left and right within a level, up and down between levels), Enter picks the current node, plus and minus zoom." aria-describedby="lattice-current"><title>Generalization lattice</title></svg></div>
<p id="lattice-current" class="meaning" aria-live="polite"></p>`
    : `<p class="note">The lattice has too many nodes to draw; find a node by its levels above.</p>`
}
</section>`;
}
