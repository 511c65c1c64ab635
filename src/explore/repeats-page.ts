/**
 * The page's and frontier.csv's view of a sampling spec's repeated runs (src/explore/repeats.ts
 * runs them): the aggregates per value, with β and k, and the bands of each measure.
 */
import { ticks } from '../report/charts.ts';
import { esc, fmtNum, px } from '../report/format.ts';
import type { ExplorerData } from './explorer.ts';
import type { FrontierPoint } from './frontier.ts';
import type { Spread } from './repeats.ts';

/** The aggregates' columns of frontier.csv, named without any threshold. */
export const REPEAT_CSV_COLUMNS: [string, (p: FrontierPoint) => string | number | undefined][] = [
  ['runs', (p) => p.repeats?.runs],
  ['runs_with_solution', (p) => p.repeats?.withSolution],
  ['beta', (p) => p.repeats?.beta],
  ['k', (p) => p.repeats?.k],
  ['metric', (p) => p.repeats?.metric],
  ...(
    [
      ['metric_value', 'objective'],
      ['sampled_rows', 'sampledRows'],
      ['suppressed_rows', 'suppressedRows'],
      ['released_rows', 'releasedRows'],
      ['classes', 'classes'],
    ] as const
  ).flatMap(([name, key]) =>
    (['mean', 'min', 'max'] as const).map(
      (s) =>
        [`${name}_${s}`, (p: FrontierPoint) => p.repeats?.[key][s]] as [
          string,
          (p: FrontierPoint) => number | undefined,
        ],
    ),
  ),
];

const W = 600;
const H = 300;
const M = { left: 72, right: 16, top: 16, bottom: 52 };
const COLOR = '#0072B2';

/** What the measures are, for the charts and the table. */
const LABELS = {
  sampledRows: 'rows sampled (rows)',
  suppressedRows: 'sampled rows suppressed (rows)',
  releasedRows: 'rows released (rows)',
  classes: 'classes released',
} as const;

/**
 * The page's section for a sampling spec: what ε trades, β and k per value, and per measure
 * its mean with the band from the smallest to the largest run.
 */
export function repeatsSection(data: ExplorerData): string {
  const f = data.frontier;
  const name = f.parameter;
  const points = f.points.filter((p) => p.repeats);
  const runs = points[0]?.repeats?.runs ?? 0;
  const metric = points[0]?.repeats?.metric ?? 'the metric';
  const infeasible = f.points.length - points.length;
  const byEpsilon = name === 'epsilon';
  const first = points[0]?.repeats;
  const last = points.at(-1)?.repeats;
  const kTrend =
    first && last && points.length > 1 && first.k !== last.k
      ? ` With this δ, k ${last.k > first.k ? 'grows' : 'shrinks'} as ε grows: from ${fmtNum(first.k)} at ${name} = ${points[0]!.value} to ${fmtNum(last.k)} at ${name} = ${points.at(-1)!.value}${last.k > first.k ? ', so a larger ε samples more rows but needs larger classes' : ''}.`
      : '';
  const explain = byEpsilon
    ? `<p class="meaning">ε is the privacy promise: adding or removing any one row changes the probability of any release by at most a factor e<sup>ε</sup>, except with probability δ. <strong>A smaller ε is a stronger promise.</strong> It keeps each input row with a smaller probability β, so fewer rows are sampled; every class with fewer than k sampled rows is then suppressed, and k comes from ε and δ too.${kTrend} How many sampled rows end up suppressed, and how much information the release loses, therefore depend on the data and the generalization and need not improve as ε grows: the charts measure them. Choose the smallest ε whose utility you can accept; a larger ε is a weaker promise. β and k come from ε and δ alone (with a private search, from the part of ε left for the sampling), not from the data, as listed below.</p>`
    : `<p class="meaning">This spec's release keeps each input row with probability β and suppresses every class with fewer than k sampled rows; β and k come from ε and δ alone (not from the data), as listed below.</p>`;
  const charts = [
    bandChart(data, `${metric} (the spec's metric)`, (p) => p.repeats!.objective),
    bandChart(data, LABELS.sampledRows, (p) => p.repeats!.sampledRows),
    bandChart(data, LABELS.suppressedRows, (p) => p.repeats!.suppressedRows),
  ];
  const cell = (s: Spread) => `${fmtNum(s.mean)} <small>(${fmtNum(s.min)}–${fmtNum(s.max)})</small>`;
  const rows = f.points.map((p) => {
    const r = p.repeats;
    const values = Object.entries(p.values)
      .map(([n, v]) => `${esc(n)} = ${v}`)
      .join(', ');
    if (!r) return `<tr><td>${values}</td><td colspan="7">no run released anything</td></tr>`;
    return `<tr><td>${values}</td><td class="num">${fmtNum(r.beta)}</td><td class="num">${fmtNum(r.k)}</td><td class="num">${fmtNum(r.withSolution)} of ${fmtNum(r.runs)}</td><td class="num">${cell(r.objective)}</td><td class="num">${cell(r.sampledRows)}</td><td class="num">${cell(r.suppressedRows)}</td><td class="num">${cell(r.releasedRows)}</td></tr>`;
  });
  const head = [
    'Values',
    'β (sampling probability)',
    'k (smallest class)',
    'Runs',
    `${metric} (the spec's metric)`,
    LABELS.sampledRows,
    LABELS.suppressedRows,
    LABELS.releasedRows,
  ];
  return `<section id="frontier" aria-labelledby="frontier-h"><h2 id="frontier-h">Choosing ${esc(name === 'epsilon' ? 'ε' : name)}: ${esc(name)} against utility</h2>
${explain}
<p class="meaning"><strong>These runs are for choosing ${esc(byEpsilon ? 'ε' : name)}; none of them is a release.</strong> The release samples the input from a secret random stream, so two releases of the same spec differ: each value was released ${fmtNum(runs)} times in memory (nothing was kept or published) and the page shows only the mean (the line) and the range from the smallest to the largest run (the band) of each measure — no rows, no single run. The counts come from the input itself and, like the counts in a release's report, are the publisher's, not part of the differentially private output.${infeasible > 0 ? ` ${infeasible} value${infeasible === 1 ? '' : 's'} released nothing in any run (not drawn).` : ''}</p>
<div class="cols">${charts.join('')}</div>
<h3>Per value: β and k, and the runs' mean (smallest–largest)</h3>
<div class="scroll"><table><caption>β and k from the derivation; the other columns over the runs that released anything.</caption>
<thead><tr>${head.map((h, i) => `<th scope="col"${i >= 1 ? ' class="num"' : ''}>${esc(h)}</th>`).join('')}</tr></thead>
<tbody>${rows.join('\n')}</tbody></table></div>
</section>`;
}

