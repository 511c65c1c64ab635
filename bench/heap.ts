/**
 * V8's heap for a large release (a script, not a test): the registry table (bench/registry-
 * sample.ts, with its ride-along columns unless --without) released through the bundled CLI
 * with V8's default heap (`--initial-heap-size=0`) and with the heap the CLI's restarted child
 * sizes itself (src/cli/allocator.ts, heapFlags), in turns ABBA…, each with node's --trace-gc.
 * Per release: the full collections (Mark-Compact) and scavenges V8 ran in every thread, wall
 * time, CPU time (user and system, summed over the release's processes) and the largest peak
 * RSS. Writes bench/results/heap.json and prints the medians. See docs/performance.md, "The
 * heap of a large release". Run `npm run build` first.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';
import { INITIAL_HEAP_MB } from '../src/cli/allocator.ts';
import { machineInfo, median, readThrough, registryData, release, settle } from './scale.ts';
import { parseCount, ROOT } from './synth.ts';

const HELP = `Usage: npm run bench:heap [-- options]
       tsx bench/heap.ts [options]

Releases the registry table with V8's default heap and with the heap ppdp's restarted child
sizes (--initial-heap-size=${INITIAL_HEAP_MB}), in turns, counting V8's collections (--trace-gc)
and timing each release. Writes bench/results/heap.json.

Options:
  --rows <n>       rows of the registry table (default 3e6)
  --without        the table without its three ride-along columns
  --repeat <n>     releases of each heap (default 3)
  --settle <s>     before each release, sync and a pause of this many seconds (default 5)
  --out <file>     result file (default bench/results/heap.json)
  -h, --help       this help
`;

interface HeapRun {
  heap: 'default' | 'sized';
  nodeArgs: string[];
  ok: boolean;
  wallMs: number;
  cpuSeconds?: { user: number; system: number };
  peakRssMiB?: number;
  fullCollections: number;
  scavenges: number;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string', default: '3e6' },
      without: { type: 'boolean', default: false },
      repeat: { type: 'string', default: '3' },
      settle: { type: 'string', default: '5' },
      out: { type: 'string', default: join(ROOT, 'bench/results/heap.json') },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(HELP);
    return;
  }
  const rows = parseCount(values.rows);
  const repeat = Number(values.repeat);
  const settleSeconds = Number(values.settle);
  if (!(Number.isInteger(repeat) && repeat >= 1)) throw new Error('--repeat is a whole number, 1 or more');
  if (!(settleSeconds >= 0)) throw new Error('--settle is a number of seconds, 0 or more');
  const rideAlong = !values.without;
  const work = mkdtempSync(join(os.tmpdir(), 'ppdp-bench-heap-'));
  try {
    console.log(`writing ${rows} registry rows${rideAlong ? ' with their ride-along columns' : ''} …`);
    const data = await registryData(join(work, 'data'), rows, rideAlong);
    const heaps = [
      { heap: 'default' as const, nodeArgs: ['--initial-heap-size=0'] },
      { heap: 'sized' as const, nodeArgs: [] },
    ];
    const runs: HeapRun[] = [];
    for (let i = 0; i < repeat; i++) {
      const order = i % 2 === 0 ? heaps : [...heaps].reverse();
      for (const { heap, nodeArgs } of order) {
        settle(settleSeconds);
        for (const file of data.files) readThrough(join(dirname(data.spec), file));
        let fullCollections = 0;
        let scavenges = 0;
        // A new folder each time: a release already there would be kept, not published again.
        const out = join(work, `out-${heap}`);
        rmSync(out, { recursive: true, force: true });
        const run = await release(
          join(ROOT, 'bin/ppdp.mjs'),
          data.spec,
          out,
          work,
          ['--trace-gc', ...nodeArgs],
          30 * 60_000,
          `${heap} heap`,
          (line) => {
            if (line.includes('Mark-Compact')) fullCollections++;
            else if (line.includes('Scavenge')) scavenges++;
          },
        );
        const { progress: _, exit: __, error, ...kept } = run;
        if (!run.ok) throw new Error(`the release with the ${heap} heap failed: ${error}`);
        runs.push({ heap, nodeArgs, ...kept, fullCollections, scavenges });
        console.log(
          `  ${heap} heap: wall ${(run.wallMs / 1000).toFixed(1)} s, CPU ${cpuOf(runs.at(-1)!).toFixed(1)} s, ` +
            `peak ${run.peakRssMiB} MiB, ${fullCollections} full collections, ${scavenges} scavenges`,
        );
      }
    }
    const medians = Object.fromEntries(
      heaps.map(({ heap }) => {
        const these = runs.filter((r) => r.heap === heap);
        return [
          heap,
          {
            wallMs: median(these.map((r) => r.wallMs)),
            cpuSeconds: median(these.map(cpuOf)),
            peakRssMiB: median(these.map((r) => r.peakRssMiB ?? Number.NaN)),
            fullCollections: median(these.map((r) => r.fullCollections)),
          },
        ];
      }),
    );
    const output = {
      benchmark: 'heap',
      date: new Date().toISOString(),
      machine: machineInfo(),
      settings: {
        rows,
        rideAlong,
        repeat,
        settleSeconds,
        sized: `--initial-heap-size=${INITIAL_HEAP_MB}`,
        note:
          'node bin/ppdp.mjs release (which restarts itself for a large input, passing node flags on) with ' +
          '--trace-gc; collections counted over every thread of every process; turns ABBA…, each after ' +
          'sync, the pause and the input read through once',
      },
      runs,
      medians,
    };
    mkdirSync(dirname(values.out), { recursive: true });
    writeFileSync(values.out, `${JSON.stringify(output, null, 2)}\n`);
    for (const [heap, m] of Object.entries(medians))
      console.log(
        `${heap} heap (median of ${repeat}): wall ${(m.wallMs / 1000).toFixed(1)} s, CPU ${m.cpuSeconds.toFixed(1)} s, ` +
          `peak ${m.peakRssMiB} MiB, ${m.fullCollections} full collections`,
      );
    console.log(`wrote ${values.out}`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function cpuOf(r: Pick<HeapRun, 'cpuSeconds'>): number {
  return r.cpuSeconds ? r.cpuSeconds.user + r.cpuSeconds.system : Number.NaN;
}

await main();
