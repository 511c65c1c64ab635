/**
 * The host's own speed: a fixed workload in which no ppdp code takes part, so that the figures
 * bench/ takes on different hosts can be told apart from changes of the code. Hosts of the same
 * kind (AMD EPYC, 2 cores, 24 GiB) have run the same build of ppdp 1.5 to 1.6 times slower from
 * one day to the next (docs/performance.md, "The host's speed"); a release's time alone cannot
 * say which of the two changed.
 *
 * Five loops, each the best of three runs (the least disturbed by other work on the host):
 *   compute     a 32-bit integer mix, one thread (ms for 2^26 rounds)
 *   two threads the same loop in two worker threads at once (ms, the slower one): near
 *               `compute` when the host gives both cores; up to twice it when they share one
 *   random      sums of 2^24 reads at random places of a 256 MiB array (ms): memory latency,
 *               what hash tables, gathers and shuffles wait on
 *   copy        1 GiB copied between two 256 MiB arrays (GB/s): memory bandwidth
 *   sha256      SHA-256 of 256 MiB (MB/s): what sealing and digests cost
 *
 * Run: `npm run bench:host` (prints the figures, writes bench/results/host-speed.json;
 * `--result <path>` to write elsewhere). bench:scale and bench:arx measure it before their
 * releases and keep it in their results (`machine.hostSpeed`).
 */
import { createHash } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { helpIfAsked } from './help.ts';

/** The figures (see above); `scale` shrinks every workload (1: the figures compared across hosts). */
export interface HostSpeed {
  readonly computeMs: number;
  readonly twoThreadsMs: number;
  readonly randomMs: number;
  readonly copyGBps: number;
  readonly sha256MBps: number;
  readonly scale: number;
}

const ROUNDS = 2 ** 26;
const READS = 2 ** 24;
const ARRAY_BYTES = 256 * 2 ** 20;
const COPIES = 4;

/** The compute loop; the worker threads run its text (`mix.toString()`), the same loop. */
function mix(rounds: number): number {
  let h = 0x811c9dc5 | 0;
  for (let i = 0; i < rounds; i++) {
    h = Math.imul(h ^ i, 0x01000193);
    h ^= h >>> 15;
  }
  return h;
}

function best(runs: number, measure: () => number): number {
  let least = Number.POSITIVE_INFINITY;
  for (let r = 0; r < runs; r++) least = Math.min(least, measure());
  return least;
}

function timed(run: () => unknown): number {
  const t0 = performance.now();
  run();
  return performance.now() - t0;
}

/** The compute loop in `threads` worker threads at once: the slowest one's ms. */
async function inThreads(threads: number, rounds: number): Promise<number> {
  const source = `const { parentPort, workerData } = require('node:worker_threads');
const mix = ${mix.toString()};
parentPort.on('message', () => {
  const t0 = performance.now();
  const h = mix(workerData);
  parentPort.postMessage({ ms: performance.now() - t0, h });
});
parentPort.postMessage('ready');`;
  const workers = Array.from(
    { length: threads },
    () => new Worker(source, { eval: true, workerData: rounds }),
  );
  // A worker's next message; its failure (at start-up too) rejects rather than waits forever.
  const next = <T>(w: Worker) =>
    new Promise<T>((done, fail) => {
      w.once('message', done);
      w.once('error', fail);
    });
  try {
    // Every thread started first: the loops then run side by side, not one while another loads.
    await Promise.all(workers.map((w) => next(w)));
    const times = await Promise.all(
      workers.map((w) => {
        const answer = next<{ ms: number }>(w);
        w.postMessage('go');
        return answer.then((m) => m.ms);
      }),
    );
    return Math.max(...times);
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
}

export async function hostSpeed(scale = 1): Promise<HostSpeed> {
  if (!(scale > 0 && scale <= 1)) throw new RangeError(`scale is in (0, 1], not ${scale}`);
  const rounds = Math.max(1024, Math.round(ROUNDS * scale));
  const reads = Math.max(1024, Math.round(READS * scale));
  const bytes = Math.max(1 << 16, Math.round((ARRAY_BYTES * scale) / 8) * 8);
  const computeMs = best(3, () => timed(() => mix(rounds)));
  let twoThreadsMs = Number.POSITIVE_INFINITY;
  for (let r = 0; r < 3; r++) twoThreadsMs = Math.min(twoThreadsMs, await inThreads(2, rounds));
  // Random reads: places drawn by a fixed generator, over an array every page of which is written.
  const words = new Int32Array(bytes / 4);
  for (let i = 0; i < words.length; i++) words[i] = i;
  const places = new Int32Array(reads);
  let x = 0x2545f491;
  for (let i = 0; i < reads; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    places[i] = (x >>> 0) % words.length;
  }
  let sum = 0;
  const randomMs = best(3, () =>
    timed(() => {
      for (let i = 0; i < reads; i++) sum = (sum + words[places[i]!]!) | 0;
    }),
  );
  const from = new Uint8Array(words.buffer);
  const to = new Uint8Array(bytes).fill(1);
  const copyMs = best(3, () =>
    timed(() => {
      for (let c = 0; c < COPIES; c++) to.set(from);
    }),
  );
  const shaMs = best(3, () => timed(() => createHash('sha256').update(from).digest()));
  if (sum === 0.5) console.log(sum); // keeps the reads from being optimized away
  const round = (v: number) => Math.round(v * 10) / 10;
  return {
    computeMs: round(computeMs),
    twoThreadsMs: round(twoThreadsMs),
    randomMs: round(randomMs),
    copyGBps: round((COPIES * bytes) / 1e9 / (copyMs / 1000)),
    sha256MBps: Math.round(bytes / 1e6 / (shaMs / 1000)),
    scale,
  };
}

/** One line of the figures, as the benchmarks print them. */
export function hostSpeedLine(s: HostSpeed): string {
  return (
    `host speed: compute ${s.computeMs} ms, two threads ${s.twoThreadsMs} ms, random reads ${s.randomMs} ms, ` +
    `copy ${s.copyGBps} GB/s, sha256 ${s.sha256MBps} MB/s`
  );
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  helpIfAsked(import.meta.url);
  const { values } = parseArgs({ options: { result: { type: 'string' } } });
  const root = new URL('../', import.meta.url).pathname;
  const result = values.result ?? join(root, 'bench/results/host-speed.json');
  const speed = await hostSpeed();
  console.log(hostSpeedLine(speed));
  mkdirSync(dirname(result), { recursive: true });
  writeFileSync(result, `${JSON.stringify({ date: new Date().toISOString(), hostSpeed: speed }, null, 1)}\n`);
  console.log(`wrote ${result}`);
}
