/**
 * Parquet input, measured: a table of N rows (default 10^6: a unique id string, age int, sex of
 * 2 values, 5-digit postcode strings, ISO date strings, a diagnosis of 10 values) written as
 * Parquet with SNAPPY and row groups of 250,000 rows by each candidate library (hyparquet-writer,
 * parquet-wasm), and as CSV and Arrow for comparison. Then, each in a child process of its own
 * (peak RSS from process.resourceUsage()):
 *
 * - decode only: each library's decoder over every row group, one at a time (hyparquet: its
 *   synchronous page decoder; parquet-wasm: readParquet of one row group to an Arrow table);
 * - ppdp's readers (what a release reads) over every file, whole and in shards of 250,000 rows.
 *
 * Prints a table and writes bench/results/parquet.json.
 *
 * Run: `npm run bench:parquet -- [--rows 1000000]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { tableFromArrays, tableFromIPC, tableToIPC } from 'apache-arrow';
import { parquetMetadata, parquetSchema } from 'hyparquet';
import { parquetHeader, readPage } from 'hyparquet/src/column.js';
import { convert, DEFAULT_PARSERS } from 'hyparquet/src/convert.js';
import type { ColumnDecoder } from 'hyparquet/src/types.js';
import { parquetWriteBuffer } from 'hyparquet-writer';
import { readTableShards } from '../src/data/read.ts';
import { helpIfAsked } from './help.ts';
import { machineInfo, table } from './scale.ts';

helpIfAsked(import.meta.url);

const ROW_GROUP = 250_000;
const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '1000000' },
    child: { type: 'string' },
    file: { type: 'string' },
  },
});

/**
 * This process's peak RSS. Not process.resourceUsage().maxRSS: Linux keeps that across exec, so
 * a child would report at least its parent's peak.
 */
function peakRssMiB(): number {
  const kb = /VmHWM:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Math.round(Number(kb) / 1024);
}

/** One measurement; returns the rows read. */
function child(kind: string, file: string): number {
  if (kind === 'hyparquet-decode') return hyparquetDecode(file);
  if (kind === 'parquet-wasm-decode') return parquetWasmDecode(file);
  const rowsPerShard = kind === 'ppdp-shards' ? ROW_GROUP : Number.POSITIVE_INFINITY;
  let rows = 0;
  for (const shard of readTableShards(file, rowsPerShard)) rows += shard.rowCount;
  return rows;
}

/** hyparquet's page decoder over every column chunk (strings decoded, as its default does). */
function hyparquetDecode(file: string): number {
  const bytes = readFileSync(file);
  const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  const metadata = parquetMetadata(buffer);
  const tree = parquetSchema(metadata);
  let rows = 0;
  for (const group of metadata.row_groups) {
    for (const [i, chunk] of group.columns.entries()) {
      const meta = chunk.meta_data!;
      const node = tree.children[i]!;
      const decoder: ColumnDecoder = {
        pathInSchema: meta.path_in_schema,
        type: meta.type,
        element: node.element,
        schemaPath: [tree, node],
        codec: meta.codec,
        parsers: DEFAULT_PARSERS,
      };
      const start = Number(meta.dictionary_page_offset || meta.data_page_offset);
      const reader = { view: new DataView(buffer, start, Number(meta.total_compressed_size)), offset: 0 };
      let dictionary: ReturnType<typeof convert> | undefined;
      for (let got = 0; got < Number(group.num_rows); ) {
        const header = parquetHeader(reader);
        const page = readPage(reader, header, decoder, dictionary, undefined, 0).data!;
        if (header.type === 'DICTIONARY_PAGE') dictionary = convert(page, decoder);
        else got += page.length;
      }
    }
    rows += Number(group.num_rows);
  }
  return rows;
}

