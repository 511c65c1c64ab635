/**
 * The CSV reader's plain rows: the WASM kernel gives the plain-TS reference's rows, fields,
 * hashes and bytes, and stops where it does, on rows of every kind the reader meets: fields
 * empty or longer than a SIMD step, CR LF and lone CR, quoted fields (with the delimiter, an
 * escaped quote, a line break or text after the closing quote), a blank line, a row of empty
 * fields or blanks, rows of another width, a row cut by the bytes' end, a limit on the rows, and
 * omitted, coded and raw columns in any mix.
 */
import { describe, expect, it } from 'vitest';
import {
  CODED,
  OMITTED,
  type PlainRows,
  type PlainRowsRequest,
  RAW,
} from '../../src/kernels/csv-fields/kernel.ts';
import { tsPlainRows } from '../../src/kernels/csv-fields/reference.ts';
import { wasmPlainRows } from '../../src/kernels/csv-fields/wasm.ts';
import { Random } from '../../src/util/random.ts';

/** What a result holds, copied (the WASM one's arrays are views of its memory). */
function plain(r: PlainRows) {
  return {
    rows: r.rows,
    end: r.end,
    coded: r.coded.map((c) => ({ starts: [...c.starts], ends: [...c.ends], hashes: [...c.hashes] })),
    raw: r.raw.map((c) => ({ offsets: [...c.offsets], bytes: Buffer.from(c.bytes).toString('latin1') })),
  };
}

const both = (request: PlainRowsRequest) => ({
  ts: plain(tsPlainRows(request)),
  wasm: plain(wasmPlainRows(request)),
});

function request(text: string, kinds: number[], options: Partial<PlainRowsRequest> = {}): PlainRowsRequest {
  const bytes = Buffer.from(text, 'utf8');
  return { bytes, start: 0, end: bytes.length, delimiter: 0x2c, kinds, most: 1e9, ...options };
}

