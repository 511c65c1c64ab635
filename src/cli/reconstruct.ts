/**
 * `ppdp reconstruct <release-dir> --attributes a,b [--out file] [--format csv|json]`: estimate
 * the contingency table of chosen attributes from a randomized release and its matrices.json
 * (docs/definitions.md §5): the unbiased π̂ = (⊗ Pᵢ⁻¹)·λ, which may be negative, and the clipped and
 * renormalized version, as proportions and as counts.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { readArrow } from '../data/arrow.ts';
import { formatNumber } from '../data/csv.ts';
import type { EncodedTable } from '../data/table.ts';
import { PpdpError } from '../errors.ts';
import type { ModeMatrix } from '../kernels/kronecker/kernel.ts';
import { tsKroneckerKernel } from '../kernels/kronecker/reference.ts';
import { wasmKroneckerKernel } from '../kernels/kronecker/wasm.ts';
import { invert } from '../methods/randomization/matrices.ts';
import { flatMatrix, type MatricesFile, readMatricesFile } from '../methods/randomization/matrices-file.ts';
import {
  clipped,
  MAX_DENSE_CELLS,
  reconstructDense,
  releasedCounts,
} from '../methods/randomization/reconstruct.ts';
import { checkOut, checkReplace, fileHead, writeAtomically } from '../pipeline/out-path.ts';
import { counted, printable, thousands } from '../util/format.ts';
import { columnList, commandArgs } from './args.ts';
import { readReleasedTable } from './released-table.ts';

export const RECONSTRUCT_HELP = `Usage: ppdp reconstruct <release-dir> --attributes <a,b,…> [options]

Estimates the contingency table of the chosen attributes from a randomized release (a folder
holding data.arrow or data.csv and matrices.json): the unbiased estimate π̂ = P⁻¹·λ, where λ
is the released table and P the Kronecker product of the published distortion matrices, and
the same clipped at 0 and renormalized. The unbiased estimate can be negative in sparse cells.

Options:
  --attributes <list>  comma-separated released columns (randomized or not)      [required]
  --out <file>         write there instead of stdout; a local path, never a URL, nor inside
                       a release folder (the release's files are what it reads); its
                       folder is created; a file already there is replaced only if it is
                       an earlier output of reconstruct (its CSV or JSON), else kept
                       unless --force
  --force              replace any file at --out (never a file inside a release folder)
  --format <name>      csv (default, or from --out's extension) or json
  --kernel <name>      Kronecker kernel: wasm (default) or ts (the plain-TS reference)
  -h, --help           this help

Output (one row per cell of the table, every combination of categories):
  the attributes' values, released (count in the release), estimate and estimate_count (π̂
  as a proportion and × rows), clipped and clipped_count (clipped and renormalized).

Example:
  ppdp reconstruct out/adult-randomization --attributes education,occupation --out edu-occ.csv
`;

interface Column {
  name: string;
  categories: string[];
  inverse: ModeMatrix;
  randomized: boolean;
}

export function reconstructCommand(args: string[]): number {
  const parsed = commandArgs(
    'reconstruct',
    args,
    {
      attributes: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string' },
      kernel: { type: 'string', default: 'wasm' },
      force: { type: 'boolean', default: false },
    },
    {
      help: RECONSTRUCT_HELP,
      takes: 'exactly one release folder',
      synopsis: 'ppdp reconstruct <release-dir> --attributes a,b',
    },
  );
  if (!parsed) return 0;
  const { values, positionals } = parsed;
  if (!values.attributes) {
    throw new PpdpError(
      'E_USAGE',
      'ppdp reconstruct needs --attributes',
      'e.g. --attributes education,occupation',
    );
  }
  const format = values.format ?? (values.out?.toLowerCase().endsWith('.json') ? 'json' : 'csv');
  if (format !== 'csv' && format !== 'json') {
    throw new PpdpError('E_USAGE', `--format must be csv or json (got '${format}')`, 'omit it for csv');
  }
  if (values.kernel !== 'wasm' && values.kernel !== 'ts') {
    throw new PpdpError(
      'E_USAGE',
      `--kernel must be wasm or ts (got '${values.kernel}')`,
      'omit it to use wasm',
    );
  }
  const dir = positionals[0]!;
  if (values.out) {
    checkOut(values.out, [{ path: dir, what: 'the release reconstructed' }], 'file');
    checkReplace(values.out, 'reconstruct', values.force ?? false, (path) => isReconstruction(path, format));
  }
  const matricesPath = join(dir, 'matrices.json');
  if (!existsSync(matricesPath)) {
    throw new PpdpError(
      'E_MATRICES',
      `${dir}: no matrices.json — not a randomized release`,
      'reconstruct works on the output folder of a release with "method": { "name": "randomization" }',
    );
  }
  const matrices = readMatricesFile(matricesPath);
  const data = readRelease(dir);
  const names = columnList('--attributes', values.attributes);
  if (names.length === 0) {
    throw new PpdpError(
      'E_USAGE',
      '--attributes must list distinct column names',
      'e.g. --attributes education,occupation',
    );
  }
  const result = reconstruct(matrices, data, names, values.kernel === 'ts' ? 'ts' : 'wasm');
  const text = format === 'json' ? toJson(result) : toCsv(result);
  if (values.out) writeAtomically(values.out, text);
  else process.stdout.write(text);
  process.stderr.write(
    `ppdp: reconstructed ${printable(result.columns.map((c) => c.name).join(' × '))} (${counted(result.estimate.length, 'cell')}) from ${counted(result.rows, 'row')}; ` +
      `${counted(result.negative, 'negative estimate')} clipped\n`,
  );
  return 0;
}

function readRelease(dir: string): EncodedTable {
  const arrow = join(dir, 'data.arrow');
  if (existsSync(arrow)) return readArrow(arrow);
  const csv = join(dir, 'data.csv');
  if (existsSync(csv)) return readReleasedTable(csv);
  throw new PpdpError('E_INPUT_MISSING', `${dir}: no data.arrow or data.csv`, 'point at a release folder');
}

export interface Reconstruction {
  columns: Column[];
  rows: number;
  released: Float64Array;
  estimate: Float64Array;
  clipped: Float64Array;
  negative: number;
}

export function reconstruct(
  matrices: MatricesFile,
  data: EncodedTable,
  names: string[],
  kernel: 'ts' | 'wasm',
): Reconstruction {
  const columns: Column[] = [];
  const codes: Int32Array[] = [];
  for (const name of names) {
    const col = data.columns.find((c) => c.name === name);
    if (!col) {
      throw new PpdpError(
        'E_USAGE',
        `--attributes: '${name}' is not a column of the release`,
        `its columns are: ${data.columns.map((c) => c.name).join(', ')}`,
      );
    }
    const entry = matrices.attributes[name];
    const categories = entry?.categories ?? matrices.released[name]?.categories ?? [...col.dictionary].sort();
    const index = new Map(categories.map((c, i) => [c, i]));
    const map = col.dictionary.map((v) => index.get(v) ?? -1);
    if (map.some((x) => x < 0)) {
      throw new PpdpError(
        'E_MATRICES',
        `column '${name}' holds a value that matrices.json does not list among its categories`,
        'the release folder and its matrices.json do not belong together',
      );
    }
    codes.push(Int32Array.from(col.codes, (c) => map[c]!));
    let inverse: ModeMatrix = null;
    if (entry) {
      const d = categories.length;
      if (entry.form !== 'custom' && entry.diagonal !== undefined && d > 1) {
        const q = (1 - entry.diagonal) / (d - 1);
        const s = entry.diagonal - q;
        inverse = { a: 1 / s, b: -q / s };
      } else {
        const inv = invert(flatMatrix(entry.matrix), d);
        if (!inv)
          throw new PpdpError(
            'E_MATRICES',
            `matrices.json: the matrix of '${name}' is singular`,
            'the file is damaged',
          );
        inverse = inv;
      }
    }
    columns.push({ name, categories, inverse, randomized: entry !== undefined });
  }
  const dims = columns.map((c) => c.categories.length);
  const size = dims.reduce((a, b) => a * b, 1);
  if (size > MAX_DENSE_CELLS) {
    throw new PpdpError(
      'E_TOO_LARGE',
      `the table over ${names.join(', ')} has ${thousands(size)} cells (at most ${thousands(MAX_DENSE_CELLS)})`,
      'reconstruct fewer attributes at a time',
    );
  }
  const rows = data.rowCount;
  const released = releasedCounts(codes, dims);
  const estimate = reconstructDense(
    kernel === 'ts' ? tsKroneckerKernel : wasmKroneckerKernel,
    columns.map((c) => ({ d: c.categories.length, inverse: c.inverse })),
    released,
    rows,
  );
  let negative = 0;
  for (const x of estimate) if (x < 0) negative++;
  return { columns, rows, released, estimate, clipped: clipped(estimate), negative };
}

function cellValues(r: Reconstruction, cell: number): string[] {
  const out: string[] = new Array(r.columns.length);
  let rest = cell;
  for (let j = r.columns.length - 1; j >= 0; j--) {
    const d = r.columns[j]!.categories.length;
    out[j] = r.columns[j]!.categories[rest % d]!;
    rest = Math.floor(rest / d);
  }
  return out;
}

/** The CSV's columns after the attributes' (its header ends with them). */
const MEASURES = ['released', 'estimate', 'estimate_count', 'clipped', 'clipped_count'];

