/**
 * The WASM grouping kernel: owns the memory layout of one session, places the tuples and
 * level tables once, then groups once per node with no copies but the small results.
 */

import { LimitError } from '../../errors.ts';
import { acquireCore, DEFAULT_RETAINED_BYTES, nextIdleBytes, releaseCore } from '../../wasm/module.ts';
import { kernelError, Status } from '../status.ts';
import { chunkedSession } from './chunked.ts';
import {
  directCapacity,
  type Grouping,
  type GroupingInput,
  type GroupingKernel,
  type GroupingSession,
  keyMode,
  keysOf,
  levelBases,
  PACKED_CODES_LIMIT,
  radices,
  tableCapacity,
  validateCodes,
  validateCompose,
  validateRollup,
  validateShapes,
} from './kernel.ts';

const PAGE = 65536;
/** A chunk's session stays below this, so that each chunk reuses the last one's instance. */
const REUSABLE_BYTES = DEFAULT_RETAINED_BYTES;
/** WebAssembly's 32-bit memory: an instance addresses at most 65,536 pages (4 GiB). */
export const WASM_MEMORY_BYTES = 65536 * PAGE;

/**
 * The most a session of `n` tuples over `m` columns lays out for its tuples: a hash slot table
 * of at most 4n cells (2^20 at least), the tuples and their whole-tuple keys (m cells each),
 * counts, src, weights, srcToGroup, sizes, reps, slots, the packed keys (two cells), and the
 * compose and histogram regions (four cells) — `open` below reserves these. Beyond it: the
 * level tables and place values, which grow with the domains, and a histogram's groups × width.
 */
export function wasmSessionBytes(n: number, m: number): number {
  return 4 * n * (17 + 2 * m) + 4 * (1 << 20);
}

