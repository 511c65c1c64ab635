/**
 * Distortion matrices (docs/definitions.md §5): `P[u][v]` = Pr(released u | original v), row-major in a
 * Float64Array (`m[u * d + v]`), every column summing to 1.
 *
 * - retention form (the attribute-disclosure paper): keep with p, else each other category with q = (1−p)/(d−1);
 * - uniform perturbation (Chaytor & Wang): keep with p, else draw uniformly from all d;
 * - custom: any valid matrix the user supplies (square, non-negative, columns sum to 1,
 *   invertible).
 *
 * Both forms are a·I + b·J with diagonal a + b: the optimizer works on the diagonal
 * ("diag", in [1/d, 1]) and each form maps it to its own parameter.
 */
import { SpecError } from '../../errors.ts';

export type MatrixForm = 'retention' | 'uniform' | 'custom';

export interface Distortion {
  readonly d: number;
  /** Row-major P[u][v]. */
  readonly matrix: Float64Array;
  readonly form: MatrixForm;
  /** The form's parameter: retention p (= the diagonal) or the uniform coin p; none for custom. */
  readonly parameter: number | undefined;
  /** The diagonal of an a·I + b·J matrix (undefined for custom matrices). */
  readonly diag: number | undefined;
}

/** Diagonal of the form's matrix for parameter p. */
export function diagOf(form: 'retention' | 'uniform', d: number, p: number): number {
  if (d === 1) return 1;
  return form === 'retention' ? p : p + (1 - p) / d;
}

/** The form's parameter for a diagonal. */
export function parameterOf(form: 'retention' | 'uniform', d: number, diag: number): number {
  if (d === 1) return 1;
  return form === 'retention' ? diag : (diag - 1 / d) / (1 - 1 / d);
}

/** The a·I + b·J matrix with the given diagonal (off-diagonal (1 − diag)/(d − 1)). */
export function structuredDistortion(form: 'retention' | 'uniform', d: number, diag: number): Distortion {
  const off = d > 1 ? (1 - diag) / (d - 1) : 0;
  const matrix = new Float64Array(d * d).fill(off);
  for (let v = 0; v < d; v++) matrix[v * d + v] = d > 1 ? diag : 1;
  return { d, matrix, form, parameter: parameterOf(form, d, diag), diag: d > 1 ? diag : 1 };
}

export function identityDistortion(d: number): Distortion {
  return structuredDistortion('retention', d, 1);
}

/** Smallest admissible diagonal: 1/d makes every column equal (singular, no information). */
export function minDiag(d: number): number {
  return d > 1 ? 1 / d : 1;
}

/**
 * ‖P⁻¹‖²_F / d for an a·I + b·J matrix with diagonal `diag`: the attribute's factor of the
 * expected squared reconstruction error (the attribute-disclosure paper, Result 2; 1 for the identity, ∞ at 1/d).
 */
export function inverseNormFactor(d: number, diag: number): number {
  if (d === 1) return 1;
  const q = (1 - diag) / (d - 1);
  const scale = diag - q;
  if (!(scale > 0)) return Number.POSITIVE_INFINITY;
  // P⁻¹ = (I − q·J)/(p − q): diagonal (1 − q)/(p − q), off-diagonal −q/(p − q).
  return ((1 - q) * (1 - q) + (d - 1) * q * q) / (scale * scale);
}

/** Per released category, the squared norm of P⁻¹'s columns (equal for a·I + b·J), for the expected error. */
export function inverseColumnNorms(inverse: Float64Array, d: number): Float64Array {
  const out = new Float64Array(d);
  for (let v = 0; v < d; v++) {
    let s = 0;
    for (let u = 0; u < d; u++) s += inverse[u * d + v]! ** 2;
    out[v] = s;
  }
  return out;
}

/** P⁻¹ by Gauss–Jordan elimination with partial pivoting; undefined when singular. */
export function invert(matrix: Float64Array, d: number): Float64Array | undefined {
  const a = matrix.slice();
  const inv = new Float64Array(d * d);
  for (let i = 0; i < d; i++) inv[i * d + i] = 1;
  let scale = 0;
  for (const x of matrix) scale = Math.max(scale, Math.abs(x));
  if (scale === 0) return undefined;
  for (let col = 0; col < d; col++) {
    let pivot = col;
    for (let r = col + 1; r < d; r++)
      if (Math.abs(a[r * d + col]!) > Math.abs(a[pivot * d + col]!)) pivot = r;
    const pv = a[pivot * d + col]!;
    if (Math.abs(pv) <= 1e-12 * scale) return undefined;
    if (pivot !== col) {
      for (let c = 0; c < d; c++) {
        [a[col * d + c], a[pivot * d + c]] = [a[pivot * d + c]!, a[col * d + c]!];
        [inv[col * d + c], inv[pivot * d + c]] = [inv[pivot * d + c]!, inv[col * d + c]!];
      }
    }
    for (let c = 0; c < d; c++) {
      a[col * d + c]! /= pv;
      inv[col * d + c]! /= pv;
    }
    for (let r = 0; r < d; r++) {
      if (r === col) continue;
      const f = a[r * d + col]!;
      if (f === 0) continue;
      for (let c = 0; c < d; c++) {
        a[r * d + c]! -= f * a[col * d + c]!;
        inv[r * d + c]! -= f * inv[col * d + c]!;
      }
    }
  }
  return inv;
}

