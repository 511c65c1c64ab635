/**
 * From a spec to the randomization plan: which attributes are randomized, by which matrices,
 * under which bounds — the privacy models read, user matrices validated, parameters
 * optimized. Everything the release, the tests and the benches share.
 */
import { basename } from 'node:path';
import { modelOf } from '../../catalogue/catalogue.ts';
import { DISTINCT_L_DIVERSITY, ENTROPY_L_DIVERSITY } from '../../catalogue/l-diversity.ts';
import { ATTRIBUTE_DISCLOSURE, RHO_PRIVACY } from '../../catalogue/randomization.ts';
import type { EncodedTable } from '../../data/table.ts';
import { NoSolutionError, SpecError } from '../../errors.ts';
import type { KroneckerKernel } from '../../kernels/kronecker/kernel.ts';
import {
  type AttributeDisclosureModel,
  attributeDisclosure,
  disclosureBoundOfL,
} from '../../models/attribute-disclosure.ts';
import { lDiversity } from '../../models/l-diversity.ts';
import { type RhoPrivacyModel, rhoPrivacy } from '../../models/rho-privacy.ts';
import type { RandomizationMethodSpec, ReleaseSpec } from '../../release-spec/spec.ts';
import { thousands } from '../../util/format.ts';
import { allNumbers } from '../../util/numbers.ts';
import { emptyRecord } from '../../util/record.ts';
import { PROGRESS_MS, reporting, runSteps, type Steps } from '../../util/steps.ts';
import { buildDomains, type CategoricalAttribute, DEFAULT_BINS, type SavedDomains } from './domain.ts';
import {
  type Distortion,
  diagOf,
  gammaOf,
  inverseColumnNorms,
  inverseOf,
  isIdentity,
  maxDiagForGamma,
  minDiag,
  structuredDistortion,
  validateMatrix,
} from './matrices.ts';
import { type OptimizeResult, optimizeSteps, TAU_MARGIN } from './optimize.ts';
import { type SmallDomainPlan, smallDomainSteps } from './rho.ts';
import { MAX_QI_CELLS, RiskEvaluator, type RiskMatrices, type RiskOperand, riskTable } from './risk.ts';

export interface Requirements {
  readonly sensitive: string;
  /** Attribute-disclosure bound: the tightest τ the models ask, and where it came from. */
  readonly tau: AttributeDisclosureModel | undefined;
  readonly rho: RhoPrivacyModel | undefined;
}

export interface RandomizationPlan {
  readonly spec: ReleaseSpec;
  readonly method: RandomizationMethodSpec;
  readonly requirements: Requirements;
  /** The contingency table's attributes in Kronecker order: QIs (spec order), then the SA. */
  readonly attributes: CategoricalAttribute[];
  /** Per attribute: its distortion, or null when released unchanged (perhaps discretized). */
  readonly distortions: (Distortion | null)[];
  /** Per attribute: whether the scenario randomizes it (its distortion null when retention 1). */
  readonly randomized: boolean[];
  /** How each randomized attribute's matrix was chosen. */
  readonly chosenBy: Record<
    string,
    'optimizer' | 'spec retention' | 'spec matrix' | typeof RHO_PRIVACY.name | 'small-domain'
  >;
  readonly optimizer: OptimizeResult | undefined;
  readonly smallDomain: SmallDomainPlan | undefined;
  readonly evaluator: RiskEvaluator;
}

const SCENARIO_RANDOMIZES = {
  'rr-s': (role: string) => role === 'sensitive',
  'rr-qi': (role: string) => role === 'quasi-identifying',
  'rr-both': () => true,
};

