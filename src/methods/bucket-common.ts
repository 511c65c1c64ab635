/**
 * What Anatomy and Slicing share: the one sensitive attribute and its l-diversity model (the
 * model of src/models/l-diversity.ts judges the buckets), the existence condition of an
 * l-diverse partition, tuple ids over code columns, and the bucket-size facts of the report.
 */
import { basename } from 'node:path';
import type { TauOfLModel } from '../catalogue/catalogue.ts';
import { checkNumbers, inputRows } from '../data/checks.ts';
import { codeCounts, type EncodedColumn, type EncodedTable } from '../data/table.ts';
import { NoSolutionError, SpecError } from '../errors.ts';
import type { GroupingKernel } from '../kernels/groupby/kernel.ts';
import {
  dominance,
  type LDiversityModel,
  LEAST_PROTECTIVE_L,
  lDiversity,
  noDiversityHint,
} from '../models/l-diversity.ts';
import type { AttributeSpec, ReleaseSpec } from '../release-spec/spec.ts';

export interface DiversityRequirement {
  /** The sensitive attribute's name. */
  readonly attribute: string;
  readonly column: EncodedColumn;
  readonly model: TauOfLModel;
  readonly l: number;
  /** The l-diversity model (src/models) that judges the buckets. */
  readonly diversity: LDiversityModel;
}

/**
 * The l-diversity model of a bucketization spec. Exactly one sensitive attribute, protected by
 * one l-diversity model (`models` lists those the method accepts); any other model is refused
 * rather than silently ignored.
 */
export function diversityRequirement(
  spec: ReleaseSpec,
  table: EncodedTable,
  method: string,
  models: readonly DiversityRequirement['model'][],
): DiversityRequirement {
  const where = basename(spec.file);
  const accepted = models.join(' or ');
  for (const [i, m] of spec.privacy.entries()) {
    if (!(models as readonly string[]).includes(m.model)) {
      throw new SpecError(
        'E_SPEC_MODEL_METHOD',
        `${where}: privacy[${i}].model '${m.model}' does not apply to ${method}`,
        `${method} releases quasi-identifiers unchanged and protects the sensitive attribute with ${accepted}; ` +
          'use generalization or mondrian for other models',
      );
    }
  }
  if (spec.privacy.length !== 1) {
    throw new SpecError(
      'E_SPEC_PRIVACY',
      `${where}: ${method} takes exactly one privacy model, found ${spec.privacy.length}`,
      `name one ${accepted} model for the sensitive attribute`,
    );
  }
  const model = spec.privacy[0] as { model: DiversityRequirement['model']; attribute: string; l: number };
  const sensitive = spec.attributes.filter((a) => a.type === 'sensitive');
  if (sensitive.length !== 1) {
    throw new SpecError(
      'E_SPEC_SENSITIVE',
      `${where}: ${method} protects one sensitive attribute, the spec marks ${sensitive.length} (${sensitive
        .map((a) => a.name)
        .join(', ')})`,
      'mark the others "insensitive" (released as they are) or "identifying" (dropped)',
    );
  }
  // Quasi-identifiers go out unchanged: l is all that stands between a row and its value.
  if (model.l < LEAST_PROTECTIVE_L) {
    throw new SpecError(
      'E_SPEC_RANGE',
      `${where}: privacy[0].l must be at least ${LEAST_PROTECTIVE_L} for ${method}, but found ${model.l}: ${method} ` +
        'releases the quasi-identifiers unchanged and protects the sensitive attribute only through l, and with ' +
        `l < ${LEAST_PROTECTIVE_L} a bucket may hold one row, its sensitive value in plain view`,
      `set "l": ${LEAST_PROTECTIVE_L} or more; to bound re-identification only, use generalization or mondrian with k-anonymity`,
    );
  }
  const column = table.columns.find((c) => c.name === model.attribute)!;
  return { attribute: model.attribute, column, model: model.model, l: model.l, diversity: lDiversity(model) };
}

/** The l-diversity model's entry in a bucketization report. */
export function diversityModelReport(
  req: DiversityRequirement,
  satisfied: boolean,
  achieved: Record<string, number>,
  monotonic: boolean,
) {
  return { model: req.model, params: { attribute: req.attribute, l: req.l }, satisfied, achieved, monotonic };
}

/** How many distinct SA values a bucket needs: l, rounded up for entropy l-diversity. */
export function distinctNeeded(req: DiversityRequirement): number {
  return req.diversity.distinctValues;
}

/**
 * The buckets judged by the l-diversity model, from their SA histograms (`width` counts per
 * bucket, row-major): the model's measure on the worst bucket, and whether every bucket holds.
 */
export function bucketDiversity(
  req: DiversityRequirement,
  histograms: Int32Array,
  sizes: ArrayLike<number>,
  width: number,
): { achievedL: number; satisfied: boolean } {
  const model = req.diversity;
  let achievedL = Number.POSITIVE_INFINITY;
  let satisfied = true;
  for (let b = 0; b < sizes.length; b++) {
    const cls = { size: sizes[b]!, histogram: histograms.subarray(b * width, (b + 1) * width) };
    achievedL = Math.min(achievedL, model.measure(cls));
    if (!model.holds(cls)) satisfied = false;
  }
  return { achievedL, satisfied };
}