/** parquet-wasm's reader, one row group at a time, to an Arrow JS table. */
function parquetWasmDecode(file: string): number {
  const wasm = loadParquetWasm();
  const bytes = readFileSync(file);
  const groups = parquetMetadata(bytes).row_groups.length;
  let rows = 0;
  for (let g = 0; g < groups; g++) {
    rows += tableFromIPC(wasm.readParquet(bytes, { rowGroups: [g] }).intoIPCStream()).numRows;
  }
  return rows;
}

/** parquet-wasm's Node build: CommonJS that loads its .wasm file from beside itself. */
function loadParquetWasm(): typeof import('parquet-wasm') {
  return createRequire(import.meta.url)('parquet-wasm');
}

interface Columns {
  id: string[];
  age: Int32Array;
  sex: string[];
  zip: string[];
  date: string[];
  diagnosis: string[];
}

function generate(rows: number): Columns {
  let s = 1;
  const rnd = () => {
    s = (Math.imul(s, 1103515245) + 12345) >>> 0;
    return s / 2 ** 32;
  };
  const c: Columns = { id: [], age: new Int32Array(rows), sex: [], zip: [], date: [], diagnosis: [] };
  const day0 = Date.UTC(1930, 0, 1);
  for (let i = 0; i < rows; i++) {
    c.id.push(`P${String(i).padStart(9, '0')}`);
    c.age[i] = 18 + Math.floor(rnd() * 80);
    c.sex.push(rnd() < 0.5 ? 'F' : 'M');
    c.zip.push(String(10000 + Math.floor(rnd() * 90000)));
    c.date.push(new Date(day0 + Math.floor(rnd() * 30000) * 86_400_000).toISOString().slice(0, 10));
    c.diagnosis.push(`D${Math.floor(rnd() * 10)}`);
  }
  return c;
}

function timed<T>(f: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = f();
  return { value, ms: Math.round(performance.now() - t0) };
}

const FILES = {
  csv: 'table.csv',
  arrow: 'table.arrow',
  'parquet (hyparquet-writer)': 'hyparquet-writer.parquet',
  'parquet (parquet-wasm)': 'parquet-wasm.parquet',
} as const;

/** Writes the table in every format into `dir`; the time each writer took and the sizes. */
function writeFiles(rows: number, dir: string): Record<string, { ms: number; bytes: number }> {
  const c = generate(rows);
  const names = ['id', 'age', 'sex', 'zip', 'date', 'diagnosis'] as const;
  const writes: Record<string, { ms: number; bytes: number }> = {};
  const write = (name: keyof typeof FILES, f: () => Uint8Array | string) => {
    const { value, ms } = timed(f);
    const path = join(dir, FILES[name]);
    writeFileSync(path, value);
    writes[name] = { ms, bytes: statSync(path).size };
  };
  write('csv', () => {
    const lines = [names.join(';')];
    for (let r = 0; r < rows; r++) lines.push(names.map((n) => c[n][r]).join(';'));
    return `${lines.join('\n')}\n`;
  });
  const arrow = tableFromArrays({ ...c });
  write('arrow', () => tableToIPC(arrow, 'file'));
  write(
    'parquet (hyparquet-writer)',
    () =>
      new Uint8Array(
        parquetWriteBuffer({
          columnData: names.map((name) => ({
            name,
            data: c[name],
            type: name === 'age' ? 'INT32' : 'STRING',
            nullable: false,
          })),
          codec: 'SNAPPY',
          rowGroupSize: ROW_GROUP,
        }),
      ),
  );
  const wasm = loadParquetWasm();
  write('parquet (parquet-wasm)', () => {
    const props = new wasm.WriterPropertiesBuilder()
      .setCompression(wasm.Compression.SNAPPY)
      .setMaxRowGroupSize(ROW_GROUP)
      .build();
    return wasm.writeParquet(wasm.Table.fromIPCStream(tableToIPC(arrow, 'stream')), props);
  });
  return writes;
}

const REPEATS = 3;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

