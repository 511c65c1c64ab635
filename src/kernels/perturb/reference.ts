/**
 * The plain-TS reference of the perturbation kernel (assembly/perturb.ts): the same 4-lane
 * stream and the same threshold count, so it releases exactly what the WASM kernels release.
 */
import { type LaneState, type PerturbKernel, type Thresholds, validateCodes } from './kernel.ts';

export const tsPerturbKernel: PerturbKernel = {
  name: 'ts',
  perturb(codes: Int32Array, thresholds: Thresholds, s: LaneState): Int32Array {
    const { d, stride, values } = thresholds;
    validateCodes(codes, d);
    const n = codes.length;
    const out = new Int32Array(n);
    let a0 = s[0]!;
    let a1 = s[1]!;
    let a2 = s[2]!;
    let a3 = s[3]!;
    let b0 = s[4]!;
    let b1 = s[5]!;
    let b2 = s[6]!;
    let b3 = s[7]!;
    let c0 = s[8]!;
    let c1 = s[9]!;
    let c2 = s[10]!;
    let c3 = s[11]!;
    let e0 = s[12]!;
    let e1 = s[13]!;
    let e2 = s[14]!;
    let e3 = s[15]!;
    const pick = (code: number, x: number): number => {
      const row = code * stride;
      let u = 0;
      for (let j = 0; j < stride; j++) if (values[row + j]! <= x) u++;
      return u;
    };
    for (let i = 0; i < n; i += 4) {
      const o0 = Math.imul(rotl(Math.imul(b0, 5), 7), 9) >>> 0;
      const o1 = Math.imul(rotl(Math.imul(b1, 5), 7), 9) >>> 0;
      const o2 = Math.imul(rotl(Math.imul(b2, 5), 7), 9) >>> 0;
      const o3 = Math.imul(rotl(Math.imul(b3, 5), 7), 9) >>> 0;
      let t = b0 << 9;
      c0 ^= a0;
      e0 ^= b0;
      b0 ^= c0;
      a0 ^= e0;
      c0 ^= t;
      e0 = rotl(e0, 11);
      t = b1 << 9;
      c1 ^= a1;
      e1 ^= b1;
      b1 ^= c1;
      a1 ^= e1;
      c1 ^= t;
      e1 = rotl(e1, 11);
      t = b2 << 9;
      c2 ^= a2;
      e2 ^= b2;
      b2 ^= c2;
      a2 ^= e2;
      c2 ^= t;
      e2 = rotl(e2, 11);
      t = b3 << 9;
      c3 ^= a3;
      e3 ^= b3;
      b3 ^= c3;
      a3 ^= e3;
      c3 ^= t;
      e3 = rotl(e3, 11);
      out[i] = pick(codes[i]!, o0 >>> 1);
      if (i + 1 < n) out[i + 1] = pick(codes[i + 1]!, o1 >>> 1);
      if (i + 2 < n) out[i + 2] = pick(codes[i + 2]!, o2 >>> 1);
      if (i + 3 < n) out[i + 3] = pick(codes[i + 3]!, o3 >>> 1);
    }
    s.set([a0, a1, a2, a3, b0, b1, b2, b3, c0, c1, c2, c3, e0, e1, e2, e3].map((x) => x >>> 0));
    return out;
  },
};

// Works on int32 values (the state words may be negative here); callers take >>> 0 at the end.
function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
