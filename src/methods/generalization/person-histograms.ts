/**
 * With an entity column, a sensitive attribute's per-class counts over persons (docs/definitions.md,
 * "Several rows per person"): each person of a class weighs 1, split evenly over their rows
 * there, so the report's and explore's disclosure figures are the ones the models judge.
 */
import type { Prepared } from './prepared.ts';

/**
 * Per class, person-weighted counts `counts[g * width + s]` of the sensitive attribute whose
 * value per distinct tuple is `values[t]`, the tuples grouped by `groupOf` into `groups` classes.
 * A class's counts add up to its persons.
 */
export function personClassHistograms(
  prepared: Pick<Prepared, 'tuples'> & { readonly entity: NonNullable<Prepared['entity']> },
  groupOf: ArrayLike<number>,
  groups: number,
  values: Int32Array,
  width: number,
): Float64Array {
  const { of, codes } = prepared.entity;
  const counts = prepared.tuples.counts;
  // The tuples by person (a counting sort): person e's are order[start[e]..start[e + 1]).
  const start = new Int32Array(codes + 1);
  for (let t = 0; t < values.length; t++) start[of[t]! + 1]!++;
  for (let e = 0; e < codes; e++) start[e + 1]! += start[e]!;
  const fill = start.slice(0, codes);
  const order = new Int32Array(values.length);
  for (let t = 0; t < values.length; t++) order[fill[of[t]!]!++] = t;
  const weighted = new Float64Array(groups * width);
  // One person's rows per class (a scratch count, reset after each person).
  const rows = new Float64Array(groups);
  for (let e = 0; e < codes; e++) {
    const from = start[e]!;
    const to = start[e + 1]!;
    for (let x = from; x < to; x++) rows[groupOf[order[x]!]!]! += counts[order[x]!]!;
    for (let x = from; x < to; x++) {
      const t = order[x]!;
      const g = groupOf[t]!;
      weighted[g * width + values[t]!]! += counts[t]! / rows[g]!;
    }
    for (let x = from; x < to; x++) rows[groupOf[order[x]!]!] = 0;
  }
  return weighted;
}

/** p(T, s) over persons: each person weighs 1 over all their rows (the models' table distribution). */
export function personTable(
  prepared: Pick<Prepared, 'tuples'> & { readonly entity: NonNullable<Prepared['entity']> },
  values: Int32Array,
  width: number,
): Float64Array {
  const all = personClassHistograms(prepared, new Int32Array(values.length), 1, values, width);
  for (let s = 0; s < width; s++) all[s]! /= prepared.entity.persons;
  return all;
}
