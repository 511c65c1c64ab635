/**
 * Exploring a spec whose release draws a secret random sample ((ε, δ)-differential privacy):
 * two releases of the same spec differ, so one run per value would show one draw, not what a
 * release at that value gives. Each value runs the real release (in memory, nothing published)
 * several times and keeps only aggregates per value — the mean, the smallest and the largest of
 * the spec's metric, the rows sampled, the rows suppressed, the rows released and the classes —
 * with β and k as the derivation gives them (they come from ε and δ, not from the data). No
 * row, node draw or single run's figures leave this file beyond those aggregates; the page says
 * the runs are for choosing ε and are not releases.
 */
import { basename } from 'node:path';
import { needs } from '../catalogue/catalogue.ts';
import type { ClaimsOf } from '../claims/index.ts';
import { NoSolutionError } from '../errors.ts';
import type { BuiltRelease } from '../methods/method.ts';
import { type DifferentialPrivacySpec, dpSettings } from '../models/differential-privacy.ts';
import type { ReleaseSpec } from '../release-spec/spec.ts';

/** Releases run per value when `--repeats` is not given. */
export const DEFAULT_REPEATS = 5;
/** At most this many releases per value. */
export const MAX_REPEATS = 100;

/** The mean, the smallest and the largest of one measure over a value's runs. */
export interface Spread {
  readonly mean: number;
  readonly min: number;
  readonly max: number;
}

/** A value's runs, as aggregates only. */
export interface RepeatedRuns {
  /** Releases run for the value. */
  readonly runs: number;
  /** Of them, those that released anything (the others had no solution). */
  readonly withSolution: number;
  /** The sampling probability and the smallest released class, from the derivation. */
  readonly beta: number;
  readonly k: number;
  /** The spec's metric (its name), over the runs with a solution. */
  readonly metric: string;
  readonly objective: Spread;
  readonly sampledRows: Spread;
  readonly suppressedRows: Spread;
  readonly releasedRows: Spread;
  readonly classes: Spread;
}

/** The spread of the values (undefined for none). */
function spread(values: number[]): Spread | undefined {
  if (values.length === 0) return undefined;
  let sum = 0;
  for (const v of values) sum += v;
  return { mean: sum / values.length, min: Math.min(...values), max: Math.max(...values) };
}

/** Whether a spec's release draws a secret sample (then each value is run several times). */
export function drawsSample(spec: ReleaseSpec): boolean {
  return spec.privacy.some((m) => needs(m, 'secret-sample'));
}

/**
 * One frontier value of a sampling spec: `repeats` releases built in memory by `build`, kept as
 * aggregates. Infeasible only when no run released anything.
 */
export function repeatedPoint(
  spec: ReleaseSpec,
  repeats: number,
  build: () => BuiltRelease,
): {
  feasible: boolean;
  reason?: string;
  objective?: { name: string; value: number };
  repeats?: RepeatedRuns;
} {
  const i = spec.privacy.findIndex((m) => needs(m, 'secret-sample'));
  const model = spec.privacy[i] as DifferentialPrivacySpec;
  const settings = dpSettings(model, `${basename(spec.file)}: privacy[${i}]`);
  const measured = { objective: [], sampled: [], suppressed: [], released: [], classes: [] } as Record<
    'objective' | 'sampled' | 'suppressed' | 'released' | 'classes',
    number[]
  >;
  let metric = spec.method.name === 'generalization' ? spec.method.metric : '';
  let reason: string | undefined;
  for (let r = 0; r < repeats; r++) {
    let built: BuiltRelease;
    try {
      built = build();
    } catch (e) {
      if (!(e instanceof NoSolutionError)) throw e;
      reason = e.message;
      continue;
    }
    const { report } = built;
    const claims = built.claims as ClaimsOf<'generalization'>;
    metric = report.utility.metric;
    measured.objective.push(report.utility.value);
    measured.sampled.push(claims.dp?.sampledRows ?? report.rows.input);
    measured.suppressed.push(report.rows.suppressed);
    measured.released.push(report.rows.released);
    measured.classes.push(report.privacy.classes ?? 0);
  }
  const withSolution = measured.objective.length;
  if (withSolution === 0) return { feasible: false, reason: reason ?? 'no run released anything' };
  const objective = spread(measured.objective)!;
  return {
    feasible: true,
    objective: { name: metric, value: objective.mean },
    repeats: {
      runs: repeats,
      withSolution,
      beta: settings.beta,
      k: settings.k,
      metric,
      objective,
      sampledRows: spread(measured.sampled)!,
      suppressedRows: spread(measured.suppressed)!,
      releasedRows: spread(measured.released)!,
      classes: spread(measured.classes)!,
    },
  };
}
