/** Pieces every verifier shares: decoded tables, multiset counting, the failure that blocks publishing. */

import type { VerificationCheck } from '../contracts/report.ts';
import type { EncodedTable } from '../data/table.ts';
import { VerificationError } from '../errors.ts';
import { type AttributeSpec, isReleasedType } from '../release-spec/spec.ts';

/** A released table decoded to strings: column names and one string[] per column. */
export interface DecodedTable {
  readonly names: string[];
  readonly columns: string[][];
}

/** Joins cells into multiset keys; no cell contains it. */
export const SEP = '\u0000';

export function decodeTable(table: EncodedTable): DecodedTable {
  return {
    names: table.columns.map((c) => c.name),
    columns: table.columns.map((c) => Array.from(c.codes, (code) => c.dictionary[code]!)),
  };
}

/**
 * A released table as dictionary codes: `codes[c][row]` indexes `dictionaries[c]`, and equal
 * values of a column always have the same code, so rows compare as integer tuples.
 */
export interface CodedTable {
  readonly names: string[];
  readonly rowCount: number;
  readonly dictionaries: string[][];
  readonly codes: Int32Array[];
}

/** An encoded table as it is (duplicate dictionary entries merged), or a decoded one encoded. */
export function codedTable(table: EncodedTable | DecodedTable): CodedTable {
  if ('rowCount' in table) {
    const columns = table.columns.map((c) => canonical(c.dictionary, c.codes));
    return {
      names: table.columns.map((c) => c.name),
      rowCount: table.rowCount,
      dictionaries: columns.map((c) => c.dictionary),
      codes: columns.map((c) => c.codes),
    };
  }
  const dictionaries: string[][] = [];
  const codes = table.columns.map((values) => {
    const index = new Map<string, number>();
    const dictionary: string[] = [];
    const out = Int32Array.from(values, (v) => {
      let k = index.get(v);
      if (k === undefined) index.set(v, (k = dictionary.push(v) - 1));
      return k;
    });
    dictionaries.push(dictionary);
    return out;
  });
  return { names: table.names, rowCount: table.columns[0]?.length ?? 0, dictionaries, codes };
}

/** The codes with each repeated dictionary value mapped to its first entry. */
function canonical(dictionary: string[], codes: Int32Array): { dictionary: string[]; codes: Int32Array } {
  const first = new Map<string, number>();
  const remap = Int32Array.from(dictionary, (v, i) => {
    const k = first.get(v);
    if (k === undefined) first.set(v, i);
    return k ?? i;
  });
  for (let j = 0; j < codes.length; j++) {
    if (!(codes[j]! >= 0 && codes[j]! < dictionary.length)) {
      throw new VerificationError(
        'E_VERIFY',
        'verification failed, nothing was published: a released column holds codes outside its dictionary',
        'this is a bug in ppdp: please report it with the spec (not the data)',
      );
    }
  }
  if (first.size === dictionary.length) return { dictionary, codes };
  return { dictionary, codes: codes.map((c) => remap[c]!) };
}

/** Same names, same rows, same strings: the CSV and Arrow forms of one release. */
export function sameTable(a: DecodedTable, b: DecodedTable): boolean {
  return (
    a.names.join(SEP) === b.names.join(SEP) &&
    a.columns.every(
      (col, i) => col.length === b.columns[i]!.length && col.every((v, j) => v === b.columns[i]![j]),
    )
  );
}

/** Adds `by` to a multiset count; false (and no change) if it would go below zero. */
export function bump(map: Map<string, number>, key: string, by: number): boolean {
  const v = (map.get(key) ?? 0) + by;
  if (v < 0) return false;
  if (v === 0) map.delete(key);
  else map.set(key, v);
  return true;
}

/** Throws the error that stops publishing, listing every failed check. */
export function fail(checks: VerificationCheck[]): never {
  const failed = checks.filter((c) => !c.passed);
  throw new VerificationError(
    'E_VERIFY',
    `verification failed, nothing was published: ${failed.map((c) => `${c.name} (${c.detail})`).join('; ')}`,
    'this is a bug in ppdp: please report it with the spec (not the data)',
  );
}

/** The columns a release must hold: every input column but the identifying ones and the entity, in input order. */
export function releasedNames(input: EncodedTable, attributes: readonly AttributeSpec[]): string[] {
  const typeOf = new Map(attributes.map((a) => [a.name, a.type]));
  return input.columns.map((c) => c.name).filter((n) => isReleasedType(typeOf.get(n)));
}
