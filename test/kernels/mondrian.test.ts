import { describe, expect, it } from 'vitest';
import { KernelError } from '../../src/errors.ts';
import type { MondrianInput, MondrianKernel, MondrianSession } from '../../src/kernels/mondrian/kernel.ts';
import { tsMondrianKernel } from '../../src/kernels/mondrian/reference.ts';
import { wasmMondrianKernel } from '../../src/kernels/mondrian/wasm.ts';
import {
  type MondrianDim,
  type PartitionProblem,
  type PartitionResult,
  partitionMondrian,
} from '../../src/methods/mondrian/partition.ts';
import { prepareMondrian } from '../../src/methods/mondrian/prepare.ts';
import { buildModels } from '../../src/models/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type PrivacyModelSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { TINY_MONDRIAN_INPUT } from '../helpers/kernels.ts';

const SPEC = new URL('../../examples/adult-mondrian/release.json', import.meta.url).pathname;

/** The first index where two arrays differ, or −1 (deep equality of 30k-element arrays is slow). */
function firstDiff(a: ArrayLike<number>, b: ArrayLike<number>): number {
  if (a.length !== b.length) return Math.min(a.length, b.length);
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return i;
  return -1;
}

function same(a: PartitionResult, b: PartitionResult) {
  expect(a.count).toBe(b.count);
  expect(a.splits).toBe(b.splits);
  expect(a.attempts).toBe(b.attempts);
  for (const key of ['start', 'end', 'extent', 'hist', 'rowOrder'] as const) {
    expect(firstDiff(a[key], b[key]), key).toBe(-1);
  }
}

/** A random hierarchy over `domain` keys: each level groups the labels below into about half. */
function randomLevels(rng: Random, domain: number, height: number): Int32Array[] {
  const levels = [Int32Array.from({ length: domain }, (_, c) => c)];
  let labels = domain;
  for (let l = 1; l < height; l++) {
    const below = levels[l - 1]!;
    const next = Math.max(1, labels >> 1);
    const parent = Int32Array.from({ length: labels }, () => rng.below(next));
    levels.push(Int32Array.from(below, (x) => parent[x]!));
    labels = next;
  }
  levels.push(new Int32Array(domain)); // single root
  return levels;
}

/** A random problem: numeric, ordinal and nominal dimensions, optional SA models. */
function randomProblem(
  rng: Random,
  n: number,
  mode: 'strict' | 'relaxed',
  privacy: PrivacyModelSpec[],
): PartitionProblem {
  const kinds = ['numeric', 'ordinal', 'nominal'] as const;
  const dims: MondrianDim[] = Array.from({ length: 1 + rng.below(4) }, (_, i) => {
    const kind = kinds[rng.below(3)]!;
    // Small domains count keys; wide ones (numeric with many values) take the selection path.
    const domain = 1 + rng.below(rng.below(3) === 0 ? 5000 : 40);
    // Skewed keys, so medians have many ties.
    const keys = Int32Array.from({ length: n }, () => Math.min(domain - 1, rng.below(domain) * rng.below(2)));
    if (kind === 'numeric') {
      return {
        name: `d${i}`,
        kind,
        keys,
        domain,
        values: Float64Array.from({ length: domain }, (_, v) => v * 1.5),
        levels: null,
        labels: null,
        leaves: null,
        distinct: domain,
      };
    }
    const levels = randomLevels(rng, domain, 1 + rng.below(3));
    const leaves = levels.map((t) => {
      const count = new Int32Array(Math.max(...t) + 1);
      for (const x of t) count[x]!++;
      return count;
    });
    return {
      name: `d${i}`,
      kind,
      keys,
      domain,
      values: null,
      levels,
      labels: leaves.map((c, l) => Array.from(c, (_, x) => `${l}:${x}`)),
      leaves,
      distinct: domain,
    };
  });
  const width = 1 + rng.below(6);
  const sa = Int32Array.from({ length: n }, () => rng.below(width));
  const distribution = new Float64Array(width);
  for (const c of sa) distribution[c]! += 1 / n;
  const sensitive = [
    {
      name: 's',
      column: { name: 's', dictionary: Array.from({ length: width }, (_, c) => `v${c}`), codes: sa },
      hierarchy: undefined,
      order: Array.from({ length: width }, (_, c) => c),
      distribution,
    },
  ];
  return {
    rows: n,
    dims,
    models: buildModels(privacy, n, 'test.json', sensitive),
    sensitive: [{ name: 's', codes: sa, width }],
    mode,
  };
}

