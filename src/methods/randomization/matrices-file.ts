/**
 * `matrices.json` (docs/release-spec.md): everything an analyst needs to reconstruct distributions from a
 * randomized release. `attributes` holds the randomized attributes only (attributes
 * left out are released unchanged), each with its categories in matrix order and
 * `matrix[u][v]` = Pr(released u | original v); `released` lists the contingency attributes
 * released unrandomized (with their categories when discretized).
 */
import { readFileSync } from 'node:fs';
import { PpdpError } from '../../errors.ts';
import { parseJsonFile } from '../../release-spec/json.ts';
import { ownRecord } from '../../util/record.ts';
import type { Discretization } from './domain.ts';

export interface MatrixEntry {
  role: 'quasi-identifying' | 'sensitive';
  categories: string[];
  /** matrix[u][v] = Pr(released categories[u] | original categories[v]). */
  matrix: number[][];
  /** retention | uniform | custom (user-supplied or small-domain block matrix). */
  form: 'retention' | 'uniform' | 'custom';
  /** The form's parameter: retention p, or the uniform coin p (absent for custom). */
  retention?: number;
  /** The diagonal P[v][v] for a·I + b·J matrices. */
  diagonal?: number;
  /** γ-amplification of the matrix (null when infinite). */
  gamma: number | null;
  discretization: Discretization;
  /** How the matrix was chosen. */
  chosenBy: string;
}

export interface MatricesFile {
  ppdp: string;
  scenario: 'rr-s' | 'rr-qi' | 'rr-both';
  form: 'retention' | 'uniform';
  rows: number;
  /** The contingency table's attributes in Kronecker order (QIs, then the SA). */
  attributeOrder: string[];
  attributes: Record<string, MatrixEntry>;
  /** Contingency attributes released without randomization. */
  released: Record<
    string,
    { role: 'quasi-identifying' | 'sensitive'; categories: string[]; discretization: Discretization }
  >;
  sensitive: string;
  privacy: Record<string, unknown>;
  smallDomain?: {
    attribute: string;
    blocks: { categories: string[]; retention: number; diagonal: number; share: number }[];
    guarantee: string;
  };
  /** How the release was drawn (for reproducibility and the verifier; see docs/methods/randomization.md). */
  stream: { generator: string; thresholds: string; key: string; order: string };
}

export function readMatricesFile(path: string): MatricesFile {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new PpdpError(
      'E_MATRICES',
      `${path}: cannot read matrices.json (${(e as Error).message})`,
      'point at the folder of a randomized release (it holds matrices.json next to data.arrow)',
    );
  }
  return parseMatricesFile(text, path);
}

/** A matrices.json's text, checked; `path` names it in errors. */
export function parseMatricesFile(text: string, path: string): MatricesFile {
  const json = parseJsonFile(text, path, 'E_MATRICES', 'the file is damaged: re-run the release');
  const m = json as MatricesFile;
  if (!m || typeof m !== 'object' || !m.attributes || !Array.isArray(m.attributeOrder)) {
    throw new PpdpError(
      'E_MATRICES',
      `${path}: not a ppdp matrices.json`,
      'expected the file a randomization release writes',
    );
  }
  // Keyed by attribute names: one named `constructor` is not Object.prototype's.
  m.attributes = ownRecord(m.attributes);
  m.released = ownRecord(m.released ?? {});
  for (const [name, e] of Object.entries(m.attributes)) {
    const d = e.categories?.length;
    if (
      !d ||
      !Array.isArray(e.matrix) ||
      e.matrix.length !== d ||
      e.matrix.some((r) => !Array.isArray(r) || r.length !== d)
    ) {
      throw new PpdpError(
        'E_MATRICES',
        `${path}: attributes.${name}.matrix is not ${d} × ${d}`,
        'the file is damaged: re-run the release',
      );
    }
  }
  return m;
}

/** Row-major Float64Array of a matrix given as rows. */
export function flatMatrix(rows: readonly (readonly number[])[]): Float64Array {
  const d = rows.length;
  const out = new Float64Array(d * d);
  rows.forEach((row, u) => {
    row.forEach((x, v) => {
      out[u * d + v] = x;
    });
  });
  return out;
}

export function rowsOf(matrix: Float64Array, d: number): number[][] {
  return Array.from({ length: d }, (_, u) => Array.from(matrix.subarray(u * d, u * d + d)));
}
