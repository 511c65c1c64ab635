import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  encodeCsv,
  encodeCsvChunks,
  formatCsv,
  type ReadCsvOptions,
  readCsvShards,
  readCsv as readCsvWith,
} from '../../src/data/csv.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { readTable } from '../../src/data/read.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { InputError, OutputError } from '../../src/errors.ts';
import type { PlainRowsKernel } from '../../src/kernels/csv-fields/kernel.ts';
import { tsPlainRows } from '../../src/kernels/csv-fields/reference.ts';

/** How the suites below split plain rows (undefined: the reader's default, the WASM kernel). */
let plainRows: PlainRowsKernel | null | undefined;
const readCsv = (path: string, options: ReadCsvOptions = {}) =>
  readCsvWith(path, plainRows === undefined ? options : { ...options, plainRows });

const dir = mkdtempSync(join(tmpdir(), 'ppdp-csv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let n = 0;
function write(content: string | Uint8Array, name = `t${n++}.csv`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

/** Rows of decoded strings, header first. */
function decode(t: EncodedTable): string[][] {
  const rows = [t.columns.map((c) => c.name)];
  for (let r = 0; r < t.rowCount; r++) rows.push(t.columns.map((c) => c.dictionary[c.codes[r]!]!));
  return rows;
}

/** Runs `fn`, expects an InputError with `code`, and returns it. */
function inputError(fn: () => unknown, code: string): InputError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InputError);
    expect((err as InputError).code).toBe(code);
    return err as InputError;
  }
  throw new Error(`expected ${code}, nothing was thrown`);
}

function toOutput(t: EncodedTable): OutputColumn[] {
  return t.columns.map((c) => ({
    name: c.name,
    kind: 'dictionary',
    dictionary: c.dictionary,
    codes: c.codes,
  }));
}

describe('formatCsv', () => {
  it('quotes only fields that need it and formats numbers', () => {
    const cols: OutputColumn[] = [
      {
        name: 'a;b',
        kind: 'dictionary',
        dictionary: ['x', 'y;z', 'say "hi"', 'l1\nl2', 'c\r'],
        codes: Int32Array.from([0, 1, 2, 3, 4]),
      },
      { name: 'n', kind: 'number', values: Float64Array.from([1, 2.5, Number.NaN, -0, 1e21]) },
      { name: 'm', kind: 'number', values: Float64Array.from([0.1 + 0.2, -3, 1e-7, 123456789, 2 ** 70]) },
    ];
    expect(formatCsv(cols, ';')).toBe(
      '"a;b";n;m\n' +
        'x;1;0.30000000000000004\n' +
        '"y;z";2.5;-3\n' +
        '"say ""hi""";;1e-7\n' +
        '"l1\nl2";0;123456789\n' +
        '"c\r";1000000000000000000000;1180591620717411303424\n',
    );
  });

  it('encodeCsv gives the UTF-8 bytes of formatCsv', () => {
    const cols: OutputColumn[] = [
      { name: 'city', kind: 'dictionary', dictionary: ['Zürich', '𝄞;x'], codes: Int32Array.from([0, 1, 0]) },
      { name: 'n', kind: 'number', values: Float64Array.from([1, -2.5, Number.NaN]) },
    ];
    const text = formatCsv(cols, ';');
    expect(text).toBe('city;n\nZürich;1\n"𝄞;x";-2.5\nZürich;\n');
    expect(Buffer.from(encodeCsv(cols, ';')).toString('utf8')).toBe(text);
  });

  it('writes only the header for zero rows', () => {
    expect(formatCsv([{ name: 'a', kind: 'number', values: new Float64Array(0) }], ';')).toBe('a\n');
  });

  it('rejects columns of different lengths', () => {
    expect(() =>
      formatCsv(
        [
          { name: 'a', kind: 'number', values: new Float64Array(2) },
          { name: 'b', kind: 'number', values: new Float64Array(3) },
        ],
        ';',
      ),
    ).toThrow(OutputError);
  });

  it('quotes by the delimiter in use', () => {
    const cols: OutputColumn[] = [
      { name: 'a', kind: 'dictionary', dictionary: ['x;y', 'x,y'], codes: Int32Array.from([0, 1]) },
    ];
    expect(formatCsv(cols, ',')).toBe('a\nx;y\n"x,y"\n');
    expect(formatCsv(cols, '\t')).toBe('a\nx;y\nx,y\n');
  });

  it('round-trips through readCsv', () => {
    const text =
      'name;city;note\r\n"Smith; J.";Zürich;"he said ""no"""\r\nÅsa;"multi\nline";\r\n;x;" lead"\r\n"Smith; J.";Zürich;plain\r\n';
    for (const delim of [';', ',', '\t']) {
      const t = readCsv(write(text));
      const out = formatCsv(toOutput(t), delim);
      const back = readCsv(write(out), { delimiter: delim });
      expect(decode(back)).toEqual(decode(t));
      // Detection must agree where the header is unambiguous.
      if (delim === ';') expect(readCsv(write(out)).delimiter).toBe(';');
    }
  });

  it('round-trips a single column with empty values', () => {
    const cols: OutputColumn[] = [
      { name: 'v', kind: 'dictionary', dictionary: ['', 'a'], codes: Int32Array.from([1, 0, 1, 0]) },
    ];
    const text = formatCsv(cols, ';');
    expect(text).toBe('v\na\n""\na\n""\n');
    expect(decode(readCsv(write(text)))).toEqual([['v'], ['a'], [''], ['a'], ['']]);
    const nums: OutputColumn[] = [{ name: 'n', kind: 'number', values: Float64Array.from([1, Number.NaN]) }];
    expect(formatCsv(nums, ';')).toBe('n\n1\n""\n');
  });
});

