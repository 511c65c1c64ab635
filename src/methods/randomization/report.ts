/**
 * Randomization's part of the report, one builder per part: the models' results, the utility,
 * the sections a person reads (the matrices, the attribute-disclosure risk, the sub-domains),
 * and the machine-readable details.
 */
import { RHO_PRIVACY } from '../../catalogue/randomization.ts';
import type { ModelResult, ReportSection } from '../../contracts/report.ts';
import { type DistributionMeasures, measureFigures } from '../../metrics/contingency.ts';
import { riskDistribution } from '../../metrics/privacy.ts';
import { impliedRho2, type RhoCheck, smallDomainGuarantee } from '../../models/rho-privacy.ts';
import { emptyRecord } from '../../util/record.ts';
import type { BuiltRelease } from '../method.ts';
import { gammaOf, isIdentity } from './matrices.ts';
import { expectedSquaredError, type RandomizationPlan } from './plan.ts';
import type { RiskDetail } from './risk.ts';

type MethodReport = BuiltRelease['report'];

/** The ρ1 values whose implied ρ2 the report lists. */
const RHO1_TABLE = [0.01, 0.05, 0.1, 0.2, 0.3, 0.5];

/** What every part of the report reads. */
interface Facts {
  readonly plan: RandomizationPlan;
  readonly risk: RiskDetail;
  readonly rho: RhoCheck | undefined;
  /** γ of the sensitive attribute's matrix (∞ when it is not randomized). */
  readonly gamma: number;
  readonly expected: number;
  /** Each attribute's retention parameter (1 when not randomized). */
  readonly parameters: Record<string, number>;
  readonly impliedRho: { rho1: number; rho2: number }[];
}

export function randomizationReport(
  plan: RandomizationPlan,
  risk: RiskDetail,
  rho: RhoCheck | undefined,
  measures: DistributionMeasures | undefined,
  measuresNote: string | undefined,
): MethodReport {
  const { attributes, distortions, spec } = plan;
  const n = attributes[0]!.codes.length;
  const saP = distortions[distortions.length - 1];
  const gamma = saP ? gammaOf(saP.matrix, saP.d) : Number.POSITIVE_INFINITY;
  const parameters = emptyRecord<number>();
  attributes.forEach((a, i) => {
    const p = distortions[i];
    parameters[a.name] = p ? (p.parameter ?? p.diag ?? Number.NaN) : 1;
  });
  const facts: Facts = {
    plan,
    risk,
    rho,
    gamma,
    expected: expectedSquaredError(attributes, distortions),
    parameters,
    impliedRho: Number.isFinite(gamma)
      ? RHO1_TABLE.map((r1) => ({ rho1: r1, rho2: impliedRho2(gamma, r1) }))
      : [],
  };
  const models = modelResults(facts);
  return {
    rows: { input: n, released: n, suppressed: 0 },
    privacy: {
      satisfied: models.every((m) => m.satisfied),
      models,
      attributeRisk: riskDistribution(
        risk.cellRisk,
        plan.evaluator.table.cellCount,
        // Unless the spec sets a threshold, rows count as at risk above the bound τ itself.
        spec.report.riskThresholdSet
          ? spec.report.riskThreshold
          : (plan.requirements.tau?.value ?? spec.report.riskThreshold),
      ),
      disclosure: {
        attributeDisclosure: { max: risk.max, mean: risk.mean },
        gamma: Number.isFinite(gamma) ? gamma : null,
        impliedRho: facts.impliedRho,
      },
    },
    utility: utilityOf(facts, measures, measuresNote),
    sections: [matricesSection(facts), riskSection(facts), ...smallDomainSections(facts)],
    details: { randomization: detailsOf(facts, measures) },
  };
}

/** Each privacy model of the spec: ρ-privacy from the posterior check, τ from the risk. */
function modelResults({ plan, risk, rho, gamma }: Facts): ModelResult[] {
  const { requirements, spec } = plan;
  return spec.privacy.map((m): ModelResult => {
    const params = Object.fromEntries(Object.entries(m).filter(([key]) => key !== 'model')) as Record<
      string,
      number | string
    >;
    if (m.model === RHO_PRIVACY.name) {
      return {
        model: m.model,
        params,
        satisfied: rho!.satisfied,
        achieved: {
          gamma: Number.isFinite(gamma) ? gamma : -1,
          impliedRho2: impliedRho2(gamma, m.rho1),
          worstUpwardPosterior: rho!.worstUpward,
          worstDownwardPosterior: rho!.worstDownward,
        },
        monotonic: false,
      };
    }
    return {
      model: m.model,
      params,
      satisfied: risk.max <= requirements.tau!.value,
      achieved: { maxRisk: risk.max, meanRisk: risk.mean, tau: requirements.tau!.value },
      monotonic: false,
    };
  });
}

