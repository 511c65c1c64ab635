/**
 * Renders a `ReleaseReport` as one self-contained HTML page for data publishers.
 *
 * Nothing is loaded from the network (no scripts, fonts or images): charts are inline SVG
 * (charts.ts), so the page can be archived next to the release and opened offline. The output is
 * a pure function of the report (no clock, no random ids) so two renders of one report are
 * byte-equal. The privacy parts are in privacy-sections.ts, the utility parts in utility-sections.ts.
 */

import type { HistogramBin, ReleaseReport, ReportSection } from '../contracts/report.ts';
import { chart, PALETTE } from './charts.ts';
import { capitalize, DASH, esc, fmtInt, fmtNum, fmtNumbersIn, fmtPct, ratio } from './format.ts';
import { type Fact, factsTable, mark, note, type Row, section, table } from './markup.ts';
import {
  renderAttributeDisclosure,
  renderGuarantees,
  renderRisk,
  renderVerdict,
} from './privacy-sections.ts';
import { renderSearchProgress } from './search-progress.ts';
import { CSS, contentSecurityPolicy } from './style.ts';
import { renderInformationLoss, renderMarginals, renderUtility } from './utility-sections.ts';

const METHOD_NAMES: Record<string, string> = {
  generalization: 'Full-domain generalization',
  mondrian: 'Mondrian (multidimensional partitioning)',
  anatomy: 'Anatomy (quasi-identifiers and sensitive values in separate tables)',
  slicing: 'Slicing (attribute columns permuted within buckets)',
  randomization: 'Randomized response',
};

function renderHeader(report: ReleaseReport): string {
  const facts: Fact[] = [
    ['Input file', `<code>${esc(report.input.file)}</code>`],
    ['Method', esc(METHOD_NAMES[report.spec.method] ?? report.spec.method)],
    ['Spec file', `<code>${esc(report.spec.file)}</code>`],
    ...csvFact(report),
    ['Run id', `<code>${esc(report.ppdp.runId)}</code>`],
    ['ppdp version', esc(report.ppdp.version)],
  ];
  return `<header>\n<h1>ppdp release report</h1>\n${factsTable(facts)}\n${renderVerdict(report)}\n</header>`;
}

/** Whether the CSV cells a spreadsheet would run as formulas were escaped (reports before the option have no fact). */
function csvFact(report: ReleaseReport): Fact[] {
  const on = report.spec.escapeFormulas;
  if (on === undefined) return [];
  return [
    [
      'CSV formula escaping',
      on
        ? "on — CSV cells starting with = + - @, tab, CR or ' carry a leading '"
        : 'off — CSV cells are written as they are',
      "Spreadsheets run a cell starting with = + - or @ as a formula; the spec's format.escapeFormulas prefixes ' to such cells in the CSV files (the Arrow files hold the values unchanged).",
    ],
  ];
}

function suppressionHandling(mode: 'mask' | 'remove'): string {
  return mode === 'remove'
    ? '<code>remove</code> — suppressed rows are left out of the release'
    : '<code>mask</code> — suppressed rows are kept with their quasi-identifiers masked';
}

