/**
 * Excel workbooks (.xlsx) as input: a workbook written by a maintained writer (exceljs), with
 * numbers, strings (shared and inline), booleans, dates, times and formulas, releases the same
 * bytes as the same table given as CSV with the texts ppdp reads its cells as; the sheet is
 * chosen by name or position; and each kind of bad file — not a workbook, cut short, a zip
 * bomb, a part lying about its size, an entity declaration, a password-protected or a legacy
 * workbook, a missing sheet — is refused with a code and a message naming the file.
 */
import { mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { strFromU8, strToU8, unzipSync, zipSync } from 'fflate';
import { describe, expect, it } from 'vitest';
import { readTable } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { readXlsx } from '../../src/data/xlsx.ts';
import { PpdpError } from '../../src/errors.ts';
import { readInputShards } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultColumns } from '../helpers/parquet.ts';
import { releaseTo } from '../helpers/release.ts';
import { expectBytesAlike } from '../helpers/shards.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

function cells(table: EncodedTable): string[][] {
  return Array.from({ length: table.rowCount }, (_, r) =>
    table.columns.map((c) => c.dictionary[c.codes[r]!]!),
  );
}

/** The error `read` throws. */
function refusal(read: () => unknown): PpdpError {
  try {
    read();
  } catch (err) {
    if (err instanceof PpdpError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

const DAY = 86_400_000;

/** Typed columns for row `i`: the workbook's values and the texts the same table as CSV holds. */
function typedRow(i: number): { values: unknown[]; texts: string[] } {
  const day = Date.UTC(1950, 0, 1) + ((i * 7919) % 30_000) * DAY;
  const at = Date.UTC(2001, 0, 1) + ((i * 104_729) % 400_000) * 60_000 + (i % 3) * 500;
  const amount = Math.round(((i * 37) % 2001) - 1000) / 100;
  const ratio = (i % 7) / 10 + 0.2;
  const flag = i % 3 === 0;
  const iso = (ms: number) => new Date(ms).toISOString();
  return {
    values: [
      new Date(day),
      new Date(at),
      amount,
      ratio,
      flag,
      { formula: `D${i + 2}*2`, result: amount * 2 },
    ],
    texts: [
      iso(day).slice(0, 10),
      iso(at)
        .replace(/\.000Z$|Z$/, '')
        .replace(/(\.\d*?)0+$/, '$1'),
      String(amount),
      String(ratio),
      String(flag),
      String(amount * 2),
    ],
  };
}
const TYPED = ['born', 'seen', 'amount', 'ratio', 'flag', 'twice'];

async function workbook(
  header: readonly string[],
  rows: readonly (readonly unknown[])[],
  options: { decoy?: boolean; sharedStrings?: boolean } = {},
): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  if (options.decoy) wb.addWorksheet('Notes').addRow(['not the table']);
  const sheet = wb.addWorksheet('Data');
  sheet.addRow([...header]);
  for (const r of rows) sheet.addRow([...r]);
  const col = (name: string) => header.indexOf(name) + 1;
  if (col('born') > 0) sheet.getColumn(col('born')).numFmt = 'yyyy-mm-dd';
  if (col('seen') > 0) sheet.getColumn(col('seen')).numFmt = 'yyyy-mm-dd hh:mm:ss.000';
  // exceljs's numFmt on a column styles its header cell too; the header is text, so unaffected.
  return Buffer.from(await wb.xlsx.writeBuffer({ useSharedStrings: options.sharedStrings ?? true }));
}

/** A workbook's parts, changed by `edit`, zipped again (deflated). */
function rezip(bytes: Uint8Array, edit: (parts: Record<string, Uint8Array>) => void): Uint8Array {
  const parts = unzipSync(bytes);
  edit(parts);
  return zipSync(parts, { level: 6 });
}

/** The central directory entry of `name` in a ZIP archive: its offset. */
function centralEntry(zip: Uint8Array, name: string): number {
  const buf = Buffer.from(zip);
  for (let p = buf.length - 46; p >= 0; p--) {
    if (buf.readUInt32LE(p) !== 0x02014b50) continue;
    const n = buf.readUInt16LE(p + 28);
    if (buf.toString('utf8', p + 46, p + 46 + n) === name) return p;
  }
  throw new Error(`no entry ${name}`);
}

describe('the same table as CSV and as an Excel workbook', () => {
  it('releases the same data bytes, the sheet chosen by name or position, strings shared or inline', async () => {
    const ws = adultWorkspace(400);
    const { header, rows } = adultColumns(ws.read('adult.csv'));
    const typed = rows.map((_, i) => typedRow(i));
    const names = [...header, ...TYPED];
    ws.write(
      'adult.csv',
      `${names.join(';')}\n${rows.map((r, i) => [...r, ...typed[i]!.texts].join(';')).join('\n')}\n`,
    );
    const values = rows.map((r, i) => [
      ...r.map((v, c) => (header[c] === 'age' ? Number(v) : v)),
      ...typed[i]!.values,
    ]);
    ws.write('shared.xlsx', await workbook(names, values));
    ws.write('inline.xlsx', await workbook(names, values, { sharedStrings: false }));
    ws.write('second.xlsx', await workbook(names, values, { decoy: true }));
    const expected = cells(readTable(join(ws.dir, 'adult.csv')));
    expect(cells(readXlsx(join(ws.dir, 'inline.xlsx')))).toEqual(expected);
    expect(cells(readXlsx(join(ws.dir, 'second.xlsx'), { sheet: 2 }))).toEqual(expected);
    // Columns released unchanged are read as their rows' bytes, batch after batch, the same cells.
    for (const size of [1, 150, 1e9]) expectBytesAlike(join(ws.dir, 'shared.xlsx'), size);
    expectBytesAlike(join(ws.dir, 'second.xlsx'), 7, { sheet: 2 });

    const original = JSON.parse(ws.read('release.json'));
    for (const name of names) {
      if (!['sex', 'age', 'race', 'occupation'].includes(name))
        original.attributes[name] = { type: 'insensitive' };
    }
    const release = async (input: string, format?: Record<string, unknown>) => {
      const spec = structuredClone(original);
      spec.input = input;
      if (format) spec.format = format;
      else delete spec.format;
      ws.write('release.json', JSON.stringify(spec));
      const out = join(ws.dir, 'out', `${input}-${JSON.stringify(format ?? {})}`);
      await releaseTo(ws.spec, out);
      return out;
    };
    const csv = await release('adult.csv', { delimiter: ';' });
    expect(readFileSync(join(csv, 'data.csv'), 'utf8')).toMatch(/;\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/);
    for (const [input, format] of [
      ['shared.xlsx', undefined],
      ['inline.xlsx', { type: 'xlsx' }],
      ['second.xlsx', { sheet: 'Data' }],
    ] as const) {
      const out = await release(input, format);
      for (const name of ['data.csv', 'data.arrow']) {
        const same = readFileSync(join(out, name)).equals(readFileSync(join(csv, name)));
        expect(same, `${input} ${JSON.stringify(format)} ${name}`).toBe(true);
      }
    }
  }, 120_000);
});

describe('cells as the CSV reader gives them', () => {
  it('reads each kind of cell, a row of empty cells as empty cells, and leaves identifying columns out', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('T');
    sheet.addRow([]);
    sheet.addRow(['id', 'text', 'n', 'when', 'clock', 'f']);
    sheet.addRow([
      'a1',
      'Ann & <b> "q"',
      0.1 + 0.2,
      new Date(Date.UTC(2024, 1, 29)),
      0.75,
      { formula: '1/0', result: { error: '#DIV/0!' } },
    ]);
    // A value in the identifying column alone: the table's cells of the row are empty.
    sheet.addRow(['a2']);
    sheet.addRow([
      'a3',
      'twö\r\nlines',
      1e21,
      new Date(Date.UTC(1970, 0, 1)),
      0.5,
      { formula: '"x"&"y"', result: 'xy' },
    ]);
    sheet.addRow([]);
    sheet.getColumn(4).numFmt = 'd-mmm-yy';
    sheet.getColumn(5).numFmt = 'h:mm:ss AM/PM';
    ws.write('kinds.xlsx', Buffer.from(await wb.xlsx.writeBuffer()));
    const table = readXlsx(join(ws.dir, 'kinds.xlsx'), { omit: new Set(['id']) });
    expect(table.columns.map((c) => c.name)).toEqual(['text', 'n', 'when', 'clock', 'f']);
    expect(table.omitted).toEqual(['id']);
    expect(cells(table)).toEqual([
      ['Ann & <b> "q"', '0.30000000000000004', '2024-02-29', '18:00:00', '#DIV/0!'],
      ['', '', '', '', ''],
      ['twö\nlines', '1e+21', '1970-01-01', '12:00:00', 'xy'],
    ]);
    expectBytesAlike(join(ws.dir, 'kinds.xlsx'), 2, { omit: new Set(['id']) });
    // The header is on the sheet's row 2: an empty quasi-identifier cell is named by its sheet row.
    ws.write(
      'release.json',
      JSON.stringify({
        input: 'kinds.xlsx',
        attributes: {
          id: { type: 'identifying' },
          text: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
          n: { type: 'insensitive' },
          when: { type: 'insensitive' },
          clock: { type: 'insensitive' },
          f: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 1 }],
        method: { name: 'generalization' },
      }),
    );
    const err = await releaseTo(ws.spec, join(ws.dir, 'out')).then(
      () => undefined,
      (e: unknown) => e as PpdpError,
    );
    expect(err?.code).toBe('E_INPUT_EMPTY_CELL');
    expect(err?.message).toMatch(/^kinds\.xlsx sheet "T" cell B4, column "text": the cell is empty/);
  });

  it('names the sheet and cell of an empty quasi-identifier, read whole, in shards, or from a folder', async () => {
    const ws = adultWorkspace(1);
    // The header on row 2, an identifying column left out before the quasi-identifier (column C).
    const book = async (empty?: number) => {
      const wb = new ExcelJS.Workbook();
      const sheet = wb.addWorksheet('Data');
      sheet.addRow([]);
      sheet.addRow(['id', 'x', 'g']);
      for (let i = 0; i < 10; i++) sheet.addRow([i, 'v', i === empty ? null : 'w']);
      return Buffer.from(await wb.xlsx.writeBuffer());
    };
    ws.write('one.xlsx', await book(6));
    mkdirSync(join(ws.dir, 'folder'));
    ws.write('folder/1.xlsx', await book());
    ws.write('folder/2.xlsx', await book(6));
    const attributes = {
      id: { type: 'identifying' },
      x: { type: 'insensitive' },
      g: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
    };
    for (const [input, file] of [
      ['one.xlsx', 'one.xlsx'],
      ['folder', '2.xlsx'],
    ]) {
      ws.write(
        'release.json',
        JSON.stringify({
          input,
          attributes,
          privacy: [{ model: 'k-anonymity', k: 1 }],
          method: { name: 'generalization' },
        }),
      );
      for (const rows of [3, Number.POSITIVE_INFINITY]) {
        const err = refusal(() => [...readInputShards(loadSpec(ws.spec), rows)]);
        expect(err.code).toBe('E_INPUT_EMPTY_CELL');
        expect(err.message, `${input} in shards of ${rows}`).toMatch(
          new RegExp(`^${file.replace('.', '\\.')} sheet "Data" cell C9, column "g": the cell is empty`),
        );
      }
    }
  });
});

