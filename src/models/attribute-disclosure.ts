/**
 * The attribute-disclosure bound τ of a randomized release (docs/definitions.md §5): every
 * person's attribute-disclosure risk — the chance that an attacker who knows the person's QIs
 * and the published matrices recovers both them and the sensitive value — is at most τ.
 * Distinct and entropy l-diversity read, for randomization, as the bound τ = 1/l.
 */
import { describeSpec } from './describe.ts';
import type { LDiversityModel } from './l-diversity.ts';
import type { ModelDefinition } from './model.ts';

export interface AttributeDisclosureModel extends ModelDefinition {
  readonly attribute: string;
  /** τ. */
  readonly value: number;
  /** Where τ comes from, as the report says it. */
  readonly from: string;
  /** Does a release whose highest per-row risk is `maxRisk` meet the bound? */
  holds(maxRisk: number): boolean;
}

export function attributeDisclosure(attribute: string, tau: number): AttributeDisclosureModel {
  return {
    spec: { model: 'attribute-disclosure', attribute, tau },
    attribute,
    value: tau,
    from: `attribute-disclosure τ = ${tau}`,
    describe(format) {
      return describeSpec(this.spec, format);
    },
    holds: (maxRisk) => maxRisk <= tau,
  };
}

/** An l-diversity model as the attribute-disclosure bound τ = 1/l. */
export function disclosureBoundOfL(model: LDiversityModel): AttributeDisclosureModel {
  const tau = 1 / model.l;
  return {
    spec: model.spec,
    attribute: model.attribute,
    value: tau,
    from: `${model.spec.model} l = ${model.l} (τ = 1/l)`,
    describe: (format) => model.describe(format),
    holds: (maxRisk) => maxRisk <= tau,
  };
}
