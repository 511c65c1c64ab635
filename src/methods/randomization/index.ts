/**
 * Randomization as a release method (docs/definitions.md §5): every row is
 * kept and its QIs and/or sensitive attribute are replaced at random through published
 * distortion matrices — optimal retention under an attribute-disclosure bound τ (or l as
 * τ = 1/l), (ρ1, ρ2)-privacy by γ-amplification, or small-domain randomization with the
 * exact posterior check. Files: data.arrow, data.csv (rows shuffled), matrices.json.
 * Verified by src/verify/randomization.ts.
 */
import { claimsOf } from '../../claims/index.ts';
import { encodeArrow } from '../../data/arrow.ts';
import { encodeCsv } from '../../data/csv.ts';
import { tableDigest } from '../../data/digest.ts';
import {
  compactDictionary,
  type EncodedColumn,
  type EncodedTable,
  type OutputColumn,
} from '../../data/table.ts';
import type { KroneckerKernel, ModeMatrix } from '../../kernels/kronecker/kernel.ts';
import { tsKroneckerKernel } from '../../kernels/kronecker/reference.ts';
import { wasmKroneckerKernel } from '../../kernels/kronecker/wasm.ts';
import { LaneRandom, laneState, type PerturbKernel, thresholdsOf } from '../../kernels/perturb/kernel.ts';
import { tsPerturbKernel } from '../../kernels/perturb/reference.ts';
import { wasmSimdPerturbKernel } from '../../kernels/perturb/wasm.ts';
import { type DistributionMeasures, distributionMeasures } from '../../metrics/contingency.ts';
import { type RhoCheck, smallDomainGuarantee } from '../../models/rho-privacy.ts';
import { thousands } from '../../util/format.ts';
import { streamKey } from '../../util/keys.ts';
import { emptyRecord } from '../../util/record.ts';
import { PROGRESS_MS, reporting, runSteps, runStepsAsync, type Steps, sliced } from '../../util/steps.ts';
import type { BuiltRelease, MethodContext, ReleaseMethod } from '../method.ts';
import type { SavedDomains } from './domain.ts';
import { type Distortion, gammaOf, inverseOf } from './matrices.ts';
import type { MatricesFile } from './matrices-file.ts';
import { rowsOf } from './matrices-file.ts';
import { categoryCounts, planSteps, type RandomizationPlan } from './plan.ts';
import { type ReconstructionMode, randomizationEstimator } from './reconstruct.ts';
import { randomizationReport } from './report.ts';
import type { RiskDetail } from './risk.ts';

export const VERSION = '0.1.0';

/** The inverse as a Kronecker operator: a·I + b·J inverses stay structured. */
export function inverseOperator(p: Distortion | null): ModeMatrix {
  if (!p) return null;
  if (p.diag !== undefined && p.d > 1) {
    const q = (1 - p.diag) / (p.d - 1);
    const s = p.diag - q;
    return { a: 1 / s, b: -q / s };
  }
  return inverseOf(p);
}

/** Released category codes per contingency attribute, in input row order. */
export function perturbAll(plan: RandomizationPlan, key: Uint32Array, kernel: PerturbKernel): Int32Array[] {
  const state = laneState(key);
  return plan.attributes.map((a, i) => {
    const p = plan.distortions[i];
    return p ? kernel.perturb(a.codes, thresholdsOf(p.matrix, p.d), state) : a.codes;
  });
}

export const randomizationMethod: ReleaseMethod = {
  name: 'randomization',
  build: (ctx) => runSteps(buildSteps(ctx)),
  // The pipeline's Build state: the event loop gets its turn between slices of the long
  // loops (the optimizer, the exact (ρ1, ρ2) check), so that a signal ends the run.
  buildAsync: (ctx) => runStepsAsync(buildSteps(ctx)),
};

/**
 * The release re-applying a saved one (`ppdp apply`): its categories and discretization reused
 * (`saved`), its matrices given as the spec's own (`method.matrices` of `ctx.spec`).
 */
export function buildApplied(ctx: MethodContext, saved: SavedDomains): BuiltRelease {
  return runSteps(buildSteps(ctx, saved));
}

