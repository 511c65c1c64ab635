/**
 * Best-effort full-domain generalization, for lattices too large to enumerate (or when the
 * spec sets a time limit or a node budget). Anytime: the best node found only improves.
 *
 * 1. Greedy descent from the top: from the top node (feasible if anything is), step to the
 *    first direct specialization, in order of a-priori bound, that is feasible and better —
 *    about one check per step, so a good feasible node comes early however many QIs there are.
 *    Then descent (below) from there.
 * 2. Greedy climb (Lightning-like): from the bottom, step to the successor that removes the
 *    most rows from too-small classes per unit of a-priori cost, until a node is feasible;
 *    descent from there. Descent: from a node, try its specializations, generalizations and
 *    swaps (one QI down, another up) in order of their a-priori bound, skipping those whose
 *    bound cannot beat the best value; move on the first improvement, until none improves.
 * 3. Iterated local search: mutate the best node or cross two of the best nodes kept, climb back
 *    to feasibility, descend; until the node budget (the deterministic stop), the time limit
 *    (a safety stop), the bound below closes the gap, or no better node in STALL_NODES checks
 *    (converged).
 *
 * The lower bound on the optimum's value (proved, not estimated): the optimum is a feasible
 * node, so it is not a specialization of a node known infeasible (monotonic models; for the
 * others, a node whose classes below k alone exceed the suppression limit). A best-first walk
 * over the corners of the region left (children of a corner raise one QI past the infeasible
 * node that covers it) finds the least a-priori bound there — the metric with no suppression,
 * which holds for a node and all its generalizations. Evaluated corners contribute their value
 * and pass on to their successors. Stopped early, the least bound on the walk's frontier still
 * holds.
 *
 * Every random choice comes from the stream it is given (ctx.random('search')): for a seed and a
 * node budget the result is reproducible; a time limit that stops first makes it depend on speed.
 */
import { smallestPassingClass } from '../../models/index.ts';
import type { UniformDraws } from '../../util/random.ts';
import { type Around, runSteps, runStepsAsync, SLICE_MS, type Steps, sliced } from '../../util/steps.ts';
import { below, type NodeEvaluator, type NodeResult } from './evaluate.ts';
import { compareTieBreak, nearlyEqual } from './lattice.ts';
import { noSolution, prunable, type SearchOutcome } from './search.ts';

export interface BestEffortOptions {
  /** Nodes evaluated at most (the deterministic stop). */
  readonly nodeBudget: number;
  /** Wall time at most, in ms (a safety stop; Infinity for none). */
  readonly timeLimitMs: number;
  readonly random: UniformDraws;
  /**
   * Called about every `progressMs` with where the search stands (default 1.8 s: with the check
   * in progress added, lines come at most about 2 s apart).
   */
  readonly progress?: (p: BestEffortProgress) => void;
  readonly progressMs?: number;
  readonly now?: () => number;
}

export interface BestEffortProgress {
  readonly nodesChecked: number;
  readonly best: number | undefined;
  readonly lowerBound: number;
  readonly elapsedMs: number;
}

export interface BestEffortOutcome extends SearchOutcome {
  /** A proved lower bound on the optimum's value (≤ best.value). */
  readonly lowerBound: number;
  /** Why the search stopped. */
  readonly stoppedBy: 'optimal' | 'node budget' | 'time limit' | 'converged';
  /** Where the search stood each time the best value or the bound improved; the last point is the result. */
  readonly trajectory: readonly TrajectoryPoint[];
}

/** One point of the search's trajectory. */
export interface TrajectoryPoint {
  /** Wall time since the search started, in ms (it varies between runs, like the timings). */
  readonly ms: number;
  readonly nodesChecked: number;
  /** The best value found so far (the spec's metric). */
  readonly best: number;
  /** The lower bound proved so far on the optimum's value (≤ best). */
  readonly bound: number;
}

/** Points a trajectory keeps at most: past it, every other point between the first and the last goes. */
export const TRAJECTORY_POINTS = 200;

/** A full trajectory thinned evenly: its first point and every other one after it, the last kept. */
export function thinned<T>(points: readonly T[]): T[] {
  const last = points.length - 1;
  return points.filter((_, i) => i === 0 || i === last || i % 2 === 1);
}

interface Known {
  readonly feasible: boolean;
  readonly value: number;
  /** Rows in classes smaller than any model lets pass. */
  readonly below: number;
}

class Stop extends Error {
  constructor(readonly why: 'node budget' | 'time limit' | 'optimal') {
    super(why);
  }
}

