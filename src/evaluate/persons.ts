/**
 * `ppdp evaluate` with an entity column (several rows per person, docs/definitions.md): the
 * released table does not say whose each row is, so the input's rows are taken to their
 * released classes through the hierarchies at the release's node, as the verifier takes them,
 * and every figure shown for a sensitive attribute (l, t, δ, the models on it), k, the class
 * sizes and the population estimates count persons, each weighing 1 in a class, split evenly
 * over their rows' values there.
 */
import { modelOf } from '../catalogue/catalogue.ts';
import type { EncodedColumn, EncodedTable } from '../data/table.ts';
import { type DisclosureMeasures, disclosureMeasures } from '../metrics/disclosure.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';
import { maxOf } from '../util/extent.ts';
import { emptyRecord } from '../util/record.ts';
import { releasedCodesAtNode } from '../verify/at-node.ts';
import {
  checkPersonClass,
  countPersons,
  type PersonCounts,
  personWeightedCounts,
  personWeightedTable,
} from '../verify/entity.ts';
import { checkClass, type SensitiveContext } from '../verify/models.ts';
import { TupleCounts } from '../verify/tuples.ts';

export interface PersonSetting {
  /** The entity column of the original table. */
  readonly entity: string;
  /** The release's node (levels by QI), from its report; without it persons cannot be placed. */
  readonly node?: Readonly<Record<string, number>> | undefined;
}

/** The released table's classes as evaluate finds them: the distinct QI tuples. */
export interface ReleasedClasses {
  readonly qis: readonly EncodedColumn[];
  /** Per QI, each class's code. */
  readonly columns: readonly Int32Array[];
  readonly counts: Int32Array;
  readonly keep: (g: number) => boolean;
}

export interface PersonFigures {
  readonly counted: PersonCounts;
  /** Fewest persons in a released class. */
  readonly kAchieved: number;
  /** The released classes' persons and rows, class by class: the class sizes and population estimates count persons. */
  readonly released: { readonly persons: number[]; readonly rows: number[] };
  readonly disclosure: Record<string, DisclosureMeasures>;
  /** Per model (in the given order): null for one not judged per class here (a release model). */
  readonly models: ({ satisfied: boolean; worst: number; classesFailing: number } | null)[];
}

/**
 * Persons placed in the released classes, or a reason they cannot be: the input lacks the
 * entity column, the node is unknown, or a hierarchy is missing.
 */