function* buildSteps(ctx: MethodContext, saved?: SavedDomains): Steps<BuiltRelease> {
  const { spec, table, time, say } = ctx;
  const reference = ctx.kernel.name === 'ts';
  const kron: KroneckerKernel = reference ? tsKroneckerKernel : wasmKroneckerKernel;
  const perturbKernel: PerturbKernel = reference ? tsPerturbKernel : wasmSimdPerturbKernel;
  const plan = yield* sliced(planSteps(spec, table, { kernel: kron, say, saved }), (w) =>
    time('optimize', w),
  );
  const { attributes, distortions } = plan;
  const randomizedNames = attributes.filter((_, i) => distortions[i]).map((a) => a.name);
  say(
    `${thousands(table.rowCount)} rows; randomizing ${randomizedNames.join(', ') || 'nothing'} (${plan.method.scenario}, ${plan.method.form} form)`,
  );

  // The release's two streams, keyed by the seed and the input's content (src/util/keys.ts).
  const digest = tableDigest(table);
  const released = time('perturb', () =>
    perturbAll(plan, streamKey(spec.seed, digest, 'perturb'), perturbKernel),
  );
  const order = time('shuffle', () =>
    new LaneRandom(streamKey(spec.seed, digest, 'shuffle')).permutation(table.rowCount),
  );
  const columns = time('apply', () => outputColumns(plan, table, released, order));

  const risk = time('risk', () =>
    plan.evaluator.detail({ qi: distortions.slice(0, -1), sa: distortions[distortions.length - 1]! }),
  );
  const rhoCheck = plan.requirements.rho
    ? yield* sliced(saRhoCheck(plan, say), (w) => time('rho-check', w))
    : undefined;
  let measures: DistributionMeasures | undefined;
  let measuresNote: string | undefined;
  time('measures', () => {
    try {
      measures = distributionMeasures(
        attributes.map((a): EncodedColumn => ({ name: a.name, dictionary: a.categories, codes: a.codes })),
        randomizationEstimator(
          kron,
          attributes.map(
            (a, i): ReconstructionMode => ({
              d: a.categories.length,
              inverse: inverseOperator(distortions[i]!),
            }),
          ),
          released,
        ),
      );
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      measuresNote = `utility measures left out: ${e.message}; reconstruct marginals with \`ppdp reconstruct\``;
    }
  });
  const matrices = matricesFile(plan, risk, rhoCheck);
  const files = time('write', () => [
    { name: 'data.arrow', content: encodeArrow(columns) },
    { name: 'data.csv', content: encodeCsv(columns, table.delimiter, spec.format) },
    { name: 'matrices.json', content: `${compactJson(matrices)}\n` },
  ]);
  plan.evaluator.dispose();
  return {
    files,
    report: randomizationReport(plan, risk, rhoCheck, measures, measuresNote),
    claims: claimsOf('randomization', {
      enforced: {
        sensitive: plan.requirements.sensitive,
        tau: plan.requirements.tau?.value ?? null,
        rho: plan.requirements.rho
          ? { rho1: plan.requirements.rho.rho1, rho2: plan.requirements.rho.rho2 }
          : null,
      },
      maxRisk: risk.max,
      meanRisk: risk.mean,
    }),
  };
}

/** JSON with 2-space indentation, but every array of numbers (a matrix row, bin edges) on one line. */
export function compactJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(
    /\[\n\s+([-+\d.eE,\s]+?)\n\s+\]/g,
    (_, inner: string) => `[${inner.split(/,\s+/).join(', ')}]`,
  );
}

function outputColumns(
  plan: RandomizationPlan,
  table: EncodedTable,
  released: Int32Array[],
  order: Int32Array,
): OutputColumn[] {
  const typeOf = new Map(plan.spec.attributes.map((a) => [a.name, a.type]));
  const n = order.length;
  return table.columns
    .filter((col) => typeOf.get(col.name) !== 'identifying')
    .map((col) => {
      const i = plan.attributes.findIndex((a) => a.name === col.name);
      const codes = new Int32Array(n);
      if (i >= 0) {
        const r = released[i]!;
        for (let j = 0; j < n; j++) codes[j] = r[order[j]!]!;
        return compactDictionary(col.name, plan.attributes[i]!.categories, codes);
      }
      for (let j = 0; j < n; j++) codes[j] = col.codes[order[j]!]!;
      return compactDictionary(col.name, col.dictionary, codes);
    });
}

