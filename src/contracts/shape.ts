/**
 * A small declarative shape for the JSON ppdp writes and reads back (claims, report.json): each
 * field's kind, checked on the JSON read back, and the TypeScript type the same shape describes
 * (so the two cannot drift).
 */

/** What a field holds. */
export type FieldKind =
  /** A non-negative integer. */
  | 'count'
  /** A finite number. */
  | 'number'
  | 'string'
  | 'boolean'
  | 'strings'
  /** Lists of strings, e.g. attribute names per released column. */
  | 'groups'
  /** Non-negative integers, e.g. a bucket per row. */
  | 'counts'
  /** Names → non-negative integers, e.g. a hierarchy level per quasi-identifier. */
  | 'levels'
  /** Any JSON value: a method's own details, read by no command. */
  | 'json'
  | { readonly nullable: FieldKind }
  /** A field that may be absent (never `null`). */
  | { readonly optional: FieldKind }
  /** One of these strings. */
  | { readonly oneOf: readonly string[] }
  /** A value of any of these kinds. */
  | { readonly either: readonly FieldKind[] }
  | { readonly list: FieldKind }
  /** Fixed-length list, e.g. a [label, value] pair. */
  | { readonly tuple: readonly FieldKind[] }
  /** Names → values of one kind. */
  | { readonly record: FieldKind }
  /** An object of `object`'s fields; with `rest`, other names hold values of that kind. */
  | { readonly object: Shape; readonly rest?: FieldKind };

export type Shape = { readonly [field: string]: FieldKind };

/** The TypeScript type of a field of kind K. */
export type ValueOf<K> = K extends 'count' | 'number'
  ? number
  : K extends 'string'
    ? string
    : K extends 'boolean'
      ? boolean
      : K extends 'strings'
        ? readonly string[]
        : K extends 'groups'
          ? readonly (readonly string[])[]
          : K extends 'counts'
            ? readonly number[]
            : K extends 'levels'
              ? Readonly<Record<string, number>>
              : K extends 'json'
                ? unknown
                : K extends { readonly nullable: infer N }
                  ? ValueOf<N> | null
                  : K extends { readonly oneOf: readonly (infer S)[] }
                    ? S
                    : K extends { readonly either: readonly (infer E)[] }
                      ? ValueOf<E>
                      : K extends { readonly list: infer L }
                        ? readonly ValueOf<L>[]
                        : K extends { readonly tuple: infer T }
                          ? { readonly [I in keyof T]: ValueOf<T[I]> }
                          : K extends { readonly record: infer R }
                            ? Readonly<Record<string, ValueOf<R>>>
                            : K extends { readonly object: infer S; readonly rest: infer R }
                              ? Fields<S> & Readonly<Record<string, ValueOf<R>>>
                              : K extends { readonly object: infer S }
                                ? Fields<S>
                                : never;

type OptionalKeys<S> = { [F in keyof S]: S[F] extends { readonly optional: unknown } ? F : never }[keyof S];
type Unwrapped<K> = K extends { readonly optional: infer O } ? O : never;

/** The object a shape describes: an `optional` field may be absent. */
export type Fields<S> = Flat<
  { readonly [F in Exclude<keyof S, OptionalKeys<S>>]: ValueOf<S[F]> } & {
    readonly [F in OptionalKeys<S>]?: ValueOf<Unwrapped<S[F]>>;
  }
>;

type Flat<T> = { [K in keyof T]: T[K] } & {};

/** T with every `readonly` taken off, all the way down: for a value that is built up in steps. */
export type Writable<T> = T extends (...args: never[]) => unknown
  ? T
  : T extends readonly (infer U)[]
    ? T extends readonly [unknown, ...unknown[]]
      ? { -readonly [I in keyof T]: Writable<T[I]> }
      : Writable<U>[]
    : T extends object
      ? { -readonly [K in keyof T]: Writable<T[K]> }
      : T;

const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const isString = (v: unknown): boolean => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first problem of `value` against `shape` (a field path and what it must be), or
 * undefined when it fits. Unknown fields are problems too: a field no reader would read must
 * not pass unnoticed.
 */
