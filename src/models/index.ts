/** Builds the privacy models a spec names, with what each needs to know about the table. */
import { AVERAGE_RISK } from '../catalogue/average-risk.ts';
import { type ModelName, type ModelsIn, modelOf, type SpecNamed } from '../catalogue/catalogue.ts';
import type { ModelDeclaration } from '../catalogue/declaration.ts';
import { DELTA_DISCLOSURE } from '../catalogue/delta-disclosure.ts';
import { DIFFERENTIAL_PRIVACY } from '../catalogue/differential-privacy.ts';
import { K_ANONYMITY } from '../catalogue/k-anonymity.ts';
import {
  DISTINCT_L_DIVERSITY,
  ENTROPY_L_DIVERSITY,
  RECURSIVE_CL_DIVERSITY,
} from '../catalogue/l-diversity.ts';
import { DELTA_PRESENCE, K_MAP } from '../catalogue/population.ts';
import { T_CLOSENESS } from '../catalogue/t-closeness.ts';
import { inputRows } from '../data/checks.ts';
import { codeCounts, columnRows, type EncodedColumn, type EncodedTable } from '../data/table.ts';
import { SpecError } from '../errors.ts';
import { buildHierarchy, type Hierarchy } from '../hierarchy/hierarchy.ts';
import type { PrivacyModelSpec, ReleaseSpec } from '../release-spec/spec.ts';
import { allNumbers } from '../util/numbers.ts';
import { averageRisk } from './average-risk.ts';
import { deltaDisclosure } from './delta-disclosure.ts';
import { deltaPresence } from './delta-presence.ts';
import { describeSpec } from './describe.ts';
import { differentialPrivacy } from './differential-privacy.ts';
import { kAnonymity } from './k-anonymity.ts';
import { kMap, kMapEstimated } from './k-map.ts';
import { distinctLDiversity, entropyLDiversity, recursiveClDiversity } from './l-diversity.ts';
import { type ClassSummary, entries, type PrivacyModel } from './model.ts';
import {
  equalEmd,
  exactEmd,
  hierarchicalEmd,
  orderedEmd,
  smallestEqualClose,
  type TableCounts,
  tCloseness,
} from './t-closeness.ts';

/** A sensitive attribute as the models see it. */
export interface SensitiveAttribute {
  readonly name: string;
  readonly column: EncodedColumn;
  /** Its hierarchy, when the spec gives one (hierarchical t-closeness needs it). */
  readonly hierarchy: Hierarchy | undefined;
  /** SA codes from smallest to largest (ordered t-closeness). */
  readonly order: number[];
  /** p(T, s): each value's share of the table. */
  readonly distribution: Float64Array;
  /** The table's rows of each value, and its rows: the shares' integers (exact bounds; without them, floating point). */
  readonly counts?: TableCounts;
}

/**
 * The sensitive attributes the spec's models name (the search needs their per-class counts),
 * or with `all`, every sensitive column (the report measures disclosure for each).
 */
/** The sensitive attributes the models name, or (`all`) every sensitive column. */
export function sensitiveNames(spec: ReleaseSpec, all = false): string[] {
  return all
    ? spec.attributes.filter((a) => a.type === 'sensitive').map((a) => a.name)
    : [...new Set(spec.privacy.flatMap((m) => ('attribute' in m ? [m.attribute] : [])))];
}

export function sensitiveAttributes(
  spec: ReleaseSpec,
  table: EncodedTable,
  all = false,
  /** Rows per code position, when the table's codes are distinct tuples with counts. */
  weights?: Int32Array,
): SensitiveAttribute[] {
  // Tuples with counts are no rows of the input: their hierarchies were built on the rows before.
  const rows = weights ? columnRows : inputRows(spec, table);
  return sensitiveNames(spec, all).map((name) => {
    const column = table.columns.find((c) => c.name === name)!;
    const a = spec.attributes.find((x) => x.name === name)!;
    const hierarchy = a.hierarchy ? buildHierarchy(column, a.hierarchy, rows) : undefined;
    const counts = weights ? weightedCounts(column, weights) : codeCounts(column);
    return {
      name,
      column,
      hierarchy,
      // The verifier's order (src/verify/models.ts), whatever the scale: an empty cell makes it alphabetical.
      order: valueOrder(column.dictionary, allNumbers(column.dictionary)),
      distribution: Float64Array.from(counts, (c) => c / table.rowCount),
      counts: { counts, rows: table.rowCount },
    };
  });
}

