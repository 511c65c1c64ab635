import { describe, expect, it } from 'vitest';
import { KernelError } from '../../src/errors.ts';
import {
  LaneRandom,
  laneState,
  type PerturbKernel,
  stepLanes,
  THRESHOLD_ONE,
  thresholdsOf,
} from '../../src/kernels/perturb/kernel.ts';
import { tsPerturbKernel } from '../../src/kernels/perturb/reference.ts';
import { wasmPerturbKernel, wasmSimdPerturbKernel } from '../../src/kernels/perturb/wasm.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { Random } from '../../src/util/random.ts';
import { adultSpec } from '../helpers/adult.ts';

const KERNELS: PerturbKernel[] = [tsPerturbKernel, wasmPerturbKernel, wasmSimdPerturbKernel];

function retentionMatrix(d: number, p: number): Float64Array {
  const q = d > 1 ? (1 - p) / (d - 1) : 0;
  const m = new Float64Array(d * d).fill(q);
  for (let v = 0; v < d; v++) m[v * d + v] = d > 1 ? p : 1;
  return m;
}

function randomStochastic(rng: Random, d: number, zeros: boolean): Float64Array {
  const m = new Float64Array(d * d);
  for (let v = 0; v < d; v++) {
    let s = 0;
    for (let u = 0; u < d; u++) {
      const x = zeros && rng.below(3) === 0 ? 0 : rng.nextU32() / 2 ** 32;
      m[u * d + v] = x;
      s += x;
    }
    if (s === 0) m[v * d + v] = s = 1;
    for (let u = 0; u < d; u++) m[u * d + v]! /= s;
  }
  return m;
}

/** The stream as documented, written out plainly: block by block, lane by lane. */
function documented(codes: Int32Array, matrix: Float64Array, d: number, key: Uint32Array): Int32Array {
  const state = laneState(key);
  const block = new Uint32Array(4);
  const out = new Int32Array(codes.length);
  const thr = thresholdsOf(matrix, d);
  for (let i = 0; i < codes.length; i++) {
    if (i % 4 === 0) stepLanes(state, block);
    const x = block[i % 4]! >>> 1;
    let u = 0;
    for (let j = 0; j < d - 1; j++) if (thr.values[codes[i]! * thr.stride + j]! <= x) u++;
    out[i] = u;
  }
  return out;
}

