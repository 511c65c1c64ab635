/**
 * The claims contract: what each release method states about its release, read back by the
 * Verify state from the work area (built.json, or search.json for a sharded release) and
 * checked by the method's verifier (src/verify/). Methods and verifiers both import it; neither
 * imports the other.
 *
 * Claims hold two kinds of fields. `enforced` is the requirement as the method read it from the
 * spec: the verifier reads its own from the spec and fails when the two differ, so a method
 * cannot understate what it had to meet. Every other field is an observation (the chosen node,
 * the suppressed rows, each row's bucket, the risk measured): the verifier checks it against the
 * staged files. A new field or a changed meaning takes a new `format`.
 */

import { type Fields, type Shape, shapeProblem } from '../contracts/shape.ts';
import { VerificationError } from '../errors.ts';
import type { MethodName } from '../release-spec/spec.ts';
import { anatomyShape } from './anatomy.ts';
import { generalizationShape } from './generalization.ts';
import { mondrianShape } from './mondrian.ts';
import { randomizationShape } from './randomization.ts';
import { slicingShape } from './slicing.ts';

export const CLAIMS_FORMAT = 'ppdp-claims/1';

const SHAPES = {
  generalization: generalizationShape,
  mondrian: mondrianShape,
  anatomy: anatomyShape,
  slicing: slicingShape,
  randomization: randomizationShape,
} as const satisfies Record<MethodName, Shape>;

/** The claims of method M: the contract's version, the method, its fields. */
export type ClaimsOf<M extends MethodName> = {
  readonly format: typeof CLAIMS_FORMAT;
  readonly method: M;
} & Fields<(typeof SHAPES)[M]>;

export type Claims = { [M in MethodName]: ClaimsOf<M> }[MethodName];

export type GeneralizationClaims = ClaimsOf<'generalization'>;
export type MondrianClaims = ClaimsOf<'mondrian'>;
export type AnatomyClaims = ClaimsOf<'anatomy'>;
export type SlicingClaims = ClaimsOf<'slicing'>;
export type RandomizationClaims = ClaimsOf<'randomization'>;

/** A method's claims with the contract's version and the method's name. */
export function claimsOf<M extends MethodName>(method: M, fields: Fields<(typeof SHAPES)[M]>): ClaimsOf<M> {
  return { format: CLAIMS_FORMAT, method, ...fields };
}

/**
 * `json` as claims of `method`, or VerificationError naming `source` (where they were read)
 * and the first field that does not fit.
 */
export function readClaims<M extends MethodName>(
  json: unknown,
  method: M,
  source = 'the claims',
): ClaimsOf<M> {
  const header = headerProblem(json, method);
  const problem = header ?? shapeProblem(withoutHeader(json), SHAPES[method]);
  if (problem) {
    throw new VerificationError(
      'E_CLAIMS',
      `verification failed, nothing was published: the ${method} method's claims in ${source} are not ${CLAIMS_FORMAT} claims: ${problem}`,
      // Claims that name this version's format and method were written by it: a field that
      // does not fit (a number that is NaN or infinite is written as null) is its bug.
      header
        ? 'the work area was written by another version of ppdp or changed after it was written: run the release again'
        : 'this version of ppdp wrote these claims, so this is a bug in ppdp (unless the work area was changed after it was written): please report it with the spec (not the data)',
    );
  }
  return json as ClaimsOf<M>;
}

function headerProblem(json: unknown, method: MethodName): string | undefined {
  if (typeof json !== 'object' || json === null || Array.isArray(json)) return 'not an object';
  const { format, method: named } = json as { format?: unknown; method?: unknown };
  if (format !== CLAIMS_FORMAT)
    return `'format' is ${JSON.stringify(format) ?? 'missing'}, expected '${CLAIMS_FORMAT}'`;
  if (named !== method) return `'method' is ${JSON.stringify(named) ?? 'missing'}, expected '${method}'`;
  return undefined;
}

function withoutHeader(json: unknown): Record<string, unknown> {
  const { format: _format, method: _method, ...fields } = json as Record<string, unknown>;
  return fields;
}
