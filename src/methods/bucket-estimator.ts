/**
 * What an analyst recovers from a bucketized release (Anatomy, Slicing): within a bucket B,
 * attributes released in the same column keep their joint distribution, and different
 * columns are independent, so the estimated probability of a cell t of any marginal is
 *   π̂(t) = Σ_B (|B|/N) · Π_{columns C} (share of B's rows whose C-attributes match t).
 * Anatomy is the case of two columns: everything but the SA, and the SA.
 *
 * Per set of attributes that share a column, the value ids and each bucket's (value, count) list
 * are computed once and cached (a CUBE asks for the same sets many times); a marginal then
 * costs, per bucket, the distinct values of each column touched plus the cells holding the
 * bucket's values of the most selective column, counted before it starts (a budget may refuse
 * it). A pair's whole joint table (the uncertainty coefficients) is, per bucket, the product of
 * its two values lists, or the pair's own counts when both share a column.
 */
import { type Estimator, takeSteps } from '../metrics/contingency.ts';

export interface BucketLayout {
  /** Rows grouped by bucket: bucket b is rows[start[b], start[b + 1]). */
  readonly rows: Int32Array;
  readonly start: Int32Array;
}

export function bucketEstimator(
  layout: BucketLayout,
  attributeCodes: readonly Int32Array[],
  domains: readonly number[],
  /** Released attribute → its column. */
  columnOf: readonly number[],
): Estimator {
  const { rows, start } = layout;
  const n = rows.length;
  const buckets = start.length - 1;
  const cache = new Map<string, Part>();
  const partOf = (attributes: number[]): Part => {
    const name = attributes.join(',');
    let part = cache.get(name);
    if (!part) cache.set(name, (part = buildPart(attributes, attributeCodes, domains, layout)));
    return part;
  };
  return {
    pair(x, y, budget) {
      const dx = domains[x]!;
      const dy = domains[y]!;
      const out = new Float64Array(dx * dy);
      if (n === 0) return out;
      if (columnOf[x] === columnOf[y]) {
        // One column: the pair's joint is kept exactly.
        if (!takeSteps(budget, n)) return undefined;
        const cx = attributeCodes[x]!;
        const cy = attributeCodes[y]!;
        for (let r = 0; r < n; r++) out[cx[r]! * dy + cy[r]!]! += 1 / n;
        return out;
      }
      const px = partOf([x]);
      const py = partOf([y]);
      let cost = 0;
      for (let b = 0; b < buckets; b++) {
        cost += (px.bucketStart[b + 1]! - px.bucketStart[b]!) * (py.bucketStart[b + 1]! - py.bucketStart[b]!);
      }
      if (!takeSteps(budget, cost)) return undefined;
      const codeX = px.codeOf(attributeCodes[x]!);
      const codeY = py.codeOf(attributeCodes[y]!);
      for (let b = 0; b < buckets; b++) {
        const weight = 1 / n / (start[b + 1]! - start[b]!);
        for (let e = px.bucketStart[b]!; e < px.bucketStart[b + 1]!; e++) {
          const at = codeX[px.entryIds[e]!]! * dy;
          const wx = px.entryCounts[e]! * weight;
          for (let f = py.bucketStart[b]!; f < py.bucketStart[b + 1]!; f++) {
            out[at + codeY[py.entryIds[f]!]!]! += wx * py.entryCounts[f]!;
          }
        }
      }
      return out;
    },
    marginal(attrs, cells, budget) {
      const cellCount = cells[0]?.length ?? 1;
      const out = new Float64Array(cellCount);
      if (n === 0) return out;
      if (attrs.length === 0) {
        out[0] = 1;
        return out;
      }
      // Positions of the marginal's attributes, grouped by column.
      const byColumn = new Map<number, number[]>();
      attrs.forEach((a, j) => {
        const g = byColumn.get(columnOf[a]!) ?? [];
        g.push(j);
        byColumn.set(columnOf[a]!, g);
      });
      const groups = [...byColumn.values()];
      const parts = groups.map((positions) => partOf(positions.map((j) => attrs[j]!)));
      // Each cell's value id per part (−1: the value never occurs, the estimate is 0).
      const cellIds = parts.map((part, g) => {
        const values = groups[g]!.map((j) => cells[j]!);
        const ids = new Int32Array(cellCount);
        for (let c = 0; c < cellCount; c++) ids[c] = part.ids.get(part.key(values, c)) ?? -1;
        return ids;
      });
      if (parts.length === 1) {
        // One column: its joint is kept exactly.
        if (!takeSteps(budget, cellCount)) return undefined;
        for (let c = 0; c < cellCount; c++) {
          const id = cellIds[0]![c]!;
          if (id >= 0) out[c] = parts[0]!.totals[id]! / n;
        }
        return out;
      }
      const known = (c: number) => {
        for (const ids of cellIds) if (ids[c]! < 0) return false;
        return true;
      };
      // The lead part visits, per bucket, the cells holding each of its values there: choose
      // the part with the fewest such visits. Cells grouped by its value id (CSR).
      let lead = 0;
      let leastVisits = Number.POSITIVE_INFINITY;
      parts.forEach((p, g) => {
        let visits = 0;
        for (let c = 0; c < cellCount; c++) if (known(c)) visits += p.bucketsWith[cellIds[g]![c]!]!;
        if (visits < leastVisits) {
          leastVisits = visits;
          lead = g;
        }
      });
      // Per bucket, each part's entries set and cleared, and the lead's cells each checked.
      let entries = 0;
      for (const p of parts) entries += p.entryIds.length;
      if (!takeSteps(budget, 2 * entries + leastVisits * parts.length + cellCount * parts.length))
        return undefined;
      const leadPart = parts[lead]!;
      const cellStart = new Int32Array(leadPart.count + 1);
      for (let c = 0; c < cellCount; c++) if (known(c)) cellStart[cellIds[lead]![c]! + 1]!++;
      for (let v = 0; v < leadPart.count; v++) cellStart[v + 1]! += cellStart[v]!;
      const cellList = new Int32Array(cellStart[leadPart.count]!);
      const fill = cellStart.slice(0, leadPart.count);
      for (let c = 0; c < cellCount; c++) if (known(c)) cellList[fill[cellIds[lead]![c]!]!++] = c;

      const scratch = parts.map((p, g) => (g === lead ? null : new Float64Array(p.count)));
      for (let b = 0; b < buckets; b++) {
        const size = start[b + 1]! - start[b]!;
        for (let g = 0; g < parts.length; g++) {
          const counts = scratch[g];
          if (!counts) continue;
          const p = parts[g]!;
          for (let e = p.bucketStart[b]!; e < p.bucketStart[b + 1]!; e++)
            counts[p.entryIds[e]!] = p.entryCounts[e]!;
        }
        const weight = 1 / n / size ** (parts.length - 1);
        for (let e = leadPart.bucketStart[b]!; e < leadPart.bucketStart[b + 1]!; e++) {
          const v = leadPart.entryIds[e]!;
          const base = leadPart.entryCounts[e]! * weight;
          for (let q = cellStart[v]!; q < cellStart[v + 1]!; q++) {
            const c = cellList[q]!;
            let f = base;
            for (let g = 0; g < parts.length && f > 0; g++)
              if (g !== lead) f *= scratch[g]![cellIds[g]![c]!]!;
            out[c]! += f;
          }
        }
        for (let g = 0; g < parts.length; g++) {
          const counts = scratch[g];
          if (!counts) continue;
          const p = parts[g]!;
          for (let e = p.bucketStart[b]!; e < p.bucketStart[b + 1]!; e++) counts[p.entryIds[e]!] = 0;
        }
      }
      return out;
    },
  };
}

