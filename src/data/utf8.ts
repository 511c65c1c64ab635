/**
 * Arrow Utf8 vectors to and from JS strings in bulk. A dictionary of a column that rides along
 * (a free-text note, one distinct value per row) holds as many values as rows: Arrow's builder
 * (`vectorFromArray`) takes microseconds a value and its `toArray()` decodes value by value,
 * so both go through one buffer here. Values all in ASCII (the usual case) are encoded and
 * decoded as one string; any other dictionary value by value, with the bytes TextEncoder gives.
 */
import { isAscii } from 'node:buffer';
import { type Data, makeData, makeVector, Utf8, type Vector } from 'apache-arrow';

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
