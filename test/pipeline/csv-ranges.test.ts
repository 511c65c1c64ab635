/**
 * One large CSV file read as ranges side by side (Plan cuts it at line breaks, csvRanges): the
 * release is the one the file read in one piece gives, byte for byte, with the same input
 * digest; an error names the row of the file; a cut that falls inside a quoted field fails the
 * release (E_CSV_CUT), and `format.lineBreaksInQuotes` reads such a file in one piece. A cut
 * never ends a range with an empty row (a spreadsheet export's), which may end the file's rows.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { csvRanges, readCsvShards } from '../../src/data/csv.ts';
import { rawStrings } from '../../src/data/raw.ts';
import type { EncodedTable } from '../../src/data/table.ts';
import type { PpdpError } from '../../src/errors.ts';
import { executeRelease } from '../../src/pipeline/engine.ts';
import { forgetAll } from '../../src/pipeline/memo.ts';
import { storeResolver } from '../../src/pipeline/storage/index.ts';
import { unsealTrailer } from '../../src/pipeline/storage/sealed.ts';
import { Random } from '../../src/util/random.ts';
import { LocalS3 } from '../e2e/serverless-s3rver.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const ROWS = 3000;
/** Rows per shard of the releases read in ranges: Plan cuts the file into about 4 ranges. */
const PER_SHARD = 700;
/** One shard and one piece: the file read whole. */
const WHOLE = 1_000_000;

/** Notes a CSV must quote (a delimiter, a quote), non-ASCII text, and plain unique text. */
const SPECIAL = ['a;b', 'say "hi"', 'café', '日本 😀', 'x,y', ''];