/** A bump allocator over the instance's memory, grown once up front (growth detaches views). */
export class Layout {
  private top = 8; // keep 0 free: a null pointer means "absent" to the kernels
  constructor(
    private readonly memory: WebAssembly.Memory,
    private readonly n: number,
  ) {}
  reserve(bytes: number): number {
    const ptr = this.top;
    // (Not `& ~7`: bitwise operators wrap past 2³¹, and a region that large must reach commit's check.)
    this.top += Math.ceil(bytes / 8) * 8;
    return ptr;
  }
  /** Grows the memory to the layout, or refuses (naming the tuples) what 4 GiB cannot hold. */
  commit(): void {
    if (this.top > WASM_MEMORY_BYTES) {
      throw new LimitError(
        'E_LIMIT_MEMORY',
        `grouping ${this.n.toLocaleString('en')} distinct tuples needs ${Math.ceil(this.top / 2 ** 20).toLocaleString('en')} MiB of WebAssembly memory, over the 4,096 MiB one instance can address`,
        'coarsen the quasi-identifiers before the release (fewer distinct tuples), or release the table in smaller pieces',
      );
    }
    const need = Math.ceil(this.top / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (need > 0) this.memory.grow(need);
  }
  get end(): number {
    return this.top;
  }
}

/**
 * Sessions that would lay out more than this group in parts instead (chunked.ts), unless their
 * caller's budget has room (`within`): one instance's memory never shrinks and addresses 4 GiB
 * at most, while the parts reuse one small instance and the classes grow in plain arrays — at
 * less memory and about twice the CPU time per tuple (bench/search-memory.ts).
 */
export const CHUNKED_ABOVE_BYTES = 256 * 2 ** 20;

export const wasmGroupingKernel: GroupingKernel = wasmKernelWithin(0);

/**
 * The WASM kernel whose sessions may take `budget` bytes (a state's memory budget; 0: none
 * given): one instance holds a session's tuples when it lays out at most CHUNKED_ABOVE_BYTES,
 * or when the budget has room for it (`budgetHolds`); else the session groups in parts
 * (chunked.ts), at a bounded size.
 */
function wasmKernelWithin(budget: number): GroupingKernel {
  /** Whether a session of `n` tuples over `m` columns (and `extra` bytes of level tables) is one instance. */
  const oneInstance = (n: number, m: number, extra = 0) => {
    const bytes = wasmSessionBytes(n, m);
    return (
      bytes <= CHUNKED_ABOVE_BYTES ||
      (budget > 0 &&
        budgetHolds(bytes + extra, budget, residentBeside(process.memoryUsage.rss(), nextIdleBytes(), bytes)))
    );
  };
  return {
    name: 'wasm',
    open(input, tables) {
      const n = input.columns[0]?.length ?? 0;
      if (oneInstance(n, input.columns.length, levelTableBytes(input, tables)))
        return openSession(input, tables);
      return chunkedSession(input, tables, openSession, chunkTuplesFor(input, tables));
    },
    holdsInOne: (n, m) => oneInstance(n, m),
    within: (bytes) => wasmKernelWithin(bytes),
  };
}

/**
 * Whether a session of `bytes` fits the `budget` beside the process's resident memory `rss`: in
 * half of what is left (the other half for what the caller builds from its results, the
 * search's classes), and never past ONE_INSTANCE_BYTES.
 */
export function budgetHolds(bytes: number, budget: number, rss: number): boolean {
  return bytes <= Math.min((budget - rss) / 2, ONE_INSTANCE_BYTES);
}

/**
 * The resident memory `rss` beside a session of `bytes` that takes an idle instance of `idle`
 * bytes: that instance's memory is resident already, and the session uses it (the Search
 * state's merge hands its instance to the search's session).
 */
export function residentBeside(rss: number, idle: number, bytes: number): number {
  return rss - Math.min(idle, bytes);
}

/**
 * The most a session takes in one instance whatever the budget: half of 4 GiB (about 20 million
 * tuples of 4 quasi-identifiers), the rest for its compose and histogram regions.
 */
const ONE_INSTANCE_BYTES = WASM_MEMORY_BYTES / 2;

/** A session's level tables and place values (beyond wasmSessionBytes): they grow with the domains. */
function levelTableBytes(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): number {
  const codes = input.domains.reduce((a, d) => a + d, 0);
  return tables.flat().reduce((a, t) => a + 4 * t.length, 0) + 8 * codes;
}

/** The WASM kernel grouping every session in chunks of `chunkTuples` (the tests' small chunks). */
export function chunkedWasmKernel(chunkTuples: number): GroupingKernel {
  return { name: 'wasm', open: (input, tables) => chunkedSession(input, tables, openSession, chunkTuples) };
}

/** Tuples per chunk: a chunk's session, level tables and place values included, stays reusable. */
function chunkTuplesFor(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): number {
  const fixed = 4 * (1 << 20) + levelTableBytes(input, tables) + (1 << 20);
  // wasmSessionBytes less its hash slots, which stay at their 2^20-cell floor for a chunk this size.
  const perTuple = 4 * (13 + 2 * input.columns.length);
  // At least 2^16 tuples: each chunk's session copies the level tables in again.
  return Math.max(1 << 16, Math.min(1 << 18, Math.floor((REUSABLE_BYTES - fixed) / perTuple)));
}

/** One session in one instance (all the tuples in its memory). */
function openSession(
  input: GroupingInput,
  tables: readonly (readonly Int32Array[])[],
  /** The tables' level bases when the caller has them (a chunk's session: every chunk has the same). */
  knownBases?: number[][],
): GroupingSession {
  const n = validateShapes(input, tables); // the codes are checked as they are placed
  const m = input.columns.length;
  const { core, zeroFrom, zeroBytes } = acquireCore();
  const layout = new Layout(core.memory, n);
  // The hash table first, at the same place in every session: a reused instance's is still zero.
  const capacity = directCapacity(n);
  const table = layout.reserve(4 * capacity); // every call clears the slots it used
  const cols = layout.reserve(4 * m * n);
  const counts = input.counts ? layout.reserve(4 * n) : 0;
  const tablePtrs = tables.map((levels) => levels.map((t) => layout.reserve(4 * t.length)));
  const maps = layout.reserve(4 * m);
  const radix = layout.reserve(8 * m);
  const domains = layout.reserve(4 * m);
  const codes = input.domains.reduce((a, d) => a + d, 0);
  const contribs = layout.reserve(4 * m + 8 + (codes > PACKED_CODES_LIMIT ? 0 : 8 * codes));
  const src = layout.reserve(4 * n);
  const weights = layout.reserve(4 * n);
  const srcToGroup = layout.reserve(4 * n);
  const sizes = layout.reserve(4 * n);
  const reps = layout.reserve(4 * n);
  const packed = layout.reserve(8 * n);
  const slots = layout.reserve(4 * n);
  // The whole-tuple keys (m cells a tuple) only when some node's keys may not pack.
  const bases = knownBases ?? levelBases(input.domains, tables);
  const widest = input.domains.reduce((p, d, i) => p * Math.max(d, ...bases[i]!), 1);
  const keys = keyMode(widest, codes, capacity) === 'tuple' ? layout.reserve(4 * m * n) : 0;
  const scratchStart = layout.end; // the regions of compose and histogram live past this point
  layout.commit();
  /** The compose and histogram regions (n cells each) and their scratch, placed on first use. */
  let late: { composedIn: number; composed: number; mapIn: number; valuesIn: number; end: number };
  const lateRegions = () => {
    if (!late) {
      const more = new Layout(core.memory, n);
      more.reserve(scratchStart);
      late = {
        composedIn: more.reserve(4 * n),
        composed: more.reserve(4 * n),
        mapIn: more.reserve(4 * n),
        valuesIn: more.reserve(4 * n),
        end: more.end,
      };
      more.commit();
    }
    return late;
  };
  const i32 = () => new Int32Array(core.memory.buffer);
  const heap = i32();
  const zeroEnd = zeroFrom + zeroBytes;
  if (zeroFrom > table || zeroEnd <= table) heap.fill(0, table / 4, table / 4 + capacity);
  else if (zeroEnd < table + 4 * capacity) heap.fill(0, zeroEnd / 4, table / 4 + capacity);
  /** False while a kernel call runs: a call that traps may leave table slots set. */
  let clean = true;
  let disposed = false;
  /** The instance may serve another session once this one is disposed: no use after that. */
  const live = () => {
    if (disposed) throw new Error('grouping session used after dispose');
    return i32();
  };
  // Row-major: a rollup reads scattered representatives, one cache line each. Each column
  // goes in through the packed-key scratch, and the kernel places and checks it.
  heap.set(input.domains, domains / 4);
  for (let i = 0; i < m; i++) {
    heap.set(input.columns[i]!, packed / 4);
    if (core.placeColumn(packed, n, m, i, input.domains[i]!, cols) < 0) validateCodes(input);
  }
  if (input.counts) heap.set(input.counts, counts / 4);
  tables.forEach((levels, i) => {
    levels.forEach((t, l) => {
      heap.set(t, tablePtrs[i]![l]! / 4);
    });
  });
  const mapsAt = (levels: ArrayLike<number> | null) =>
    input.columns.map((_, i) => (levels ? tables[i]![levels[i]!]! : null));
  // What sits in the instance's memory already: the last composed map, the last SA column.
  let lastComposed: Int32Array | undefined;
  let lastValues: Int32Array | undefined;
  let last: { levels: ArrayLike<number> | null; reps: Int32Array } = {
    levels: null,
    reps: new Int32Array(0),
  };

  /** The grouping whose classes are the sources in the instance's memory now. */
  let sourcesIn: Grouping | undefined;
  /** Groups `nSrc` sources (tuples when `from` is absent) under `levels`. */
  const run = (levels: ArrayLike<number> | null, from: Grouping | null, withMap: boolean) => {
    const mem = live();
    const { radix: bases_, product } = radices(input.domains, bases, levels);
    const mode = keyMode(product, codes, capacity);
    for (let i = 0; i < m; i++) {
      mem[maps / 4 + i] = levels ? tablePtrs[i]![levels[i]!]! : 0;
      // u64 little-endian: the base (< 2^31) in the low word, zero in the high one.
      mem[radix / 4 + 2 * i] = bases_[i]!;
      mem[radix / 4 + 2 * i + 1] = 0;
    }
    const nSrc = from ? from.groups : n;
    // A search rolls up from one grouping many times: its sources stay in place (no call
    // writes them) instead of being copied in again, millions of them, for every rollup.
    if (from && from !== sourcesIn) {
      mem.set(from.reps.subarray(0, nSrc), src / 4);
      mem.set(from.sizes.subarray(0, nSrc), weights / 4);
      sourcesIn = from;
    }
    clean = false;
    const groups = core.groupBy(
      cols,
      n,
      m,
      maps,
      mode === 'tuple' ? 0 : radix,
      domains,
      contribs,
      from ? src : 0,
      nSrc,
      from ? weights : counts,
      withMap ? srcToGroup : 0,
      sizes,
      reps,
      packed,
      slots,
      keys,
      table,
      mode === 'direct' ? capacity : tableCapacity(nSrc),
      mode === 'direct' ? 1 : 0,
    );
    clean = true;
    if (groups < 0)
      throw kernelError('rollup', groups as Status, `a source class names a tuple outside [0, ${n})`);
    // Sizes and representatives leave in one copy (one buffer, two views): a node's results
    // are small and many, and each buffer costs an allocation and its finalization.
    mem.copyWithin(sizes / 4 + groups, reps / 4, reps / 4 + groups);
    const both = mem.slice(sizes / 4, sizes / 4 + 2 * groups);
    return {
      groups,
      sizes: both.subarray(0, groups),
      reps: both.subarray(groups),
      ...(withMap ? { map: mem.slice(srcToGroup / 4, srcToGroup / 4 + nSrc) } : {}),
    };
  };

  return {
    n,
    domains: input.domains,
    group(levels) {
      const r = run(levels, null, true);
      last = { levels, reps: r.reps };
      return { groups: r.groups, groupOf: r.map!, sizes: r.sizes, reps: r.reps };
    },
    rollup(levels, from, withMap = true) {
      validateRollup(from, n, false); // the kernel checks each source's tuple itself
      return run(levels, from, withMap);
    },
    compose(groupOfArr, map) {
      validateCompose(groupOfArr, map, n);
      live();
      const { composedIn, composed, mapIn } = lateRegions();
      const mem = i32();
      mem.set(groupOfArr, composedIn / 4);
      mem.set(map, mapIn / 4);
      // The kernel checks each class id against the map (and stops at the first bad one).
      if (core.compose(composedIn, mapIn, n, map.length, composed) < 0)
        throw kernelError('compose', Status.ClassOutOfMap, 'a class id is outside the map');
      lastComposed = mem.slice(composed / 4, composed / 4 + n);
      return lastComposed;
    },
    histogram(groupOfArr, groups, values, width) {
      live();
      const { composedIn, composed, valuesIn, end } = lateRegions();
      if (end + 4 * groups * width > WASM_MEMORY_BYTES) {
        throw new LimitError(
          'E_LIMIT_MEMORY',
          `counting a sensitive attribute of ${width.toLocaleString('en')} values in each of ${groups.toLocaleString('en')} classes needs ${Math.ceil((4 * groups * width) / 2 ** 20).toLocaleString('en')} MiB of WebAssembly memory, over the 4,096 MiB one instance can address`,
          'give the sensitive attribute fewer values (round or bin it, e.g. with its hierarchy), or coarsen the quasi-identifiers',
        );
      }
      const hist = new Layout(core.memory, n);
      hist.reserve(end);
      const out = hist.reserve(4 * groups * width);
      hist.commit();
      const mem = i32();
      if (values !== lastValues) {
        for (let t = 0; t < n; t++) {
          const x = values[t]!;
          if (x < 0 || x >= width)
            throw kernelError('histogram', Status.TupleOutOfRange, `tuple ${t} out of range`);
        }
        mem.set(values, valuesIn / 4);
        lastValues = values;
      }
      let g = composed;
      if (groupOfArr !== lastComposed) {
        for (let t = 0; t < n; t++) {
          if (groupOfArr[t]! < 0 || groupOfArr[t]! >= groups)
            throw kernelError('histogram', Status.TupleOutOfRange, `tuple ${t} out of range`);
        }
        mem.set(groupOfArr, composedIn / 4);
        g = composedIn;
      }
      core.histogram(g, valuesIn, counts, n, groups, width, out);
      return i32().slice(out / 4, out / 4 + groups * width);
    },
    keys(groups) {
      return keysOf(input.columns, mapsAt(last.levels), last.reps, groups);
    },
    dispose() {
      if (!disposed && clean) releaseCore(core, table, 4 * capacity);
      disposed = true;
    },
  };
}