/**
 * With an entity column: p(T, s) over persons (docs/definitions.md, "Several rows per person"),
 * each person weighing 1 over all their rows. Over distinct tuples: `values[t]` a tuple's SA
 * code, `counts[t]` its rows, `of[t]` its person's code in [0, codes); `persons` the codes used.
 */
export function personDistribution(
  values: Int32Array,
  counts: Int32Array,
  of: Int32Array,
  codes: number,
  persons: number,
  width: number,
): Float64Array {
  const rows = new Float64Array(codes);
  for (let t = 0; t < of.length; t++) rows[of[t]!]! += counts[t]!;
  const weights = new Float64Array(width);
  for (let t = 0; t < of.length; t++) weights[values[t]!]! += counts[t]! / rows[of[t]!]!;
  for (let s = 0; s < width; s++) weights[s]! /= persons;
  return weights;
}

function weightedCounts(column: EncodedTable['columns'][number], weights: Int32Array): Int32Array {
  const counts = new Int32Array(column.dictionary.length);
  for (let t = 0; t < column.codes.length; t++) counts[column.codes[t]!]! += weights[t]!;
  return counts;
}

function valueOrder(dictionary: readonly string[], numeric: boolean): number[] {
  const codes = dictionary.map((_, c) => c);
  return numeric
    ? codes.sort((a, b) => Number(dictionary[a]) - Number(dictionary[b]))
    : codes.sort((a, b) => (dictionary[a]! < dictionary[b]! ? -1 : dictionary[a]! > dictionary[b]! ? 1 : 0));
}

/** What a model's builder knows besides its spec. */
interface BuildContext {
  readonly rows: number;
  readonly specFile: string;
  /** The model's place in the spec's privacy list. */
  readonly i: number;
  readonly sa: (name: string) => SensitiveAttribute;
  /** Classes are judged over persons (an entity column): class sizes bound nothing of the weights. */
  readonly byPerson: boolean;
}

type Builder<N extends ModelName> = (spec: SpecNamed<N>, at: BuildContext) => PrivacyModel;

/** Every model judged class by class or on the release, by name: a model left out is a compile error. */
const BUILDERS: { readonly [N in ModelsIn<'class'> | ModelsIn<'release'>]: Builder<N> } = {
  [K_ANONYMITY.name]: (spec, { rows, specFile, i }) => {
    if (spec.k > rows) {
      throw new SpecError(
        'E_SPEC_RANGE',
        `${specFile}: privacy[${i}].k is ${spec.k}, but the table has only ${rows} rows`,
        'k must be ≥ 1 and ≤ the number of rows',
      );
    }
    return kAnonymity(spec.k);
  },
  [DISTINCT_L_DIVERSITY.name]: (spec) => distinctLDiversity(spec.attribute, spec.l),
  [ENTROPY_L_DIVERSITY.name]: (spec) => entropyLDiversity(spec.attribute, spec.l),
  [RECURSIVE_CL_DIVERSITY.name]: (spec) => recursiveClDiversity(spec.attribute, spec.c, spec.l),
  [T_CLOSENESS.name]: (spec, { rows, specFile, i, sa, byPerson }) => {
    const s = sa(spec.attribute);
    if (spec.distance === 'hierarchical' && !s.hierarchy) {
      throw new SpecError(
        'E_SPEC_HIERARCHY',
        `${specFile}: privacy[${i}] uses hierarchical t-closeness, but attributes.${spec.attribute} has no hierarchy`,
        'give the sensitive attribute a hierarchy, or use "distance": "equal" or "ordered"',
      );
    }
    const emd =
      spec.distance === 'equal'
        ? equalEmd(s.distribution)
        : spec.distance === 'ordered'
          ? orderedEmd(s.distribution, s.order)
          : hierarchicalEmd(s.distribution, s.hierarchy!);
    // Over persons a class's weights are fractions: one person's rows can match any distribution,
    // and no integers give its EMD.
    const exact = byPerson || !s.counts ? undefined : exactEmd(spec.distance, s.counts, s.order, s.hierarchy);
    const smallest =
      spec.distance === 'equal' && !byPerson ? smallestEqualClose(s.distribution, spec.t, rows, exact) : 1;
    return tCloseness(spec.attribute, spec.t, spec.distance, emd, smallest, exact, s.distribution.length);
  },
  [DELTA_DISCLOSURE.name]: (spec, { sa }) =>
    deltaDisclosure(spec.attribute, spec.delta, sa(spec.attribute).distribution),
  [AVERAGE_RISK.name]: (spec) => averageRisk(spec.threshold),
  [K_MAP.name]: (spec, { rows, specFile, i }) => {
    if ('population' in spec) return kMap(spec.k, spec.population);
    if (spec.populationSize < rows) {
      throw new SpecError(
        'E_SPEC_RANGE',
        `${specFile}: privacy[${i}].populationSize is ${spec.populationSize}, but the input alone has ${rows} rows`,
        'the population is everyone the input is a sample of: at least as many as the input rows',
      );
    }
    return kMapEstimated(spec, rows);
  },
  [DELTA_PRESENCE.name]: (spec) => deltaPresence(spec.deltaMin, spec.deltaMax, spec.population),
  [DIFFERENTIAL_PRIVACY.name]: (spec, { specFile, i }) =>
    differentialPrivacy(spec, `${specFile}: privacy[${i}]`),
};

