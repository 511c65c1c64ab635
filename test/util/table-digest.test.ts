/**
 * The table digest that keys every random stream: a sum over rows, so the pieces of an input
 * read apart (each with its own dictionaries) add up to the whole table's; checked against the
 * verifier's implementation, written from the definition in docs/definitions.md.
 */
import { describe, expect, it } from 'vitest';
import { CellDigest, tableDigest } from '../../src/data/digest.ts';
import { readTable } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { tsDigestRows } from '../../src/kernels/digest/reference.ts';
import { wasmDigestRows } from '../../src/kernels/digest/wasm.ts';
import { Random } from '../../src/util/random.ts';
import { documentedTableDigest } from '../../src/verify/randomization.ts';

/** A table of `rows` (cells as strings), each column's dictionary in the order `order` gives. */
function tableOf(names: string[], rows: string[][], order: 'first' | 'reversed' = 'first'): EncodedTable {
  const columns = names.map((name, c) => {
    let dictionary = [...new Set(rows.map((r) => r[c]!))];
    if (order === 'reversed') dictionary = dictionary.reverse();
    const code = new Map(dictionary.map((v, i) => [v, i]));
    return { name, dictionary, codes: Int32Array.from(rows, (r) => code.get(r[c]!)!) };
  });
  return { source: 't.csv', rowCount: rows.length, columns, delimiter: ',' };
}

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

function randomRows(seed: number, n: number): string[][] {
  const random = Random.fromKey(Uint32Array.of(seed, 1, 2, 3));
  const values = ['a', 'b', 'é', '日本', '', '1,5', 'x'.repeat(40), '🙂'];
  return Array.from({ length: n }, () =>
    Array.from({ length: 3 }, () => values[random.below(values.length)]!),
  );
}

describe('the table digest', () => {
  it('is the sum of its pieces, whatever their dictionaries and order of reading', () => {
    const names = ['age', 'zip', 'diagnosis'];
    const rows = randomRows(7, 500);
    const whole = hex(tableDigest(tableOf(names, rows)));
    for (const cuts of [
      [0, 500],
      [0, 1, 250, 500],
      [0, 120, 121, 400, 500],
    ]) {
      const pieces = cuts.slice(1).map((end, i) => tableOf(names, rows.slice(cuts[i]!, end), 'reversed'));
      // Each piece digested apart, merged in reverse: a sum has no order.
      const merged = new CellDigest();
      for (const p of pieces.reverse()) merged.merge(new CellDigest().add(p).state());
      expect(hex(merged.digest())).toBe(whole);
    }
  });

  it('is the verifier’s, recomputed from the definition, on Adult and on random tables', () => {
    const adult = readTable('examples/adult/adult.csv');
    expect(hex(tableDigest(adult))).toBe(documentedTableDigest(adult).toString('hex'));
    for (const seed of [1, 2, 3]) {
      const t = tableOf(['a', 'b', 'c'], randomRows(seed, 300), 'reversed');
      expect(hex(tableDigest(t))).toBe(documentedTableDigest(t).toString('hex'));
    }
  });

  it('sums its rows alike in the WASM kernel and in the plain-TS loop', () => {
    const random = new Random(4);
    const column = (n: number, values: number) => {
      const dictionary = Array.from({ length: values }, (_, v) => `v${v}`);
      return { dictionary, codes: Int32Array.from({ length: n }, () => random.below(values)) };
    };
    for (const [n, domains] of [
      // Leading columns folded ahead, then the rest per row; more rows than one block of codes.
      [150_000, [2, 74, 5, 7, 16, 41, 8, 2, 14]],
      // A first column too wide to fold ahead: every column mixed per row.
      [20_000, [50_000, 3, 9]],
      [1, [4]],
      [0, [3, 3]],
    ] as const) {
      const table: EncodedTable = {
        source: 't.csv',
        rowCount: n,
        columns: domains.map((d, c) => ({ name: `c${c}`, ...column(n, d) })),
        delimiter: ',',
      };
      const reference = new CellDigest(tsDigestRows).add(table);
      const wasm = new CellDigest(wasmDigestRows).add(table);
      expect(wasm.state(), `${n} rows`).toEqual(reference.state());
      expect(hex(wasm.digest())).toBe(hex(reference.digest()));
    }
  });

  it('binds a row’s cells: swapping one column’s values between two rows changes it', () => {
    const rows = [
      ['30', '10115', 'flu'],
      ['41', '80331', 'asthma'],
      ['30', '10115', 'flu'],
    ];
    const swapped = rows.map((r) => [...r]);
    [swapped[0]![2], swapped[1]![2]] = [swapped[1]![2]!, swapped[0]![2]!];
    const names = ['age', 'zip', 'diagnosis'];
    expect(hex(tableDigest(tableOf(names, swapped)))).not.toBe(hex(tableDigest(tableOf(names, rows))));
    // Each column's values are the same: only which values share a row differs.
    expect(hex(tableDigest(tableOf(names, rows)))).toBe(hex(tableDigest(tableOf(names, rows, 'reversed'))));
    // Column names count, and a repeated row counts twice.
    expect(hex(tableDigest(tableOf(['age', 'zip', 'dx'], rows)))).not.toBe(
      hex(tableDigest(tableOf(names, rows))),
    );
    expect(hex(tableDigest(tableOf(names, rows.slice(0, 2))))).not.toBe(
      hex(tableDigest(tableOf(names, rows))),
    );
  });

  it('refuses to merge a piece with other columns', () => {
    const a = new CellDigest().add(tableOf(['x', 'y'], [['1', '2']]));
    expect(() => a.merge(new CellDigest().add(tableOf(['x', 'z'], [['1', '2']])).state())).toThrow(/columns/);
  });
});
