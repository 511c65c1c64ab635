/**
 * The verifier's class sums: the WASM kernel (assembly/classes.ts) and its plain-TS reference
 * give the same classes, in the same order, with the same keys, sums and rows' classes.
 */
import { describe, expect, it } from 'vitest';
import { Random } from '../../src/util/random.ts';
import {
  type ClassSumsKernel,
  type Hashed,
  KEY,
  type SummedClasses,
  tsClassSums,
  wasmClassSums,
} from '../../src/verify/class-sums.ts';
import { dictionaryHashes } from '../../src/verify/fingerprint.ts';

/** Columns of `n` random codes over `domains`, hashed as the verifier hashes them (`lanes` words a code). */
function columns(
  random: Random,
  n: number,
  domains: readonly number[],
  lanes: number,
  first: number,
): Hashed {
  return {
    codes: domains.map((d) => Int32Array.from({ length: n }, () => random.below(d))),
    hashes: domains.map((d, i) =>
      dictionaryHashes(
        first + i,
        Array.from({ length: d }, (_, v) => `value ${v}`),
        lanes,
      ),
    ),
  };
}

const used = (s: SummedClasses) => ({
  lanes: s.lanes,
  size: s.size,
  keys: Array.from(s.keys.subarray(0, KEY * s.size)),
  sums: Array.from(s.sums.subarray(0, s.lanes * s.size)),
  classOf: s.classOf ? Array.from(s.classOf) : undefined,
});

const CASES: { name: string; n: number; qi: number[]; other: number[] }[] = [
  // Leading columns folded ahead (their product within the prefix table), then the rest.
  { name: 'few classes, a folded prefix', n: 5000, qi: [2, 74, 5, 7, 16, 41], other: [14] },
  // A first column too wide to fold ahead: every column folded per row; most rows a class of
  // their own, so the lookup grows many times.
  { name: 'near-unique rows, no prefix', n: 40_000, qi: [100_000, 2, 90], other: [10, 3] },
  // More rows than one block of codes copied into the instance.
  { name: 'rows over several blocks', n: 150_000, qi: [12, 30, 400], other: [] },
  { name: 'no other column, one QI', n: 3000, qi: [7], other: [] },
  { name: 'no rows', n: 0, qi: [3, 4], other: [2] },
];

describe('class sums', () => {
  for (const c of CASES) {
    for (const kind of ['part', 'shard'] as const) {
      it(`${c.name} (${kind}): the WASM kernel gives what the reference gives`, () => {
        const random = new Random(c.n + c.qi.length);
        const qi = columns(random, c.n, c.qi, KEY, 0);
        const other = columns(random, c.n, c.other, 2, c.qi.length);
        const mask = kind === 'shard' ? Uint32Array.of(0x12345678, 0x9abcdef0) : undefined;
        const sum = (k: ClassSumsKernel) => used(k.sum(c.n, qi, other, mask));
        const reference = sum(tsClassSums);
        expect(reference.lanes).toBe(kind === 'shard' ? 5 : 3);
        expect(reference.classOf === undefined).toBe(kind === 'shard');
        // Every row counted once.
        let rows = 0;
        for (let i = 0; i < reference.size; i++) rows += reference.sums[reference.lanes * i]!;
        expect(rows).toBe(c.n);
        expect(sum(wasmClassSums)).toEqual(reference);
      });
    }
  }

  it('gives the same sums on an instance a session before left dirty', () => {
    const random = new Random(9);
    const a = { qi: columns(random, 20_000, [50, 60], KEY, 0), other: columns(random, 20_000, [5], 2, 2) };
    const b = { qi: columns(random, 30_000, [3000, 7], KEY, 0), other: columns(random, 30_000, [9], 2, 2) };
    const first = used(wasmClassSums.sum(20_000, a.qi, a.other));
    used(wasmClassSums.sum(30_000, b.qi, b.other, Uint32Array.of(1, 2)));
    expect(used(wasmClassSums.sum(20_000, a.qi, a.other))).toEqual(first);
    expect(first).toEqual(used(tsClassSums.sum(20_000, a.qi, a.other)));
  });
});
