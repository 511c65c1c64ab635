/** The report's privacy parts: verdict and limits, models, re-identification risk, attribute disclosure. */

import type {
  ModelResult,
  PopulationUniqueness,
  ReleaseReport,
  RiskDistribution,
  SensitiveDistribution,
} from '../contracts/report.ts';
import { attributeT } from '../metrics/disclosure.ts';
import { describeModel } from '../models/describe.ts';
import { counted } from '../util/format.ts';
import { AMBER, chart, PALETTE, rankedValues } from './charts.ts';
import { DASH, esc, fmtInt, fmtNum, fmtPct, humanize, oneIn } from './format.ts';
import { ACCURACY_LABELS, achievedLabel, DISCLOSURE_BASELINES, DISCLOSURE_LABELS } from './labels.ts';
import { methodLimits } from './limits.ts';
import { type Fact, factsTable, mark, note, type Row, section, table } from './markup.ts';

export function isVerified(report: ReleaseReport): boolean {
  return report.verification.verified && report.privacy.satisfied;
}

/**
 * Green when verified with nothing to caution; amber when verified but the method leaves
 * identity disclosure open or the release audit (audit.ts) names a cause; red when not verified.
 */
export function renderVerdict(report: ReleaseReport): string {
  const limits = methodLimits(report);
  const unchanged = report.audit?.unchanged;
  const box = (doesNot: string[]) =>
    `<div class="limits${limits.identityOpen ? ' open' : ''}"><p><strong>Protects against:</strong> ${esc(limits.protects)}</p>` +
    (unchanged
      ? `<p><strong>Released unchanged:</strong> ${
          unchanged.length > 0 ? unchanged.map((c) => `<code>${esc(c)}</code>`).join(', ') : 'no column'
        }</p>`
      : '') +
    (doesNot.length > 0
      ? `<p><strong>Does not protect against:</strong></p><ul>${doesNot.map((d) => `<li>${esc(d)}</li>`).join('')}</ul>`
      : '') +
    '</div>';
  if (isVerified(report)) {
    // The audit's causes (the method's own limits have their heading and box).
    const causes = (report.audit?.cautions ?? []).map((c) => c.message);
    const why = (text: string) =>
      `<div class="why">${text}${
        causes.length > 0 ? `<ul>${causes.map((c) => `<li>${esc(c)}</li>`).join('')}</ul>` : ''
      }</div>`;
    const verdict = limits.identityOpen
      ? '<div class="verdict warn" role="status"><span class="icon">!</span> Verified, but identity disclosure is not prevented' +
        `${why('The stated guarantees hold; read what this method does not protect against before publishing.')}</div>`
      : causes.length > 0
        ? '<div class="verdict warn" role="status"><span class="icon">!</span> Verified, with cautions' +
          `${why('The stated guarantees hold, but the release audit found:')}</div>`
        : '<div class="verdict pass" role="status"><span class="icon">✓</span> Verified: every privacy guarantee holds</div>';
    return verdict + box(limits.doesNot);
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
    `<div class="why">${esc(reasons.join('; '))}. Do not publish this release.</div></div>` +
    box(limits.doesNot)
  );
}

function modelRow(m: ModelResult): Row {
  const attribute = typeof m.params.attribute === 'string' ? esc(m.params.attribute) : DASH;
  // The model's own description (src/models), from the parameters report.json records.
  const described = describeModel(m.model, m.params, fmtNum, (k, v) => `${humanize(k)} = ${v}`);
  const required = described.requirements.map(esc);
  const achieved = Object.entries(m.achieved).map(
    ([k, v]) =>
      `${esc(achievedLabel(k))}${
        k === 't' && typeof m.params.distance === 'string' ? ` (${esc(m.params.distance)} distance)` : ''
      }: <strong>${k === 'gamma' && v < 0 ? '∞' : fmtNum(v)}</strong>`,
  );
  return {
    cells: [
      `<strong>${esc(described.name)}</strong>`,
      attribute,
      required.join('<br>') || DASH,
      achieved.join('<br>') || DASH,
      mark(m.satisfied),
    ],
    cls: m.satisfied ? '' : 'failed',
  };
}

