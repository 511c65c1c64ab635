/**
 * evaluate on a sensitive attribute of many values (an amount per row): the classes' SA counts
 * are sparse, so time and memory grow with the rows, where a classes × values matrix grew with
 * their product (past about 90,000 distinct amounts, a RangeError for its length).
 */
import { describe, expect, it } from 'vitest';
import type { EncodedColumn, EncodedTable } from '../../src/data/table.ts';
import { evaluateTable } from '../../src/evaluate/evaluate.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { type DisclosureMeasures, disclosureMeasures, modeCounts } from '../../src/metrics/disclosure.ts';

function table(source: string, columns: EncodedColumn[]): EncodedTable {
  return { source, rowCount: columns[0]!.codes.length, columns, delimiter: ',' };
}

/** A column of `rows` values, each a string, dictionary-encoded. */
function column(name: string, values: readonly string[]): EncodedColumn {
  const index = new Map<string, number>();
  const dictionary: string[] = [];
  const codes = Int32Array.from(values, (v) => {
    let c = index.get(v);
    if (c === undefined) index.set(v, (c = dictionary.push(v) - 1));
    return c;
  });
  return { name, dictionary, codes };
}

/** A fixed linear congruential stream in [0, 1). */
function stream(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

/**
 * The measures as evaluate took them before: the classes (rows sharing every QI string) as a
 * dense classes × values matrix, the original's classes likewise.
 */
function denseMeasures(
  released: EncodedTable,
  original: EncodedTable,
  qis: string[],
  sa: string,
): DisclosureMeasures {
  const classesOf = (t: EncodedTable) => {
    const cols = qis.map((q) => t.columns.find((c) => c.name === q)!);
    const ids = new Map<string, number>();
    const of = Int32Array.from({ length: t.rowCount }, (_, r) => {
      const key = cols.map((c) => c.dictionary[c.codes[r]!]).join('\u0000');
      let g = ids.get(key);
      if (g === undefined) ids.set(key, (g = ids.size));
      return g;
    });
    return { of, groups: ids.size };
  };
  const s = released.columns.find((c) => c.name === sa)!;
  const base = original.columns.find((c) => c.name === sa)!;
  const width = s.dictionary.length;
  const mine = classesOf(released);
  const counts = new Int32Array(mine.groups * width);
  for (let r = 0; r < released.rowCount; r++) counts[mine.of[r]! * width + s.codes[r]!]!++;
  const theirs = classesOf(original);
  const index = new Map(s.dictionary.map((v, c) => [v, c]));
  const originalCounts = new Int32Array(theirs.groups * width);
  for (let r = 0; r < original.rowCount; r++) {
    const c = index.get(base.dictionary[base.codes[r]!]!);
    if (c !== undefined) originalCounts[theirs.of[r]! * width + c]!++;
  }
  const perCode = new Int32Array(base.dictionary.length);
  for (const c of base.codes) perCode[c]!++;
  const share = new Map<string, number>();
  base.dictionary.forEach((v, c) => {
    if (perCode[c]! > 0) share.set(v, perCode[c]! / base.codes.length);
  });
  return disclosureMeasures(
    sa,
    { groups: mine.groups, width, counts, keep: () => true },
    modeCounts({ groups: theirs.groups, width, counts: originalCounts, keep: () => true }),
    Float64Array.from(s.dictionary, (v) => share.get(v) ?? 0),
    s.dictionary,
  );
}

function expectClose(a: DisclosureMeasures, b: DisclosureMeasures): void {
  expect(a.tDistance).toBe(b.tDistance);
  expect(a.accuracy).toEqual(b.accuracy);
  expect(a.release.distinctL).toBe(b.release.distinctL);
  for (const key of ['entropyL', 't', 'delta', 'knowledgeGain', 'accuracyGain'] as const) {
    const x = a.release[key]!;
    const y = b.release[key]!;
    expect(Math.abs(x - y), `${key}: ${x} vs ${y}`).toBeLessThanOrEqual(1e-12 * Math.max(1, Math.abs(y)));
  }
}

describe('evaluate on a sensitive attribute of many values', () => {
  it('gives the figures of the classes × values matrix on a table small enough for one', () => {
    const next = stream(7);
    const rows = 3000;
    const zip = Array.from({ length: rows }, () => String(10 + Math.floor(next() * 40)));
    const age = Array.from({ length: rows }, () => String(20 + Math.floor(next() * 8)));
    const income = Array.from({ length: rows }, () => (Math.floor(next() * 900) * 1.5).toFixed(2));
    const grade = income.map((v) => `g${Math.floor(Number(v) / 40)}`);
    const released = table('released', [
      column(
        'zip',
        zip.map((z) => `${z.slice(0, 1)}*`),
      ),
      column('age', age),
      column('income', income),
      column('grade', grade),
    ]);
    // The original: its own classes, and a few incomes the release does not hold.
    const original = table('original', [
      column('zip', zip),
      column('age', age),
      column(
        'income',
        income.map((v, r) => (r % 97 === 0 ? '0.25' : v)),
      ),
      column('grade', grade),
    ]);
    const e = evaluateTable({
      table: released,
      source: 'released',
      quasiIdentifiers: ['zip', 'age'],
      sensitive: ['income', 'grade'],
      original,
      threshold: 0.2,
      kernel: wasmGroupingKernel,
    });
    expect(e.disclosure.income!.tDistance).toBe('ordered');
    expect(e.disclosure.grade!.tDistance).toBe('equal');
    for (const sa of ['income', 'grade'])
      expectClose(e.disclosure[sa]!, denseMeasures(released, original, ['zip', 'age'], sa));
  });

  it('completes on 120,000 rows of distinct amounts (a matrix of 7.2·10⁹ counts), with the figures worked out by hand', () => {
    // Amount v (0 … n − 1, each once) in class ⌊v/2⌋: 150,000 classes of two adjacent amounts.
    // Codes follow another order than the amounts', so a class's values are sorted by amount.
    const n = 120_000;
    const amountOf = (r: number) => (r * 7919) % n;
    const pairs = new Int32Array(n);
    for (let r = 0; r < n; r++) pairs[r] = amountOf(r) >> 1;
    const amounts: EncodedColumn = {
      name: 'amount',
      dictionary: Array.from({ length: n }, (_, r) => String(amountOf(r))),
      codes: Int32Array.from({ length: n }, (_, r) => r),
    };
    const pair: EncodedColumn = {
      name: 'pair',
      dictionary: Array.from({ length: n / 2 }, (_, i) => String(i)),
      codes: pairs,
    };
    const e = evaluateTable({
      table: table('amounts', [pair, amounts]),
      source: 'amounts',
      quasiIdentifiers: ['pair'],
      sensitive: ['amount'],
      privacy: [
        { model: 'k-anonymity', k: 2 },
        { model: 'distinct-l-diversity', attribute: 'amount', l: 2 },
        { model: 'entropy-l-diversity', attribute: 'amount', l: 2 },
        { model: 'delta-disclosure', attribute: 'amount', delta: 12 },
      ],
      threshold: 0.2,
      kernel: wasmGroupingKernel,
    });
    expect(e.classes).toBe(n / 2);
    expect(e.kAchieved).toBe(2);
    expect(e.models!.map((m) => [m.model, m.satisfied, m.classesFailing])).toEqual([
      ['k-anonymity', true, 0],
      ['distinct-l-diversity', true, 0],
      ['entropy-l-diversity', true, 0],
      ['delta-disclosure', true, 0],
    ]);
    const d = e.disclosure.amount!;
    expect(d.tDistance).toBe('ordered');
    expect(d.release.distinctL).toBe(2);
    expect(d.release.entropyL).toBeCloseTo(2, 12);
    // Each amount has share 1/n of the table, 1/2 of its class.
    expect(d.release.delta).toBeCloseTo(Math.log(n / 2), 12);
    const p = 1 / 2;
    const q = 1 / n;
    const js =
      p * Math.log(p / ((p + q) / 2)) + q * Math.log(q / ((p + q) / 2)) + 0.5 * (n - 2) * q * Math.LN2;
    expect(d.release.knowledgeGain).toBeCloseTo(js, 10);
    expect(d.release.accuracyGain).toBeCloseTo(1 / 2 - 1 / n, 12);
    // Ordered EMD of class i (amounts 2i, 2i + 1): the running difference is −(j + 1)/n before
    // them, 1/2 − (2i + 1)/n and 1 − (2i + 2)/n at them, (n − j − 1)/n after.
    let t = 0;
    for (let i = 0; i < n / 2; i++) {
      const before = (2 * i * (2 * i + 1)) / 2;
      const after = ((n - 2 * i - 3) * (n - 2 * i - 2)) / 2;
      const sum = before + Math.abs(n / 2 - (2 * i + 1)) + (n - 2 * i - 2) + after;
      t = Math.max(t, sum / n / (n - 1));
    }
    expect(d.release.t).toBeCloseTo(t, 9);
  });
});
