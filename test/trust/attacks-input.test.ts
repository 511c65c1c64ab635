/**
 * Inputs whose headers lie, and inputs past the limits at the door. Every length, count and
 * offset a file declares is a claim: an Arrow record batch declaring 200,000 or 2³¹−1 rows over
 * the bytes of 10, a Parquet page inflating past what its header declares or by more than
 * PARQUET_MAX_PAGE_RATIO, a row group declaring rows its pages do not hold. Each is refused
 * with a corruption (or limit) error naming the file and where in it, before any memory is
 * sized from the claim, and nothing is written to --out. The same for a CSV header of 10⁶
 * columns, a spec listing 10⁵, a column name or spec key megabytes long, a spec file too
 * large, a sampling fraction of 5e-324 and `--shards 10⁹`.
 *
 * Every lying file is made here: a real one written with apache-arrow or hyparquet-writer, then
 * its metadata patched.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { tableFromArrays, tableToIPC } from 'apache-arrow';
import {
  BufferRegion,
  DictionaryBatch as DictionaryBatchHeader,
  FieldNode,
  Message,
} from 'apache-arrow/ipc/metadata/message';
import type { FileMetaData } from 'hyparquet';
import { parquetMetadata } from 'hyparquet/src/metadata.js';
import { ByteWriter, parquetWriteBuffer } from 'hyparquet-writer';
import { writeMetadata } from 'hyparquet-writer/src/metadata.js';
import { describe, expect, it } from 'vitest';
import { PARQUET_MAX_PAGE_RATIO } from '../../src/data/limits.ts';
import { PpdpError } from '../../src/errors.ts';
import { MAX_SHARDS } from '../../src/pipeline/states/types.ts';
import { MAX_INPUT_COLUMNS, MAX_NAME_LENGTH, MAX_SPEC_BYTES } from '../../src/util/limits.ts';
import {
  batchHeader,
  brotliBomb,
  csvColumns,
  declaring,
  ipcMessages,
  ipcStream,
  lyingBatches,
  arrowStream as streamOf,
} from '../helpers/lying-arrow.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const CLI = new URL('../../bin/ppdp.mjs', import.meta.url).pathname;
const ROWS = 10;

/** Adult's first `rows` rows as columns of strings. */
function adultColumns(ws: Workspace, rows = ROWS): { names: string[]; columns: string[][] } {
  const { names, columns } = csvColumns(ws.read('adult.csv'), rows);
  return { names: [...names], columns: columns.map((c) => [...c]) };
}

/** A workspace whose spec reads `name` (format from its extension). */
function inputWorkspace(name: string, bytes: Uint8Array | ((ws: Workspace) => Uint8Array)): Workspace {
  const ws = adultWorkspace(ROWS);
  ws.write(name, typeof bytes === 'function' ? bytes(ws) : bytes);
  ws.editSpec((s) => {
    s.input = name;
    delete s.format;
  });
  return ws;
}

interface Refusal {
  code: string;
  message: RegExp;
  hint?: RegExp;
}

/** The error a release of `ws` stops with, in this process; nothing is written to its --out. */
async function refusedInProcess(ws: Workspace, expected: Refusal): Promise<PpdpError> {
  let error: unknown;
  try {
    await releaseTo(ws.spec, `${ws.dir}/out/lib`);
  } catch (e) {
    error = e;
  }
  expect(error, 'the release must be refused').toBeInstanceOf(PpdpError);
  const e = error as PpdpError;
  expect(e.code).toBe(expected.code);
  expect(e.message).toMatch(expected.message);
  expect(e.hint, 'every refusal says what to do').toBeTruthy();
  if (expected.hint) expect(e.hint).toMatch(expected.hint);
  expect(e.message.length, 'names are echoed truncated').toBeLessThan(1000);
  expect(ws.list('out/lib')).toBeNull();
  return e;
}

