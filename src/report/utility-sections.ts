/** The report's utility parts: the measures with their meanings, loss per attribute, reconstructed marginals. */

import type { MarginalComparison, ReleaseReport } from '../contracts/report.ts';
import { AMBER, chart, PALETTE, rankedValues } from './charts.ts';
import { esc, fmtNum } from './format.ts';
import { knownUtilityLabel, metricKey, utilityLabel } from './labels.ts';
import { type Fact, factsTable, note, type Row, section, table } from './markup.ts';

/** Methods that search for the release minimizing their metric. */
const OPTIMIZING = new Set(['generalization', 'randomization']);

/** Measures reported as a before/after pair (`<key>Before`, `<key>After`) share one row. */
const PAIRS = ['uncertaintyQiQi', 'uncertaintyQiSa'];

export function renderUtility(report: ReleaseReport): string {
  const u = report.utility;
  const chosen = metricKey(u.metric);
  const label = utilityLabel(u.metric);
  const optimized = OPTIMIZING.has(report.spec.method);
  const parts = [
    `<div class="highlight">${optimized ? 'Optimized metric' : 'Headline measure'}: <strong>${esc(label.name)}</strong>` +
      ` <span class="big">${fmtNum(u.value)}</span><div class="meaning">${esc(label.meaning)}</div></div>`,
  ];
  const rows: Row[] = [];
  for (const [key, v] of Object.entries(u)) {
    if (key === 'metric' || key === 'value') continue;
    // A measure left out holds why (`not measured: …`): its row says so, never a number.
    const known = typeof v === 'string' ? knownUtilityLabel(key) : undefined;
    if (known) {
      rows.push({
        cells: [
          esc(known.name),
          'not measured',
          `<span class="meaning">${esc((v as string).replace(/^not measured: /, ''))}</span>`,
        ],
        cls: '',
      });
      continue;
    }
    if (typeof v !== 'number') continue;
    const pair = PAIRS.find((p) => key === `${p}Before` || key === `${p}After`);
    if (pair && key.endsWith('After')) continue;
    const m = utilityLabel(pair ?? key);
    const isChosen = key === chosen;
    const shown = pair ? `${fmtNum(v)} → ${fmtNum(Number(u[`${pair}After`]))}` : fmtNum(v);
    rows.push({
      cells: [
        esc(m.name) +
          (pair ? ' (before → after)' : '') +
          (isChosen ? ' <span class="badge">headline</span>' : ''),
        shown,
        `<span class="meaning">${esc(m.meaning)}</span>`,
      ],
      cls: isChosen ? 'chosen' : '',
    });
  }
  if (rows.length > 0) {
    parts.push(
      table([{ label: 'Measure' }, { label: 'Value', num: true }, { label: 'What it means' }], rows),
    );
  }
  for (const [key, v] of Object.entries(u))
    if (key !== 'metric' && typeof v === 'string' && !knownUtilityLabel(key)) parts.push(note(v));
  return section('utility', 'Utility', parts.join('\n'));
}

interface UncertaintyPair {
  x: string;
  y: string;
  before: number;
  after: number;
}

/** The method's details block (`details.<method>`), when it has one. */
function methodDetails(report: ReleaseReport): Record<string, unknown> | undefined {
  const d = report.details?.[report.spec.method];
  return d !== null && typeof d === 'object' ? (d as Record<string, unknown>) : undefined;
}

/**
 * Information loss per attribute: NCP per quasi-identifier where values are generalized; where
 * quasi-identifiers are released exactly (Anatomy, Slicing), how much each still tells about the
 * sensitive attribute before and after.
 */
export function renderInformationLoss(report: ReleaseReport): string {
  const details = methodDetails(report);
  const ncp =
    report.generalization?.ncpByAttribute ?? (details?.ncpByAttribute as Record<string, number> | undefined);
  if (ncp && Object.keys(ncp).length > 0) {
    const names = Object.keys(ncp);
    if (names.every((n) => ncp[n] === 0)) {
      return section(
        'loss',
        'Information loss per attribute',
        note('Every quasi-identifier is released with its original values: no information is lost (NCP 0).'),
      );
    }
    return section(
      'loss',
      'Information loss per attribute',
      chart({
        title: 'NCP per quasi-identifier: 0 = values kept exactly, 1 = fully generalized or suppressed',
        categories: names,
        series: [{ name: 'NCP', color: PALETTE[0]!, values: names.map((n) => ncp[n]!) }],
        categoryAxis: 'quasi-identifier',
        valueAxis: 'NCP (normalized certainty penalty)',
        horizontal: true,
        max: 1,
      }),
    );
  }
  const sa = report.privacy.sensitive?.[0]?.attribute;
  const pairs = (details?.uncertainty as UncertaintyPair[] | undefined)?.filter((p) => p.x === sa);
  if (!sa || !pairs || pairs.length === 0) return '';
  return section(
    'loss',
    'Information loss per attribute',
    '<p>The quasi-identifiers are released with their exact values (no generalization loss). What the method removes is their association with the sensitive attribute:</p>\n' +
      chart({
        title: `How much each attribute tells about ${sa} (uncertainty coefficient U(${sa} | attribute)), before and after`,
        categories: pairs.map((p) => p.y),
        series: [
          { name: 'original data', color: PALETTE[0]!, values: pairs.map((p) => p.before) },
          {
            name: 'as reconstructed from the release',
            color: PALETTE[2]!,
            values: pairs.map((p) => p.after),
          },
        ],
        categoryAxis: 'attribute',
        valueAxis: `uncertainty coefficient (0 = tells nothing about ${sa}, 1 = determines it)`,
        horizontal: true,
      }),
  );
}

/** Randomization: each attribute's true marginal against what `P⁻¹·λ` reconstructs from the release. */
export function renderMarginals(report: ReleaseReport): string {
  const marginals = methodDetails(report)?.marginals as MarginalComparison[] | undefined;
  if (!marginals || marginals.length === 0) return '';
  const largestGap = (m: MarginalComparison) =>
    Math.max(0, ...m.original.map((o, i) => Math.abs(o - m.reconstructed[i]!)));
  const facts: Fact[] = marginals.map((m) => [
    m.attribute,
    `${fmtNum(Number((largestGap(m) * 100).toPrecision(2)))} percentage points`,
    'Largest difference between a value’s true share and its reconstructed share.',
  ]);
  const charts = marginals.map((m) => {
    const ranked = rankedValues([m.original, m.reconstructed]);
    return chart({
      title: `${m.attribute}: true share of each value and the share reconstructed from the release`,
      categories: ranked.categories,
      series: [
        { name: 'true (input)', color: PALETTE[0]!, values: ranked.series[0]! },
        { name: 'reconstructed from the release', color: AMBER, values: ranked.series[1]! },
      ],
      categoryAxis: `${m.attribute} values, most frequent first`,
      valueAxis: 'share of rows',
      horizontal: true,
      percent: true,
    });
  });
  return section(
    'marginals',
    'Reconstructed distributions',
    '<p>An analyst undoes the randomization with the published matrices (π̂ = P⁻¹·λ). Close bars mean the release keeps each attribute’s distribution. Values are numbered by their share of the input (#1 = most frequent): the report names no data value.</p>\n' +
      factsTable(facts) +
      charts.join('\n'),
  );
}
