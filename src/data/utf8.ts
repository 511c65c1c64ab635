/**
 * Arrow Utf8 vectors to and from JS strings in bulk. A dictionary of a column that rides along
 * (a free-text note, one distinct value per row) holds as many values as rows: Arrow's builder
 * (`vectorFromArray`) takes microseconds a value and its `toArray()` decodes value by value,
 * so both go through one buffer here. Values all in ASCII (the usual case) are encoded and
 * decoded as one string; any other dictionary value by value, with the bytes TextEncoder gives.
 */
import { isAscii, isUtf8 } from 'node:buffer';
import { type Data, makeData, makeVector, Utf8, type Vector } from 'apache-arrow';
import { InputError } from '../errors.ts';
import { shownName } from '../util/limits.ts';

/** A Utf8 vector of `values` with no null bitmap: one buffer of all entries and their offsets. */
export function utf8Vector(values: readonly string[]): Vector<Utf8> {
  const { offsets, bytes } = utf8Buffers(values);
  return makeVector(
    makeData({ type: new Utf8(), length: values.length, nullCount: 0, valueOffsets: offsets, data: bytes }),
  );
}

/** The UTF-8 bytes of `values` one after another and where each starts (n + 1 offsets). */
export function utf8Buffers(values: readonly string[]): { offsets: Int32Array; bytes: Uint8Array } {
  const n = values.length;
  const offsets = new Int32Array(n + 1);
  let chars = 0;
  for (let j = 0; j < n; j++) {
    chars += values[j]!.length;
    offsets[j + 1] = chars;
  }
  // Joined, as one string: its bytes are the values' bytes one after another when every
  // character is ASCII (one byte each: then the byte count equals the character count).
  if (chars < 2 ** 28) {
    const joined = Buffer.from(values.join(''), 'utf8');
    if (joined.length === chars)
      return { offsets, bytes: new Uint8Array(joined.buffer, joined.byteOffset, chars) };
  }
  const encoder = new TextEncoder();
  const encoded = values.map((v) => encoder.encode(v));
  let total = 0;
  for (let j = 0; j < n; j++) {
    total += encoded[j]!.length;
    offsets[j + 1] = total;
  }
  const bytes = new Uint8Array(total);
  for (let j = 0; j < n; j++) bytes.set(encoded[j]!, offsets[j]!);
  return { offsets, bytes };
}

/** The strings of a Utf8 Data with no nulls (as ppdp writes dictionaries), as `toArray()` gives them. */
export function utf8Values(data: Data<Utf8>): string[] {
  const n = data.length;
  const offsets = data.valueOffsets;
  const bytes = data.values;
  const first = offsets[0]!;
  const end = offsets[n]!;
  const out = new Array<string>(n);
  if (data.nullCount === 0 && end - first < 2 ** 28) {
    const buffer = Buffer.from(bytes.buffer, bytes.byteOffset + first, end - first);
    // latin1 maps each byte to one character: equal to the UTF-8 reading when every byte is ASCII.
    if (isAscii(buffer)) {
      const joined = buffer.toString('latin1');
      for (let j = 0; j < n; j++) out[j] = joined.slice(offsets[j]! - first, offsets[j + 1]! - first);
      return out;
    }
  }
  const decoded = (makeVector(data) as Vector<Utf8>).toArray() as unknown as string[];
  for (let j = 0; j < n; j++) out[j] = decoded[j]!;
  return out;
}

/** The strings of a Utf8 vector (a dictionary), chunk by chunk: `toArray()`'s values. */
export function utf8VectorValues(vector: Vector<Utf8>): string[] {
  if (vector.data.length === 1) return utf8Values(vector.data[0]!);
  return vector.data.flatMap((d) => utf8Values(d));
}

/** Row i's bytes are `bytes[offsets[i], offsets[i + 1])` (Arrow's Utf8 and LargeUtf8 layout). */
type Offsets = ArrayLike<number | bigint>;

/**
 * Whether every one of rows [0, n) is valid UTF-8, checked at once: their bytes validated as
 * one run (isUtf8: simdutf, gigabytes a second) and each row starting on a character's first
 * byte (a run can be valid with a character split between two rows). A column of millions of
 * rows riding along costs a pass over its bytes.
 */
export function utf8Rows(bytes: Uint8Array, offsets: Offsets, n: number): boolean {
  if (n === 0) return true;
  const from = Number(offsets[0]);
  const to = Number(offsets[n]);
  if (!isUtf8(bytes.subarray(from, to))) return false;
  for (let i = 1; i < n; i++) {
    const at = Number(offsets[i]);
    if (at < to && (bytes[at]! & 0xc0) === 0x80) return false;
  }
  return true;
}

/**
 * The first of rows [from, n) that is not valid UTF-8 (-1: none), rows `skip` says (nulls, whose
 * bytes mean nothing) passed over: row by row, for when utf8Rows says no.
 */
export function invalidUtf8Row(
  bytes: Uint8Array,
  offsets: Offsets,
  n: number,
  from = 0,
  skip?: (i: number) => boolean,
): number {
  for (let i = from; i < n; i++) {
    if (skip?.(i)) continue;
    if (!isUtf8(bytes.subarray(Number(offsets[i]), Number(offsets[i + 1])))) return i;
  }
  return -1;
}

/** The first row of [0, n) not valid UTF-8 (-1: none): utf8Rows, then invalidUtf8Row when it says no. */
export function firstInvalidUtf8Row(
  bytes: Uint8Array,
  offsets: Offsets,
  n: number,
  skip?: (i: number) => boolean,
): number {
  return utf8Rows(bytes, offsets, n) ? -1 : invalidUtf8Row(bytes, offsets, n, 0, skip);
}

/**
 * A text value of an Arrow or Parquet file that is not UTF-8 (Latin-1 bytes in a string or
 * unannotated binary column), named by file, column and 0-based `row`, never by its bytes.
 */
export function textEncodingError(file: string, column: string, row: number): InputError {
  return new InputError(
    'E_INPUT_ENCODING',
    `${file} column "${shownName(column)}" row ${row + 1}: bytes that are not valid UTF-8 text`,
    'write the column as UTF-8 text, decoded from the encoding it is in, e.g. Latin-1 bytes in pandas ' +
      '`df[col] = df[col].str.decode("latin-1")`, then write the file again',
  );
}
