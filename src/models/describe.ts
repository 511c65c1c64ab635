/**
 * What a person reads about a privacy model in the report: its name and, per parameter, what
 * it requires. A function of the model's name and parameters alone, so a report rendered from
 * report.json reads the same as the model built for the release (`PrivacyModel.describe()`).
 */
import { basename } from 'node:path';
import type { PrivacyModelSpec } from '../spec/spec.ts';

export interface ModelDescription {
  /** The model's name, e.g. `Distinct l-diversity`. */
  readonly name: string;
  /** One phrase per parameter (the sensitive attribute aside), in the parameters' order. */
  readonly requirements: readonly string[];
}

export type ModelName = PrivacyModelSpec['model'];

const NAMES: Record<ModelName, string> = {
  'k-anonymity': 'k-anonymity',
  'distinct-l-diversity': 'Distinct l-diversity',
  'entropy-l-diversity': 'Entropy l-diversity',
  'recursive-cl-diversity': 'Recursive (c, l)-diversity',
  't-closeness': 't-closeness',
  'delta-disclosure': 'δ-disclosure privacy',
  'attribute-disclosure': 'Attribute-disclosure bound',
  'rho-privacy': '(ρ1, ρ2)-privacy',
  'average-risk': 'Average re-identification risk',
  'k-map': 'k-map',
  'delta-presence': 'δ-presence',
};

/** How each parameter reads as a requirement, given its value as text (`model.param` first). */
const REQUIREMENTS: Record<string, (v: string) => string> = {
  'k-map.k': (v) => `every class matches at least k = ${v} records of the population`,
  threshold: (v) => `average re-identification risk ≤ ${v}`,
  deltaMin: (v) => `sample share of each class's population ≥ δmin = ${v}`,
  deltaMax: (v) => `sample share of each class's population ≤ δmax = ${v}`,
  population: (v) => `population table ${v}`,
  populationSize: (v) => `a population of ${v} people, its classes estimated from the input's`,
  estimator: (v) => `${v} estimate of the population's class sizes`,
  significance: (v) => `significance ${v}`,
  k: (v) => `every class has at least k = ${v} rows`,
  l: (v) => `l ≥ ${v}`,
  c: (v) => `c = ${v}`,
  t: (v) => `distance to the overall distribution ≤ t = ${v}`,
  delta: (v) => `δ ≤ ${v}`,
  tau: (v) => `per-row disclosure risk ≤ τ = ${v}`,
  rho1: (v) => `prior ≤ ρ1 = ${v}`,
  rho2: (v) => `posterior ≤ ρ2 = ${v}`,
  distance: (v) => `${v} ground distance`,
};

/**
 * The description of a model from its name and parameters (`format` writes numbers). A name this
 * version does not know (a report from another version) reads as it is, a parameter it does
 * not know as `unknown` writes it.
 */
export function describeModel(
  model: string,
  params: Readonly<Record<string, number | string>>,
  format: (v: number) => string = String,
  unknown: (key: string, value: number | string) => string = (k, v) => `${k} = ${v}`,
): ModelDescription {
  return {
    name: NAMES[model as ModelName] ?? model,
    requirements: Object.entries(params)
      .filter(([k]) => k !== 'attribute')
      .map(
        ([k, v]) =>
          (REQUIREMENTS[`${model}.${k}`] ?? REQUIREMENTS[k])?.(typeof v === 'number' ? format(v) : v) ??
          unknown(k, v),
      ),
  };
}

/**
 * A model spec's parameters: everything but its name; a population table by its file name
 * (where it lay on the machine that read it is no parameter).
 */
export function paramsOf(spec: PrivacyModelSpec): Record<string, number | string> {
  return Object.fromEntries(
    Object.entries(spec)
      .filter(([key]) => key !== 'model')
      .map(([key, v]) => [key, key === 'population' ? basename(v as string) : v]),
  );
}

/** The description of a built model's spec. */
export function describeSpec(spec: PrivacyModelSpec, format?: (v: number) => string): ModelDescription {
  return describeModel(spec.model, paramsOf(spec), format);
}