/** Row counts, plus the suppression limit and handling when the method has them (generalization). */
function rowFacts(report: ReleaseReport): Fact[] {
  const { rows, spec } = report;
  const limit = typeof spec.maxSuppression === 'number' ? `; limit ${fmtPct(spec.maxSuppression)}` : '';
  const facts: Fact[] = [
    ['Rows in input', fmtInt(rows.input)],
    ['Rows released', fmtInt(rows.released)],
    [
      'Rows suppressed',
      `${fmtInt(rows.suppressed)} (${fmtPct(ratio(rows.suppressed, rows.input))} of input${limit})`,
      'Rows whose quasi-identifiers are withheld because their class could not satisfy the models.',
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
    const ncp = g.ncpByAttribute?.[qi];
    return [
      `<code>${esc(qi)}</code>`,
      fmtInt(level),
      height === undefined ? DASH : fmtInt(height),
      ncp === undefined ? DASH : fmtNum(ncp),
    ];
  });
  const qiTable =
    qiRows.length > 0
      ? table(
          [
            { label: 'Quasi-identifier' },
            { label: 'Level', num: true },
            { label: 'Height', num: true },
            { label: 'NCP', num: true },
          ],
          qiRows,
          'Chosen generalization: level 0 = original values, level = height = fully generalized',
        )
      : note('No quasi-identifiers were generalized.');
  const facts = factsTable([
    ['Search strategy', esc(g.strategy)],
    ['Lattice size', `${fmtInt(g.latticeSize)} nodes`, 'Every combination of generalization levels.'],
    [
      'Nodes checked',
      `${fmtInt(g.nodesChecked)} (${fmtPct(ratio(g.nodesChecked, g.latticeSize))} of the lattice)`,
      'The rest were settled by pruning, with the optimum guaranteed.',
    ],
    [
      'Distinct QI combinations',
      fmtInt(g.distinctTuples),
      'Distinct combinations of the quasi-identifiers’ values in the input (the finest classes possible).',
    ],
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

function renderHistogram(report: ReleaseReport, bins: HistogramBin[]): string {
  const buckets = report.spec.method === 'anatomy' || report.spec.method === 'slicing';
  const title = buckets ? 'Bucket sizes' : 'Equivalence class sizes';
  const unit = buckets ? 'buckets' : 'classes';
  if (bins.length === 0) {
    return section(
      'ec-sizes',
      title,
      note(`No ${buckets ? 'buckets' : 'equivalence classes'} were retained.`),
    );
  }
  // With an entity column the classes are sized in persons (a person counted in each class
  // they have rows in), their rows beside.
  const persons = bins[0]!.persons !== undefined;
  const sizeUnit = persons ? 'persons' : 'rows';
  const svg = chart({
    title: `Number of ${unit} per size${persons ? ' in persons' : ''}`,
    categories: bins.map((b) => b.label),
    series: [{ name: unit, color: PALETTE[0]!, values: bins.map((b) => b.classes) }],
    categoryAxis: `${buckets ? 'bucket' : 'class'} size (${sizeUnit})`,
    valueAxis: `number of ${unit}`,
  });
  const counted = (b: HistogramBin) => (persons ? b.persons! : b.rows);
  const total = bins.reduce((s, b) => s + counted(b), 0);
  const totalRows = bins.reduce((s, b) => s + b.rows, 0);
  const totalClasses = bins.reduce((s, b) => s + b.classes, 0);
  const rows: Row[] = bins.map((b) => [
    esc(b.label),
    fmtInt(b.classes),
    fmtInt(counted(b)),
    fmtPct(ratio(counted(b), total)),
    ...(persons ? [fmtInt(b.rows)] : []),
  ]);
  rows.push({
    cells: [
      'Total',
      fmtInt(totalClasses),
      fmtInt(total),
      fmtPct(total > 0 ? 1 : Number.NaN),
      ...(persons ? [fmtInt(totalRows)] : []),
    ],
    cls: 'total',
  });
  const tbl = table(
    [
      { label: `${capitalize(buckets ? 'bucket' : 'class')} size${persons ? ' (persons)' : ''}` },
      { label: capitalize(unit), num: true },
      { label: capitalize(sizeUnit), num: true },
      { label: `Share of ${sizeUnit}`, num: true },
      ...(persons ? [{ label: 'Rows', num: true }] : []),
    ],
    rows,
  );
  return section('ec-sizes', title, `${svg}\n${tbl}`);
}

/** A method-specific section: facts, an optional note and an optional bar chart. */
function renderCustomSection(s: ReportSection, index: number): string {
  const parts: string[] = [];
  if (s.facts.length > 0) {
    parts.push(
      factsTable(
        s.facts.map(
          ([label, value]): Fact => [
            capitalize(label),
            typeof value === 'number' ? fmtNum(value) : esc(value),
          ],
        ),
      ),
    );
  }
  if (s.note) parts.push(note(s.note));
  if (s.chart && s.chart.bars.length > 0) {
    parts.push(
      chart({
        title: s.chart.title,
        categories: s.chart.bars.map((b) => b.label),
        series: [
          {
            name: s.chart.y ?? s.chart.title,
            color: PALETTE[0]!,
            values: s.chart.bars.map((b) => b.value ?? Number.NaN),
          },
        ],
        categoryAxis: s.chart.x ?? '',
        valueAxis: s.chart.y ?? s.chart.title,
      }),
    );
  }
  if (parts.length === 0) parts.push(note('Nothing was reported for this section.'));
  return section(`method-${index + 1}`, s.title, parts.join('\n'));
}

function renderVerification(report: ReleaseReport): string {
  const checks = report.verification.checks;
  if (checks.length === 0)
    return section('verification', 'Verification', note('No verification checks were recorded.'));
  const passed = checks.filter((c) => c.passed).length;
  const summary =
    `<p>${fmtInt(passed)} of ${fmtInt(checks.length)} checks passed. Each re-reads the staged files with code ` +
    'independent of the code that built them. Numbers are rounded to 4 significant digits here; ' +
    '<code>report.json</code> holds them exactly, and a failed check shows them exactly.</p>';
  const tbl = table(
    [{ label: 'Check' }, { label: 'Result' }, { label: 'Detail' }],
    checks.map(
      (c): Row => ({
        cells: [esc(c.name), mark(c.passed), esc(c.passed ? fmtNumbersIn(c.detail) : c.detail)],
        cls: c.passed ? '' : 'failed',
      }),
    ),
  );
  return section('verification', 'Verification', `${summary}\n${tbl}`);
}

/**
 * Wall time per phase. The phases nest (a pipeline state's time includes the method's steps run
 * inside it) and sharded states are summed over shards, so they are charted side by side and
 * the total is the measured end-to-end time, never their sum.
 */
function renderTimings(timings: Record<string, number>): string {
  const phases = Object.entries(timings).filter(([phase]) => phase !== 'total' && !phase.endsWith('Max'));
  if (phases.length === 0 && timings.total === undefined) {
    return section('timings', 'Timings', note('No timings were recorded.'));
  }
  const facts: Fact[] = [];
  if (timings.total !== undefined) {
    facts.push([
      'Total wall time',
      `<strong>${fmtNum(timings.total)} ms</strong>`,
      'From reading the spec to writing this report.',
    ]);
  }
  const parts = [factsTable(facts)];
  if (phases.length > 0) {
    parts.push(
      chart({
        title: 'Wall time per phase (phases nest: a step’s time includes the steps run inside it)',
        categories: phases.map(([phase]) => phase),
        series: [{ name: 'ms', color: PALETTE[0]!, values: phases.map(([, ms]) => ms) }],
        categoryAxis: 'phase',
        valueAxis: 'wall time (ms)',
        horizontal: true,
      }),
    );
  }
  return section('timings', 'Timings', parts.join('\n'));
}

function renderFooter(report: ReleaseReport): string {
  return (
    '<footer>Identifying columns were dropped from the release and its rows were shuffled with a ' +
    'random stream keyed by the spec’s seed and the input, so row order reveals nothing about the input. ' +
    `Every figure on this page is also in <code>report.json</code>. Generated by ppdp ${esc(report.ppdp.version)}, ` +
    `run <code>${esc(report.ppdp.runId)}</code>.</footer>`
  );
}

/** Renders the whole report as one HTML5 document. */
export function renderReportHtml(report: ReleaseReport): string {
  const g = report.generalization;
  const histogram = report.privacy.ecSizeHistogram;
  const sections = [
    renderHeader(report),
    renderGuarantees(report),
    renderRisk(report),
    renderAttributeDisclosure(report),
    g ? renderTransformation(report, g) : renderRows(report),
    ...(histogram ? [renderHistogram(report, histogram)] : []),
    ...(report.sections ?? []).map(renderCustomSection),
    renderSearchProgress(report),
    renderUtility(report),
    renderInformationLoss(report),
    renderMarginals(report),
    renderVerification(report),
    renderTimings(report.timings),
    renderFooter(report),
  ].filter((s) => s !== '');
  return (
    '<!doctype html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n' +
    // No script, and only this stylesheet: see contentSecurityPolicy.
    `<meta http-equiv="Content-Security-Policy" content="${contentSecurityPolicy([CSS])}">\n` +
    '<meta name="viewport" content="width=device-width, initial-scale=1">\n' +
    `<title>ppdp release report — ${esc(report.input.file)}</title>\n` +
    `<style>${CSS}</style>\n</head>\n<body>\n<main>\n${sections.join('\n')}\n</main>\n</body>\n</html>\n`
  );
}