export function personFigures(
  setting: PersonSetting,
  original: EncodedTable,
  released: ReleasedClasses,
  sensitive: readonly EncodedColumn[],
  hierarchies: ReadonlyMap<string, string[][]> | undefined,
  contexts: ReadonlyMap<string, SensitiveContext>,
  privacy: readonly PrivacyModelSpec[],
  isReleaseModel: (m: PrivacyModelSpec) => boolean,
): PersonFigures | string {
  const entity = original.columns.find((c) => c.name === setting.entity);
  if (!entity) return `the original table has no entity column ${setting.entity}`;
  const node = setting.node;
  if (!node) return 'the release’s node is unknown (evaluate a release folder holding its report.json)';
  const names = released.qis.map((q) => q.name);
  if (names.some((n) => node[n] === undefined))
    return 'the release’s node does not name every quasi-identifier';
  if (names.some((n) => !hierarchies?.get(n) && node[n] !== 0))
    return 'a generalized quasi-identifier has no hierarchy here';
  if (names.some((n) => !original.columns.some((c) => c.name === n)))
    return 'the original table lacks a quasi-identifier';
  const toReleased = releasedCodesAtNode(
    original,
    names,
    names.map(() => true),
    released.qis.map((q) => new Map(q.dictionary.map((v, c) => [v, c]))),
    node,
    hierarchies ?? new Map(),
  );
  const classes = new TupleCounts(
    names.length,
    released.qis.map((q) => q.dictionary.length + 2),
  );
  const groups = released.counts.length;
  const tuple = new Int32Array(names.length);
  const out = new Int32Array(groups);
  for (let g = 0; g < groups; g++) {
    for (let q = 0; q < names.length; q++) tuple[q] = released.columns[q]![g]!;
    const id = classes.intern(tuple);
    // A suppressed (all-`*`) class releases no input row as such.
    out[id] = released.keep(g) ? released.counts[g]! : 0;
  }
  const inputCodes = names.map((n) => original.columns.find((c) => c.name === n)!.codes);
  const qiCodes = toReleased.map((to, q) => (r: number) => to[inputCodes[q]![r]!]!);
  const counted = countPersons(entity.codes, original.rowCount, qiCodes, classes, out);
  const kept = { persons: [] as number[], rows: [] as number[] };
  for (let g = 0; g < groups; g++) {
    if (!released.keep(g)) continue;
    kept.persons.push(counted.perClass[g]!);
    kept.rows.push(released.counts[g]!);
  }
  const kAchieved = kept.persons.reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
  const weights = new Map<string, ReturnType<typeof personWeightedCounts>>();
  const tables = new Map<string, Map<string, number>>();
  const disclosure = emptyRecord<DisclosureMeasures>();
  for (const sa of sensitive) {
    const column = original.columns.find((c) => c.name === sa.name);
    if (!column) return `the original table lacks the sensitive attribute ${sa.name}`;
    const cellOf = (r: number) => column.dictionary[column.codes[r]!]!;
    const perClass = personWeightedCounts(counted, cellOf);
    const table = personWeightedTable(counted, cellOf);
    weights.set(sa.name, perClass);
    tables.set(sa.name, table);
    // The released values first (their codes), then any value only the input holds.
    const values = [...sa.dictionary];
    const index = new Map(values.map((v, c) => [v, c]));
    for (const v of table.keys()) if (!index.has(v)) index.set(v, values.push(v) - 1);
    const width = values.length;
    const counts = new Float64Array(groups * width);
    for (let g = 0; g < groups; g++) for (const [v, w] of perClass[g]!) counts[g * width + index.get(v)!] = w;
    const distribution = Float64Array.from(values, (v) => table.get(v) ?? 0);
    const keep = (g: number) => released.keep(g) && counted.whole[g] === 1;
    disclosure[sa.name] = disclosureMeasures(
      sa.name,
      { groups, width, counts, keep },
      originalModes(original, names, counted, cellOf),
      distribution,
      values,
      true,
    );
  }
  const models = privacy.map((model) => {
    if (isReleaseModel(model)) return null;
    const attribute = 'attribute' in model ? model.attribute : undefined;
    let satisfied = true;
    let worst: number | undefined;
    let classesFailing = 0;
    const higherIsBetter = modelOf(model).measure.higherIsBetter;
    for (let g = 0; g < groups; g++) {
      if (!released.keep(g)) continue;
      const r =
        attribute === undefined
          ? checkClass(model, counted.perClass[g]!, undefined, undefined)
          : checkPersonClass(model, counted, g, weights.get(attribute)?.[g] ?? new Map(), {
              ...contexts.get(attribute)!,
              table: tables.get(attribute) ?? new Map(),
              rows: undefined,
            });
      if (!r.holds) {
        satisfied = false;
        classesFailing++;
      }
      if (worst === undefined || (higherIsBetter ? r.value < worst : r.value > worst)) worst = r.value;
    }
    return { satisfied, worst: worst ?? Number.NaN, classesFailing };
  });
  return {
    counted,
    kAchieved: Number.isFinite(kAchieved) ? kAchieved : 0,
    released: kept,
    disclosure,
    models,
  };
}

/** The input's own classes (equal QI values), each person weighing 1 in theirs: most-frequent-value guesses. */
function originalModes(
  original: EncodedTable,
  names: readonly string[],
  counted: PersonCounts,
  cellOf: (r: number) => string,
): { correct: number; rows: number } {
  const codes = names.map((n) => original.columns.find((c) => c.name === n)!.codes);
  const classOf = new Map<string, number[]>();
  for (let r = 0; r < original.rowCount; r++) {
    const key = codes.map((c) => c[r]!).join(',');
    const rows = classOf.get(key);
    if (rows) rows.push(r);
    else classOf.set(key, [r]);
  }
  const mine = new Int32Array(counted.persons);
  let correct = 0;
  let persons = 0;
  for (const rows of classOf.values()) {
    for (const r of rows) mine[counted.personOf[r]!]!++;
    const weights = new Map<string, number>();
    for (const r of rows) {
      const w = 1 / mine[counted.personOf[r]!]!;
      weights.set(cellOf(r), (weights.get(cellOf(r)) ?? 0) + w);
      persons += w;
    }
    for (const r of rows) mine[counted.personOf[r]!] = 0;
    correct += maxOf(weights.values());
  }
  return { correct, rows: persons };
}