describe('the plain rows of a CSV window', () => {
  it('are the same in WASM as in plain TS, on random rows of every kind', () => {
    const rng = new Random(17);
    const cells = [
      '',
      'a',
      'xyz',
      '12345',
      'ä€',
      'a"b',
      'é\rx',
      'a long field of more than sixteen bytes',
      '2025-06-06T23:17:18',
      '"x,y"',
      '""',
      '"say ""hi"", then go"',
      '"a quoted field, longer than sixteen bytes"',
      '"a\nb"',
      '"a\r\nb"',
      '"q"x',
      '"open',
    ];
    for (let trial = 0; trial < 300; trial++) {
      const width = 2 + rng.below(5);
      const kinds = Array.from({ length: width }, () => [OMITTED, CODED, RAW][rng.below(3)]!);
      const lines: string[] = [];
      for (let r = 0, rows = rng.below(60); r < rows; r++) {
        const odd = rng.below(40);
        const w = odd === 0 ? width - 1 : odd === 1 ? width + 1 : width;
        let line = Array.from({ length: w }, () => cells[rng.below(cells.length)]!).join(',');
        if (odd === 2) line = `"${line}"`;
        if (odd === 3) line = '';
        // A row of empty fields (or of blanks), as a spreadsheet exports its used range's empty rows.
        if (odd === 4) line = ','.repeat(width - 1);
        if (odd === 5) line = Array.from({ length: width }, () => [' ', '', '\t'][rng.below(3)]).join(',');
        lines.push(line + (rng.below(4) === 0 ? '\r\n' : '\n'));
      }
      const text = lines.join('');
      const cut = rng.below(5) === 0 ? rng.below(text.length + 1) : text.length;
      const skip = rng.below(3);
      const bytes = Buffer.from(`${'#'.repeat(skip)}${text}`, 'utf8');
      const end = skip + Buffer.byteLength(text.slice(0, cut), 'utf8');
      const most = rng.below(4) === 0 ? rng.below(10) : 1e9;
      const { ts, wasm } = both({ bytes, start: skip, end, delimiter: 0x2c, kinds, most });
      expect(wasm, `trial ${trial}`).toEqual(ts);
    }
  });

  it('split rows at the delimiter and line breaks, and stop at the first row left to the reader', () => {
    const r = wasmPlainRows(request('a,bb,c\r\nd,,f\n"q\n",x,y\ng,h,i\n', [CODED, RAW, OMITTED]));
    expect(r.rows).toBe(2);
    expect(r.end).toBe('a,bb,c\r\nd,,f\n'.length);
    expect([...r.coded[0]!.starts]).toEqual([0, 8]);
    expect([...r.coded[0]!.ends]).toEqual([1, 9]);
    expect([...r.raw[0]!.offsets]).toEqual([0, 2, 2]);
    expect(Buffer.from(r.raw[0]!.bytes).toString()).toBe('bb');
    // FNV-1a of the field's bytes, as the reader's dictionary keys them.
    const fnv = (s: string) =>
      [...Buffer.from(s)].reduce((h, b) => Math.imul(h ^ b, 0x01000193), 0x811c9dc5 | 0);
    expect([...r.coded[0]!.hashes]).toEqual([fnv('a'), fnv('d')]);
    // A lone CR is data; a row cut short, a blank line or a row of another width is not taken.
    expect(wasmPlainRows(request('a\rb,c\n', [CODED, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\nc,d', [CODED, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\r', [CODED, CODED])).rows).toBe(0);
    expect(wasmPlainRows(request('\na,b\n', [CODED, CODED])).rows).toBe(0);
    expect(wasmPlainRows(request('a,b,c\n', [CODED, CODED])).rows).toBe(0);
    expect(wasmPlainRows(request('a\n', [CODED, CODED])).rows).toBe(0);
    expect(wasmPlainRows(request('a,b\nc,d\n', [CODED, CODED], { most: 1 })).rows).toBe(1);
    // A row of empty fields, or of blanks only, is left to the reader (it may end the file); a
    // quoted empty field or any other byte makes a row.
    for (const kernel of [wasmPlainRows, tsPlainRows]) {
      for (const empty of [',\n', ',\r\n', ' ,\t\n', ' , \r\n'])
        expect(kernel(request(`a,b\n${empty}c,d\n`, [CODED, RAW])).rows, JSON.stringify(empty)).toBe(1);
      for (const row of ['"",\n', ',""\n', ',x\n', ',\r\r\n'])
        expect(kernel(request(`a,b\n${row}c,d\n`, [CODED, RAW])).rows, JSON.stringify(row)).toBe(3);
    }
  });

  it('take quoted fields on one line: the value between the quotes, "" a quote in it', () => {
    const text = '"a,b","x ""y"" z",1\r\n"",q,"2"\n';
    const r = wasmPlainRows(request(text, [CODED, RAW, CODED]));
    expect(r.rows).toBe(2);
    expect(r.end).toBe(Buffer.byteLength(text));
    // A coded field's place is inside its quotes; a raw field's bytes are its value.
    expect([...r.coded[0]!.starts]).toEqual([1, text.indexOf('"",q') + 1]);
    expect([...r.coded[0]!.ends]).toEqual([4, text.indexOf('"",q') + 1]);
    expect(Buffer.from(r.raw[0]!.bytes).toString()).toBe('x "y" zq');
    expect([...r.raw[0]!.offsets]).toEqual([0, 7, 8]);
    expect(both(request(text, [CODED, RAW, CODED])).ts).toEqual(plain(r));
    // Left to the reader: an escaped quote in a coded field, a line break inside the quotes,
    // text after the closing quote, a quote the window cuts.
    expect(wasmPlainRows(request('a,b\n"x""y",c\n', [CODED, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\n"x""y",c\n', [RAW, CODED])).rows).toBe(2);
    expect(wasmPlainRows(request('a,b\n"x\ny",c\n', [RAW, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\n"x"y,c\n', [RAW, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\n"x"\rc\n', [RAW, CODED])).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\n"x",c\n', [RAW, CODED], { end: 6 })).rows).toBe(1);
    expect(wasmPlainRows(request('a,b\n"x",c\n', [RAW, CODED], { end: 7 })).rows).toBe(1);
  });

  it('take a window of many rows whole, with a tab delimiter', () => {
    const rng = new Random(3);
    let text = '';
    for (let r = 0; r < 20_000; r++) text += `${rng.below(100)}\t${'n'.repeat(rng.below(40))}\t${r}\n`;
    const { ts, wasm } = both(request(text, [CODED, RAW, CODED], { delimiter: 0x09 }));
    expect(wasm.rows).toBe(20_000);
    expect(wasm).toEqual(ts);
  });
});
