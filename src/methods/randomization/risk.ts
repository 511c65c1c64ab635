/**
 * Attribute disclosure risk under linking attacks (docs/definitions.md §5, the attribute-disclosure paper, Result 1):
 *
 *   risk(α, u) = (π_{α,u} / π_α) · r_QI(α) · r_S(u | α)
 *
 * r_QI = π_QI ∘ ((P_QI∘P_QI)ᵀ · (1 ⊘ λ_QI)) with λ_QI = P_QI·π_QI, both Kronecker products
 * over the QI contingency table, applied mode by mode; r_S(u|α) = π_{u|α} · Σ_ν P_S[ν][u]² /
 * λ_{S|α}(ν) with λ_{S|α} = P_S·π_{·|α}. A QI scenario's factor is 1 for the attributes left
 * unrandomized (P = I): with no randomization at all the risk is the group share π_{α,u}/π_α.
 */
import type { KroneckerKernel, KroneckerSession, ModeMatrix } from '../../kernels/kronecker/kernel.ts';
import type { CategoricalAttribute } from './domain.ts';
import type { Distortion } from './matrices.ts';

/** Above this many QI cells the QI reconstruction probabilities are not computed (dense tensor). */
export const MAX_QI_CELLS = 2 ** 22;

/** The input table as the risk needs it: the QI table dense, the (α, u) cells sparse. */
export interface RiskTable {
  readonly qiDims: number[];
  readonly saDim: number;
  readonly rows: number;
  /** Number of QI cells Π qiDims. */
  readonly qiCells: number;
  /** π_QI as proportions, dense (only when qiCells ≤ MAX_QI_CELLS). */
  readonly piQI: Float64Array | undefined;
  /** Distinct QI tuples present: their row-major index, row count, and their cells [start, end). */
  readonly alphaIndex: Float64Array;
  readonly alphaCount: Float64Array;
  readonly alphaStart: Int32Array;
  /** Distinct (α, u) cells grouped by α: the SA code and the row count. */
  readonly cellU: Int32Array;
  readonly cellCount: Float64Array;
}

export function riskTable(attributes: readonly CategoricalAttribute[]): RiskTable {
  const qis = attributes.filter((a) => a.role === 'quasi-identifying');
  const sa = attributes.find((a) => a.role === 'sensitive')!;
  const qiDims = qis.map((a) => a.categories.length);
  const saDim = sa.categories.length;
  const rows = sa.codes.length;
  let qiCells = 1;
  for (const d of qiDims) qiCells *= d;
  const key = new Float64Array(rows);
  for (let r = 0; r < rows; r++) {
    let alpha = 0;
    for (let i = 0; i < qis.length; i++) alpha = alpha * qiDims[i]! + qis[i]!.codes[r]!;
    key[r] = alpha * saDim + sa.codes[r]!;
  }
  key.sort();
  const alphaIndex: number[] = [];
  const alphaCount: number[] = [];
  const alphaStart: number[] = [];
  const cellU: number[] = [];
  const cellCount: number[] = [];
  for (let r = 0; r < rows; ) {
    let e = r + 1;
    while (e < rows && key[e] === key[r]) e++;
    const alpha = Math.floor(key[r]! / saDim);
    const u = key[r]! - alpha * saDim;
    if (alphaIndex.length === 0 || alphaIndex[alphaIndex.length - 1] !== alpha) {
      alphaIndex.push(alpha);
      alphaCount.push(0);
      alphaStart.push(cellU.length);
    }
    alphaCount[alphaCount.length - 1]! += e - r;
    cellU.push(u);
    cellCount.push(e - r);
    r = e;
  }
  alphaStart.push(cellU.length);
  let piQI: Float64Array | undefined;
  if (qiCells <= MAX_QI_CELLS) {
    piQI = new Float64Array(qiCells);
    alphaIndex.forEach((a, i) => {
      piQI![a] = alphaCount[i]! / rows;
    });
  }
  return {
    qiDims,
    saDim,
    rows,
    qiCells,
    piQI,
    alphaIndex: Float64Array.from(alphaIndex),
    alphaCount: Float64Array.from(alphaCount),
    alphaStart: Int32Array.from(alphaStart),
    cellU: Int32Array.from(cellU),
    cellCount: Float64Array.from(cellCount),
  };
}