const ELITE = 8;
/** Corners the bound's best-first walk pops at most (then its frontier's least bound holds). */
const BOUND_POPS = 200_000;
/** Wall time the walk may take during the search (progress, the closed-gap check), and at the end. */
const BOUND_MS = 40;
const FINAL_BOUND_MS = 1000;
/** Corners the closed-gap check pops at most. */
const CLOSED_POPS = 3000;
/** Rounds of the local search that evaluate nothing new before it calls the search converged. */
const IDLE_ROUNDS = 200;
/** Evaluations between two checks of whether the bound closes the gap. */
const CLOSED_CHECK_EVERY = 500;
/** Evaluations since the best node last improved after which the local search calls the search converged. */
const STALL_NODES = 2000;

export class BestEffortSearch {
  private readonly known = new Map<number, Known>();
  /** Maximal nodes known infeasible with every specialization (level vectors). */
  private readonly infeasible: number[][] = [];
  private best: NodeResult | undefined;
  private readonly elite: number[] = [];
  private readonly apriori = new Map<number, number>();
  private readonly monotonic: boolean;
  private readonly k: number;
  private readonly t0: number;
  /** The time limit less the final bound's share (a twentieth, at most FINAL_BOUND_MS). */
  private readonly searchMs: number;
  private lastProgress: number;
  private evaluated = 0;
  private stopped: BestEffortOutcome['stoppedBy'] = 'converged';
  private nextClosedCheck = 0;
  private proved = Number.NEGATIVE_INFINITY;
  /** Evaluations done when the best node last improved. */
  private improvedAt = 0;
  private readonly trajectory: TrajectoryPoint[] = [];

  constructor(
    private readonly evaluator: NodeEvaluator,
    private readonly options: BestEffortOptions,
  ) {
    this.monotonic = prunable(evaluator.problem);
    this.k = smallestPassingClass(evaluator.problem.models);
    this.t0 = this.now();
    this.searchMs = options.timeLimitMs - Math.min(FINAL_BOUND_MS, options.timeLimitMs / 20);
    this.lastProgress = this.t0;
  }

  private now(): number {
    return this.options.now ? this.options.now() : performance.now();
  }

  /** Runs to the end in one go. */
  run(): BestEffortOutcome {
    runSteps(this.stoppable());
    return this.outcome();
  }

  /** Runs in slices of about `sliceMs`, yielding to the event loop between them (signals, timers). */
  async runAsync(sliceMs = SLICE_MS, slice: Around = (w) => w()): Promise<BestEffortOutcome> {
    await runStepsAsync(sliced(this.stoppable(), slice, sliceMs, () => this.now()));
    return this.outcome();
  }

  /** The search's steps, a `Stop` ending them (its reason kept for the outcome). */
  private *stoppable(): Steps<void> {
    const steps = this.steps();
    for (;;) {
      try {
        if (steps.next().done) return;
      } catch (e) {
        if (!(e instanceof Stop)) throw e;
        this.stopped = e.why;
        return;
      }
      yield;
    }
  }

  private outcome(): BestEffortOutcome {
    // Stopped before any feasible node: the top one (every row one class), past the budget.
    if (!this.best) {
      const top = this.evaluator.evaluate(this.evaluator.problem.lattice.top);
      if (top.feasible) {
        this.known.set(top.id, { feasible: true, value: top.value, below: 0 });
        this.consider(top);
      }
    }
    if (!this.best) throw noSolution(this.evaluator);
    const best = this.best;
    // The final walk takes what the time limit leaves (its share kept back, below), at least BOUND_MS.
    const left = this.t0 + this.options.timeLimitMs - this.now();
    const lowerBound = Math.min(
      best.value,
      this.lowerBound(Math.max(BOUND_MS, Math.min(FINAL_BOUND_MS, left))),
    );
    const optimal = nearlyEqual(lowerBound, best.value);
    this.record(optimal ? best.value : lowerBound, true);
    return {
      best,
      nodesChecked: this.evaluator.checked,
      strategy: optimal ? 'best-effort (proved optimal)' : 'best-effort (greedy + local search)',
      lowerBound: optimal ? best.value : lowerBound,
      stoppedBy: optimal ? 'optimal' : this.stopped,
      trajectory: this.trajectory,
    };
  }

  private aprioriOf(id: number): number {
    let v = this.apriori.get(id);
    if (v === undefined) {
      const { metrics, metric, lattice } = this.evaluator.problem;
      v = metrics.aprioriBound(metric, lattice.levels(id));
      this.apriori.set(id, v);
    }
    return v;
  }

  /** Known infeasible without a check: a specialization of a node known infeasible. */
  private ruledOut(levels: readonly number[]): boolean {
    for (const top of this.infeasible) if (below(levels, top)) return true;
    return false;
  }

