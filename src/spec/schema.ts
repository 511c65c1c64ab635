/**
 * A tiny declarative schema for the release spec. Every error names the file, the field path,
 * what is allowed and what was found, and suggests the nearest known name for a typo.
 */
import { SpecError } from '../errors.ts';

export type Field = (
  | { kind: 'string'; values?: readonly string[] | undefined }
  | { kind: 'number'; min: number; max: number; integer: boolean }
  | { kind: 'object' }
  | { kind: 'array' }
  | { kind: 'boolean' }
  | { kind: 'any' }
) & { required?: boolean };

export type ObjectSchema = Record<string, Field>;

/**
 * Checks that `value` is an object whose keys are all in `schema` (unless `allowUnknown`) and
 * whose values have the declared kinds. Returns the object for further, field-specific checks.
 */
export function validateObject(
  value: unknown,
  schema: ObjectSchema,
  where: string,
  path: string,
  expected = 'an object',
  allowUnknown = false,
): Record<string, unknown> {
  const at = path === '' ? 'the spec' : path;
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SpecError(
      'E_SPEC_TYPE',
      `${where}: ${at} must be ${expected} (got ${describe(value)})`,
      hintFor(schema),
    );
  }
  const obj = value as Record<string, unknown>;
  if (!allowUnknown) {
    for (const key of Object.keys(obj)) {
      if (!Object.hasOwn(schema, key)) {
        const near = nearest(key, Object.keys(schema));
        throw new SpecError(
          'E_SPEC_UNKNOWN',
          `${where}: unknown field '${join(path, key)}'${near ? ` (did you mean '${near}'?)` : ''}`,
          `allowed in ${at}: ${Object.keys(schema).join(', ')}`,
        );
      }
    }
  }
  for (const [key, field] of Object.entries(schema)) {
    const v = obj[key];
    const name = join(path, key);
    if (v === undefined) {
      if (field.required) {
        throw new SpecError('E_SPEC_REQUIRED', `${where}: ${name} is required`, `add "${key}" to ${at}`);
      }
      continue;
    }
    checkField(v, field, where, name);
  }
  return { ...obj };
}

function checkField(v: unknown, field: Field, where: string, name: string): void {
  switch (field.kind) {
    case 'string':
      if (typeof v !== 'string') fail(where, name, 'a string', v);
      if (field.values && !field.values.includes(v as string)) {
        const near = nearest(String(v), field.values);
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: ${name} is '${String(v)}', which is not one of: ${field.values.map(show).join(', ')}${
            near ? ` (did you mean '${near}'?)` : ''
          }`,
          `set ${name} to one of the allowed values`,
        );
      }
      return;
    case 'number': {
      const what = `${field.integer ? 'an integer' : 'a number'} in [${field.min}, ${field.max}]`;
      if (typeof v !== 'number' || !Number.isFinite(v)) fail(where, name, what, v);
      const n = v as number;
      if ((field.integer && !Number.isInteger(n)) || n < field.min || n > field.max) {
        throw new SpecError('E_SPEC_RANGE', `${where}: ${name} must be ${what} (got ${n})`, `change ${name}`);
      }
      return;
    }
    case 'object':
      if (typeof v !== 'object' || v === null || Array.isArray(v)) fail(where, name, 'an object', v);
      return;
    case 'array':
      if (!Array.isArray(v)) fail(where, name, 'a list', v);
      return;
    case 'boolean':
      if (typeof v !== 'boolean') fail(where, name, 'true or false', v);
      return;
    case 'any':
      return;
  }
}

function fail(where: string, name: string, expected: string, got: unknown): never {
  throw new SpecError(
    'E_SPEC_TYPE',
    `${where}: ${name} must be ${expected} (got ${describe(got)})`,
    `change ${name}`,
  );
}

function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `'${v.length > 40 ? `${v.slice(0, 40)}…` : v}'`;
  if (typeof v === 'object') return 'an object';
  return String(v);
}

function hintFor(schema: ObjectSchema): string {
  return `expected fields: ${Object.keys(schema).join(', ')}`;
}

function show(s: string): string {
  return s === '\t' ? '\\t' : s;
}

function join(path: string, key: string): string {
  return path === '' ? key : `${path}.${key}`;
}

/** The candidate within edit distance 2 of `word`, if any: catches typos like `maxSupression`. */
export function nearest(word: string, candidates: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = 3;
  for (const c of candidates) {
    const d = editDistance(word.toLowerCase(), c.toLowerCase());
    if (d < bestDistance) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}

function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length]!;
}