export interface RiskSummary {
  /** Largest risk over the input's rows. */
  readonly max: number;
  /** Average over the input's rows. */
  readonly mean: number;
}

/** Per (α, u) cell of the table, in its cell order. */
export interface RiskDetail extends RiskSummary {
  readonly cellRisk: Float64Array;
  /** r_QI per distinct α. */
  readonly rQI: Float64Array;
}

/**
 * A mode's distortion for the risk: a matrix, the diagonal of an a·I + b·J matrix (what the
 * optimizer varies), or null when the attribute is not randomized.
 */
export type RiskOperand = Distortion | number | null;

/** The QI operands (Kronecker order) and the SA's. */
export interface RiskMatrices {
  readonly qi: readonly RiskOperand[];
  readonly sa: RiskOperand;
}

const diagOfOperand = (p: RiskOperand): number | undefined => (typeof p === 'number' ? p : p?.diag);
const isIdentity = (p: RiskOperand) => p === null || diagOfOperand(p) === 1;

/**
 * The Kronecker operator of a distortion: P itself, or (P∘P)ᵀ. For a·I + b·J matrices with
 * diagonal p and off-diagonal q both are structured: P = (p − q)·I + q·J, (P∘P)ᵀ = (p² − q²)·I + q²·J.
 */
export function operatorOf(p: Distortion | number, d: number, squaredTransposed: boolean): ModeMatrix {
  const diag = diagOfOperand(p);
  if (diag !== undefined) {
    const q = d > 1 ? (1 - diag) / (d - 1) : 0;
    return squaredTransposed ? { a: diag * diag - q * q, b: q * q } : { a: diag - q, b: q };
  }
  p = p as Distortion;
  if (!squaredTransposed) return p.matrix;
  const out = new Float64Array(d * d);
  for (let u = 0; u < d; u++) for (let v = 0; v < d; v++) out[v * d + u] = p.matrix[u * d + v]! ** 2;
  return out;
}

export class RiskEvaluator {
  private session: KroneckerSession | undefined;
  private readonly rQI: Float64Array;
  private readonly saScratch: Float64Array;
  private readonly rS: Float64Array;
  evaluations = 0;

  constructor(
    readonly table: RiskTable,
    private readonly kernel: KroneckerKernel,
  ) {
    this.rQI = new Float64Array(table.alphaIndex.length);
    this.saScratch = new Float64Array(table.saDim);
    this.rS = new Float64Array(table.cellU.length);
  }

  /** Whether the QI factor can be computed (the QI table fits densely). */
  get qiComputable(): boolean {
    return this.table.piQI !== undefined;
  }

  summary(m: RiskMatrices): RiskSummary {
    return this.run(m, undefined);
  }

  detail(m: RiskMatrices): RiskDetail {
    const cellRisk = new Float64Array(this.table.cellU.length);
    const s = this.run(m, cellRisk);
    return { ...s, cellRisk, rQI: this.rQI.slice() };
  }

  private run(m: RiskMatrices, cellRisk: Float64Array | undefined): RiskSummary {
    this.evaluations++;
    const t = this.table;
    this.qiFactor(m.qi);
    const rS = this.rS;
    const saDiag = diagOfOperand(m.sa);
    if (isIdentity(m.sa)) rS.fill(1);
    else if (saDiag !== undefined) this.saStructured(saDiag);
    else this.saGeneral((m.sa as Distortion).matrix);
    let max = 0;
    let total = 0;
    const nAlpha = t.alphaIndex.length;
    for (let i = 0; i < nAlpha; i++) {
      const end = t.alphaStart[i + 1]!;
      const scale = this.rQI[i]! / t.alphaCount[i]!;
      for (let c = t.alphaStart[i]!; c < end; c++) {
        const risk = t.cellCount[c]! * scale * rS[c]!;
        if (cellRisk) cellRisk[c] = risk;
        if (risk > max) max = risk;
        total += risk * t.cellCount[c]!;
      }
    }
    return { max, mean: total / t.rows };
  }

