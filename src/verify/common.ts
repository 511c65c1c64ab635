/** Pieces every verifier shares: decoded tables, multiset counting, the failure that blocks publishing. */
import type { EncodedTable } from '../data/table.ts';
import { VerificationError } from '../errors.ts';
import type { VerificationCheck } from '../report/types.ts';

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