async function main(): Promise<void> {
  const rows = Number(values.rows);
  const started = new Date();
  const machine = machineInfo();
  const dir = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-parquet-'));
  try {
    const run = (kind: string, file: string) => {
      const r = spawnSync(
        process.execPath,
        [
          '--import',
          'tsx',
          new URL(import.meta.url).pathname,
          '--child',
          kind,
          '--file',
          file,
          '--rows',
          String(rows),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      if (r.status !== 0) throw new Error(`${kind} ${file}: ${r.stderr}`);
      return JSON.parse(r.stdout);
    };
    // Written in a child, so this process stays small (see peakRssMiB).
    const writes = run('write', dir) as Record<string, { ms: number; bytes: number }>;
    const plan: { what: string; file: keyof typeof FILES }[] = [];
    for (const file of ['parquet (hyparquet-writer)', 'parquet (parquet-wasm)'] as const) {
      for (const what of ['hyparquet-decode', 'parquet-wasm-decode']) plan.push({ what, file });
    }
    for (const file of Object.keys(FILES) as (keyof typeof FILES)[]) {
      for (const what of ['ppdp-whole', 'ppdp-shards']) plan.push({ what, file });
    }
    // Every measurement once per round, rounds repeated: a load that comes and goes on a shared
    // machine spreads over all of them; the median of each is kept.
    const samples = plan.map(() => [] as { ms: number; rows: number; peakRssMiB: number }[]);
    for (let round = 0; round < REPEATS; round++) {
      for (const [i, p] of plan.entries()) samples[i]!.push(run(p.what, join(dir, FILES[p.file])));
    }
    const runs = plan.map((p, i) => {
      const got = samples[i]!;
      for (const g of got)
        if (g.rows !== rows) throw new Error(`${p.what} ${p.file}: read ${g.rows} rows, not ${rows}`);
      return {
        ...p,
        ms: median(got.map((g) => g.ms)),
        msEach: got.map((g) => g.ms),
        peakRssMiB: median(got.map((g) => g.peakRssMiB)),
      };
    });

    console.log(
      `ppdp Parquet benchmark — ${started.toISOString()}; ${machine.cpu}, ${machine.cores} cores, ` +
        `node ${machine.node}, load ${machine.loadAverage.join(' ')}; ${rows} rows`,
    );
    console.log(
      table(
        ['written by', 'ms', 'MiB'],
        Object.entries(writes).map(([k, w]) => [k, String(w.ms), (w.bytes / 2 ** 20).toFixed(1)]),
      ),
    );
    console.log(
      table(
        ['read', 'file', 'median ms', 'each', 'peak RSS MiB'],
        runs.map((r) => [r.what, r.file, String(r.ms), r.msEach.join(' '), String(r.peakRssMiB)]),
        2,
      ),
    );
    const result = {
      benchmark: 'parquet',
      date: started.toISOString(),
      machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) },
      settings: {
        rows,
        rowGroupRows: ROW_GROUP,
        codec: 'SNAPPY',
        rowsPerShard: ROW_GROUP,
        repeats: REPEATS,
        note:
          'one child process per read (node --import tsx bench/parquet.ts --child <what> --file <file>), every read ' +
          `once per round, ${REPEATS} rounds, medians kept; ms from the start of the read to its end (module loading ` +
          'excluded); peak RSS is the child’s VmHWM (module loading included); ppdp-whole reads the file as one ' +
          `table, ppdp-shards in shards of ${ROW_GROUP} rows (what Plan does); writes timed once, in a child`,
      },
      writes,
      runs,
    };
    writeFileSync(new URL('./results/parquet.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.child === 'write') {
  process.stdout.write(JSON.stringify(writeFiles(Number(values.rows), values.file!)));
} else if (values.child) {
  const t0 = performance.now();
  const rows = child(values.child, values.file!);
  const ms = Math.round(performance.now() - t0);
  process.stdout.write(JSON.stringify({ ms, rows, peakRssMiB: peakRssMiB() }));
} else {
  await main();
}
