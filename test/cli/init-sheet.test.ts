/**
 * `ppdp init` on an Excel workbook of several sheets (written by exceljs): a first sheet of
 * notes (a README) or without rows is passed over for the sheet holding the table, written
 * into the draft as format.sheet; init says which sheet it read, names the others, and says
 * where the table starts when a title or empty columns come before it.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import { withStdout } from '../../bench/stdout.ts';
import { initCommand } from '../../src/cli/init.ts';
import { PpdpError } from '../../src/errors.ts';
import { thrown } from '../helpers/thrown.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-init-sheet-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const HEADER = ['age', 'sex', 'zip'];

/** A workbook: `before` sheets filled by their functions, then "Data" holding a table of 20 rows. */
async function workbook(
  name: string,
  before: Record<string, (s: ExcelJS.Worksheet) => void>,
  title = false,
): Promise<string> {
  const wb = new ExcelJS.Workbook();
  for (const [sheet, fill] of Object.entries(before)) fill(wb.addWorksheet(sheet));
  const data = wb.addWorksheet('Data');
  if (title) data.addRow(['Survey responses, 2024']);
  data.addRow(HEADER);
  for (let i = 0; i < 20; i++) data.addRow([20 + i, i % 2 ? 'F' : 'M', String(10_000 + i * 7)]);
  const path = join(dir, name);
  writeFileSync(path, Buffer.from(await wb.xlsx.writeBuffer()));
  return path;
}

interface Draft {
  readonly format?: { readonly sheet?: unknown };
  readonly attributes: Record<string, unknown>;
}

function init(table: string, ...args: string[]): { out: string; draft: Draft } {
  const spec = join(dir, `${Math.random().toString(36).slice(2)}.json`);
  const { result, printed } = withStdout(() => initCommand([table, '--out', spec, ...args]));
  expect(result).toBe(0);
  return { out: printed, draft: JSON.parse(readFileSync(spec, 'utf8')) };
}

const readme = (s: ExcelJS.Worksheet) => {
  s.addRow(['This workbook holds the survey export.']);
  s.addRow(['Contact: the data office']);
};

describe('ppdp init on a workbook of several sheets', () => {
  it('drafts from the table, not a README or an empty sheet before it, and writes its name', async () => {
    const befores: Record<string, (s: ExcelJS.Worksheet) => void>[] = [
      { README: readme },
      { Notes: () => {} },
    ];
    for (const before of befores) {
      const [first] = Object.keys(before);
      const { out, draft } = init(await workbook(`${first}.xlsx`, before));
      expect(draft.format?.sheet).toBe('Data');
      expect(Object.keys(draft.attributes)).toEqual(HEADER);
      expect(out).toContain(`drafted from ${first}.xlsx sheet "Data" (20 rows)`);
      expect(out).toContain(
        first === 'README'
          ? '  format.sheet: "Data" — the first visible sheet, "README", does not look like a table (1 column, 1 row): the draft reads this one (--sheet reads another)'
          : '  format.sheet: "Data" — the first visible sheet, "Notes", holds no rows: the draft reads this one (--sheet reads another)',
      );
    }
  });

  it('reads the first sheet when it is a table, naming the others, and names them for a sheet asked for that is not', async () => {
    const path = await workbook('last.xlsx', { Codes: readme });
    const { out: asked } = init(path, '--sheet', 'Codes');
    expect(asked).toContain(
      '  sheet "Codes" does not look like a table (1 column, 1 row); the workbook\'s other sheets: "Data" (--sheet reads another)',
    );
    // The table first, notes after it: read, the others named.
    const first = new ExcelJS.Workbook();
    const data = first.addWorksheet('Data');
    data.addRow(HEADER);
    for (let i = 0; i < 20; i++) data.addRow([20 + i, 'F', String(10_000 + i)]);
    readme(first.addWorksheet('Codes'));
    writeFileSync(join(dir, 'first.xlsx'), Buffer.from(await first.xlsx.writeBuffer()));
    const { out, draft } = init(join(dir, 'first.xlsx'));
    expect(draft.format?.sheet).toBeUndefined();
    expect(out).toContain(
      '  sheet "Data" read, the first visible one; the workbook\'s other sheets: "Codes" (--sheet reads another)',
    );
  });

  it('says where the table starts below a title', async () => {
    const { out, draft } = init(await workbook('title.xlsx', {}, true));
    expect(Object.keys(draft.attributes)).toEqual(HEADER);
    expect(out).toContain(
      "  the table's header is row 2: the rows above it (empty, or a title) are not read",
    );
  });

  it("names --sheet, not the spec's format.sheet, for a sheet that is not there", async () => {
    const csv = join(dir, 'plain.csv');
    writeFileSync(csv, 'age,sex\n30,F\n');
    const onCsv = thrown(() => initCommand([csv, '--sheet', '2', '--out', join(dir, 'csv.json')]), PpdpError);
    expect(onCsv.message).toBe('--sheet is set, but plain.csv is read as CSV, which has no sheets');
    expect(onCsv.hint).toBe('leave --sheet out, or name an Excel workbook (.xlsx) as the input');
    const book = await workbook('two.xlsx', { README: readme });
    const past = thrown(
      () => initCommand([book, '--sheet', '5', '--out', join(dir, 'past.json')]),
      PpdpError,
    );
    expect(past.message).toMatch(/^two\.xlsx: --sheet is 5, but the workbook has 2 sheets/);
    expect(past.hint).toBe('give --sheet one of the sheet names, or its position from 1');
    const long = thrown(
      () => initCommand([book, '--sheet', 'x'.repeat(32), '--out', join(dir, 'long.json')]),
      PpdpError,
    );
    expect(long.message).toMatch(/^ppdp init: --sheet must be a sheet's name \(1 to 31 characters\)/);
    expect(long.hint).toBe('e.g. --sheet Data or --sheet 2');
  });
});
