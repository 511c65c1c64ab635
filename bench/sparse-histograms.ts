/**
 * The search's class histograms, dense against sparse (a script, not a test): a model that
 * reads each class's sensitive values (here t-closeness, equal distance, t = 0.2, beside
 * k = 5) has the generalization search count them per node, densely (a classes × values
 * matrix) or sparsely (each class's values held); the default chooses per node
 * (src/methods/generalization/evaluate.ts). On registry-shaped rows (bench/registry-sample.ts:
 * near-unique quasi-identifier tuples) whose diagnosis is drawn from `--values` values, with
 * up to 100 % suppression allowed so that the lattice's lower nodes are judged, the whole
 * optimal search runs with each form forced and with the default, `--repeat` times each, in
 * this process. Prints per table and form the search's time (the fastest run), the chosen node
 * and the nodes checked (the same for every form), and writes
 * bench/results/sparse-histograms.json.
 *
 * The dense form's matrix is 4 bytes × classes × values: 10⁴ rows of 1,000 values need about
 * 40 MB per node, 3·10⁴ rows about 120 MB, and its peak grows beyond that with the snapshots
 * the search keeps; keep the tables small.
 *
 * Run: `npm run bench:sparse-histograms -- [--rows 10000,100000] [--values 1000,10] [--repeat 2]`
 * (the lists pair up: each rows count with the values count at its place).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { NodeEvaluator } from '../src/methods/generalization/evaluate.ts';
import { prepareGeneralization } from '../src/methods/generalization/index.ts';
import { optimalSearch } from '../src/methods/generalization/search.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { Random } from '../src/util/random.ts';
import { writeRows } from './adult-sample.ts';
import { helpIfAsked } from './help.ts';
import { REGISTRY_COLUMNS, REGISTRY_SPEC, registryRows } from './registry-sample.ts';

helpIfAsked(import.meta.url);

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000,100000' },
    values: { type: 'string', default: '1000,10' },
    repeat: { type: 'string', default: '2' },
  },
});
const rowsList = args.rows.split(',').map(Number);
const valuesList = args.values.split(',').map(Number);
const repeat = Number(args.repeat);
if (rowsList.length !== valuesList.length || [...rowsList, ...valuesList, repeat].some((n) => !(n >= 1)))
  throw new Error('--rows and --values: lists of the same length of positive numbers; --repeat: at least 1');

/** The forms compared: the dense matrix forced, sparse forced, and the default's choice per node. */
const FORMS = [
  ['dense', Number.POSITIVE_INFINITY],
  ['sparse', 0],
  ['default', undefined],
] as const;

const dir = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-sparse-'));
const results: unknown[] = [];
try {
  for (const [i, rows] of rowsList.entries()) {
    const values = valuesList[i]!;
    const input = join(dir, `registry-${rows}-${values}.csv`);
    // The registry's rows, the diagnosis drawn from `values` codes by a stream of its own.
    const random = new Random(20261201);
    const it = registryRows(rows);
    await writeRows(input, REGISTRY_COLUMNS.join(','), rows, () => {
      const cells = it.next().value!;
      cells[cells.length - 1] = `D${String(random.below(values)).padStart(5, '0')}`;
      return cells.join(',');
    });
    const specFile = join(dir, `spec-${rows}-${values}.json`);
    writeFileSync(
      specFile,
      JSON.stringify({
        ...REGISTRY_SPEC,
        input: input,
        privacy: [
          { model: 'k-anonymity', k: 5 },
          { model: 't-closeness', attribute: 'diagnosis', t: 0.2, distance: 'equal' },
        ],
        method: { name: 'generalization', maxSuppression: 1, metric: 'ncp' },
      }),
    );
    const spec = loadSpec(specFile);
    const prepared = prepareGeneralization(spec, readInput(spec), wasmGroupingKernel);
    const forms: Record<string, unknown> = {};
    for (const [name, cells] of FORMS) {
      let best = Number.POSITIVE_INFINITY;
      let found: { node: string; nodesChecked: number } | undefined;
      for (let r = 0; r < repeat; r++) {
        const session = wasmGroupingKernel.open(
          {
            columns: prepared.tuples.columns,
            counts: prepared.tuples.counts,
            domains: prepared.qis.map((c) => c.dictionary.length),
          },
          prepared.hierarchies.map((h) => h.levelTables),
        );
        const evaluator = new NodeEvaluator(prepared.problem, session, undefined, undefined, cells);
        const t0 = performance.now();
        const result = optimalSearch(evaluator);
        best = Math.min(best, performance.now() - t0);
        evaluator.dispose();
        found = { node: result.best.levels.join(','), nodesChecked: result.nodesChecked };
      }
      forms[name] = { searchMs: Math.round(best), ...found };
      console.log(
        `${rows.toLocaleString('en')} rows, ${values.toLocaleString('en')} values, ${name}: ${Math.round(best).toLocaleString('en')} ms (node ${found!.node}, ${found!.nodesChecked} nodes checked)`,
      );
    }
    results.push({ rows, values, tuples: prepared.tuples.counts.length, forms });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const out = new URL('./results/sparse-histograms.json', import.meta.url).pathname;
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ benchmark: 'sparse-histograms', date: new Date().toISOString(), machine: { cpus: os.cpus().length, memoryGiB: Math.round(os.totalmem() / 2 ** 30) }, repeat, results }, null, 2)}\n`,
);
console.log(`wrote ${out}`);
