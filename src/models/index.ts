/** Builds the privacy models a spec names, with what each needs to know about the table. */
import { codeCounts, type EncodedColumn, type EncodedTable } from '../data/table.ts';
import { SpecError } from '../errors.ts';
import { buildHierarchy, type Hierarchy } from '../hierarchy/hierarchy.ts';
import type { PrivacyModelSpec, ReleaseSpec } from '../spec/spec.ts';
import { averageRisk } from './average-risk.ts';
import { deltaDisclosure } from './delta-disclosure.ts';
import { deltaPresence } from './delta-presence.ts';
import { kAnonymity } from './k-anonymity.ts';
import { kMap, kMapEstimated } from './k-map.ts';
import { distinctLDiversity, entropyLDiversity, recursiveClDiversity } from './l-diversity.ts';
import type { PrivacyModel } from './model.ts';
import { equalEmd, hierarchicalEmd, orderedEmd, smallestEqualClose, tCloseness } from './t-closeness.ts';

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
  return sensitiveNames(spec, all).map((name) => {
    const column = table.columns.find((c) => c.name === name)!;
    const a = spec.attributes.find((x) => x.name === name)!;
    const hierarchy = a.hierarchy ? buildHierarchy(column, a.hierarchy, false) : undefined;
    const counts = weights ? weightedCounts(column, weights) : codeCounts(column);
    return {
      name,
      column,
      hierarchy,
      order: valueOrder(column.dictionary, a.scale === 'numeric' || column.dictionary.every(isNumeric)),
      distribution: Float64Array.from(counts, (c) => c / table.rowCount),
    };
  });
}

function weightedCounts(column: EncodedTable['columns'][number], weights: Int32Array): Int32Array {
  const counts = new Int32Array(column.dictionary.length);
  for (let t = 0; t < column.codes.length; t++) counts[column.codes[t]!]! += weights[t]!;
  return counts;
}

function isNumeric(v: string): boolean {
  return v.trim() !== '' && Number.isFinite(Number(v));
}

function valueOrder(dictionary: readonly string[], numeric: boolean): number[] {
  const codes = dictionary.map((_, c) => c);
  return numeric
    ? codes.sort((a, b) => Number(dictionary[a]) - Number(dictionary[b]))
    : codes.sort((a, b) => (dictionary[a]! < dictionary[b]! ? -1 : dictionary[a]! > dictionary[b]! ? 1 : 0));
}

export function buildModels(
  specs: readonly PrivacyModelSpec[],
  rows: number,
  specFile: string,
  sensitive: readonly SensitiveAttribute[] = [],
  /** Whether the method releases under the whole-release and population models (generalization). */
  wholeRelease = false,
): PrivacyModel[] {
  const sa = (name: string) => sensitive.find((s) => s.name === name)!;
  return specs.map((spec, i) => {
    if (
      !wholeRelease &&
      (spec.model === 'average-risk' || spec.model === 'k-map' || spec.model === 'delta-presence')
    ) {
      throw new SpecError(
        'E_SPEC_MODEL_METHOD',
        `${specFile}: privacy[${i}].model '${spec.model}' applies to full-domain generalization only`,
        'use it with "method": { "name": "generalization" }',
      );
    }
    switch (spec.model) {
      case 'k-anonymity':
        if (spec.k > rows) {
          throw new SpecError(
            'E_SPEC_RANGE',
            `${specFile}: privacy[${i}].k is ${spec.k}, but the table has only ${rows} rows`,
            'k must be ≥ 1 and ≤ the number of rows',
          );
        }
        return kAnonymity(spec.k);
      case 'distinct-l-diversity':
        return distinctLDiversity(spec.attribute, spec.l);
      case 'entropy-l-diversity':
        return entropyLDiversity(spec.attribute, spec.l);
      case 'recursive-cl-diversity':
        return recursiveClDiversity(spec.attribute, spec.c, spec.l);
      case 't-closeness': {
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
        const smallest = spec.distance === 'equal' ? smallestEqualClose(s.distribution, spec.t, rows) : 1;
        return tCloseness(spec.attribute, spec.t, spec.distance, emd, smallest);
      }
      case 'delta-disclosure':
        return deltaDisclosure(spec.attribute, spec.delta, sa(spec.attribute).distribution);
      case 'average-risk':
        return averageRisk(spec.threshold);
      case 'k-map':
        if ('population' in spec) return kMap(spec.k, spec.population);
        if (spec.populationSize < rows) {
          throw new SpecError(
            'E_SPEC_RANGE',
            `${specFile}: privacy[${i}].populationSize is ${spec.populationSize}, but the input alone has ${rows} rows`,
            'the population is everyone the input is a sample of: at least as many as the input rows',
          );
        }
        return kMapEstimated(spec, rows);
      case 'delta-presence':
        return deltaPresence(spec.deltaMin, spec.deltaMax, spec.population);
      default:
        throw new SpecError(
          'E_SPEC_MODEL_METHOD',
          `${specFile}: privacy[${i}].model '${spec.model}' applies to randomization, not to partitioning methods`,
          'use it with "method": { "name": "randomization" }',
        );
    }
  });
}

/** The k the models imply (1 when no k-anonymity is asked). */
/** The smallest class any model lets pass (k, l, or the size t-closeness needs). */
export function smallestPassingClass(models: readonly PrivacyModel[]): number {
  return Math.max(1, ...models.map((m) => m.minClassSize));
}

export function requiredK(models: readonly PrivacyModel[]): number {
  let k = 1;
  for (const m of models) if (m.spec.model === 'k-anonymity') k = Math.max(k, m.spec.k);
  return k;
}
