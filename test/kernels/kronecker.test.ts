import { describe, expect, it } from 'vitest';
import { KernelError } from '../../src/errors.ts';
import { denseKronecker, denseOf, type ModeMatrix } from '../../src/kernels/kronecker/kernel.ts';
import { tsKroneckerKernel } from '../../src/kernels/kronecker/reference.ts';
import { wasmKroneckerKernel } from '../../src/kernels/kronecker/wasm.ts';
import { Random } from '../../src/util/random.ts';

function randomMatrix(rng: Random, d: number): Float64Array {
  const m = new Float64Array(d * d);
  for (let i = 0; i < m.length; i++) m[i] = rng.nextU32() / 2 ** 32 - 0.3;
  return m;
}

function randomVector(rng: Random, n: number): Float64Array {
  return Float64Array.from({ length: n }, () => rng.nextU32() / 2 ** 32);
}

function denseApply(dims: number[], matrices: ModeMatrix[], x: Float64Array): Float64Array {
  const dense = denseKronecker(dims, matrices);
  const n = x.length;
  const y = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let j = 0; j < n; j++) s += dense[i * n + j]! * x[j]!;
    y[i] = s;
  }
  return y;
}

const SHAPES: number[][] = [
  [1],
  [2],
  [3],
  [7],
  [2, 3],
  [3, 1, 4],
  [2, 2, 2, 2],
  [5, 3, 2],
  [1, 1],
  [4, 6],
  [3, 2, 5, 2],
  [2, 3, 2, 3, 2, 2],
];

describe('Kronecker kernels', () => {
  for (const dims of SHAPES) {
    it(`equal the dense product and each other for dims ${dims.join('×')}`, () => {
      const rng = new Random(dims.reduce((a, b) => a * 31 + b, 7));
      for (const variant of ['dense', 'identity', 'structured'] as const) {
        const matrices: ModeMatrix[] = dims.map((d, i) =>
          variant === 'identity' && i % 2 === 1
            ? null
            : variant === 'structured' && i % 2 === 0
              ? { a: rng.nextU32() / 2 ** 32, b: rng.nextU32() / 2 ** 32 - 0.5 }
              : randomMatrix(rng, d),
        );
        const x = randomVector(
          rng,
          dims.reduce((a, b) => a * b, 1),
        );
        const ts = tsKroneckerKernel.open(dims).apply(matrices, x);
        const wasm = wasmKroneckerKernel.open(dims).apply(matrices, x);
        expect(Array.from(wasm)).toEqual(Array.from(ts));
        const dense = denseApply(dims, matrices, x);
        for (let i = 0; i < dense.length; i++) expect(ts[i]).toBeCloseTo(dense[i]!, 12);
      }
    });
  }

  it('leaves its input unchanged and reuses a session', () => {
    const dims = [3, 4];
    const rng = new Random(5);
    const session = wasmKroneckerKernel.open(dims);
    const x = randomVector(rng, 12);
    const copy = x.slice();
    const m = [randomMatrix(rng, 3), randomMatrix(rng, 4)];
    const first = session.apply(m, x);
    expect(Array.from(x)).toEqual(Array.from(copy));
    expect(Array.from(session.apply(m, x))).toEqual(Array.from(first));
  });

  it('rejects operands of the wrong shape', () => {
    const session = tsKroneckerKernel.open([2, 3]);
    expect(() => session.apply([null], new Float64Array(6))).toThrow(KernelError);
    expect(() => session.apply([new Float64Array(4), new Float64Array(4)], new Float64Array(6))).toThrow(
      KernelError,
    );
    expect(() => session.apply([null, null], new Float64Array(5))).toThrow(KernelError);
    expect(() => tsKroneckerKernel.open([2, 0])).toThrow(KernelError);
  });

  it('apply a·I + b·J exactly like its dense form', () => {
    const dims = [4, 3, 5];
    const rng = new Random(23);
    const structured: ModeMatrix[] = [
      { a: 0.7, b: 0.1 },
      { a: -0.2, b: 0.4 },
      { a: 1.3, b: -0.05 },
    ];
    const dense = structured.map((m, i) => denseOf(m, dims[i]!));
    const x = randomVector(rng, 60);
    for (const kernel of [tsKroneckerKernel, wasmKroneckerKernel]) {
      const y = kernel.open(dims).apply(structured, x);
      const z = kernel.open(dims).apply(dense, x);
      for (let i = 0; i < 60; i++) expect(y[i]).toBeCloseTo(z[i]!, 13);
    }
  });

  it('agree on an Adult-sized table (education × salary × sex × race × occupation)', () => {
    const dims = [16, 2, 2, 5, 14];
    const rng = new Random(11);
    const matrices = dims.map((d) => randomMatrix(rng, d));
    const x = randomVector(
      rng,
      dims.reduce((a, b) => a * b, 1),
    );
    const ts = tsKroneckerKernel.open(dims).apply(matrices, x);
    const wasm = wasmKroneckerKernel.open(dims).apply(matrices, x);
    expect(Array.from(wasm)).toEqual(Array.from(ts));
  });
});
