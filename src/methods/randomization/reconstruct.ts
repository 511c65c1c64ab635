/**
 * Reconstruction from a randomized release (docs/definitions.md §5): with λ the released contingency table
 * over some attributes (as proportions), the unbiased estimate is π̂ = (⊗ Pᵢ⁻¹)·λ, applied
 * mode by mode. Marginals commute with it (every Pᵢ⁻¹ has columns summing to 1), so the
 * estimate of any marginal needs only the released marginal over the same attributes.
 * Estimates can be negative; `clipped` sets them to 0 and renormalizes.
 */
import type { KroneckerKernel, ModeMatrix } from '../../kernels/kronecker/kernel.ts';
import type { Estimator } from '../../metrics/contingency.ts';

/** Dense marginals above this many cells are computed sparsely (or refused). */
export const MAX_DENSE_CELLS = 2 ** 22;
/** Work budget (cell × enumerated terms) of the sparse path. */
export const MAX_SPARSE_WORK = 2e8;
/** Up to this many cells a marginal is always computed densely (the sparse path wins above). */
const DENSE_PREFERRED = 2 ** 18;

export interface ReconstructionMode {
  readonly d: number;
  /** P⁻¹ (or its a·I + b·J form); null when the attribute is released unchanged. */
  readonly inverse: ModeMatrix;
}

/** Released counts over `modes` (one code column per mode) as a dense tensor, row-major. */
export function releasedCounts(columns: readonly Int32Array[], dims: readonly number[]): Float64Array {
  let size = 1;
  for (const d of dims) size *= d;
  const counts = new Float64Array(size);
  const n = columns[0]?.length ?? 0;
  for (let r = 0; r < n; r++) {
    let index = 0;
    for (let j = 0; j < columns.length; j++) index = index * dims[j]! + columns[j]![r]!;
    counts[index]!++;
  }
  return counts;
}

/** π̂ = (⊗ Pᵢ⁻¹)·λ over the dense tensor, λ the released proportions. */
export function reconstructDense(
  kernel: KroneckerKernel,
  modes: readonly ReconstructionMode[],
  counts: Float64Array,
  rows: number,
): Float64Array {
  const dims = modes.map((m) => m.d);
  const lambda = counts.map((c) => c / rows);
  const session = kernel.open(dims);
  try {
    return session.apply(
      modes.map((m) => m.inverse),
      lambda,
    );
  } finally {
    session.dispose();
  }
}

/** Negative estimates set to 0, the rest renormalized to sum 1. */
export function clipped(estimate: Float64Array): Float64Array {
  let total = 0;
  const out = estimate.map((v) => {
    const c = Math.max(0, v);
    total += c;
    return c;
  });
  return total > 0 ? out.map((v) => v / total) : out;
}

const entry = (m: ModeMatrix, d: number, u: number, v: number): number => {
  if (m === null) return u === v ? 1 : 0;
  if (m instanceof Float64Array) return m[u * d + v]!;
  return (u === v ? m.a : 0) + m.b;
};

/**
 * The estimator of a randomized release for the docs/definitions.md §6 measures: `released[i]` holds the
 * released codes of attribute i (in the original's category codes), `modes[i]` its inverse.
 * Dense marginals up to MAX_DENSE_CELLS use the Kronecker kernel; larger ones sum, per asked
 * cell, over the released cells that differ only in randomized attributes.
 */
export function randomizationEstimator(
  kernel: KroneckerKernel,
  modes: readonly ReconstructionMode[],
  released: readonly Int32Array[],
): Estimator {
  const rows = released[0]?.length ?? 0;
  const cache = new Map<string, Float64Array>();
  const sparseFits = (attrs: readonly number[], dims: number[], nCells: number) => {
    let terms = 1;
    let keySpace = 1;
    let randomized = 0;
    attrs.forEach((a, j) => {
      if (modes[a]!.inverse === null) keySpace *= dims[j]!;
      else {
        terms *= dims[j]!;
        randomized++;
      }
    });
    return (
      terms <= 2 ** 16 && terms * nCells * Math.max(1, randomized) <= MAX_SPARSE_WORK && keySpace < 2 ** 53
    );
  };
  return {
    marginal(attrs, cells) {
      const dims = attrs.map((a) => modes[a]!.d);
      let size = 1;
      for (const d of dims) size *= d;
      const nCells = cells[0]?.length ?? 1;
      const out = new Float64Array(nCells);
      if (attrs.length === 0) return out.fill(1);
      if (size <= DENSE_PREFERRED || (size <= MAX_DENSE_CELLS && !sparseFits(attrs, dims, nCells))) {
        const key = attrs.join(',');
        let estimate = cache.get(key);
        if (!estimate) {
          estimate = reconstructDense(
            kernel,
            attrs.map((a) => modes[a]!),
            releasedCounts(
              attrs.map((a) => released[a]!),
              dims,
            ),
            rows,
          );
          if (size <= 2 ** 20) cache.set(key, estimate);
        }
        for (let c = 0; c < nCells; c++) {
          let index = 0;
          for (let j = 0; j < attrs.length; j++) index = index * dims[j]! + cells[j]![c]!;
          out[c] = estimate[index]!;
        }
        return out;
      }
      // Sparse: group the released rows by their unrandomized attributes (exact key); within a
      // group, a dense vector over the randomized attributes' categories. Then
      // π̂(c) = Σ_ν Π_j Pⱼ⁻¹[c_j][ν_j]·λ(c_fixed, ν).
      const randomized = attrs.map((a, j) => (modes[a]!.inverse === null ? -1 : j)).filter((j) => j >= 0);
      const fixed = attrs.map((_, j) => j).filter((j) => !randomized.includes(j));
      let terms = 1;
      for (const j of randomized) terms *= dims[j]!;
      if (!sparseFits(attrs, dims, nCells)) {
        throw new RangeError(
          `reconstruction: the marginal over ${attrs.length} attributes has ${size} cells and its randomized part ${terms}`,
        );
      }
      const groups = new Map<number, Float64Array>();
      const inc = 1 / rows;
      for (let r = 0; r < rows; r++) {
        let key = 0;
        for (const j of fixed) key = key * dims[j]! + released[attrs[j]!]![r]!;
        let sub = 0;
        for (const j of randomized) sub = sub * dims[j]! + released[attrs[j]!]![r]!;
        let g = groups.get(key);
        if (!g) groups.set(key, (g = new Float64Array(terms)));
        g[sub]! += inc;
      }
      const weights = new Float64Array(terms);
      for (let c = 0; c < nCells; c++) {
        let key = 0;
        for (const j of fixed) key = key * dims[j]! + cells[j]![c]!;
        const g = groups.get(key);
        if (!g) continue;
        weights.fill(1);
        let stride = terms;
        for (const j of randomized) {
          const d = dims[j]!;
          stride /= d;
          const inverse = modes[attrs[j]!]!.inverse;
          const cj = cells[j]![c]!;
          for (let t = 0; t < terms; t++) weights[t]! *= entry(inverse, d, cj, Math.floor(t / stride) % d);
        }
        let sum = 0;
        for (let t = 0; t < terms; t++) sum += weights[t]! * g[t]!;
        out[c] = sum;
      }
      return out;
    },
  };
}
