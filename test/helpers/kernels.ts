/** Small kernel inputs and checks shared by the kernel tests. */
import { expect } from 'vitest';
import type { RawValues } from '../../src/data/raw.ts';
import { KernelError } from '../../src/errors.ts';
import type { MondrianInput } from '../../src/kernels/mondrian/kernel.ts';
import type { Random } from '../../src/util/random.ts';

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

/** `n` values of up to `longest` bytes each (any byte, so non-ASCII too), their offsets from `skip` bytes in. */
export function randomValuesAsBytes(rng: Random, n: number, longest: number, skip = 0): RawValues {
  const offsets = new Int32Array(n + 1);
  offsets[0] = skip;
  for (let i = 0; i < n; i++) offsets[i + 1] = offsets[i]! + rng.below(longest + 1);
  const bytes = new Uint8Array(offsets[n]!);
  for (let j = 0; j < bytes.length; j++) bytes[j] = rng.below(256);
  return { offsets, bytes };
}
