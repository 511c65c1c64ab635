/**
 * Exact decimal arithmetic for interval hierarchies: a number as a whole count of units of
 * 10^-scale (a BigInt), read from its decimal text rather than from a float, so that `0.3`
 * with width `0.05` is 6 units of 0.05 (a float division makes it 5.999…) and labels print as
 * the spec writes its decimals (`0.3`, never `0.30000000000000004`).
 */

/** A decimal number's text as Number() reads it (blanks around, `+`, `.5`, `5.`, exponents). */
const DECIMAL = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/;

/** How many decimals the shortest text of `n` has: `0.05` → 2, `20` → 0, `1e-7` → 7. */
export function decimalsOf(n: number): number {
  const m = DECIMAL.exec(String(n))!;
  return Math.max(0, (m[3] ?? '').length - Number(m[4] ?? 0));
}

/**
 * `text` (a finite number, as Number() reads it) rounded down to a multiple of 10^-scale, in
 * those units: `'0.31'` at scale 2 → 31n, `'-0.315'` → -32n. Undefined when it is not a finite
 * number. A text Number() reads but that is not a decimal (`0x1F`) is taken as its number.
 */
export function unitsAtOrBelow(text: string, scale: number): bigint | undefined {
  const n = Number(text);
  if (!Number.isFinite(n)) return undefined;
  const m = DECIMAL.exec(text.trim()) ?? DECIMAL.exec(String(n))!;
  const [, sign, whole = '', fraction = '', exponent = '0'] = m;
  const digits = (whole + fraction).replace(/^0+/, '');
  // The units are the digits before this position; those after only tell whether to round down.
  const cut = digits.length - fraction.length + Number(exponent) + scale;
  const kept =
    cut <= 0 ? '' : cut >= digits.length ? digits + '0'.repeat(cut - digits.length) : digits.slice(0, cut);
  const dropped = cut <= 0 ? digits : cut >= digits.length ? '' : digits.slice(cut);
  const units = BigInt(kept || '0');
  if (sign !== '-') return units;
  return /[1-9]/.test(dropped) ? -units - 1n : -units;
}

/** Units of 10^-scale as a decimal, without trailing zeros: (25n, 2) → `0.25`, (300n, 1) → `30`. */
export function formatUnits(units: bigint, scale: number): string {
  if (scale === 0) return units.toString();
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const fraction = digits.slice(-scale).replace(/0+$/, '');
  const text = digits.slice(0, -scale) + (fraction ? `.${fraction}` : '');
  return negative ? `-${text}` : text;
}

/** The largest number of decimals among `numbers`: the scale at which they are all whole. */
export function commonScale(numbers: readonly (number | undefined)[]): number {
  let scale = 0;
  for (const n of numbers) if (n !== undefined) scale = Math.max(scale, decimalsOf(n));
  return scale;
}

/** Whether `w` is a whole multiple of `of` in decimal terms (`0.3` of `0.1`, which `%` on floats denies). */
export function isDecimalMultiple(w: number, of: number): boolean {
  const scale = commonScale([w, of]);
  const a = unitsAtOrBelow(String(w), scale)!;
  const b = unitsAtOrBelow(String(of), scale)!;
  return b !== 0n && a % b === 0n;
}