describe('readTable', () => {
  it('reads CSV for non-Arrow extensions and passes the delimiter', () => {
    const t = readTable(write('a,b\n1,2\n', 'x.txt'), { delimiter: ',' });
    expect(decode(t)).toEqual([
      ['a', 'b'],
      ['1', '2'],
    ]);
  });

  it('honours an explicit format', () => {
    const path = write('a;b\n1;2\n', 'looks.arrow');
    expect(readTable(path, { format: 'csv' }).rowCount).toBe(1);
    inputError(() => readTable(path), 'E_ARROW_CORRUPT');
  });
});

const adult = resolve(import.meta.dirname, '../../examples/adult/adult.csv');
describe('examples/adult', () => {
  it.skipIf(!existsSync(adult))('reads adult.csv: 30162 rows, 9 columns, delimiter ;', () => {
    const t = readCsv(adult);
    expect(t.rowCount).toBe(30162);
    expect(t.columns.length).toBe(9);
    expect(t.delimiter).toBe(';');
    for (const c of t.columns) expect(c.codes.length).toBe(30162);
    const out = formatCsv(
      t.columns.map((c) => ({ name: c.name, kind: 'dictionary', dictionary: c.dictionary, codes: c.codes })),
      t.delimiter,
    );
    expect(decode(readCsv(write(out)))).toEqual(decode(t));
  });
});

describe('encodeCsv: codes', () => {
  it('rejects a code outside the dictionary', () => {
    const cols: OutputColumn[] = [
      { name: 'a', kind: 'dictionary', dictionary: ['x'], codes: Int32Array.from([0, 1]) },
    ];
    expect(() => encodeCsv(cols, ';')).toThrow(OutputError);
  });

  it('encodes each dictionary entry on its own (lone surrogates do not pair up)', () => {
    const cols: OutputColumn[] = [
      { name: 'a', kind: 'dictionary', dictionary: ['\ud834', '\udd1e'], codes: Int32Array.from([0, 1]) },
    ];
    expect(Buffer.from(encodeCsv(cols, ';')).toString('utf8')).toBe('a\n\ufffd\n\ufffd\n');
  });
});

describe('encodeCsvChunks', () => {
  // Cells of 1 to 7 bytes with quotes, a delimiter inside and numbers: rows of uneven width.
  const n = 5000;
  const cols: OutputColumn[] = [
    {
      name: 'a',
      kind: 'dictionary',
      dictionary: ['x', 'say "y"', 'p;q', ''],
      codes: Int32Array.from({ length: n }, (_, i) => (i * 7) % 4),
    },
    { name: 'b', kind: 'number', values: Float64Array.from({ length: n }, (_, i) => (i % 13) / 4) },
  ];
  const whole = Buffer.from(encodeCsv(cols, ';'));

  it('cuts the same bytes into whole rows of about the chunk size, the header in the first', () => {
    for (const size of [1, 7, 64, 1000, 4096, whole.length - 1, whole.length, whole.length + 1]) {
      const chunks = encodeCsvChunks(cols, ';', {}, size);
      expect(Buffer.concat(chunks).equals(whole)).toBe(true);
      for (const [i, chunk] of chunks.entries()) {
        expect(chunk.at(-1)).toBe(0x0a);
        // Over the size only when one row does not fit (the widest here: `"say ""y""";2.75\n`, 17 bytes).
        if (i < chunks.length - 1)
          expect(chunk.length).toBeLessThanOrEqual(Math.max(size, 'a;b\n'.length + 17));
      }
      expect(chunks.length).toBeGreaterThanOrEqual(
        Math.min(n, Math.floor(whole.length / Math.max(size, 16))),
      );
    }
  });

  it('writes the header alone for no rows', () => {
    const empty: OutputColumn[] = [
      { name: 'a', kind: 'dictionary', dictionary: [], codes: new Int32Array(0) },
    ];
    expect(encodeCsvChunks(empty, ';', {}, 4).map((c) => Buffer.from(c).toString())).toEqual(['a\n']);
  });
});

