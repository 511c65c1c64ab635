/**
 * (ρ1, ρ2)-privacy of the sensitive attribute (docs/definitions.md §5, Chaytor & Wang after Evfimievski et al.)
 * and small-domain randomization (Chaytor & Wang).
 *
 * The adversary is record-independent: his prior on a record's SA value is the SA
 * distribution of the whole input π (Chaytor & Wang: the publisher lets analysts learn it). On
 * seeing the released value y his posterior is Pr(x | y) = P[y][x]·π_x / λ_y. A breach is
 * - upward: some property Q (any set of SA values) with prior π(Q) ≤ ρ1 gets posterior > ρ2;
 * - downward: some Q with prior ≥ ρ2 gets posterior < ρ1, i.e. its complement Q' with prior
 *   ≤ 1 − ρ2 gets posterior > 1 − ρ1.
 * `exactRhoCheck` finds, for every y, the worst Q of each kind exactly (a 0/1 knapsack over
 * the values y can come from, solved by branch and bound), so the check holds for every
 * property, not only single values.
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
import { diagOf, inverseNormFactor, structuredDistortion } from './matrices.ts';

export interface RhoCheck {
  /** Largest posterior of a property whose prior is ≤ ρ1, over all released values. */
  readonly worstUpward: number;
  /** Largest posterior of a property whose prior is ≤ 1 − ρ2 (downward breach when > 1 − ρ1). */
  readonly worstDownward: number;
  readonly satisfied: boolean;
}

/** Tolerance for comparing posteriors with ρ bounds (floating point only). */
export const RHO_TOLERANCE = 1e-12;

/** Max Σ value subject to Σ weight ≤ cap over subsets (branch and bound on value/weight order). */
export function knapsack(values: readonly number[], weights: readonly number[], cap: number): number {
  const items = values
    .map((v, i) => ({ v, w: weights[i]! }))
    .filter((x) => x.v > 0)
    .sort((a, b) => (a.w === 0 ? -1 : b.w === 0 ? 1 : b.v / b.w - a.v / a.w));
  let best = 0;
  const bound = (i: number, room: number, acc: number) => {
    let b = acc;
    for (let j = i; j < items.length; j++) {
      const it = items[j]!;
      if (it.w <= room) {
        room -= it.w;
        b += it.v;
      } else return b + (it.v * room) / it.w;
    }
    return b;
  };
  const go = (i: number, room: number, acc: number) => {
    if (acc > best) best = acc;
    if (i === items.length || bound(i, room, acc) <= best) return;
    const it = items[i]!;
    if (it.w <= room + 1e-15) go(i + 1, room - it.w, acc + it.v);
    go(i + 1, room, acc);
  };
  go(0, cap, 0);
  return best;
}

/**
 * Exact (ρ1, ρ2) check of an SA matrix (row-major P[y][x], d × d) against the prior π.
 */
export function exactRhoCheck(
  matrix: Float64Array,
  d: number,
  prior: Float64Array,
  rho1: number,
  rho2: number,
): RhoCheck {
  let worstUpward = 0;
  let worstDownward = 0;
  for (let y = 0; y < d; y++) {
    let lambda = 0;
    for (let x = 0; x < d; x++) lambda += matrix[y * d + x]! * prior[x]!;
    if (!(lambda > 0)) continue;
    const post: number[] = [];
    const pri: number[] = [];
    for (let x = 0; x < d; x++) {
      const p = (matrix[y * d + x]! * prior[x]!) / lambda;
      if (p > 0) {
        post.push(p);
        pri.push(prior[x]!);
      }
    }
    worstUpward = Math.max(worstUpward, knapsack(post, pri, rho1));
    worstDownward = Math.max(worstDownward, knapsack(post, pri, 1 - rho2));
  }
  return {
    worstUpward,
    worstDownward,
    satisfied: worstUpward <= rho2 + RHO_TOLERANCE && worstDownward <= 1 - rho1 + RHO_TOLERANCE,
  };
}

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

/** Largest uniform coin p for one block that passes the exact check, or undefined if even p = 0 fails. */
export function blockRetention(
  values: readonly number[],
  d: number,
  prior: Float64Array,
  rho1: number,
  rho2: number,
): number | undefined {
  const ok = (p: number) =>
    exactRhoCheck(blockMatrix(d, [{ values: [...values], retention: p }]), d, prior, rho1, rho2).satisfied;
  if (!ok(0)) return undefined;
  if (values.length === 1 || ok(1)) return 1;
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
 * contiguous blocks by dynamic programming on the expected-error factor.
 */
export function smallDomainPlan(
  prior: Float64Array,
  rho1: number,
  rho2: number,
): SmallDomainPlan | undefined {
  const d = prior.length;
  const order = Array.from({ length: d }, (_, i) => i).sort((a, b) => prior[b]! - prior[a]! || a - b);
  const cost = new Float64Array(d + 1).fill(Number.POSITIVE_INFINITY);
  const cut = new Int32Array(d + 1).fill(-1);
  const coin = new Float64Array(d + 1);
  const coins = new Map<string, number>();
  cost[0] = 0;
  for (let end = 1; end <= d; end++) {
    for (let start = 0; start < end; start++) {
      if (!Number.isFinite(cost[start]!)) continue;
      const values = order.slice(start, end);
      const p = blockRetention(values, d, prior, rho1, rho2);
      if (p === undefined) continue;
      const m = values.length;
      let share = 0;
      for (const x of values) share += prior[x]!;
      const factor = inverseNormFactor(m, diagOf('uniform', m, p));
      const c = cost[start]! + share * factor;
      if (c < cost[end]!) {
        cost[end] = c;
        cut[end] = start;
        coin[end] = p;
        coins.set(`${start}:${end}`, p);
      }
    }
  }
  if (!Number.isFinite(cost[d]!)) return undefined;
  const blocks: SubDomain[] = [];
  for (let end = d; end > 0; end = cut[end]!) {
    const start = cut[end]!;
    const values = order.slice(start, end).sort((a, b) => a - b);
    let share = 0;
    for (const x of values) share += prior[x]!;
    const retention = coin[end]!;
    blocks.unshift({ values, retention, diag: diagOf('uniform', values.length, retention), share });
  }
  return { blocks, matrix: blockMatrix(d, blocks), errorFactor: cost[d]! };
}
