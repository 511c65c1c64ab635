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
 * the values y can come from, weighted by their rows in the input), so the check holds for
 * every property, not only single values. A γ-amplifying matrix admits no breach when
 * γ ≤ ρ2(1 − ρ1)/(ρ1(1 − ρ2)).
 */
import { SpecError } from '../errors.ts';
import { runSteps, type Steps } from '../util/steps.ts';
import { describeSpec } from './describe.ts';
import type { ModelDefinition } from './model.ts';

export interface RhoPrivacyModel extends ModelDefinition {
  readonly attribute: string;
  readonly rho1: number;
  readonly rho2: number;
  /** The largest amplification γ a matrix may have to guarantee (ρ1, ρ2)-privacy. */
  readonly gamma: number;
  /** The exact check of an SA matrix (row-major P[y][x], d × d) against the input's SA counts. */
  check(matrix: Float64Array, d: number, counts: ArrayLike<number>): RhoCheck;
  /** The same check, yielding after each released value (src/util/steps.ts). */
  checkSteps(matrix: Float64Array, d: number, counts: ArrayLike<number>): Steps<RhoCheck>;
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
    check: (matrix, d, counts) => exactRhoCheck(matrix, d, counts, rho1, rho2),
    checkSteps: (matrix, d, counts) => exactRhoCheckSteps(matrix, d, counts, rho1, rho2),
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

/**
 * The largest set of input rows a property may hold and still count: `share` of `rows`, as a
 * whole number of rows (the relative slack absorbs rounding in `share · rows`, e.g. 1 − 0.9).
 */
export function rowsWithin(share: number, rows: number): number {
  return Math.floor(share * rows * (1 + 1e-12));
}

/** The sums 0..cap that subsets of a multiset of whole numbers reach, as a bitset. */
export class SubsetSums {
  private constructor(
    readonly cap: number,
    private readonly words: Uint32Array,
  ) {}

  /** Only the empty sum. */
  static empty(cap: number): SubsetSums {
    const words = new Uint32Array((cap >>> 5) + 1);
    words[0] = 1;
    return new SubsetSums(cap, words);
  }

  copy(): SubsetSums {
    return new SubsetSums(this.cap, this.words.slice());
  }

  /** Adds one item of weight `c` ≥ 1: sums ∪ (sums + c). */
  add(c: number): void {
    if (c > this.cap) return;
    const w = this.words;
    const ws = c >>> 5;
    const bs = c & 31;
    // From the top down, so that every word read is still the old one.
    for (let i = w.length - 1; i >= ws; i--) {
      let x = w[i - ws]! << bs;
      if (bs !== 0 && i - ws >= 1) x |= w[i - ws - 1]! >>> (32 - bs);
      w[i]! |= x;
    }
    w[w.length - 1]! &= 0xffffffff >>> (31 - (this.cap & 31));
  }

  /** Adds `m` items of weight `c` (as items of 1, 2, 4, … times c: every count 0..m is a subset of them). */
  addCopies(c: number, m: number): void {
    for (let k = 1; m > 0; k *= 2) {
      const t = Math.min(k, m);
      this.add(c * t);
      m -= t;
    }
  }