  private addInfeasible(levels: number[]): void {
    if (this.ruledOut(levels)) return;
    for (let j = this.infeasible.length - 1; j >= 0; j--)
      if (below(this.infeasible[j]!, levels)) this.infeasible.splice(j, 1);
    this.infeasible.push(levels);
  }

  /** Whether a node with this bound could still beat the best one. */
  private worth(id: number): boolean {
    const best = this.best;
    if (!best) return true;
    const bound = this.aprioriOf(id);
    if (nearlyEqual(bound, best.value))
      return compareTieBreak(this.evaluator.problem.lattice, id, best.id) < 0;
    return bound < best.value;
  }

  /** One node's check, counted against the budget and the time limit. */
  private check(id: number): Known {
    const seen = this.known.get(id);
    if (seen) return seen;
    const { lattice, maxSuppressedRows } = this.evaluator.problem;
    const levels = lattice.levels(id);
    if (this.ruledOut(levels)) {
      const k: Known = { feasible: false, value: Number.POSITIVE_INFINITY, below: Number.POSITIVE_INFINITY };
      this.known.set(id, k);
      return k;
    }
    if (this.evaluated >= this.options.nodeBudget) throw new Stop('node budget');
    if (this.now() - this.t0 >= this.searchMs) throw new Stop('time limit');
    this.evaluated++;
    const r = this.evaluator.evaluate(id);
    let rows = 0;
    for (let g = 0; g < r.groups; g++) if (r.sizes[g]! < this.k) rows += r.sizes[g]!;
    const k: Known = { feasible: r.feasible, value: r.value, below: rows };
    this.known.set(id, k);
    // (With an entity column the limit counts persons: the evaluator judges the classes below k.)
    if (
      !r.feasible &&
      (this.monotonic ||
        rows > maxSuppressedRows ||
        (r.persons !== undefined && !this.evaluator.forcedWithinLimit(id)))
    )
      this.addInfeasible(levels);
    if (r.feasible) this.consider(r);
    this.report();
    return k;
  }

  private consider(r: NodeResult): void {
    const lattice = this.evaluator.problem.lattice;
    const best = this.best;
    if (
      !best ||
      (nearlyEqual(r.value, best.value) ? compareTieBreak(lattice, r.id, best.id) < 0 : r.value < best.value)
    ) {
      this.best = r;
      this.improvedAt = this.evaluated;
      this.record(this.proved);
    }
    // The few best nodes, parents of the crossovers.
    if (!this.elite.includes(r.id)) {
      this.elite.push(r.id);
      this.elite.sort((a, b) => this.known.get(a)!.value - this.known.get(b)!.value || a - b);
      if (this.elite.length > ELITE) this.elite.pop();
    }
  }

  private report(): void {
    const { progress, progressMs = 1800 } = this.options;
    if (!progress) return;
    const now = this.now();
    if (now - this.lastProgress < progressMs) return;
    this.lastProgress = now;
    progress({
      nodesChecked: this.evaluator.checked,
      best: this.best?.value,
      lowerBound: Math.min(this.best?.value ?? Number.POSITIVE_INFINITY, this.lowerBound()),
      elapsedMs: now - this.t0,
    });
  }

  private *steps(): Steps<void> {
    const { lattice } = this.evaluator.problem;
    // 1. Greedy descent from the top: a feasible node soon, however wide the lattice.
    const seed = yield* this.fromTop();
    if (seed < 0) return; // the top is infeasible: no solution
    yield* this.descend(seed);
    // 2. Greedy climb from the bottom, and descent from there.
    const start = yield* this.climb(0);
    if (start >= 0) yield* this.descend(start);
    // 3. Iterated local search.
    const random = this.options.random;
    let idle = 0;
    while (idle < IDLE_ROUNDS && this.evaluated - this.improvedAt < STALL_NODES) {
      const before = this.evaluated;
      // Now and then, whether the bound closes the gap.
      if (this.evaluated >= this.nextClosedCheck) {
        this.nextClosedCheck = this.evaluated + CLOSED_CHECK_EVERY;
        if (this.closed()) throw new Stop('optimal');
      }
      const parent = lattice.levels(this.pick(random));
      let child: number[];
      if (this.elite.length > 1 && random.below(2) === 0) {
        const other = lattice.levels(this.elite[random.below(this.elite.length)]!);
        child = parent.map((l, i) => (random.below(2) === 0 ? l : other[i]!));
      } else child = parent.slice();
      const flips = 1 + random.below(3);
      for (let f = 0; f < flips; f++) {
        const i = random.below(lattice.m);
        const h = lattice.heights[i]!;
        if (h === 0) continue;
        const delta = random.below(2) === 0 ? -1 - random.below(2) : 1 + random.below(2);
        child[i] = Math.max(0, Math.min(h, child[i]! + delta));
      }
      const node = yield* this.climb(lattice.index(child));
      if (node >= 0) yield* this.descend(node);
      idle = this.evaluated === before ? idle + 1 : 0;
    }
  }

