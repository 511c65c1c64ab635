/**
 * The WASM Mondrian kernel: owns the memory layout of one session (records, scratch,
 * hierarchy tables, result buffers), places the records once, grows memory once, and then
 * runs each split step in place with no copies but the small results, read through views
 * made once (memory never grows after `open`).
 */

import { instantiateCore } from '../../wasm/module.ts';
import { kernelError, Status } from '../status.ts';
import {
  checkDim,
  checkRange,
  fillRecords,
  type MondrianInput,
  type MondrianKernel,
  type MondrianSession,
  mondrianShape,
} from './kernel.ts';

const PAGE = 65536;

export const wasmMondrianKernel: MondrianKernel = {
  name: 'wasm',
  open(input: MondrianInput): MondrianSession {
    const shape = mondrianShape(input);
    const { n, m, s, w, histWidth: W, histBase } = shape;
    const core = instantiateCore();

    let top = 8; // keep 0 free: a null table pointer means "no hierarchy"
    const reserve = (bytes: number) => {
      const ptr = top;
      top += (bytes + 7) & ~7;
      return ptr;
    };
    const recs = reserve(4 * n * w);
    const scratch = reserve(4 * n * w);
    const dims = reserve(16 * m);
    const tablePtrs = input.hierarchies.map((levels, i) =>
      levels ? reserve(4 * levels.length * input.domains[i]!) : 0,
    );
    const saBase = reserve(4 * Math.max(1, s));
    const counts = reserve(4 * Math.max(shape.maxLabels, shape.maxDomain));
    const partOf = reserve(4 * shape.maxLabels);
    const boundsPtr = reserve(4 * shape.maxParts);
    const histPtr = reserve(4 * Math.max(1, shape.maxParts * W));
    const outPtr = reserve(4 * Math.max(3, 3 * m));
    const need = Math.ceil(top / PAGE) - core.memory.buffer.byteLength / PAGE;
    if (need > 0) core.memory.grow(need);

    const heap = new Int32Array(core.memory.buffer);
    fillRecords(input, shape, heap, recs / 4);
    input.hierarchies.forEach((levels, i) => {
      const domain = input.domains[i]!;
      heap[dims / 4 + 4 * i] = tablePtrs[i]!;
      heap[dims / 4 + 4 * i + 1] = levels ? levels.length - 1 : 0;
      heap[dims / 4 + 4 * i + 2] = domain;
      heap[dims / 4 + 4 * i + 3] = shape.contiguous[i] ? 1 : 0;
      levels?.forEach((t, l) => {
        heap.set(t.subarray(0, domain), tablePtrs[i]! / 4 + l * domain);
      });
    });
    heap.set(histBase, saBase / 4);
    const out = heap.subarray(outPtr / 4, outPtr / 4 + Math.max(3, 3 * m));
    const bounds = heap.subarray(boundsPtr / 4, boundsPtr / 4 + shape.maxParts);
    const hist = heap.subarray(histPtr / 4, histPtr / 4 + shape.maxParts * W);

    return {
      n,
      m,
      histWidth: W,
      histBase,
      out,
      bounds,
      hist,
      stats(start, end) {
        checkRange(shape, start, end);
        core.mondrianStats(recs, w, start, end, m, dims, outPtr);
      },
      median(start, end, dim, lo, hi, target, filterDim, filterValue) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        if (filterDim >= 0) checkDim(shape, filterDim);
        if (
          !(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && hi >= lo && hi < input.domains[dim]!)
        )
          throw kernelError('mondrian', Status.BadMedian, 'bad median bounds');
        const found = core.mondrianMedian(
          recs,
          w,
          start,
          end,
          dim,
          lo,
          hi,
          target | 0,
          filterDim < 0 ? -1 : filterDim,
          filterValue | 0,
          counts,
          scratch,
          outPtr,
        );
        if (found !== Status.Ok)
          throw kernelError('mondrian', found as Status, 'median bounds or target do not fit the range');
      },
      cut(start, end, dim, value, quota, dim2, value2, move) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        if (dim2 >= 0) checkDim(shape, dim2);
        return core.mondrianCut(
          recs,
          scratch,
          w,
          start,
          end,
          dim,
          value | 0,
          Math.min(quota, n) | 0,
          dim2 < 0 ? -1 : dim2,
          value2 | 0,
          m,
          s,
          saBase,
          histPtr,
          W,
          move ? 1 : 0,
        );
      },
      group(start, end, dim, level, move) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        const levels = input.hierarchies[dim];
        if (!levels || !(Number.isInteger(level) && level >= 0 && level < levels.length - 1))
          throw kernelError(
            'mondrian',
            Status.MissingLevel,
            `dimension ${dim} has no hierarchy level ${level}`,
          );
        const table = tablePtrs[dim]! + 4 * level * input.domains[dim]!;
        const labels = shape.labelCounts[dim]![level]!;
        return core.mondrianGroup(
          recs,
          scratch,
          w,
          start,
          end,
          dim,
          table,
          labels,
          counts,
          partOf,
          boundsPtr,
          m,
          s,
          saBase,
          histPtr,
          W,
          move ? 1 : 0,
        );
      },
      rowOrder() {
        const order = new Int32Array(n);
        for (let r = 0, p = recs / 4 + w - 1; r < n; r++, p += w) order[r] = heap[p]!;
        return order;
      },
      dispose() {},
    };
  },
};
