/**
 * Plain-TS reference of the WASM Mondrian kernels (assembly/mondrian.ts): the same record
 * layout, the same stable partitions, the same median — so the records end in the same order,
 * not merely in equivalent partitions.
 */
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

export const tsMondrianKernel: MondrianKernel = {
  name: 'ts',
  open(input: MondrianInput): MondrianSession {
    const shape = mondrianShape(input);
    const { n, m, s, w, histWidth: W, histBase } = shape;
    const recs = new Int32Array(n * w);
    fillRecords(input, shape, recs);
    const scratch = new Int32Array(n * w);
    const out = new Int32Array(Math.max(3, 3 * m));
    const bounds = new Int32Array(shape.maxParts);
    const hist = new Int32Array(shape.maxParts * W);
    const counts = new Int32Array(Math.max(shape.maxLabels, shape.maxDomain));
    const partOf = new Int32Array(shape.maxLabels);
    const tables = input.hierarchies;

    const countSa = (at: number, base: number) => {
      for (let j = 0; j < s; j++) hist[base + histBase[j]! + recs[at + m + j]!]!++;
    };

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
        for (let i = 0; i < m; i++) {
          const levels = tables[i];
          const height = levels ? levels.length - 1 : 0;
          const k0 = recs[start * w + i]!;
          let min = k0;
          let max = k0;
          let lca = 0;
          for (let r = start, p = start * w + i; r < end; r++, p += w) {
            const k = recs[p]!;
            if (k < min) min = k;
            if (k > max) max = k;
            if (levels && k !== k0 && lca < height) {
              let l = Math.max(lca, 1);
              while (l < height && levels[l]![k] !== levels[l]![k0]) l++;
              lca = l;
            }
          }
          out[3 * i] = min;
          out[3 * i + 1] = max;
          out[3 * i + 2] = lca;
        }
      },
      median(start, end, dim, lo, hi, target, filterDim, filterValue) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        if (filterDim >= 0) checkDim(shape, filterDim);
        const span = hi - lo + 1;
        if (
          !(Number.isInteger(lo) && Number.isInteger(hi) && lo >= 0 && span >= 1 && hi < input.domains[dim]!)
        )
          throw kernelError('mondrian', Status.BadMedian, 'bad median bounds');
        if (span > 4 * (end - start) + 64) {
          // A wide span (many distinct numeric values): sort the keys instead of counting.
          const keys: number[] = [];
          for (let p = start * w; p < end * w; p += w) {
            if (filterDim >= 0 && recs[p + filterDim] !== filterValue) continue;
            const k = recs[p + dim]!;
            if (k < lo || k > hi)
              throw kernelError('mondrian', Status.BadMedian, 'median bounds or target do not fit the range');
            keys.push(k);
          }
          if (!(target >= 0 && target < keys.length))
            throw kernelError('mondrian', Status.BadMedian, 'median bounds or target do not fit the range');
          const value = Int32Array.from(keys).sort()[target]!;
          out[0] = value;
          out[1] = keys.filter((k) => k < value).length;
          out[2] = keys.filter((k) => k === value).length;
          return;
        }
        counts.fill(0, 0, span);
        for (let p = start * w; p < end * w; p += w) {
          if (filterDim >= 0 && recs[p + filterDim] !== filterValue) continue;
          const d = recs[p + dim]! - lo;
          if (d < 0 || d >= span)
            throw kernelError('mondrian', Status.BadMedian, 'median bounds or target do not fit the range');
          counts[d]!++;
        }
        let below = 0;
        for (let v = 0; v < span; v++) {
          const c = counts[v]!;
          if (below + c > target) {
            out[0] = lo + v;
            out[1] = below;
            out[2] = c;
            return;
          }
          below += c;
        }
        throw kernelError('mondrian', Status.BadMedian, 'median bounds or target do not fit the range');
      },
      cut(start, end, dim, value, quota, dim2, value2, move) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        if (dim2 >= 0) checkDim(shape, dim2);
        let taken = 0;
        let left = 0;
        // 0: right, 1: left, 2: left as one of the quota (see the kernel's sideOf).
        const side = (p: number): number => {
          const k = recs[p + dim]!;
          if (k !== value) return k < value ? 1 : 0;
          if (dim2 >= 0) {
            const k2 = recs[p + dim2]!;
            if (k2 !== value2) return k2 < value2 ? 1 : 0;
          }
          return taken < quota ? 2 : 0;
        };
        if (!move) {
          hist.fill(0, 0, 2 * W);
          for (let src = start * w; src < end * w; src += w) {
            const sd = side(src);
            if (sd === 2) taken++;
            if (sd !== 0) left++;
            countSa(src, sd !== 0 ? 0 : W);
          }
          return left;
        }
        let dst = start * w;
        let spill = 0;
        for (let src = start * w; src < end * w; src += w) {
          const sd = side(src);
          if (sd === 2) taken++;
          if (sd !== 0) {
            if (dst !== src) recs.copyWithin(dst, src, src + w);
            dst += w;
            left++;
          } else {
            scratch.set(recs.subarray(src, src + w), spill);
            spill += w;
          }
        }
        recs.set(scratch.subarray(0, spill), dst);
        return left;
      },
      group(start, end, dim, level, move) {
        checkRange(shape, start, end);
        checkDim(shape, dim);
        const levels = tables[dim];
        if (!levels || !(Number.isInteger(level) && level >= 0 && level < levels.length - 1))
          throw kernelError(
            'mondrian',
            Status.MissingLevel,
            `dimension ${dim} has no hierarchy level ${level}`,
          );
        const table = levels[level]!;
        const labels = shape.labelCounts[dim]![level]!;
        counts.fill(0, 0, labels);
        for (let p = start * w + dim; p < end * w; p += w) counts[table[recs[p]!]!]!++;
        let parts = 0;
        let offset = 0;
        for (let lab = 0; lab < labels; lab++) {
          const c = counts[lab]!;
          if (c === 0) continue;
          partOf[lab] = parts;
          counts[lab] = offset;
          offset += c;
          bounds[parts++] = offset;
        }
        if (!move) {
          if (W === 0) return parts;
          hist.fill(0, 0, parts * W);
          for (let p = start * w; p < end * w; p += w) countSa(p, partOf[table[recs[p + dim]!]!]! * W);
          return parts;
        }
        for (let p = start * w; p < end * w; p += w) {
          const slot = counts[table[recs[p + dim]!]!]!++;
          scratch.set(recs.subarray(p, p + w), slot * w);
        }
        recs.set(scratch.subarray(0, (end - start) * w), start * w);
        return parts;
      },
      rowOrder() {
        const order = new Int32Array(n);
        for (let r = 0, p = w - 1; r < n; r++, p += w) order[r] = recs[p]!;
        return order;
      },
      dispose() {},
    };
  },
};
