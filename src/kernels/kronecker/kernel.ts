/**
 * Kronecker-product kernels (docs/definitions.md §5): y = (M_0 ⊗ … ⊗ M_{k−1})·x for a tensor x laid out
 * row-major over `dims` (the last attribute fastest), applied mode by mode in O(D·Σ dᵢ) time
 * and O(D) memory, never forming the D × D product. Used for λ = P·π, π̂ = P⁻¹·λ and the
 * reconstruction probabilities (P∘P)ᵀ·(1 ⊘ λ).
 */
import { kernelError, Status } from '../status.ts';

/**
 * One mode's operator: a square matrix, row-major (`values[u * d + v]` = M[u][v]); a
 * structured a·I + b·J (applied in O(D) instead of O(D·d)); or `null`, the identity.
 */
export type ModeMatrix = Float64Array | StructuredMatrix | null;

export interface StructuredMatrix {
  readonly a: number;
  readonly b: number;
}

export const isStructured = (m: ModeMatrix): m is StructuredMatrix =>
  m !== null && !(m instanceof Float64Array);

/** The dense form of an operator (for tests and the dense baseline). */
export function denseOf(m: ModeMatrix, d: number): Float64Array {
  if (m instanceof Float64Array) return m;
  const out = new Float64Array(d * d);
  const { a, b } = m ?? { a: 1, b: 0 };
  for (let u = 0; u < d; u++) for (let v = 0; v < d; v++) out[u * d + v] = (u === v ? a : 0) + b;
  return out;
}

export interface KroneckerSession {
  readonly dims: readonly number[];
  /** Number of cells D = Π dims. */
  readonly size: number;
  /** (M_0 ⊗ … ⊗ M_{k−1})·x; `x` is left unchanged. */
  apply(matrices: readonly ModeMatrix[], x: Float64Array): Float64Array;
  dispose(): void;
}

export interface KroneckerKernel {
  readonly name: 'ts' | 'wasm';
  open(dims: readonly number[]): KroneckerSession;
}

export function tensorSize(dims: readonly number[]): number {
  let size = 1;
  for (const d of dims) {
    if (!Number.isInteger(d) || d < 1)
      throw kernelError('kronecker', Status.BadShape, 'every dimension must be a positive integer');
    size *= d;
  }
  return size;
}

export function checkOperands(
  dims: readonly number[],
  size: number,
  matrices: readonly ModeMatrix[],
  x: Float64Array,
): void {
  if (matrices.length !== dims.length)
    throw kernelError('kronecker', Status.BadShape, 'one matrix (or null) per dimension');
  matrices.forEach((m, i) => {
    if (m instanceof Float64Array && m.length !== dims[i]! * dims[i]!)
      throw kernelError('kronecker', Status.BadShape, `matrix ${i} is not ${dims[i]} × ${dims[i]}`);
  });
  if (x.length !== size)
    throw kernelError('kronecker', Status.BadShape, `the vector has ${x.length} cells, the tensor ${size}`);
}

/** Mᵀ row-major (the kernels' layout: mt[v·d + u] = M[u][v]). */
export function transposed(m: Float64Array, d: number): Float64Array {
  const t = new Float64Array(d * d);
  for (let u = 0; u < d; u++) for (let v = 0; v < d; v++) t[v * d + u] = m[u * d + v]!;
  return t;
}

/** The dense Kronecker product (for tests and the O(D²) baseline only). */
export function denseKronecker(dims: readonly number[], matrices: readonly ModeMatrix[]): Float64Array {
  const size = tensorSize(dims);
  const out = new Float64Array(size * size);
  const k = dims.length;
  const ri = new Int32Array(k);
  for (let row = 0; row < size; row++) {
    let rest = row;
    for (let i = k - 1; i >= 0; i--) {
      ri[i] = rest % dims[i]!;
      rest = Math.floor(rest / dims[i]!);
    }
    for (let col = 0; col < size; col++) {
      let c = col;
      let value = 1;
      for (let i = k - 1; i >= 0 && value !== 0; i--) {
        const d = dims[i]!;
        const ci = c % d;
        c = Math.floor(c / d);
        const m = matrices[i];
        value *= m ? denseOf(m, d)[ri[i]! * d + ci]! : ri[i] === ci ? 1 : 0;
      }
      out[row * size + col] = value;
    }
  }
  return out;
}
