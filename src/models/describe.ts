/**
 * What a person reads about a privacy model in the report: its name and, per parameter, what
 * it requires. A function of the model's name and parameters alone, so a report rendered from
 * report.json reads the same as the model built for the release (`PrivacyModel.describe()`).
 */
import { basename } from 'node:path';
import { declaredModels, findModel } from '../catalogue/catalogue.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';

export interface ModelDescription {
  /** The model's name, e.g. `Distinct l-diversity`. */
  readonly name: string;
  /** One phrase per parameter (the sensitive attribute aside), in the parameters' order. */
  readonly requirements: readonly string[];
}

/**
 * A parameter's wording for a model no declaration here names (a report from another version):
 * the first declared model's wording of a parameter of that name.
 */
function anyWording(key: string): ((v: string) => string) | undefined {
  return declaredModels().find((d) => Object.hasOwn(d.wording, key))?.wording[key];
}

function ownWording(
  wording: Readonly<Record<string, (v: string) => string>>,
  key: string,
): ((v: string) => string) | undefined {
  return Object.hasOwn(wording, key) ? wording[key] : undefined;
}

/**
 * The description of a model from its name and parameters (`format` writes numbers). A name this
 * version does not know (a report from another version) reads as it is, a parameter it does
 * not know as `unknown` writes it.
 */
export function describeModel(
  model: string,
  params: Readonly<Record<string, number | string | Readonly<Record<string, number>>>>,
  format: (v: number) => string = String,
  unknown: (key: string, value: number | string) => string = (k, v) => `${k} = ${v}`,
): ModelDescription {
  const declared = findModel(model);
  return {
    name: declared?.title ?? model,
    requirements: Object.entries(params)
      .filter(([k]) => k !== 'attribute')
      .map(([k, raw]) => {
        const v = typeof raw === 'object' ? JSON.stringify(raw) : raw;
        return (
          (declared ? ownWording(declared.wording, k) : anyWording(k))?.(
            typeof v === 'number' ? format(v) : v,
          ) ?? unknown(k, v)
        );
      }),
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
      .map(([key, v]) => [
        key,
        key === 'population' ? basename(v as string) : typeof v === 'object' ? JSON.stringify(v) : v,
      ]),
  );
}

/** The description of a built model's spec. */
export function describeSpec(spec: PrivacyModelSpec, format?: (v: number) => string): ModelDescription {
  return describeModel(spec.model, paramsOf(spec), format);
}