/**
 * A table admits an l-diverse partition only if no SA value occurs in more than N/l rows
 * (Xiao & Tao's eligibility condition). Throws NoSolutionError with the numbers, never values.
 */
export function checkEligibility(req: DiversityRequirement, rows: number, method: string): void {
  const values = dominance(codeCounts(req.column), req.column.dictionary);
  const { most: max, distinct } = values;
  const l = distinctNeeded(req);
  if (max * l > rows) {
    const best = Math.min(distinct, Math.floor(rows / max));
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `no ${method} release satisfies ${req.model} with l = ${req.l} on ${req.attribute}: its most frequent value ` +
        `occurs in ${max} of ${rows} rows, more than N/l = ${(rows / l).toFixed(1)}, and an l-diverse partition ` +
        `exists only if no value occurs in more than N/l rows`,
      best >= LEAST_PROTECTIVE_L
        ? `use l ≤ ${best} (N / most frequent count = ${(rows / max).toFixed(2)}, ${distinct} distinct values)`
        : noDiversityHint(req.attribute, values),
    );
  }
}

/**
 * The released attributes marked `"scale": "numeric"` hold numbers, as Mondrian and
 * randomization require of theirs: the spec says so, and Slicing splits and discretizes them as
 * numbers (a text would read as NaN).
 */
export function checkNumericScales(spec: ReleaseSpec, table: EncodedTable): void {
  const rows = inputRows(spec, table);
  for (const a of releasedAttributes(spec, table)) {
    if (a.scale !== 'numeric') continue;
    checkNumbers(
      table.columns.find((c) => c.name === a.name)!,
      rows,
      `fix the value, or drop "scale": "numeric" from attributes.${a.name}`,
    );
  }
}

/** The released (non-identifying) attributes in input column order. */
export function releasedAttributes(spec: ReleaseSpec, table: EncodedTable): AttributeSpec[] {
  return table.columns
    .map((c) => spec.attributes.find((a) => a.name === c.name)!)
    .filter((a) => a.type !== 'identifying');
}

/**
 * Ids of the distinct tuples over code columns (in order of first appearance) and each row's
 * id. With no columns, every row has tuple 0.
 */
export function tupleIds(
  kernel: GroupingKernel,
  columns: readonly Int32Array[],
  domains: readonly number[],
  rows: number,
): { ids: Int32Array; count: number; keys: Int32Array[] } {
  if (columns.length === 0) return { ids: new Int32Array(rows), count: rows > 0 ? 1 : 0, keys: [] };
  const session = kernel.open(
    { columns, domains },
    columns.map(() => []),
  );
  try {
    const { groups, groupOf } = session.group(null);
    return { ids: groupOf.slice(), count: groups, keys: session.keys(groups).map((k) => k.slice()) };
  } finally {
    session.dispose();
  }
}

/** Minimum, mean and maximum of bucket sizes, for a person. */
export function sizeFacts(sizes: ArrayLike<number>): { min: number; mean: number; max: number } {
  let min = Number.POSITIVE_INFINITY;
  let max = 0;
  let total = 0;
  for (let i = 0; i < sizes.length; i++) {
    const s = sizes[i]!;
    min = Math.min(min, s);
    max = Math.max(max, s);
    total += s;
  }
  return sizes.length === 0 ? { min: 0, mean: 0, max: 0 } : { min, mean: total / sizes.length, max };
}

/** Counts per bin for a distribution of small positive integers (e.g. matching buckets). */
export function countBins(
  values: ArrayLike<number>,
  weights?: ArrayLike<number>,
): { label: string; from: number; to: number | null; count: number }[] {
  const edges = [1, 2, 3, 6, 11, 21, 51, 101, 501];
  const bins = edges.map((from, i) => {
    const next = edges[i + 1];
    const to = next === undefined ? null : next - 1;
    return {
      label: to === null ? `${from}+` : to === from ? `${from}` : `${from}–${to}`,
      from,
      to,
      count: 0,
    };
  });
  for (let i = 0; i < values.length; i++) {
    const v = values[i]!;
    let b = bins.length - 1;
    while (b > 0 && bins[b]!.from > v) b--;
    bins[b]!.count += weights ? weights[i]! : 1;
  }
  return bins.filter((b) => b.count > 0);
}

/** A key for a tuple of codes: mixed-radix number when it fits in 2^53, else a string. */
export function cellKeyer(domains: readonly number[]): (tuple: readonly number[]) => number | string {
  let product = 1;
  for (const d of domains) product *= Math.max(1, d);
  if (product <= Number.MAX_SAFE_INTEGER) {
    return (tuple) => {
      let k = 0;
      for (let j = 0; j < domains.length; j++) k = k * domains[j]! + tuple[j]!;
      return k;
    };
  }
  return (tuple) => tuple.join(',');
}