export function buildModels(
  specs: readonly PrivacyModelSpec[],
  rows: number,
  specFile: string,
  sensitive: readonly SensitiveAttribute[] = [],
  /** Whether the method releases under the whole-release and population models (generalization). */
  wholeRelease = false,
  /**
   * Classes are judged over persons (an entity column): `sensitive` then carries the
   * person-weighted distributions (personDistribution) and t-closeness no class-size bound.
   */
  byPerson = false,
): PrivacyModel[] {
  const sa = (name: string) => sensitive.find((s) => s.name === name)!;
  return specs.map((spec, i) => {
    const declared = modelOf(spec);
    if (!wholeRelease && declared.scope === 'release') {
      throw new SpecError(
        'E_SPEC_MODEL_METHOD',
        `${specFile}: privacy[${i}].model '${spec.model}' applies to full-domain generalization only`,
        'use it with "method": { "name": "generalization" }',
      );
    }
    if (declared.scope === 'randomization') {
      throw new SpecError(
        'E_SPEC_MODEL_METHOD',
        `${specFile}: privacy[${i}].model '${spec.model}' applies to randomization, not to partitioning methods`,
        'use it with "method": { "name": "randomization" }',
      );
    }
    const build = (BUILDERS as Readonly<Record<string, Builder<ModelName>>>)[spec.model];
    return build
      ? build(spec as never, { rows, specFile, i, sa, byPerson })
      : declaredModel(declared, spec, sa);
  });
}

/** A model declared at run time, judged by its declaration's check. */
function declaredModel(
  declared: ModelDeclaration,
  spec: PrivacyModelSpec,
  sa: (name: string) => SensitiveAttribute,
): PrivacyModel {
  const attribute = 'attribute' in spec ? spec.attribute : null;
  const dictionary = attribute === null ? undefined : sa(attribute).column.dictionary;
  const view = (cls: ClassSummary) => {
    if (!dictionary || !cls.histogram) return { size: cls.size, counts: undefined };
    const counts = new Map<string, number>();
    const held = entries(cls.histogram);
    for (let i = held.from; i < held.to; i++) {
      const c = held.counts[i]!;
      if (c > 0) counts.set(dictionary[held.codes ? held.codes[i]! : i]!, c);
    }
    return { size: cls.size, counts };
  };
  const check = declared.check!;
  return {
    spec,
    describe: (format) => describeSpec(spec, format),
    attribute,
    monotonic: false,
    monotonicWithoutSuppression: false,
    minClassSize: 1,
    holds: (cls) => check(spec, view(cls)).holds,
    measure: (cls) => check(spec, view(cls)).value,
    higherIsBetter: declared.measure.higherIsBetter,
    measureName: declared.measure.name,
  };
}

/** The k the models imply (1 when no k-anonymity is asked). */
/** The smallest class any model lets pass (k, l, or the size t-closeness needs). */
export function smallestPassingClass(models: readonly PrivacyModel[]): number {
  return Math.max(1, ...models.map((m) => m.minClassSize));
}

export function requiredK(models: readonly PrivacyModel[]): number {
  return specK(models.map((m) => m.spec));
}

/** The largest k the spec's k-anonymity models ask for (1 without one): what AECS divides by. */
export function specK(privacy: readonly PrivacyModelSpec[]): number {
  let k = 1;
  for (const m of privacy) if (m.model === K_ANONYMITY.name) k = Math.max(k, m.k);
  return k;
}
