/** Small kernel inputs and checks shared by the kernel tests. */
import { expect } from 'vitest';
import { KernelError } from '../../src/errors.ts';
import type { MondrianInput } from '../../src/kernels/mondrian/kernel.ts';

/** Three rows, one numeric dimension of domain 3, one sensitive attribute of two values. */
export const TINY_MONDRIAN_INPUT: MondrianInput = {
  keys: [Int32Array.of(0, 1, 2)],
  domains: [3],
  hierarchies: [null],
  sensitive: [Int32Array.of(0, 1, 0)],
  sensitiveWidths: [2],
};

/** The code of the KernelError `work` throws. */
export function kernelErrorCode(work: () => unknown): string {
  try {
    work();
  } catch (e) {
    expect(e).toBeInstanceOf(KernelError);
    expect((e as KernelError).hint).toMatch(/defect in ppdp/);
    return (e as KernelError).code;
  }
  throw new Error('expected a KernelError');
}
