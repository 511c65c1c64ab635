/**
 * Persons in a generalization release, counted by the verifier from the input (docs/definitions.md,
 * "Several rows per person"): the entity column is never released, so each input row is taken
 * to its released class through the hierarchy rows, and a class's persons are the distinct
 * entity values of its rows. Written apart from the search's counting (src/methods/).
 */
import type { EncodedTable } from '../data/table.ts';
import type { AttributeSpec, PrivacyModelSpec } from '../release-spec/spec.ts';
import { checkClass, type SensitiveContext, type ValueCounts } from './models.ts';
import type { TupleCounts } from './tuples.ts';

/** What the verifier counted of persons. */
export interface PersonCounts {
  /** Per released class: the fewest persons its released rows can belong to. */
  readonly perClass: Int32Array;
  /** Persons with an input row not released in its class (or in a class not released). */
  readonly suppressed: number;
  /** Distinct persons in the input. */
  readonly persons: number;
  /** The input rows by released class: class g's are `rows[start[g], start[g + 1])`. */
  readonly byClass: { readonly rows: Int32Array; readonly start: Int32Array };
  /** Each input row's person, in [0, persons). */
  readonly personOf: Int32Array;
  /** Per released class: whether it releases every input row it generalizes. */
  readonly whole: Uint8Array;
}

/** The entity column of the input, when the spec names one (undefined: none named, or not read in). */
export function entityColumn(
  input: EncodedTable,
  attributes: readonly AttributeSpec[],
): { readonly name: string; readonly codes: Int32Array | undefined } | undefined {
  const name = attributes.find((a) => a.type === 'entity')?.name;
  if (name === undefined) return undefined;
  return { name, codes: input.columns.find((c) => c.name === name)?.codes };
}

/** Distinct persons in the input (the entity values that occur), or 0 without an entity column. */
export function inputPersons(input: EncodedTable, attributes: readonly AttributeSpec[]): number {
  const codes = entityColumn(input, attributes)?.codes;
  if (!codes) return 0;
  return densePersons(codes).persons;
}

/** Each row's person as an id in [0, persons), in order of first appearance. */
function densePersons(codes: Int32Array): { readonly of: Int32Array; readonly persons: number } {
  let top = 0;
  for (let r = 0; r < codes.length; r++) if (codes[r]! > top) top = codes[r]!;
  const id = new Int32Array(top + 1).fill(-1);
  const of = new Int32Array(codes.length);
  let persons = 0;
  for (let r = 0; r < codes.length; r++) {
    const c = codes[r]!;
    if (id[c]! < 0) id[c] = persons++;
    of[r] = id[c]!;
  }
  return { of, persons };
}

/**
 * Per released class, the fewest persons that can hold its released rows, and the persons
 * with a row not released. A class that releases every input row it generalizes holds all their
 * persons; one that releases fewer (never so in a generalization release, whose suppression
 * takes whole classes) is counted at its worst: the fewest persons whose rows add up to the
 * rows it releases, and each of its persons counts as suppressed.
 *
 * `qiCodes[q][r]` is input row r's released code in the q-th QI of `classes` (negative when
 * the hierarchy or the release lacks its value); `released[g]` the rows class g releases.
 */