/** One measure's mean (a line) and range (a band) against the first parameter. */
function bandChart(data: ExplorerData, label: string, get: (p: FrontierPoint) => Spread): string {
  const first = data.parameters[0]!;
  const pts = data.frontier.points.filter((p) => p.repeats).map((p) => ({ x: p.value, s: get(p) }));
  const xs = first.values;
  const lo = Math.min(...xs);
  const hi = Math.max(...xs);
  const x = (v: number) => M.left + (hi === lo ? 0.5 : (v - lo) / (hi - lo)) * (W - M.left - M.right);
  const axis = ticks(Math.max(0, ...pts.map((p) => p.s.max)));
  const top = axis.at(-1)!;
  const base = H - M.bottom;
  const y = (v: number) => base - (Math.max(0, v) / top) * (base - M.top);
  const title = `${label} against ${first.name}: mean and range over the runs`;
  const parts = [
    `<svg class="chart" viewBox="0 0 ${W} ${H}" width="${W}" height="${H}" role="img" aria-label="${esc(title)}"><title>${esc(title)}</title>`,
  ];
  for (const t of axis) {
    parts.push(
      `<line class="grid" x1="${M.left}" x2="${W - M.right}" y1="${px(y(t))}" y2="${px(y(t))}"/>` +
        `<text x="${M.left - 8}" y="${px(y(t) + 4)}" text-anchor="end">${fmtNum(t)}</text>`,
    );
  }
  for (const v of xs) {
    parts.push(
      `<line class="tick" x1="${px(x(v))}" x2="${px(x(v))}" y1="${base}" y2="${base + 5}"/>` +
        `<text x="${px(x(v))}" y="${base + 18}" text-anchor="middle">${fmtNum(v)}</text>`,
    );
  }
  if (pts.length > 1) {
    const upper = pts.map((p) => `${px(x(p.x))},${px(y(p.s.max))}`);
    const lower = pts.map((p) => `${px(x(p.x))},${px(y(p.s.min))}`).reverse();
    parts.push(
      `<polygon class="band" fill="${COLOR}" fill-opacity="0.18" stroke="none" points="${[...upper, ...lower].join(' ')}"/>`,
      `<polyline fill="none" stroke="${COLOR}" stroke-width="2" points="${pts.map((p) => `${px(x(p.x))},${px(y(p.s.mean))}`).join(' ')}"/>`,
    );
  }
  for (const p of pts) {
    const text = `${first.name} = ${p.x}: mean ${fmtNum(p.s.mean)}, smallest ${fmtNum(p.s.min)}, largest ${fmtNum(p.s.max)}`;
    parts.push(
      `<line stroke="${COLOR}" x1="${px(x(p.x))}" x2="${px(x(p.x))}" y1="${px(y(p.s.min))}" y2="${px(y(p.s.max))}"/>` +
        `<circle cx="${px(x(p.x))}" cy="${px(y(p.s.mean))}" r="4" fill="${COLOR}"><title>${esc(text)}</title></circle>`,
    );
  }
  parts.push(
    `<line class="axis" x1="${M.left}" y1="${M.top}" x2="${M.left}" y2="${base}"/>` +
      `<line class="axis" x1="${M.left}" y1="${base}" x2="${W - M.right}" y2="${base}"/>` +
      `<text class="axis-label" x="${px((M.left + W - M.right) / 2)}" y="${H - 10}" text-anchor="middle">${esc(first.name === 'epsilon' ? 'ε (privacy budget)' : first.name)}</text>` +
      `<text class="axis-label" x="14" y="${px((M.top + base) / 2)}" text-anchor="middle" transform="rotate(-90 14 ${px((M.top + base) / 2)})">${esc(label)}</text>`,
    '</svg>',
  );
  return `<figure>${parts.join('\n')}<figcaption>${esc(title)}</figcaption></figure>`;
}