/** Reads the privacy models a randomization release accepts. */
export function requirementsOf(spec: ReleaseSpec): Requirements {
  const where = basename(spec.file);
  let tau: Requirements['tau'];
  let rho: Requirements['rho'];
  const named = new Set<string>();
  spec.privacy.forEach((m, i) => {
    const field = `privacy[${i}]`;
    switch (m.model) {
      case ATTRIBUTE_DISCLOSURE.name:
        named.add(m.attribute);
        tau = tighter(tau, attributeDisclosure(m.attribute, m.tau));
        break;
      case DISTINCT_L_DIVERSITY.name:
      case ENTROPY_L_DIVERSITY.name:
        named.add(m.attribute);
        tau = tighter(tau, disclosureBoundOfL(lDiversity(m)));
        break;
      case RHO_PRIVACY.name:
        named.add(m.attribute);
        rho = rhoPrivacy(m.attribute, m.rho1, m.rho2, where, field);
        break;
      default:
        throw new SpecError(
          'E_SPEC_MODEL',
          `${where}: ${field} is ${m.model}, which randomization does not implement`,
          'randomization takes attribute-disclosure (tau), distinct/entropy-l-diversity (as tau = 1/l) and rho-privacy (rho1, rho2)',
        );
    }
  });
  if (named.size !== 1) {
    throw new SpecError(
      'E_SPEC_MODEL',
      `${where}: randomization protects one sensitive attribute, but the privacy models name ${named.size === 0 ? 'none' : [...named].join(', ')}`,
      'name the same sensitive attribute in every model (e.g. { "model": "attribute-disclosure", "attribute": "occupation", "tau": 0.25 })',
    );
  }
  const sensitive = [...named][0]!;
  const others = spec.attributes.filter((a) => a.type === 'sensitive' && a.name !== sensitive);
  if (others.length > 0) {
    throw new SpecError(
      'E_SPEC_MODEL',
      `${where}: attributes ${others.map((a) => a.name).join(', ')} ${others.length > 1 ? 'are' : 'is'} sensitive but no model protects ${others.length > 1 ? 'them' : 'it'}`,
      'randomization protects one sensitive attribute: mark the others insensitive (released unchanged) or identifying (dropped)',
    );
  }
  if (!tau && !rho)
    throw new SpecError(
      'E_SPEC_MODEL',
      `${where}: no privacy model for randomization`,
      'add attribute-disclosure or rho-privacy',
    );
  return { sensitive, tau, rho };
}

/** What the scenario leaves unrandomized and could randomize too, and why it would help. */
const RANDOMIZE_MORE: Record<RandomizationMethodSpec['scenario'], string | undefined> = {
  'rr-s':
    'randomize the QIs too (scenario rr-qi or rr-both): randomizing only the sensitive attribute cannot lower the risk of a QI group whose rows all share one sensitive value',
  'rr-qi': 'randomize the sensitive attribute (scenario rr-s or rr-both)',
  'rr-both': undefined,
};

/**
 * The hint when no randomization meets the bound: only what can be done. A looser bound where
 * one below 1 would do — τ at least `leastTau`, or the l the spec gave, lowered so that 1/l is
 * — (τ = 1 bounds nothing, so it is never offered), and the attributes the scenario leaves
 * unrandomized.
 */
export function loosenHint(
  bound: AttributeDisclosureModel,
  leastTau: number,
  scenario: RandomizationMethodSpec['scenario'],
): string {
  const ways: string[] = [];
  if (leastTau < 1) {
    if (bound.spec.model === ATTRIBUTE_DISCLOSURE.name) {
      // Rounded up (down for l), so the bound offered is loose enough.
      ways.push(`raise τ to at least ${Math.ceil(leastTau * 1e4) / 1e4}`);
    } else {
      const field = modelOf(bound.spec).fields['l'];
      const l =
        field?.kind === 'number' && field.integer
          ? Math.floor(1 / leastTau)
          : Math.floor(1e4 / leastTau) / 1e4;
      if (l > 1) ways.push(`lower l to at most ${l}`);
    }
  }
  const more = RANDOMIZE_MORE[scenario];
  if (more) ways.push(more);
  return ways.length > 0
    ? ways.join(', or ')
    : 'no bound below 1 is within reach of randomizing these attributes: protect the table with a method that generalizes (generalization or Mondrian) instead';
}

function tighter(a: Requirements['tau'], b: AttributeDisclosureModel): Requirements['tau'] {
  return a && a.value <= b.value ? a : b;
}

