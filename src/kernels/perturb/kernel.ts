/**
 * Randomized response on one column (docs/definitions.md §5): every cell is replaced by a category drawn from
 * its column of a distortion matrix. The stream is fixed by the key, so the WASM kernels
 * (scalar and SIMD, assembly/perturb.ts) and the TS reference give identical output.
 *
 * The generator is 4 lanes of xoshiro128** advancing together, one block of 4 outputs per
 * step; cell i of a column uses lane i % 4 of block ⌊i/4⌋ and a last partial block discards
 * its unused outputs (the next column starts a new block). With x = output >>> 1 (31 bits)
 * and the cumulative thresholds of the original code's matrix column, the released code is
 * the number of thresholds ≤ x. Probabilities are thus realized in steps of 2⁻³¹; a zero
 * entry of the matrix is never drawn.
 */

import { UniformDraws } from '../../util/random.ts';
import { kernelError, Status } from '../status.ts';

export const THRESHOLD_ONE = 2 ** 31;

/** Cumulative thresholds of a distortion matrix, one padded row per original category. */
export interface Thresholds {
  readonly d: number;
  /** Row length: a multiple of 4, ≥ d − 1. */
  readonly stride: number;
  readonly values: Uint32Array;
}

/**
 * `matrix[u * d + v]` = Pr(released u | original v) (row-major, columns sum to 1) →
 * thr[v][j] = round(2³¹ · Σ_{u ≤ j} P[u][v]) for j < d − 1, padded with 2³¹.
 */
export function thresholdsOf(matrix: Float64Array, d: number): Thresholds {
  const stride = Math.max(4, Math.ceil((d - 1) / 4) * 4);
  const values = new Uint32Array(d * stride).fill(THRESHOLD_ONE);
  for (let v = 0; v < d; v++) {
    let cum = 0;
    for (let j = 0; j < d - 1; j++) {
      cum += matrix[j * d + v]!;
      values[v * stride + j] = Math.min(THRESHOLD_ONE, Math.max(0, Math.round(cum * THRESHOLD_ONE)));
    }
  }
  return { d, stride, values };
}

/** The 4-lane generator state: 16 u32, word-major (s0 of lanes 0..3, then s1, s2, s3). */
export type LaneState = Uint32Array;

function splitmix32(seed: number): () => number {
  let x = seed >>> 0;
  return () => {
    x = (x + 0x9e3779b9) >>> 0;
    let z = x;
    z = Math.imul(z ^ (z >>> 16), 0x85ebca6b) >>> 0;
    z = Math.imul(z ^ (z >>> 13), 0xc2b2ae35) >>> 0;
    return (z ^ (z >>> 16)) >>> 0;
  };
}

/**
 * Expands a 128-bit key (4 u32) into the lanes' state: word w of lane l is the (l+1)-th output
 * of splitmix32 seeded with key[w] — injective in each key word, so the state keeps the key's
 * 128 bits. A lane that came out all zero (probability 2⁻¹²⁸) gets a fixed non-zero word.
 */
export function laneState(key: Uint32Array): LaneState {
  if (key.length !== 4) throw kernelError('laneState', Status.BadShape, 'the key is 4 u32');
  const state = new Uint32Array(16);
  for (let w = 0; w < 4; w++) {
    const next = splitmix32(key[w]!);
    for (let l = 0; l < 4; l++) state[w * 4 + l] = next();
  }
  for (let l = 0; l < 4; l++) {
    if ((state[l]! | state[4 + l]! | state[8 + l]! | state[12 + l]!) === 0) state[l] = 0x9e3779b9;
  }
  return state;
}

export interface PerturbKernel {
  readonly name: 'ts' | 'wasm' | 'wasm-simd';
  /**
   * Released codes of one column; advances `state` in place by ⌈n/4⌉ blocks.
   * @throws KernelError if a code is outside 0..d−1.
   */
  perturb(codes: Int32Array, thresholds: Thresholds, state: LaneState): Int32Array;
}

export function validateCodes(codes: Int32Array, d: number): void {
  for (let i = 0; i < codes.length; i++) {
    const c = codes[i]!;
    if (!(c >= 0 && c < d))
      throw kernelError(
        'perturb',
        Status.CodeOutOfDomain,
        `code at cell ${i} is outside the matrix's ${d} categories`,
      );
  }
}

/**
 * A sequential view of the same 4-lane stream, for choices that are not cells (the row
 * shuffle): values come lane by lane, block by block.
 */
export class LaneRandom extends UniformDraws {
  private readonly state: LaneState;
  private readonly block = new Uint32Array(4);
  private used = 4;

  constructor(key: Uint32Array) {
    super();
    this.state = laneState(key);
  }

  nextU32(): number {
    if (this.used === 4) {
      stepLanes(this.state, this.block);
      this.used = 0;
    }
    return this.block[this.used++]!;
  }
}

const rotl = (x: number, k: number) => ((x << k) | (x >>> (32 - k))) >>> 0;

/** One step of the 4 lanes: writes their outputs to `out` and advances `s`. */
export function stepLanes(s: LaneState, out: Uint32Array): void {
  for (let l = 0; l < 4; l++) {
    const s1 = s[4 + l]!;
    out[l] = Math.imul(rotl(Math.imul(s1, 5) >>> 0, 7), 9) >>> 0;
    const t = (s1 << 9) >>> 0;
    s[8 + l] = (s[8 + l]! ^ s[l]!) >>> 0;
    s[12 + l] = (s[12 + l]! ^ s1) >>> 0;
    s[4 + l] = (s1 ^ s[8 + l]!) >>> 0;
    s[l] = (s[l]! ^ s[12 + l]!) >>> 0;
    s[8 + l] = (s[8 + l]! ^ t) >>> 0;
    s[12 + l] = rotl(s[12 + l]!, 11);
  }
}
