/**
 * Synthetic data for the scaling benchmarks (a script and a module, not a test): N rows drawn
 * with a seeded PRNG from the joint distribution of the bundled Adult example (whole rows of
 * examples/adult/adult.csv, with replacement), optionally perturbed so that the number of
 * distinct quasi-identifier tuples grows with N. Every value stays inside the Adult
 * hierarchies, so the examples' release specs run on the output unchanged.
 *
 * Writes `<dir>/adult.arrow` (Arrow IPC file, every column Dictionary<Utf8, Int32>, one record
 * batch per `--batch-rows` rows: the codes of one batch are in memory at a time, the strings
 * never), optionally `<dir>/adult.csv`, and `<dir>/release.json`: the spec of
 * examples/adult/release.json with the input pointing at the synthetic file and the hierarchy
 * paths at examples/adult's files.
 *
 * Run: `npm run bench:synth -- --rows 1e6 --out /tmp/adult-1m [--perturb 0.05]` (`--help`).
 * Used as a module by bench/scale.ts and bench/growth.ts.
 */
import { once } from 'node:events';
import { createWriteStream, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import {
  Dictionary,
  Field,
  Int32,
  makeData,
  RecordBatch,
  RecordBatchFileWriter,
  Schema,
  Struct,
  Utf8,
  vectorFromArray,
} from 'apache-arrow';
import { readCsv } from '../src/data/csv.ts';
import type { EncodedTable } from '../src/data/table.ts';
import { readHierarchyRows } from '../src/hierarchy/hierarchy.ts';
import { Random } from '../src/util/random.ts';

export const ROOT = new URL('../', import.meta.url).pathname;
export const ADULT_DIR = join(ROOT, 'examples/adult');

/** Ages move by at most this much when perturbed (within the age hierarchy's leaves). */
const AGE_STEP = 5;

const HELP = `Usage: npm run bench:synth -- --rows <N> --out <dir> [options]
       tsx bench/synth.ts --rows <N> --out <dir> [options]

Writes N synthetic rows sampled (with replacement, seeded) from the rows of
examples/adult/adult.csv, as <dir>/adult.arrow (Arrow IPC, dictionary-encoded, written batch by
batch), and <dir>/release.json: examples/adult/release.json with the input set to the synthetic
file and the hierarchies pointing at examples/adult. Then:

  node bin/ppdp.mjs release <dir>/release.json --out <out>

Options:
  --rows <N>          rows to write (1e6, 10000000 and 10_000_000 all work; up to 1e7 and more)
  --out <dir>         output folder (created)
  --perturb <p>       probability that each quasi-identifier cell of a row is perturbed
                      (default 0: plain sampling, at most Adult's distinct tuples). age moves by
                      1..${AGE_STEP} years; other attributes take another value with the same parent
                      in their hierarchy (any other value for two-level hierarchies). Values
                      always stay inside the hierarchies; distinct tuples grow with N.
  --seed <s>          PRNG seed (default 1)
  --csv               also write <dir>/adult.csv (';'-delimited)
  --no-arrow          do not write adult.arrow (then release.json names adult.csv; implies --csv)
  --batch-rows <n>    rows per Arrow record batch (default 1000000)
  -h, --help          this text
`;

/** The attributes of examples/adult/release.json, by name. */
interface AdultSpec {
  input: string;
  format?: Record<string, unknown>;
  attributes: Record<string, { type: string; hierarchy?: string; scale?: string }>;
  [key: string]: unknown;
}

export function adultSpec(): AdultSpec {
  return JSON.parse(readFileSync(join(ADULT_DIR, 'release.json'), 'utf8')) as AdultSpec;
}

/** Quasi-identifiers of examples/adult/release.json in spec order. */
export function adultQis(): string[] {
  return Object.entries(adultSpec().attributes)
    .filter(([, a]) => a.type === 'quasi-identifying')
    .map(([name]) => name);
}

export interface SynthOptions {
  /** Probability that each quasi-identifier cell is perturbed (0 = plain sampling). */
  readonly perturb?: number;
  readonly seed?: number;
}

/** One column as the sampler codes it: sampler code → value. */
export interface SamplerColumn {
  readonly name: string;
  readonly values: string[];
}

/**
 * Draws rows of Adult (whole rows, with replacement) and perturbs quasi-identifier cells.
 * Deterministic: the same seed and options give the same rows, batch size aside.
 */
export class AdultSampler {
  readonly columns: SamplerColumn[];
  private readonly rows: Int32Array[];
  private readonly adultRows: number;
  /** Per column: sampler code → codes it may be perturbed to (none for non-QIs). */
  private readonly neighbours: (Int32Array[] | null)[];
  private readonly random: Random;
  private readonly threshold: number;

  constructor(options: SynthOptions = {}) {
    const perturb = options.perturb ?? 0;
    if (!(perturb >= 0 && perturb <= 1)) throw new Error(`--perturb must be in [0, 1] (got ${perturb})`);
    this.random = new Random(options.seed ?? 1);
    this.threshold = Math.round(perturb * 2 ** 32);
    const spec = adultSpec();
    const adult = readCsv(join(ADULT_DIR, 'adult.csv'), { delimiter: ';' });
    this.adultRows = adult.rowCount;
    this.columns = [];
    this.rows = [];
    this.neighbours = [];
    for (const column of adult.columns) {
      const attribute = spec.attributes[column.name];
      const values = [...column.dictionary];
      const index = new Map(values.map((v, i) => [v, i]));
      let neighbours: Int32Array[] | null = null;
      if (attribute?.type === 'quasi-identifying' && attribute.hierarchy) {
        const hierarchy = readHierarchyRows(join(ADULT_DIR, attribute.hierarchy));
        for (const row of hierarchy) {
          if (!index.has(row[0]!)) index.set(row[0]!, values.push(row[0]!) - 1);
        }
        neighbours = perturbationTargets(column.name, hierarchy, values, index);
      }
      this.columns.push({ name: column.name, values });
      // Adult's codes are the first entries of `values`: the same codes.
      this.rows.push(column.codes);
      this.neighbours.push(neighbours);
    }
  }

  /** Fills `out[c][0..n)` with the next n rows' sampler codes. */
  fill(out: Int32Array[], n: number): void {
    const random = this.random;
    const columns = this.rows.length;
    const threshold = this.threshold;
    for (let r = 0; r < n; r++) {
      const source = random.below(this.adultRows);
      for (let c = 0; c < columns; c++) {
        let code = this.rows[c]![source]!;
        const targets = this.neighbours[c];
        if (targets && threshold > 0 && random.nextU32() < threshold) {
          const t = targets[code]!;
          if (t.length > 0) code = t[random.below(t.length)]!;
        }
        out[c]![r] = code;
      }
    }
  }
}

/**
 * Per value, the values a perturbation may give it: for age, the ages within AGE_STEP years
 * (numeric leaves of its hierarchy); otherwise the other leaves with the same level-1 parent,
 * or all other leaves when the hierarchy has only the root above the values.
 */
function perturbationTargets(
  name: string,
  hierarchy: string[][],
  values: string[],
  index: Map<string, number>,
): Int32Array[] {
  const leaves = hierarchy.map((row) => row[0]!);
  const numeric = name === 'age' && leaves.every((v) => /^\d+$/.test(v));
  return values.map((value) => {
    let targets: string[];
    if (numeric) {
      const a = Number(value);
      targets = leaves.filter((v) => v !== value && Math.abs(Number(v) - a) <= AGE_STEP);
    } else {
      const parent = hierarchy.find((row) => row[0] === value)?.[1];
      const twoLevel = hierarchy[0]!.length <= 2;
      targets = hierarchy
        .filter((row) => row[0] !== value && (twoLevel || row[1] === parent))
        .map((row) => row[0]!);
    }
    return Int32Array.from(targets, (v) => index.get(v)!);
  });
}

/** Sampler codes → codes in order of first appearance, as a reader of the written file sees them. */
class AppearanceOrder {
  readonly remap: Int32Array;
  readonly dictionary: string[] = [];

  constructor(private readonly values: string[]) {
    this.remap = new Int32Array(values.length).fill(-1);
  }

  see(codes: Int32Array, n: number): void {
    const remap = this.remap;
    for (let r = 0; r < n; r++) {
      const c = codes[r]!;
      if (remap[c] === -1) remap[c] = this.dictionary.push(this.values[c]!) - 1;
    }
  }

  recode(codes: Int32Array, n: number): void {
    const remap = this.remap;
    for (let r = 0; r < n; r++) codes[r] = remap[codes[r]!]!;
  }
}

/** N synthetic rows in memory, encoded as a reader would encode them (for in-process benchmarks). */
export function synthesizeTable(rows: number, options: SynthOptions = {}): EncodedTable {
  const sampler = new AdultSampler(options);
  const codes = sampler.columns.map(() => new Int32Array(rows));
  sampler.fill(codes, rows);
  return {
    source: `synthetic-${rows}.arrow`,
    rowCount: rows,
    delimiter: ';',
    columns: sampler.columns.map((c, i) => {
      const order = new AppearanceOrder(c.values);
      order.see(codes[i]!, rows);
      order.recode(codes[i]!, rows);
      return { name: c.name, dictionary: order.dictionary, codes: codes[i]! };
    }),
  };
}

export interface WriteOptions extends SynthOptions {
  readonly rows: number;
  readonly arrow?: boolean;
  readonly csv?: boolean;
  readonly batchRows?: number;
  /** Progress lines (default: none). */
  readonly say?: (line: string) => void;
}

export interface WriteResult {
  readonly dir: string;
  readonly spec: string;
  readonly files: string[];
  readonly rows: number;
  readonly ms: number;
}

/**
 * Writes the synthetic table and its release.json into `dir`. Two passes over the same seeded
 * stream: the first finds each column's values in order of first appearance (the dictionary
 * goes first in the file), the second writes batch by batch.
 */
export async function writeSynthetic(dir: string, options: WriteOptions): Promise<WriteResult> {
  const t0 = performance.now();
  const { rows } = options;
  if (!(Number.isInteger(rows) && rows >= 1))
    throw new Error(`--rows must be a whole number ≥ 1 (got ${rows})`);
  const arrow = options.arrow ?? true;
  const csv = options.csv ?? !arrow;
  const batchRows = Math.min(rows, options.batchRows ?? 1_000_000);
  const say = options.say ?? (() => {});
  mkdirSync(dir, { recursive: true });

  const first = new AdultSampler(options);
  const names = first.columns.map((c) => c.name);
  const orders = first.columns.map((c) => new AppearanceOrder(c.values));
  const buffers = names.map(() => new Int32Array(batchRows));
  for (let done = 0; done < rows; ) {
    const n = Math.min(batchRows, rows - done);
    first.fill(buffers, n);
    for (const [c, o] of orders.entries()) o.see(buffers[c]!, n);
    done += n;
  }

  const sampler = new AdultSampler(options);
  const files: string[] = [];
  let arrowWriter: RecordBatchFileWriter | undefined;
  let arrowStream: ReturnType<typeof createWriteStream> | undefined;
  let csvStream: ReturnType<typeof createWriteStream> | undefined;
  const types = names.map((_, i) => new Dictionary(new Utf8(), new Int32(), i, false));
  const fields = names.map((name, i) => new Field(name, types[i]!, false));
  const schema = new Schema(fields);
  // One dictionary vector per column, shared by every batch: the writer emits it once.
  const dictionaries = orders.map((o) => vectorFromArray(o.dictionary, new Utf8()));
  if (arrow) {
    files.push('adult.arrow');
    arrowStream = createWriteStream(join(dir, 'adult.arrow'));
    arrowWriter = new RecordBatchFileWriter();
    arrowWriter.pipe(arrowStream);
  }
  if (csv) {
    files.push('adult.csv');
    csvStream = createWriteStream(join(dir, 'adult.csv'));
    csvStream.write(`${names.join(';')}\n`);
  }
  for (let done = 0; done < rows; ) {
    const n = Math.min(batchRows, rows - done);
    // Fresh arrays per batch: the writer may still hold the previous batch's buffers.
    const codes = names.map(() => new Int32Array(n));
    sampler.fill(codes, n);
    for (const [c, o] of orders.entries()) o.recode(codes[c]!, n);
    if (arrowWriter && arrowStream) {
      const children = codes.map((data, c) =>
        makeData({ type: types[c]!, length: n, nullCount: 0, data, dictionary: dictionaries[c]! }),
      );
      arrowWriter.write(
        new RecordBatch(schema, makeData({ type: new Struct(fields), length: n, nullCount: 0, children })),
      );
      await drained(arrowStream);
    }
    if (csvStream) await writeCsvRows(csvStream, orders, codes, n);
    done += n;
    say(`${done.toLocaleString('en')} / ${rows.toLocaleString('en')} rows written`);
  }
  if (arrowWriter && arrowStream) {
    arrowWriter.finish();
    if (!arrowStream.writableFinished) await once(arrowStream, 'finish');
  }
  if (csvStream) {
    csvStream.end();
    await once(csvStream, 'finish');
  }

  const out = specFor(dir, arrow ? 'adult.arrow' : 'adult.csv');
  const specPath = join(dir, 'release.json');
  writeFileSync(specPath, `${JSON.stringify(out, null, 2)}\n`);
  writeFileSync(
    join(dir, 'synth.json'),
    `${JSON.stringify({ rows, perturb: options.perturb ?? 0, seed: options.seed ?? 1, files }, null, 2)}\n`,
  );
  return { dir, spec: specPath, files, rows, ms: performance.now() - t0 };
}

function commonAncestor(a: string, b: string): string {
  const x = a.split('/');
  const y = b.split('/');
  let i = 0;
  while (i < x.length && i < y.length && x[i] === y[i]) i++;
  return x.slice(0, i).join('/') || '/';
}

/**
 * examples/adult/release.json for an input in `dir`: hierarchy paths pointing at
 * examples/adult's files, and "root" allowing their common ancestor with `dir`.
 */
export function specFor(dir: string, input: string): AdultSpec {
  const spec = adultSpec();
  const toAdult = relative(resolve(dir), ADULT_DIR);
  const attributes = Object.fromEntries(
    Object.entries(spec.attributes).map(([name, a]) => [
      name,
      a.hierarchy ? { ...a, hierarchy: join(toAdult, a.hierarchy) } : a,
    ]),
  );
  const root = relative(resolve(dir), commonAncestor(resolve(dir), ADULT_DIR)) || undefined;
  const csv = input.endsWith('.csv');
  return { ...(root ? { root } : {}), ...spec, input, format: csv ? { delimiter: ';' } : {}, attributes };
}

/** Waits while the stream's buffer is over its high-water mark (the Arrow writer pipes into it). */
async function drained(stream: ReturnType<typeof createWriteStream>): Promise<void> {
  await new Promise<void>((done) => setImmediate(done));
  while (stream.writableNeedDrain) await once(stream, 'drain');
}

async function writeCsvRows(
  stream: ReturnType<typeof createWriteStream>,
  orders: AppearanceOrder[],
  codes: Int32Array[],
  n: number,
): Promise<void> {
  const CHUNK = 50_000;
  for (let start = 0; start < n; start += CHUNK) {
    const end = Math.min(n, start + CHUNK);
    const lines: string[] = [];
    for (let r = start; r < end; r++) {
      lines.push(orders.map((o, c) => o.dictionary[codes[c]![r]!]).join(';'));
    }
    if (!stream.write(`${lines.join('\n')}\n`)) await once(stream, 'drain');
  }
}

/** `1e6`, `1000000`, `1_000_000` and `1,000,000` all parse. */
export function parseCount(text: string): number {
  return Number(text.replace(/[_,]/g, ''));
}

// ---------------------------------------------------------------------------------------------

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      out: { type: 'string' },
      perturb: { type: 'string', default: '0' },
      seed: { type: 'string', default: '1' },
      csv: { type: 'boolean', default: false },
      'no-arrow': { type: 'boolean', default: false },
      'batch-rows': { type: 'string', default: '1000000' },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    process.exit(0);
  }
  if (!values.rows || !values.out) {
    process.stderr.write(`synth: --rows and --out are required\n\n${HELP}`);
    process.exit(2);
  }
  const arrow = !values['no-arrow'];
  const result = await writeSynthetic(values.out, {
    rows: parseCount(values.rows),
    perturb: Number(values.perturb),
    seed: Number(values.seed),
    arrow,
    csv: values.csv || !arrow,
    batchRows: parseCount(values['batch-rows']),
    say: (line) => process.stderr.write(`synth: ${line}\n`),
  });
  console.log(
    `wrote ${result.rows.toLocaleString('en')} rows to ${result.files.map((f) => join(result.dir, f)).join(', ')} ` +
      `and ${result.spec} in ${(result.ms / 1000).toFixed(1)} s`,
  );
}