/** The expected squared error, and the distribution measures when they were computed. */
function utilityOf(
  { plan, expected }: Facts,
  measures: DistributionMeasures | undefined,
  measuresNote: string | undefined,
): MethodReport['utility'] {
  const sa = plan.attributes[plan.attributes.length - 1]!;
  const uncertainty = measures?.uncertainty ?? [];
  const avg = (pairs: typeof uncertainty, key: 'before' | 'after') =>
    pairs.length ? pairs.reduce((s, p) => s + p[key], 0) / pairs.length : 0;
  const qiQi = uncertainty.filter((p) => p.x !== sa.name && p.y !== sa.name);
  const qiSa = uncertainty.filter((p) => p.x === sa.name || p.y === sa.name);
  return {
    metric: 'expected-squared-error',
    value: expected,
    objective: plan.optimizer?.objective ?? 0,
    ...(measures
      ? {
          ...measureFigures(measures),
          uncertaintyQiQiBefore: avg(qiQi, 'before'),
          uncertaintyQiQiAfter: avg(qiQi, 'after'),
          uncertaintyQiSaBefore: avg(qiSa, 'before'),
          uncertaintyQiSaAfter: avg(qiSa, 'after'),
        }
      : { note: measuresNote ?? 'not computed' }),
  };
}

const fmt = (x: number, digits = 4) => (Number.isFinite(x) ? Number(x.toPrecision(digits)) : '∞');

/** The scenario, what is randomized and each attribute's retention, with a chart of them. */
function matricesSection({ plan, parameters, expected }: Facts): ReportSection {
  const { attributes, distortions, method } = plan;
  const sa = attributes[attributes.length - 1]!;
  // An attribute the scenario randomizes, of more than one category, perturbed by nothing: left
  // at retention 1 (no matrix: τ = 1, say), or by a matrix that keeps every value (small-domain
  // blocks all at retention 1).
  const unperturbed = attributes.map((a, i) => {
    const p = distortions[i];
    return plan.randomized[i]! && a.categories.length > 1 && (!p || isIdentity(p.matrix, p.d));
  });
  const named = (keep: (i: number) => boolean) =>
    attributes
      .filter((_, i) => keep(i))
      .map((a) => a.name)
      .join(', ');
  return {
    title: 'Randomization',
    facts: [
      ['scenario', method.scenario],
      ['matrix form', method.form],
      ['randomized', named((i) => !!distortions[i] && !unperturbed[i]) || 'nothing'],
      ...(unperturbed.some(Boolean)
        ? [['released unperturbed (retention 1)', named((i) => unperturbed[i]!)] as [string, string]]
        : []),
      ['sensitive attribute', sa.name],
      ['contingency cells', attributes.reduce((s, a) => s * a.categories.length, 1)],
      ...attributes.map((a, i): [string, string | number] => [
        `retention ${a.name}`,
        distortions[i]
          ? `${fmt(parameters[a.name]!, 6)} (${plan.chosenBy[a.name] ?? 'spec'}, d = ${a.categories.length})${unperturbed[i] ? ': released unperturbed' : ''}`
          : unperturbed[i]
            ? `1 (d = ${a.categories.length}): released unperturbed`
            : 'not randomized',
      ]),
      ['expected squared error E‖π̂ − π‖²', fmt(expected)],
    ],
    note:
      'Every input row gives exactly one released row; the rows are shuffled. matrices.json holds every matrix: ' +
      '`ppdp reconstruct` estimates any contingency table from the release.',
    chart: {
      title: 'Retention: the chance each attribute keeps its true value (diagonal of its matrix)',
      x: 'attribute',
      y: 'retention probability',
      bars: attributes.map((a, i) => ({
        label: a.name,
        // A matrix with unequal diagonal entries has no one retention: no bar.
        value: distortions[i] ? (distortions[i]!.diag ?? null) : 1,
      })),
    },
  };
}