const quoted = (cell: string) => (/[;"\n\r]/.test(cell) ? `"${cell.replaceAll('"', '""')}"` : cell);

/**
 * The Adult workspace of ROWS rows with a note and an amount (insensitive: passed through as
 * bytes), written with a BOM and CRLF line ends; `note(i)` overrides row i's note. Each other
 * note is `pad` bytes longer, so that the file is large enough to be cut (MIN_RANGE_BYTES a range).
 */
function workspace(note?: (i: number) => string | undefined, pad = 2000): Workspace {
  const ws = adultWorkspace(ROWS);
  const random = new Random(5);
  const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\n');
  const rows = lines.map((line, i) => {
    const text =
      note?.(i) ??
      `${random.below(3) === 0 ? SPECIAL[random.below(SPECIAL.length)]! : `seen #${i} ${random.below(1e6)}`}${'.'.repeat(pad)}`;
    return `${line};${quoted(text)};${random.below(500) / 4}`;
  });
  ws.write('adult.csv', `\uFEFF${[`${header};note;amount`, ...rows].join('\r\n')}\r\n`);
  ws.editSpec((s) => {
    const attributes = s.attributes as Record<string, unknown>;
    attributes.note = { type: 'insensitive' };
    attributes.amount = { type: 'insensitive' };
  });
  return ws;
}

/**
 * The workspace's file with empty rows, as a spreadsheet's CSV export has them: a run of
 * `between` after every 100th row (rows of empty cells) and `last` at the end (not rows), half of them
 * padded with blanks (so that cuts land among them), every line a row of delimiters.
 */
function withEmptyRows(ws: Workspace, between = 20, last = 1000): void {
  const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\r\n');
  const delimiters = ';'.repeat(header!.split(';').length - 1);
  const empty = (k: number) => (k % 2 === 0 ? delimiters : `${delimiters}${' '.repeat(1500)}`);
  const run = (n: number) => Array.from({ length: n }, (_, k) => empty(k));
  const rows = lines.flatMap((line, i) =>
    i % 100 === 99 && i < ROWS - 1 ? [line, ...run(between)] : [line],
  );
  ws.write('adult.csv', `${[header, ...rows, ...run(last)].join('\r\n')}\r\n`);
}

/** plan.json of a kept work area (its seal checked and left out). */
function planFile(work: string): { digest: string; scan: { pieces: { range?: unknown }[] } } {
  return JSON.parse(
    Buffer.from(unsealTrailer(readFileSync(join(work, 'plan.json')), 'plan.json')).toString('utf8'),
  );
}

async function release(ws: Workspace, name: string, rowsPerShard: number, workerMinRows?: number) {
  const work = join(ws.dir, 'work', name);
  const out = join(ws.dir, 'out', name);
  const result = await executeRelease(
    { spec: ws.spec, out, work: pathToFileURL(`${work}/`).href },
    { rowsPerShard, ...(workerMinRows === undefined ? {} : { workerMinRows }) },
  );
  return { out, result, plan: planFile(work) };
}

/** The release's error; nothing of it is in its output folder. */
async function failure(ws: Workspace, rowsPerShard: number): Promise<PpdpError | undefined> {
  const out = join(ws.dir, 'out', `failed-${rowsPerShard}`);
  const e = await executeRelease({ spec: ws.spec, out }, { rowsPerShard }).then(
    () => undefined,
    (e: PpdpError) => e,
  );
  expect(existsSync(out)).toBe(false);
  return e;
}

/** A table's cells, row by row, and its column names. */
function cells(tables: readonly EncodedTable[]): { names: string[]; rows: string[][] } {
  const rows: string[][] = [];
  for (const t of tables) {
    const columns = t.columns.map((c) =>
      c.raw ? rawStrings(c.raw) : Array.from(c.codes, (code) => c.dictionary[code]!),
    );
    for (let r = 0; r < t.rowCount; r++) rows.push(columns.map((c) => c[r]!));
  }
  return { names: tables[0]?.columns.map((c) => c.name) ?? [], rows };
}

const withoutTimings = (path: string) =>
  JSON.stringify({ ...JSON.parse(readFileSync(path, 'utf8')), timings: 0 });

function expectSameRelease(a: string, b: string): void {
  const files = (dir: string) => readdirSync(dir).sort();
  expect(files(b)).toEqual(files(a));
  for (const name of files(a).filter((n) => /\.(csv|arrow|parquet)$/.test(n)))
    expect(readFileSync(join(b, name)).equals(readFileSync(join(a, name))), name).toBe(true);
  expect(withoutTimings(join(b, 'report.json'))).toBe(withoutTimings(join(a, 'report.json')));
}

describe('csvRanges and a range read', () => {
  it('cut a file at rows: the ranges read in turn are the file read whole', () => {
    const ws = workspace();
    const path = join(ws.dir, 'adult.csv');
    const ranges = csvRanges(path, PER_SHARD, { sampleRows: 1000 })!;
    expect(ranges.length).toBeGreaterThanOrEqual(4);
    const bytes = readFileSync(path);
    // Each range but the first starts right after a line break (CR LF), at a row.
    for (const r of ranges.slice(1)) expect(bytes.subarray(r.start - 2, r.start).toString()).toBe('\r\n');
    expect(ranges.at(-1)!.end).toBe(bytes.length);
    const raw = new Set(['note', 'amount']);
    const read = (range?: (typeof ranges)[number]) =>
      cells([...readCsvShards(path, 500, { raw, ...(range ? { range } : {}) })]);
    const whole = read();
    const pieces = ranges.map((range) => read(range));
    expect(whole.rows.length).toBe(ROWS);
    expect(pieces.flatMap((p) => p.rows)).toEqual(whole.rows);
    for (const p of pieces) expect(p.names).toEqual(whole.names);
    expect(whole.names[0]).toBe('sex'); // the BOM is not in the first name
  });

  it('never end a range with an empty row: read in turn, they are the file read whole, its empty rows at the end left out', () => {
    const ws = workspace();
    withEmptyRows(ws);
    const path = join(ws.dir, 'adult.csv');
    const ranges = csvRanges(path, PER_SHARD, { sampleRows: 1000, ranges: 40, minRangeBytes: 1000 })!;
    const raw = new Set(['note', 'amount']);
    const read = (range?: (typeof ranges)[number]) =>
      cells([...readCsvShards(path, 500, { raw, ...(range ? { range } : {}) })]);
    const whole = read();
    expect(whole.rows.length).toBe(ROWS + 29 * 20);
    expect(ranges.flatMap((range) => read(range).rows)).toEqual(whole.rows);
    // Cuts land among empty rows (the end of the file is a run of them): each moves on past them.
    const bytes = readFileSync(path);
    for (const r of ranges.slice(1)) {
      const line = bytes.subarray(bytes.lastIndexOf(10, r.start - 2) + 1, r.start).toString();
      expect(line).toMatch(/[^; \r\n]/);
    }
    expect(ranges.length).toBeGreaterThan(20);
    expect(ranges.length).toBeLessThan(40);
  });

  it('come in a multiple of the workers that read them, when asked', () => {
    const path = join(workspace().dir, 'adult.csv');
    const alone = csvRanges(path, PER_SHARD, { sampleRows: 1000, minRangeBytes: 1000 })!.length;
    for (const multipleOf of [2, 3, 4]) {
      const ranges = csvRanges(path, PER_SHARD, { sampleRows: 1000, minRangeBytes: 1000, multipleOf })!;
      expect(ranges.length % multipleOf, `multipleOf ${multipleOf}`).toBe(0);
      expect(ranges.length).toBeGreaterThanOrEqual(alone);
      expect(ranges.length).toBeLessThan(alone + multipleOf);
      expect(ranges.at(-1)!.end).toBe(readFileSync(path).length);
    }
    // Fewer when the ranges would be too short, still a multiple; a count asked for is kept.
    expect(csvRanges(path, PER_SHARD, { sampleRows: 1000, multipleOf: 4 })!.length).toBe(4);
    expect(csvRanges(path, PER_SHARD, { sampleRows: 1000, ranges: 3, multipleOf: 2 })!.length).toBe(3);
  });

  it('leave a small file, or one with a line break in a quoted field among its first rows, whole', () => {
    const path = join(workspace().dir, 'adult.csv');
    expect(csvRanges(path, ROWS, { sampleRows: 1000 })).toBeUndefined();
    // Rows enough, but ranges of fewer bytes than a piece is worth.
    const short = join(workspace(undefined, 0).dir, 'adult.csv');
    expect(csvRanges(short, PER_SHARD, { sampleRows: 1000 })).toBeUndefined();
    expect(csvRanges(short, PER_SHARD, { sampleRows: 1000, minRangeBytes: 1000 })?.length).toBeGreaterThan(3);
    const broken = join(workspace((i) => (i === 10 ? 'two\nlines' : undefined)).dir, 'adult.csv');
    expect(csvRanges(broken, PER_SHARD, { sampleRows: 1000 })).toBeUndefined();
    expect(csvRanges(broken, PER_SHARD, { sampleRows: 5 })).toBeDefined();
  });
});

describe('a CSV file read as ranges side by side', () => {
  it('releases the bytes of the file read in one piece, with the same input digest, in threads or not', async () => {
    const ws = workspace();
    const whole = await release(ws, 'whole', WHOLE);
    expect(whole.result.plan.pieces).toBe(1);
    for (const [name, workerMinRows] of [
      ['ranges', undefined],
      ['ranges-in-workers', 0],
    ] as const) {
      const ranged = await release(ws, name, PER_SHARD, workerMinRows);
      expect(ranged.result.plan.pieces).toBeGreaterThanOrEqual(4);
      expect(ranged.plan.scan.pieces.every((p) => p.range !== undefined)).toBe(true);
      expect(ranged.result.plan.rows).toBe(ROWS);
      expect(ranged.plan.digest).toBe(whole.plan.digest);
      expectSameRelease(whole.out, ranged.out);
    }
    // Every state reading only the work area, as each would in its own Lambda.
    const apart = join(ws.dir, 'out', 'apart');
    await executeRelease(
      { spec: ws.spec, out: apart },
      {
        rowsPerShard: PER_SHARD,
        wrap: (_, handler) => async (input) => {
          forgetAll();
          return handler(input);
        },
      },
    );
    expectSameRelease(whole.out, apart);
  }, 300_000);

  it("releases a spreadsheet export's empty rows as the file read in one piece does: rows between rows, none at the end", async () => {
    const ws = workspace();
    // A third of the file's bytes runs of empty rows between rows, another at its end: Plan's cuts land in them.
    withEmptyRows(ws, 150, 5000);
    ws.editSpec((s) => {
      s.format = { ...(s.format as object), emptyCells: 'value' };
    });
    const whole = await release(ws, 'whole', WHOLE);
    const ranged = await release(ws, 'ranges', PER_SHARD);
    expect(ranged.result.plan.pieces).toBeGreaterThanOrEqual(4);
    expect(ranged.result.plan.rows).toBe(ROWS + 29 * 150);
    expect(ranged.plan.digest).toBe(whole.plan.digest);
    expectSameRelease(whole.out, ranged.out);
  }, 300_000);

  it('names the row of the file for a bad row in a later range, as the file read whole does', async () => {
    // A ragged row (the parser's error) and an empty quasi-identifier (the spec's check).
    for (const [bad, code] of [
      [(line: string) => `${line};extra`, 'E_CSV_RAGGED'],
      [(line: string) => line.replace(/^[^;]*/, ''), 'E_INPUT_EMPTY_CELL'],
    ] as const) {
      const ws = workspace();
      const lines = ws.read('adult.csv').split('\r\n');
      lines[2501] = bad(lines[2501]!); // data row 2501: row 2502 of the file
      ws.write('adult.csv', lines.join('\r\n'));
      const ranged = await failure(ws, PER_SHARD);
      const whole = await failure(ws, WHOLE);
      expect(ranged?.code).toBe(code);
      expect(whole?.code).toBe(code);
      expect(ranged?.message).toContain('row 2502');
      expect(ranged?.message).toBe(whole?.message);
    }
  }, 300_000);

  it("names the file's row of a value a hierarchy lacks in a later range, as the file read whole does", async () => {
    const ws = workspace();
    const lines = ws.read('adult.csv').split('\r\n');
    // The race of data row 2501 (row 2502 of the file), in a range after the first.
    lines[2501] = lines[2501]!.replace(/^([^;]*;[^;]*;)[^;]*/, '$1SECRET');
    ws.write('adult.csv', lines.join('\r\n'));
    expect(csvRanges(join(ws.dir, 'adult.csv'), PER_SHARD, { sampleRows: 1000 })?.length).toBeGreaterThan(3);
    const ranged = await failure(ws, PER_SHARD);
    const whole = await failure(ws, WHOLE);
    expect(ranged?.code).toBe('E_HIERARCHY_VALUE');
    expect(ranged?.message).toMatch(/: 1 row, first in adult\.csv row 2502$/);
    expect(ranged?.message).toBe(whole?.message);
  }, 300_000);

  it('refuses a column with grouped thousands in one range and decimal points in another (format.decimal ","), naming both rows', async () => {
    // Each row's amount (the last cell): `grouped(i)` for the first half's rows, else `second(i)`.
    const withAmounts = (second: (i: number) => string) => {
      const ws = workspace();
      const [header, ...lines] = ws.read('adult.csv').trimEnd().split('\r\n');
      const grouped = (i: number) => `${1 + (i % 9)}.${String(i % 1000).padStart(3, '0')}`;
      const rows = lines.map((line, i) => line.replace(/[^;]*$/, i < ROWS / 2 ? grouped(i) : second(i)));
      ws.write('adult.csv', `${[header, ...rows].join('\r\n')}\r\n`);
      ws.editSpec((s) => {
        s.format = { ...(s.format as object), decimal: ',' };
      });
      expect(csvRanges(join(ws.dir, 'adult.csv'), PER_SHARD, { sampleRows: 1000 })?.length).toBeGreaterThan(
        3,
      );
      return ws;
    };
    // 2.375 in the first half, 0.5 in the second: each range alone holds one kind.
    const ws = withAmounts((i) => `${i % 7}.5`);
    const ranged = await failure(ws, PER_SHARD);
    const whole = await failure(ws, WHOLE);

    expect(ranged?.code).toBe('E_INPUT_DECIMAL');
    expect(ranged?.message).toMatch(
      /^adult\.csv row 2, column 11: with format\.decimal "," .* but adult\.csv row 1502 holds a number with a decimal point/,
    );
    expect(ranged?.message).toBe(whole?.message);
    // No value: only the message's own examples (1.500, 0.5) have a point.
    expect(ranged?.describe().replace('as 1.500 reads', '').replace('as 0.5', '')).not.toMatch(/\d\.\d/);
    // Grouped thousands in every range, whole numbers beside them: read as whole numbers.
    const agree = withAmounts((i) => String(i));
    const released = await release(agree, 'grouped', PER_SHARD);
    expect(released.result.plan.pieces).toBeGreaterThanOrEqual(4);
    const out = readFileSync(join(released.out, 'data.csv'), 'utf8');
    // Only grouped values (3.000 to 9.999) read as 3000 or more; none is left with its point.
    expect(/;[3-9]\d{3}\r?\n/.test(out)).toBe(true);
    expect(/;\d\.\d{3}\r?\n/.test(out)).toBe(false);
  }, 300_000);

  it('fails with E_CSV_CUT when a cut falls inside a quoted line break past the rows Plan looks at; lineBreaksInQuotes releases it', async () => {
    // Past the first 1000 rows every note is lines of a few bytes: a cut lands inside one.
    const long = Array.from({ length: 250 }, (_, k) => `line ${k}`).join('\n');
    const ws = workspace((i) => (i >= 1200 ? long : undefined));
    const path = join(ws.dir, 'adult.csv');
    expect(csvRanges(path, PER_SHARD, { sampleRows: 1000 })?.length).toBeGreaterThan(1);
    const e = await failure(ws, PER_SHARD);
    expect(e?.code).toBe('E_CSV_CUT');
    expect(e?.message).toMatch(/^adult\.csv: .*a cut fell inside a quoted field that holds a line break/);
    expect(e?.hint).toContain('"lineBreaksInQuotes": true');
    const whole = await release(ws, 'whole', WHOLE);
    ws.editSpec((s) => {
      s.format = { ...(s.format as object), lineBreaksInQuotes: true };
    });
    const one = await release(ws, 'one-piece', PER_SHARD);
    expect(one.result.plan.pieces).toBe(1);
    expect(one.plan.digest).toBe(whole.plan.digest);
    for (const name of ['data.csv', 'data.arrow'])
      expect(readFileSync(join(one.out, name)).equals(readFileSync(join(whole.out, name))), name).toBe(true);
  }, 300_000);
});

describe('a CSV file in a bucket read as ranges', () => {
  it("fetches each range apart and releases what the file read whole gives; a later range's error names the file's row", async () => {
    const s3 = new LocalS3('ppdp-ranges');
    await s3.start();
    const stores = storeResolver(s3.options());
    try {
      const { store } = await stores.open('s3://ppdp-ranges/');
      const ws = workspace();
      const put = async (name: string) => {
        for (const f of readdirSync(ws.dir))
          if (statSync(join(ws.dir, f)).isFile())
            await store.put(`inbox/${name}/${f}`, readFileSync(join(ws.dir, f)));
      };
      await put('ranges');
      const options = { s3: s3.options(), workers: 2, workerMinRows: 0, rowsPerShard: PER_SHARD };
      const result = await executeRelease({ spec: 's3://ppdp-ranges/inbox/ranges/release.json' }, options);
      expect(result.plan.pieces).toBeGreaterThanOrEqual(4);
      const whole = await release(ws, 'whole', WHOLE);
      for (const name of ['data.arrow', 'data.csv']) {
        const published = Buffer.from(await store.get(`releases/ranges/${result.plan.runId}/${name}`));
        expect(published.equals(readFileSync(join(whole.out, name))), name).toBe(true);
      }
      // A ragged row in a later range: its copy holds only the range, the rows before are fetched to count them.
      const lines = ws.read('adult.csv').split('\r\n');
      lines[2501] = `${lines[2501]};extra`;
      ws.write('adult.csv', lines.join('\r\n'));
      await put('ragged');
      const e = await executeRelease({ spec: 's3://ppdp-ranges/inbox/ragged/release.json' }, options).then(
        () => undefined,
        (err: PpdpError) => err,
      );
      expect(e?.code).toBe('E_CSV_RAGGED');
      expect(e?.message).toBe((await failure(ws, WHOLE))?.message);
    } finally {
      stores.close();
      await s3.dispose();
    }
  }, 300_000);
});
