/**
 * Mondrian benchmark (a script, not a test): partitioning of the Adult example (age numeric,
 * the other QIs categorical) for k ∈ {2,5,10,25,50,100} × {strict, relaxed}, and of 1M rows
 * sampled with replacement from Adult's rows (its empirical joint distribution), WASM kernels
 * against the plain-TS reference, NCP next to every time.
 *
 * Measured per configuration (median of N runs after a warm-up, in process):
 *   - open: kernel sessions (instance, memory, records placed; relaxed opens two);
 *   - split: open + the split loop alone (partitionMondrian; relaxed: both strategies);
 *   - partition: split + released values, classes and NCP (runMondrian, as a release runs);
 * each as wall time and as CPU time of the process (steadier on a shared machine).
 *
 * Prints figures as it goes and writes bench/results/mondrian.json.
 * Run: `npx tsx bench/mondrian.ts` (`--quick` for fewer repetitions, `--skip-large` to leave
 * out the 1M-row table).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { parseArgs } from 'node:util';
import type { EncodedTable } from '../src/data/table.ts';
import type { MondrianKernel } from '../src/kernels/mondrian/kernel.ts';
import { tsMondrianKernel } from '../src/kernels/mondrian/reference.ts';
import { wasmMondrianKernel } from '../src/kernels/mondrian/wasm.ts';
import { runMondrian } from '../src/methods/mondrian/index.ts';
import { kernelInput, partitionMondrian } from '../src/methods/mondrian/partition.ts';
import { prepareMondrian } from '../src/methods/mondrian/prepare.ts';
import { readInput } from '../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../src/release-spec/spec.ts';
import { Random } from '../src/util/random.ts';
import { helpIfAsked } from './help.ts';

helpIfAsked(import.meta.url);

const { values: opts } = parseArgs({
  options: { quick: { type: 'boolean', default: false }, 'skip-large': { type: 'boolean', default: false } },
});
const RUNS = opts.quick ? 3 : 7;
const SPEC = new URL('../examples/adult-mondrian/release.json', import.meta.url).pathname;
const OUT = new URL('./results/mondrian.json', import.meta.url).pathname;
const KERNELS: MondrianKernel[] = [wasmMondrianKernel, tsMondrianKernel];

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1]!;
const round = (x: number, d = 2) => Math.round(x * 10 ** d) / 10 ** d;

/**
 * Median wall time and median CPU time (this process, all threads) in ms. On a shared
 * machine the CPU time is the steadier figure: waiting for a core does not count.
 */
function time(work: () => void, runs: number): { wall: number; cpu: number } {
  work(); // warm-up (tier-up, first touch of memory)
  const wall: number[] = [];
  const cpu: number[] = [];
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    const c = process.cpuUsage();
    work();
    const d = process.cpuUsage(c);
    wall.push(performance.now() - s);
    cpu.push((d.user + d.system) / 1000);
  }
  return { wall: median(wall), cpu: median(cpu) };
}

interface Row {
  table: string;
  rows: number;
  k: number;
  mode: 'strict' | 'relaxed';
  strategy: string;
  partitions: number;
  classes: number;
  ncp: number;
  /** Per kernel: wall and CPU ms of opening the sessions and of the whole partitioning. */
  ms: Record<
    string,
    {
      open: number;
      split: number;
      partition: number;
      openCpu: number;
      splitCpu: number;
      partitionCpu: number;
    }
  >;
}

function measure(name: string, base: ReleaseSpec, table: EncodedTable, ks: number[], runs: number): Row[] {
  const rows: Row[] = [];
  for (const k of ks) {
    for (const mode of ['strict', 'relaxed'] as const) {
      const spec: ReleaseSpec = {
        ...base,
        privacy: [{ model: 'k-anonymity', k }],
        method: { name: 'mondrian', mode, measures: false },
      };
      const { problem } = prepareMondrian(spec, table);
      const outcome = runMondrian(problem, wasmMondrianKernel);
      const ms: Row['ms'] = {};
      for (const kernel of KERNELS) {
        const input = kernelInput(problem);
        const sessions = mode === 'relaxed' ? 2 : 1;
        const open = time(() => kernel.open(input).dispose(), runs);
        const strategies = mode === 'relaxed' ? (['balanced-first', 'strict-first'] as const) : [undefined];
        const split = time(() => {
          for (const relaxed of strategies) partitionMondrian({ ...problem, relaxed }, kernel);
        }, runs);
        const partition = time(() => runMondrian(problem, kernel), runs);
        ms[kernel.name] = {
          open: round(open.wall * sessions),
          split: round(split.wall),
          partition: round(partition.wall),
          openCpu: round(open.cpu * sessions),
          splitCpu: round(split.cpu),
          partitionCpu: round(partition.cpu),
        };
      }
      const row: Row = {
        table: name,
        rows: table.rowCount,
        k,
        mode,
        strategy: outcome.strategy,
        partitions: outcome.result.count,
        classes: outcome.released.classes,
        ncp: round(outcome.released.ncp, 6),
        ms,
      };
      rows.push(row);
      console.log(
        `${name} k=${k} ${mode.padEnd(7)} NCP ${row.ncp.toFixed(4)} ${String(row.classes).padStart(6)} classes  ` +
          KERNELS.map(
            (kr) =>
              `${kr.name}: split ${ms[kr.name]!.split} ms (cpu ${ms[kr.name]!.splitCpu}, open ${ms[kr.name]!.open}), with release values ${ms[kr.name]!.partition} ms`,
          ).join('  '),
      );
    }
  }
  return rows;
}

/** n rows drawn with replacement from the table's rows (its empirical joint distribution). */
function resample(table: EncodedTable, n: number, seed: number): EncodedTable {
  const rng = new Random(seed);
  const pick = Int32Array.from({ length: n }, () => rng.below(table.rowCount));
  return {
    ...table,
    rowCount: n,
    columns: table.columns.map((c) => ({ ...c, codes: Int32Array.from(pick, (r) => c.codes[r]!) })),
  };
}

const base = loadSpec(SPEC);
const adult = readInput(base);
const results: Row[] = measure('adult', base, adult, [2, 5, 10, 25, 50, 100], RUNS);
if (!opts['skip-large']) {
  const large = resample(adult, 1_000_000, 42);
  results.push(...measure('adult-1M', base, large, [10, 100, 1000], opts.quick ? 1 : 3));
}
mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
writeFileSync(
  OUT,
  `${JSON.stringify(
    {
      what: 'Mondrian partitioning (in process): WASM split kernels vs the plain-TS reference, NCP per configuration',
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model,
        node: process.version,
        load: os.loadavg(),
      },
      runs: RUNS,
      results,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${OUT}`);