  /** The best node, or one of the elite now and then. */
  private pick(random: UniformDraws): number {
    if (this.elite.length === 0 || random.below(2) === 0) return this.best!.id;
    return this.elite[random.below(this.elite.length)]!;
  }

  /** Whether the bound meets the best value (a walk of a fixed size: no clock in the decision). */
  private closed(): boolean {
    const lb = this.lowerBound(Number.POSITIVE_INFINITY, CLOSED_POPS);
    return nearlyEqual(lb, this.best!.value) || lb > this.best!.value;
  }

  /**
   * From the top downwards while a specialization is feasible and better: at each node its
   * direct specializations in order of their a-priori bound, moving on the first that is
   * feasible with a smaller value (one check per step when the first is). -1 when the top is
   * infeasible.
   */
  private *fromTop(): Generator<void, number, void> {
    const { lattice } = this.evaluator.problem;
    let cur = lattice.top;
    let here = this.check(cur);
    yield;
    if (!here.feasible) return -1;
    for (;;) {
      const moves = lattice
        .predecessors(cur)
        .filter((n) => !this.ruledOut(lattice.levels(n)))
        .sort((a, b) => this.aprioriOf(a) - this.aprioriOf(b) || a - b);
      let moved = false;
      for (const n of moves) {
        if (this.aprioriOf(n) >= here.value) continue;
        const k = this.check(n);
        yield;
        if (k.feasible && k.value < here.value && !nearlyEqual(k.value, here.value)) {
          cur = n;
          here = k;
          moved = true;
          break;
        }
      }
      if (!moved) return cur;
    }
  }

  /**
   * From `from` upwards to a feasible node: each step to the successor with the most rows
   * out of too-small classes per unit of a-priori cost (a feasible successor, the cheapest,
   * first). -1 when none is feasible.
   */
  private *climb(from: number): Generator<void, number, void> {
    const { lattice } = this.evaluator.problem;
    let cur = from;
    let here = this.check(cur);
    yield;
    while (!here.feasible) {
      let next = -1;
      let nextKnown: Known | undefined;
      let score = Number.NEGATIVE_INFINITY;
      for (let i = 0; i < lattice.m; i++) {
        const s = lattice.up(cur, i);
        if (s < 0) continue;
        const k = this.check(s);
        yield;
        const cost = this.aprioriOf(s) - this.aprioriOf(cur);
        // Rows out of too-small classes per unit of cost; a feasible successor, the cheapest, first.
        const sc = (here.below - Math.min(k.below, here.below) + 1e-9) / (Math.max(cost, 0) + 1e-12);
        const better =
          next < 0 ||
          (k.feasible
            ? !nextKnown!.feasible || k.value < nextKnown!.value
            : !nextKnown!.feasible && sc > score);
        if (better) {
          next = s;
          nextKnown = k;
          score = sc;
        }
      }
      if (next < 0) return -1;
      cur = next;
      here = nextKnown!;
    }
    return cur;
  }

  /** First-improvement local search around the best node from `from`. */
  private *descend(from: number): Generator<void, void, void> {
    const { lattice } = this.evaluator.problem;
    let cur = from;
    for (;;) {
      const moves: number[] = [];
      for (let i = 0; i < lattice.m; i++) {
        const d = lattice.down(cur, i);
        const u = lattice.up(cur, i);
        if (d >= 0) moves.push(d);
        if (u >= 0) moves.push(u);
        if (d < 0) continue;
        for (let j = 0; j < lattice.m; j++) {
          if (j === i) continue;
          const s = lattice.up(d, j);
          if (s >= 0) moves.push(s);
        }
      }
      moves.sort((a, b) => this.aprioriOf(a) - this.aprioriOf(b) || a - b);
      const curValue = this.known.get(cur)?.value ?? Number.POSITIVE_INFINITY;
      let moved = false;
      for (const n of moves) {
        if (!this.worth(n) && this.aprioriOf(n) >= curValue) continue;
        const k = this.check(n);
        yield;
        if (k.feasible && k.value < curValue && !nearlyEqual(k.value, curValue)) {
          cur = n;
          moved = true;
          break;
        }
      }
      if (!moved) return;
    }
  }

