/**
 * `format.decimal: ","` reads text only: a number stored as a number (an Arrow or Parquet
 * Float64 or Decimal column, an Excel number cell) keeps its value (72.125 is never 72125),
 * while text beside it (`3,75`, `1.500`) is read with a decimal point. A text column whose
 * points may be decimal points (0.125 beside 2.375) is refused, naming rows, never read as
 * thousands in silence; and `ppdp init` drafts decimal commas only for a file that writes no
 * number with a decimal point.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import {
  Decimal,
  Field,
  Float64,
  makeData,
  RecordBatch,
  Schema,
  Struct,
  Table,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { initCommand } from '../../src/cli/init.ts';
import { withDecimalPoint } from '../../src/data/decimal.ts';
import { rawStrings } from '../../src/data/raw.ts';
import { readTable, readTableShards } from '../../src/data/read.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import { InputError } from '../../src/errors.ts';
import { runCommand, said } from '../helpers/command.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const wasm = createRequire(import.meta.url)('parquet-wasm') as typeof import('parquet-wasm');

/** Each column's values by row, as read (a raw column's bytes decoded). */
function columnsOf(table: EncodedTable): Record<string, string[]> {
  return Object.fromEntries(
    table.columns.map((c) => [
      c.name,
      c.raw ? rawStrings(c.raw) : Array.from(c.codes, (code) => c.dictionary[code]!),
    ]),
  );
}

/** A Decimal128 column's words. */
function decimalWords(values: bigint[]): Uint32Array {
  const words = new Uint32Array(values.length * 4);
  values.forEach((v, i) => {
    let u = BigInt.asUintN(128, v);
    for (let w = 0; w < 4; w++) {
      words[i * 4 + w] = Number(u & 0xffffffffn);
      u >>= 32n;
    }
  });
  return words;
}

const WEIGHT = [72.125, 0.25, 1.5, 80.375, 65];
const LAB = [1500n, 250n, 2125n, 100000n, 7n]; // Decimal(10, 3): 1.500, 0.250, 2.125, 100.000, 0.007
const DOSE = ['3,75', '0,5', '12,25', '1.234,5', '2'];
const EXPECTED = {
  weight: ['72.125', '0.25', '1.5', '80.375', '65'],
  lab: ['1.500', '0.250', '2.125', '100.000', '0.007'],
  dose: ['3.75', '0.5', '12.25', '1234.5', '2'],
};

/** A table of a Float64, a Decimal(10, 3) and a text column of decimal commas. */
function typedTable(): Table {
  const n = WEIGHT.length;
  const lab = new Decimal(3, 10, 128);
  const fields = [
    new Field('weight', new Float64(), false),
    new Field('lab', lab, false),
    new Field('dose', new Utf8(), false),
  ];
  const children = [
    makeData({ type: new Float64(), length: n, data: Float64Array.from(WEIGHT) }),
    makeData({ type: lab, length: n, data: decimalWords(LAB) }),
    vectorFromArray(DOSE, new Utf8()).data[0]!,
  ];
  const schema = new Schema(fields);
  return new Table(schema, [
    new RecordBatch(schema, makeData({ type: new Struct(fields), length: n, nullCount: 0, children })),
  ]);
}

