/**
 * The verifier's check of (ε, δ)-differential privacy by sampling and generalization: β and k
 * re-derived from the spec's (ε, δ) by the catalogue's declared derivation (never from the
 * claims, never from src/models), every released class holding at least k rows, and the
 * claimed β, k and sample agreeing with them and with the staged rows. That every released row
 * is an input row generalized at the spec's node is the generalization verifier's row match.
 */
import type { SpecNamed } from '../catalogue/catalogue.ts';
import { DIFFERENTIAL_PRIVACY } from '../catalogue/differential-privacy.ts';
import { dpParameters } from '../catalogue/dp-parameters.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';

type DpSpec = SpecNamed<typeof DIFFERENTIAL_PRIVACY.name>;
type Add = (name: string, passed: boolean, detail: string) => void;

/** What the accounting reads of a generalization release's claims. */
export interface DpClaims {
  readonly node: Readonly<Record<string, number>>;
  readonly suppressedRows: number;
  readonly dp?: { readonly beta: number; readonly k: number; readonly sampledRows: number } | undefined;
}

/** The spec's differential-privacy model, if it names one. */
export function dpModelOf(privacy: readonly PrivacyModelSpec[]): DpSpec | undefined {
  return privacy.find((m): m is DpSpec => m.model === DIFFERENTIAL_PRIVACY.name);
}

/** Every released class has at least the k (ε, δ) imply. */
export function checkDpClasses(model: DpSpec, classes: readonly { readonly size: number }[], add: Add): void {
  const { k } = dpParameters(model.epsilon, model.delta);
  const small = classes.filter((c) => c.size < k).length;
  add(
    DIFFERENTIAL_PRIVACY.name,
    small === 0,
    small === 0
      ? `every released class has at least k = ${k} sampled rows (ε = ${model.epsilon}, δ = ${model.delta})`
      : `${small} released classes hold fewer than k = ${k} rows`,
  );
}

/**
 * The claims' accounting against the spec: β and k as (ε, δ) give them, the node the spec
 * fixes, the sample no larger than the input, and the rows not released (`notReleased`, counted
 * from the staged files) being exactly the rows not sampled plus the rows suppressed.
 */
export function checkDpClaims(
  model: DpSpec,
  claims: DpClaims,
  inputRows: number,
  notReleased: number,
  add: Add,
): void {
  const { beta, k } = dpParameters(model.epsilon, model.delta);
  const dp = claims.dp;
  const nodeOk = Object.entries(claims.node).every(([q, l]) => model.levels[q] === l);
  const ok =
    dp !== undefined &&
    dp.beta === beta &&
    dp.k === k &&
    nodeOk &&
    dp.sampledRows <= inputRows &&
    inputRows - dp.sampledRows + claims.suppressedRows === notReleased;
  add(
    'dp-accounting',
    ok,
    dp === undefined
      ? 'the claims state no sampling for a differentially private release'
      : `β = ${beta}, k = ${k} from (ε, δ); claimed β = ${dp.beta}, k = ${dp.k}, ${dp.sampledRows} of ${inputRows} rows sampled, ${claims.suppressedRows} suppressed, ${notReleased} not released` +
          (nodeOk ? '' : '; the node is not the one the spec fixes'),
  );
}