/** The risk's quantiles, the bound, γ and the posteriors it bounds. */
function riskSection({ plan, risk, rho, gamma, impliedRho }: Facts): ReportSection {
  const { requirements } = plan;
  const cellCount = plan.evaluator.table.cellCount;
  return {
    title: 'Attribute disclosure risk',
    facts: [
      [
        'median / 90th / 99th percentile',
        [0.5, 0.9, 0.99].map((q) => fmt(quantile(risk.cellRisk, cellCount, q))).join(' / '),
      ],
      ...(requirements.tau
        ? [['bound τ', `${fmt(requirements.tau.value)} (${requirements.tau.from})`] as [string, string]]
        : []),
      ['γ of the sensitive attribute’s matrix', fmt(gamma)],
      ...impliedRho.map((r): [string, string] => [`implied ρ2 for ρ1 = ${r.rho1}`, String(fmt(r.rho2))]),
      ...(rho
        ? ([
            ['worst posterior of a property with prior ≤ ρ1', fmt(rho.worstUpward)],
            ['worst posterior of a property with prior ≤ 1 − ρ2', fmt(rho.worstDownward)],
          ] as [string, number | string][])
        : []),
    ],
    note:
      'risk(α,u) = (π_{α,u}/π_α)·r_QI(α)·r_S(u|α): the probability that an attacker who knows a person’s QIs and the ' +
      'matrices reconstructs both the QIs and the sensitive value. γ-amplification bounds every posterior.',
  };
}

/** The sensitive attribute's sub-domains, when small-domain randomization split it. */
function smallDomainSections({ plan }: Facts): ReportSection[] {
  const { smallDomain, requirements, attributes } = plan;
  if (!smallDomain) return [];
  const sa = attributes[attributes.length - 1]!;
  return [
    {
      title: 'Small-domain randomization',
      facts: smallDomain.blocks.map((b, j): [string, string] => [
        `sub-domain ${j + 1} (${fmt(b.share * 100, 3)} % of rows)`,
        `${b.values.map((v) => sa.categories[v]).join(', ')} — retention ${fmt(b.retention, 6)}`,
      ]),
      note: smallDomainGuarantee(requirements.rho!.rho1, requirements.rho!.rho2),
    },
  ];
}

/** The machine-readable details: parameters, γ per attribute, risk, optimizer, measures. */
function detailsOf({ plan, risk, parameters, expected }: Facts, measures: DistributionMeasures | undefined) {
  const { attributes, distortions, method } = plan;
  const sa = attributes[attributes.length - 1]!;
  return {
    scenario: method.scenario,
    form: method.form,
    smallDomain: method.smallDomain,
    parameters,
    chosenBy: plan.chosenBy,
    categories: Object.fromEntries(attributes.map((a) => [a.name, a.categories.length])),
    gamma: Object.fromEntries(
      attributes.flatMap((a, i) => {
        const p = distortions[i];
        if (!p) return [];
        const g = gammaOf(p.matrix, p.d);
        return [[a.name, Number.isFinite(g) ? g : null]];
      }),
    ),
    risk: { max: risk.max, mean: risk.mean },
    expectedSquaredError: expected,
    optimizer: plan.optimizer
      ? {
          objective: plan.optimizer.objective,
          evaluations: plan.optimizer.evaluations,
          maxRisk: plan.optimizer.maxRisk,
        }
      : null,
    ...(measures ? { uncertainty: measures.uncertainty, marginals: measures.marginals } : {}),
    ...(plan.smallDomain
      ? {
          subDomains: plan.smallDomain.blocks.map((b) => ({
            categories: b.values.map((v) => sa.categories[v]!),
            retention: b.retention,
            share: b.share,
          })),
        }
      : {}),
  };
}

/** The q-quantile of `values` weighted by `weights`. */
function quantile(values: Float64Array, weights: Float64Array, q: number): number {
  const idx = Array.from(values.keys()).sort((a, b) => values[a]! - values[b]!);
  let total = 0;
  for (const w of weights) total += w;
  let acc = 0;
  for (const i of idx) {
    acc += weights[i]!;
    if (acc >= q * total) return values[i]!;
  }
  return values[idx[idx.length - 1]!] ?? 0;
}