/** The reader's own tests: run with each way of splitting plain rows (below). */
function parsingSuites(): void {
  describe('readCsv: delimiters', () => {
    it.each([
      [';', 'a;b;c\n1;2;3\n4;5;6\n'],
      [',', 'a,b,c\n1,2,3\n4,5,6\n'],
      ['\t', 'a\tb\tc\n1\t2\t3\n4\t5\t6\n'],
      ['|', 'a|b|c\n1|2|3\n4|5|6\n'],
    ])('detects %j from the header', (delim, text) => {
      const t = readCsv(write(text));
      expect(t.delimiter).toBe(delim);
      expect(decode(t)).toEqual([
        ['a', 'b', 'c'],
        ['1', '2', '3'],
        ['4', '5', '6'],
      ]);
    });

    it('counts only delimiters outside quotes in the header', () => {
      const t = readCsv(write('"a;b;c",d\n1,2\n'));
      expect(t.delimiter).toBe(',');
      expect(decode(t)).toEqual([
        ['a;b;c', 'd'],
        ['1', '2'],
      ]);
    });

    it('picks the most frequent candidate', () => {
      expect(readCsv(write('a,b;c;d\n1,2;3;4\n')).delimiter).toBe(';');
    });

    it('reads a single-column file with ; as the delimiter', () => {
      const t = readCsv(write('name\nx\ny\n'));
      expect(t.delimiter).toBe(';');
      expect(decode(t)).toEqual([['name'], ['x'], ['y']]);
    });

    it('uses an explicit delimiter', () => {
      const t = readCsv(write('a,b;c\n1,2;3\n'), { delimiter: ',' });
      expect(t.delimiter).toBe(',');
      expect(decode(t)).toEqual([
        ['a', 'b;c'],
        ['1', '2;3'],
      ]);
    });

    it('rejects a delimiter that cannot work', () => {
      inputError(() => readCsv(write('a\n1\n'), { delimiter: '"' }), 'E_CSV_DELIMITER');
      inputError(() => readCsv(write('a\n1\n'), { delimiter: ';;' }), 'E_CSV_DELIMITER');
    });
  });

  describe('readCsv: parsing', () => {
    it('handles quoted delimiters, newlines and escaped quotes', () => {
      const t = readCsv(write('a;b;c\n"x;y";"line1\nline2";"say ""hi"""\n"";plain;"q"\n'));
      expect(t.rowCount).toBe(2);
      expect(decode(t)).toEqual([
        ['a', 'b', 'c'],
        ['x;y', 'line1\nline2', 'say "hi"'],
        ['', 'plain', 'q'],
      ]);
    });

    it('accepts CRLF, also after quoted fields and inside quotes', () => {
      const t = readCsv(write('a;b\r\n1;"2"\r\n"3\r\n4";5\r\n'));
      expect(decode(t)).toEqual([
        ['a', 'b'],
        ['1', '2'],
        ['3\r\n4', '5'],
      ]);
    });

    it('strips a UTF-8 BOM', () => {
      const bom = new Uint8Array([0xef, 0xbb, 0xbf]);
      const body = new TextEncoder().encode('name;city\nÅsa;Zürich\n');
      const t = readCsv(write(Buffer.concat([bom, body])));
      expect(t.columns[0]!.name).toBe('name');
      expect(decode(t)[1]).toEqual(['Åsa', 'Zürich']);
    });

    it('keeps spaces and a last row without a newline', () => {
      const t = readCsv(write('a;b\n x ; y \n1;'));
      expect(decode(t)).toEqual([
        ['a', 'b'],
        [' x ', ' y '],
        ['1', ''],
      ]);
    });

    it('does not count a final empty line as a row', () => {
      expect(readCsv(write('a\nx\n')).rowCount).toBe(1);
      expect(readCsv(write('a\nx')).rowCount).toBe(1);
      expect(decode(readCsv(write('a;b\r\n1;2\r\n\r\n\n')))).toEqual([
        ['a', 'b'],
        ['1', '2'],
      ]);
      const single = readCsv(write('a\nx\n\n'));
      expect(decode(single)).toEqual([['a'], ['x']]);
      // A trailing blank line adds nothing to the dictionary either.
      expect(single.columns[0]!.dictionary).toEqual(['x']);
    });

    it('reads blank lines between rows of a one-column file as empty values', () => {
      expect(decode(readCsv(write('a\nx\n\n\ny\n\n')))).toEqual([['a'], ['x'], [''], [''], ['y']]);
      // A quoted empty value is a row even at the end.
      expect(decode(readCsv(write('a\nx\n""\n')))).toEqual([['a'], ['x'], ['']]);
    });

    it("drops rows of empty fields at the end of the file, as blank lines (a spreadsheet's used range)", () => {
      const rows = [
        ['a', 'b', 'c'],
        ['1', '2', '3'],
        ['4', '', '6'],
      ];
      for (const tail of [
        ';;\n;;\n',
        ';;\r\n;;\r\n',
        ' ; ;\t\r\n;;',
        ';;\n\n;;\r\n\r\n',
        ';;\r',
        ';\n;;;;\n',
      ]) {
        const t = readCsv(write(`a;b;c\n1;2;3\n4;;6\n${tail}`));
        expect(decode(t), JSON.stringify(tail)).toEqual(rows);
        expect(t.rowCount).toBe(2);
        // Nothing of them in the dictionaries either.
        expect(t.columns.map((c) => c.dictionary)).toEqual([
          ['1', '4'],
          ['2', ''],
          ['3', '6'],
        ]);
      }
      // Columns read as bytes, or left out, alike.
      const t = readCsv(write('a;b;c\n1;2;3\n;;\n; ;\n'), { raw: new Set(['b']), omit: new Set(['c']) });
      expect(t.rowCount).toBe(1);
      expect(rawStrings(t.columns[1]!.raw!)).toEqual(['2']);
      expect(t.columns[0]!.dictionary).toEqual(['1']);
      // A one-column file's line of blanks too, and a file of such rows alone has none.
      expect(decode(readCsv(write('a\nx\n \n\t\n')))).toEqual([['a'], ['x']]);
      inputError(() => readCsv(write('a;b\n;\n ;\n')), 'E_INPUT_NO_ROWS');
    });

    it('reads rows of empty fields between rows as rows of empty cells (their blanks kept), as an Excel sheet', () => {
      const t = readCsv(write('a;b;c\r\n1;2;3\r\n;;\r\n ; ;\t\r\n;;\r\n4;5;6\r\n;;\r\n'));
      expect(decode(t)).toEqual([
        ['a', 'b', 'c'],
        ['1', '2', '3'],
        ['', '', ''],
        [' ', ' ', '\t'],
        ['', '', ''],
        ['4', '5', '6'],
      ]);
      expect(t.columns[0]!.dictionary).toEqual(['1', '', ' ', '4']);
      const raw = readCsv(write('a;b\n1;2\n; \n3;4\n;\n'), { raw: new Set(['a', 'b']) });
      expect(raw.columns.map((c) => rawStrings(c.raw!))).toEqual([
        ['1', '', '3'],
        ['2', ' ', '4'],
      ]);
      // One narrower than the header is an error naming its row (a blank line: as before).
      const err = inputError(() => readCsv(write('a;b;c\n1;2;3\n;\n4;5;6\n', 'narrow.csv')), 'E_CSV_RAGGED');
      expect(err.message).toBe('narrow.csv row 3: 2 fields, the header has 3');
    });

    it('reads rows of empty fields in shards of the rows asked for, the rows of the file read whole', () => {
      const lines = ['a;b'];
      // Runs of 4 empty rows between runs of 6 rows; the last run is followed by more.
      for (let r = 0; r < 60; r++) lines.push(r % 10 < 6 ? `${r};x${r % 3}` : ';');
      const path = write(`${lines.join('\n')}\n${';\n'.repeat(25)}`);
      const whole = readCsv(path);
      expect(whole.rowCount).toBe(56);
      for (const raw of [new Set<string>(), new Set(['b'])])
        for (const rowsPerShard of [1, 3, 7, 1000]) {
          const options = { raw, ...(plainRows === undefined ? {} : { plainRows }) };
          const shards = [...readCsvShards(path, rowsPerShard, options)];
          for (const shard of shards) expect(shard.rowCount).toBeLessThanOrEqual(rowsPerShard);
          const rows = shards.flatMap((shard) => {
            const columns = shard.columns.map((c) =>
              c.raw ? rawStrings(c.raw) : Array.from(c.codes, (k) => c.dictionary[k]!),
            );
            return Array.from({ length: shard.rowCount }, (_, r) => columns.map((c) => c[r]!));
          });
          expect(rows).toEqual(decode(whole).slice(1));
        }
    });

    it('encodes codes in order of first appearance', () => {
      const t = readCsv(write('c\nb\na\nb\nb\na\n'));
      expect(t.columns[0]!.dictionary).toEqual(['b', 'a']);
      expect(Array.from(t.columns[0]!.codes)).toEqual([0, 1, 0, 0, 1]);
      expect(t.columns[0]!.codes.length).toBe(5);
    });

    it('codes each column in order of first appearance with escaped, blank and many cells, in any pieces', () => {
      // Lookups are deferred and made a column at a time: an escaped value (looked up at once),
      // a blank first field (an empty value at its row's end) and more cells than a column
      // defers must still take their codes in the order the cells come.
      const rows: string[][] = [];
      let seed = 7;
      const next = (m: number) => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return (seed >>> 8) % m;
      };
      for (let r = 0; r < 6000; r++) {
        const first = next(9) === 0 ? '' : `k${next(3000)}`;
        const quoted = next(5) === 0 ? `q"${next(40)}` : `p${next(50)}`;
        rows.push([first, quoted, String(next(7))]);
      }
      const field = (v: string) => (v.includes('"') ? `"${v.replaceAll('"', '""')}"` : v);
      const text = `a,b,c\n${rows.map((r) => r.map(field).join(',')).join('\n')}\n`;
      const path = write(text);
      for (const [chunkBytes, windowBytes] of [[undefined], [97], [4099], [undefined, 50], [4099, 333]]) {
        const t = readCsv(path, { chunkBytes, windowBytes });
        expect(t.rowCount).toBe(rows.length);
        t.columns.forEach((column, c) => {
          const seen = [...new Set(rows.map((r) => r[c]!))];
          expect(column.dictionary).toEqual(seen);
          expect(Array.from(column.codes, (code) => column.dictionary[code])).toEqual(rows.map((r) => r[c]));
        });
      }
    });

    it('grows past its initial capacity and across decode chunks', () => {
      const rows = 200_000;
      let text = 'id;group;note\n';
      for (let r = 0; r < rows; r++) text += `${r};g${r % 7};"x;${r % 3}\ny"\n`;
      const t = readCsv(write(text));
      expect(t.rowCount).toBe(rows);
      expect(t.columns[0]!.dictionary.length).toBe(rows);
      expect(t.columns[1]!.dictionary.length).toBe(7);
      expect(t.columns[2]!.dictionary).toEqual(['x;0\ny', 'x;1\ny', 'x;2\ny']);
      expect(t.columns[0]!.codes.length).toBe(rows);
      const last = rows - 1;
      expect(t.columns[0]!.dictionary[t.columns[0]!.codes[last]!]).toBe(String(last));
    });

    it('reads a file larger than one 8 MB decode chunk', () => {
      // Multi-byte characters everywhere so chunk cuts must respect UTF-8 boundaries.
      const line = 'äöü€;𝄞日本;' + 'x'.repeat(100) + '\n';
      const rows = 90_000;
      const t = readCsv(write('a;b;c\n' + line.repeat(rows)));
      expect(t.rowCount).toBe(rows);
      expect(t.columns.map((c) => c.dictionary)).toEqual([['äöü€'], ['𝄞日本'], ['x'.repeat(100)]]);
    });
  });

  describe('readCsv: errors', () => {
    it('E_INPUT_MISSING names the file and its absolute path', () => {
      const path = join(dir, 'nope.csv');
      const err = inputError(() => readCsv(path), 'E_INPUT_MISSING');
      expect(err.message).toBe(`nope.csv: input file not found (${resolve(path)})`);
      expect(err.hint).toBeTruthy();
    });

    it('E_INPUT_MISSING for a directory', () => {
      const sub = join(mkdtempSync(join(dir, 'd-')), 'adir.csv');
      mkdirSync(sub);
      const err = inputError(() => readCsv(sub), 'E_INPUT_MISSING');
      expect(err.message).toContain('adir.csv');
    });

    it.skipIf(process.getuid?.() === 0)('E_INPUT_MISSING for an unreadable file', () => {
      const path = write('a\n1\n', 'locked.csv');
      chmodSync(path, 0o000);
      const err = inputError(() => readCsv(path), 'E_INPUT_MISSING');
      expect(err.message).toContain('locked.csv');
    });

    it('E_INPUT_EMPTY for an empty file or a lone BOM', () => {
      expect(inputError(() => readCsv(write('', 'empty.csv')), 'E_INPUT_EMPTY').message).toContain(
        'empty.csv',
      );
      inputError(() => readCsv(write(new Uint8Array([0xef, 0xbb, 0xbf]))), 'E_INPUT_EMPTY');
    });

    it('E_INPUT_NO_ROWS for a header without rows', () => {
      const err = inputError(() => readCsv(write('a;b\n', 'head.csv')), 'E_INPUT_NO_ROWS');
      expect(err.message).toContain('head.csv');
      inputError(() => readCsv(write('a;b')), 'E_INPUT_NO_ROWS');
      inputError(() => readCsv(write('a;b\n\n\n')), 'E_INPUT_NO_ROWS');
    });

    it('E_CSV_RAGGED names file, row, counts and the delimiter, not the values', () => {
      let text = 'a;b;c;d;e;f;g;h;i\n';
      for (let r = 2; r < 17; r++) text += '1;2;3;4;5;6;7;8;9\n';
      text += 'SECRET-1;2;3;4;5;6;7;8\n';
      const err = inputError(() => readCsv(write(text, 'adult.csv')), 'E_CSV_RAGGED');
      expect(err.message).toBe('adult.csv row 17: 8 fields, the header has 9');
      expect(err.hint).toContain("';'");
      expect(err.hint).toContain('quote');
      expect(err.describe()).not.toContain('SECRET');
    });

    it('E_CSV_RAGGED counts rows, not lines, with quoted line breaks', () => {
      const err = inputError(
        () => readCsv(write('a,b\n"1\n2",3\nSECRET,4,5\n', 'multi.csv')),
        'E_CSV_RAGGED',
      );
      expect(err.message).toBe('multi.csv row 3 (line 4): 3 fields, the header has 2');
      expect(err.hint).toContain("','");
      expect(err.describe()).not.toContain('SECRET');
    });

    it('E_CSV_RAGGED for an empty line in the middle', () => {
      const err = inputError(() => readCsv(write('a;b\n1;2\n\n3;4\n', 'blank.csv')), 'E_CSV_RAGGED');
      expect(err.message).toBe('blank.csv row 3: 1 field, the header has 2 (the line is empty)');
      expect(err.hint).toContain('empty lines');
    });

    it('E_CSV_QUOTE names the row where an unterminated quote opened', () => {
      const err = inputError(
        () => readCsv(write('a;b\n1;2\n3;"SECRET value\n5;6\n7;8\n', 'quote.csv')),
        'E_CSV_QUOTE',
      );
      expect(err.message).toContain('quote.csv row 3, column 2:');
      expect(err.hint).toContain('""');
      expect(err.describe()).not.toContain('SECRET');
    });

    it('E_CSV_QUOTE for text after a closing quote', () => {
      const err = inputError(() => readCsv(write('a;b\n1;"SECRET"x\n', 'after.csv')), 'E_CSV_QUOTE');
      expect(err.message).toContain('after.csv row 2, column 2:');
      expect(err.describe()).not.toContain('SECRET');
    });

    it('E_CSV_HEADER for duplicate and empty column names, named by position', () => {
      // A header's names are never quoted: a file exported without its header row has a record there.
      const dup = inputError(() => readCsv(write('age;zip;age\n1;2;3\n', 'dup.csv')), 'E_CSV_HEADER');
      expect(dup.message).toBe('dup.csv row 1: columns 1 and 3 have the same name');
      expect(dup.hint).toMatch(/lacks its header row/);
      const record = inputError(
        () => readCsv(write('SECRET Smith;SECRET Smith;01234\nJones;Jones;01235\n', 'noheader.csv')),
        'E_CSV_HEADER',
      );
      expect(record.describe()).not.toContain('SECRET');
      const empty = inputError(() => readCsv(write('age;;zip\n1;2;3\n', 'emptyname.csv')), 'E_CSV_HEADER');
      expect(empty.message).toContain('emptyname.csv row 1');
      expect(empty.message).toContain('column 2');
      expect(empty.hint).toBeTruthy();
    });

    it("E_INPUT_NAME for a name starting with a byte order mark (only the file's first one is dropped)", () => {
      const inner = inputError(() => readCsv(write('age;\uFEFFzip\n1;2\n', 'joined.csv')), 'E_INPUT_NAME');
      expect(inner.message).toBe(
        'joined.csv row 1: the name of column 2 starts with an invisible byte order mark (U+FEFF)',
      );
      expect(inner.hint).toMatch(/remove it from the header/);
      inputError(() => readCsv(write('\uFEFF\uFEFFage;zip\n1;2\n', 'twice.csv')), 'E_INPUT_NAME');
      expect(readCsv(write('\uFEFFage;zip\n1;2\n', 'once.csv')).columns[0]!.name).toBe('age');
    });

    it('E_CSV_HEADER for a spreadsheet\'s "sep=" first line, and a header ending with the delimiter', () => {
      for (const first of ['sep=;', 'SEP=,', 'sep=\t']) {
        const e = inputError(() => readCsv(write(`${first}\nage;zip\n1;2\n`, 'sep.csv')), 'E_CSV_HEADER');
        expect(e.message).toBe(
          'sep.csv row 1: a "sep=" line (a spreadsheet\'s note of the delimiter), not the header',
        );
        expect(e.hint).toMatch(/delete that first line/);
      }
      const trailing = inputError(() => readCsv(write('age;zip;\n1;2;\n', 'trailing.csv')), 'E_CSV_HEADER');
      expect(trailing.message).toBe(
        'trailing.csv row 1: column 3 of 3 has an empty name (the header ends with the delimiter)',
      );
      expect(trailing.hint).toMatch(/remove it from the end of each line/);
    });

    it('E_INPUT_ENCODING names row and column, not the value', () => {
      const head = new TextEncoder().encode('name;city\nok;fine\nSECRET;');
      const bad = new Uint8Array([0x5a, 0xfc, 0x72, 0x69, 0x63, 0x68, 0x0a]); // latin-1 "Zürich"
      const err = inputError(
        () => readCsv(write(Buffer.concat([head, bad]), 'latin.csv')),
        'E_INPUT_ENCODING',
      );
      expect(err.message).toContain('latin.csv row 3, column 2:');
      expect(err.hint).toContain('UTF-8');
      expect(err.describe()).not.toContain('SECRET');
      expect(err.describe()).not.toContain('rich');
    });

    it('E_INPUT_ENCODING for a truncated multi-byte sequence at the end', () => {
      const bytes = Buffer.concat([new TextEncoder().encode('a\nx'), new Uint8Array([0xe2, 0x82])]);
      const err = inputError(() => readCsv(write(bytes, 'trunc.csv')), 'E_INPUT_ENCODING');
      expect(err.message).toContain('trunc.csv row 2');
    });
  });
}