  /**
   * The least value any feasible node not yet ruled out can have: a best-first walk over
   * the corners of the region not below a node known infeasible, bounded by the a-priori
   * bound; evaluated corners give their value and pass on to their successors.
   */
  lowerBound(ms = BOUND_MS, maxPops = BOUND_POPS): number {
    // Every walk's answer holds (what is ruled out only grows): keep the best of them.
    const proved = Math.max(this.proved, this.walk(ms, maxPops));
    if (proved > this.proved) {
      this.proved = proved;
      this.record(proved);
    }
    return this.proved;
  }

  /**
   * A point of the trajectory (once a node is feasible): the best value and the bound, clamped
   * to what the report states (at least the bottom's a-priori bound, which every node's value
   * is at least; at most the best value). `last` records the result even when nothing improved.
   */
  private record(proved: number, last = false): void {
    const best = this.best;
    if (!best) return;
    const floor = Math.max(proved, this.aprioriOf(0));
    const previous = this.trajectory.at(-1);
    const bound = Math.min(best.value, Math.max(floor, previous?.bound ?? floor));
    const nodesChecked = this.evaluator.checked;
    if (
      previous?.best === best.value &&
      previous.bound === bound &&
      (!last || previous.nodesChecked === nodesChecked)
    )
      return;
    const point: TrajectoryPoint = {
      ms: Math.round(this.now() - this.t0),
      nodesChecked,
      best: best.value,
      bound,
    };
    if (this.trajectory.length >= TRAJECTORY_POINTS) {
      const kept = thinned(this.trajectory);
      this.trajectory.splice(0, this.trajectory.length, ...kept);
    }
    this.trajectory.push(point);
  }

  private walk(ms: number, maxPops: number): number {
    const { lattice } = this.evaluator.problem;
    const until = this.now() + ms;
    const best = this.best?.value ?? Number.POSITIVE_INFINITY;
    let settled = best;
    const heap = new MinHeap();
    const seen = new Set<number>([0]);
    heap.push(0, this.aprioriOf(0));
    let pops = 0;
    while (heap.size > 0) {
      const bound = heap.peekKey();
      if (bound >= settled) break;
      // Stopped early, the frontier's least bound still holds.
      if (++pops > maxPops || ((pops & 63) === 0 && this.now() > until)) return bound;
      const id = heap.pop();
      const levels = lattice.levels(id);
      let cover: number[] | undefined;
      let children = Number.POSITIVE_INFINITY;
      for (const top of this.infeasible) {
        if (!below(levels, top)) continue;
        let c = 0;
        for (let i = 0; i < lattice.m; i++) if (top[i]! < lattice.heights[i]!) c++;
        if (c < children) {
          children = c;
          cover = top;
        }
      }
      const push = (n: number) => {
        if (n < 0 || seen.has(n)) return;
        seen.add(n);
        heap.push(n, Math.max(bound, this.aprioriOf(n)));
      };
      if (cover) {
        // Every node above this corner and not below `cover` raises some QI past it.
        for (let i = 0; i < lattice.m; i++) {
          if (cover[i]! >= lattice.heights[i]!) continue;
          const up = levels.slice();
          up[i] = cover[i]! + 1;
          push(lattice.index(up));
        }
        continue;
      }
      const k = this.known.get(id);
      if (!k) return Math.min(bound, settled);
      if (k.feasible) settled = Math.min(settled, k.value);
      for (let i = 0; i < lattice.m; i++) push(lattice.up(id, i));
    }
    return settled;
  }
}

/** A binary heap of ids by key, least first. */
class MinHeap {
  private ids: number[] = [];
  private keys: number[] = [];

  get size(): number {
    return this.ids.length;
  }

  peekKey(): number {
    return this.keys[0]!;
  }

  push(id: number, key: number): void {
    const { ids, keys } = this;
    let i = ids.length;
    ids.push(id);
    keys.push(key);
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (keys[p]! <= key) break;
      ids[i] = ids[p]!;
      keys[i] = keys[p]!;
      i = p;
    }
    ids[i] = id;
    keys[i] = key;
  }

  pop(): number {
    const { ids, keys } = this;
    const top = ids[0]!;
    const lastId = ids.pop()!;
    const lastKey = keys.pop()!;
    if (ids.length > 0) {
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        if (l >= ids.length) break;
        const r = l + 1;
        const c = r < ids.length && keys[r]! < keys[l]! ? r : l;
        if (keys[c]! >= lastKey) break;
        ids[i] = ids[c]!;
        keys[i] = keys[c]!;
        i = c;
      }
      ids[i] = lastId;
      keys[i] = lastKey;
    }
    return top;
  }
}