describe('numbers in date and time formats, as the sheet shows them', () => {
  /** One cell per [serial, format] in column A, read back as its text. */
  async function shown(cases: readonly (readonly [number, string])[]): Promise<string[]> {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('T');
    sheet.addRow(['at']);
    for (const [value, format] of cases) sheet.addRow([value]).getCell(1).numFmt = format;
    ws.write('shown.xlsx', Buffer.from(await wb.xlsx.writeBuffer()));
    return cells(readXlsx(join(ws.dir, 'shown.xlsx'))).map((r) => r[0]!);
  }

  it('a clock format as the time of day, a duration format as all its hours, a date and time as both', async () => {
    // 45000.5 is 2023-03-15 12:00: an appointment sheet shows its time alone.
    expect(
      await shown([
        [45000.5, 'hh:mm'],
        [45000.75, 'h:mm AM/PM'],
        [45000.25, 'hh:mm:ss'],
        [45000.5, 'h:mm'], // built-in format 20
        [0.5, 'hh:mm'],
        [1.25, '[h]:mm'],
        [45000.5, '[h]:mm:ss'], // built-in format 46, a duration
        [2.5, '[mm]:ss'],
        [45000.5, 'yyyy-mm-dd hh:mm'],
        [45000.999999999, 'yyyy-mm-dd hh:mm:ss'],
        [45000.999999999, 'hh:mm:ss'],
      ]),
    ).toEqual([
      '12:00:00',
      '18:00:00',
      '06:00:00',
      '12:00:00',
      '12:00:00',
      '30:00:00',
      '1080012:00:00',
      '60:00:00',
      '2023-03-15T12:00:00',
      '2023-03-16T00:00:00',
      '00:00:00',
    ]);
  });

  it("keeps Excel's 29 February 1900 (serial 60) apart from 1 March", async () => {
    expect(
      await shown([
        [59, 'yyyy-mm-dd'],
        [60, 'yyyy-mm-dd'],
        [61, 'yyyy-mm-dd'],
        [60.5, 'yyyy-mm-dd hh:mm'],
        [61.5, 'yyyy-mm-dd hh:mm'],
        [59.9999999999, 'yyyy-mm-dd hh:mm'],
      ]),
    ).toEqual([
      '1900-02-28',
      '1900-02-29',
      '1900-03-01',
      '1900-02-29T12:00:00',
      '1900-03-01T12:00:00',
      '1900-02-29T00:00:00',
    ]);
  });

  it("keeps Excel's 0 January 1900 (serial 0: a time typed into a date cell) apart from 31 December 1899", async () => {
    expect(
      await shown([
        [0, 'yyyy-mm-dd'],
        [0.5, 'yyyy-mm-dd hh:mm'],
        [1, 'yyyy-mm-dd'],
        [0.5, 'hh:mm'],
      ]),
    ).toEqual(['1900-01-00', '1900-01-00T12:00:00', '1900-01-01', '12:00:00']);
  });
});

