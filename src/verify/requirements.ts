/**
 * The requirements a release must meet, read by the verifier from the spec itself (never from
 * the claims), and the comparison with the requirements the method states it enforced.
 */
import type { ModelName, ModelsIn, SpecNamed, TauOfLModel } from '../catalogue/catalogue.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY } from '../catalogue/l-diversity.ts';
import { ATTRIBUTE_DISCLOSURE, RHO_PRIVACY } from '../catalogue/randomization.ts';
import type { VerificationCheck } from '../contracts/report.ts';
import type { GeneralizationMethodSpec, ReleaseSpec } from '../release-spec/spec.ts';
import { fail } from './common.ts';

/**
 * Generalization: the largest k of the k-anonymity models, the suppression limit in rows. With
 * an entity column (`persons`: the input's, as the verifier counted them) the limit counts
 * persons, and rows are not limited.
 */
export function generalizationRequirements(spec: ReleaseSpec, rows: number, persons?: number) {
  const method = spec.method as GeneralizationMethodSpec;
  let k = 1;
  for (const m of spec.privacy) if (m.model === K_ANONYMITY.name) k = Math.max(k, m.k);
  const entity = spec.attributes.some((a) => a.type === 'entity');
  return {
    k,
    maxSuppressedRows: entity ? rows : Math.floor(method.maxSuppression * rows + 1e-9),
    ...(entity && persons !== undefined
      ? { maxSuppressedPersons: Math.floor(method.maxSuppression * persons + 1e-9) }
      : {}),
    suppressed: method.suppressed,
  };
}

type DiversityModel = TauOfLModel;

/**
 * Anatomy and Slicing: the spec's one l-diversity model among `accepted` — its attribute, model
 * and l. A spec without exactly one fails verification (the method refuses such a spec).
 */
export function diversityRequirements(spec: ReleaseSpec, accepted: readonly DiversityModel[]) {
  const models = spec.privacy.flatMap((m) =>
    (accepted as readonly string[]).includes(m.model) && 'l' in m && 'attribute' in m
      ? [{ sensitive: m.attribute, model: m.model as DiversityModel, l: m.l }]
      : [],
  );
  if (models.length !== 1 || spec.privacy.length !== 1) {
    fail([
      {
        name: 'requirements',
        passed: false,
        detail: `the spec states ${spec.privacy.length} privacy models; the method takes one of ${accepted.join(', ')}`,
      },
    ]);
  }
  return models[0]!;
}

/**
 * Randomization: the one sensitive attribute the models name, the tightest attribute-disclosure
 * bound (τ, and 1/l for an l-diversity model), (ρ1, ρ2) and the amplification γ they allow.
 */
export function randomizationRequirements(spec: ReleaseSpec) {
  let tau: number | null = null;
  let rho: { rho1: number; rho2: number } | null = null;
  const named = new Set<string>();
  for (const m of spec.privacy) {
    if ('attribute' in m) named.add(m.attribute);
    const read = (RANDOMIZATION_BOUNDS as Readonly<Record<string, RandomizationBound<ModelName>>>)[m.model];
    const { tau: bound, rho: pair } = read?.(m as never) ?? {};
    if (bound !== undefined && (tau === null || bound < tau)) tau = bound;
    if (pair !== undefined) rho = pair;
  }
  return {
    sensitive: named.size === 1 ? [...named][0]! : [...named].join(', '),
    tau,
    rho,
    /** γ = ρ2(1 − ρ1) / (ρ1(1 − ρ2)). */
    gamma: rho && (rho.rho2 * (1 - rho.rho1)) / (rho.rho1 * (1 - rho.rho2)),
  };
}

type RandomizationBound<N extends ModelName> = (model: SpecNamed<N>) => {
  tau?: number;
  rho?: { rho1: number; rho2: number };
};

/** What each model randomization takes bounds: τ (1/l for l-diversity), or (ρ1, ρ2). A model left out is a compile error. */
const RANDOMIZATION_BOUNDS: {
  readonly [N in ModelsIn<'randomization'> | TauOfLModel]: RandomizationBound<N>;
} = {
  [ATTRIBUTE_DISCLOSURE.name]: (m) => ({ tau: m.tau }),
  [DISTINCT_L_DIVERSITY.name]: (m) => ({ tau: 1 / m.l }),
  [ENTROPY_L_DIVERSITY.name]: (m) => ({ tau: 1 / m.l }),
  [RHO_PRIVACY.name]: (m) => ({ rho: { rho1: m.rho1, rho2: m.rho2 } }),
};

/**
 * Runs `verify` when every requirement the method states it enforced (`claimed`) equals the
 * spec's (`required`, the same fields); otherwise verification fails naming both. An honest
 * release adds no check, so its report is unchanged.
 */
export function whenEnforcedAsSpec<T>(
  claimed: Readonly<Record<string, unknown>>,
  required: Readonly<Record<string, unknown>>,
  verify: () => T,
): T {
  const differing = Object.keys(claimed).filter((key) => !same(claimed[key], required[key]));
  if (differing.length > 0) {
    const checks: VerificationCheck[] = [
      {
        name: 'requirements-as-spec',
        passed: false,
        detail: differing
          .map(
            (key) =>
              `the claims state ${key} = ${JSON.stringify(claimed[key])}, the spec requires ${key} = ${JSON.stringify(required[key])}`,
          )
          .join('; '),
      },
    ];
    fail(checks);
  }
  return verify();
}

/** Equal values; numbers equal up to rounding (a bound computed as 1/l may round differently). */
function same(a: unknown, b: unknown): boolean {
  if (typeof a === 'number' && typeof b === 'number')
    return Math.abs(a - b) <= 1e-12 * Math.max(1, Math.abs(b));
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object') {
    const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
    return [...keys].every((k) => same((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  }
  return a === b;
}
