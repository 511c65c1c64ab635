/**
 * The WASM perturbation kernels (assembly/perturb.ts), scalar and SIMD. Each call lays out
 * codes, output, thresholds and the lane state in a fresh-enough instance memory (grown once,
 * reused while it fits), validates the codes, runs, and copies back the released codes.
 */
import { type CoreExports, instantiateCore } from '../../wasm/module.ts';
import { type LaneState, type PerturbKernel, type Thresholds, validateCodes } from './kernel.ts';

const PAGE = 65536;

function wasmKernel(simd: boolean): PerturbKernel {
  let core: CoreExports | undefined;
  return {
    name: simd ? 'wasm-simd' : 'wasm',
    perturb(codes: Int32Array, thresholds: Thresholds, state: LaneState): Int32Array {
      const { d, stride, values } = thresholds;
      validateCodes(codes, d);
      core ??= instantiateCore();
      const n = codes.length;
      // Layout: state (64 bytes) | thresholds | codes | out, each 16-byte aligned.
      const align = (x: number) => (x + 15) & ~15;
      const statePtr = 16;
      const thrPtr = align(statePtr + 64);
      const codesPtr = align(thrPtr + 4 * values.length);
      const outPtr = align(codesPtr + 4 * n);
      const end = outPtr + 4 * n;
      const need = Math.ceil(end / PAGE) - core.memory.buffer.byteLength / PAGE;
      if (need > 0) core.memory.grow(need);
      const buf = core.memory.buffer;
      new Uint32Array(buf, statePtr, 16).set(state);
      new Uint32Array(buf, thrPtr, values.length).set(values);
      new Int32Array(buf, codesPtr, n).set(codes);
      (simd ? core.perturbSimd : core.perturb)(codesPtr, outPtr, n, thrPtr, stride, statePtr);
      state.set(new Uint32Array(core.memory.buffer, statePtr, 16));
      return new Int32Array(core.memory.buffer, outPtr, n).slice();
    },
  };
}

export const wasmPerturbKernel: PerturbKernel = wasmKernel(false);
export const wasmSimdPerturbKernel: PerturbKernel = wasmKernel(true);