export function countPersons(
  entity: Int32Array,
  rows: number,
  qiCodes: readonly ((r: number) => number)[],
  classes: TupleCounts,
  released: Int32Array,
): PersonCounts {
  const { of, persons } = densePersons(entity.subarray(0, rows));
  const classCount = classes.size;
  const tuple = new Int32Array(qiCodes.length);
  const classOf = new Int32Array(rows);
  const start = new Int32Array(classCount + 1);
  for (let r = 0; r < rows; r++) {
    for (let q = 0; q < qiCodes.length; q++) tuple[q] = qiCodes[q]!(r);
    const g = classes.find(tuple);
    classOf[r] = g;
    if (g >= 0) start[g + 1]!++;
  }
  for (let g = 0; g < classCount; g++) start[g + 1]! += start[g]!;
  const fill = start.slice(0, classCount);
  const byClass = new Int32Array(start[classCount]!);
  const rowsByClass = new Int32Array(start[classCount]!);
  const suppressedPerson = new Uint8Array(persons);
  for (let r = 0; r < rows; r++) {
    const g = classOf[r]!;
    if (g >= 0) {
      rowsByClass[fill[g]!] = r;
      byClass[fill[g]!++] = of[r]!;
    } else suppressedPerson[of[r]!] = 1;
  }
  const whole = new Uint8Array(classCount);
  // Per class: its rows per person (a scratch count per person, reset after the class).
  const count = new Int32Array(persons);
  const seen: number[] = [];
  const perClass = new Int32Array(classCount);
  for (let g = 0; g < classCount; g++) {
    seen.length = 0;
    for (let x = start[g]!; x < start[g + 1]!; x++) {
      const p = byClass[x]!;
      if (count[p] === 0) seen.push(p);
      count[p]!++;
    }
    const inputRows = start[g + 1]! - start[g]!;
    const out = released[g]!;
    if (out >= inputRows) {
      perClass[g] = seen.length;
      whole[g] = 1;
    } else {
      // Part of the class released: the fewest persons covering its released rows, and every
      // person of the class may have lost a row.
      const counts = seen.map((p) => count[p]!).sort((a, b) => b - a);
      let covered = 0;
      let n = 0;
      while (covered < out) covered += counts[n++]!;
      perClass[g] = n;
      for (const p of seen) suppressedPerson[p] = 1;
    }
    for (const p of seen) count[p] = 0;
  }
  let suppressed = 0;
  for (let p = 0; p < persons; p++) suppressed += suppressedPerson[p]!;
  return { perClass, suppressed, persons, byClass: { rows: rowsByClass, start }, personOf: of, whole };
}

/**
 * Per released class, its person-weighted counts of one sensitive attribute, recounted from the
 * input rows (docs/definitions.md, "Several rows per person"): each person of the class weighs
 * 1, shared over their rows in the class, so a row adds 1 / (its person's rows in the class) to
 * its value. `values[r]` is input row r's value.
 */
export function personWeightedCounts(counted: PersonCounts, values: (r: number) => string): ValueCounts[] {
  const { byClass, personOf, perClass } = counted;
  const { rows, start } = byClass;
  const mine = new Int32Array(counted.persons);
  const out: ValueCounts[] = [];
  for (let g = 0; g < perClass.length; g++) {
    for (let x = start[g]!; x < start[g + 1]!; x++) mine[personOf[rows[x]!]!]!++;
    const weights: ValueCounts = new Map();
    for (let x = start[g]!; x < start[g + 1]!; x++) {
      const r = rows[x]!;
      const v = values(r);
      weights.set(v, (weights.get(v) ?? 0) + 1 / mine[personOf[r]!]!);
    }
    for (let x = start[g]!; x < start[g + 1]!; x++) mine[personOf[rows[x]!]!] = 0;
    out.push(weights);
  }
  return out;
}

/**
 * A sensitive attribute's p(T, s) over persons, recounted from the input: each person weighs 1
 * over all their rows (suppressed or not), so a row adds 1 / (its person's rows) / persons.
 */
export function personWeightedTable(
  counted: PersonCounts,
  values: (r: number) => string,
): Map<string, number> {
  const { personOf, persons } = counted;
  const rows = new Int32Array(persons);
  for (let r = 0; r < personOf.length; r++) rows[personOf[r]!]!++;
  const table = new Map<string, number>();
  for (let r = 0; r < personOf.length; r++) {
    const v = values(r);
    table.set(v, (table.get(v) ?? 0) + 1 / rows[personOf[r]!]! / persons);
  }
  return table;
}

/**
 * A model on a sensitive attribute judged over one released class's persons: the formula on
 * the person-weighted counts with the class's persons as its size, and (t, δ) `sa` holding the
 * table's person-weighted shares (personWeightedTable); an l-diversity form also
 * needs at least l persons (one person's l values are all theirs). A class released in part
 * cannot be weighed by person (which rows went is unknown): it fails.
 */
export function checkPersonClass(
  model: PrivacyModelSpec,
  counted: PersonCounts,
  g: number,
  weights: ValueCounts,
  sa: SensitiveContext,
): { value: number; holds: boolean } {
  if (!counted.whole[g]) return { value: Number.NaN, holds: false };
  const persons = counted.perClass[g]!;
  const r = checkClass(model, persons, weights, sa);
  const least = 'l' in model ? Math.ceil(model.l) : 1;
  return { value: r.value, holds: r.holds && persons >= least };
}