/** `ppdp release` (the built CLI) on `ws`: exit 1, the message on stderr, nothing in --out. */
function refusedByCli(ws: Workspace, message: RegExp, args: string[] = []): string {
  const r = spawnSync(
    process.execPath,
    [CLI, 'release', ws.spec, '--out', `${ws.dir}/out/cli`, '--quiet', ...args],
    // A reader that trusts the claims runs for minutes: stop it rather than wait.
    { encoding: 'utf8', timeout: 60_000, killSignal: 'SIGKILL' },
  );
  expect(r.signal, 'refused, not killed after a minute of work').toBeNull();
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/^ppdp: error: /);
  expect(r.stderr).toMatch(message);
  expect(r.stderr).toMatch(/\n {2}hint: /);
  expect(r.stderr.length).toBeLessThan(2000);
  expect(ws.list('out/cli')).toBeNull();
  return r.stderr;
}

async function refused(ws: Workspace, expected: Refusal): Promise<void> {
  const e = await refusedInProcess(ws, expected);
  refusedByCli(ws, new RegExp(escapeRegExp(e.message)));
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

// ---------------------------------------------------------------------------------------------
// Arrow

/** Adult's first rows as an Arrow IPC stream: dictionary columns (`utf8: true`: Utf8 ones). */
function arrowStream(ws: Workspace, utf8 = false): Uint8Array {
  return streamOf(csvColumns(ws.read('adult.csv'), ROWS), utf8);
}

describe('an Arrow file whose headers lie is refused before memory is sized from them', () => {
  const corrupt = (file: string, what: RegExp): Refusal => ({
    code: 'E_ARROW_CORRUPT',
    message: new RegExp(`^${escapeRegExp(file)} record batch 1 \\(at byte [\\d,]+\\): ${what.source}`),
    hint: /write the file again with an Arrow IPC writer/,
  });

  it('10 rows declaring 200,000 (the batch and each column): refused, not 199,990 invented rows', async () => {
    const ws = inputWorkspace('lies.arrow', (w) => lyingBatches(arrowStream(w), declaring(200_000, true)));
    await refused(
      ws,
      corrupt(
        'lies.arrow',
        /column "sex" declares 200,000 values, but its indices buffer holds \d+ bytes, fewer than the 200,000 × 4 it needs/,
      ),
    );
  });

  it('10 rows declaring 2³¹−1: refused at once (it wrote 15 GB and took 21 minutes)', () => {
    const ws = inputWorkspace('huge.arrow', (w) =>
      lyingBatches(arrowStream(w), declaring(2 ** 31 - 1, true)),
    );
    refusedByCli(
      ws,
      /huge\.arrow record batch 1 \(at byte [\d,]+\): column "sex" declares 2,147,483,647 values/,
    );
  });

  it('a batch declaring more rows than its columns hold', async () => {
    const ws = inputWorkspace('rows.arrow', (w) => lyingBatches(arrowStream(w), declaring(200_000, false)));
    await refused(ws, corrupt('rows.arrow', /the batch declares 200,000 rows, but column "sex" declares 10/));
  });

  it('columns declaring more values than the batch has rows', async () => {
    const ws = inputWorkspace('nodes.arrow', (w) =>
      lyingBatches(arrowStream(w), (h) =>
        batchHeader(h, { nodes: h.nodes.map(() => new FieldNode(1000, 0)) }),
      ),
    );
    await refused(ws, corrupt('nodes.arrow', /the batch declares 10 rows, but column "sex" declares 1,000/));
  });

  it('a null count above the column length, and a validity bitmap too short for the nulls', async () => {
    const more = inputWorkspace('nulls.arrow', (w) =>
      lyingBatches(arrowStream(w), (h) =>
        batchHeader(h, { nodes: h.nodes.map((n) => new FieldNode(n.length, 11)) }),
      ),
    );
    await refused(more, corrupt('nulls.arrow', /column "sex" declares 11 nulls among 10 values/));
    const bitmap = inputWorkspace('bitmap.arrow', (w) =>
      lyingBatches(arrowStream(w), (h) =>
        batchHeader(h, { nodes: h.nodes.map((n) => new FieldNode(n.length, 1)) }),
      ),
    );
    await refused(
      bitmap,
      corrupt(
        'bitmap.arrow',
        /column "sex" declares 1 null, but its validity bitmap holds 0 bytes, fewer than the 2 it needs/,
      ),
    );
  });

  it('a buffer that lies outside the message body', async () => {
    const ws = inputWorkspace('buffer.arrow', (w) =>
      lyingBatches(arrowStream(w), (h) =>
        batchHeader(h, {
          buffers: h.buffers.map((b, i) => (i === 1 ? new BufferRegion(b.offset, 1 << 30) : b)),
        }),
      ),
    );
    await refused(
      ws,
      corrupt(
        'buffer.arrow',
        /column "sex": buffer 2 \(bytes [\d,]+–[\d,]+\) lies outside the batch's body of [\d,]+ bytes/,
      ),
    );
  });

  it('string offsets that run past the data or go backwards', async () => {
    const past = inputWorkspace('offsets.arrow', (w) =>
      lyingBatches(arrowStream(w, true), (h, body) => {
        // Column 1's offsets (its buffer 2): the last one points far past its data.
        const offsets = h.buffers[1]!;
        new DataView(body.buffer, body.byteOffset).setInt32(offsets.offset + 4 * ROWS, 1 << 20, true);
        return h;
      }),
    );
    await refused(
      past,
      corrupt('offsets.arrow', /column "sex": value offsets run past its data \(\d+ bytes\)/),
    );
    const back = inputWorkspace('backwards.arrow', (w) =>
      lyingBatches(arrowStream(w, true), (h, body) => {
        const offsets = h.buffers[1]!;
        new DataView(body.buffer, body.byteOffset).setInt32(offsets.offset + 4 * 3, 0, true);
        return h;
      }),
    );
    await refused(back, corrupt('backwards.arrow', /column "sex": value offsets go backwards at value 3/));
  });

  it('a dictionary declaring more entries than its bytes hold', async () => {
    const ws = inputWorkspace('dictionary.arrow', (w) =>
      ipcStream(
        ipcMessages(arrowStream(w)).map(({ message, body }) => {
          if (!message.isDictionaryBatch()) return { message, body };
          const d = message.header() as DictionaryBatchHeader;
          const data = batchHeader(d.data, {
            length: 100_000,
            nodes: d.data.nodes.map((n) => new FieldNode(100_000, n.nullCount)),
          });
          return {
            message: Message.from(new DictionaryBatchHeader(data, d.id, d.isDelta), message.bodyLength),
            body,
          };
        }),
      ),
    );
    await refused(ws, {
      code: 'E_ARROW_CORRUPT',
      message:
        /^dictionary\.arrow dictionary batch 1 \(at byte [\d,]+\) of column "sex": the dictionary declares 100,000 values, but its offsets buffer holds \d+ bytes, fewer than the 100,001 × 4 it needs$/,
    });
  });

  it(`a schema of more than ${MAX_INPUT_COLUMNS.toLocaleString('en')} columns`, async () => {
    const wide = Object.fromEntries(
      Array.from({ length: MAX_INPUT_COLUMNS + 1 }, (_, c) => [`c${c}`, Int32Array.of(1)]),
    );
    const ws = inputWorkspace('wide.arrow', tableToIPC(tableFromArrays(wide), 'stream'));
    await refusedInProcess(ws, {
      code: 'E_LIMIT_COLUMNS',
      message: /^wide\.arrow: the schema has 10,001 columns, over the limit of 10,000$/,
    });
  });

  it('the verifier reads a staged Arrow file through the same checks', async () => {
    const { readArrow } = await import('../../src/data/arrow.ts');
    const ws = adultWorkspace(ROWS);
    ws.write('staged.arrow', lyingBatches(arrowStream(ws), declaring(200_000, true)));
    expect(() => readArrow(`${ws.dir}/staged.arrow`)).toThrow(/staged\.arrow record batch 1/);
    const { arrowRanges } = await import('../../src/data/arrow.ts');
    // Plan's walk over a file's messages refuses it too (it used to cut ranges from the claims).
    expect(() => arrowRanges(`${ws.dir}/staged.arrow`, 1000)).toThrow(/staged\.arrow record batch 1/);
  });
});

// ---------------------------------------------------------------------------------------------
// Parquet

/** Adult's first rows as Parquet (strings, uncompressed). */
function adultParquet(ws: Workspace) {
  const { names, columns } = adultColumns(ws);
  return new Uint8Array(
    parquetWriteBuffer({
      columnData: names.map((name, c) => ({ name, data: columns[c]!, type: 'STRING', nullable: false })),
      pageSize: 64 << 20,
    }),
  );
}

/** The file with its footer's metadata changed by `patch` (pages and row groups as they are). */
function patchedFooter(bytes: Uint8Array, patch: (m: FileMetaData) => void): Uint8Array {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const length = view.getUint32(bytes.length - 8, true);
  const start = bytes.length - 8 - length;
  const metadata = parquetMetadata(bytes.slice(start));
  patch(metadata);
  const writer = new ByteWriter();
  writeMetadata(writer, metadata as never);
  writer.appendUint32(0x31524150);
  return Buffer.concat([bytes.subarray(0, start), new Uint8Array(writer.getBuffer())]);
}

describe('a Parquet file whose pages or row groups lie is refused', () => {
  it(`a BROTLI page inflating more than ${PARQUET_MAX_PAGE_RATIO}× (4 MiB values of one byte)`, async () => {
    const ws = inputWorkspace('bomb.parquet', (w) => brotliBomb(adultColumns(w), 'occupation'));
    await refused(ws, {
      code: 'E_LIMIT_PARQUET_PAGE',
      message:
        /^bomb\.parquet column "occupation" page 1: the page inflates from \d+ to \d+ bytes \(\d+×\), over the limit of 1,000×$/,
      hint: /SNAPPY/,
    });
  });

  it('a GZIP page inflating to more than its header declares (zeros, over 1000×)', async () => {
    const ws = inputWorkspace('gzip.parquet', (w) => {
      const { names, columns } = adultColumns(w);
      return new Uint8Array(
        parquetWriteBuffer({
          columnData: names.map((name, c) => ({
            name,
            data: columns[c]!,
            type: 'STRING' as const,
            nullable: false,
            ...(name === 'occupation' ? { codec: 'GZIP' as const } : {}),
          })),
          // The page as written, then 16 MiB of zeros its header does not count.
          compressors: {
            GZIP: (b: Uint8Array) =>
              new Uint8Array(gzipSync(Buffer.concat([b, Buffer.alloc(16 << 20)]), { level: 9 })),
          },
        }),
      );
    });
    await refused(ws, {
      code: 'E_PARQUET_CORRUPT',
      message:
        /^gzip\.parquet column "occupation" page \d: the page inflates to more than the \d+ bytes its header declares$/,
    });
  });

  it('a row group declaring 2³¹−1 rows over pages holding 10', async () => {
    const ws = inputWorkspace('rows.parquet', (w) =>
      patchedFooter(adultParquet(w), (m) => {
        m.num_rows = 2n ** 31n - 1n;
        for (const g of m.row_groups) {
          g.num_rows = m.num_rows;
          for (const c of g.columns) c.meta_data!.num_values = m.num_rows;
        }
      }),
    );
    await refused(ws, {
      code: 'E_PARQUET_CORRUPT',
      message:
        /^rows\.parquet column "sex" rows 1–2,147,483,647: the row group declares 2,147,483,647 rows, but its pages hold 10$/,
    });
  });

  it('row counts that disagree (the file, its row groups, a column chunk)', async () => {
    const total = inputWorkspace('total.parquet', (w) =>
      patchedFooter(adultParquet(w), (m) => (m.num_rows = 11n)),
    );
    await refused(total, {
      code: 'E_PARQUET_CORRUPT',
      message: /^total\.parquet: the file declares 11 rows, but its row groups hold 10$/,
    });
    const chunk = inputWorkspace('chunk.parquet', (w) =>
      patchedFooter(adultParquet(w), (m) => (m.row_groups[0]!.columns[2]!.meta_data!.num_values = 100_000n)),
    );
    await refused(chunk, {
      code: 'E_PARQUET_CORRUPT',
      message:
        /^chunk\.parquet column "race" row group 1: the column chunk declares 100,000 values, but the row group has 10 rows$/,
    });
  });

  it('a column chunk that lies outside the file', async () => {
    const ws = inputWorkspace('outside.parquet', (w) =>
      patchedFooter(
        adultParquet(w),
        (m) => (m.row_groups[0]!.columns[1]!.meta_data!.total_compressed_size = 1n << 40n),
      ),
    );
    await refused(ws, {
      code: 'E_PARQUET_CORRUPT',
      message:
        /^outside\.parquet column "age" row group 1: the column chunk \(bytes [\d,]+–[\d,]+\) lies outside the file's [\d,]+ bytes$/,
    });
  });
});

// ---------------------------------------------------------------------------------------------
// CSV, the spec and the command line

describe('limits at the door', () => {
  it(`a CSV header of 10⁶ columns is refused at column ${MAX_INPUT_COLUMNS + 1} (it passed 6 GB)`, async () => {
    const ws = adultWorkspace(ROWS);
    const n = 1_000_000;
    const header = Array.from({ length: n }, (_, c) => `c${c}`).join(';');
    ws.write('wide.csv', `${header}\n${';'.repeat(n - 1)}\n`);
    ws.editSpec((s) => (s.input = 'wide.csv'));
    await refused(ws, {
      code: 'E_LIMIT_COLUMNS',
      message: /^wide\.csv row 1: the header has more than 10,000 columns \(the limit\)$/,
      hint: /release fewer columns/,
    });
  });

  it('a spec listing 10⁵ columns is refused as it is read (no answer in 400 s)', async () => {
    const ws = adultWorkspace(ROWS);
    ws.editSpec((s) => {
      const attributes = s.attributes as Record<string, unknown>;
      for (let c = 0; c < 100_000; c++) attributes[`extra${c}`] = { type: 'insensitive' };
    });
    await refused(ws, {
      code: 'E_LIMIT_COLUMNS',
      message: /^release\.json: attributes lists 100,009 columns, over the limit of 10,000$/,
    });
  });

  it(`a column name over ${MAX_NAME_LENGTH} characters: in the CSV header, and as a spec key (echoed cut)`, async () => {
    const long = `x${'n'.repeat(2 << 20)}`;
    const csv = adultWorkspace(ROWS);
    csv.write('adult.csv', csv.read('adult.csv').replace(/^sex;/, `${long};`));
    await refused(csv, {
      code: 'E_LIMIT_NAME',
      message:
        /^adult\.csv row 1: the name of column 1 is 2,097,153 characters long, over the limit of 1,000$/,
    });
    const spec = adultWorkspace(ROWS);
    spec.editSpec((s) => ((s.attributes as Record<string, unknown>)[long] = { type: 'insensitive' }));
    const e = await refusedInProcess(spec, {
      code: 'E_LIMIT_NAME',
      message:
        /^release\.json: attributes\.xn{199}… \(2,097,153 characters\) is a name over the limit of 1,000 characters$/,
    });
    expect(e.message).not.toContain('n'.repeat(201));
  });

  it('a header longer than the limit (a 20 MiB name) is refused before it is read whole', async () => {
    const ws = adultWorkspace(ROWS);
    ws.write('adult.csv', `${'n'.repeat(20 << 20)};${ws.read('adult.csv')}`);
    await refused(ws, {
      code: 'E_LIMIT_COLUMNS',
      message: /^adult\.csv row 1: the header row is longer than 16 MiB \(the limit\)$/,
    });
  });

  it('an unknown spec key of 4 MiB is refused at once, echoed truncated; a spec over the size limit unread', async () => {
    const ws = adultWorkspace(ROWS);
    const key = 'k'.repeat(4 << 20);
    ws.editSpec((s) => (s[key] = 1));
    const e = await refusedInProcess(ws, {
      code: 'E_LIMIT_NAME',
      message:
        /^release\.json: k{200}… \(4,194,304 characters\) is a name over the limit of 1,000 characters$/,
    });
    expect(e.hint!.length).toBeLessThan(400);
    const big = adultWorkspace(ROWS);
    big.write('release.json', `${big.read('release.json').trimEnd()}${' '.repeat(MAX_SPEC_BYTES)}`);
    await refused(big, {
      code: 'E_LIMIT_SPEC',
      message: /^release\.json: the spec file is \d+\.\d MiB, over the limit of 16 MiB$/,
    });
  });

  it('samplingFraction 5e-324 (a subnormal) is refused as the spec is read', async () => {
    const ws = adultWorkspace(ROWS);
    ws.editSpec((s) => (s.report = { population: { samplingFraction: 5e-324 } }));
    await refused(ws, {
      code: 'E_SPEC_RANGE',
      message:
        /^release\.json: report\.population\.samplingFraction must be a number from 1e-9 to 1, but found 5e-324$/,
    });
  });

  it(`--shards 10⁹ is refused before any work (at most ${MAX_SHARDS.toLocaleString('en')})`, () => {
    const ws = adultWorkspace(ROWS);
    const stderr = refusedByCli(ws, /--shards must be a whole number from 1 to 10,000 \(got '1000000000'\)/, [
      '--shards',
      '1000000000',
    ]);
    expect(stderr).toMatch(/hint: e\.g\. --shards 4/);
  });

  it.each(['__proto__', 'constructor', 'prototype'])(
    'a column named %s is released as any other',
    async (name) => {
      const ws = adultWorkspace(300);
      ws.write('adult.csv', ws.read('adult.csv').replace(/^sex;/, `${name};`));
      ws.editSpec((s) => {
        const attributes = s.attributes as Record<string, unknown>;
        const entries = Object.entries(attributes).map(([k, v]) => [k === 'sex' ? name : k, v] as const);
        // JSON.parse makes an own property of "__proto__"; the object literal would not.
        s.attributes = JSON.parse(
          `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${JSON.stringify(v)}`).join(',')}}`,
        );
      });
      const { report, manifest } = await releaseTo(ws.spec, `${ws.dir}/out/proto`);
      expect(manifest.verified).toBe(true);
      const node = (report as unknown as { generalization: { node: Record<string, number> } }).generalization
        .node;
      expect(Object.hasOwn(node, name)).toBe(true);
    },
  );
});

describe('a link in a local spec folder that leads out of it', () => {
  it("has its header quoted in no message: it may be another file's first line", async () => {
    const ws = adultWorkspace(ROWS);
    // Outside the spec's folder: a "table" whose header is a secret line, with one Adult column.
    const outside = mkdtempSync(join(tmpdir(), 'ppdp-outside-'));
    const adult = ws.read('adult.csv').split('\n');
    writeFileSync(
      join(outside, 'other.csv'),
      `sex;SECRET-LINE-root:x:0:0\n${adult
        .slice(1, 4)
        .map((l) => `${l.split(';')[0]};x`)
        .join('\n')}\n`,
    );
    symlinkSync(join(outside, 'other.csv'), join(ws.dir, 'linked.csv'));
    ws.editSpec((s) => {
      s.input = 'linked.csv';
    });
    for (const e of [
      await refusedInProcess(ws, { code: 'E_SPEC_COLUMN', message: /is not a column of linked\.csv/ }),
    ]) {
      expect(`${e.message} ${e.hint}`).not.toContain('SECRET');
      expect(e.hint).toMatch(/not quoted here/);
    }
    const stderr = refusedByCli(ws, /is not a column of linked\.csv/);
    expect(stderr).not.toContain('SECRET');
    // A link that stays inside the folder is the user's own table; a CSV's header row is still
    // not quoted (in a file without one, it is a person's record).
    ws.write('inside.csv', ws.read('adult.csv'));
    symlinkSync(join(ws.dir, 'inside.csv'), join(ws.dir, 'same.csv'));
    ws.editSpec((s) => {
      s.input = 'same.csv';
      (s.attributes as Record<string, unknown>).nosuch = { type: 'insensitive' };
    });
    const named = await refusedInProcess(ws, { code: 'E_SPEC_COLUMN', message: /nosuch is not a column/ });
    expect(named.hint).toMatch(/not quoted here: a CSV's or a sheet's header row/);
    rmSync(outside, { recursive: true, force: true });
  });
});
