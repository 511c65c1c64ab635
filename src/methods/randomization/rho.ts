/**
 * Small-domain randomization (Chaytor & Wang) under (ρ1, ρ2)-privacy (src/models/rho-privacy.ts).
 *
 * Small-domain randomization: the SA values are partitioned into sub-domains and each value
 * is perturbed only within its own (a block-diagonal matrix). The released value then tells
 * the adversary the sub-domain, which is why the check must be exact: the partition may
 * disclose more than γ-amplification inside a block suggests. Each block gets the largest
 * uniform-perturbation retention that passes the exact check (the check decomposes by block,
 * and within a block it holds on an interval [0, p*) of retentions), and the partition — SA
 * values sorted by frequency, cut into contiguous runs — is the one minimizing the expected
 * squared reconstruction error Σ_blocks π(block)·‖P_b⁻¹‖²_F/m_b, by dynamic programming.
 */
import { exactRhoCheck } from '../../models/rho-privacy.ts';
import { runSteps, type Steps } from '../../util/steps.ts';
import { diagOf, inverseNormFactor, structuredDistortion } from './matrices.ts';

export interface SubDomain {
  /** SA category codes in the block. */
  readonly values: number[];
  /** Uniform-perturbation retention (coin) inside the block; 1 for a block that needs none. */
  readonly retention: number;
  /** The block matrix's diagonal (retention form parameter). */
  readonly diag: number;
  /** π(block). */
  readonly share: number;
}

export interface SmallDomainPlan {
  readonly blocks: SubDomain[];
  /** The d × d block-diagonal matrix, row-major. */
  readonly matrix: Float64Array;
  /** Σ_blocks π(block)·‖P_b⁻¹‖²_F/m_b: the SA factor of the expected squared error. */
  readonly errorFactor: number;
}

/** The block-diagonal SA matrix of a partition with given per-block coins (uniform perturbation). */
export function blockMatrix(
  d: number,
  blocks: readonly { values: number[]; retention: number }[],
): Float64Array {
  const m = new Float64Array(d * d);
  for (const b of blocks) {
    const size = b.values.length;
    const inner = structuredDistortion('uniform', size, diagOf('uniform', size, b.retention)).matrix;
    b.values.forEach((x, j) => {
      b.values.forEach((y, i) => {
        m[y * d + x] = inner[i * size + j]!;
      });
    });
  }
  return m;
}

/**
 * Largest uniform coin p for one block that passes the exact check, or undefined if even p = 0
 * fails. The check decomposes by block: a released value of the block comes only from the
 * block's values, whose priors are their rows among all `rows`.
 */
export function blockRetention(
  values: readonly number[],
  counts: ArrayLike<number>,
  rows: number,
  rho1: number,
  rho2: number,
): number | undefined {
  const m = values.length;
  const inBlock = values.map((x) => counts[x]!);
  const ok = (p: number) =>
    exactRhoCheck(
      structuredDistortion('uniform', m, diagOf('uniform', m, p)).matrix,
      m,
      inBlock,
      rho1,
      rho2,
      rows,
    ).satisfied;
  if (!ok(0)) return undefined;
  if (m === 1 || ok(1)) return 1;
  let lo = 0;
  let hi = 1;
  for (let i = 0; i < 50 && hi - lo > 1e-12; i++) {
    const mid = (lo + hi) / 2;
    if (ok(mid)) lo = mid;
    else hi = mid;
  }
  return lo;
}

/**
 * The small-domain partition: values sorted by frequency (descending, ties by code), cut into
 * contiguous blocks by dynamic programming on the expected-error factor. `counts[x]` rows of
 * the input hold value x.
 */
export function smallDomainPlan(
  counts: ArrayLike<number>,
  rho1: number,
  rho2: number,
): SmallDomainPlan | undefined {
  return runSteps(smallDomainSteps(counts, rho1, rho2));
}

/** `smallDomainPlan`, yielding after each block it tries (and calling `tried`). */
export function* smallDomainSteps(
  counts: ArrayLike<number>,
  rho1: number,
  rho2: number,
  tried: () => void = () => {},
): Steps<SmallDomainPlan | undefined> {
  const d = counts.length;
  let rows = 0;
  for (let x = 0; x < d; x++) rows += counts[x]!;
  const order = Array.from({ length: d }, (_, i) => i).sort((a, b) => counts[b]! - counts[a]! || a - b);
  const cost = new Float64Array(d + 1).fill(Number.POSITIVE_INFINITY);
  const cut = new Int32Array(d + 1).fill(-1);
  const coin = new Float64Array(d + 1);
  cost[0] = 0;
  for (let end = 1; end <= d; end++) {
    for (let start = 0; start < end; start++) {
      if (!Number.isFinite(cost[start]!)) continue;
      const values = order.slice(start, end);
      const p = blockRetention(values, counts, rows, rho1, rho2);
      tried();
      yield;
      if (p === undefined) continue;
      const m = values.length;
      let share = 0;
      for (const x of values) share += counts[x]! / rows;
      const factor = inverseNormFactor(m, diagOf('uniform', m, p));
      const c = cost[start]! + share * factor;
      if (c < cost[end]!) {
        cost[end] = c;
        cut[end] = start;
        coin[end] = p;
      }
    }
  }
  if (!Number.isFinite(cost[d]!)) return undefined;
  const blocks: SubDomain[] = [];
  for (let end = d; end > 0; end = cut[end]!) {
    const start = cut[end]!;
    const values = order.slice(start, end).sort((a, b) => a - b);
    let share = 0;
    for (const x of values) share += counts[x]! / rows;
    const retention = coin[end]!;
    blocks.unshift({ values, retention, diag: diagOf('uniform', values.length, retention), share });
  }
  return { blocks, matrix: blockMatrix(d, blocks), errorFactor: cost[d]! };
}
