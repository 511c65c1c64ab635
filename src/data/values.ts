/**
 * The text of dates, timestamps and decimals, the same whichever reader (Arrow or Parquet) reads
 * them, so that the same table as CSV with these texts releases the same bytes (see
 * docs/release-spec.md, "Input files").
 */
import { InputError } from '../errors.ts';
import { shownName } from '../util/limits.ts';

/** A timestamp's unit: ticks per second 1, 10³, 10⁶ or 10⁹. */
export type TimeUnit = 'SECONDS' | 'MILLIS' | 'MICROS' | 'NANOS';

const TICKS_PER_SECOND: Record<TimeUnit, bigint> = {
  SECONDS: 1n,
  MILLIS: 1000n,
  MICROS: 1_000_000n,
  NANOS: 1_000_000_000n,
};

/** The furthest a date or time lies from 1970-01-01, in days: a JavaScript date's range (±8.64e15 ms). */
const MAX_DAYS = 100_000_000;

/**
 * A stored date or time outside the range ppdp writes (MAX_DAYS): a reader turns it into
 * dateRangeError, naming its file, column and row.
 */
export class TimeOutOfRange extends Error {}

/** The error for a date or time outside MAX_DAYS, by its place (`row` 0-based), never its value. */
export function dateRangeError(file: string, column: string, row: number): InputError {
  return new InputError(
    'E_INPUT_DATE_RANGE',
    `${file} column "${shownName(column)}" row ${row + 1}: the date or time lies outside the years ppdp can write (271,821 BC to AD 275,760)`,
    'such a value (the largest integer, a far-off date) usually stands for "unknown": write it as a null ' +
      '(with "format": { "emptyCells": "value" } a release keeps it as the missing value), or correct it, before release',
  );
}

/** Days since 1970-01-01 as `YYYY-MM-DD` (ISO 8601's `+YYYYYY-MM-DD` or `-YYYYYY-MM-DD` outside years 0 to 9999). */
export function formatDate(days: number): string {
  if (!(Math.abs(days) <= MAX_DAYS)) throw new TimeOutOfRange();
  const iso = new Date(days * 86_400_000).toISOString();
  return iso.slice(0, iso.indexOf('T'));
}

/** The day (since 1970-01-01) of a time in milliseconds since then: an Arrow Date64's day. */
export function dayOf(millis: bigint): number {
  const day = 86_400_000n;
  const q = millis / day;
  return Number(millis % day < 0n ? q - 1n : q);
}

const MAX_SECONDS = BigInt(MAX_DAYS) * 86_400n;

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
  if (seconds > MAX_SECONDS || seconds < -MAX_SECONDS) throw new TimeOutOfRange();
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