export function renderGuarantees(report: ReleaseReport): string {
  const p = report.privacy;
  const models =
    p.models.length > 0
      ? table(
          [
            { label: 'Privacy model' },
            { label: 'Sensitive attribute' },
            { label: 'Required' },
            { label: 'Achieved on the release' },
            { label: 'Holds' },
          ],
          p.models.map(modelRow),
        )
      : note('No privacy models were specified.');
  const facts: Fact[] = [];
  const classWord =
    report.spec.method === 'anatomy' || report.spec.method === 'slicing' ? 'Buckets' : 'Equivalence classes';
  if (typeof p.k === 'number' && report.persons) {
    // With an entity column, k counts persons (docs/definitions.md, "Several rows per person").
    facts.push([
      'k achieved (fewest persons in a class)',
      `<strong>${fmtInt(p.k)}</strong>`,
      'Every released row looks like the rows of at least this many persons on the quasi-identifiers, however many rows each person has.',
    ]);
    facts.push([
      'Persons',
      `${fmtInt(report.persons.input)} in the input, ${fmtInt(report.persons.suppressed)} with a suppressed row`,
      'Rows are counted per person: a person counts as suppressed when any of their rows is.',
    ]);
  } else if (typeof p.k === 'number') {
    facts.push([
      'k achieved (smallest class)',
      `<strong>${fmtInt(p.k)}</strong>`,
      'Every released row looks like at least this many rows on the quasi-identifiers.',
    ]);
  }
  if (typeof p.classes === 'number') {
    facts.push([
      classWord,
      fmtInt(p.classes),
      'Groups of rows the release cannot tell apart on what the method hides.',
    ]);
  }
  return section(
    'guarantees',
    'Guarantees',
    [models, ...(facts.length > 0 ? [factsTable(facts)] : [])].join('\n'),
  );
}

function riskBinLabel(b: { from: number; to: number }): string {
  const short = (x: number) => String(Number(x.toPrecision(3)));
  return `${short(b.from)}–${short(b.to)}`;
}

/** Rows per risk bin, bins above the threshold in amber. */
function riskChart(d: RiskDistribution, title: string, valueAxis: string): string {
  if (d.rows === 0) return note('No rows were released, so no row is at risk.');
  return chart({
    title,
    categories: d.bins.map(riskBinLabel),
    series: [
      { name: 'rows', color: PALETTE[0]!, values: d.bins.map((b) => (d.rows > 0 ? b.rows / d.rows : 0)) },
    ],
    categoryAxis: valueAxis,
    valueAxis: 'share of released rows',
    percent: true,
    colorOf: (c) => (d.bins[c]!.from >= d.threshold ? AMBER : undefined),
    legend: [
      { label: `risk up to the threshold ${fmtNum(d.threshold)}`, color: PALETTE[0]! },
      { label: `risk above the threshold ${fmtNum(d.threshold)}`, color: AMBER },
    ],
  });
}

const THRESHOLD_MEANING =
  'Set by "report": { "riskThreshold": … } in the release spec (default 0.2; for randomization, its bound τ).';

/** The threshold, the share of rows above it, and the highest and mean prosecutor risk. */
/** `unit`: what the risks count, rows or (with an entity column) persons. */
function prosecutorFacts(
  p: { threshold: number; shareAbove: number; max: number; mean: number },
  unit: 'rows' | 'persons' = 'rows',
): Fact[] {
  const Unit = unit === 'rows' ? 'Rows' : 'Persons';
  const one = unit === 'rows' ? 'row' : 'person';
  return [
    ['Risk threshold', fmtNum(p.threshold) + oneIn(p.threshold), THRESHOLD_MEANING],
    [
      `${Unit} above the threshold`,
      `<strong>${fmtPct(p.shareAbove)}</strong>`,
      `Share of released ${unit} whose prosecutor risk exceeds the threshold.`,
    ],
    [
      'Prosecutor risk, highest',
      fmtNum(p.max) + oneIn(p.max),
      `The most exposed ${one}: the attacker knows the person is in the data.`,
    ],
    ['Prosecutor risk, mean', fmtNum(p.mean) + oneIn(p.mean), `Averaged over released ${unit}.`],
  ];
}

const UNIQUENESS_MODELS = {
  pitman: 'Pitman',
  zayatz: 'Zayatz',
  snb: 'SNB',
  dankar: 'Dankar’s rule',
} as const;

/** Population uniques per model; a model that could not be fitted shows a dash. */
function populationTable(u: PopulationUniqueness): string {
  const chosen = u.dankarModel ? ` (here ${UNIQUENESS_MODELS[u.dankarModel]})` : '';
  // With an entity column the estimates count persons: class sizes and the sample are persons.
  const lead =
    u.over === 'persons'
      ? `Persons unique in a population of ${counted(u.populationSize, 'person')} (the release holds ${fmtPct(u.samplingFraction)} of them), estimated from the ${counted(u.sampleUniques, 'released person')} alone in their class (class sizes counted in persons, a person in each class they have rows in).`
      : `Records unique in a population of ${fmtInt(u.populationSize)} (the release holds ${fmtPct(u.samplingFraction)} of it), estimated from the ${counted(u.sampleUniques, 'released row')} unique in the release.`;
  return [
    `<p>${lead} Dankar’s rule picks the model suited to the sampling fraction${chosen}; see docs/risk.md.</p>`,
    table(
      [
        { label: 'Model' },
        { label: 'Population uniques', num: true },
        { label: 'Share of the population', num: true },
      ],
      (Object.keys(UNIQUENESS_MODELS) as (keyof typeof UNIQUENESS_MODELS)[]).map((m) => {
        const e = u.estimates[m];
        // A model that cannot be fitted says so, with its reason: never 0 uniques.
        const none = e.uniques === null || e.share === null;
        return [
          UNIQUENESS_MODELS[m],
          none ? `not fitted <span class="meaning">${esc(e.notFitted ?? '')}</span>` : fmtNum(e.uniques!),
          none ? DASH : fmtPct(e.share!),
        ];
      }),
      'Population uniqueness',
    ),
  ].join('\n');
}

