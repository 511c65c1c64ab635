/**
 * A small declarative shape for claims: each field's kind, checked on the JSON read back from
 * the work area, and the TypeScript type the same shape describes (so the two cannot drift).
 */

/** What a field holds. */
export type FieldKind =
  /** A non-negative integer. */
  | 'count'
  /** A finite number. */
  | 'number'
  | 'string'
  | 'strings'
  /** Lists of strings, e.g. attribute names per released column. */
  | 'groups'
  /** Non-negative integers, e.g. a bucket per row. */
  | 'counts'
  /** Names → non-negative integers, e.g. a hierarchy level per quasi-identifier. */
  | 'levels'
  | { readonly nullable: FieldKind }
  | { readonly object: Shape };

export type Shape = { readonly [field: string]: FieldKind };

/** The TypeScript type of a field of kind K. */
export type ValueOf<K> = K extends 'count' | 'number'
  ? number
  : K extends 'string'
    ? string
    : K extends 'strings'
      ? readonly string[]
      : K extends 'groups'
        ? readonly (readonly string[])[]
        : K extends 'counts'
          ? readonly number[]
          : K extends 'levels'
            ? Readonly<Record<string, number>>
            : K extends { readonly nullable: infer N }
              ? ValueOf<N> | null
              : K extends { readonly object: infer S }
                ? Fields<S>
                : never;

/** The object a shape describes. */
export type Fields<S> = { readonly [F in keyof S]: ValueOf<S[F]> };

const isCount = (v: unknown): boolean => Number.isSafeInteger(v) && (v as number) >= 0;
const isString = (v: unknown): boolean => typeof v === 'string';
const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The first problem of `value` against `shape` (a field path and what it must be), or
 * undefined when it fits. Unknown fields are problems too: a claim the verifier would not
 * read must not pass unnoticed.
 */
export function shapeProblem(value: unknown, shape: Shape, path = ''): string | undefined {
  if (!isObject(value)) return `${path ? `'${path.slice(0, -1)}'` : 'the claims'} must be an object`;
  for (const key of Object.keys(value))
    if (!Object.hasOwn(shape, key)) return `unknown field '${path}${key}'`;
  for (const [key, kind] of Object.entries(shape)) {
    const problem = fieldProblem(value[key], kind, `${path}${key}`);
    if (problem) return problem;
  }
  return undefined;
}

function fieldProblem(v: unknown, kind: FieldKind, at: string): string | undefined {
  if (typeof kind === 'object') {
    if ('nullable' in kind) return v === null ? undefined : fieldProblem(v, kind.nullable, at);
    return shapeProblem(v, kind.object, `${at}.`);
  }
  const ok = {
    count: () => isCount(v),
    number: () => typeof v === 'number' && Number.isFinite(v),
    string: () => isString(v),
    strings: () => Array.isArray(v) && v.every(isString),
    groups: () => Array.isArray(v) && v.every((g) => Array.isArray(g) && g.every(isString)),
    counts: () => Array.isArray(v) && v.every(isCount),
    levels: () => isObject(v) && Object.values(v).every(isCount),
  }[kind]();
  return ok ? undefined : `'${at}' must be ${DESCRIBE[kind]}`;
}

const DESCRIBE: Record<Exclude<FieldKind, object>, string> = {
  count: 'a non-negative integer',
  number: 'a finite number',
  string: 'a string',
  strings: 'a list of strings',
  groups: 'a list of lists of strings',
  counts: 'a list of non-negative integers',
  levels: 'an object of non-negative integers',
};
