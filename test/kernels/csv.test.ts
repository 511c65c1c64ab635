/**
 * The CSV row writers: the WASM kernel (assembly/csv.ts) and the plain-TS reference write the
 * same bytes as each other and as a line-by-line formatting, in chunks of any size (rows whole,
 * split in blocks and windows of the kernel's memory), for cells of every length.
 */
import { describe, expect, it } from 'vitest';
import { encodeCsvChunks } from '../../src/data/csv.ts';
import type { OutputColumn } from '../../src/data/table.ts';
import type { CsvRowsKernel } from '../../src/kernels/csv/kernel.ts';
import { tsCsvKernel } from '../../src/kernels/csv/reference.ts';
import { wasmCsvKernel } from '../../src/kernels/csv/wasm.ts';
import { Random } from '../../src/util/random.ts';

const KERNELS: CsvRowsKernel[] = [tsCsvKernel, wasmCsvKernel];

/** Columns of `rows` rows; values of 0 to 40 bytes, some multi-byte, some needing quotes. */
function columns(rows: number, seed: number): OutputColumn[] {
  const random = new Random(seed);
  const text = () => {
    const pieces = ['a', 'é', '€', '𝄞', ',', '"', ' ', 'x'];
    return Array.from({ length: random.below(12) }, () => pieces[random.below(pieces.length)]).join('');
  };
  return [3, 1, 200, 17, 70_000].map((size, c) => {
    const dictionary = Array.from(
      { length: Math.min(size, rows + 1) },
      (_, k) => `${k % 3 === 0 ? '' : text()}${k}`,
    );
    const codes = Int32Array.from({ length: rows }, () => random.below(dictionary.length));
    return { name: `c${c}`, kind: 'dictionary', dictionary, codes };
  });
}

/** The same rows formatted line by line, as the reader expects them. */
function lines(cols: OutputColumn[], rows: number): string {
  const field = (s: string) => (/[,"\n\r]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);
  const out = [cols.map((c) => c.name).join(',')];
  for (let r = 0; r < rows; r++)
    out.push(cols.map((c) => (c.kind === 'dictionary' ? field(c.dictionary[c.codes[r]!]!) : '')).join(','));
  return `${out.join('\n')}\n`;
}

describe('CSV row writers', () => {
  it.each([
    [0, 1],
    [1, 2],
    [1000, 3],
    [150_000, 4],
  ])('write the same bytes in any chunks (%i rows)', (rows, seed) => {
    const cols = columns(rows, seed);
    const expected = Buffer.from(lines(cols, rows), 'utf8');
    for (const kernel of KERNELS) {
      for (const chunkBytes of [1, 97, 64 * 1024, 5 * 1024 * 1024, Number.POSITIVE_INFINITY]) {
        if (rows > 1000 && chunkBytes < 64 * 1024) continue;
        const chunks = encodeCsvChunks(cols, ',', {}, chunkBytes, kernel);
        expect(Buffer.concat(chunks).equals(expected), `${kernel.name}, chunks of ${chunkBytes}`).toBe(true);
        // Whole rows in each chunk.
        for (const chunk of chunks.slice(0, -1)) expect(chunk[chunk.length - 1], kernel.name).toBe(10);
      }
    }
  });
});