/** The exact (ρ1, ρ2) check of the SA's matrix against the input's SA distribution. */
function saRhoCheck(plan: RandomizationPlan, say: (line: string) => void): Steps<RhoCheck> {
  const sa = plan.attributes[plan.attributes.length - 1]!;
  const d = sa.categories.length;
  const p = plan.distortions[plan.distortions.length - 1];
  const matrix = p ? p.matrix : Float64Array.from({ length: d * d }, (_, x) => (x % (d + 1) === 0 ? 1 : 0));
  let done = 0;
  return reporting(
    (function* () {
      const steps = plan.requirements.rho!.checkSteps(matrix, d, categoryCounts(sa));
      for (;;) {
        const r = steps.next();
        if (r.done) return r.value;
        done++;
        yield;
      }
    })(),
    () => say(`checking (ρ1, ρ2)-privacy exactly: ${thousands(done)} of ${thousands(d)} released values`),
    PROGRESS_MS,
  );
}

function matricesFile(plan: RandomizationPlan, risk: RiskDetail, rho: RhoCheck | undefined): MatricesFile {
  const { attributes, distortions, method, requirements } = plan;
  const sa = attributes[attributes.length - 1]!;
  const entries: MatricesFile['attributes'] = emptyRecord();
  const unchanged: MatricesFile['released'] = emptyRecord();
  attributes.forEach((a, i) => {
    const p = distortions[i];
    if (!p) {
      unchanged[a.name] = { role: a.role, categories: a.categories, discretization: a.discretization };
      return;
    }
    const gamma = gammaOf(p.matrix, p.d);
    entries[a.name] = {
      role: a.role,
      categories: a.categories,
      matrix: rowsOf(p.matrix, p.d),
      form: p.form,
      ...(p.parameter !== undefined ? { retention: p.parameter } : {}),
      ...(p.diag !== undefined ? { diagonal: p.diag } : {}),
      gamma: Number.isFinite(gamma) ? gamma : null,
      discretization: a.discretization,
      chosenBy: plan.chosenBy[a.name] ?? 'spec',
    };
  });
  return {
    ppdp: VERSION,
    scenario: method.scenario,
    form: method.form,
    rows: sa.codes.length,
    attributeOrder: attributes.map((a) => a.name),
    attributes: entries,
    released: unchanged,
    sensitive: sa.name,
    privacy: {
      ...(requirements.tau ? { tau: requirements.tau.value, tauFrom: requirements.tau.from } : {}),
      ...(requirements.rho
        ? { rho1: requirements.rho.rho1, rho2: requirements.rho.rho2, gammaAllowed: requirements.rho.gamma }
        : {}),
      maxRisk: risk.max,
      meanRisk: risk.mean,
      ...(rho ? { worstUpwardPosterior: rho.worstUpward, worstDownwardPosterior: rho.worstDownward } : {}),
    },
    ...(plan.smallDomain
      ? {
          smallDomain: {
            attribute: sa.name,
            blocks: plan.smallDomain.blocks.map((b) => ({
              categories: b.values.map((v) => sa.categories[v]!),
              retention: b.retention,
              diagonal: b.diag,
              share: b.share,
            })),
            guarantee: smallDomainGuarantee(requirements.rho!.rho1, requirements.rho!.rho2),
          },
        }
      : {}),
    stream: {
      generator:
        'xoshiro128** in 4 lanes, advancing together; cell i of a column uses lane i % 4 of block ⌊i/4⌋',
      thresholds:
        'released code = #{ j < d−1 : round(2^31 · Σ_{u≤j} P[u][v]) ≤ x }, x = output >>> 1, v the original code',
      key: 'SHA-256("ppdp/stream/v1" ‖ 0x00 ‖ purpose ‖ 0x00 ‖ seed u32 LE ‖ SHA-256 of the input cells, column by column as UTF-8 name ‖ 0x00, its distinct values in order of first appearance each ‖ 0x00, 0x00, then each row\'s index into them u32 LE): bytes 0–15, purpose "perturb" for the perturbation key, "shuffle" for the shuffle key',
      order:
        'randomized attributes in attributeOrder, one after the other; then the rows are shuffled (Fisher–Yates from the last row, on the shuffle key)',
    },
  };
}
