/**
 * The CSV row writers: the WASM kernel (assembly/csv.ts) and the plain-TS reference write the
 * same bytes as each other and as a line-by-line formatting, in chunks of any size (rows whole,
 * split in blocks and windows of the kernel's memory), for cells of every length.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { encodeCsvChunks, formatCsv, readCsv } from '../../src/data/csv.ts';
import type { OutputColumn } from '../../src/data/table.ts';
import { utf8Buffers } from '../../src/data/utf8.ts';
import type { CsvRowsKernel } from '../../src/kernels/csv/kernel.ts';
import {
  type CsvMatchKernel,
  type ExpectedCells,
  tsCsvMatchKernel,
  wasmCsvMatchKernel,
} from '../../src/kernels/csv/match.ts';
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

describe('CSV rows of blank cells', () => {
  /** Values as bytes (a column released unchanged). */
  const raw = (values: string[]) => {
    const bytes = values.map((v) => Buffer.from(v, 'utf8'));
    const offsets = new Int32Array(values.length + 1);
    bytes.forEach((b, r) => {
      offsets[r + 1] = offsets[r]! + b.length;
    });
    return { offsets, bytes: new Uint8Array(Buffer.concat(bytes)) };
  };

  it('quote their first cell, in both writers, so that they read back as rows even at the end', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ppdp-blank-rows-'));
    try {
      const tables: OutputColumn[][] = [
        [
          { name: 'a', kind: 'dictionary', dictionary: ['x', '', ' '], codes: Int32Array.of(0, 1, 2, 1) },
          { name: 'b', kind: 'dictionary', dictionary: ['', 'y', '\t'], codes: Int32Array.of(0, 0, 2, 0) },
        ],
        [
          { name: 'n', kind: 'number', values: Float64Array.of(1, Number.NaN, Number.NaN) },
          { name: 'v', kind: 'utf8', values: raw(['', '', 'z']) },
        ],
        [
          { name: 'v', kind: 'utf8', values: raw(['', ' ', 'q', '']) },
          { name: 'w', kind: 'utf8', values: raw(['', '', '', 'r']) },
        ],
        [{ name: 'v', kind: 'utf8', values: raw([' ', 'x', '', ' ']) }],
      ];
      const cell = (c: OutputColumn, r: number) =>
        c.kind === 'dictionary'
          ? c.dictionary[c.codes[r]!]!
          : c.kind === 'number'
            ? Number.isNaN(c.values[r]!)
              ? ''
              : String(c.values[r])
            : Buffer.from(c.values.bytes.subarray(c.values.offsets[r]!, c.values.offsets[r + 1]!)).toString();
      for (const [t, columns] of tables.entries()) {
        const rows = Array.from({ length: columns[0]!.kind === 'number' ? 3 : 4 }, (_, r) =>
          columns.map((c) => cell(c, r)),
        );
        for (const delimiter of [';', '\t', '§'])
          for (const escapeFormulas of [false, true]) {
            const [ts, wasm] = KERNELS.map((kernel) =>
              Buffer.concat(encodeCsvChunks(columns, delimiter, { escapeFormulas }, 16, kernel)),
            );
            expect(wasm!.equals(ts!), `table ${t}`).toBe(true);
            const path = join(dir, `t${t}.csv`);
            writeFileSync(path, ts!);
            const back = readCsv(path, { delimiter });
            const read = (c: (typeof back.columns)[number]) =>
              Array.from(c.codes, (k) => c.dictionary[k]!).map((v) =>
                escapeFormulas ? v.replace(/^'/, '') : v,
              );
            expect(
              Array.from({ length: back.rowCount }, (_, r) => back.columns.map((c) => read(c)[r]!)),
              `table ${t}, ${JSON.stringify(delimiter)}`,
            ).toEqual(rows);
          }
      }
      // The first cell of such a row alone is quoted; others are as they were.
      expect(formatCsv(tables[0]!, ';')).toBe('a;b\nx;\n"";\n" ";\t\n"";\n');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('CSV row writers, a column of values', () => {
  it('quote a value for a special byte at any place, its last word too, and for nothing past it', () => {
    // Values of 0 to 24 bytes with a quote, CR, LF or the delimiter at each place, or none;
    // each followed by a value that starts with one (read past a value, it must not count).
    const values: string[] = [];
    for (let length = 0; length <= 24; length++) {
      values.push('x'.repeat(length), ',next');
      for (let at = 0; at < length; at++)
        for (const special of [',', '"', '\r', '\n'])
          values.push(`${'y'.repeat(at)}${special}${'y'.repeat(length - at - 1)}`, '"next');
    }
    const cols: OutputColumn[] = [
      { name: 'v', kind: 'utf8', values: utf8Buffers(values) },
      { name: 'w', kind: 'dictionary', dictionary: ['z'], codes: new Int32Array(values.length) },
    ];
    const field = (v: string) => (/[,"\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v);
    const expected = `v,w\n${values.map((v) => `${field(v)},z\n`).join('')}`;
    for (const kernel of KERNELS)
      expect(
        Buffer.concat(encodeCsvChunks(cols, ',', {}, Number.POSITIVE_INFINITY, kernel)).toString(),
        kernel.name,
      ).toBe(expected);
  });
});

describe('CSV row matchers', () => {
  const MATCHERS: CsvMatchKernel[] = [tsCsvMatchKernel, wasmCsvMatchKernel];
  /**
   * Both matchers stop at the same row and byte over `bytes`: from the start, and from a later
   * row, with the bytes cut at each of `cuts`.
   */
  const expectSameStops = (cells: () => ExpectedCells[], rows: number, bytes: Uint8Array, cuts: number[]) => {
    const answers = MATCHERS.map((kernel) => {
      const matcher = kernel.open(cells(), rows);
      try {
        return cuts.map((filled) => {
          matcher.load(bytes, filled);
          const first = matcher.match(0, 0);
          return [first, first.row > 2 ? matcher.match(first.pos, first.row) : first];
        });
      } finally {
        matcher.close();
      }
    });
    expect(answers[1]).toEqual(answers[0]);
  };
  /** Expected cells of `cols` (value and `,` or `\n`), values with a `,` or `"` not compared. */
  const expected = (cols: OutputColumn[]): ExpectedCells[] =>
    cols.map((c, i) => {
      const dictionary = c.kind === 'dictionary' ? c.dictionary : [];
      const after = i + 1 < cols.length ? ',' : '\n';
      const cells = dictionary.map((v) => Buffer.from(v + after));
      const lengths = Int32Array.from(dictionary, (v, k) => (/[,"]/.test(v) ? -1 : cells[k]!.length));
      const starts = new Int32Array(cells.length);
      let end = 0;
      cells.forEach((cell, k) => {
        starts[k] = end;
        end += (cell.length + 7) & ~7;
      });
      const bytes = new Uint8Array(end);
      cells.forEach((cell, k) => {
        bytes.set(cell, starts[k]!);
      });
      return { bytes, starts, lengths, codes: (c as OutputColumn & { kind: 'dictionary' }).codes };
    });

  it('stop at the same row and byte: a changed byte, a quoted value, the end of the bytes', () => {
    const rows = 70_000;
    // Few values that need quotes (one in 500 of a column's): long runs of rows in the exact form.
    const cols = columns(rows, 9).map((c) =>
      c.kind === 'dictionary'
        ? {
            ...c,
            dictionary: c.dictionary.map((v, k) => (k % 500 === 499 ? `${v},` : v.replace(/[,"]/g, ''))),
          }
        : c,
    );
    const file = Buffer.from(lines(cols, rows), 'utf8');
    const body = file.subarray(file.indexOf(10) + 1);
    const random = new Random(11);
    const cases = [
      body,
      ...Array.from({ length: 6 }, () => {
        const changed = Buffer.from(body);
        changed[random.below(changed.length)] ^= 0x20;
        return changed;
      }),
    ];
    for (const bytes of cases) expectSameStops(() => expected(cols), rows, bytes, [bytes.length, 5000, 77]);
    // The honest bytes: every row up to the first value that would need quotes.
    const matcher = tsCsvMatchKernel.open(expected(cols), rows);
    matcher.load(body, body.length);
    const { row } = matcher.match(0, 0);
    const quoted = (r: number) =>
      cols.some((c) => c.kind === 'dictionary' && /[,"]/.test(c.dictionary[c.codes[r]!]!));
    let first = 0;
    while (first < rows && !quoted(first)) first++;
    expect(row).toBe(first);
    expect(first).toBeGreaterThan(1000);
  });

  it('compare columns of values quoted or not: the same row and byte, each field however it is quoted', () => {
    const rows = 20_000;
    const random = new Random(23);
    const pieces = ['a', 'é', '𝄞', ';', ',', '"', '\r', '\n', ' ', 'x', '0123456789'];
    const value = () =>
      Array.from({ length: random.below(14) }, () => pieces[random.below(pieces.length)]).join('');
    const values = [0, 1].map(() => Array.from({ length: rows }, value));
    // A value quoted when it must be, as a writer quotes it (else, one in ten, quoted anyway).
    const field = (v: string) =>
      /[;"\r\n]/.test(v) || random.below(10) === 0 ? `"${v.replaceAll('"', '""')}"` : v;
    const lines = Array.from(
      { length: rows },
      (_, r) => `${field(values[0]![r]!)};${field(values[1]![r]!)}\n`,
    );
    const body = Buffer.from(lines.join(''), 'utf8');
    const expected = (): ExpectedCells[] =>
      values.flatMap((column, c) => {
        const parts = column.map((v) => Buffer.from(v, 'utf8'));
        const starts = new Int32Array(rows + 1);
        parts.forEach((part, r) => {
          starts[r + 1] = starts[r]! + part.length;
        });
        const after = Buffer.alloc(8);
        after.write(c === 0 ? ';' : '\n');
        return [
          {
            bytes: Buffer.concat(parts),
            starts,
            lengths: new Int32Array(0),
            codes: Int32Array.from(parts.keys()),
            values: 0x3b,
          },
          { bytes: after, starts: Int32Array.of(0), lengths: Int32Array.of(1), codes: new Int32Array(rows) },
        ];
      });
    // Any valid quoting is matched: every row of the honest bytes.
    for (const kernel of MATCHERS) {
      const matcher = kernel.open(expected(), rows);
      matcher.load(body, body.length);
      expect(matcher.match(0, 0), kernel.name).toEqual({ row: rows, pos: body.length });
      matcher.close();
    }
    const text = body.toString('latin1');
    const unquoted = text.replace(/"([^"\r\n;]*)"/, '$1'); // a value quoted for no need, unquoted: still valid
    const cases = [
      body,
      Buffer.from(unquoted, 'latin1'),
      // A value that needs quotes, written without them; a quote left single; a closing quote gone.
      Buffer.from(text.replace(/"([^"]*;[^"]*)"/, '$1'), 'latin1'),
      Buffer.from(text.replace('""', '"'), 'latin1'),
      Buffer.from(text.replace(/"\n/, '\n'), 'latin1'),
      ...Array.from({ length: 8 }, () => {
        const changed = Buffer.from(body);
        changed[random.below(changed.length)] ^= 0x20;
        return changed;
      }),
    ];
    for (const bytes of cases) expectSameStops(expected, rows, bytes, [bytes.length, 4099, 61]);
    // A value that must be quoted stops the matcher where it is not (the reader takes that row).
    const first = values[0]!.findIndex((v) => v.includes(';'));
    const bare = Buffer.from(
      lines.map((line, r) => (r === first ? `${values[0]![r]!};${field(values[1]![r]!)}\n` : line)).join(''),
      'utf8',
    );
    for (const kernel of MATCHERS) {
      const matcher = kernel.open(expected(), rows);
      matcher.load(bare, bare.length);
      expect(matcher.match(0, 0).row, kernel.name).toBe(first);
      matcher.close();
    }
  });
});
