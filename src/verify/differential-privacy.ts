/**
 * The verifier's check of (ε, δ)-differential privacy by sampling and generalization: the split
 * of ε (the search's share, each step's ε, the rest for the sampling), β and k re-derived from
 * the spec alone by the catalogue's declared derivation (never from the claims, never from
 * src/models), every released class holding at least k rows, the claimed β, k and sample
 * agreeing with them and with the staged rows, and a private search having spent no more than
 * its share (its steps at most the spec's, each at the ε the spec gives). That every released
 * row is an input row generalized at the claimed node is the generalization verifier's row match.
 * Over shards (src/verify/generalization-parts.ts) the shards hold only the sample: their rows
 * are matched to the released ones, the sample is counted from them, and the input's rows are
 * the scans' count of the rows they read (the sample is secret: no one can redo it).
 */
import type { SpecNamed } from '../catalogue/catalogue.ts';
import { DIFFERENTIAL_PRIVACY, dpSplit } from '../catalogue/differential-privacy.ts';
import { dpParameters } from '../catalogue/dp-parameters.ts';
import type { PrivacyModelSpec } from '../release-spec/spec.ts';

type DpSpec = SpecNamed<typeof DIFFERENTIAL_PRIVACY.name>;
type Add = (name: string, passed: boolean, detail: string) => void;

/** What the accounting reads of a generalization release's claims. */
export interface DpClaims {
  readonly node: Readonly<Record<string, number>>;
  readonly suppressedRows: number;
  readonly dp?:
    | {
        readonly beta: number;
        readonly k: number;
        readonly sampledRows: number;
        readonly search?:
          | { readonly epsilon: number; readonly stepEpsilon: number; readonly stepsTaken: number }
          | undefined;
      }
    | undefined;
}

/** β and k for the spec's (ε, δ), over the ε its search (if any) leaves for the sampling. */
function parameters(model: DpSpec): { beta: number; k: number } {
  return dpParameters(dpSplit(model).epsilonAnon, model.delta);
}

/** The spec's differential-privacy model, if it names one. */
export function dpModelOf(privacy: readonly PrivacyModelSpec[]): DpSpec | undefined {
  return privacy.find((m): m is DpSpec => m.model === DIFFERENTIAL_PRIVACY.name);
}

/** Every released class has at least the k (ε, δ) imply. */
export function checkDpClasses(model: DpSpec, classes: readonly { readonly size: number }[], add: Add): void {
  const { k } = parameters(model);
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
 * A sample of `sampled` rows out of `rows` is one β plausibly drew: within six standard
 * deviations of βn (a true sample falls outside with probability below 10⁻⁸). A sample drawn
 * with a larger β (more rows kept, a weaker guarantee) fails it.
 */
function plausibleSample(sampled: number, rows: number, beta: number): boolean {
  return Math.abs(sampled - beta * rows) <= 6 * Math.sqrt(rows * beta * (1 - beta)) + 1;
}

/**
 * The claims' accounting against the spec: β and k as (ε, δ) and the split give them, the node
 * the spec fixes (if it fixes one), the sample no larger than the input and of a size β
 * plausibly draws, the rows not released (`notReleased`, counted from the staged files) being
 * exactly the rows not sampled plus the rows suppressed; then the search's spending. A release
 * over shards stores only its sample, which the verifier counts (`sampled`): the claimed sample
 * must be that count, and the count is what is weighed against β.
 */
export function checkDpClaims(
  model: DpSpec,
  claims: DpClaims,
  inputRows: number,
  notReleased: number,
  add: Add,
  sampled?: number,
): void {
  const { beta, k } = parameters(model);
  const dp = claims.dp;
  const nodeOk = !('levels' in model) || Object.entries(claims.node).every(([q, l]) => model.levels[q] === l);
  const drawn = sampled ?? dp?.sampledRows ?? 0;
  const ok =
    dp !== undefined &&
    dp.beta === beta &&
    dp.k === k &&
    nodeOk &&
    dp.sampledRows === drawn &&
    drawn <= inputRows &&
    plausibleSample(drawn, inputRows, beta) &&
    inputRows - drawn + claims.suppressedRows === notReleased;
  add(
    'dp-accounting',
    ok,
    dp === undefined
      ? 'the claims state no sampling for a differentially private release'
      : `β = ${beta}, k = ${k} from (ε, δ); claimed β = ${dp.beta}, k = ${dp.k}, ${dp.sampledRows} of ${inputRows} rows sampled` +
          (sampled === undefined ? '' : ` (${sampled} counted)`) +
          `, ${claims.suppressedRows} suppressed, ${notReleased} not released` +
          (nodeOk ? '' : '; the node is not the one the spec fixes'),
  );
  checkDpSearch(model, dp?.search, add);
}

/**
 * The search's spending against the spec's split: with `levels` no search at all; with a
 * private search, ε_search and each step's ε as the spec gives them, at most the spec's steps,
 * and steps × per-step ε within ε_search.
 */
function checkDpSearch(model: DpSpec, search: NonNullable<DpClaims['dp']>['search'], add: Add): void {
  const split = dpSplit(model);
  if (!('steps' in model)) {
    add(
      'dp-search-budget',
      search === undefined,
      search === undefined
        ? 'no search: the node is fixed in advance and all of ε goes to the sampling'
        : 'the claims state a search, but the spec fixes the node in advance',
    );
    return;
  }
  const ok =
    search !== undefined &&
    search.epsilon === split.epsilonSearch &&
    search.stepEpsilon === split.stepEpsilon &&
    Number.isInteger(search.stepsTaken) &&
    search.stepsTaken <= split.steps &&
    search.stepsTaken * split.stepEpsilon <= split.epsilonSearch;
  add(
    'dp-search-budget',
    ok,
    search === undefined
      ? 'the claims state no search for a spec whose node is chosen by a private search'
      : `ε_search = ${split.epsilonSearch} over at most ${split.steps} steps of ε = ${split.stepEpsilon} each, ` +
          `ε = ${split.epsilonAnon} left for the sampling; claimed ε_search = ${search.epsilon}, ` +
          `${search.stepsTaken} steps of ε = ${search.stepEpsilon}` +
          (ok ? '' : ': the search spent more than the spec gives it'),
  );
}
