/**
 * The WASM grouping kernel: owns the memory layout of one session, places the tuples and
 * level tables once, then groups once per node with no copies but the small results.
 */
import { instantiateCore } from '../wasm/module.ts';
import {
  type GroupingInput,
  type GroupingKernel,
  type GroupingSession,
  tableCapacity,
  validateGroupingInput,
} from './grouping.ts';

const PAGE = 65536;

/** A bump allocator over the instance's memory, grown once up front (growth detaches views). */
class Layout {
  private top = 8; // keep 0 free: a null pointer means "absent" to the kernels
  constructor(private readonly memory: WebAssembly.Memory) {}
  reserve(bytes: number): number {
    const ptr = this.top;
    this.top += (bytes + 7) & ~7;
    return ptr;
  }
  commit(): void {
    const need = Math.ceil(this.top / PAGE) - this.memory.buffer.byteLength / PAGE;
    if (need > 0) this.memory.grow(need);
  }
  get end(): number {
    return this.top;
  }
}

export const wasmGroupingKernel: GroupingKernel = {
  name: 'wasm',
  open(input: GroupingInput, tables: readonly (readonly Int32Array[])[]): GroupingSession {
    const n = validateGroupingInput(input, tables);
    const m = input.columns.length;
    const core = instantiateCore();
    const layout = new Layout(core.memory);
    const cols = layout.reserve(4 * m * n);
    const counts = input.counts ? layout.reserve(4 * n) : 0;
    const tablePtrs = tables.map((levels) => levels.map((t) => layout.reserve(4 * t.length)));
    const maps = layout.reserve(4 * m);
    const radix = layout.reserve(8 * m);
    const packed = layout.reserve(8 * n);
    const groupOf = layout.reserve(4 * n);
    const sizes = layout.reserve(4 * n);
    const keys = layout.reserve(4 * m * n);
    const capacity = tableCapacity(n);
    const table = layout.reserve(4 * capacity);
    const scratchStart = layout.end; // histograms live past this point, grown on demand
    layout.commit();

    // Digit bases for packed keys: the number of generalized codes per column and level.
    const bases = input.domains.map((d, i) => (tables[i] ?? []).map((t) => maxOf(t.subarray(0, d)) + 1));
    const i32 = () => new Int32Array(core.memory.buffer);
    const heap = i32();
    for (let i = 0; i < m; i++) heap.set(input.columns[i]!, cols / 4 + i * n);
    if (input.counts) heap.set(input.counts, counts / 4);
    tables.forEach((levels, i) => {
      levels.forEach((t, l) => {
        heap.set(t, tablePtrs[i]![l]! / 4);
      });
    });

    return {
      n,
      group(levels) {
        const mem = i32();
        const radices = new BigUint64Array(core.memory.buffer, radix, m);
        let product = 1;
        for (let i = 0; i < m; i++) {
          mem[maps / 4 + i] = levels ? tablePtrs[i]![levels[i]!]! : 0;
          const base = levels ? bases[i]![levels[i]!]! : input.domains[i]!;
          radices[i] = BigInt(base);
          product *= base;
        }
        const packable = product < 2 ** 53;
        const groups = core.groupBy(
          cols,
          n,
          n,
          m,
          maps,
          packable ? radix : 0,
          counts,
          groupOf,
          sizes,
          keys,
          packed,
          table,
          capacity,
        );
        return {
          groups,
          groupOf: mem.slice(groupOf / 4, groupOf / 4 + n),
          sizes: mem.slice(sizes / 4, sizes / 4 + groups),
        };
      },
      histogram(groupOfArr, groups, values, width) {
        const hist = new Layout(core.memory);
        hist.reserve(scratchStart);
        const g = hist.reserve(4 * n);
        const v = hist.reserve(4 * n);
        const out = hist.reserve(4 * groups * width);
        hist.commit();
        for (let t = 0; t < n; t++) {
          const x = values[t]!;
          if (x < 0 || x >= width || groupOfArr[t]! < 0 || groupOfArr[t]! >= groups) {
            throw new RangeError(`histogram: tuple ${t} out of range`);
          }
        }
        const mem = i32();
        mem.set(groupOfArr, g / 4);
        mem.set(values, v / 4);
        core.histogram(g, v, counts, n, groups, width, out);
        return i32().slice(out / 4, out / 4 + groups * width);
      },
      keys(groups) {
        const mem = i32();
        const rowMajor = mem.subarray(keys / 4, keys / 4 + groups * m);
        return Array.from({ length: m }, (_, i) =>
          Int32Array.from({ length: groups }, (_, g) => rowMajor[g * m + i]!),
        );
      },
      dispose() {},
    };
  },
};

function maxOf(values: Int32Array): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) if (values[i]! > max) max = values[i]!;
  return max;
}
