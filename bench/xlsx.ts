/**
 * Excel (.xlsx) input, measured: the registry table with its three ride-along columns
 * (bench/registry-sample.ts; default 100,000 rows) written as a workbook by exceljs's streaming
 * writer with shared strings, as Excel writes them (age and amount numbers, birth_date a date,
 * recorded_at a date and time, the rest text). Then each candidate reader, each in a child
 * process of its own (peak RSS from /proc/self/status VmHWM), once per round, three rounds,
 * medians kept:
 *
 * - ppdp: src/data/xlsx.ts (fflate's streaming inflater, its own XML scanner), the table coded;
 * - exceljs: Workbook.xlsx.readFile (the whole workbook as objects);
 * - exceljs-stream: its streaming WorkbookReader, every row visited;
 * - read-excel-file: readSheet of read-excel-file/node, when installed (`--read-excel-file
 *   <its node_modules folder>`; it is not a dependency of ppdp).
 *
 * Prints a table and writes bench/results/xlsx.json.
 *
 * Run: `npm run bench:xlsx -- [--rows 100000] [--read-excel-file /tmp/x/node_modules]`
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import ExcelJS from 'exceljs';
import { readXlsxShards } from '../src/data/xlsx.ts';
import { Random } from '../src/util/random.ts';
import { helpIfAsked } from './help.ts';
import { REGISTRY_COLUMNS, RIDE_ALONG_COLUMNS, registryRows, rideAlongCells } from './registry-sample.ts';
import { machineInfo, median, table } from './scale.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '100000' },
    child: { type: 'string' },
    file: { type: 'string' },
    'read-excel-file': { type: 'string' },
  },
});

const REPEATS = 3;

/** This process's peak RSS (not resourceUsage().maxRSS, which Linux keeps across exec). */
function peakRssMiB(): number {
  const kb = /VmHWM:\s*(\d+) kB/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1];
  return Math.round(Number(kb) / 1024);
}

/** The registry table with its ride-along columns as a workbook, as Excel stores it. */
async function writeWorkbook(file: string, rows: number): Promise<void> {
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({
    filename: file,
    useSharedStrings: true,
    useStyles: true,
  });
  const sheet = wb.addWorksheet('registry');
  const names = [...REGISTRY_COLUMNS, ...RIDE_ALONG_COLUMNS];
  sheet.columns = names.map((name) => ({
    key: name,
    ...(name === 'birth_date' ? { style: { numFmt: 'yyyy-mm-dd' } } : {}),
    ...(name === 'recorded_at' ? { style: { numFmt: 'yyyy-mm-dd hh:mm:ss' } } : {}),
  }));
  sheet.addRow(names).commit();
  const random = new Random(20261128);
  let r = 0;
  for (const row of registryRows(rows)) {
    const [note, amount, at] = rideAlongCells(random, r++);
    const [id, age, sex, postcode, birth, diagnosis] = row;
    sheet
      .addRow([
        id,
        Number(age),
        sex,
        postcode,
        new Date(`${birth}T00:00:00Z`),
        diagnosis,
        note,
        Number(amount),
        new Date(`${at}Z`),
      ])
      .commit();
  }
  sheet.commit();
  await wb.commit();
}

/** One read; returns the rows read. */
async function child(kind: string, file: string): Promise<number> {
  switch (kind) {
    case 'ppdp': {
      let rows = 0;
      for (const shard of readXlsxShards(file, Number.POSITIVE_INFINITY)) rows += shard.rowCount;
      return rows;
    }
    case 'exceljs': {
      const wb = new ExcelJS.Workbook();
      await wb.xlsx.readFile(file);
      return wb.worksheets[0]!.actualRowCount - 1;
    }
    case 'exceljs-stream': {
      let rows = 0;
      const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, {
        sharedStrings: 'cache',
        styles: 'cache',
        worksheets: 'emit',
      });
      for await (const sheet of reader) {
        for await (const _row of sheet) rows++;
        break;
      }
      return rows - 1;
    }
    case 'read-excel-file': {
      const dir = values['read-excel-file']!;
      const { readSheet } = (await import(
        pathToFileURL(join(dir, 'read-excel-file/node/index.js')).href
      )) as {
        readSheet: (path: string) => Promise<unknown[][]>;
      };
      return (await readSheet(file)).length - 1;
    }
    default:
      throw new Error(`unknown reader ${kind}`);
  }
}

