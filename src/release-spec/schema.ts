/**
 * A tiny declarative schema for the release spec. Every error names the file, the field path,
 * what is allowed and what was found, and suggests the nearest known name for a typo.
 */

import { LimitError, SpecError } from '../errors.ts';
import { thousands } from '../util/format.ts';
import { MAX_INPUT_COLUMNS, MAX_NAME_LENGTH, shownName } from '../util/limits.ts';
import { nearest } from '../util/nearest.ts';

/** Words longer than this get no "did you mean" (edit distance costs their length times a candidate's). */
const NEAREST_MAX_LENGTH = 100;

export type Field = (
  | { kind: 'string'; values?: readonly string[] | undefined }
  | { kind: 'number'; min: number; max: number; integer: boolean; example?: number }
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
        const near = key.length <= NEAREST_MAX_LENGTH ? nearest(key, Object.keys(schema)) : undefined;
        const long = key.length > SHOWN_KEY ? ` (${thousands(key.length)} characters)` : '';
        throw new SpecError(
          'E_SPEC_UNKNOWN',
          `${where}: unknown field '${join(path, shownName(key))}'${long}${near ? ` (did you mean '${near}'?)` : ''}`,
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
        // `"\\t"` in the JSON (a backslash and a t) for the tab `"\t"`: both print as \t.
        const meant = field.values.find((allowed) => allowed !== show(allowed) && show(allowed) === v);
        if (meant !== undefined) {
          throw new SpecError(
            'E_SPEC_VALUE',
            `${where}: ${name} is ${JSON.stringify(v)} in the JSON, two characters (a backslash, then ${(v as string).slice(1)}), not the tab it reads like`,
            `write ${name} as ${JSON.stringify(meant)} in the JSON (one tab character)`,
          );
        }
        const near = String(v).length <= NEAREST_MAX_LENGTH ? nearest(String(v), field.values) : undefined;
        throw new SpecError(
          'E_SPEC_VALUE',
          `${where}: ${name} is '${shownName(String(v))}', which is not one of: ${field.values.map(show).join(', ')}${
            near ? ` (did you mean '${near}'?)` : ''
          }`,
          `set ${name} to one of the allowed values`,
        );
      }
      return;
    case 'number':
      checkNumber(v, field, where, name);
      return;
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
    `${where}: ${name} must be ${expected}, but found ${describe(got)}`,
    `write ${name} as ${expected}`,
  );
}

type NumberField = Extract<Field, { kind: 'number' }>;

/**
 * A number field: says what was found (a quoted number, a fraction, a value out of range), the
 * range in words, and a value to write instead.
 */
function checkNumber(v: unknown, field: NumberField, where: string, name: string): void {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : Number.NaN;
  const fraction = field.integer && !Number.isInteger(n);
  const below = n < field.min;
  const above = n > field.max;
  if (typeof v === 'number' && Number.isFinite(n) && !fraction && !below && !above) return;
  const key = name.slice(name.lastIndexOf('.') + 1);
  const write = (x: number) => `"${key}": ${x}`;
  const words = rangeWords(field, above);
  const quoted = typeof v === 'string' ? ' without quotes' : '';
  let hint: string;
  const near = [Math.floor(n), Math.ceil(n)].filter((x) => x >= field.min && x <= field.max);
  // "10%" for a share from 0 to 1 (maxSuppression): the share it means, 0.1.
  const percent = typeof v === 'string' ? /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(v) : null;
  const share = percent && field.max === 1 ? Number((Number(percent[1]) / 100).toPrecision(12)) : Number.NaN;
  if (share >= field.min && share <= field.max)
    hint = `write the share ${percent![0].trim()} as a number from 0 to 1 without quotes: ${write(share)}`;
  else if (!Number.isFinite(n)) hint = `write ${words}${quoted}, e.g. ${write(exampleOf(field))}`;
  else if (fraction && near.length > 0)
    hint = `round it to a whole number${quoted}: ${near.map(write).join(' or ')}`;
  else if (below || above || fraction)
    hint = `use ${words}${quoted}, e.g. ${write(below ? exampleOf(field) : field.max)}`;
  else hint = `write ${n} without quotes: ${write(n)}`;
  throw new SpecError(
    typeof v === 'number' ? 'E_SPEC_RANGE' : 'E_SPEC_TYPE',
    `${where}: ${name} must be ${words}, but found ${describe(v)}`,
    hint,
  );
}

/** The example a hint offers when the value itself cannot be fixed up (a field's own, else its lower end). */
function exampleOf(field: NumberField): number {
  return field.example ?? (field.min === Number.MIN_VALUE ? 1 : field.min);
}

/** `a whole number ≥ 1`, `a number from 0 to 1`, `a number > 0`: bounds of 10⁹ and more are sanity limits, named only when exceeded. */
function rangeWords(field: NumberField, aboveMax: boolean): string {
  const what = field.integer ? 'a whole number' : 'a number';
  const low = field.min === Number.MIN_VALUE ? '> 0' : `≥ ${field.min}`;
  if (field.max < 1e9) return `${what} from ${field.min} to ${field.max}`;
  return aboveMax ? `${what} ${low} and ≤ ${field.max}` : `${what} ${low}`;
}

/** What a spec value is, for "but found …": specs hold settings, never data. */
function describe(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'a list';
  if (typeof v === 'string') return `the string "${v.length > 40 ? `${v.slice(0, 40)}…` : v}"`;
  if (typeof v === 'object') return 'an object';
  return String(v);
}

/** Keys longer than this are echoed cut (shownName), with their length. */
const SHOWN_KEY = 200;

/**
 * Limits on a parsed spec as a whole, before any field is read: every key (a setting's name or
 * a column's, at any depth) at most MAX_NAME_LENGTH characters, and at most MAX_INPUT_COLUMNS
 * attributes. Names are echoed cut to their first 200 characters.
 * @throws LimitError E_LIMIT_NAME, E_LIMIT_COLUMNS.
 */
export function checkSpecLimits(json: unknown, where: string): void {
  const attributes = (json as { attributes?: unknown } | null)?.attributes;
  if (typeof attributes === 'object' && attributes !== null && !Array.isArray(attributes)) {
    const n = Object.keys(attributes).length;
    if (n > MAX_INPUT_COLUMNS) {
      throw new LimitError(
        'E_LIMIT_COLUMNS',
        `${where}: attributes lists ${thousands(n)} columns, over the limit of ${thousands(MAX_INPUT_COLUMNS)}`,
        `release at most ${thousands(MAX_INPUT_COLUMNS)} columns: drop the ones the release does not need from the input and the spec`,
      );
    }
  }
  const stack: [unknown, string][] = [[json, '']];
  for (let top = stack.pop(); top !== undefined; top = stack.pop()) {
    const [value, path] = top;
    if (Array.isArray(value)) {
      for (let i = value.length - 1; i >= 0; i--) stack.push([value[i], `${path}[${i}]`]);
    } else if (typeof value === 'object' && value !== null) {
      for (const [key, child] of Object.entries(value)) {
        if (key.length > MAX_NAME_LENGTH) {
          throw new LimitError(
            'E_LIMIT_NAME',
            `${where}: ${join(path, shownName(key))} (${thousands(key.length)} characters) is a name over the limit of ${thousands(MAX_NAME_LENGTH)} characters`,
            `shorten it to at most ${thousands(MAX_NAME_LENGTH)} characters (a column's name in the input too)`,
          );
        }
        stack.push([child, join(path, key)]);
      }
    }
  }
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