describe('format.decimal "," and typed numbers', () => {
  it('keeps Arrow and Parquet numbers (Float64, Decimal) as stored, coded or as bytes, and reads text', () => {
    const ws = adultWorkspace(1);
    const table = typedTable();
    ws.write('typed.arrow', tableToIPC(table, 'file'));
    ws.write('typed.parquet', wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(table, 'stream'))));
    for (const file of ['typed.arrow', 'typed.parquet']) {
      for (const raw of [undefined, new Set(['weight', 'lab', 'dose'])]) {
        const read = readTable(join(ws.dir, file), { decimal: ',', ...(raw ? { raw } : {}) });
        expect(columnsOf(read), `${file}${raw ? ' as bytes' : ''}`).toEqual(EXPECTED);
        expect(read.typed).toEqual(['weight', 'lab']);
      }
    }
  });

  it('keeps Excel number cells as stored and reads the decimal commas of its text cells', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Data');
    sheet.addRow(['weight', 'dose', 'count']);
    // count: whole numbers grouped by points, as text (a German CSV imported as text).
    const counts = ['1.500', '2', '12.000', '7', '3.250'];
    for (const [i, w] of WEIGHT.entries()) sheet.addRow([w, DOSE[i], counts[i]]);
    const path = join(ws.dir, 'typed.xlsx');
    writeFileSync(path, Buffer.from(await wb.xlsx.writeBuffer()));
    for (const raw of [undefined, new Set(['weight', 'dose', 'count'])]) {
      const read = readTable(path, { decimal: ',', ...(raw ? { raw } : {}) });
      expect(columnsOf(read)).toEqual({
        weight: EXPECTED.weight,
        dose: EXPECTED.dose,
        count: ['1500', '2', '12000', '7', '3250'],
      });
      expect(read.typed).toEqual(['weight']);
    }
  });

  it('never reads a number after 0. as grouped thousands', () => {
    for (const text of ['0.125', '0.250', '-0.007', '0.125,5']) expect(withDecimalPoint(text)).toBe(text);
    expect(withDecimalPoint('1.500')).toBe('1500');
    const ws = adultWorkspace(1);
    ws.write('small.csv', 'dose;n\n0.125;1\n0.250;2\n0,5;3\n');
    expect(columnsOf(readTable(join(ws.dir, 'small.csv'), { decimal: ',' })).dose).toEqual([
      '0.125',
      '0.250',
      '0.5',
    ]);
  });

  it('refuses a text column whose points may be decimal points, naming rows and never a value', () => {
    const ws = adultWorkspace(1);
    // dose_mg is written with decimal points: its 2.375 is not 2375.
    const rows = ['answers;dose_mg', '1,2;0.125', '2,3;0.25', '1;1.5', '3;2.375', '1,3;10'];
    ws.write('survey.csv', `${rows.join('\n')}\n`);
    const path = join(ws.dir, 'survey.csv');
    for (const [what, options] of [
      ['coded', { decimal: ',' as const }],
      ['as bytes', { decimal: ',' as const, raw: new Set(['dose_mg']) }],
      ['in shards of 2 rows', { decimal: ',' as const, rowsPerShard: 2 }],
    ] as const) {
      const { rowsPerShard = Number.POSITIVE_INFINITY, ...rest } = options as {
        rowsPerShard?: number;
        decimal: ',';
      };
      let error: unknown;
      try {
        for (const _ of readTableShards(path, rowsPerShard, rest)) {
          // read every shard
        }
      } catch (err) {
        error = err;
      }
      expect(error, what).toBeInstanceOf(InputError);
      const e = error as InputError;
      expect(e.code).toBe('E_INPUT_DECIMAL');
      expect(e.message, what).toMatch(
        /^survey\.csv row 5, column 2: with format\.decimal "," this number reads as a whole number .* but survey\.csv row 2 holds a number with a decimal point/,
      );
      expect(e.describe()).not.toMatch(/0\.125|0\.25|2\.375/);
    }
    // Grouped thousands beside decimal commas agree: read as whole numbers.
    ws.write('agree.csv', 'n\n2.375\n3,75\n12\n');
    expect(columnsOf(readTable(join(ws.dir, 'agree.csv'), { decimal: ',' })).n).toEqual([
      '2375',
      '3.75',
      '12',
    ]);
  });

  it('refuses such a text column of a sheet, naming its cells', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Data');
    sheet.addRow(['id', 'dose']);
    for (const [i, d] of ['0.125', '2.375', '1.5'].entries()) sheet.addRow([i, d]);
    const path = join(ws.dir, 'doses.xlsx');
    writeFileSync(path, Buffer.from(await wb.xlsx.writeBuffer()));
    expect(() => readTable(path, { decimal: ',' })).toThrow(
      /^doses\.xlsx sheet "Data" cell B3: with format\.decimal "," this number reads as a whole number .* but doses\.xlsx sheet "Data" cell B2 holds a number with a decimal point/,
    );
  });
});

describe('ppdp init and decimal commas', () => {
  it('drafts no decimal commas for a file whose numbers have decimal points, and says which column looks like a list', () => {
    const ws = adultWorkspace(1);
    const rows = ['answers;dose_mg;age'];
    for (let i = 0; i < 50; i++)
      rows.push(
        `${['1,2', '2,3', '1', '3', '1,3'][i % 5]};${['0.125', '0.25', '1.5', '2.375', '10'][i % 5]};${20 + i}`,
      );
    ws.write('survey.csv', `${rows.join('\n')}\n`);
    const spec = join(ws.dir, 'draft.json');
    const run = runCommand(() => initCommand([join(ws.dir, 'survey.csv'), '--out', spec]));
    expect(run.status, said(run)).toBe(0);
    const draft = JSON.parse(readFileSync(spec, 'utf8'));
    expect(draft.format.decimal).toBeUndefined();
    expect(draft.attributes.answers.hierarchy.groups).toBeDefined();
    expect(draft.attributes.dose_mg.hierarchy.intervals).toBeDefined();
    expect(run.stdout).toMatch(
      /format\.decimal: not set — answers holds values like 1,2, but dose_mg writes numbers with decimal points \(0\.5\): it looks like a list, not numbers/,
    );
  });

  it('drafts decimal commas for a workbook whose other numbers are number cells, which keep their values', async () => {
    const ws = adultWorkspace(1);
    const wb = new ExcelJS.Workbook();
    const sheet = wb.addWorksheet('Data');
    sheet.addRow(['weight', 'dose', 'age']);
    for (let i = 0; i < 50; i++) sheet.addRow([WEIGHT[i % 5], DOSE[i % 5], 20 + i]);
    const path = join(ws.dir, 'typed.xlsx');
    writeFileSync(path, Buffer.from(await wb.xlsx.writeBuffer()));
    const spec = join(ws.dir, 'draft.json');
    const run = runCommand(() => initCommand([path, '--out', spec]));
    expect(run.status, said(run)).toBe(0);
    const draft = JSON.parse(readFileSync(spec, 'utf8'));
    expect(draft.format.decimal).toBe(',');
    expect(run.stdout).toMatch(/format\.decimal: "," — dose holds numbers with decimal commas/);
    // Read as the draft's release reads it: the number cells keep their values.
    const read = columnsOf(readTable(path, { decimal: draft.format.decimal }));
    expect(read.weight!.slice(0, 5)).toEqual(EXPECTED.weight);
    expect(read.dose!.slice(0, 5)).toEqual(EXPECTED.dose);
  });
});
