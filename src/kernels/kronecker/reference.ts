/**
 * The plain-TS reference of the Kronecker kernel (assembly/kronecker.ts): mode by mode, every
 * output summed over v ascending from 0, so results are bit-identical to the WASM kernel.
 */
import {
  checkOperands,
  isStructured,
  type KroneckerKernel,
  type KroneckerSession,
  type ModeMatrix,
  tensorSize,
} from './kernel.ts';

/** dst[l, u, r] = Σ_v M[u][v]·src[l, v, r] over the tensor seen as [left, d, right]. */
export function modeProduct(
  src: Float64Array,
  dst: Float64Array,
  left: number,
  d: number,
  right: number,
  m: Float64Array,
): void {
  for (let l = 0; l < left; l++) {
    const block = l * d * right;
    for (let u = 0; u < d; u++) {
      const out = block + u * right;
      dst.fill(0, out, out + right);
      for (let v = 0; v < d; v++) {
        const muv = m[u * d + v]!;
        const inp = block + v * right;
        for (let r = 0; r < right; r++) dst[out + r] += muv * src[inp + r]!;
      }
    }
  }
}

/** dst[l, u, r] = a·src[l, u, r] + b·Σ_v src[l, v, r] (the sum over v ascending from 0). */
export function structuredModeProduct(
  src: Float64Array,
  dst: Float64Array,
  left: number,
  d: number,
  right: number,
  a: number,
  b: number,
): void {
  for (let l = 0; l < left; l++) {
    const block = l * d * right;
    dst.fill(0, block, block + right);
    for (let v = 0; v < d; v++) {
      const inp = block + v * right;
      for (let r = 0; r < right; r++) dst[block + r] += src[inp + r]!;
    }
    for (let u = d - 1; u >= 0; u--) {
      const row = block + u * right;
      for (let r = 0; r < right; r++) dst[row + r] = a * src[row + r]! + b * dst[block + r]!;
    }
  }
}

export const tsKroneckerKernel: KroneckerKernel = {
  name: 'ts',
  open(dims: readonly number[]): KroneckerSession {
    const size = tensorSize(dims);
    let a = new Float64Array(size);
    let b = new Float64Array(size);
    return {
      dims,
      size,
      apply(matrices: readonly ModeMatrix[], x: Float64Array): Float64Array {
        checkOperands(dims, size, matrices, x);
        a.set(x);
        let left = 1;
        let right = size;
        for (let i = 0; i < dims.length; i++) {
          const d = dims[i]!;
          right /= d;
          const m = matrices[i];
          if (m) {
            if (isStructured(m)) structuredModeProduct(a, b, left, d, right, m.a, m.b);
            else modeProduct(a, b, left, d, right, m);
            [a, b] = [b, a];
          }
          left *= d;
        }
        return a.slice();
      },
      dispose() {},
    };
  },
};
