/**
 * Renders a `ReleaseReport` as one self-contained HTML page for data publishers.
 *
 * Nothing is loaded from the network (no scripts, fonts or images): charts are inline SVG built
 * here, so the page can be archived next to the release and opened offline. The output is a pure
 * function of the report (no clock, no random ids) so two renders of one report are byte-equal.
 */
import type { HistogramBin, ModelResult, ReleaseReport, ReportSection } from './types.ts';

// ---------------------------------------------------------------------------------------------
// Escaping and number formatting
// ---------------------------------------------------------------------------------------------

const HTML_ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/** Escapes text for element content and quoted attribute values alike (the report is untrusted input). */
function esc(value: string | number): string {
  return String(value).replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

const DASH = '—';

/** Rounds to an integer and adds thousands separators; done by hand so output never depends on ICU/locale. */
function fmtInt(n: number): string {
  if (!Number.isFinite(n)) return DASH;
  const r = Math.round(n);
  const digits = Math.abs(r)
    .toString()
    .replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  return (r < 0 ? '-' : '') + digits;
}

/** Integers with thousands separators, fractions with 4 significant digits (rounded to whole from 1,000). */
function fmtNum(n: number): string {
  if (!Number.isFinite(n)) return DASH;
  if (Number.isInteger(n)) return fmtInt(n);
  // From 1,000 up, 4 significant digits would zero out integer digits (98,770); whole numbers read better.
  if (Math.abs(n) >= 999.95) return fmtInt(n);
  return String(Number(n.toPrecision(4)));
}

function fmtPct(share: number): string {
  return Number.isFinite(share) ? `${fmtNum(share * 100)}%` : DASH;
}

/** `a / b`, or NaN (rendered as a dash) when the denominator is not positive. */
function ratio(a: number, b: number): number {
  return b > 0 ? a / b : Number.NaN;
}

function clamp01(x: number): number {
  return Number.isFinite(x) ? Math.min(1, Math.max(0, x)) : 0;
}

/** Short SVG coordinates keep the markup small and stable. */
function px(n: number): string {
  return String(Math.round(n * 10) / 10);
}

// ---------------------------------------------------------------------------------------------
// Generic HTML pieces
// ---------------------------------------------------------------------------------------------

interface Column {
  label: string;
  /** Right-aligned with tabular digits. */
  num?: boolean;
}

/** A row of already-escaped HTML cells, optionally with a CSS class (highlight, total). */
type Row = string[] | { cells: string[]; cls: string };

function table(columns: Column[], rows: Row[], caption?: string): string {
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

/** Two-column label/value table for summary facts; values are already-escaped HTML. */
function factsTable(facts: [string, string][]): string {
  const rows = facts.map(([k, v]) => `<tr><th scope="row">${esc(k)}</th><td>${v}</td></tr>`).join('\n');
  return `<table class="facts"><tbody>\n${rows}\n</tbody></table>`;
}

function mark(ok: boolean): string {
  return ok ? '<span class="ok" title="yes">✓</span>' : '<span class="bad" title="no">✗</span>';
}

function section(id: string, title: string, body: string): string {
  return `<section id="${id}">\n<h2>${esc(title)}</h2>\n${body}\n</section>`;
}

function note(text: string): string {
  return `<p class="note">${esc(text)}</p>`;
}

// ---------------------------------------------------------------------------------------------
// SVG charts
// ---------------------------------------------------------------------------------------------

interface Bar {
  label: string;
  value: number;
  /** Hover text; the label and value are shown when omitted. */
  tooltip?: string;
}

interface BarChartOptions {
  title: string;
  width?: number;
  height?: number;
  color?: string;
}

/** Vertical bar chart: one bar per category, labels on the x axis, values above the bars. */
function barChartSvg(bars: Bar[], opts: BarChartOptions): string {
  const width = opts.width ?? 720;
  const height = opts.height ?? 260;
  const color = opts.color ?? '#2563eb';
  const top = 22;
  const side = 8;
  const band = (width - 2 * side) / Math.max(1, bars.length);
  const maxLabel = 14;
  const longest = Math.min(maxLabel, Math.max(1, ...bars.map((b) => b.label.length)));
  // Tilt labels only when they would overlap, so short labels stay horizontal and easy to read.
  const tilt = longest * 7 > band - 4;
  const bottom = tilt ? 14 + longest * 5 : 24;
  const plotH = height - top - bottom;
  const base = top + plotH;
  const max = Math.max(0, ...bars.map((b) => (Number.isFinite(b.value) ? b.value : 0)));
  const barW = Math.max(1, band * 0.7);

  const parts = bars.map((b, i) => {
    const v = Number.isFinite(b.value) ? Math.max(0, b.value) : 0;
    const h = max > 0 ? (v / max) * plotH : 0;
    const cx = side + band * (i + 0.5);
    const label = b.label.length > maxLabel ? `${b.label.slice(0, maxLabel - 1)}…` : b.label;
    const labelText = tilt
      ? `<text x="${px(cx)}" y="${px(base + 14)}" text-anchor="end" transform="rotate(-40 ${px(cx)} ${px(base + 14)})">${esc(label)}</text>`
      : `<text x="${px(cx)}" y="${px(base + 16)}" text-anchor="middle">${esc(label)}</text>`;
    return (
      `<g><title>${esc(b.tooltip ?? `${b.label}: ${fmtNum(b.value)}`)}</title>` +
      `<rect x="${px(cx - barW / 2)}" y="${px(base - h)}" width="${px(barW)}" height="${px(h)}" fill="${color}" rx="2"/>` +
      `<text x="${px(cx)}" y="${px(base - h - 5)}" text-anchor="middle" class="val">${fmtNum(b.value)}</text>` +
      labelText +
      '</g>'
    );
  });

  return (
    `<svg class="chart" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(opts.title)}">` +
    `<title>${esc(opts.title)}</title>\n` +
    `<line x1="${side}" y1="${px(base)}" x2="${width - side}" y2="${px(base)}" stroke="#9ca3af"/>\n` +
    parts.join('\n') +
    '\n</svg>'
  );
}

interface Segment {
  label: string;
  value: number;
  color: string;
}

interface StackedBarOptions {
  title: string;
  /** The value that fills the whole track (1 for a share, the sum for a breakdown). */
  total: number;
  width: number;
  height: number;
}

/** Horizontal bar of segments laid end to end over a grey track; a single segment makes a gauge. */
function stackedBarSvg(segments: Segment[], opts: StackedBarOptions): string {
  const { width, height } = opts;
  let x = 0;
  const rects = segments.map((s) => {
    // Clamp so bad data (negative values, shares above 1) can never draw outside the track.
    const w = Math.min(clamp01(ratio(s.value, opts.total)) * width, width - x);
    // A lone segment is already named by the SVG's own title; only breakdowns need per-segment hover text.
    const hover = segments.length > 1 ? `<title>${esc(s.label)}</title>` : '';
    const rect = `<rect x="${px(x)}" y="0" width="${px(w)}" height="${height}" fill="${s.color}">${hover}</rect>`;
    x += w;
    return rect;
  });
  return (
    `<svg class="bar" viewBox="0 0 ${width} ${height}" width="${width}" height="${height}" role="img" aria-label="${esc(opts.title)}">` +
    `<title>${esc(opts.title)}</title>` +
    `<rect x="0" y="0" width="${width}" height="${height}" fill="#e5e7eb"/>` +
    rects.join('') +
    '</svg>'
  );
}

/** Gauge for a value in [0, 1]. */
function shareBarSvg(title: string, share: number, width: number, height: number, color = '#2563eb'): string {
  return stackedBarSvg([{ label: title, value: share, color }], { title, total: 1, width, height });
}

// Okabe–Ito palette: distinguishable for colour-blind readers, and fixed so output is stable.
const PALETTE = ['#0072B2', '#E69F00', '#009E73', '#CC79A7', '#56B4E9', '#D55E00', '#F0E442', '#999999'];

// ---------------------------------------------------------------------------------------------
// Sections
// ---------------------------------------------------------------------------------------------

function isVerified(report: ReleaseReport): boolean {
  return report.verification.verified && report.privacy.satisfied;
}

function renderVerdict(report: ReleaseReport): string {
  if (isVerified(report)) {
    return '<div class="verdict pass" role="status"><span class="icon">✓</span> Verified: every privacy guarantee holds</div>';
  }
  const reasons: string[] = [];
  if (!report.verification.verified) {
    const failed = report.verification.checks.filter((c) => !c.passed).length;
    const total = report.verification.checks.length;
    reasons.push(
      failed > 0
        ? `${fmtInt(failed)} of ${fmtInt(total)} verification checks failed`
        : 'verification did not pass',
    );
  }
  if (!report.privacy.satisfied) {
    const failing = report.privacy.models.filter((m) => !m.satisfied).map((m) => m.model);
    reasons.push(
      failing.length > 0
        ? `privacy model not satisfied: ${failing.join(', ')}`
        : 'the privacy requirements are not satisfied',
    );
  }
  return (
    '<div class="verdict fail" role="alert"><span class="icon">✗</span> NOT verified' +
    `<div class="why">${esc(reasons.join('; '))}. Do not publish this release.</div></div>`
  );
}

function renderHeader(report: ReleaseReport): string {
  const facts: [string, string][] = [
    ['Input file', `<code>${esc(report.input.file)}</code>`],
    ['Method', esc(report.spec.method)],
    ['Run id', `<code>${esc(report.ppdp.runId)}</code>`],
    ['Spec file', `<code>${esc(report.spec.file)}</code>`],
    ['ppdp version', esc(report.ppdp.version)],
  ];
  return `<header>\n<h1>ppdp release report</h1>\n${factsTable(facts)}\n${renderVerdict(report)}\n</header>`;
}

/** Splits a model's params into the ones it reports an achieved value for and the rest (e.g. `attribute`). */
function modelRow(m: ModelResult): Row {
  const value = (v: number | string) => (typeof v === 'number' ? fmtNum(v) : esc(v));
  const achievedKeys = Object.keys(m.achieved);
  const other = Object.entries(m.params).filter(([k]) => !(k in m.achieved));
  const required = achievedKeys.map((k) => `${esc(k)} = ${k in m.params ? value(m.params[k]) : DASH}`);
  const achieved = achievedKeys.map((k) => `${esc(k)} = ${fmtNum(m.achieved[k])}`);
  return {
    cells: [
      `<strong>${esc(m.model)}</strong>`,
      other.length > 0 ? other.map(([k, v]) => `${esc(k)} = ${value(v)}`).join('<br>') : DASH,
      required.join('<br>') || DASH,
      achieved.join('<br>') || DASH,
      mark(m.satisfied),
      m.monotonic ? 'yes' : 'no',
    ],
    cls: m.satisfied ? '' : 'failed',
  };
}

/** A fact value from the report: numbers formatted, strings escaped. */
function factValue(v: number | string): string {
  return typeof v === 'number' ? fmtNum(v) : esc(v);
}

/**
 * Flattens a free-form record into label/value facts: numbers, strings and booleans at the top level and
 * one level down (labelled `outer.inner`); arrays and deeper nesting are left to `report.json`.
 */
function flattenFacts(record: Record<string, unknown>): [string, string][] {
  const leaf = (v: unknown): string | undefined => {
    if (typeof v === 'number' || typeof v === 'string') return factValue(v);
    if (typeof v === 'boolean') return v ? 'yes' : 'no';
    return undefined;
  };
  const facts: [string, string][] = [];
  for (const [key, value] of Object.entries(record)) {
    const direct = leaf(value);
    if (direct !== undefined) {
      facts.push([key, direct]);
    } else if (value !== null && typeof value === 'object' && !Array.isArray(value)) {
      for (const [sub, inner] of Object.entries(value)) {
        const nested = leaf(inner);
        if (nested !== undefined) facts.push([`${key}.${sub}`, nested]);
      }
    }
  }
  return facts;
}

function renderGuarantees(report: ReleaseReport): string {
  const p = report.privacy;
  const models =
    p.models.length > 0
      ? table(
          [
            { label: 'Model' },
            { label: 'Parameters' },
            { label: 'Required' },
            { label: 'Achieved' },
            { label: 'Satisfied' },
            { label: 'Monotonic' },
          ],
          p.models.map(modelRow),
        )
      : note('No privacy models were specified.');
  const facts: [string, string][] = [];
  if (typeof p.k === 'number') facts.push(['k achieved (smallest class)', `<strong>${fmtInt(p.k)}</strong>`]);
  if (typeof p.classes === 'number') facts.push(['Equivalence classes', fmtInt(p.classes)]);
  const risk = p.prosecutorRisk;
  if (risk) {
    // "1 in N" is how publishers usually talk about re-identification odds.
    const oneIn = (r: number) => (r > 0 && Number.isFinite(r) ? ` (1 in ${fmtNum(1 / r)})` : '');
    facts.push(
      ['Prosecutor risk, max', fmtNum(risk.max) + oneIn(risk.max)],
      ['Prosecutor risk, mean', fmtNum(risk.mean) + oneIn(risk.mean)],
      [`Rows with risk above ${fmtNum(risk.threshold)}`, fmtPct(risk.shareAbove)],
    );
  }
  const parts = [models];
  if (facts.length > 0) parts.push(factsTable(facts));
  const disclosure = p.disclosure ? flattenFacts(p.disclosure) : [];
  if (disclosure.length > 0) parts.push(`<h3>Attribute disclosure</h3>\n${factsTable(disclosure)}`);
  return section('guarantees', 'Guarantees', parts.join('\n'));
}

function suppressionHandling(mode: 'mask' | 'remove'): string {
  return mode === 'remove'
    ? '<code>remove</code> — suppressed rows are left out of the release'
    : '<code>mask</code> — suppressed rows are kept with their quasi-identifiers masked';
}

/** Row counts, plus the suppression limit and handling when the method has them (generalization). */
function rowFacts(report: ReleaseReport): [string, string][] {
  const { rows, spec } = report;
  const limit = typeof spec.maxSuppression === 'number' ? `; limit ${fmtPct(spec.maxSuppression)}` : '';
  const facts: [string, string][] = [
    ['Rows in input', fmtInt(rows.input)],
    ['Rows released', fmtInt(rows.released)],
    [
      'Rows suppressed',
      `${fmtInt(rows.suppressed)} (${fmtPct(ratio(rows.suppressed, rows.input))} of input${limit})`,
    ],
  ];
  if (spec.suppressed !== undefined)
    facts.push(['Suppression handling', suppressionHandling(spec.suppressed)]);
  return facts;
}

type Generalization = NonNullable<ReleaseReport['generalization']>;

/** Every k-minimal node as one row, QIs as columns; the chosen node is highlighted. */
function kMinimalTable(g: Generalization, nodes: Record<string, number>[]): string {
  if (nodes.length === 0) return note('No k-minimal nodes were found.');
  const qis = Object.keys(g.node);
  for (const n of nodes) for (const qi of Object.keys(n)) if (!qis.includes(qi)) qis.push(qi);
  const isChosen = (n: Record<string, number>) => qis.every((qi) => n[qi] === g.node[qi]);
  const rows = nodes.map(
    (n, i): Row => ({
      cells: [
        fmtInt(i + 1) + (isChosen(n) ? ' <span class="badge">chosen</span>' : ''),
        ...qis.map((qi) => (typeof n[qi] === 'number' ? fmtInt(n[qi]) : DASH)),
      ],
      cls: isChosen(n) ? 'chosen' : '',
    }),
  );
  return table(
    [{ label: '#' }, ...qis.map((qi) => ({ label: qi, num: true }))],
    rows,
    `k-minimal nodes (${fmtInt(nodes.length)}): generalization levels per quasi-identifier`,
  );
}

function renderTransformation(report: ReleaseReport, g: Generalization): string {
  const qiRows = Object.entries(g.node).map(([qi, level]): Row => {
    const height = g.heights[qi];
    const share = clamp01(ratio(level, height ?? 0));
    const title = `${qi}: level ${level} of ${height ?? '?'}`;
    return [
      `<code>${esc(qi)}</code>`,
      fmtInt(level),
      height === undefined ? DASH : fmtInt(height),
      shareBarSvg(title, share, 120, 10),
    ];
  });
  const qiTable =
    qiRows.length > 0
      ? table(
          [
            { label: 'Quasi-identifier' },
            { label: 'Level', num: true },
            { label: 'Height', num: true },
            { label: '' },
          ],
          qiRows,
          'Chosen generalization node (0 = original values, height = fully generalized)',
        )
      : note('No quasi-identifiers were generalized.');
  const facts = factsTable([
    ['Search strategy', esc(g.strategy)],
    ['Lattice size', `${fmtInt(g.latticeSize)} nodes`],
    [
      'Nodes checked',
      `${fmtInt(g.nodesChecked)} (${fmtPct(ratio(g.nodesChecked, g.latticeSize))} of the lattice)`,
    ],
    ['Distinct QI tuples', fmtInt(g.distinctTuples)],
    ...rowFacts(report),
  ]);
  const parts = [qiTable, facts];
  if (g.kMinimal) parts.push(kMinimalTable(g, g.kMinimal));
  return section('transformation', 'Transformation', parts.join('\n'));
}

/** Without a generalization block the row counts still deserve a place of their own. */
function renderRows(report: ReleaseReport): string {
  return section('rows', 'Rows', factsTable(rowFacts(report)));
}

function renderHistogram(bins: HistogramBin[]): string {
  if (bins.length === 0) {
    return section('ec-sizes', 'Equivalence class sizes', note('No equivalence classes were retained.'));
  }
  const chart = barChartSvg(
    bins.map((b) => ({
      label: b.label,
      value: b.classes,
      tooltip: `size ${b.label}: ${fmtInt(b.classes)} classes, ${fmtInt(b.rows)} rows`,
    })),
    { title: 'Number of equivalence classes per class size' },
  );
  const totalRows = bins.reduce((s, b) => s + b.rows, 0);
  const totalClasses = bins.reduce((s, b) => s + b.classes, 0);
  const rows: Row[] = bins.map((b) => [
    esc(b.label),
    fmtInt(b.classes),
    fmtInt(b.rows),
    fmtPct(ratio(b.rows, totalRows)),
  ]);
  rows.push({
    cells: ['Total', fmtInt(totalClasses), fmtInt(totalRows), fmtPct(totalRows > 0 ? 1 : Number.NaN)],
    cls: 'total',
  });
  const tbl = table(
    [
      { label: 'Class size' },
      { label: 'Classes', num: true },
      { label: 'Rows', num: true },
      { label: 'Share of rows', num: true },
    ],
    rows,
  );
  return section('ec-sizes', 'Equivalence class sizes', `<figure>${chart}</figure>\n${tbl}`);
}

/** Plain-English names and meanings of the utility measures the release methods report. */
const UTILITY_MEASURES: { key: string; name: string; meaning: string }[] = [
  {
    key: 'ncp',
    name: 'NCP',
    meaning: 'Average normalized certainty penalty per cell: 0 = original data, 1 = everything suppressed.',
  },
  {
    key: 'discernibility',
    name: 'Discernibility',
    meaning: 'Sum of squared equivalence class sizes, plus N for each suppressed row; lower is better.',
  },
  {
    key: 'precision',
    name: 'Precision loss',
    meaning: "Sweeney's precision loss: average generalization level relative to hierarchy height (0 to 1).",
  },
  { key: 'aecs', name: 'AECS', meaning: 'Average equivalence class size relative to k; 1 is the ideal.' },
  {
    key: 'entropy',
    name: 'Entropy loss',
    meaning: 'Non-uniform entropy loss in bits: information removed by generalization.',
  },
  {
    key: 'kl',
    name: 'KL divergence',
    meaning:
      'Kullback–Leibler divergence between the original and the reconstructed distributions: 0 = identical, lower is better.',
  },
  {
    key: 'chi2',
    name: 'χ² distance',
    meaning:
      'χ² distance between the original and the reconstructed distributions: 0 = identical, lower is better.',
  },
  {
    key: 'queryErrorBase',
    name: 'Query error (base)',
    meaning: 'Average relative error of count queries answered from the release (base workload); 0 = exact.',
  },
  {
    key: 'queryErrorCube',
    name: 'Query error (cube)',
    meaning: 'Average relative error of count queries answered from the release (cube workload); 0 = exact.',
  },
];

const GENERIC_MEANING = 'Method-specific utility measure; see the documentation of the release method.';

function findMeasure(name: string) {
  const lower = name.toLowerCase();
  return UTILITY_MEASURES.find((m) => m.key.toLowerCase() === lower);
}

function renderUtility(report: ReleaseReport): string {
  const u = report.utility;
  const chosen = u.metric.toLowerCase();
  const known = findMeasure(u.metric);
  const highlight =
    `<div class="highlight">Optimized metric: <strong>${esc(known?.name ?? u.metric)}</strong>` +
    ` <span class="big">${fmtNum(u.value)}</span></div>`;
  const parts = [highlight];
  const gauges: string[] = [];
  if (typeof u.ncp === 'number') {
    gauges.push(
      `<div><span>NCP (share of 1)</span>${shareBarSvg('NCP as a share of 1', u.ncp, 320, 14)}<span class="num">${fmtNum(u.ncp)}</span></div>`,
    );
  }
  if (typeof u.precision === 'number') {
    gauges.push(
      `<div><span>Precision loss</span>${shareBarSvg('Precision loss as a share of 1', u.precision, 320, 14, '#7c3aed')}<span class="num">${fmtNum(u.precision)}</span></div>`,
    );
  }
  if (gauges.length > 0) parts.push(`<div class="gauges">${gauges.join('')}</div>`);
  const rows = Object.entries(u)
    .filter((entry): entry is [string, number] => {
      const [key, value] = entry;
      return key !== 'metric' && key !== 'value' && typeof value === 'number';
    })
    .map(([key, value]): Row => {
      const m = findMeasure(key);
      const isChosen = key.toLowerCase() === chosen;
      return {
        cells: [
          (m ? esc(m.name) : `<code>${esc(key)}</code>`) +
            (isChosen ? ' <span class="badge">optimized</span>' : ''),
          fmtNum(value),
          esc(m?.meaning ?? GENERIC_MEANING),
        ],
        cls: isChosen ? 'chosen' : '',
      };
    });
  if (rows.length > 0) {
    parts.push(
      table([{ label: 'Measure' }, { label: 'Value', num: true }, { label: 'What it means' }], rows),
    );
  }
  return section('utility', 'Utility', parts.join('\n'));
}

/** A method-specific section: facts, an optional note and an optional bar chart. */
function renderCustomSection(s: ReportSection, index: number): string {
  const parts: string[] = [];
  if (s.facts.length > 0) parts.push(factsTable(s.facts.map(([label, value]) => [label, factValue(value)])));
  if (s.note) parts.push(note(s.note));
  if (s.chart && s.chart.bars.length > 0) {
    const chart = barChartSvg(s.chart.bars, { title: s.chart.title });
    parts.push(`<figure>${chart}<figcaption>${esc(s.chart.title)}</figcaption></figure>`);
  }
  if (parts.length === 0) parts.push(note('Nothing was reported for this section.'));
  return section(`method-${index + 1}`, s.title, parts.join('\n'));
}

/** The machine-readable details, collapsed: for auditors, not for the first read. */
function renderDetails(details: Record<string, unknown>): string {
  const json = JSON.stringify(details, null, 2);
  return section(
    'details',
    'Method details',
    '<details><summary>Machine-readable details (JSON, also in <code>report.json</code>)</summary>' +
      `<pre><code>${esc(json)}</code></pre></details>`,
  );
}

function renderVerification(report: ReleaseReport): string {
  const checks = report.verification.checks;
  if (checks.length === 0)
    return section('verification', 'Verification', note('No verification checks were recorded.'));
  const passed = checks.filter((c) => c.passed).length;
  const summary = `<p>${fmtInt(passed)} of ${fmtInt(checks.length)} checks on the released data passed.</p>`;
  const tbl = table(
    [{ label: 'Check' }, { label: 'Result' }, { label: 'Detail' }],
    checks.map(
      (c): Row => ({ cells: [esc(c.name), mark(c.passed), esc(c.detail)], cls: c.passed ? '' : 'failed' }),
    ),
  );
  return section('verification', 'Verification', `${summary}\n${tbl}`);
}

function renderTimings(timings: Record<string, number>): string {
  const phases = Object.entries(timings);
  if (phases.length === 0) return section('timings', 'Timings', note('No timings were recorded.'));
  const total = phases.reduce((s, [, ms]) => s + (Number.isFinite(ms) ? Math.max(0, ms) : 0), 0);
  const color = (i: number) => PALETTE[i % PALETTE.length];
  const chart = stackedBarSvg(
    phases.map(([phase, ms], i) => ({ label: `${phase}: ${fmtNum(ms)} ms`, value: ms, color: color(i) })),
    { title: 'Wall time per phase', total, width: 720, height: 22 },
  );
  const rows: Row[] = phases.map(([phase, ms], i) => [
    `<span class="swatch" style="background:${color(i)}"></span>${esc(phase)}`,
    fmtNum(ms),
    fmtPct(ratio(ms, total)),
  ]);
  rows.push({ cells: ['Total', fmtNum(total), fmtPct(total > 0 ? 1 : Number.NaN)], cls: 'total' });
  const tbl = table([{ label: 'Phase' }, { label: 'ms', num: true }, { label: 'Share', num: true }], rows);
  return section('timings', 'Timings', `<figure>${chart}</figure>\n${tbl}`);
}

function renderFooter(report: ReleaseReport): string {
  return (
    '<footer>Identifying columns were dropped from the release and its rows were shuffled ' +
    `(seed ${fmtInt(report.spec.seed)}), so row order reveals nothing about the input. ` +
    `Generated by ppdp ${esc(report.ppdp.version)}, run <code>${esc(report.ppdp.runId)}</code>.</footer>`
  );
}

// System fonts only: the page must render offline without fetching anything.
const CSS = `
:root { color-scheme: light; --fg: #111827; --muted: #6b7280; --line: #e5e7eb; --ok: #15803d; --bad: #b91c1c; }
* { box-sizing: border-box; }
body { margin: 0; background: #f3f4f6; color: var(--fg);
  font: 15px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
main { max-width: 960px; margin: 0 auto; padding: 24px; }
header, section, footer { background: #fff; border: 1px solid var(--line); border-radius: 8px; padding: 20px 24px; margin-bottom: 16px; }
h1 { margin: 0 0 12px; font-size: 26px; }
h2 { margin: 0 0 12px; font-size: 19px; border-bottom: 1px solid var(--line); padding-bottom: 6px; }
code { font: 13px ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; background: #f3f4f6; padding: 1px 4px; border-radius: 3px; }
table { border-collapse: collapse; width: 100%; margin: 8px 0 16px; }
caption { text-align: left; color: var(--muted); font-size: 13px; padding-bottom: 4px; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line); vertical-align: top; }
thead th { font-size: 13px; color: var(--muted); font-weight: 600; }
h3 { margin: 16px 0 8px; font-size: 16px; }
table.facts { width: auto; }
table.facts th { font-weight: 500; color: var(--muted); padding-right: 24px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
tr.total td { font-weight: 600; border-top: 2px solid var(--line); }
tr.chosen td { background: #eff6ff; }
tr.failed td { background: #fef2f2; }
.ok { color: var(--ok); font-weight: 700; }
.bad { color: var(--bad); font-weight: 700; }
.verdict { margin-top: 12px; padding: 16px 20px; border-radius: 8px; font-size: 22px; font-weight: 700; color: #fff; }
.verdict.pass { background: var(--ok); }
.verdict.fail { background: var(--bad); }
.verdict .why { font-size: 15px; font-weight: 400; margin-top: 4px; }
.note { color: var(--muted); font-style: italic; }
.highlight { display: inline-block; background: #eff6ff; border: 1px solid #bfdbfe; border-radius: 8px; padding: 10px 16px; margin-bottom: 12px; }
.highlight .big { font-size: 24px; font-weight: 700; margin-left: 8px; font-variant-numeric: tabular-nums; }
.badge { display: inline-block; font-size: 11px; background: #2563eb; color: #fff; border-radius: 999px; padding: 0 8px; margin-left: 4px; }
.gauges div { display: grid; grid-template-columns: 140px 320px auto; gap: 12px; align-items: center; margin: 4px 0; }
.swatch { display: inline-block; width: 10px; height: 10px; border-radius: 2px; margin-right: 8px; }
figure { margin: 0 0 8px; overflow-x: auto; }
figcaption { color: var(--muted); font-size: 13px; }
details summary { cursor: pointer; color: var(--muted); }
pre { overflow-x: auto; background: #f9fafb; border: 1px solid var(--line); border-radius: 6px; padding: 12px; }
pre code { background: none; padding: 0; font-size: 12px; }
svg { display: block; max-width: 100%; height: auto; }
svg.bar { border-radius: 3px; }
svg text { font: 12px system-ui, -apple-system, "Segoe UI", Roboto, Arial, sans-serif; fill: #374151; }
svg text.val { font-weight: 600; fill: var(--fg); }
footer { color: var(--muted); font-size: 13px; }
@media print { body { background: #fff; } header, section, footer { border: none; break-inside: avoid; } }
`;

/** Renders the whole report as one HTML5 document. */
export function renderReportHtml(report: ReleaseReport): string {
  const g = report.generalization;
  const histogram = report.privacy.ecSizeHistogram;
  const details = report.details;
  const sections = [
    renderHeader(report),
    renderGuarantees(report),
    g ? renderTransformation(report, g) : renderRows(report),
    ...(histogram ? [renderHistogram(histogram)] : []),
    ...(report.sections ?? []).map(renderCustomSection),
    renderUtility(report),
    renderVerification(report),
    renderTimings(report.timings),
    ...(details && Object.keys(details).length > 0 ? [renderDetails(details)] : []),
    renderFooter(report),
  ];
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>ppdp release report — ${esc(report.input.file)}</title>\n` +
    `<style>${CSS}</style>\n</head>\n<body>\n<main>\n${sections.join('\n')}\n</main>\n</body>\n</html>\n`
  );
}
