/**
 * A stored date or time outside what ppdp can write (a JavaScript date's range, ±8.64e15 ms
 * from 1970) is refused naming the file, column and row, never the value, with what to do (such
 * a sentinel means "unknown": a null): Arrow Date32 2147483647, Timestamp(s) and Date64 of 2^62,
 * Parquet DATE of the largest INT32 and TIMESTAMP_MILLIS of 2^62; never an internal error, nor
 * "corrupt". Years past 9999 or before 0 within the range are written in ISO 8601's expanded
 * form (+010000-01-01).
 */
import { join } from 'node:path';
import {
  type DataType,
  DateDay,
  DateMillisecond,
  makeData,
  makeVector,
  Table,
  TimestampSecond,
  tableToIPC,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { describe, expect, it } from 'vitest';
import { readTable } from '../../src/data/read.ts';
import { formatDate, formatTimestamp } from '../../src/data/values.ts';
import { InputError } from '../../src/errors.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const N = 10;
const AT = 7; // the row (0-based) holding the sentinel: row 8 in messages

/** The error reading `path` throws (none: undefined). */
function readError(path: string): InputError | undefined {
  try {
    readTable(path);
  } catch (err) {
    if (err instanceof InputError) return err;
    throw err;
  }
  return undefined;
}

function expectRefused(path: string, file: string): void {
  const err = readError(path);
  expect(err, file).toBeInstanceOf(InputError);
  expect(err!.code).toBe('E_INPUT_DATE_RANGE');
  expect(err!.message).toBe(
    `${file} column "extra" row ${AT + 1}: the date or time lies outside the years ppdp can write (271,821 BC to AD 275,760)`,
  );
  expect(err!.hint).toMatch(/usually stands for "unknown": write it as a null/);
  expect(err!.describe()).not.toMatch(/2147483647|4611686018427387904/);
}

describe('dates and times outside the range ppdp writes', () => {
  it('refuses an Arrow Date32, Timestamp and Date64 sentinel naming the file, column and row', () => {
    const ws = adultWorkspace(1);
    const column = <T extends DataType>(type: T, data: Int32Array | BigInt64Array) =>
      makeVector(makeData({ type, length: N, data } as never));
    const cases = {
      'date32.arrow': column(
        new DateDay(),
        Int32Array.from({ length: N }, (_, k) => (k === AT ? 2147483647 : k)),
      ),
      'ts.arrow': column(
        new TimestampSecond(),
        BigInt64Array.from({ length: N }, (_, k) => (k === AT ? 2n ** 62n : BigInt(k))),
      ),
      'date64.arrow': column(
        new DateMillisecond(),
        BigInt64Array.from({ length: N }, (_, k) => (k === AT ? 2n ** 62n : BigInt(k) * 86_400_000n)),
      ),
    };
    for (const [file, extra] of Object.entries(cases)) {
      const id = vectorFromArray(
        Array.from({ length: N }, (_, k) => `r${k}`),
        new Utf8(),
      );
      ws.write(file, tableToIPC(new Table({ id, extra }), 'file'));
      expectRefused(join(ws.dir, file), file);
    }
  });

  it('refuses a Parquet DATE and TIMESTAMP sentinel so, not as a corrupt file', () => {
    const ws = adultWorkspace(1);
    const write = (file: string, type: 'INT32' | 'INT64', converted: string, data: unknown[]) =>
      ws.write(
        file,
        new Uint8Array(
          parquetWriteBuffer({
            columnData: [
              { name: 'id', data: Array.from({ length: N }, (_, k) => `r${k}`) },
              { name: 'extra', data },
            ],
            schema: [
              { name: 'root', num_children: 2 },
              { name: 'id', type: 'BYTE_ARRAY', converted_type: 'UTF8', repetition_type: 'REQUIRED' },
              { name: 'extra', type, converted_type: converted, repetition_type: 'REQUIRED' },
            ],
          } as never),
        ),
      );
    write(
      'date.parquet',
      'INT32',
      'DATE',
      Array.from({ length: N }, (_, k) => (k === AT ? 2147483647 : k)),
    );
    write(
      'ts.parquet',
      'INT64',
      'TIMESTAMP_MILLIS',
      Array.from({ length: N }, (_, k) => (k === AT ? 2n ** 62n : BigInt(k))),
    );
    for (const file of ['date.parquet', 'ts.parquet']) expectRefused(join(ws.dir, file), file);
  });

  it('writes years past 9999 and before 0 in ISO 8601 expanded form, up to the range', () => {
    expect(formatDate(2_932_897)).toBe('+010000-01-01');
    expect(formatDate(-800_000)).toBe('-000221-09-04');
    expect(formatDate(100_000_000)).toBe('+275760-09-13');
    expect(formatDate(-100_000_000)).toBe('-271821-04-20');
    expect(() => formatDate(100_000_001)).toThrow();
    expect(formatTimestamp(8_640_000_000_000_999n, 'MILLIS', true)).toBe('+275760-09-13T00:00:00.999Z');
    expect(() => formatTimestamp(8_640_000_001_000n, 'SECONDS', false)).toThrow();
  });
});