/** Closed form for a·I + b·J matrices (docs/definitions.md §5), Gauss–Jordan otherwise. */
export function inverseOf(p: Distortion): Float64Array {
  const { d } = p;
  if (p.diag !== undefined) {
    if (d === 1) return Float64Array.of(1);
    const q = (1 - p.diag) / (d - 1);
    const s = p.diag - q;
    const inv = new Float64Array(d * d).fill(-q / s);
    for (let v = 0; v < d; v++) inv[v * d + v] = (1 - q) / s;
    return inv;
  }
  const inv = invert(p.matrix, d);
  if (!inv) throw new Error('inverseOf: singular matrix (validated matrices are invertible)');
  return inv;
}

/**
 * γ-amplification (Chaytor & Wang after Evfimievski et al.): max over released u of
 * max_v P[u][v] / min_v P[u][v]. ∞ when a released category has probability 0 from some
 * original and > 0 from another; rows that are all zero are skipped.
 */
export function gammaOf(matrix: Float64Array, d: number): number {
  let gamma = 1;
  for (let u = 0; u < d; u++) {
    let lo = Number.POSITIVE_INFINITY;
    let hi = 0;
    for (let v = 0; v < d; v++) {
      const x = matrix[u * d + v]!;
      lo = Math.min(lo, x);
      hi = Math.max(hi, x);
    }
    if (hi === 0) continue;
    gamma = Math.max(gamma, lo === 0 ? Number.POSITIVE_INFINITY : hi / lo);
  }
  return gamma;
}

/** Whether a row-major d×d matrix is the identity. */
export function isIdentity(m: Float64Array, d: number): boolean {
  for (let u = 0; u < d; u++)
    for (let v = 0; v < d; v++) if (m[u * d + v] !== (u === v ? 1 : 0)) return false;
  return true;
}

/**
 * The largest diagonal whose matrix is γ-amplifying: the ratio diag/off ≤ γ. For uniform
 * perturbation this is the coin p = (γ−1)/(m−1+γ) (Chaytor & Wang); for the retention form
 * p = γ/(m−1+γ).
 */
export function maxDiagForGamma(d: number, gamma: number): number {
  if (d === 1) return 1;
  if (!Number.isFinite(gamma)) return 1;
  return gamma / (d - 1 + gamma);
}

/**
 * Validates a user-supplied matrix given as rows (`rows[u][v]`): square d × d, finite,
 * non-negative, columns summing to 1 (within 1e-9), invertible. `field` names the spec field.
 */
export function validateMatrix(rows: unknown, d: number, where: string, field: string): Float64Array {
  const fail = (what: string, hint: string): never => {
    throw new SpecError('E_SPEC_MATRIX', `${where}: ${field} ${what}`, hint);
  };
  if (!Array.isArray(rows) || rows.length !== d) {
    fail(`must be a list of ${d} rows (one per category)`, 'matrix[u][v] = Pr(released u | original v)');
  }
  const m = new Float64Array(d * d);
  (rows as unknown[]).forEach((row, u) => {
    if (!Array.isArray(row) || row.length !== d)
      fail(`row ${u} must have ${d} entries (square matrix)`, 'one column per category');
    (row as unknown[]).forEach((x, v) => {
      if (typeof x !== 'number' || !Number.isFinite(x) || x < 0) {
        fail(`[${u}][${v}] must be a non-negative number`, 'entries are probabilities');
      }
      m[u * d + v] = x as number;
    });
  });
  for (let v = 0; v < d; v++) {
    let s = 0;
    for (let u = 0; u < d; u++) s += m[u * d + v]!;
    if (Math.abs(s - 1) > 1e-9) {
      fail(
        `column ${v} sums to ${s.toPrecision(12)}, not 1`,
        'each column is the distribution of released values for one original value',
      );
    }
  }
  if (!invert(m, d))
    fail(
      'is singular',
      'an analyst could not reconstruct the distribution: use a matrix with a non-zero determinant',
    );
  return m;
}
