import { describe, expect, it } from 'vitest';
import { hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { wasmMondrianKernel } from '../../src/kernels/mondrian/wasm.ts';
import { mondrianEstimator } from '../../src/methods/mondrian/estimator.ts';
import { runMondrian } from '../../src/methods/mondrian/index.ts';
import { prepareMondrian } from '../../src/methods/mondrian/prepare.ts';
import { marginalCounts } from '../../src/metrics/contingency.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';

const SPEC = new URL('../../examples/adult-mondrian/release.json', import.meta.url).pathname;

describe('Mondrian estimator (uniform spread within classes)', () => {
  const base = loadSpec(SPEC);
  const table = readInput(base);
  const spec: ReleaseSpec = {
    ...base,
    privacy: [{ model: 'k-anonymity', k: 50 }],
    method: { name: 'mondrian', mode: 'relaxed', measures: true },
  };
  const { problem } = prepareMondrian(spec, table);
  const { released } = runMondrian(problem, wasmMondrianKernel);
  const columns = table.columns; // Adult has no identifying column
  const estimator = mondrianEstimator(columns, problem, released);
  const n = table.rowCount;

  // Independent of the estimator: what each released string covers, from the value strings.
  const covered = columns.map((col) => {
    const dim = problem.dims.findIndex((d) => d.name === col.name);
    if (dim < 0) return null;
    const a = spec.attributes.find((x) => x.name === col.name)!;
    const rows = a.hierarchy ? new Map(hierarchyRows(col, a.hierarchy).map((r) => [r[0]!, r])) : null;
    return released.dictionaries[dim]!.map((label) =>
      col.dictionary.map((value) => {
        if (problem.dims[dim]!.kind === 'numeric') {
          const [lo, hi] = label.slice(1, -1).split('-').map(Number);
          return Number(value) >= lo! && Number(value) <= hi!;
        }
        return rows!.get(value)!.includes(label);
      }),
    );
  });
  const present = columns.map((col) => {
    const used = new Uint8Array(col.dictionary.length);
    for (const c of col.codes) used[c] = 1;
    return used;
  });

  /** π̂ by its definition: each row spread over its class's box (rows grouped by partition). */
  function bruteForce(attrs: number[], cells: Int32Array[]): Float64Array {
    const out = new Float64Array(cells[0]!.length);
    const groups = new Map<string, { p: number; row: number; count: number }>();
    for (let r = 0; r < n; r++) {
      const p = released.partitionOf[r]!;
      const key = [p, ...attrs.filter((a) => !covered[a]).map((a) => columns[a]!.codes[r])].join(',');
      const g = groups.get(key);
      if (g) g.count++;
      else groups.set(key, { p, row: r, count: 1 });
    }
    for (const { p, row, count } of groups.values()) {
      for (let c = 0; c < out.length; c++) {
        let w = count / n;
        attrs.forEach((a, j) => {
          const v = cells[j]![c]!;
          const cover = covered[a];
          if (!cover) {
            if (columns[a]!.codes[row] !== v) w = 0;
            return;
          }
          const dim = problem.dims.findIndex((d) => d.name === columns[a]!.name);
          const set = cover[released.labelOf[dim]![p]!]!;
          const size = set.filter((inside, code) => inside && present[a]![code]).length;
          w = set[v] ? w / size : 0;
        });
        out[c]! += w;
      }
    }
    return out;
  }

  it('equals the definition on random marginals', () => {
    const rng = new Random(3);
    let compared = 0;
    let withQiAndSa = 0;
    for (let trial = 0; trial < 16; trial++) {
      const size = 1 + rng.below(3);
      const attrs = [...new Set(Array.from({ length: size }, () => rng.below(columns.length)))].sort();
      const { cells } = marginalCounts(columns, attrs);
      if (cells[0]!.length > 2000) continue;
      const fast = estimator.marginal(attrs, cells);
      const slow = bruteForce(attrs, cells);
      for (let c = 0; c < fast.length; c++) expect(fast[c]).toBeCloseTo(slow[c]!, 12);
      compared++;
      if (attrs.length > 1 && attrs.some((a) => !covered[a])) withQiAndSa++;
    }
    expect(compared).toBeGreaterThanOrEqual(10);
    expect(withQiAndSa).toBeGreaterThan(0);
  });

  it('sums to 1 over every value of an attribute', () => {
    for (let a = 0; a < columns.length; a++) {
      const codes = Int32Array.from(columns[a]!.dictionary, (_, c) => c);
      const total = estimator.marginal([a], [codes]).reduce((x, y) => x + y, 0);
      expect(total).toBeCloseTo(1, 12);
    }
  });
});
