/**
 * What counts as a number in a cell: one rule for the spec's defaults, the readers, the models,
 * the methods, the report and the verifier, so that none of them disagrees with another.
 */

/**
 * A value a numeric attribute may hold: a finite number as written (not the missing value).
 * What `Number` reads: spaces around it, a sign, exponents, `0x`/`0o`/`0b`; not `Infinity`.
 */
export function isNumber(value: string): boolean {
  return value.trim() !== '' && Number.isFinite(Number(value));
}

/**
 * Whether values hold numbers only (`isNumber`: a missing value is none), and at least one:
 * the rule for "numeric" where the scale does not decide (t-closeness's default distance and
 * its ordered walk, the builder's and the verifier's alike; the report's measures).
 */
export function allNumbers(values: readonly string[]): boolean {
  return values.length > 0 && values.every(isNumber);
}
