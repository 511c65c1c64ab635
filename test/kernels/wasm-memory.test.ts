/**
 * The WASM grouping session's memory against `wasmSessionBytes`, the bound admission refuses
 * a release by (distinct tuples past one instance's 4 GiB), and the refusal itself.
 */
import { describe, expect, it } from 'vitest';
import {
  budgetHolds,
  residentBeside,
  wasmGroupingKernel,
  wasmSessionBytes,
} from '../../src/kernels/groupby/wasm.ts';
import {
  acquireCore,
  keepingInstances,
  nextIdleBytes,
  ONE_MACHINE_RETAINED_BYTES,
  releaseCore,
  retainCoresUpTo,
} from '../../src/wasm/module.ts';

describe('WASM grouping session memory', () => {
  it('lays out no more than wasmSessionBytes for its tuples, and most of it', () => {
    // Distinct tuples (no two alike), so every per-tuple region is used in full.
    const n = 400_000;
    const a = new Int32Array(n);
    const b = new Int32Array(n);
    for (let t = 0; t < n; t++) {
      a[t] = t % 1000;
      b[t] = Math.floor(t / 1000);
    }
    const tables = [
      [Int32Array.from({ length: 1000 }, (_, c) => c >> 4)],
      [Int32Array.from({ length: 400 }, (_, c) => c >> 2)],
    ];
    const session = wasmGroupingKernel.open({ columns: [a, b], domains: [1000, 400] }, tables);
    const all = session.group(null);
    expect(all.groups).toBe(n);
    const up = session.rollup([0, 0], all);
    session.compose(all.groupOf, up.map!);
    session.dispose();
    // The session's instance, handed back on dispose (it stays under the reuse size).
    const { core, zeroFrom, zeroBytes } = acquireCore();
    const bytes = core.memory.buffer.byteLength;
    releaseCore(core, zeroFrom, zeroBytes);
    const levelTables = 4 * (1000 + 400) + 8 * (1000 + 400) + 65536;
    expect(bytes).toBeLessThanOrEqual(wasmSessionBytes(n, 2) + levelTables);
    expect(bytes).toBeGreaterThan(0.6 * wasmSessionBytes(n, 2));
  });

  it('keeps a finished session past 64 MiB for the next only where told to (one machine)', () => {
    const n = 1_600_000; // lays out about 80 MB
    const a = Int32Array.from({ length: n }, (_, t) => t % 1000);
    const b = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 1000));
    const run = () => {
      const session = wasmGroupingKernel.open({ columns: [a, b], domains: [1000, 1600] }, [[], []]);
      expect(session.group(null).groups).toBe(n);
      session.dispose();
    };
    /** The memory sizes of the instances kept idle (taken out and handed back). */
    const idleSizes = () => {
      const taken = [acquireCore(), acquireCore()];
      for (const t of taken) releaseCore(t.core, t.zeroFrom, t.zeroBytes);
      return taken
        .filter((t) => t.zeroBytes !== Number.POSITIVE_INFINITY)
        .map((t) => t.core.memory.buffer.byteLength);
    };
    run();
    expect(idleSizes().every((bytes) => bytes <= 64 * 2 ** 20)).toBe(true);
    const before = retainCoresUpTo(ONE_MACHINE_RETAINED_BYTES);
    try {
      run();
      expect(idleSizes().some((bytes) => bytes > 64 * 2 ** 20)).toBe(true);
    } finally {
      retainCoresUpTo(before);
    }
    // Back to the default, the large instance is let go.
    expect(idleSizes().every((bytes) => bytes <= 64 * 2 ** 20)).toBe(true);
  });

  it('keeps a finished session of any size within keepingInstances, and counts it as resident for the next', async () => {
    const n = 1_600_000; // lays out about 80 MB, past the 64 MiB kept by default
    const a = Int32Array.from({ length: n }, (_, t) => t % 1000);
    const b = Int32Array.from({ length: n }, (_, t) => Math.floor(t / 1000));
    const open = () => wasmGroupingKernel.open({ columns: [a, b], domains: [1000, 1600] }, [[], []]);
    const kept = await keepingInstances(async () => {
      const session = open();
      expect(session.group(null).groups).toBe(n);
      session.dispose();
      const idle = nextIdleBytes();
      // The next session takes that instance: its groups are still right.
      const next = open();
      expect(next.group(null).groups).toBe(n);
      next.dispose();
      return idle;
    });
    expect(kept).toBeGreaterThan(64 * 2 ** 20);
    // Past keepingInstances the large instance is let go.
    expect(nextIdleBytes()).toBeLessThanOrEqual(64 * 2 ** 20);
    // An idle instance's memory is resident already: only what the session adds beyond it counts.
    const MiB = 2 ** 20;
    expect(residentBeside(900 * MiB, 300 * MiB, 200 * MiB)).toBe(700 * MiB);
    expect(residentBeside(900 * MiB, 100 * MiB, 200 * MiB)).toBe(800 * MiB);
    expect(residentBeside(900 * MiB, 0, 200 * MiB)).toBe(900 * MiB);
  });

  it('holds a large session in one instance only in half of what the budget leaves, and within 2 GiB', () => {
    const GiB = 2 ** 30;
    expect(budgetHolds(GiB, 4 * GiB, GiB)).toBe(true);
    expect(budgetHolds(GiB, 2.5 * GiB, GiB)).toBe(false);
    expect(budgetHolds(GiB, 0, 0)).toBe(false);
    expect(budgetHolds(2 * GiB, 100 * GiB, 0)).toBe(true);
    expect(budgetHolds(2.5 * GiB, 100 * GiB, 0)).toBe(false);
    // Whether a session would be one instance, asked before it is opened (the Search state's
    // merge is one grouping only then): small ones always, large ones as the budget allows.
    expect(wasmGroupingKernel.holdsInOne!(1000, 4)).toBe(true);
    expect(wasmGroupingKernel.holdsInOne!(10_000_000, 4)).toBe(false);
    expect(wasmGroupingKernel.within!(64 * GiB).holdsInOne!(10_000_000, 4)).toBe(true);
    expect(wasmGroupingKernel.within!(GiB).holdsInOne!(10_000_000, 4)).toBe(false);
    // A kernel given a budget groups as the default one does.
    const input = { columns: [Int32Array.of(2, 0, 2, 1)], domains: [3] };
    const within = wasmGroupingKernel.within!(64 * GiB).open(input, [[Int32Array.of(0, 0, 1)]]);
    expect(Array.from(within.group([0]).groupOf)).toEqual([0, 1, 0, 1]);
    within.dispose();
  });

  it('puts 4 GiB of WebAssembly memory at about 43 million tuples of 4 quasi-identifiers', () => {
    const limit = 2 ** 32;
    expect(wasmSessionBytes(42_000_000, 4)).toBeLessThan(limit);
    expect(wasmSessionBytes(43_000_000, 4)).toBeGreaterThan(limit);
  });
});