describe('Mondrian kernels: WASM equals the TS reference', () => {
  const base = loadSpec(SPEC);
  const table = readInput(base);
  const adult = (privacy: PrivacyModelSpec[], mode: 'strict' | 'relaxed'): ReleaseSpec => ({
    ...base,
    privacy,
    method: { name: 'mondrian', mode, measures: false },
  });

  it.each([
    ['strict', 2, false],
    ['strict', 25, true],
    ['relaxed', 5, false],
    ['relaxed', 10, true],
  ] as const)('on Adult, %s, k = %i, l-diversity %s', (mode, k, diverse) => {
    const privacy: PrivacyModelSpec[] = [{ model: 'k-anonymity', k }];
    if (diverse) privacy.push({ model: 'entropy-l-diversity', attribute: 'occupation', l: 3 });
    const { problem } = prepareMondrian(adult(privacy, mode), table);
    for (const relaxed of mode === 'relaxed' ? (['balanced-first', 'strict-first'] as const) : [undefined]) {
      const p = { ...problem, relaxed };
      const wasm = partitionMondrian(p, wasmMondrianKernel);
      same(wasm, partitionMondrian(p, tsMondrianKernel));
      expect(wasm.count).toBeGreaterThan(10);
      const sorted = Int32Array.from(wasm.rowOrder).sort();
      expect(
        firstDiff(
          sorted,
          Int32Array.from({ length: table.rowCount }, (_, r) => r),
        ),
      ).toBe(-1);
    }
  });

  it('on random problems, including n = 1, n = 2 and heavy ties', () => {
    const rng = new Random(5);
    for (const n of [1, 2, 3, 7, 64, 500, 2000]) {
      for (let trial = 0; trial < 6; trial++) {
        const mode = trial % 2 === 0 ? 'strict' : 'relaxed';
        const k = 1 + rng.below(Math.max(1, Math.min(n, 8)));
        const privacy: PrivacyModelSpec[] = [{ model: 'k-anonymity', k }];
        if (trial % 3 === 1) privacy.push({ model: 'distinct-l-diversity', attribute: 's', l: 2 });
        if (trial % 3 === 2)
          privacy.push({ model: 't-closeness', attribute: 's', t: 0.4, distance: 'equal' });
        const problem = randomProblem(rng, n, mode, privacy);
        for (const relaxed of ['balanced-first', 'strict-first'] as const) {
          const p = { ...problem, relaxed };
          const wasm = partitionMondrian(p, wasmMondrianKernel);
          same(wasm, partitionMondrian(p, tsMondrianKernel));
          // Every final partition is a disjoint range covering the rows.
          let covered = 0;
          for (let q = 0; q < wasm.count; q++) covered += wasm.end[q]! - wasm.start[q]!;
          expect(covered).toBe(n);
        }
      }
    }
  });

  it('step by step on random ranges: stats, medians, cuts and groups move records identically', () => {
    const rng = new Random(9);
    for (const n of [1, 5, 300]) {
      const problem = randomProblem(rng, n, 'relaxed', [{ model: 'k-anonymity', k: 1 }]);
      const input: MondrianInput = {
        keys: problem.dims.map((d) => d.keys),
        domains: problem.dims.map((d) => d.domain),
        hierarchies: problem.dims.map((d) => d.levels),
        sensitive: problem.sensitive.map((s) => s.codes),
        sensitiveWidths: problem.sensitive.map((s) => s.width),
      };
      const sessions = [wasmMondrianKernel, tsMondrianKernel].map((k) => k.open(input));
      const [a, b] = sessions as [MondrianSession, MondrianSession];
      for (let step = 0; step < 200; step++) {
        const start = rng.below(n);
        const end = start + 1 + rng.below(n - start);
        const dim = rng.below(problem.dims.length);
        for (const s of sessions) s.stats(start, end);
        expect(Array.from(a.out)).toEqual(Array.from(b.out));
        const lo = a.out[3 * dim]!;
        const hi = a.out[3 * dim + 1]!;
        const lca = a.out[3 * dim + 2]!;
        const op = rng.below(3);
        if (op === 0) {
          for (const s of sessions) s.median(start, end, dim, lo, hi, (end - start) >> 1, -1, 0);
          expect(Array.from(a.out.subarray(0, 3))).toEqual(Array.from(b.out.subarray(0, 3)));
          const [value, below, equal] = [a.out[0]!, a.out[1]!, a.out[2]!];
          const quota = rng.below(equal + 1);
          const dim2 = rng.below(2) === 0 ? -1 : rng.below(problem.dims.length);
          let value2 = 0;
          let q = quota;
          if (dim2 >= 0 && quota < equal) {
            for (const s of sessions)
              s.median(start, end, dim2, 0, problem.dims[dim2]!.domain - 1, quota, dim, value);
            expect(Array.from(a.out.subarray(0, 3))).toEqual(Array.from(b.out.subarray(0, 3)));
            value2 = a.out[0]!;
            q = quota - a.out[1]!;
          }
          const d2 = dim2 >= 0 && quota < equal ? dim2 : -1;
          const counted = sessions.map((s) => s.cut(start, end, dim, value, q, d2, value2, false));
          expect(counted[0]).toBe(counted[1]);
          expect(counted[0]).toBe(below + quota);
          expect(Array.from(a.hist.subarray(0, 2 * a.histWidth))).toEqual(
            Array.from(b.hist.subarray(0, 2 * b.histWidth)),
          );
          const moved = sessions.map((s) => s.cut(start, end, dim, value, q, d2, value2, true));
          expect(moved).toEqual(counted);
        } else if (lca > 0) {
          const level = rng.below(lca);
          const parts = sessions.map((s) => s.group(start, end, dim, level, false));
          expect(parts[0]).toBe(parts[1]);
          expect(Array.from(a.bounds.subarray(0, parts[0]))).toEqual(
            Array.from(b.bounds.subarray(0, parts[1])),
          );
          expect(Array.from(a.hist.subarray(0, parts[0]! * a.histWidth))).toEqual(
            Array.from(b.hist.subarray(0, parts[1]! * b.histWidth)),
          );
          expect(sessions.map((s) => s.group(start, end, dim, level, true))).toEqual(parts);
        }
        expect(firstDiff(a.rowOrder(), b.rowOrder())).toBe(-1);
      }
    }
  });

  it('rejects codes outside their domain, bad ranges and bad levels, in both kernels', () => {
    const kernels: MondrianKernel[] = [wasmMondrianKernel, tsMondrianKernel];
    const input = TINY_MONDRIAN_INPUT;
    for (const kernel of kernels) {
      expect(() => kernel.open({ ...input, keys: [Int32Array.of(0, 3, 2)] })).toThrow(KernelError);
      expect(() => kernel.open({ ...input, sensitive: [Int32Array.of(0, 2, 0)] })).toThrow(KernelError);
      expect(() =>
        kernel.open({ ...input, hierarchies: [[Int32Array.of(0, 1, 2), Int32Array.of(0, 1, 1)]] }),
      ).toThrow(/single root/);
      const s = kernel.open(input);
      expect(() => s.stats(2, 1)).toThrow(KernelError);
      expect(() => s.stats(0, 4)).toThrow(KernelError);
      expect(() => s.median(0, 3, 0, 1, 2, 1, -1, 0)).toThrow(KernelError);
      expect(() => s.median(0, 3, 0, 0, 2, 3, -1, 0)).toThrow(KernelError);
      expect(() => s.group(0, 3, 0, 0, false)).toThrow(KernelError);
    }
  });
});