describe('perturbation kernels', () => {
  it('give the identical stream: TS, WASM scalar, WASM SIMD, and the documented definition', () => {
    const rng = new Random(3);
    for (const n of [0, 1, 2, 3, 4, 5, 7, 8, 9, 1000, 1001, 1003]) {
      for (const d of [1, 2, 3, 5, 14, 41]) {
        const matrix = randomStochastic(rng, d, n % 2 === 1);
        const codes = Int32Array.from({ length: n }, () => rng.below(d));
        const key = Uint32Array.from([rng.nextU32(), rng.nextU32(), rng.nextU32(), rng.nextU32()]);
        const expected = documented(codes, matrix, d, key);
        for (const kernel of KERNELS) {
          const state = laneState(key);
          const out = kernel.perturb(codes, thresholdsOf(matrix, d), state);
          expect(Array.from(out), `${kernel.name} n=${n} d=${d}`).toEqual(Array.from(expected));
        }
      }
    }
  });

  it('advances the state by ⌈n/4⌉ blocks, so consecutive columns continue the stream', () => {
    const key = Uint32Array.of(1, 2, 3, 4);
    const d = 6;
    const matrix = retentionMatrix(d, 0.5);
    const codes = Int32Array.from({ length: 10 }, (_, i) => i % d);
    const states = KERNELS.map(() => laneState(key));
    const outs = KERNELS.map((k, i) => {
      k.perturb(codes, thresholdsOf(matrix, d), states[i]!);
      return k.perturb(codes, thresholdsOf(matrix, d), states[i]!);
    });
    for (const o of outs) expect(Array.from(o)).toEqual(Array.from(outs[0]!));
    const reference = laneState(key);
    const block = new Uint32Array(4);
    for (let b = 0; b < 6; b++) stepLanes(reference, block);
    for (const s of states) expect(Array.from(s)).toEqual(Array.from(reference));
  });

  it('never draws a zero entry and keeps everything with the identity', () => {
    const d = 5;
    const block = new Float64Array(d * d);
    // block-diagonal {0,1} {2,3,4}
    const groups = [
      [0, 1],
      [2, 3, 4],
    ];
    for (const g of groups) for (const v of g) for (const u of g) block[u * d + v] = 1 / g.length;
    const codes = Int32Array.from({ length: 20000 }, (_, i) => i % d);
    for (const kernel of KERNELS) {
      const out = kernel.perturb(codes, thresholdsOf(block, d), laneState(Uint32Array.of(9, 9, 9, 9)));
      let crossed = 0;
      for (let i = 0; i < codes.length; i++) if (codes[i]! < 2 !== out[i]! < 2) crossed++;
      expect(crossed).toBe(0);
      const same = kernel.perturb(
        codes,
        thresholdsOf(retentionMatrix(d, 1), d),
        laneState(Uint32Array.of(1, 1, 1, 1)),
      );
      expect(Array.from(same)).toEqual(Array.from(codes));
    }
  });

  it('realizes the matrix: transition frequencies within 5 standard deviations', () => {
    const d = 4;
    const rng = new Random(17);
    const matrix = randomStochastic(rng, d, false);
    const n = 200_000;
    const codes = Int32Array.from({ length: n }, (_, i) => i % d);
    const out = wasmSimdPerturbKernel.perturb(
      codes,
      thresholdsOf(matrix, d),
      laneState(Uint32Array.of(5, 6, 7, 8)),
    );
    const counts = new Float64Array(d * d);
    for (let i = 0; i < n; i++) counts[out[i]! * d + codes[i]!]!++;
    const perColumn = n / d;
    for (let u = 0; u < d; u++) {
      for (let v = 0; v < d; v++) {
        const p = matrix[u * d + v]!;
        const sd = Math.sqrt(perColumn * p * (1 - p));
        expect(Math.abs(counts[u * d + v]! - perColumn * p)).toBeLessThanOrEqual(5 * sd + 1);
      }
    }
  });

  it('matches on the Adult occupation column', () => {
    const table = readInput(adultSpec());
    const col = table.columns.find((c) => c.name === 'occupation')!;
    const d = col.dictionary.length;
    const matrix = retentionMatrix(d, 0.6);
    const outs = KERNELS.map((k) =>
      k.perturb(col.codes, thresholdsOf(matrix, d), laneState(Uint32Array.of(1, 2, 3, 4))),
    );
    for (const o of outs) expect(Array.from(o)).toEqual(Array.from(outs[0]!));
    let kept = 0;
    for (let i = 0; i < col.codes.length; i++) if (outs[0]![i] === col.codes[i]) kept++;
    expect(Math.abs(kept / col.codes.length - 0.6)).toBeLessThan(0.02);
  });

  it('rejects codes outside the matrix and pads thresholds with 2³¹', () => {
    const thr = thresholdsOf(retentionMatrix(3, 0.5), 3);
    expect(thr.stride).toBe(4);
    expect(thr.values[2]).toBe(THRESHOLD_ONE);
    for (const kernel of KERNELS) {
      expect(() => kernel.perturb(Int32Array.of(0, 3), thr, laneState(Uint32Array.of(1, 1, 1, 1)))).toThrow(
        KernelError,
      );
      expect(() => kernel.perturb(Int32Array.of(-1), thr, laneState(Uint32Array.of(1, 1, 1, 1)))).toThrow(
        KernelError,
      );
    }
  });

  it('LaneRandom permutes deterministically and uniformly enough', () => {
    const a = new LaneRandom(Uint32Array.of(1, 2, 3, 4)).permutation(100);
    const b = new LaneRandom(Uint32Array.of(1, 2, 3, 4)).permutation(100);
    const c = new LaneRandom(Uint32Array.of(1, 2, 3, 5)).permutation(100);
    expect(Array.from(a)).toEqual(Array.from(b));
    expect(Array.from(a)).not.toEqual(Array.from(c));
    expect([...a].sort((x, y) => x - y)).toEqual(Array.from({ length: 100 }, (_, i) => i));
  });
});
