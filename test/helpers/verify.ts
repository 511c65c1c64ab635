/** Helpers of the verifier tests: small tables encoded as the input reader encodes them, and failed checks. */
import { expect } from 'vitest';
import type { EncodedTable } from '../../src/data/table.ts';
import { VerificationError } from '../../src/errors.ts';

/** `rows` of `names` as an encoded table (`;`-delimited input), dictionaries in order of first use. */
export function encodeRows(names: string[], rows: string[][]): EncodedTable {
  return {
    source: 'input.csv',
    rowCount: rows.length,
    delimiter: ';',
    columns: names.map((name, c) => {
      const dictionary: string[] = [];
      const codes = Int32Array.from(rows, (row) => {
        const k = dictionary.indexOf(row[c]!);
        return k >= 0 ? k : dictionary.push(row[c]!) - 1;
      });
      return { name, dictionary, codes };
    }),
  };
}

/** The names of the checks that failed (the verifier must throw). */
export function failedChecks(run: () => unknown): string[] {
  try {
    run();
  } catch (e) {
    expect(e).toBeInstanceOf(VerificationError);
    return [...(e as Error).message.matchAll(/(?:: |; )([a-z-]+) \(/g)].map((m) => m[1]!);
  }
  throw new Error('the verifier passed a tampered release');
}
