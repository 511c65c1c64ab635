/**
 * Randomization kernels (its acceptance test):
 * - perturbation throughput in cells/s on 10M cells: TS reference, WASM scalar, WASM SIMD,
 *   copies in and out included;
 * - Kronecker reconstruction time against table size for 2–6 attributes (mode by mode,
 *   O(D·Σd)), against the dense product's O(D²) where the D × D matrix still fits.
 * Writes bench/results/randomization-kernels.json. Run: npx tsx bench/randomization-kernels.ts
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { denseKronecker, type KroneckerKernel, type ModeMatrix } from '../src/kernels/kronecker/kernel.ts';
import { tsKroneckerKernel } from '../src/kernels/kronecker/reference.ts';
import { wasmKroneckerKernel } from '../src/kernels/kronecker/wasm.ts';
import { laneState, type PerturbKernel, thresholdsOf } from '../src/kernels/perturb/kernel.ts';
import { tsPerturbKernel } from '../src/kernels/perturb/reference.ts';
import { wasmPerturbKernel, wasmSimdPerturbKernel } from '../src/kernels/perturb/wasm.ts';
import { structuredDistortion } from '../src/methods/randomization/matrices.ts';
import { Random } from '../src/util/random.ts';
import { helpIfAsked } from './help.ts';

helpIfAsked(import.meta.url);

const best = (runs: number, work: () => void): number => {
  let t = Number.POSITIVE_INFINITY;
  for (let i = 0; i < runs; i++) {
    const s = performance.now();
    work();
    t = Math.min(t, performance.now() - s);
  }
  return t;
};

// --- perturbation -------------------------------------------------------------------------
const CELLS = 10_000_000;
const rng = new Random(1);
const perturbRows: Record<string, unknown>[] = [];
for (const d of [2, 14, 41]) {
  const codes = Int32Array.from({ length: CELLS }, () => rng.below(d));
  const thr = thresholdsOf(structuredDistortion('retention', d, 0.6).matrix, d);
  const kernels: PerturbKernel[] = [tsPerturbKernel, wasmPerturbKernel, wasmSimdPerturbKernel];
  const outs: Int32Array[] = [];
  const row: Record<string, unknown> = { categories: d, cells: CELLS };
  for (const k of kernels) {
    k.perturb(codes.subarray(0, 4096), thr, laneState(Uint32Array.of(1, 2, 3, 4))); // warm-up
    let out: Int32Array = new Int32Array(0);
    const ms = best(3, () => {
      out = k.perturb(codes, thr, laneState(Uint32Array.of(1, 2, 3, 4)));
    });
    outs.push(out);
    row[k.name] = { ms: Math.round(ms), cellsPerSecond: Math.round((CELLS / ms) * 1000) };
  }
  row.identical = outs.every((o) => o.every((x, i) => x === outs[0]![i]));
  perturbRows.push(row);
  console.log(JSON.stringify(row));
}

// --- Kronecker ------------------------------------------------------------------------------
const kronRows: Record<string, unknown>[] = [];
const shapes: Record<number, number[]> = {
  2: [16, 64, 256, 1024],
  3: [8, 16, 32, 64, 128],
  4: [4, 8, 16, 32],
  5: [3, 6, 12, 20],
  6: [3, 4, 6, 10, 14],
};
const DENSE_LIMIT = 4096;
for (const [kStr, ds] of Object.entries(shapes)) {
  const k = Number(kStr);
  for (const d of ds) {
    const dims = Array.from({ length: k }, () => d);
    const D = d ** k;
    if (D > 8_000_000) continue;
    const dense: ModeMatrix[] = dims.map((x) => structuredDistortion('retention', x, 0.7).matrix);
    const structured: ModeMatrix[] = dims.map((x) => ({ a: 0.7 - 0.3 / (x - 1), b: 0.3 / (x - 1) }));
    const x = Float64Array.from({ length: D }, () => rng.nextU32() / 2 ** 32);
    const time = (kernel: KroneckerKernel, ms: ModeMatrix[]) => {
      const session = kernel.open(dims);
      session.apply(ms, x);
      return best(D > 1_000_000 ? 2 : 5, () => session.apply(ms, x));
    };
    const sumD = k * d;
    const row: Record<string, unknown> = {
      attributes: k,
      categories: d,
      cells: D,
      sumD,
      wasmMs: time(wasmKroneckerKernel, dense),
      tsMs: time(tsKroneckerKernel, dense),
      wasmStructuredMs: time(wasmKroneckerKernel, structured),
    };
    row.wasmNsPerCellTerm = ((row.wasmMs as number) * 1e6) / (D * sumD);
    if (D <= DENSE_LIMIT) {
      const full = denseKronecker(dims, dense);
      const y = new Float64Array(D);
      row.denseMs = best(3, () => {
        for (let i = 0; i < D; i++) {
          let s = 0;
          const base = i * D;
          for (let j = 0; j < D; j++) s += full[base + j]! * x[j]!;
          y[i] = s;
        }
      });
      row.denseNsPerCellSquared = ((row.denseMs as number) * 1e6) / (D * D);
    }
    for (const key of Object.keys(row))
      if (typeof row[key] === 'number') row[key] = Number((row[key] as number).toPrecision(4));
    kronRows.push(row);
    console.log(JSON.stringify(row));
  }
}

mkdirSync(new URL('results/', import.meta.url), { recursive: true });
writeFileSync(
  new URL('results/randomization-kernels.json', import.meta.url),
  `${JSON.stringify(
    {
      machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
      note: 'best of several runs; copies in and out of WASM memory included; the machine was shared while measuring',
      perturbation: perturbRows,
      kronecker: kronRows,
    },
    null,
    2,
  )}\n`,
);
