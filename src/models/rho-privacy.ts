/**
 * (ρ1, ρ2)-privacy of the sensitive attribute of a randomized release (docs/definitions.md §5,
 * Chaytor & Wang after Evfimievski et al.).
 *
 * The adversary is record-independent: his prior on a record's SA value is the SA
 * distribution of the whole input π (Chaytor & Wang: the publisher lets analysts learn it). On
 * seeing the released value y his posterior is Pr(x | y) = P[y][x]·π_x / λ_y. A breach is
 * - upward: some property Q (any set of SA values) with prior π(Q) ≤ ρ1 gets posterior > ρ2;
 * - downward: some Q with prior ≥ ρ2 gets posterior < ρ1, i.e. its complement Q' with prior
 *   ≤ 1 − ρ2 gets posterior > 1 − ρ1.
 * `exactRhoCheck` finds, for every y, the worst Q of each kind exactly (a 0/1 knapsack over
 * the values y can come from, solved by branch and bound), so the check holds for every
 * property, not only single values. A γ-amplifying matrix admits no breach when
 * γ ≤ ρ2(1 − ρ1)/(ρ1(1 − ρ2)).
 */
import { SpecError } from '../errors.ts';
import { describeSpec } from './describe.ts';
import type { ModelDefinition } from './model.ts';

export interface RhoPrivacyModel extends ModelDefinition {
  readonly attribute: string;
  readonly rho1: number;
  readonly rho2: number;
  /** The largest amplification γ a matrix may have to guarantee (ρ1, ρ2)-privacy. */
  readonly gamma: number;
  /** The exact check of an SA matrix (row-major P[y][x], d × d) against the prior π. */
  check(matrix: Float64Array, d: number, prior: Float64Array): RhoCheck;
}

/**
 * (ρ1, ρ2)-privacy of `attribute`; `where` and `field` name the spec's model in the error when
 * the bounds are out of order.
 */
export function rhoPrivacy(
  attribute: string,
  rho1: number,
  rho2: number,
  where: string,
  field: string,
): RhoPrivacyModel {
  if (!(rho1 > 0 && rho1 < rho2 && rho2 < 1)) {
    throw new SpecError(
      'E_SPEC_RANGE',
      `${where}: ${field} needs 0 < rho1 < rho2 < 1 (got rho1 = ${rho1}, rho2 = ${rho2})`,
      'rho1 bounds the prior of a property, rho2 the posterior it may not reach, e.g. rho1 = 0.1, rho2 = 0.5',
    );
  }
  return {
    spec: { model: 'rho-privacy', attribute, rho1, rho2 },
    attribute,
    rho1,
    rho2,
    gamma: gammaFor(rho1, rho2),
    describe(format) {
      return describeSpec(this.spec, format);
    },
    check: (matrix, d, prior) => exactRhoCheck(matrix, d, prior, rho1, rho2),
  };
}

/** γ allowed by (ρ1, ρ2)-privacy: ρ2(1−ρ1) / (ρ1(1−ρ2)). */
export function gammaFor(rho1: number, rho2: number): number {
  return (rho2 * (1 - rho1)) / (rho1 * (1 - rho2));
}

/** Largest ρ2 a γ-amplifying perturbation guarantees for a prior bound ρ1: γρ1 / (1 − ρ1 + γρ1). */
export function impliedRho2(gamma: number, rho1: number): number {
  if (!Number.isFinite(gamma)) return 1;
  return (gamma * rho1) / (1 - rho1 + gamma * rho1);
}

/** What small-domain randomization guarantees under (ρ1, ρ2)-privacy, for the report and matrices.json. */
export function smallDomainGuarantee(rho1: number, rho2: number): string {
  return (
    `For every released row, every set Q of sensitive values whose share of the input is at most ${rho1} has ` +
    `posterior probability at most ${rho2} given the released value (which reveals its sub-domain), and every set ` +
    `whose share is at least ${rho2} keeps posterior at least ${rho1}; the adversary's prior is the sensitive ` +
    'attribute’s distribution over the whole input. Checked exactly by computing the posteriors.'
  );
}

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