export interface PlanOptions {
  readonly kernel: KroneckerKernel;
  readonly say?: (line: string) => void;
  /** `ppdp apply`: the saved release's categories and discretization, reused as they are. */
  readonly saved?: SavedDomains;
}

export function planRandomization(
  spec: ReleaseSpec,
  table: EncodedTable,
  options: PlanOptions,
): RandomizationPlan {
  return runSteps(planSteps(spec, table, options));
}

/**
 * Above this many categories an attribute is not randomized: its matrix has d² entries, each
 * published in matrices.json (1,000 categories: a million numbers, about 20 MB) and drawn from
 * for every row.
 */
export const MAX_RANDOMIZED_CATEGORIES = 1000;

/** Above this many sensitive values small-domain randomization takes minutes (200: about one). */
export const MAX_SMALL_DOMAIN_CATEGORIES = 100;

/** The plan, yielding after each risk evaluation or block tried (src/util/steps.ts). */
export function* planSteps(
  spec: ReleaseSpec,
  table: EncodedTable,
  options: PlanOptions,
): Steps<RandomizationPlan> {
  const where = basename(spec.file);
  if (spec.method.name !== 'randomization') throw new Error(`not a randomization spec: ${spec.method.name}`);
  const method = spec.method;
  const req = requirementsOf(spec);
  const attributes = buildDomains(spec, table, method, req.sensitive, options.saved);
  const k = attributes.length;
  const sa = k - 1;
  const randomizes = SCENARIO_RANDOMIZES[method.scenario];
  const randomized = attributes.map((a) => randomizes(a.role));

  for (const [field, names] of [
    ['retention', Object.keys(method.retention ?? {})],
    ['matrices', Object.keys(method.matrices ?? {})],
  ] as const) {
    for (const name of names) {
      const i = attributes.findIndex((a) => a.name === name);
      if (i < 0 || !randomized[i]) {
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: method.${field}.${name} names an attribute scenario ${method.scenario} does not randomize`,
          `${method.scenario} randomizes: ${attributes
            .filter((_, j) => randomized[j])
            .map((a) => a.name)
            .join(', ')}`,
        );
      }
    }
  }
  for (const [i, a] of attributes.entries()) {
    const d = a.categories.length;
    if (!randomized[i] || d <= MAX_RANDOMIZED_CATEGORIES) continue;
    const numeric = allNumbers(a.categories);
    throw new SpecError(
      'E_SPEC_TOO_LARGE',
      `${where}: attributes.${a.name} has ${thousands(d)} categories; scenario ${method.scenario} randomizes it through a ${thousands(d)} × ${thousands(d)} matrix, published in matrices.json (at most ${thousands(MAX_RANDOMIZED_CATEGORIES)} categories)`,
      numeric
        ? `bin it: "scale": "numeric" in attributes.${a.name} cuts it into ${DEFAULT_BINS} equal-width bins, or set method.discretize.${a.name} to { "bins": n } (n ≤ ${thousands(MAX_RANDOMIZED_CATEGORIES)})`
        : `group it: give attributes.${a.name} a hierarchy and set method.discretize.${a.name} to { "level": n }, a level with at most ${thousands(MAX_RANDOMIZED_CATEGORIES)} groups`,
    );
  }
  const saName = attributes[sa]!.name;
  if (req.tau && req.tau.value < 1 && attributes[sa]!.categories.length === 1) {
    throw new NoSolutionError(
      'E_NO_SOLUTION',
      `${where}: the sensitive attribute ${saName} holds one value in every row: anyone who knows that learns every row's ${saName} without the release, so no randomization brings the attribute-disclosure risk below 1 (τ = ${req.tau.value})`,
      `attribute-disclosure needs at least two values of ${saName}: check the input's ${saName} column, or protect another attribute`,
    );
  }
  if (req.rho && !randomized[sa]) {
    throw new SpecError(
      'E_SPEC_MODEL',
      `${where}: rho-privacy protects the sensitive attribute, but scenario rr-qi releases it unchanged`,
      'use scenario rr-s or rr-both with rho-privacy',
    );
  }
  if (method.smallDomain) {
    if (!req.rho || req.tau || method.scenario !== 'rr-s') {
      throw new SpecError(
        'E_SPEC_MODEL',
        `${where}: smallDomain is small-domain randomization of the sensitive attribute: it needs scenario rr-s and a rho-privacy model, and no attribute-disclosure or l-diversity model`,
        'set "scenario": "rr-s" and use { "model": "rho-privacy", "attribute": …, "rho1": …, "rho2": … } alone, or drop smallDomain',
      );
    }
    if (method.retention?.[req.sensitive] !== undefined || method.matrices?.[req.sensitive] !== undefined) {
      throw new SpecError(
        'E_SPEC_CONFLICT',
        `${where}: smallDomain chooses the sensitive attribute's matrices itself; method.retention/matrices name it too`,
        'drop one of them',
      );
    }
    const d = attributes[sa]!.categories.length;
    if (d > MAX_SMALL_DOMAIN_CATEGORIES) {
      throw new SpecError(
        'E_SPEC_TOO_LARGE',
        `${where}: method.smallDomain tries every run of ${saName}'s values sorted by frequency as a sub-domain, each with its exact check: its ${thousands(d)} categories are more than ${MAX_SMALL_DOMAIN_CATEGORIES} (the work grows with the fourth power of their number)`,
        `group ${saName} into at most ${MAX_SMALL_DOMAIN_CATEGORIES} categories (method.discretize.${saName}), or drop smallDomain: uniform perturbation at the γ bound guarantees rho-privacy for any number of values`,
      );
    }
  }

  // `ppdp apply` chooses nothing: the saved matrices are given as the spec's own, and what the
  // saved release left unperturbed stays so (docs/decide-and-reuse.md); a bound they no longer
  // meet on this table is refused, not met by choosing anew.
  const applying = options.saved;
  const refuseApply = (what: string): NoSolutionError =>
    new NoSolutionError(
      'E_APPLY_INFEASIBLE',
      `${where}: the transformation saved in ${applying!.file} does not protect this table: ${what}`,
      `release this table afresh with \`ppdp release ${where}\`, which chooses matrices for it (apply re-uses the saved ones as they are)`,
    );
  const form = method.form;
  const distortions: (Distortion | null)[] = attributes.map(() => null);
  const chosenBy: RandomizationPlan['chosenBy'] = emptyRecord();
  const upper = attributes.map(() => 1);
  if (req.rho && !method.smallDomain)
    upper[sa] = maxDiagForGamma(attributes[sa]!.categories.length, req.rho.gamma);

  attributes.forEach((a, i) => {
    if (!randomized[i]) return;
    const d = a.categories.length;
    const userMatrix = method.matrices?.[a.name];
    const p = method.retention?.[a.name];
    if (userMatrix !== undefined && p !== undefined) {
      throw new SpecError(
        'E_SPEC_CONFLICT',
        `${where}: method.retention.${a.name} and method.matrices.${a.name} both given`,
        'give a retention probability or a whole matrix, not both',
      );
    }
    if (userMatrix !== undefined) {
      distortions[i] = userDistortion(userMatrix, a, where);
      chosenBy[a.name] = 'spec matrix';
    } else if (p !== undefined) {
      const diag = diagOf(form, d, p);
      if (d > 1 && !(diag > minDiag(d))) {
        throw new SpecError(
          'E_SPEC_RANGE',
          `${where}: method.retention.${a.name} = ${p} makes a singular matrix for ${d} categories`,
          form === 'retention' ? `use a retention above 1/${d}` : 'use a retention above 0',
        );
      }
      distortions[i] = structuredDistortion(form, d, diag);
      chosenBy[a.name] = 'spec retention';
    }
    if (i === sa && req.rho && distortions[i] && !method.smallDomain) {
      const g = gammaOf(distortions[i]!.matrix, d);
      if (g > req.rho.gamma * (1 + 1e-12)) {
        if (applying) {
          throw refuseApply(
            `the saved matrix of the sensitive attribute ${saName} is ${g.toPrecision(4)}-amplifying; rho-privacy (${req.rho.rho1}, ${req.rho.rho2}) allows γ ≤ ${req.rho.gamma.toPrecision(4)}`,
          );
        }
        throw new NoSolutionError(
          'E_NO_SOLUTION',
          `${where}: the sensitive attribute's matrix given in the spec is ${g.toPrecision(4)}-amplifying; rho-privacy (${req.rho.rho1}, ${req.rho.rho2}) allows γ ≤ ${req.rho.gamma.toPrecision(4)}`,
          `lower it so that the matrix's diagonal is at most ${upper[sa]!.toPrecision(6)}, or drop it and let ppdp choose`,
        );
      }
    }
  });

  let smallDomain: SmallDomainPlan | undefined;
  if (method.smallDomain) {
    const d = attributes[sa]!.categories.length;
    let tried = 0;
    smallDomain = yield* reporting(
      smallDomainSteps(categoryCounts(attributes[sa]!), req.rho!.rho1, req.rho!.rho2, () => tried++),
      () =>
        options.say?.(
          `small-domain partition: ${thousands(tried)} of ${thousands((d * (d + 1)) / 2)} runs tried`,
        ),
      PROGRESS_MS,
    );
    if (!smallDomain) {
      throw new NoSolutionError(
        'E_NO_SOLUTION',
        `no partition of the sensitive attribute's values into sub-domains satisfies rho-privacy (${req.rho!.rho1}, ${req.rho!.rho2}) exactly`,
        'raise rho2 or lower rho1',
      );
    }
    distortions[sa] = {
      d,
      matrix: smallDomain.matrix,
      form: 'custom',
      parameter: undefined,
      diag: undefined,
    };
    chosenBy[attributes[sa]!.name] = 'small-domain';
  }

  const table2 = riskTable(attributes);
  const evaluator = new RiskEvaluator(table2, options.kernel);
  const qiRandomized = attributes.some((a, i) => i < sa && randomized[i] && a.categories.length > 1);
  if (qiRandomized && table2.qiCells > MAX_QI_CELLS) {
    throw new SpecError(
      'E_SPEC_TOO_LARGE',
      `${where}: the QI contingency table has ${thousands(table2.qiCells)} cells; randomizing QIs needs it dense (at most ${thousands(MAX_QI_CELLS)})`,
      'discretize numeric QIs (method.discretize with a hierarchy level or bins), use fewer QIs, or scenario rr-s',
    );
  }

  // Randomized, no matrix yet, more than one category: free variables, or, when applying, pinned
  // at retention 1 as the saved release left them.
  const open = attributes
    .map((_, i) => i)
    .filter((i) => randomized[i] && !distortions[i] && attributes[i]!.categories.length > 1);
  const free = applying ? [] : open;
  if (applying && req.rho && open.includes(sa) && upper[sa]! < 1) {
    throw refuseApply(
      `the release left the sensitive attribute ${saName} unperturbed (retention 1), and rho-privacy (${req.rho.rho1}, ${req.rho.rho2}) needs its ${attributes[sa]!.categories.length} categories randomized`,
    );
  }
  const operands = (diags: Float64Array): RiskMatrices => {
    const ops: RiskOperand[] = distortions.slice();
    free.forEach((i, j) => {
      ops[i] = diags[j]!;
    });
    return { qi: ops.slice(0, sa), sa: ops[sa]! };
  };
  let optimizer: OptimizeResult | undefined;
  if (req.tau) {
    options.say?.(
      applying
        ? `checking the saved matrices for max risk ≤ ${req.tau.value.toPrecision(4)}`
        : `optimizing ${free.length} retention parameter${free.length === 1 ? '' : 's'} for max risk ≤ ${req.tau.value.toPrecision(4)}`,
    );
    const say = options.say ?? (() => {});
    optimizer = yield* reporting(
      optimizeSteps({
        variables: free.map((i) => ({
          name: attributes[i]!.name,
          d: attributes[i]!.categories.length,
          lo: minDiag(attributes[i]!.categories.length),
          hi: upper[i]!,
        })),
        tau: req.tau.value,
        maxRisk: (diags) => evaluator.summary(operands(diags)).max,
        hint: (leastTau) => loosenHint(req.tau!, leastTau, method.scenario),
      }),
      () => say(`optimizing: ${thousands(evaluator.evaluations)} risk evaluations so far`),
      PROGRESS_MS,
    );
    free.forEach((i, j) => {
      distortions[i] = structuredDistortion(form, attributes[i]!.categories.length, optimizer!.diags[j]!);
      chosenBy[attributes[i]!.name] = 'optimizer';
    });
  } else {
    // ρ only: the SA at the γ bound; other randomized attributes are not constrained.
    if (free.includes(sa)) {
      distortions[sa] = structuredDistortion(form, attributes[sa]!.categories.length, upper[sa]!);
      chosenBy[attributes[sa]!.name] = RHO_PRIVACY.name;
    }
  }
  // Attributes with one category, or left at the identity, are released unrandomized.
  distortions.forEach((p, i) => {
    if (p && (p.d === 1 || p.diag === 1)) {
      distortions[i] = null;
      delete chosenBy[attributes[i]!.name];
    }
  });
  // Every risk is a probability: τ ≥ 1 holds whatever the matrices.
  if (req.tau && req.tau.value < 1) {
    const risk = evaluator.summary({ qi: distortions.slice(0, sa), sa: distortions[sa]! }).max;
    if (risk > req.tau.value * (1 - TAU_MARGIN / 2)) {
      if (applying) {
        const kept = attributes.filter((a, i) => {
          const p = distortions[i];
          return randomized[i] && a.categories.length > 1 && (!p || isIdentity(p.matrix, p.d));
        });
        const names = kept.map((a) => a.name);
        throw refuseApply(
          `they leave a maximum attribute-disclosure risk of ${risk.toPrecision(4)} > τ = ${req.tau.value}${
            kept.length > 0
              ? `; the release left ${names.join(', ')} unperturbed (retention 1), and apply keeps ${kept.length === 1 ? 'it' : 'them'} so`
              : ''
          }`,
        );
      }
      const given = attributes.filter(
        (a) => method.retention?.[a.name] !== undefined || method.matrices?.[a.name] !== undefined,
      );
      if (given.length > 0) {
        throw new NoSolutionError(
          'E_NO_SOLUTION',
          `the matrices given in the spec for ${given.map((a) => a.name).join(', ')} leave a maximum attribute-disclosure risk of ${risk.toPrecision(4)} > τ = ${req.tau.value}`,
          'lower their retention in method.retention/matrices, or let ppdp choose them',
        );
      }
      // Nothing for the optimizer to choose: every attribute the scenario randomizes has one value.
      const names = attributes.filter((_, i) => randomized[i]).map((a) => a.name);
      throw new NoSolutionError(
        'E_NO_SOLUTION',
        `${where}: scenario ${method.scenario} randomizes ${names.join(', ')}, which hold${names.length === 1 ? 's' : ''} one value in every row: randomizing ${names.length === 1 ? 'it' : 'them'} changes nothing, and the maximum attribute-disclosure risk stays ${risk.toPrecision(4)} > τ = ${req.tau.value}`,
        loosenHint(req.tau, risk / (1 - TAU_MARGIN / 2), method.scenario),
      );
    }
  }
  return {
    spec,
    method,
    requirements: req,
    attributes,
    distortions,
    randomized,
    chosenBy,
    optimizer,
    smallDomain,
    evaluator,
  };
}

function userDistortion(raw: unknown, a: CategoricalAttribute, where: string): Distortion {
  const field = `method.matrices.${a.name}`;
  const d = a.categories.length;
  const entry = raw as { categories?: unknown; matrix?: unknown };
  if (raw === null || typeof raw !== 'object' || !Array.isArray(entry.categories)) {
    throw new SpecError(
      'E_SPEC_MATRIX',
      `${where}: ${field} must be { "categories": [...], "matrix": [[...]] }`,
      'categories in the order of the matrix rows and columns; matrix[u][v] = Pr(released u | original v)',
    );
  }
  const cats = entry.categories as unknown[];
  const known = new Map(a.categories.map((c, i) => [c, i]));
  const index = cats.map((c) => (typeof c === 'string' ? known.get(c) : undefined));
  if (cats.length !== d || index.some((x) => x === undefined) || new Set(index).size !== d) {
    // Only the spec's own text is quoted: a label that is no category. A label that is one (listed
    // twice) is the input's value, or its bin's edges: named by its place in the list; the
    // categories left out are counted.
    const unknown = cats.filter((_, i) => index[i] === undefined).map((c) => JSON.stringify(c));
    const twice = cats
      .map((_, i) => i)
      .filter((i) => index[i] !== undefined && index.indexOf(index[i]) !== i)
      .map((i) => `${field}.categories[${i}] repeats [${index.indexOf(index[i])}]`);
    const missing = d - new Set(index.filter((x) => x !== undefined)).size;
    const problems = [
      ...(unknown.length > 0 ? [`not a category of ${a.name}: ${unknown.join(', ')}`] : []),
      ...twice,
      ...(missing > 0 ? [`${missing} of its categories not listed`] : []),
    ];
    throw new SpecError(
      'E_SPEC_MATRIX',
      `${where}: ${field}.categories must list each of the attribute's ${d} categories once (after discretization)${problems.length > 0 ? ` (${problems.join('; ')})` : ''}`,
      'list every category the input has, in the order of the matrix',
    );
  }
  const given = validateMatrix(entry.matrix, d, where, `${field}.matrix`);
  const matrix = new Float64Array(d * d);
  for (let u = 0; u < d; u++)
    for (let v = 0; v < d; v++) matrix[index[u]! * d + index[v]!] = given[u * d + v]!;
  return { d, matrix, form: 'custom', parameter: undefined, diag: undefined };
}

/** Rows per category of an attribute. */
export function categoryCounts(a: CategoricalAttribute): Float64Array {
  const counts = new Float64Array(a.categories.length);
  for (const c of a.codes) counts[c]! += 1;
  return counts;
}

/**
 * E‖π̂ − π‖² for a release of N rows (exact under multinomial sampling):
 * (Σ_ν λ_ν Πᵢ ‖Pᵢ⁻¹e_{νᵢ}‖² − ‖π‖²)/N = (Σ_cells π(c)·Πᵢ (Pᵢᵀcᵢ)(cᵢ) − ‖π‖²)/N.
 */
export function expectedSquaredError(
  attributes: readonly CategoricalAttribute[],
  distortions: readonly (Distortion | null)[],
): number {
  const n = attributes[0]!.codes.length;
  const weights = attributes.map((a, i) => {
    const p = distortions[i];
    const d = a.categories.length;
    if (!p) return new Float64Array(d).fill(1);
    const norms = inverseColumnNorms(inverseOf(p), d);
    const w = new Float64Array(d);
    for (let v = 0; v < d; v++) {
      let s = 0;
      for (let u = 0; u < d; u++) s += p.matrix[u * d + v]! * norms[u]!;
      w[v] = s;
    }
    return w;
  });
  const counts = new Map<string, { count: number; weight: number }>();
  for (let r = 0; r < n; r++) {
    let key = '';
    let weight = 1;
    attributes.forEach((a, i) => {
      key += `${a.codes[r]},`;
      weight *= weights[i]![a.codes[r]!]!;
    });
    const e = counts.get(key);
    if (e) e.count++;
    else counts.set(key, { count: 1, weight });
  }
  let first = 0;
  let square = 0;
  for (const { count, weight } of counts.values()) {
    const pi = count / n;
    first += pi * weight;
    square += pi * pi;
  }
  return (first - square) / n;
}
