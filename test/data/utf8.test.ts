import { makeData, makeVector, Utf8, vectorFromArray } from 'apache-arrow';
import { describe, expect, it } from 'vitest';
import { utf8Buffers, utf8Values, utf8Vector, utf8VectorValues } from '../../src/data/utf8.ts';
import { Random } from '../../src/util/random.ts';

/** The value-by-value encoding the bulk one replaces. */
function reference(values: string[]): { offsets: Int32Array; bytes: Uint8Array } {
  const encoder = new TextEncoder();
  const encoded = values.map((v) => encoder.encode(v));
  const offsets = new Int32Array(values.length + 1);
  let total = 0;
  for (let j = 0; j < encoded.length; j++) {
    total += encoded[j]!.length;
    offsets[j + 1] = total;
  }
  const bytes = new Uint8Array(total);
  for (let j = 0; j < encoded.length; j++) bytes.set(encoded[j]!, offsets[j]!);
  return { offsets, bytes };
}

const random = new Random(35);
const ascii = Array.from({ length: 5000 }, (_, i) => `note #${i} ${random.below(1e6).toString(36)}`);
const CASES: Record<string, string[]> = {
  empty: [],
  'one empty value': [''],
  ascii,
  'ascii with empties and control bytes': ['', 'a', '\t"x"\n', '', '\u007f'],
  latin: ['café', 'naïve', 'Zürich', 'a'],
  'astral and CJK': ['😀', '日本', 'x😀y', ''],
  'lone surrogates': ['\ud800', 'a\udc00', '\ud83d', '\ude00'],
  mixed: [...ascii.slice(0, 100), 'é', ...ascii.slice(100, 200)],
};

describe('bulk Utf8 vectors', () => {
  for (const [name, values] of Object.entries(CASES)) {
    it(`encodes ${name} as TextEncoder does, value by value`, () => {
      const got = utf8Buffers(values);
      const want = reference(values);
      expect(Array.from(got.offsets)).toEqual(Array.from(want.offsets));
      expect(Buffer.from(got.bytes).equals(Buffer.from(want.bytes))).toBe(true);
    });

    it(`decodes ${name} as toArray() does`, () => {
      const vector = utf8Vector(values);
      const want = vectorFromArray(values, new Utf8()).toArray();
      expect(utf8VectorValues(vector)).toEqual(Array.from(want));
      expect(utf8Values(vector.data[0]!)).toEqual(Array.from(want));
    });
  }

  it('decodes a slice whose offsets do not start at 0', () => {
    const { offsets, bytes } = utf8Buffers(['skip', 'ab', 'cde', '']);
    const data = makeData({ type: new Utf8(), length: 4, nullCount: 0, valueOffsets: offsets, data: bytes });
    const sliced = data.slice(1, 2); // (offset, length)
    expect(utf8Values(sliced)).toEqual(makeVector(sliced).toArray());
    expect(utf8Values(sliced)).toEqual(['ab', 'cde']);
  });
});