export function renderRisk(report: ReleaseReport): string {
  const r = report.privacy.reidentification;
  const a = report.privacy.attributeRisk;
  const summary = report.privacy.prosecutorRisk;
  if (!r && !a && !summary) return '';
  const parts: string[] = [];
  // A report without the distribution still has the prosecutor summary.
  if (!r && summary) parts.push(factsTable(prosecutorFacts(summary)));
  const u = report.privacy.populationRisk;
  if (r) {
    const p = r.prosecutor;
    parts.push(
      report.persons
        ? `<p>Persons are grouped by ${esc(r.basis)}. One of a group of n persons is re-identified with probability 1/n by an attacker who knows the person is in the data and links on those values (a person with rows in several groups counts in each).</p>`
        : `<p>Rows are grouped by ${esc(r.basis)}. A row in a group of n rows is re-identified with probability 1/n by an attacker who knows the person is in the data and links on those values.</p>`,
      factsTable([
        ...prosecutorFacts(p, report.persons ? 'persons' : 'rows'),
        [
          'Journalist risk, highest / mean',
          `${fmtNum(r.journalist.max)} / ${fmtNum(r.journalist.mean)}`,
          u
            ? 'The attacker does not know whether the person is in the data. Measured on the release’s own classes, the data taken as the whole population (journalist risk then equals prosecutor risk); the population below is used for the uniqueness estimates only.'
            : 'The attacker does not know whether the person is in the data. No population table was given, so the data is taken as the whole population and journalist risk equals prosecutor risk.',
        ],
        [
          'Marketer risk',
          fmtNum(r.marketer) + oneIn(r.marketer),
          'Expected share of rows re-identified when an attacker links every row: groups ÷ rows.',
        ],
      ]),
      riskChart(p, 'Released rows by prosecutor re-identification risk', 'prosecutor risk (1 / rows alike)'),
    );
  }
  if (u) parts.push(populationTable(u));
  if (a) {
    parts.push(
      '<p>Per row, the probability that an attacker who knows a person’s quasi-identifiers and the published matrices recovers both them and the sensitive value (the attribute-disclosure risk).</p>',
      factsTable([
        ['Risk threshold', fmtNum(a.threshold), THRESHOLD_MEANING],
        [
          'Rows above the threshold',
          `<strong>${fmtPct(a.shareAbove)}</strong>`,
          'Share of rows whose risk exceeds the threshold.',
        ],
      ]),
      riskChart(a, 'Rows by attribute-disclosure risk', 'attribute-disclosure risk'),
    );
  }
  return section(
    'risk',
    a && !r && !summary ? 'Rows above the risk threshold' : 'Re-identification risk',
    parts.join('\n'),
  );
}

/** `unit`: what the shares count, rows, or persons with an entity column. */
function sensitiveChart(d: SensitiveDistribution, unit = 'rows'): string {
  const ranked = rankedValues([d.overall, d.worstClass]);
  return chart({
    title: `${d.attribute}: share of each value overall and in the class that reveals most (${counted(d.worstClassSize, unit.slice(0, -1), unit)})`,
    categories: ranked.categories,
    series: [
      { name: `all ${unit}`, color: PALETTE[0]!, values: ranked.series[0]! },
      {
        name: `class that reveals most (${counted(d.worstClassSize, unit.slice(0, -1), unit)})`,
        color: AMBER,
        values: ranked.series[1]!,
      },
    ],
    categoryAxis: `${d.attribute} values, most frequent first`,
    valueAxis: `share of ${unit}`,
    horizontal: true,
    percent: true,
  });
}