describe('dates written as ISO 8601 text (t="d" cells)', () => {
  it('read as the same dates written as serial numbers, by their style or as written', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('T');
    sheet.addRow(['day', 'at', 'plain']);
    sheet.addRow([new Date(Date.UTC(2024, 1, 29)), new Date(Date.UTC(2024, 0, 15, 13, 45, 30, 250)), 'x']);
    sheet.addRow([new Date(Date.UTC(1950, 5, 1)), new Date(Date.UTC(1970, 0, 1)), 'y']);
    sheet.getColumn(1).numFmt = 'd-mmm-yy';
    sheet.getColumn(2).numFmt = 'yyyy-mm-dd hh:mm:ss.000';
    const serial = Buffer.from(await wb.xlsx.writeBuffer());
    const iso = ['2024-02-29', '2024-01-15T13:45:30.250', '1950-06-01', '1970-01-01T00:00:00Z'];
    let n = 0;
    const sheetXml = (edit: (xml: string) => string) =>
      rezip(serial, (parts) => {
        const name = Object.keys(parts).find((k) => /worksheets\/sheet1\.xml$/.test(k))!;
        parts[name] = strToU8(edit(strFromU8(parts[name]!)));
      });
    // Each serial date cell of columns A and B as its ISO text.
    const asIso = sheetXml((xml) =>
      xml.replace(/<c r="([AB][23])"( s="\d+")?><v>[^<]*<\/v><\/c>/g, (_, ref, style) => {
        return `<c r="${ref}"${style ?? ''} t="d"><v>${iso[n++]}</v></c>`;
      }),
    );
    expect(n).toBe(4);
    ws.write('serial.xlsx', serial);
    ws.write('iso.xlsx', asIso);
    const expected = [
      ['2024-02-29', '2024-01-15T13:45:30.25', 'x'],
      ['1950-06-01', '1970-01-01T00:00:00', 'y'],
    ];
    expect(cells(readXlsx(join(ws.dir, 'serial.xlsx')))).toEqual(expected);
    expect(cells(readXlsx(join(ws.dir, 'iso.xlsx')))).toEqual(expected);
    // Without a date style: a date, a date and time, a time, each as written (a day before the
    // 1900 system's 29 February that never was, too).
    const unstyled = sheetXml((xml) =>
      xml
        .replace(/<c r="A2"[^>]*>.*?<\/c>/, '<c r="A2" t="d"><v>2024-03-01</v></c>')
        .replace(/<c r="B2"[^>]*>.*?<\/c>/, '<c r="B2" t="d"><v>2024-03-01T08:00:00</v></c>')
        .replace(/<c r="A3"[^>]*>.*?<\/c>/, '<c r="A3" t="d"><v>13:45:30</v></c>')
        .replace(/<c r="B3"[^>]*>.*?<\/c>/, '<c r="B3" t="d"><v>1900-02-28</v></c>'),
    );
    ws.write('unstyled.xlsx', unstyled);
    expect(cells(readXlsx(join(ws.dir, 'unstyled.xlsx'))).map((r) => r.slice(0, 2))).toEqual([
      ['2024-03-01', '2024-03-01T08:00:00'],
      ['13:45:30', '1900-02-28'],
    ]);
    // A day before the 1900 system's first, styled as a date or not: as written (its serial
    // would be 0, the 0 January 1900 Excel shows for a serial 0).
    const early = sheetXml((xml) =>
      xml
        .replace(/<c r="A2"([^>]*)>.*?<\/c>/, '<c r="A2"$1 t="d"><v>1899-12-31</v></c>')
        .replace(/<c r="C2"[^>]*>.*?<\/c>/, '<c r="C2" t="d"><v>1899-12-31T06:00:00</v></c>'),
    );
    ws.write('early.xlsx', early);
    expect(cells(readXlsx(join(ws.dir, 'early.xlsx')))[0]).toEqual([
      '1899-12-31',
      '2024-01-15T13:45:30.25',
      '1899-12-31T06:00:00',
    ]);
    // A day that does not exist is refused, naming the cell.
    ws.write(
      'bad.xlsx',
      sheetXml((xml) => xml.replace(/<c r="A2"[^>]*>.*?<\/c>/, '<c r="A2" t="d"><v>2024-02-30</v></c>')),
    );
    expect(() => readXlsx(join(ws.dir, 'bad.xlsx'))).toThrow(/cell A2 holds no ISO 8601 date/);
  });
});

