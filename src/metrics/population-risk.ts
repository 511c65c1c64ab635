/**
 * Re-identification risk of a sample measured the way statistical offices (and ARX) do, from
 * the sizes of its equivalence classes alone: the sample-based prosecutor, journalist and
 * marketer risks, the share of sample uniques, and the number of records unique in the
 * population under four models (Pitman, Zayatz, SNB and Dankar's rule choosing among them).
 * Definitions and formulas: docs/risk.md.
 */
import type { PopulationUniqueness } from '../contracts/report.ts';
import { PpdpError } from '../errors.ts';

/** The population a sample was drawn from: its size, or the share of it the sample is. */
type Estimate = PopulationUniqueness['estimates']['dankar'];

export type PopulationSpec = { readonly size: number } | { readonly samplingFraction: number };

export interface SampleRisk {
  records: number;
  classes: number;
  /** Highest prosecutor risk, 1/|smallest class|. */
  highestRisk: number;
  /** Share of the records in classes of the smallest size (those at the highest risk). */
  recordsAtHighestRisk: number;
  /** Mean of 1/|class| over records: classes/records. */
  averageRisk: number;
  prosecutor: number;
  journalist: number;
  marketer: number;
  /** Share of the records unique in the sample. */
  sampleUniques: number;
}

/** Class size → number of classes, ascending by size. */
export function sizeHistogram(sizes: ArrayLike<number>): [size: number, count: number][] {
  const counts = new Map<number, number>();
  for (let i = 0; i < sizes.length; i++) {
    const s = sizes[i]!;
    if (s > 0) counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  return [...counts.entries()].sort((a, b) => a[0] - b[0]);
}

/** Sample-based risks from the class sizes (suppressed records left out by the caller). */
export function sampleRisk(sizes: ArrayLike<number>): SampleRisk {
  const h = sizeHistogram(sizes);
  const classes = h.reduce((s, [, c]) => s + c, 0);
  const records = h.reduce((s, [k, c]) => s + k * c, 0);
  if (classes === 0) {
    return {
      records: 0,
      classes: 0,
      highestRisk: 0,
      recordsAtHighestRisk: 0,
      averageRisk: 0,
      prosecutor: 0,
      journalist: 0,
      marketer: 0,
      sampleUniques: 0,
    };
  }
  const [smallest, count] = h[0]!;
  const highestRisk = 1 / smallest;
  const averageRisk = classes / records;
  return {
    records,
    classes,
    highestRisk,
    recordsAtHighestRisk: (smallest * count) / records,
    averageRisk,
    prosecutor: highestRisk,
    journalist: highestRisk,
    marketer: averageRisk,
    sampleUniques: smallest === 1 ? count / records : 0,
  };
}

/** The population size for a sample of n records: as given, or n / fraction rounded. */
export function populationSize(records: number, population: PopulationSpec): number {
  if ('size' in population) {
    if (!(Number.isInteger(population.size) && population.size >= records && population.size > 0)) {
      throw new PpdpError(
        'E_POPULATION',
        `population size ${population.size} is not a whole number at least the ${records} records of the table`,
        'give the number of people the table was drawn from, e.g. --population 1000000',
      );
    }
    return population.size;
  }
  const f = population.samplingFraction;
  if (!(f > 0 && f <= 1)) {
    throw new PpdpError(
      'E_POPULATION',
      `sampling fraction ${f} is not in (0, 1]`,
      'give the share of the population the table holds, e.g. --sampling-fraction 0.01',
    );
  }
  return Math.round(records / f);
}

/** Records unique in the population under Pitman's, Zayatz's and the SNB model, and Dankar's rule. */
export function populationUniqueness(
  sizes: ArrayLike<number>,
  population: PopulationSpec,
): PopulationUniqueness {
  const h = sizeHistogram(sizes);
  const n = h.reduce((s, [k, c]) => s + k * c, 0);
  const N = populationSize(n, population);
  const f = n / N;
  const c1 = h[0]?.[0] === 1 ? h[0][1] : 0;
  const none: Estimate = { uniques: 0, share: 0 };
  const result: PopulationUniqueness = {
    populationSize: N,
    samplingFraction: f,
    sampleUniques: c1,
    estimates: { pitman: none, zayatz: none, snb: none, dankar: none },
    dankarModel: null,
  };
  if (c1 === 0) return result;
  const est = (x: number, name: string): Estimate =>
    Number.isNaN(x) || x === 0
      ? {
          uniques: null,
          share: null,
          notFitted: `${name} could not be fitted to these class sizes (no root converged, or its estimate is 0 or outside [0, N] while the sample has uniques)`,
        }
      : { uniques: x, share: x / N };
  const pitman = est(pitmanUniques(h, n, N), 'Pitman’s model');
  const zayatz = est(zayatzUniques(h, n, N), 'Zayatz’s model');
  const snb = est(snbUniques(h, n, N), 'the SNB model');
  let dankar: Estimate;
  let model: 'pitman' | 'zayatz' | 'snb';
  if (f <= 0.1) {
    [dankar, model] = pitman.uniques !== null ? [pitman, 'pitman'] : [zayatz, 'zayatz'];
  } else if (snb.uniques === null || (zayatz.uniques !== null && zayatz.uniques < snb.uniques)) {
    [dankar, model] = [zayatz, 'zayatz'];
  } else {
    [dankar, model] = [snb, 'snb'];
  }
  return { ...result, estimates: { pitman, zayatz, snb, dankar }, dankarModel: model };
}

/**
 * `populationRisk` over released class sizes, when a population is named. A sampling fraction
 * is the input's share of the population (N = input records / f), so suppressed records still
 * count. With an entity column (`overPersons`) the records are persons (docs/risk.md): `sizes`
 * are the classes' persons, `inputRecords` the input's persons; N is then at least the persons
 * the classes add up to, which exceed the input's when a person has rows in several classes.
 */
export function populationRiskPart(
  sizes: ArrayLike<number>,
  population: PopulationSpec | undefined,
  inputRecords: number,
  overPersons = false,
): { populationRisk?: PopulationUniqueness } {
  if (!population) return {};
  let size = 'size' in population ? population.size : populationSize(inputRecords, population);
  if (overPersons && !('size' in population)) {
    let released = 0;
    for (let i = 0; i < sizes.length; i++) released += sizes[i]!;
    size = Math.max(size, released);
  }
  const estimated = populationUniqueness(sizes, { size });
  return { populationRisk: overPersons ? { ...estimated, over: 'persons' } : estimated };
}

/**
 * Zayatz: the share of sample uniques that are population uniques is estimated from the
 * hypergeometric chance that a population class of size k leaves exactly one record in the
 * sample, weighted by the sample's class-size distribution.
 */
function zayatzUniques(h: [number, number][], n: number, N: number): number {
  const c1 = h[0]![1];
  // ARX draws from at most 2³¹ − 1 people here (its distribution takes 32-bit integers).
  const draws = Math.min(N, 2 ** 31 - 1);
  let total = 0;
  for (const [k, count] of h) total += count * hypergeometricOne(draws, k, n);
  return (c1 * ((c1 * hypergeometricOne(draws, 1, n)) / total)) / (n / N);
}

/**
 * P(X = 1) for X hypergeometric: n draws from N items of which K are marked;
 * = (K n / N) · Π_{j=0}^{K−2} (N − n − j) / (N − 1 − j), summed in logs.
 */
export function hypergeometricOne(N: number, K: number, n: number): number {
  if (K > N || n > N || K < 1 || n < 1) return 0;
  let log = Math.log((K * n) / N);
  for (let j = 0; j <= K - 2; j++) {
    const top = N - n - j;
    if (top <= 0) return 0;
    log += Math.log1p(-(n - 1) / (N - 1 - j));
  }
  return Math.exp(log);
}

// --- Newton–Raphson as ARX runs it: start, then restarts from a fixed grid ------------------

/** A 2-D system: the residuals F(x) and the Jacobian [[∂F1/∂x, ∂F1/∂y], [∂F2/∂x, ∂F2/∂y]]. */
type System = (x: number, y: number) => { f1: number; f2: number; j: [number, number, number, number] };

const ACCURACY = 1e-6;
const ITERATIONS_PER_TRY = 1000;
const ITERATIONS_TOTAL = 10000;
/** Restart points after a failed try: {0, .33, .66, .99}², as ARX's deterministic solver. */
const RESTARTS: [number, number][] = [];
for (let a = 0; a < 1; a += 0.33) for (let b = 0; b < 1; b += 0.33) RESTARTS.push([a, b]);

/**
 * Newton–Raphson until both residuals are within 1e-6; a try ends on NaN, on leaving the
 * feasible region or after 1000 steps, and the next starts from the grid. NaN when none converges.
 */
function newton(
  system: System,
  start: [number, number],
  feasible?: (x: number) => boolean,
): [number, number] {
  let total = 0;
  let restart = 0;
  let point: [number, number] | null = null;
  while (total <= ITERATIONS_TOTAL) {
    if (point === null) point = [...start];
    else point = [...RESTARTS[restart++]!];
    let steps = 0;
    for (;;) {
      total++;
      const { f1, f2, j } = system(point[0], point[1]);
      if (Math.abs(f1) <= ACCURACY && Math.abs(f2) <= ACCURACY) return point;
      const inv = 1 / (j[0] * j[3] - j[1] * j[2]);
      point = [
        point[0] - (j[3] * inv * f1 - j[1] * inv * f2),
        point[1] - (-j[2] * inv * f1 + j[0] * inv * f2),
      ];
      if (restart === RESTARTS.length) return [Number.NaN, Number.NaN];
      if (feasible && !feasible(point[0])) break;
      if (Number.isNaN(point[0]) || Number.isNaN(point[1]) || steps++ >= ITERATIONS_PER_TRY) break;
    }
  }
  return [Number.NaN, Number.NaN];
}

/**
 * Pitman's two-parameter (θ, α) model fitted by maximum likelihood to the sample's class
 * sizes; population uniques = Γ(θ+1)/Γ(θ+α) · N^α.
 */
function pitmanUniques(h: [number, number][], n: number, N: number): number {
  const c1 = h[0]![1];
  const u = h.reduce((s, [, c]) => s + c, 0);
  const c2 = h.find(([k]) => k === 2)?.[1] || 1;
  const c = (c1 * (c1 - 1)) / c2;
  const t0 = (n * u * c - c1 * (n - 1) * (2 * u + c)) / (2 * c1 * u + c1 * c - n * c);
  const a0 = (t0 * (c1 - n) + (n - 1) * c1) / (n * u);
  // The likelihood equations as finite sums (exact, no special functions).
  const sums: System = (t, a) => {
    let o1 = 0;
    let o3 = 0;
    let d1 = 0;
    let d3 = 0;
    let d5 = 0;
    for (let i = 1; i < u; i++) {
      const v = 1 / (t + i * a);
      o1 += v;
      o3 += i * v;
      d1 += v * v;
      d5 += i * v * v;
      d3 += i * i * v * v;
    }
    let o4 = 0;
    let d4 = 0;
    for (const [k, count] of h) {
      if (k === 1) continue;
      let s1 = 0;
      let s2 = 0;
      for (let j = 1; j < k; j++) {
        s1 += 1 / (j - a);
        s2 += 1 / ((j - a) * (j - a));
      }
      o4 += count * s1;
      d4 += count * s2;
    }
    let o2 = 0;
    let d2 = 0;
    for (let i = 1; i < n; i++) {
      const v = 1 / (t + i);
      o2 += v;
      d2 += v * v;
    }
    return { f1: o1 - o2, f2: o3 - o4, j: [d2 - d1, -d5, -d5, -d3 - d4] };
  };
  // The same equations in closed form with ARX's digamma and trigamma; ARX solves this form
  // first and its (inexact) trigamma steers Newton's path, so the root found can differ.
  const closed: System = (t, a) => {
    const v0 = u - 1;
    const v1 = digamma(v0 + t / a + 1);
    const v2 = trigamma((a + t + a * v0) / a);
    const v3 = trigamma(t / a + 1);
    const v4 = digamma(t / a + 1);
    const v5 = a * a;
    const d1 = (v3 - v2) / v5;
    const d5 = (a * v1 + t * v2 - a * v4 - t * v3) / (v5 * a);
    const d3 = (v5 * v0 - t * t * v2 + t * t * v3 - 2 * a * t * v1 + 2 * a * t * v4) / (v5 * v5);
    const o1 = (v1 - v4) / a;
    const o3 = (-t * v1 + a * v0 + t * v4) / (a * a);
    const o2 = digamma(n + t) - digamma(t + 1);
    const d2 = trigamma(t + 1) - trigamma(n + t);
    const v6 = digamma(1 - a);
    const v7 = trigamma(1 - a);
    let d4 = 0;
    let o4 = 0;
    for (const [k, count] of h) {
      if (k === 1) continue;
      d4 += count * (v7 - trigamma(k - a));
      o4 += count * (digamma(k - a) - v6);
    }
    return { f1: o1 - o2, f2: o3 - o4, j: [d2 - d1, -d5, -d5, -d3 - d4] };
  };
  const feasible = (theta: number) => theta >= 0;
  let [t, a] = newton(closed, [t0, a0], feasible);
  const check = Number.isNaN(t) || Number.isNaN(a) ? null : sums(t, a);
  if (check === null || !(Math.abs(check.f1) <= ACCURACY && Math.abs(check.f2) <= ACCURACY)) {
    [t, a] = newton(sums, [t0, a0], feasible);
  }
  if (Number.isNaN(t) || Number.isNaN(a) || a === 0) return Number.NaN;
  const uniques = Math.exp(logGamma(t + 1) - logGamma(t + a) + a * Math.log(N));
  return uniques >= 0 && uniques <= N ? uniques : Number.NaN;
}

/**
 * The slide negative binomial model: K non-empty population classes (Haas and Stokes'
 * estimator, as ARX computes it), α and β fitted so the expected numbers of sample classes of
 * sizes 1 and 2 match the observed; population uniques = K β^α.
 */
function snbUniques(h: [number, number][], n: number, N: number): number {
  const f = n / N;
  const c1 = h[0]![1];
  const c2 = h.find(([k]) => k === 2)?.[1] ?? 0;
  const u = h.reduce((s, [, c]) => s + c, 0);
  let v1 = 0;
  let v2 = 0;
  let v3 = 0;
  let v4 = 0;
  const f2 = f * f;
  for (const [k, count] of h) {
    const q = (1 - f) ** k * count;
    v1 += k * f2 * (1 - f2) ** (k - 1) * count;
    v2 += q * (1 + f) ** k - 1;
    v3 += q;
    v4 += k * f * (1 - f) ** (k - 1) * count;
  }
  const K = u + c1 * (v1 / v2) * (v3 / v4) * (v3 / v4);
  const system: System = (a, b) => {
    const d = (1 - f) * (1 - b);
    const f1 = K * f * (b / (1 - d)) ** a * ((a * d) / (1 - d) + 1) - c1;
    const g = ((K * a * b ** a * f2 * (1 - b)) / 2) * (1 - d) ** (a + 2) * (2 - (1 - a) * d) - c2;
    // Jacobian written out (∂/∂α, ∂/∂β of both residuals).
    const v0 = (b - 1) * (f - 1);
    const w1 = v0 - 1;
    const w2 = 1 - v0;
    const w3 = (a * v0) / w1 - 1;
    const w4 = (-b / w1) ** a;
    const w7 = b ** a;
    const w9 = a * w7 * f2 * K;
    const w10 = 2 * w2 ** (a + 2);
    const w11 = w1 * w1;
    const fk = f * K;
    const w15 = a - 1;
    const w16 = b - 1;
    const w17 = w15 * v0;
    const w18 = f2 * K;
    const w19 = w17 + 2;
    const w20 = w18 * w19;
    const j11 = -fk * Math.log(-b / w1) * w3 * w4 - (fk * w4 * v0) / w1;
    const j12 =
      a * fk * (1 / w1 - (b * (f - 1)) / w11) * w3 * (-b / w1) ** w15 -
      fk * w4 * ((a * (f - 1)) / w1 - (a * w16 * (f - 1) ** 2) / w11);
    const j21 =
      (w9 * Math.log(w2) * w19 * w16) / w10 -
      (w9 * w16 ** 2 * (f - 1)) / w10 -
      (w7 * w20 * w16) / w10 -
      (a * w7 * w18 * Math.log(b) * w19 * w16) / w10;
    const j22 =
      -(w9 * w19) / w10 -
      (a ** 2 * b ** w15 * w20 * w16) / w10 -
      (a * w7 * w18 * w17) / w10 -
      (a * w7 * w20 * (a + 2) * v0) / (2 * w2 ** (a + 3));
    return { f1, f2: g, j: [j11, j12, j21, j22] };
  };
  const [a, b] = newton(system, [1, 1]);
  return K * b ** a;
}

/**
 * ψ(x) as ARX computes it: reflection below 0, −γ − 1/x + (π²/6)x near 0, the recurrence up
 * to 12 and the asymptotic series there.
 */
function digamma(x: number): number {
  if (!Number.isFinite(x)) return Number.NaN;
  if (x === 0) return Number.NEGATIVE_INFINITY;
  if (x < 0) return digamma(1 - x) + Math.PI / Math.tan(-Math.PI * x);
  if (x <= 1e-6) return -0.5772156649015329 - 1 / x + 1.6449340668482264 * x;
  let r = 0;
  for (; x < 12; x += 1) r -= 1 / x;
  const inv = 1 / x;
  r += Math.log(x) - 0.5 * inv;
  const i2 = inv * inv;
  return r - i2 * (1 / 12 - i2 * (1 / 120 - i2 * (1 / 252 - i2 * (1 / 240 - i2 * (1 / 132)))));
}

/**
 * ψ′(x) as ARX computes it, including its quirk: the recurrence stops at 8 but the asymptotic
 * tail is only added from 12, so below 12 the value is the partial sum alone.
 */
function trigamma(x: number): number {
  if (!Number.isFinite(x)) return Number.NaN;
  if (x === 0) return Number.NEGATIVE_INFINITY;
  if (x < 0) {
    const s = Math.PI / Math.sin(-Math.PI * x);
    return -trigamma(1 - x) + s * s;
  }
  if (x <= 1e-4) return 1 / (x * x) + 1.6449340668482264 - 2.4041138063191885 * x;
  let r = 0;
  for (; x < 8; x += 1) r += 1 / (x * x);
  if (x >= 12) {
    const i2 = 1 / (x * x);
    r += 0.5 * i2 + (1 + i2 * (1 / 6 + i2 * (-1 / 30 + i2 * (1 / 42 + i2 * (-1 / 30 + i2 * (5 / 66)))))) / x;
  }
  return r;
}

/** ln Γ(x) for x > 0 (Lanczos, g = 607/128, 15 terms; relative error ~1e-15). */
export function logGamma(x: number): number {
  if (x < 0.5) return Math.log(Math.PI / Math.abs(Math.sin(Math.PI * x))) - logGamma(1 - x);
  const g = 607 / 128;
  const c = LANCZOS;
  let sum = c[0]!;
  for (let i = c.length - 1; i > 0; i--) sum += c[i]! / (x - 1 + i);
  const t = x - 1 + g + 0.5;
  return 0.5 * Math.log(2 * Math.PI) + (x - 0.5) * Math.log(t) - t + Math.log(sum);
}

const LANCZOS = [
  0.9999999999999971, 57.15623566586292, -59.59796035547549, 14.136097974741746, -0.4919138160976202,
  0.00003399464998481189, 0.00004652362892704858, -0.00009837447530487956, 0.0001580887032249125,
  -0.00021026444172410488, 0.00021743961811521265, -0.0001643181065367639, 0.00008441822398385275,
  -0.000026190838401581408, 0.0000036899182659531625,
];