export function shapeProblem(
  value: unknown,
  shape: Shape,
  path = '',
  rest?: FieldKind,
  what = 'the claims',
): string | undefined {
  if (!isObject(value)) return `${path ? `'${path.slice(0, -1)}'` : what} must be an object`;
  for (const key of Object.keys(value)) {
    if (Object.hasOwn(shape, key)) continue;
    if (rest === undefined) return `unknown field '${path}${printable(key)}'`;
    const problem = fieldProblem(value[key], rest, `${path}${printable(key)}`);
    if (problem) return problem;
  }
  for (const [key, kind] of Object.entries(shape)) {
    const problem = fieldProblem(value[key], kind, `${path}${key}`);
    if (problem) return problem;
  }
  return undefined;
}

/** A name from the JSON as a message may show it: bounded, and control characters escaped. */
function printable(name: string): string {
  const short = name.length > 80 ? `${name.slice(0, 80)}…` : name;
  return JSON.stringify(short).slice(1, -1);
}

function fieldProblem(v: unknown, kind: FieldKind, at: string): string | undefined {
  if (typeof kind === 'object') return compositeProblem(v, kind, at);
  const ok = {
    count: () => isCount(v),
    number: () => typeof v === 'number' && Number.isFinite(v),
    string: () => isString(v),
    boolean: () => typeof v === 'boolean',
    strings: () => Array.isArray(v) && v.every(isString),
    groups: () => Array.isArray(v) && v.every((g) => Array.isArray(g) && g.every(isString)),
    counts: () => Array.isArray(v) && v.every(isCount),
    levels: () => isObject(v) && Object.values(v).every(isCount),
    json: () => v !== undefined,
  }[kind]();
  return ok ? undefined : `'${at}' must be ${describeKind(kind)}`;
}

function compositeProblem(v: unknown, kind: Exclude<FieldKind, string>, at: string): string | undefined {
  if ('nullable' in kind) return v === null ? undefined : fieldProblem(v, kind.nullable, at);
  if ('optional' in kind) return v === undefined ? undefined : fieldProblem(v, kind.optional, at);
  if ('oneOf' in kind) {
    return typeof v === 'string' && kind.oneOf.includes(v)
      ? undefined
      : `'${at}' must be ${describeKind(kind)}`;
  }
  if ('either' in kind) {
    return kind.either.some((k) => fieldProblem(v, k, at) === undefined)
      ? undefined
      : `'${at}' must be ${describeKind(kind)}`;
  }
  if ('list' in kind) {
    if (!Array.isArray(v)) return `'${at}' must be a list`;
    for (let i = 0; i < v.length; i++) {
      const problem = fieldProblem(v[i], kind.list, `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if ('tuple' in kind) {
    if (!Array.isArray(v) || v.length !== kind.tuple.length)
      return `'${at}' must be a list of ${kind.tuple.length}`;
    for (let i = 0; i < v.length; i++) {
      const problem = fieldProblem(v[i], kind.tuple[i]!, `${at}[${i}]`);
      if (problem) return problem;
    }
    return undefined;
  }
  if ('record' in kind) return shapeProblem(v, {}, `${at}.`, kind.record);
  return shapeProblem(v, kind.object, `${at}.`, kind.rest);
}

function describeKind(kind: FieldKind): string {
  if (typeof kind === 'string') return DESCRIBE[kind];
  if ('nullable' in kind) return `${describeKind(kind.nullable)} or null`;
  if ('optional' in kind) return describeKind(kind.optional);
  if ('oneOf' in kind) return `one of ${kind.oneOf.map((s) => `'${s}'`).join(', ')}`;
  if ('either' in kind) return kind.either.map(describeKind).join(' or ');
  if ('list' in kind) return `a list of ${describeKind(kind.list)}`;
  if ('tuple' in kind) return `a list of ${kind.tuple.length}`;
  return 'an object';
}

const DESCRIBE: Record<Exclude<FieldKind, object>, string> = {
  count: 'a non-negative integer',
  number: 'a finite number',
  string: 'a string',
  boolean: 'true or false',
  strings: 'a list of strings',
  groups: 'a list of lists of strings',
  counts: 'a list of non-negative integers',
  levels: 'an object of non-negative integers',
  json: 'present',
};