describe('workbooks that cannot be read', () => {
  it('names a missing sheet with the workbook’s sheets, by name or by position', async () => {
    const ws = adultWorkspace(1);
    ws.write('two.xlsx', await workbook(['a'], [[1]], { decoy: true }));
    const path = join(ws.dir, 'two.xlsx');
    const byName = refusal(() => readXlsx(path, { sheet: 'Sheet1' }));
    expect(byName.code).toBe('E_XLSX_SHEET');
    expect(byName.message).toBe(
      'two.xlsx: no sheet is named "Sheet1"; the workbook\'s 2 sheets are "Notes", "Data"',
    );
    const byPosition = refusal(() => readXlsx(path, { sheet: 3 }));
    expect(byPosition.message).toBe(
      'two.xlsx: format.sheet is 3, but the workbook has 2 sheets ("Notes", "Data")',
    );
    expect(byPosition.hint).toMatch(/format.*sheet/);
  });

  it('reads the first visible sheet by default, a hidden one when named, and points an empty sheet at the others', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const lookup = wb.addWorksheet('Lookup');
    lookup.addRow(['code']);
    lookup.state = 'hidden';
    wb.addWorksheet('Data').addRow(['a']).worksheet.addRow([1]);
    ws.write('hidden.xlsx', Buffer.from(await wb.xlsx.writeBuffer()));
    const path = join(ws.dir, 'hidden.xlsx');
    expect(cells(readXlsx(path))).toEqual([['1']]);
    // Named, or by its position (hidden sheets count), a hidden sheet is read: here, a header alone.
    for (const sheet of ['Lookup', 1]) {
      const empty = refusal(() => readXlsx(path, { sheet }));
      expect(empty.code).toBe('E_INPUT_NO_ROWS');
      expect(empty.message).toBe('hidden.xlsx sheet "Lookup": the sheet has a header row but no rows');
      expect(empty.hint).toBe(
        'the workbook\'s sheets: "Lookup" (hidden), "Data"; name the one holding the table in "format": { "sheet": "…" } (ppdp init: --sheet)',
      );
    }
  });

  it('passes over a chart sheet the workbook opens on, and refuses one that is named', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('Data').addRow(['a']).worksheet.addRow([1]);
    // ExcelJS writes no chart sheets: one is listed first in the workbook by hand.
    const files = unzipSync(Buffer.from(await wb.xlsx.writeBuffer()));
    const edit = (name: string, change: (xml: string) => string) => {
      files[name] = strToU8(change(strFromU8(files[name]!)));
    };
    edit('xl/workbook.xml', (xml) =>
      xml.replace('<sheets>', '<sheets><sheet name="Chart" sheetId="9" r:id="rIdChart"/>'),
    );
    edit('xl/_rels/workbook.xml.rels', (xml) =>
      xml.replace(
        '</Relationships>',
        '<Relationship Id="rIdChart" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/chartsheet" Target="chartsheets/sheet1.xml"/></Relationships>',
      ),
    );
    files['xl/chartsheets/sheet1.xml'] = strToU8(
      '<chartsheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetViews><sheetView workbookViewId="0"/></sheetViews></chartsheet>',
    );
    ws.write('chart.xlsx', zipSync(files));
    const path = join(ws.dir, 'chart.xlsx');
    expect(cells(readXlsx(path))).toEqual([['1']]);
    for (const sheet of ['Chart', 1]) {
      const chart = refusal(() => readXlsx(path, { sheet }));
      expect(chart.code).toBe('E_XLSX_SHEET');
      expect(chart.message).toBe(
        'chart.xlsx sheet "Chart": the sheet is a chart or dialog sheet, not a table',
      );
    }
  });

  it('refuses a file that is not a workbook, a ZIP of something else, and one cut short', async () => {
    const ws = adultWorkspace(1);
    ws.write('text.xlsx', 'name;age;zip\nAnn;37;12345\nBob;41;54321\n');
    ws.write('other.xlsx', zipSync({ 'readme.txt': strToU8('hello') }));
    const good = await workbook(
      ['a', 'b'],
      Array.from({ length: 2000 }, (_, i) => [i, `v${i % 17}`]),
    );
    ws.write('cut.xlsx', good.subarray(0, Math.floor(good.length * 0.7)));
    const mangled = Buffer.from(good);
    const sheet = centralEntry(mangled, 'xl/worksheets/sheet1.xml');
    const start = mangled.readUInt32LE(sheet + 42) + 30 + 'xl/worksheets/sheet1.xml'.length;
    for (let k = start + 100; k < start + 400; k++) mangled[k] = (k * 31) & 0xff;
    ws.write('mangled.xlsx', mangled);
    for (const [name, problem] of [
      ['text.xlsx', /not a ZIP archive/],
      ['other.xlsx', /no workbook part/],
      ['cut.xlsx', /ZIP archive/],
      ['mangled.xlsx', /cannot be inflated|CRC-32|inflates to/],
    ] as const) {
      const err = refusal(() => readXlsx(join(ws.dir, name)));
      expect(err.code, name).toBe('E_XLSX_CORRUPT');
      expect(err.message).toMatch(new RegExp(`^${name.replace('.', '\\.')}: not a readable Excel workbook`));
      expect(err.message).toMatch(problem);
      expect(err.hint).toMatch(/save it again/);
    }
  });

  it('names a part that is not what the workbook says it is by what it should hold', async () => {
    const ws = adultWorkspace(1);
    const good = await workbook(['postcode', 'note'], [[12345, 'seen by GP']], { sharedStrings: true });
    const notStrings = rezip(good, (parts) => {
      expect(parts['xl/sharedStrings.xml']).toBeDefined();
      parts['xl/sharedStrings.xml'] = strToU8('<?xml version="1.0"?><table><row/></table>');
    });
    ws.write('strings.xlsx', notStrings);
    const err = refusal(() => readXlsx(join(ws.dir, 'strings.xlsx')));
    expect(err.code).toBe('E_XLSX_CORRUPT');
    expect(err.message).toBe(
      'strings.xlsx: not a readable Excel workbook (xl/sharedStrings.xml should be the shared strings part ' +
        '(the texts the cells share), but it does not start with <sst>)',
    );
    expect(err.message).not.toMatch(/a sst/);
  });

  it('refuses a zip bomb before inflating it, and a part inflating past the size it declares', async () => {
    const ws = adultWorkspace(1);
    const good = await workbook(['a'], [[1]]);
    // 16 MiB of one repeated byte: deflate packs it more than 1,000-fold.
    const filler = Buffer.alloc(16 * 1024 * 1024, 0x20);
    const bomb = rezip(good, (parts) => {
      parts['xl/worksheets/sheet1.xml'] = filler;
    });
    ws.write('bomb.xlsx', bomb);
    const err = refusal(() => readXlsx(join(ws.dir, 'bomb.xlsx')));
    expect(err.code).toBe('E_LIMIT_XLSX_PART');
    expect(err.message).toMatch(
      /^bomb\.xlsx: xl\/worksheets\/sheet1\.xml declares 16,7\d\d,\d{3} bytes from [\d,]+ compressed \(\d+×\), over the limit of 1,000×/,
    );

    // The same bytes declaring 1 MiB (below the ratio's floor): inflating stops past it.
    const lying = Buffer.from(bomb);
    const entry = centralEntry(lying, 'xl/worksheets/sheet1.xml');
    lying.writeUInt32LE(1024 * 1024, entry + 24);
    ws.write('lying.xlsx', lying);
    const lie = refusal(() => readXlsx(join(ws.dir, 'lying.xlsx')));
    expect(lie.code).toBe('E_XLSX_CORRUPT');
    expect(lie.message).toMatch(
      /^lying\.xlsx: .*sheet1\.xml inflates to more than the 1,048,576 bytes it declares/,
    );

    // Declaring more than it holds is corrupt too.
    const short = Buffer.from(good);
    const shortEntry = centralEntry(short, 'xl/worksheets/sheet1.xml');
    short.writeUInt32LE(short.readUInt32LE(shortEntry + 24) + 10, shortEntry + 24);
    ws.write('short.xlsx', short);
    expect(refusal(() => readXlsx(join(ws.dir, 'short.xlsx'))).message).toMatch(
      /inflates to [\d,]+ bytes, not the/,
    );
  }, 60_000);

  it('refuses a part declaring a document type (entities are never expanded)', async () => {
    const ws = adultWorkspace(1);
    const good = await workbook(['a', 'b'], [['x', 'y']]);
    const laughs = rezip(good, (parts) => {
      const sst = strFromU8(parts['xl/sharedStrings.xml']!);
      const dtd =
        '<!DOCTYPE sst [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>';
      parts['xl/sharedStrings.xml'] = strToU8(
        sst.replace('<sst', `${dtd}<sst`).replace('<t>x</t>', '<t>&c;</t>'),
      );
    });
    ws.write('laughs.xlsx', laughs);
    const err = refusal(() => readXlsx(join(ws.dir, 'laughs.xlsx')));
    expect(err.code).toBe('E_XLSX_CORRUPT');
    expect(err.message).toMatch(/^laughs\.xlsx: .*sharedStrings\.xml declares a document type/);
    // Without the declaration, an undeclared entity is an error, not text.
    const undeclared = rezip(good, (parts) => {
      const sst = strFromU8(parts['xl/sharedStrings.xml']!);
      parts['xl/sharedStrings.xml'] = strToU8(sst.replace('<t>x</t>', '<t>&c;</t>'));
    });
    ws.write('undeclared.xlsx', undeclared);
    expect(refusal(() => readXlsx(join(ws.dir, 'undeclared.xlsx'))).message).toMatch(/undeclared entity/);
  });

  it('refuses a password-protected and a legacy .xls workbook (OLE compound files), saying what to save', () => {
    const ws = adultWorkspace(1);
    const compound = (streams: string[]) => {
      // A compound file's header, then a directory sector of 128-byte entries named in UTF-16.
      const bytes = Buffer.alloc(512 + 512 * 2);
      Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(bytes, 0);
      for (const [i, name] of ['Root Entry', ...streams].entries()) {
        const at = 512 + i * 128;
        bytes.write(name, at, 'utf16le');
        bytes.writeUInt16LE((name.length + 1) * 2, at + 64);
      }
      return bytes;
    };
    ws.write('locked.xlsx', compound(['EncryptionInfo', 'EncryptedPackage']));
    ws.write('old.xls', compound(['Workbook', '\u0005SummaryInformation']));
    const locked = refusal(() => readTable(join(ws.dir, 'locked.xlsx')));
    expect(locked.code).toBe('E_XLSX_PASSWORD');
    expect(locked.message).toBe('locked.xlsx: the workbook is protected by a password (it is encrypted)');
    expect(locked.hint).toMatch(/save an unprotected copy/);
    // By extension, an .xls goes to the Excel reader, which names it.
    const old = refusal(() => readTable(join(ws.dir, 'old.xls')));
    expect(old.code).toBe('E_XLSX_LEGACY');
    expect(old.message).toMatch(/^old\.xls: a legacy Excel 97–2003 workbook/);
    expect(old.hint).toMatch(/save it as an Excel workbook \(\.xlsx\) or as CSV/);
  });

  it('refuses a formula without a stored result, a value right of the header, and a column without a name', async () => {
    const ws = adultWorkspace(1);
    const good = await workbook(['a', 'b'], [[1, 2]]);
    const edit = (change: (sheet: string) => string) =>
      rezip(good, (parts) => {
        parts['xl/worksheets/sheet1.xml'] = strToU8(change(strFromU8(parts['xl/worksheets/sheet1.xml']!)));
      });
    ws.write(
      'formula.xlsx',
      edit((s) => s.replace('<c r="B2"><v>2</v></c>', '<c r="B2"><f>A2*2</f></c>')),
    );
    ws.write(
      'ragged.xlsx',
      edit((s) => s.replace('<v>2</v></c>', '<v>2</v></c><c r="D2"><v>5</v></c>')),
    );
    ws.write(
      'header.xlsx',
      edit((s) => s.replace(/<c r="A1"[^>]*>.*?<\/c>/, '')),
    );
    const formula = refusal(() => readXlsx(join(ws.dir, 'formula.xlsx')));
    expect(formula.code).toBe('E_XLSX_FORMULA');
    expect(formula.message).toMatch(/^formula\.xlsx sheet "Data" cell B2: a formula without a stored result/);
    const ragged = refusal(() => readXlsx(join(ws.dir, 'ragged.xlsx')));
    expect(ragged.code).toBe('E_XLSX_RAGGED');
    expect(ragged.message).toBe(
      'ragged.xlsx sheet "Data" cell D2: a value right of the header\'s last column (B)',
    );
    const header = refusal(() => readXlsx(join(ws.dir, 'header.xlsx')));
    // The header's names from column B: column A, holding values, has none.
    expect(header.code).toBe('E_XLSX_HEADER');
    expect(header.message).toBe(
      'header.xlsx sheet "Data" cell A2: a value in column A, which has no name in the header row (row 1, from column B)',
    );
    expect(header.hint).toMatch(/give column A a name in cell A1 \(a column of row labels/);
  });

  it("refuses empty rows between rows and a row past the sheet's last, making no rows of them", async () => {
    const ws = adultWorkspace(1);
    const good = await workbook(
      ['a', 'b'],
      [
        [1, 2],
        [3, 4],
      ],
    );
    // The sheet's second row moved to `number`: the rows between hold nothing.
    const moved = (number: number) =>
      rezip(good, (parts) => {
        const sheet = strFromU8(parts['xl/worksheets/sheet1.xml']!);
        parts['xl/worksheets/sheet1.xml'] = strToU8(
          sheet.replace(/<row r="3"/, `<row r="${number}"`).replace(/r="([AB])3"/g, `r="$1${number}"`),
        );
      });
    ws.write('gap.xlsx', moved(1_048_576));
    ws.write('far.xlsx', moved(2_147_483_647));
    // Before: 1,048,573 rows of empty cells (with emptyCells "value", a release of them).
    const gap = refusal(() => readXlsx(join(ws.dir, 'gap.xlsx')));
    expect(gap.code).toBe('E_XLSX_RAGGED');
    expect(gap.message).toBe(
      'gap.xlsx sheet "Data" rows 3–1048575 hold no value, between rows of the table that do',
    );
    expect(gap.hint).toMatch(/^delete the empty rows/);
    const one = moved(4);
    ws.write('one.xlsx', one);
    expect(refusal(() => readXlsx(join(ws.dir, 'one.xlsx'))).message).toMatch(/ row 3 holds no value/);
    const far = refusal(() => readXlsx(join(ws.dir, 'far.xlsx')));
    expect(far.code).toBe('E_XLSX_CORRUPT');
    expect(far.message).toMatch(
      /^far\.xlsx: .*far\.xlsx sheet "Data" has a row numbered 2147483647, past a worksheet's last row \(1,048,576\)/,
    );
  });
});

describe('format.sheet in the spec', () => {
  it('is a name of 1 to 31 characters or a position from 1, of an Excel input only', () => {
    const ws = adultWorkspace(1);
    for (const sheet of ['Data', 2]) {
      ws.editSpec((s) => {
        s.format = { type: 'xlsx', sheet };
      });
      expect(loadSpec(ws.spec).format.sheet).toBe(sheet);
    }
    // A sheet of a CSV input is a contradiction, named when the input is read.
    const csv = refusal(() => readTable(join(ws.dir, 'adult.csv'), { sheet: 'Data' }));
    expect(csv.code).toBe('E_SPEC_CONFLICT');
    expect(csv.message).toBe('format.sheet is set, but adult.csv is read as CSV, which has no sheets');
    for (const sheet of [0, 1.5, '', 'x'.repeat(32), true]) {
      ws.editSpec((s) => {
        s.format = { sheet };
      });
      const err = refusal(() => loadSpec(ws.spec));
      expect(err.code).toBe('E_SPEC_TYPE');
      expect(err.message).toMatch(/format\.sheet must be a sheet's name/);
    }
  });
});
