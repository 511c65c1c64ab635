/**
 * Kernel refusals are typed: the WASM kernels return a status (src/kernels/status-codes.ts), the
 * plain-TS references refuse the same inputs, and both raise the same KernelError code.
 */
import { describe, expect, it } from 'vitest';
import type { GroupingKernel } from '../../src/kernels/groupby/kernel.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import type { MondrianKernel } from '../../src/kernels/mondrian/kernel.ts';
import { tsMondrianKernel } from '../../src/kernels/mondrian/reference.ts';
import { wasmMondrianKernel } from '../../src/kernels/mondrian/wasm.ts';
import { kernelError, Status } from '../../src/kernels/status.ts';
import { kernelErrorCode, TINY_MONDRIAN_INPUT } from '../helpers/kernels.ts';

describe('kernel status codes', () => {
  it('every status has its own error code, named after it', () => {
    const codes = [
      Status.CodeOutOfDomain,
      Status.TupleOutOfRange,
      Status.ClassOutOfMap,
      Status.BadMedian,
      Status.MissingLevel,
      Status.BadShape,
      Status.TooLarge,
    ].map((s) => kernelError('k', s, 'what').code);
    expect(new Set(codes).size).toBe(codes.length);
    expect(codes[0]).toBe('E_KERNEL_CODE_OUT_OF_DOMAIN');
    expect(kernelError('grouping', Status.BadMedian, 'x').message).toBe('grouping: x');
  });

  it('grouping: both backends refuse the same inputs with the same codes', () => {
    const refusals = (kernel: GroupingKernel) => [
      kernelErrorCode(() => kernel.open({ columns: [Int32Array.of(0, 5)], domains: [2] }, [[]])),
      kernelErrorCode(() =>
        kernel.open({ columns: [Int32Array.of(0, 1)], domains: [2], counts: Int32Array.of(1) }, [[]]),
      ),
      kernelErrorCode(() => {
        const session = kernel.open({ columns: [Int32Array.of(0, 1, 0)], domains: [2] }, [[]]);
        try {
          session.compose(Int32Array.of(0, 7, 0), Int32Array.of(0, 1));
        } finally {
          session.dispose();
        }
      }),
    ];
    const ts = refusals(tsGroupingKernel);
    expect(ts).toEqual(['E_KERNEL_CODE_OUT_OF_DOMAIN', 'E_KERNEL_BAD_SHAPE', 'E_KERNEL_CLASS_OUT_OF_MAP']);
    expect(refusals(wasmGroupingKernel)).toEqual(ts);
  });

  it('Mondrian: both backends refuse the same inputs with the same codes', () => {
    const input = TINY_MONDRIAN_INPUT;
    const refusals = (kernel: MondrianKernel) => {
      const s = kernel.open(input);
      return [
        kernelErrorCode(() => kernel.open({ ...input, keys: [Int32Array.of(0, 3, 2)] })),
        kernelErrorCode(() => s.median(0, 3, 0, 1, 2, 1, -1, 0)),
        kernelErrorCode(() => s.median(0, 3, 0, 0, 2, 3, -1, 0)),
        kernelErrorCode(() => s.group(0, 3, 0, 1, false)),
      ];
    };
    const ts = refusals(tsMondrianKernel);
    expect(ts).toEqual([
      'E_KERNEL_CODE_OUT_OF_DOMAIN',
      'E_KERNEL_BAD_MEDIAN',
      'E_KERNEL_BAD_MEDIAN',
      'E_KERNEL_MISSING_LEVEL',
    ]);
    expect(refusals(wasmMondrianKernel)).toEqual(ts);
  });
});