  /** Fills rQI per distinct α. */
  private qiFactor(qi: readonly RiskOperand[]): void {
    const t = this.table;
    if (qi.every(isIdentity)) {
      this.rQI.fill(1);
      return;
    }
    if (!t.piQI) throw new Error('risk: the QI table is too large to randomize QIs');
    this.session ??= this.kernel.open(t.qiDims);
    const forward: ModeMatrix[] = qi.map((p, i) =>
      isIdentity(p) ? null : operatorOf(p!, t.qiDims[i]!, false),
    );
    const lambda = this.session.apply(forward, t.piQI);
    for (let b = 0; b < lambda.length; b++) lambda[b] = lambda[b]! > 0 ? 1 / lambda[b]! : 0;
    const squaredT: ModeMatrix[] = qi.map((p, i) =>
      isIdentity(p) ? null : operatorOf(p!, t.qiDims[i]!, true),
    );
    const w = this.session.apply(squaredT, lambda);
    for (let i = 0; i < t.alphaIndex.length; i++) {
      const a = t.alphaIndex[i]!;
      this.rQI[i] = t.piQI[a]! * w[a]!;
    }
  }

  /** r_S(u | α) per cell for an a·I + b·J matrix with diagonal p: λ(ν) = (p − q)·c_ν + q and
   *  Σ_ν P[ν][u]²/λ(ν) = (p² − q²)/λ(u) + q²·Σ_ν 1/λ(ν). */
  private saStructured(p: number): void {
    const t = this.table;
    const d = t.saDim;
    const q = (1 - p) / (d - 1);
    const nAlpha = t.alphaIndex.length;
    for (let i = 0; i < nAlpha; i++) {
      const start = t.alphaStart[i]!;
      const end = t.alphaStart[i + 1]!;
      const nA = t.alphaCount[i]!;
      let sumInv = (d - (end - start)) / q;
      for (let c = start; c < end; c++) sumInv += 1 / ((p - q) * (t.cellCount[c]! / nA) + q);
      for (let c = start; c < end; c++) {
        const share = t.cellCount[c]! / nA;
        this.rS[c] = share * ((p * p - q * q) / ((p - q) * share + q) + q * q * sumInv);
      }
    }
  }

  /** r_S(u | α) per cell for any matrix: λ = P·π_{·|α}, then π_{u|α}·Σ_ν P[ν][u]²/λ(ν). */
  private saGeneral(m: Float64Array): void {
    const t = this.table;
    const d = t.saDim;
    const lambda = this.saScratch;
    const nAlpha = t.alphaIndex.length;
    for (let i = 0; i < nAlpha; i++) {
      const start = t.alphaStart[i]!;
      const end = t.alphaStart[i + 1]!;
      const nA = t.alphaCount[i]!;
      lambda.fill(0, 0, d);
      for (let c = start; c < end; c++) {
        const u = t.cellU[c]!;
        const share = t.cellCount[c]! / nA;
        for (let v = 0; v < d; v++) lambda[v]! += m[v * d + u]! * share;
      }
      for (let c = start; c < end; c++) {
        const u = t.cellU[c]!;
        let s = 0;
        for (let v = 0; v < d; v++) {
          const x = m[v * d + u]!;
          if (x > 0) s += (x * x) / lambda[v]!;
        }
        this.rS[c] = (t.cellCount[c]! / nA) * s;
      }
    }
  }

  dispose(): void {
    this.session?.dispose();
  }
}
