/**
 * The WASM Kronecker kernel (assembly/kronecker.ts). A session owns one instance whose memory
 * holds two D-cell buffers and the transposed matrices (Σ dᵢ² cells), grown once at open; each
 * apply copies x in, runs one kernel call per non-identity mode, and copies the result out.
 */
import { instantiateCore } from '../../wasm/module.ts';
import {
  checkOperands,
  isStructured,
  type KroneckerKernel,
  type KroneckerSession,
  type ModeMatrix,
  tensorSize,
  transposed,
} from './kernel.ts';

const PAGE = 65536;

export const wasmKroneckerKernel: KroneckerKernel = {
  name: 'wasm',
  open(dims: readonly number[]): KroneckerSession {
    const size = tensorSize(dims);
    const core = instantiateCore();
    const align = (x: number) => (x + 15) & ~15;
    const bufA = 16;
    const bufB = align(bufA + 8 * size);
    const mats: number[] = [];
    let top = align(bufB + 8 * size);
    for (const d of dims) {
      mats.push(top);
      top = align(top + 8 * d * d);
    }
    const need = Math.ceil(top / PAGE) - core.memory.buffer.byteLength / PAGE;
    if (need > 0) core.memory.grow(need);
    return {
      dims,
      size,
      apply(matrices: readonly ModeMatrix[], x: Float64Array): Float64Array {
        checkOperands(dims, size, matrices, x);
        const buf = core.memory.buffer;
        new Float64Array(buf, bufA, size).set(x);
        let src = bufA;
        let dst = bufB;
        let left = 1;
        let right = size;
        for (let i = 0; i < dims.length; i++) {
          const d = dims[i]!;
          right /= d;
          const m = matrices[i];
          if (m) {
            if (isStructured(m)) core.kronModeStructured(src, dst, left, d, right, m.a, m.b);
            else {
              new Float64Array(buf, mats[i]!, d * d).set(transposed(m, d));
              core.kronMode(src, dst, left, d, right, mats[i]!);
            }
            [src, dst] = [dst, src];
          }
          left *= d;
        }
        return new Float64Array(core.memory.buffer, src, size).slice();
      },
      dispose() {},
    };
  },
};
