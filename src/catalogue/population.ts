/**
 * The models judged against a population: k-map (a population table, or a population's size
 * with its classes estimated from the sample's) and δ-presence.
 */
import { SpecError } from '../errors.ts';
import { declareModel } from './declaration.ts';

/** The significance of an estimated k-map when the spec sets none. */
export const DEFAULT_KMAP_SIGNIFICANCE = 0.01;

const population = (v: string) => `population table ${v}`;

export const K_MAP = declareModel({
  name: 'k-map',
  fields: { k: { kind: 'number', min: 1, max: Number.MAX_SAFE_INTEGER, integer: true, example: 5 } },
  variants: [
    { population: { kind: 'file' } },
    {
      populationSize: {
        kind: 'number',
        min: 1,
        max: Number.MAX_SAFE_INTEGER,
        integer: true,
        example: 1_000_000,
      },
      estimator: { kind: 'string', values: ['poisson', 'zero-truncated-poisson'] },
      significance: { kind: 'number', min: 0, max: 1, integer: false },
    },
  ],
  refine: kMapSettings,
  title: 'k-map',
  wording: {
    k: (v) => `every class matches at least k = ${v} records of the population`,
    population,
    populationSize: (v) => `a population of ${v} people, its classes estimated from the input's`,
    estimator: (v) => `${v} estimate of the population's class sizes`,
    significance: (v) => `significance ${v}`,
  },
  needs: ['population-table'],
  scope: 'release',
  vary: { parameter: 'k', integer: true },
  measure: { name: 'k', higherIsBetter: true },
  boundsIdentity: (p) => (p.k as number) >= 2,
});

/**
 * k-map takes a population table (`population`) or the population's size (`populationSize`,
 * with `estimator` and `significance`, defaults filled in): one of the two.
 */
function kMapSettings(fields: Record<string, unknown>, where: string, field: string): void {
  const table = fields.population !== undefined;
  if (table === (fields.populationSize !== undefined)) {
    throw new SpecError(
      table ? 'E_SPEC_CONFLICT' : 'E_SPEC_REQUIRED',
      `${where}: ${field} (k-map) needs ${table ? 'one of population and populationSize, not both' : 'population or populationSize'}`,
      'give "population": a table of the population in the spec\'s folder, or "populationSize": how many people the sample is drawn from (its classes are then estimated)',
    );
  }
  for (const key of ['estimator', 'significance']) {
    if (table && fields[key] !== undefined) {
      throw new SpecError(
        'E_SPEC_CONFLICT',
        `${where}: ${field}.${key} applies to an estimated population (populationSize), not to a population table`,
        `drop ${key}, or give populationSize instead of population`,
      );
    }
  }
  if (!table) {
    fields.estimator ??= 'poisson';
    fields.significance ??= DEFAULT_KMAP_SIGNIFICANCE;
  }
}

export const DELTA_PRESENCE = declareModel({
  name: 'delta-presence',
  fields: {
    deltaMin: { kind: 'number', min: 0, max: 1, integer: false },
    deltaMax: { kind: 'number', min: 0, max: 1, integer: false },
    population: { kind: 'file' },
  },
  refine: (fields, where, field) => {
    if ((fields.deltaMin as number) > (fields.deltaMax as number)) {
      throw new SpecError(
        'E_SPEC_RANGE',
        `${where}: ${field}.deltaMin (${fields.deltaMin}) is above ${field}.deltaMax (${fields.deltaMax})`,
        'δ-presence bounds the share of the population in the sample from both sides: deltaMin ≤ deltaMax, e.g. "deltaMin": 0, "deltaMax": 0.5',
      );
    }
  },
  title: 'δ-presence',
  wording: {
    deltaMin: (v) => `sample share of each class's population ≥ δmin = ${v}`,
    deltaMax: (v) => `sample share of each class's population ≤ δmax = ${v}`,
    population,
  },
  needs: ['population-table'],
  scope: 'release',
  vary: { parameter: 'deltaMax', integer: false },
  measure: { name: 'deltaMax', higherIsBetter: false },
});
