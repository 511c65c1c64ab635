/**
 * Excel sheets as people lay them out, written by a maintained writer (exceljs): numbers in a
 * code format (a ZIP code `00000`) read as Excel's CSV export writes them (`01007`), numbers in
 * a quantity's format (`0%`, `0.00`, `#,##0`) as the numbers they are; a table below a title,
 * right of empty columns, with stray blanks beside it, read as its table; and messages about a
 * sheet that holds no table name the sheet and the workbook's other sheets.
 */
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import type { EncodedTable } from '../../src/data/table.ts';
import { readXlsx } from '../../src/data/xlsx.ts';
import { PpdpError } from '../../src/errors.ts';
import { readInputShards } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

function cells(table: EncodedTable): string[][] {
  return Array.from({ length: table.rowCount }, (_, r) =>
    table.columns.map((c) => c.dictionary[c.codes[r]!]!),
  );
}

function refusal(read: () => unknown): PpdpError {
  try {
    read();
  } catch (err) {
    if (err instanceof PpdpError) return err;
    throw err;
  }
  throw new Error('expected a refusal');
}

/** A workbook of one sheet "Data" that `lay` fills; its path in `ws`. */
async function sheet(ws: Workspace, name: string, lay: (s: ExcelJS.Worksheet) => void): Promise<string> {
  const wb = new ExcelJS.Workbook();
  lay(wb.addWorksheet('Data'));
  ws.write(name, Buffer.from(await wb.xlsx.writeBuffer()));
  return join(ws.dir, name);
}

/** Values into row `row` from column `col` (1-based). */
function put(s: ExcelJS.Worksheet, row: number, col: number, values: readonly unknown[]): void {
  values.forEach((v, i) => {
    s.getCell(row, col + i).value = v as ExcelJS.CellValue;
  });
}

describe('number formats', () => {
  it('writes a whole number in a code format as Excel shows it, and a quantity as the number it is', async () => {
    const ws = adultWorkspace(1);
    // Each column's format, a value, and the text the cell is read as.
    const columns: [string, number, string][] = [
      ['00000', 1007, '01007'], // ZIP code
      ['00000', 123456, '123456'], // more digits than zeros: all of them
      ['00000-0000', 12345678, '01234-5678'], // ZIP+4
      ['000\\-00\\-0000', 12345678, '012-34-5678'], // SSN, as Excel stores it
      ['[<=9999999]###\\-####;\\(###\\)\\ ###\\-####', 5551234, '555-1234'], // phone, 7 digits
      ['[<=9999999]###\\-####;\\(###\\)\\ ###\\-####', 2125551234, '(212) 555-1234'],
      ['00000', 1007.5, '1007.5'], // not whole: never rounded
      ['00000', -42, '-42'],
      ['0%', 0.25, '0.25'],
      ['0.00', 3.1, '3.1'],
      ['#,##0', 1234567, '1234567'],
      ['"€"#,##0.00;[Red]-"€"#,##0.00', 1234.5, '1234.5'],
      ['0 "kg"', 70, '70'],
      ['@', 1007, '1007'], // text format: Excel shows the number too
    ];
    const path = await sheet(ws, 'formats.xlsx', (s) => {
      s.addRow(columns.map((_, i) => `c${i}`));
      s.addRow(columns.map(([, value]) => value));
      columns.forEach(([format], i) => {
        s.getCell(2, i + 1).numFmt = format;
      });
    });
    expect(cells(readXlsx(path))).toEqual([columns.map(([, , text]) => text)]);
  });
});