function disclosureTable(m: Record<string, unknown>, attribute: string, models: ModelResult[]): string {
  // One t per attribute, its distance named: a t-closeness model's on it, else the default rule's.
  const t = attributeT(attribute, m as { release: { t: number }; tDistance?: string }, models);
  const rows = Object.entries(DISCLOSURE_LABELS).map(
    ([key, label]): Row => [
      esc(key === 't' && t ? `t (${t.distance} distance)` : label.name),
      ...DISCLOSURE_BASELINES.map(([b]) => {
        const v =
          key === 't' && b === 'release' && t
            ? t.t
            : (m[b] as Record<string, number | null> | undefined)?.[key];
        return typeof v === 'number' ? fmtNum(v) : DASH;
      }),
      `<span class="meaning">${esc(label.meaning)}</span>`,
    ],
  );
  const accuracy = m.accuracy as Record<string, number> | undefined;
  const parts = [
    table(
      [
        { label: 'Measure' },
        ...DISCLOSURE_BASELINES.map(([, name]) => ({ label: name, num: true })),
        { label: 'What it means' },
      ],
      rows,
      m.over === 'persons'
        ? 'The release against the two trivial releases (all quasi-identifiers withheld, or the sensitive attribute withheld), counted over persons'
        : 'The release against the two trivial releases: all quasi-identifiers withheld, or the sensitive attribute withheld',
    ),
  ];
  if (accuracy) {
    parts.push(
      factsTable(
        Object.entries(ACCURACY_LABELS).map(
          ([k, label]): Fact => [
            `Accuracy of guessing the value ${label}`,
            fmtPct(accuracy[k] ?? Number.NaN),
            k === 'release'
              ? 'Guessing each row’s value as the most frequent one of what the release shows about it.'
              : undefined,
          ],
        ),
      ),
    );
  }
  if (typeof m.note === 'string') parts.push(note(m.note));
  return parts.join('\n');
}

/** A numeric sensitive attribute: its spread overall and per class, as widths (the report names no value). */
function numericSpread(n: NonNullable<SensitiveDistribution['numeric']>, unit = 'rows'): string {
  const of = (x: number) => (n.range > 0 ? ` (${fmtPct(x / n.range)} of the overall range)` : '');
  return [
    '<p>A numeric attribute: how widely its values spread overall and within the released classes (an attacker who finds a person’s class learns the value lies in that class’s range). Widths only: the report names no value.</p>',
    factsTable([
      ['Range overall (max − min)', fmtNum(n.range), undefined],
      ['Interquartile range overall', fmtNum(n.iqr), undefined],
      [
        'Narrowest range of a class',
        `<strong>${fmtNum(n.narrowestClassRange)}</strong>${of(n.narrowestClassRange)}`,
        `The class that narrows the value most (${counted(n.narrowestClassSize, unit.slice(0, -1), unit)}); 0: every row of it has one value.`,
      ],
      [
        'Median range of a class',
        fmtNum(n.medianClassRange) + of(n.medianClassRange),
        `Over ${counted(n.classes, 'class', 'classes')}.`,
      ],
      ['Smallest interquartile range of a class', fmtNum(n.smallestClassIqr), undefined],
    ]),
  ].join('\n');
}

export function renderAttributeDisclosure(report: ReleaseReport): string {
  const p = report.privacy;
  const parts: string[] = [];
  const measures = Object.entries(p.disclosure ?? {}).filter(
    (e): e is [string, Record<string, unknown>] =>
      typeof e[1] === 'object' && e[1] !== null && 'release' in e[1],
  );
  const attributes = new Set([...(p.sensitive ?? []).map((s) => s.attribute), ...measures.map(([a]) => a)]);
  // With an entity column every figure here counts persons, as the privacy models do.
  const unit = report.persons ? 'persons' : 'rows';
  if (report.persons && attributes.size > 0)
    parts.push(
      '<p>Counted over persons: each person weighs 1 in a class, split evenly over their rows’ values there (the privacy models count the same way).</p>',
    );
  for (const attribute of attributes) {
    parts.push(`<h3>${esc(attribute)}</h3>`);
    const d = p.sensitive?.find((s) => s.attribute === attribute);
    if (d?.numeric) {
      parts.push(numericSpread(d.numeric, unit));
    } else if (d) {
      parts.push(
        report.persons
          ? '<p>How the sensitive values are spread over all persons, and in the class whose persons share one value most (what an attacker learns at worst). Values are numbered by their overall share (#1 = most frequent): the report names no sensitive value.</p>'
          : '<p>How the sensitive values are spread over all rows, and in the class whose rows share one value most (what an attacker learns at worst). Values are numbered by their overall share (#1 = most frequent): the report names no sensitive value.</p>',
        sensitiveChart(d, unit),
      );
    }
    const m = measures.find(([a]) => a === attribute)?.[1];
    if (m) parts.push(disclosureTable(m, attribute, p.models));
  }
  const body = parts.filter((x) => x !== '');
  return body.length > 0 ? section('disclosure', 'Attribute disclosure', body.join('\n')) : '';
}