/** A set of attributes of one column: value ids, and per bucket its (value id, count) entries. */
interface Part {
  /** Key of entry `i` of code columns laid out like the part's attributes. */
  readonly key: (columns: readonly Int32Array[], i: number) => number | string;
  readonly ids: Map<number | string, number>;
  readonly count: number;
  /** Rows per value id over the table. */
  readonly totals: Float64Array;
  /** Buckets holding each value id. */
  readonly bucketsWith: Int32Array;
  /** Bucket b's entries are [bucketStart[b], bucketStart[b + 1]). */
  readonly bucketStart: Int32Array;
  readonly entryIds: Int32Array;
  readonly entryCounts: Int32Array;
  /** A one-attribute part: each value id's code, from that attribute's codes. */
  readonly codeOf: (codes: Int32Array) => Int32Array;
}

function buildPart(
  attributes: number[],
  codes: readonly Int32Array[],
  domains: readonly number[],
  layout: BucketLayout,
): Part {
  const { rows, start } = layout;
  const n = rows.length;
  const buckets = start.length - 1;
  const radix = attributes.map((a) => Math.max(1, domains[a]!));
  let product = 1;
  for (const r of radix) product *= r;
  // A mixed-radix number when it fits in 2^53, else a string.
  const key =
    product <= Number.MAX_SAFE_INTEGER
      ? (cols: readonly Int32Array[], i: number) => {
          let k = 0;
          for (let x = 0; x < cols.length; x++) k = k * radix[x]! + cols[x]![i]!;
          return k;
        }
      : (cols: readonly Int32Array[], i: number) => cols.map((col) => col[i]!).join(',');
  const columns = attributes.map((a) => codes[a]!);
  const ids = new Map<number | string, number>();
  const rowIds = new Int32Array(n);
  for (let r = 0; r < n; r++) {
    const k = key(columns, r);
    let id = ids.get(k);
    if (id === undefined) ids.set(k, (id = ids.size));
    rowIds[r] = id;
  }
  const count = ids.size;
  const totals = new Float64Array(count);
  const bucketsWith = new Int32Array(count);
  const scratch = new Int32Array(count);
  const bucketStart = new Int32Array(buckets + 1);
  const entryIds: number[] = [];
  const entryCounts: number[] = [];
  for (let b = 0; b < buckets; b++) {
    const first = entryIds.length;
    for (let i = start[b]!; i < start[b + 1]!; i++) {
      const id = rowIds[rows[i]!]!;
      if (scratch[id] === 0) {
        entryIds.push(id);
        bucketsWith[id]!++;
      }
      scratch[id]!++;
      totals[id]!++;
    }
    for (let e = first; e < entryIds.length; e++) {
      entryCounts.push(scratch[entryIds[e]!]!);
      scratch[entryIds[e]!] = 0;
    }
    bucketStart[b + 1] = entryIds.length;
  }
  // Each id's first row, to name its value.
  const firstRow = new Int32Array(count).fill(-1);
  for (let r = 0; r < n; r++) if (firstRow[rowIds[r]!]! < 0) firstRow[rowIds[r]!] = r;
  return {
    key,
    ids,
    count,
    totals,
    codeOf: (codes) => firstRow.map((r) => codes[r]!),
    bucketsWith,
    bucketStart,
    entryIds: Int32Array.from(entryIds),
    entryCounts: Int32Array.from(entryCounts),
  };
}