function piecesSuite(): void {
  describe('readCsv: reading in pieces', () => {
    /** The table as data, or the error's code and message: what must not depend on piece size. */
    function outcome(path: string, chunkBytes?: number, windowBytes?: number): unknown {
      try {
        const t = readCsv(path, { chunkBytes, windowBytes });
        return { rows: decode(t), delimiter: t.delimiter, dictionaries: t.columns.map((c) => c.dictionary) };
      } catch (err) {
        if (!(err instanceof InputError)) throw err;
        return { code: err.code, message: err.message };
      }
    }

    it('gives the same table or error for every piece size', () => {
      // Random texts over the characters that matter: delimiters, quotes, CR, LF, multi-byte.
      const alphabet = [
        'a',
        'b',
        'x',
        ';',
        ';',
        ',',
        '"',
        '""',
        '\n',
        '\n',
        '\r\n',
        '\r',
        'é',
        '€',
        '𝄞',
        ' ',
        '',
      ];
      let seed = 7;
      const next = (n: number): number => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % n;
      };
      for (let k = 0; k < 150; k++) {
        let text = 'h1;h2;h3\n';
        const length = 20 + next(120);
        for (let i = 0; i < length; i++) text += alphabet[next(alphabet.length)];
        const path = write(
          k % 5 === 0 ? Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]) : text,
        );
        const whole = outcome(path);
        for (const chunkBytes of [16, 17, 19, 32]) expect(outcome(path, chunkBytes)).toEqual(whole);
        // Rows parsed a window at a time before their cells are looked up: windows cut anywhere.
        for (const windowBytes of [1, 7, 16, 33]) {
          expect(outcome(path, undefined, windowBytes)).toEqual(whole);
          expect(outcome(path, 19, windowBytes)).toEqual(whole);
        }
      }
    });

    it('holds rows of empty fields across pieces and windows: rows between rows, none at the end', () => {
      const lines = ['h1;h2;h3'];
      for (let r = 0; r < 40; r++)
        lines.push(r % 7 < 4 ? `${r};"q${r % 2}";z` : r % 7 === 4 ? ' ;;\t' : ';;');
      const path = write(`${lines.join('\r\n')}\r\n${';;\r\n'.repeat(30)};;`);
      const whole = outcome(path) as { rows: string[][] };
      expect(whole.rows).toHaveLength(1 + 39);
      for (const chunkBytes of [16, 17, 19, 32]) expect(outcome(path, chunkBytes)).toEqual(whole);
      for (const windowBytes of [1, 7, 16, 33]) expect(outcome(path, 19, windowBytes)).toEqual(whole);
    });

    it('reads rows, quoted line breaks and multi-byte characters cut across pieces', () => {
      const rows = ['name;note;city'];
      for (let r = 0; r < 300; r++) rows.push(`n${r % 13};"a ""q"" ${r % 5}\r\nz";Zürich𝄞${r % 3}`);
      const path = write(`${rows.join('\r\n')}\r\n`);
      const t = readCsv(path, { chunkBytes: 16 });
      expect(t.rowCount).toBe(300);
      expect(decode(t)).toEqual(decode(readCsv(path)));
      expect(t.columns[1]!.dictionary[0]).toBe('a "q" 0\r\nz');
      expect(t.columns[2]!.dictionary).toEqual(['Zürich𝄞0', 'Zürich𝄞1', 'Zürich𝄞2']);
    });

    it('detects the delimiter from a header longer than a piece', () => {
      const header = Array.from({ length: 40 }, (_, i) => `column${i}`).join(',');
      const path = write(`${header}\n${'1,'.repeat(39)}1\n`);
      const t = readCsv(path, { chunkBytes: 16 });
      expect(t.delimiter).toBe(',');
      expect(t.columns.length).toBe(40);
    });

    it('names the row and byte offset of invalid UTF-8 in a later piece', () => {
      const head = Buffer.from(`a;b\n${'x;y\n'.repeat(50)}ok;`);
      const bytes = Buffer.concat([head, Buffer.from([0xff]), Buffer.from('\n')]);
      const path = write(bytes, 'late.csv');
      for (const chunkBytes of [16, undefined]) {
        const err = inputError(() => readCsv(path, { chunkBytes }), 'E_INPUT_ENCODING');
        expect(err.message).toBe(
          `late.csv row 52, column 2: bytes that are not valid UTF-8 (byte offset ${head.length})`,
        );
      }
    });

    it('reads a file whose lines end with CR alone as its LF twin, quoted line breaks kept, for every piece size', () => {
      let seed = 11;
      const next = (n: number): number => {
        seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
        return seed % n;
      };
      const alphabet = ['a', 'b', 'é', '𝄞', ' ', ';', ',', '|', '"', '\n', '\r', '\r\n'];
      const cell = (delimiter: string): string => {
        let v = '';
        for (let i = next(6); i > 0; i--) v += alphabet[next(alphabet.length)];
        return v.includes(delimiter) || /["\r\n]/.test(v) ? `"${v.replaceAll('"', '""')}"` : v;
      };
      for (const delimiter of [';', ',', '|']) {
        const rows = [['h1', 'h2', 'h3'].join(delimiter)];
        for (let r = 0; r < 60; r++) rows.push([`r${r}`, cell(delimiter), cell(delimiter)].join(delimiter));
        const lf = write(`${rows.join('\n')}\n`);
        const cr = write(`${rows.join('\r')}\r`);
        const twin = outcome(lf);
        expect((twin as { rows: string[][] }).rows).toHaveLength(61);
        expect(outcome(cr)).toEqual(twin);
        for (const chunkBytes of [16, 17, 19, 32]) expect(outcome(cr, chunkBytes)).toEqual(twin);
        for (const windowBytes of [1, 7, 33]) expect(outcome(cr, 19, windowBytes)).toEqual(twin);
        // The last line without its CR, and a UTF-8 byte order mark first.
        expect(outcome(write(`\ufeff${rows.join('\r')}`), 16)).toEqual(twin);
      }
    });

    it('refuses a file whose lines end with CR alone and then with LF, naming the byte', () => {
      const head = 'a;b\r1;"x\ny"\r2;3\r';
      const path = write(`${head}4;5\n6;7\n`, 'mixed.csv');
      for (const chunkBytes of [16, undefined]) {
        const err = inputError(() => readCsv(path, { chunkBytes }), 'E_CSV_LINE_ENDS');
        expect(err.message).toBe(
          `mixed.csv: lines end with CR only (as classic Mac OS wrote text, e.g. Excel's "CSV (Macintosh)"), but a line ends with LF at byte offset ${Buffer.byteLength(head) + 3}`,
        );
      }
    });

    it('refuses a file whose lines end with CR CR LF, saying so and how to fix it', () => {
      const path = write('a;b\r\r\n1;"x\r\r\ny"\r\r\n2;3\r\r\n', 'doubled.csv');
      for (const chunkBytes of [4, undefined]) {
        const err = inputError(() => readCsv(path, { chunkBytes }), 'E_CSV_LINE_ENDS');
        expect(err.message).toBe(
          'doubled.csv: each line ends with CR CR LF, an extra CR before the line break (first at byte offset 5), as a file with CR LF line ends gets when its line ends are converted once more',
        );
        expect(err.hint).toContain("sed 's/\\r\\r$/\\r/'");
        expect(err.hint).toContain('re-export');
      }
    });

    it('reads a non-ASCII delimiter', () => {
      const t = readCsv(write('a§b\n1§"2§3"\n'), { delimiter: '§' });
      expect(decode(t)).toEqual([
        ['a', 'b'],
        ['1', '2§3'],
      ]);
    });

    it('gives every column codes of exactly rowCount entries', () => {
      const path = write(`a;b\n${'1;2\n'.repeat(5000)}`);
      const t = readCsv(path, { chunkBytes: 64 });
      for (const c of t.columns) {
        expect(c.codes.length).toBe(5000);
        expect(c.codes.buffer.byteLength).toBe(5000 * 4);
      }
    });
  });
}

/** The plain rows split by the WASM kernel (the default), its plain-TS reference, and the parser alone. */
const PLAIN_ROWS: [string, PlainRowsKernel | null | undefined][] = [
  ['the WASM kernel', undefined],
  ['the plain-TS reference', tsPlainRows],
  ['the parser alone', null],
];
for (const [name, kernel] of PLAIN_ROWS)
  describe(`readCsv, its plain rows split by ${name}`, () => {
    beforeAll(() => {
      plainRows = kernel;
    });
    afterAll(() => {
      plainRows = undefined;
    });
    parsingSuites();
    piecesSuite();
  });
