/**
 * The privacy-model catalogue: every model declared once (src/catalogue/<family>.ts), read by
 * the spec's validation, the models, the verifier, the report, evaluate and explore instead of
 * switching on names. A model declared at run time (`registerModel`, with its `check`) is seen
 * by all of them.
 */
import { AVERAGE_RISK } from './average-risk.ts';
import type { ModelDeclaration, ModelNeed, SpecOf } from './declaration.ts';
import { DELTA_DISCLOSURE } from './delta-disclosure.ts';
import { DIFFERENTIAL_PRIVACY } from './differential-privacy.ts';
import { K_ANONYMITY } from './k-anonymity.ts';
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY, RECURSIVE_CL_DIVERSITY } from './l-diversity.ts';
import { DELTA_PRESENCE, K_MAP } from './population.ts';
import { ATTRIBUTE_DISCLOSURE, RHO_PRIVACY } from './randomization.ts';
import { T_CLOSENESS } from './t-closeness.ts';

/** The built-in models, in the order errors and listings name them. */
export const BUILT_IN_MODELS = [
  K_ANONYMITY,
  DISTINCT_L_DIVERSITY,
  ENTROPY_L_DIVERSITY,
  RECURSIVE_CL_DIVERSITY,
  T_CLOSENESS,
  DELTA_DISCLOSURE,
  ATTRIBUTE_DISCLOSURE,
  RHO_PRIVACY,
  AVERAGE_RISK,
  K_MAP,
  DELTA_PRESENCE,
  DIFFERENTIAL_PRIVACY,
] as const;

type BuiltIn = (typeof BUILT_IN_MODELS)[number];

/** A built-in model's name. */
export type ModelName = BuiltIn['name'];

/** The spec of a privacy model: one member per built-in model (and k-map variant). */
export type PrivacyModelSpec = SpecOf<BuiltIn>;

/** The spec of the model named N. */
export type SpecNamed<N extends ModelName> = Extract<PrivacyModelSpec, { readonly model: N }>;

/** The built-in models judged where `scope` says (`class`, `release`, `randomization`). */
export type ModelsIn<S extends ModelDeclaration['scope']> = Extract<BuiltIn, { readonly scope: S }>['name'];

/** The built-in class models randomization also takes. */
export type TauOfLModel = Extract<BuiltIn, { readonly randomization: 'tau-of-l' }>['name'];

const catalogue = new Map<string, ModelDeclaration>(BUILT_IN_MODELS.map((d) => [d.name, d]));

/**
 * Adds a model to the catalogue (a test's or a plug-in's): a class model with its `check`,
 * which the models and the verifier judge it with. Returns a function that takes it out again.
 */
export function registerModel(declaration: ModelDeclaration): () => void {
  if (catalogue.has(declaration.name))
    throw new Error(`privacy model '${declaration.name}' is declared already`);
  if (!declaration.check || declaration.scope !== 'class')
    throw new Error(
      `privacy model '${declaration.name}' declared at run time is judged class by class, by its check`,
    );
  catalogue.set(declaration.name, declaration);
  return () => {
    catalogue.delete(declaration.name);
  };
}

/** Every model's name, in the catalogue's order. */
export function modelNames(): string[] {
  return [...catalogue.keys()];
}

/** Every declared model. */
export function declaredModels(): ModelDeclaration[] {
  return [...catalogue.values()];
}

/** The declaration of a model, or undefined for a name no version of the catalogue here knows. */
export function findModel(name: string): ModelDeclaration | undefined {
  return catalogue.get(name);
}

/** The declaration of a model the spec's validation admitted. */
export function modelOf(spec: { readonly model: string }): ModelDeclaration {
  const d = catalogue.get(spec.model);
  if (!d) throw new Error(`privacy model '${spec.model}' is not in the catalogue`);
  return d;
}

/** Whether a model needs `need`. */
export function needs(spec: { readonly model: string }, need: ModelNeed): boolean {
  return modelOf(spec).needs.includes(need);
}

/** Whether the spec's models sample the input from a secret stream ((ε, δ)-differential privacy): one task only. */
export function drawsSecretSample(privacy: readonly { readonly model: string }[]): boolean {
  return privacy.some((m) => needs(m, 'secret-sample'));
}

/** The parameters `ppdp explore --vary` can change, each with the models carrying it, in catalogue order. */
export function varyParameters(): Map<string, { models: string[]; integer: boolean }> {
  const out = new Map<string, { models: string[]; integer: boolean }>();
  for (const d of catalogue.values()) {
    if (!d.vary) continue;
    const p = out.get(d.vary.parameter) ?? { models: [], integer: true };
    p.models.push(d.name);
    p.integer &&= d.vary.integer;
    out.set(d.vary.parameter, p);
  }
  return out;
}