async function main(): Promise<void> {
  const rows = Number(values.rows);
  const started = new Date();
  const machine = machineInfo();
  const dir = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-xlsx-'));
  const file = join(dir, 'registry.xlsx');
  try {
    const run = (kind: string) => {
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
          ...(values['read-excel-file'] ? ['--read-excel-file', values['read-excel-file']] : []),
        ],
        { encoding: 'utf8', maxBuffer: 1 << 20 },
      );
      if (r.status !== 0) {
        // A reader that fails is recorded with its error (its first line naming it), not retried.
        const error = /^(\w*Error: .*)$/m.exec(r.stderr)?.[1] ?? r.stderr.trim().split('\n')[0]!;
        return { ms: Number.NaN, cpuMs: Number.NaN, rows: Number.NaN, peakRssMiB: Number.NaN, error };
      }
      return JSON.parse(r.stdout) as {
        ms: number;
        cpuMs: number;
        rows: number;
        peakRssMiB: number;
        error?: string;
      };
    };
    const write = run('write');
    const readers = [
      'ppdp',
      'exceljs',
      'exceljs-stream',
      ...(values['read-excel-file'] ? ['read-excel-file'] : []),
    ];
    const samples = readers.map(
      () => [] as { ms: number; cpuMs: number; rows: number; peakRssMiB: number; error?: string }[],
    );
    for (let round = 0; round < REPEATS; round++) {
      for (const [i, kind] of readers.entries()) if (!samples[i]![0]?.error) samples[i]!.push(run(kind));
    }
    const runs = readers.map((kind, i) => {
      const got = samples[i]!;
      if (got[0]?.error) return { reader: kind, failed: got[0].error };
      for (const g of got) if (g.rows !== rows) throw new Error(`${kind}: read ${g.rows} rows, not ${rows}`);
      return {
        reader: kind,
        ms: median(got.map((g) => g.ms)),
        msEach: got.map((g) => g.ms),
        cpuMs: median(got.map((g) => g.cpuMs)),
        peakRssMiB: median(got.map((g) => g.peakRssMiB)),
      };
    });
    const bytes = statSync(file).size;
    console.log(
      `ppdp .xlsx benchmark — ${started.toISOString()}; ${machine.cpu}, ${machine.cores} cores, node ${machine.node}, ` +
        `load ${machine.loadAverage.join(' ')}; ${rows} rows, ${(bytes / 2 ** 20).toFixed(1)} MiB workbook (written in ${write.ms} ms)`,
    );
    console.log(
      table(
        ['reader', 'median ms', 'each', 'CPU ms', 'peak RSS MiB'],
        runs.map((r) =>
          'failed' in r
            ? [r.reader, 'failed', r.failed ?? '', '', '']
            : [r.reader, String(r.ms), r.msEach.join(' '), String(r.cpuMs), String(r.peakRssMiB)],
        ),
      ),
    );
    const result = {
      benchmark: 'xlsx',
      date: started.toISOString(),
      machine: { ...machine, loadAverageAtEnd: os.loadavg().map((x) => Math.round(x * 100) / 100) },
      settings: {
        rows,
        columns: [...REGISTRY_COLUMNS, ...RIDE_ALONG_COLUMNS],
        workbookBytes: bytes,
        writtenBy: 'exceljs 4.4.0 stream.xlsx.WorkbookWriter, shared strings',
        repeats: REPEATS,
        note:
          'one child process per read (node --import tsx bench/xlsx.ts --child <reader> --file <file>), every reader ' +
          `once per round, ${REPEATS} rounds, medians kept; ms from the start of the read to its end (module loading ` +
          'excluded); CPU ms the read’s user + system time (on a loaded machine the figure to compare); peak RSS is ' +
          'the child’s VmHWM (module loading included)',
      },
      runs,
    };
    writeFileSync(new URL('./results/xlsx.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (values.child === 'write') {
  const t = performance.now();
  await writeWorkbook(values.file!, Number(values.rows));
  console.log(
    JSON.stringify({
      ms: Math.round(performance.now() - t),
      rows: Number(values.rows),
      peakRssMiB: peakRssMiB(),
    }),
  );
} else if (values.child) {
  const t = performance.now();
  const cpu = process.cpuUsage();
  const rows = await child(values.child, values.file!);
  const used = process.cpuUsage(cpu);
  console.log(
    JSON.stringify({
      ms: Math.round(performance.now() - t),
      cpuMs: Math.round((used.user + used.system) / 1000),
      rows,
      peakRssMiB: peakRssMiB(),
    }),
  );
} else {
  await main();
}