/**
 * Whether the file at `path` is an earlier output of reconstruct in the `format` written now, by
 * its first bytes: the JSON it writes (rows, then attributes), or the CSV header ending in its
 * measures. One in the other format is kept (unless --force): a file whose format changes under
 * its name is no re-run of the same output, and whatever reads it would break.
 */
function isReconstruction(path: string, format: 'csv' | 'json'): boolean {
  const head = fileHead(path);
  if (format === 'json') return /^\{\s*"rows":\s*\d+,\s*"attributes":\s*\[/.test(head);
  return head
    .split('\n', 1)[0]!
    .replace(/\r$/, '')
    .endsWith(`,${MEASURES.join(',')}`);
}

const quote = (s: string) => (/[",\r\n]/.test(s) ? `"${s.replaceAll('"', '""')}"` : s);

function toCsv(r: Reconstruction): string {
  const header = [...r.columns.map((c) => c.name), ...MEASURES];
  const lines = [header.map(quote).join(',')];
  for (let c = 0; c < r.estimate.length; c++) {
    lines.push(
      [
        ...cellValues(r, c).map(quote),
        formatNumber(r.released[c]!),
        formatNumber(r.estimate[c]!),
        formatNumber(r.estimate[c]! * r.rows),
        formatNumber(r.clipped[c]!),
        formatNumber(r.clipped[c]! * r.rows),
      ].join(','),
    );
  }
  return `${lines.join('\n')}\n`;
}

function toJson(r: Reconstruction): string {
  return `${JSON.stringify(
    {
      rows: r.rows,
      attributes: r.columns.map((c) => ({
        name: c.name,
        randomized: c.randomized,
        categories: c.categories,
      })),
      negativeEstimates: r.negative,
      cells: Array.from(r.estimate, (e, c) => ({
        values: cellValues(r, c),
        released: r.released[c],
        estimate: e,
        clipped: r.clipped[c],
      })),
    },
    null,
    1,
  )}\n`;
}