  /** The largest reachable sum ≤ t, or −1 when t < 0. */
  largestAtMost(t: number): number {
    if (t < 0) return -1;
    let i = Math.min(t, this.cap) >>> 5;
    let x = this.words[i]! & (0xffffffff >>> (31 - (Math.min(t, this.cap) & 31)));
    while (x === 0) x = this.words[--i]!; // bit 0 (the empty sum) is always set
    return i * 32 + 31 - Math.clz32(x);
  }
}

/** Items of one ratio (value = ratio · weight) and the sums their weights reach. */
interface RatioClass {
  readonly ratio: number;
  readonly total: number;
  readonly sums: SubsetSums;
}

/**
 * Max Σ ratio·weight over subsets with Σ weight ≤ cap, the items grouped into classes of equal
 * ratio: branch and bound over the classes (highest ratio first), each class taking one of the
 * sums its weights reach. Items of one ratio tie, which left the branch and bound over items
 * exponential (a 50-value attribute took minutes); within a class the choice is a subset sum.
 */
export function bestSubset(classes: readonly RatioClass[], cap: number): number {
  const sorted = [...classes].sort((a, b) => b.ratio - a.ratio);
  let best = 0;
  /** The fractional bound of the classes from g on, in `room`. */
  const bound = (g: number, room: number): number => {
    let b = 0;
    for (let j = g; j < sorted.length && room > 0; j++) {
      const take = Math.min(room, sorted[j]!.total);
      b += sorted[j]!.ratio * take;
      room -= take;
    }
    return b;
  };
  const go = (g: number, room: number, acc: number): void => {
    if (acc > best) best = acc;
    if (g === sorted.length || acc + bound(g, room) <= best) return;
    const { ratio, sums } = sorted[g]!;
    if (g === sorted.length - 1) {
      best = Math.max(best, acc + ratio * sums.largestAtMost(room));
      return;
    }
    // Larger sums first; the bound only falls as the sum falls (later ratios are no higher).
    for (let t = sums.largestAtMost(room); t >= 0; t = sums.largestAtMost(t - 1)) {
      if (acc + ratio * t + bound(g + 1, room - t) <= best) return;
      go(g + 1, room - t, acc + ratio * t);
    }
  };
  go(0, cap, 0);
  return best;
}

/**
 * For a multiset of weights, and each distinct weight c in it, the largest sum ≤ each of
 * `thresholds(c)` that subsets of the multiset without one item of weight c reach. Divide and
 * conquer over the distinct weights: each half's sums get the other half's items, so every
 * leaf holds all items but one in O(K log K) additions for K distinct weights.
 */
export function sumsWithoutOne(
  weights: readonly number[],
  cap: number,
  thresholds: (c: number) => number[],
): Map<number, number[]> {
  const multiplicity = new Map<number, number>();
  for (const c of weights) multiplicity.set(c, (multiplicity.get(c) ?? 0) + 1);
  const bundles = [...multiplicity];
  const out = new Map<number, number[]>();
  const add = (sums: SubsetSums, from: number, to: number) => {
    for (let i = from; i < to; i++) sums.addCopies(bundles[i]![0], bundles[i]![1]);
  };
  // `sums` belongs to the call: the right half reuses it once the left half has its copy.
  const split = (lo: number, hi: number, sums: SubsetSums): void => {
    if (hi - lo === 1) {
      const [c, m] = bundles[lo]!;
      sums.addCopies(c, m - 1);
      out.set(
        c,
        thresholds(c).map((t) => sums.largestAtMost(t)),
      );
      return;
    }
    const mid = (lo + hi) >> 1;
    const left = sums.copy();
    add(left, mid, hi);
    split(lo, mid, left);
    add(sums, lo, mid);
    split(mid, hi, sums);
  };
  if (bundles.length > 0) split(0, bundles.length, SubsetSums.empty(cap));
  return out;
}

/**
 * Exact (ρ1, ρ2) check of an SA matrix (row-major P[y][x], d × d) against the input's SA
 * counts (`counts[x]` rows hold value x; `rows` the input's rows, by default their sum).
 */
export function exactRhoCheck(
  matrix: Float64Array,
  d: number,
  counts: ArrayLike<number>,
  rho1: number,
  rho2: number,
  rows?: number,
): RhoCheck {
  return runSteps(exactRhoCheckSteps(matrix, d, counts, rho1, rho2, rows));
}

/**
 * The exact check, one released value at a time. For released value y the posterior of a
 * property Q is Σ_{x∈Q} P[y][x]·n_x / Σ_x P[y][x]·n_x, and the worst Q of each kind a 0/1
 * knapsack over the values y comes from: weight n_x, ratio P[y][x]. An a·I + b·J matrix (and a
 * sub-domain's block) gives every row two ratios, its own value's and one shared by the rest
 * of its support: those rows take the rest's subset sums from `sumsWithoutOne`, computed once
 * for every row of the same support; any other row goes through `bestSubset`.
 */
export function* exactRhoCheckSteps(
  matrix: Float64Array,
  d: number,
  counts: ArrayLike<number>,
  rho1: number,
  rho2: number,
  rows?: number,
): Steps<RhoCheck> {
  let n = rows ?? 0;
  if (rows === undefined) for (let x = 0; x < d; x++) n += counts[x]!;
  const upCap = rowsWithin(rho1, n);
  const downCap = rowsWithin(1 - rho2, n);
  const cap = Math.max(upCap, downCap);
  const families = new Map<string, Map<number, number[]>>();
  let worstUpward = 0;
  let worstDownward = 0;
  for (let y = 0; y < d; y++) {
    let lambda = 0;
    const support: number[] = [];
    for (let x = 0; x < d; x++) {
      const mass = matrix[y * d + x]! * counts[x]!;
      if (mass > 0) {
        lambda += mass;
        support.push(x);
      }
    }
    if (!(lambda > 0)) continue;
    const ratios = new Map<number, number[]>();
    for (const x of support) {
      const r = matrix[y * d + x]!;
      const same = ratios.get(r);
      if (same) same.push(x);
      else ratios.set(r, [x]);
    }
    let up: number;
    let down: number;
    const [one, rest] = [...ratios].sort((a, b) => a[1].length - b[1].length);
    if (ratios.size === 2 && one![1].length === 1) {
      // One value z apart, the rest of the support sharing one ratio: with z or without it.
      const key = support.join(',');
      let family = families.get(key);
      if (!family) {
        family = sumsWithoutOne(
          support.map((x) => counts[x]!),
          cap,
          (c) => [upCap, upCap - c, downCap, downCap - c],
        );
        families.set(key, family);
      }
      const [rz, [z]] = one!;
      const rb = rest![0];
      const cz = counts[z!]!;
      const [upOut, upIn, downOut, downIn] = family.get(cz)!;
      up = Math.max(rb * upOut!, upIn! >= 0 ? rz * cz + rb * upIn! : 0);
      down = Math.max(rb * downOut!, downIn! >= 0 ? rz * cz + rb * downIn! : 0);
    } else {
      const classes = [...ratios].map(([ratio, xs]): RatioClass => {
        const sums = SubsetSums.empty(cap);
        let total = 0;
        for (const x of xs) {
          sums.add(counts[x]!);
          total += counts[x]!;
        }
        return { ratio, total, sums };
      });
      up = bestSubset(classes, upCap);
      down = bestSubset(classes, downCap);
    }
    worstUpward = Math.max(worstUpward, up / lambda);
    worstDownward = Math.max(worstDownward, down / lambda);
    yield;
  }
  return {
    worstUpward,
    worstDownward,
    satisfied: worstUpward <= rho2 + RHO_TOLERANCE && worstDownward <= 1 - rho1 + RHO_TOLERANCE,
  };
}
