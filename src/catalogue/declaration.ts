/**
 * What a privacy model declares about itself, once: its name, its parameters (each field's kind
 * and range, from which both the spec's validation and the TypeScript type of the model's spec
 * come, as src/contracts/shape.ts derives the report's type), its wording for the report, what
 * it needs, the methods it applies to, the parameter `ppdp explore --vary` changes and the
 * measure the report names. Its arithmetic is not here: src/models/ judges, src/verify/ checks
 * again on its own.
 */

/** One parameter of a model's spec. */
export type ParamField =
  /** A number in [min, max] (`integer`: a whole number); `example` is what a hint suggests. */
  | {
      readonly kind: 'number';
      readonly min: number;
      readonly max: number;
      readonly integer?: boolean;
      readonly example?: number;
      readonly optional?: true;
    }
  /**
   * A string, one of `values` when given. Left out, it takes `default` (then it is always
   * present in the spec's type); with `byColumn`, the input's values decide it later (whether
   * the sensitive attribute's values are all numbers).
   */
  | {
      readonly kind: 'string';
      readonly values?: readonly string[];
      readonly optional?: true;
      readonly default?: string;
      readonly byColumn?: (numeric: boolean) => string;
    }
  /** The sensitive attribute the model protects: a column of type `sensitive`. */
  | { readonly kind: 'attribute' }
  /** A file (the population table), relative to the spec's folder; read as its absolute path. */
  | { readonly kind: 'file'; readonly optional?: true }
  /** A generalization level per quasi-identifier, e.g. `{ "age": 2, "zip": 1 }` (a node of the lattice). */
  | { readonly kind: 'levels' };

export type ParamFields = { readonly [field: string]: ParamField };

/** What a model needs to be judged. */
export type ModelNeed =
  /** The per-class counts of its sensitive attribute's values. */
  | 'sa-histogram'
  /** The population table's records per class. */
  | 'population-table'
  /** The release as a whole (judged after the class loop). */
  | 'whole-release'
  /** A randomized release's matrices and per-row risk. */
  | 'matrices'
  /** A sample of the input drawn from a secret stream: released by one task, never over shards. */
  | 'secret-sample';

/** Where a model is judged, which decides the methods it applies to. */
export type ModelScope =
  /** Class by class: every partitioning method (generalization, Mondrian; Anatomy and Slicing take l-diversity). */
  | 'class'
  /** On the release as a whole or against a population: full-domain generalization only. */
  | 'release'
  /** On a randomized release: randomization only. */
  | 'randomization';

/** A class as a run-time model's check sees it: its size and its SA counts by value. */
export interface ClassView {
  readonly size: number;
  /** The class's counts of its sensitive attribute's values (models on an attribute). */
  readonly counts: ReadonlyMap<string, number> | undefined;
}

/** A model's value on one class and whether the class satisfies it. */
export interface ClassOutcome {
  readonly value: number;
  readonly holds: boolean;
}

export interface ModelDeclaration<
  N extends string = string,
  F extends ParamFields = ParamFields,
  V extends readonly ParamFields[] = readonly ParamFields[],
> {
  /** Its name in a spec's `privacy[i].model`. */
  readonly name: N;
  /** Its parameters, in the order the spec checks them and the report lists them. */
  readonly fields: F;
  /**
   * Alternative sets of further parameters (k-map: a population table, or a population's
   * size), each a member of the spec's type; `refine` says which one a spec gives.
   */
  readonly variants?: V;
  /**
   * The checks across fields the kinds cannot state (`at` is e.g. `release.json: privacy[0]`):
   * throws a SpecError naming the field, may fill in defaults.
   */
  readonly refine?: (fields: Record<string, unknown>, where: string, field: string) => void;
  /** What the report calls it, e.g. `Distinct l-diversity`. */
  readonly title: string;
  /** Per parameter (the sensitive attribute aside), what it requires, from its value as text. */
  readonly wording: { readonly [param: string]: (value: string) => string };
  readonly needs: readonly ModelNeed[];
  readonly scope: ModelScope;
  /** A class model randomization also takes, and how it reads there (l-diversity: τ = 1/l). */
  readonly randomization?: 'tau-of-l';
  /** The parameter `ppdp explore --vary` changes (whole numbers only with `integer`). */
  readonly vary?: { readonly parameter: string; readonly integer: boolean };
  /** The measure the report gives as achieved (`name`), and which way it gets better. */
  readonly measure: { readonly name: string; readonly higherIsBetter: boolean };
  /**
   * Whether the model with these parameters bounds identity disclosure (re-identification by
   * linkage on the quasi-identifiers as released): every released class holds at least 2 rows,
   * or the average risk stays below 1. Absent: it never does (t-closeness, δ-disclosure…).
   */
  readonly boundsIdentity?: (params: Readonly<Record<string, unknown>>) => boolean;
  /**
   * A model declared at run time brings its check here: src/models judges classes with it and
   * src/verify checks them again with it. The built-in models have their own arithmetic in
   * src/models/ and, apart, in src/verify/.
   */
  readonly check?: (spec: Readonly<Record<string, unknown>>, cls: ClassView) => ClassOutcome;
}

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** The TypeScript value of a parameter. */
type ValueOfParam<F> = F extends { readonly kind: 'number' }
  ? number
  : F extends { readonly kind: 'levels' }
    ? Readonly<Record<string, number>>
    : F extends { readonly kind: 'string'; readonly values: readonly (infer S)[] }
      ? S
      : string;

type OptionalKeys<F> = {
  [K in keyof F]: F[K] extends { readonly optional: true }
    ? F[K] extends { readonly default: string } | { readonly byColumn: unknown }
      ? never
      : K
    : never;
}[keyof F];

/** The parameters a set of fields describes: an optional field without a default may be absent. */
export type ParamsOf<F> = Flat<
  { readonly [K in Exclude<keyof F, OptionalKeys<F>>]: ValueOfParam<F[K]> } & {
    readonly [K in OptionalKeys<F>]?: ValueOfParam<F[K]>;
  }
>;

/** The spec of a declared model: `{ model: name, …parameters }`, one member per variant. */
export type SpecOf<D> = D extends { readonly name: infer N; readonly fields: infer F }
  ? D extends { readonly variants: readonly (infer X)[] }
    ? VariantSpecs<N, F, X>
    : Flat<{ readonly model: N } & ParamsOf<F>>
  : never;

type VariantSpecs<N, F, X> = X extends unknown
  ? Flat<{ readonly model: N } & ParamsOf<F> & ParamsOf<X>>
  : never;

/** Declares a model, keeping its literal types (its name, fields, scope: for SpecOf and the registries). */
export function declareModel<const D extends ModelDeclaration>(declaration: D): D {
  return declaration;
}

/** The sensitive attribute field every model on one has. */
export const attribute = { kind: 'attribute' } as const;
