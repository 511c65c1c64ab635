/**
 * The text of dates, timestamps and decimals, the same whichever reader (Arrow or Parquet) reads
 * them, so that the same table as CSV with these texts releases the same bytes (see
 * docs/release-spec.md, "Input files").
 */

/** A timestamp's unit: ticks per second 1, 10³, 10⁶ or 10⁹. */
export type TimeUnit = 'SECONDS' | 'MILLIS' | 'MICROS' | 'NANOS';

const TICKS_PER_SECOND: Record<TimeUnit, bigint> = {
  SECONDS: 1n,
  MILLIS: 1000n,
  MICROS: 1_000_000n,
  NANOS: 1_000_000_000n,
};

/** Days since 1970-01-01 as `YYYY-MM-DD`. */
export function formatDate(days: number): string {
  const iso = new Date(days * 86_400_000).toISOString();
  return iso.slice(0, iso.indexOf('T'));
}

/** The day (since 1970-01-01) of a time in milliseconds since then: an Arrow Date64's day. */
export function dayOf(millis: bigint): number {
  const day = 86_400_000n;
  const q = millis / day;
  return Number(millis % day < 0n ? q - 1n : q);
}

/**
 * Ticks since 1970-01-01T00:00:00 as ISO 8601 `YYYY-MM-DDTHH:MM:SS`, then the fraction of a
 * second without trailing zeros (none when whole), then `Z` when the time is in UTC.
 */
export function formatTimestamp(ticks: bigint, unit: TimeUnit, utc: boolean): string {
  const per = TICKS_PER_SECOND[unit];
  let seconds = ticks / per;
  let fraction = ticks % per;
  if (fraction < 0n) {
    fraction += per;
    seconds -= 1n;
  }
  const iso = new Date(Number(seconds) * 1000).toISOString();
  const digits = String(per).length - 1;
  const frac = fraction === 0n ? '' : `.${fraction.toString().padStart(digits, '0').replace(/0+$/, '')}`;
  return `${iso.slice(0, iso.indexOf('.'))}${frac}${utc ? 'Z' : ''}`;
}

/**
 * A decimal's exact text from its unscaled integer and scale: `scale` digits after the point
 * (trailing zeros kept, as the column declares them: 3.50 at scale 2), a leading `0` before
 * the point, `-` when negative; a negative scale appends zeros.
 */
export function formatDecimal(unscaled: bigint, scale: number): string {
  if (scale <= 0) return (unscaled * 10n ** BigInt(-scale)).toString();
  const negative = unscaled < 0n;
  const digits = (negative ? -unscaled : unscaled).toString().padStart(scale + 1, '0');
  const text = `${digits.slice(0, -scale)}.${digits.slice(-scale)}`;
  return negative ? `-${text}` : text;
}

/** A two's-complement little-endian integer of `bytes.length` bytes. */
export function signedLittleEndian(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let k = bytes.length - 1; k >= 0; k--) v = (v << 8n) | BigInt(bytes[k]!);
  const bits = BigInt(bytes.length * 8);
  return bytes.length > 0 && bytes[bytes.length - 1]! >= 0x80 ? v - (1n << bits) : v;
}

/** A two's-complement big-endian integer (Parquet's DECIMAL in bytes). */
export function signedBigEndian(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let k = 0; k < bytes.length; k++) v = (v << 8n) | BigInt(bytes[k]!);
  const bits = BigInt(bytes.length * 8);
  return bytes.length > 0 && bytes[0]! >= 0x80 ? v - (1n << bits) : v;
}
