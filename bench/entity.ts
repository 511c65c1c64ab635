/**
 * What counting persons costs the generalization search (a script, not a test): synthetic
 * orders tables (each customer one age, region and sex, 1 to 20 orders), searched for the
 * optimal node under k-anonymity counted by rows (the customer column `identifying`) and by
 * persons (the customer column `entity`), with the same QIs, hierarchies and suppression limit.
 *
 * Measured per table and counting (median of N runs after a warm-up, in process): prepare
 * (hierarchies, distinct tuples) and the optimal search, as wall and CPU time of the process
 * (the steadier figure on a shared machine), with the nodes checked, the distinct tuples and
 * the node found. The machine's load average is recorded next to the figures.
 *
 * Prints figures as it goes and writes bench/results/entity.json.
 * Run: `npx tsx bench/entity.ts` (`--quick` for fewer repetitions and the smaller tables only).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { wasmGroupingKernel } from '../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../src/methods/generalization/index.ts';
import { optimalSearch } from '../src/methods/generalization/search.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec } from '../src/release-spec/spec.ts';
import { Random } from '../src/util/random.ts';
import { helpIfAsked } from './help.ts';

helpIfAsked(import.meta.url);

const { values: opts } = parseArgs({ options: { quick: { type: 'boolean', default: false } } });
const RUNS = opts.quick ? 3 : 5;
const CUSTOMERS = opts.quick ? [1_000, 10_000] : [1_000, 10_000, 100_000];
const OUT = new URL('./results/entity.json', import.meta.url).pathname;
const REGIONS = 40;

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const round = (x: number, d = 1) => Math.round(x * 10 ** d) / 10 ** d;

function time(work: () => void): { wall: number; cpu: number } {
  work(); // warm-up
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const s = performance.now();
    const c = process.cpuUsage();
    work();
    const d = process.cpuUsage(c);
    wall.push(performance.now() - s);
    cpu.push((d.user + d.system) / 1000);
  }
  return { wall: round(median(wall)), cpu: round(median(cpu)) };
}

/** An orders table of `customers` customers in `folder`, with two specs over it. */
function fixture(folder: string, customers: number): { rows: number; specs: Record<string, string> } {
  const rng = new Random(customers);
  const lines = ['customer;age;region;sex;zip;category'];
  for (let c = 0; c < customers; c++) {
    const age = 18 + rng.below(70);
    const region = `R${rng.below(REGIONS)}`;
    const sex = rng.below(2) === 0 ? 'M' : 'F';
    const zip = String(10000 + rng.below(900) * 10);
    const orders = 1 + rng.below(20);
    for (let o = 0; o < orders; o++) lines.push(`c${c};${age};${region};${sex};${zip};k${rng.below(12)}`);
  }
  writeFileSync(join(folder, 'orders.csv'), `${lines.join('\n')}\n`);
  const groups = Object.fromEntries(
    Array.from({ length: REGIONS }, (_, i) => [`R${i}`, `Z${Math.floor(i / 8)}`]),
  );
  const specs: Record<string, string> = {};
  for (const [counting, type] of [
    ['rows', 'identifying'],
    ['persons', 'entity'],
  ] as const) {
    const path = join(folder, `release-${counting}.json`);
    writeFileSync(
      path,
      JSON.stringify({
        input: 'orders.csv',
        format: { delimiter: ';' },
        attributes: {
          customer: { type },
          age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
          region: { type: 'quasi-identifying', hierarchy: { groups: [groups] } },
          sex: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
          zip: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
          category: { type: 'insensitive' },
        },
        privacy: [{ model: 'k-anonymity', k: 5 }],
        method: { name: 'generalization', maxSuppression: 0.02, metric: 'ncp' },
      }),
    );
    specs[counting] = path;
  }
  return { rows: lines.length - 1, specs };
}

const dir = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-entity-'));
const results: object[] = [];
const loadBefore = os.loadavg();
try {
  for (const customers of CUSTOMERS) {
    const folder = join(dir, String(customers));
    mkdirSync(folder);
    const { rows, specs } = fixture(folder, customers);
    for (const [counting, path] of Object.entries(specs)) {
      const spec = loadSpec(path);
      const table = readInput(spec);
      let prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
      const prepare = time(() => {
        prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
      });
      let outcome = optimalSearch(openSearch(prepared, wasmGroupingKernel));
      const search = time(() => {
        const evaluator = openSearch(prepared, wasmGroupingKernel);
        outcome = optimalSearch(evaluator);
        evaluator.dispose();
      });
      const node = Object.fromEntries(prepared.qis.map((q, i) => [q.name, outcome.best.levels[i]]));
      const row = {
        customers,
        rows,
        counting,
        tuples: prepared.tuples.counts.length,
        latticeSize: prepared.problem.lattice.size,
        nodesChecked: outcome.nodesChecked,
        node,
        ncp: round(outcome.best.value, 4),
        suppressedRows: outcome.best.suppressedRows,
        ...(outcome.best.suppressedPersons === undefined
          ? {}
          : { suppressedPersons: outcome.best.suppressedPersons }),
        ms: { prepare, search },
      };
      results.push(row);
      process.stdout.write(
        `${customers} customers, ${rows} orders, k by ${counting}: ${row.tuples} tuples, ${row.nodesChecked}/${row.latticeSize} nodes, ` +
          `node ${JSON.stringify(node)} ncp ${row.ncp}; prepare ${prepare.wall} ms (cpu ${prepare.cpu}), search ${search.wall} ms (cpu ${search.cpu})\n`,
      );
    }
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
const loadAfter = os.loadavg();
mkdirSync(new URL('./results/', import.meta.url).pathname, { recursive: true });
writeFileSync(
  OUT,
  `${JSON.stringify(
    {
      machine: { cpus: os.cpus().length, node: process.version },
      load: { before: loadBefore.map((x) => round(x, 2)), after: loadAfter.map((x) => round(x, 2)) },
      runs: RUNS,
      results,
    },
    null,
    2,
  )}\n`,
);
process.stdout.write(`wrote ${OUT}\n`);