describe('where the table is on the sheet', () => {
  const header = ['name', 'age', 'zip'];
  const rows = [
    ['Ann', 37, '12345'],
    ['Bob', 41, '54321'],
  ];
  const expected = rows.map((r) => r.map(String));

  it('passes over a title above the header and empty columns left of the table', async () => {
    const ws = adultWorkspace(1);
    const titled = await sheet(ws, 'title.xlsx', (s) => {
      s.addRow(['Patients, 2024 (confidential)']);
      s.mergeCells('A1:C1');
      s.addRow(['exported from the clinic system']);
      s.addRow([]);
      s.addRow(header);
      for (const r of rows) s.addRow(r);
    });
    const offset = await sheet(ws, 'offset.xlsx', (s) => {
      s.getCell('A1').value = 'Patients'; // a title, in the column left of the table
      put(s, 3, 2, header); // from column B
      for (const [k, r] of rows.entries()) put(s, k + 4, 2, r);
      s.getCell('A9').value = ' '; // blanks beside the table, and below it, are no values
      s.getCell('E4').value = '  ';
      s.getCell('F12').value = ' ';
    });
    for (const path of [titled, offset]) {
      const table = readXlsx(path);
      expect(table.columns.map((c) => c.name)).toEqual(header);
      expect(cells(table)).toEqual(expected);
    }
    // Messages name the cells where they are: the header on row 4 from column A; row 3 from B.
    expect(readXlsx(titled).origins?.[0]).toMatchObject({ firstRow: 3, sheet: { letters: ['A', 'B', 'C'] } });
    expect(readXlsx(offset).origins?.[0]).toMatchObject({ firstRow: 2, sheet: { letters: ['B', 'C', 'D'] } });
  });

  it('reads a table of one column whole, and never takes a header lacking names for a title', async () => {
    const ws = adultWorkspace(1);
    const names = ['name', ...Array.from({ length: 8 }, (_, i) => `person ${i}`)];
    const one = await sheet(ws, 'one.xlsx', (s) => {
      for (const n of names) s.addRow([n]);
    });
    expect(cells(readXlsx(one))).toEqual(names.slice(1).map((n) => [n]));
    // A header row missing its first name, above rows of values: the unnamed column is refused.
    const unnamed = await sheet(ws, 'unnamed.xlsx', (s) => {
      put(s, 1, 2, ['age', 'zip']);
      s.addRow(['Ann', 37, '12345']);
    });
    const err = refusal(() => readXlsx(unnamed));
    expect(err.code).toBe('E_XLSX_HEADER');
    expect(err.message).toBe(
      'unnamed.xlsx sheet "Data" cell A2: a value in column A, which has no name in the header row (row 1, from column B)',
    );
    expect(err.hint).toMatch(/give column A a name in cell A1 \(a column of row labels, such as an index/);
    // A header of one name above rows of numbers: read as the header, the rows' values refused.
    const partial = await sheet(ws, 'partial.xlsx', (s) => {
      s.addRow(['age']);
      s.addRow([37, 12345]);
    });
    const ragged = refusal(() => readXlsx(partial));
    expect(ragged.code).toBe('E_XLSX_RAGGED');
    expect(ragged.message).toBe(
      'partial.xlsx sheet "Data" cell B2: a value right of the header\'s last column (A)',
    );
    expect(ragged.hint).toMatch(
      /^row 1, read as the header, names one column: if it is a title above the table, delete it/,
    );
  });

  it('refuses a value beside the table, naming its cell, but never a blank', async () => {
    const ws = adultWorkspace(1);
    const path = await sheet(ws, 'beside.xlsx', (s) => {
      s.addRow(header);
      for (const r of rows) s.addRow(r);
      s.getCell('D2').value = ' ';
      s.getCell('E3').value = 'a note';
    });
    const err = refusal(() => readXlsx(path));
    expect(err.code).toBe('E_XLSX_RAGGED');
    expect(err.message).toBe(
      'beside.xlsx sheet "Data" cell E3: a value right of the header\'s last column (C)',
    );
    expect(err.hint).toBe('give the column a name in row 1, or clear the cells right of the table');
  });
});

describe('a sheet that holds no table', () => {
  it('is named with its header row, and the workbook’s other sheets listed', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const readme = wb.addWorksheet('README');
    readme.addRow(['This workbook holds the patient export.']);
    readme.addRow(['Contact: the data office']);
    const lookup = wb.addWorksheet('Lookup', { state: 'hidden' });
    lookup.addRow([]);
    lookup.addRow(['code', 'label']);
    lookup.addRow(['F', 'female']);
    const data = wb.addWorksheet('Data');
    data.addRow(['age', 'zip']);
    data.addRow([37, '12345']);
    ws.write('book.xlsx', Buffer.from(await wb.xlsx.writeBuffer()));
    const spec = (format: Record<string, unknown>) => {
      ws.write(
        'release.json',
        JSON.stringify({
          input: 'book.xlsx',
          format,
          attributes: {
            age: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
            zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
          },
          privacy: [{ model: 'k-anonymity', k: 1 }],
          method: { name: 'generalization' },
        }),
      );
      return loadSpec(ws.spec);
    };
    const sheets =
      'the workbook\'s sheets: "README", "Lookup" (hidden), "Data"; name the one holding the table in "format": { "sheet": "…" } (ppdp init: --sheet)';
    for (const [format, where] of [
      [{}, 'book.xlsx sheet "README" row 1: none of the 1 column names'],
      [{ sheet: 2 }, 'book.xlsx sheet "Lookup" row 2: none of the 2 column names'],
    ] as const) {
      const err = refusal(() => [...readInputShards(spec(format), 1000)]);
      expect(err.code).toBe('E_INPUT_HEADER');
      expect(err.message).toBe(`${where} is an attribute of release.json`);
      expect(err.hint).toMatch(
        new RegExp(`^${sheets.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}; or make the sheet's header row`),
      );
    }
    // A column the spec names that the sheet lacks: the sheet is named.
    const lacking = spec({ sheet: 'Data' });
    const missing = refusal(() => [
      ...readInputShards(
        { ...lacking, attributes: [...lacking.attributes, { ...lacking.attributes[0]!, name: 'sex' }] },
        1000,
      ),
    ]);
    expect(missing.code).toBe('E_SPEC_COLUMN');
    expect(missing.message).toBe('release.json: attributes.sex is not a column of book.xlsx sheet "Data"');
  });
});
