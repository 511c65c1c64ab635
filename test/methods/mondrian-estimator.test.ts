import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { EncodedColumn } from '../../src/data/table.ts';
import { hierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { wasmMondrianKernel } from '../../src/kernels/mondrian/wasm.ts';
import { mondrianEstimator } from '../../src/methods/mondrian/estimator.ts';
import { runMondrian } from '../../src/methods/mondrian/index.ts';
import { prepareMondrian } from '../../src/methods/mondrian/prepare.ts';
import type { Released } from '../../src/methods/mondrian/release.ts';
import { marginalCounts } from '../../src/metrics/contingency.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';

const SPEC = new URL('../../examples/adult-mondrian/release.json', import.meta.url).pathname;

const dirs: string[] = [];
afterAll(() => {
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

/** A release's estimator, and π̂ by its definition (each row spread over its class's box) to check it against. */
function setup(spec: ReleaseSpec) {
  const table = readInput(spec);
  const { problem } = prepareMondrian(spec, table);
  const { released } = runMondrian(problem, wasmMondrianKernel);
  const typeOf = new Map(spec.attributes.map((a) => [a.name, a.type]));
  const columns = table.columns.filter((c) => typeOf.get(c.name) !== 'identifying');
  const estimator = mondrianEstimator(columns, problem, released);
  const qi = columns.map((c) => problem.dims.some((d) => d.name === c.name));
  return { columns, qi, released, estimator, bruteForce: definition(spec, columns, problem.dims, released) };
}

/**
 * π̂ from the released strings alone: a numeric label `[lo-hi]` covers the values in it, `*`
 * every value, the empty label the missing value; a hierarchy label the values whose row holds it.
 */
function definition(
  spec: ReleaseSpec,
  columns: EncodedColumn[],
  dims: readonly { name: string; kind: string }[],
  released: Released,
) {
  const n = columns[0]!.codes.length;
  const covered = columns.map((col) => {
    const dim = dims.findIndex((d) => d.name === col.name);
    if (dim < 0) return null;
    const a = spec.attributes.find((x) => x.name === col.name)!;
    const rows = a.hierarchy ? new Map(hierarchyRows(col, a.hierarchy).map((r) => [r[0]!, r])) : null;
    return released.dictionaries[dim]!.map((label) =>
      col.dictionary.map((value) => {
        if (dims[dim]!.kind === 'numeric') {
          if (label === '*') return true;
          if (label === '' || value === '') return label === value;
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
  return (attrs: number[], cells: Int32Array[]): Float64Array => {
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
          const dim = dims.findIndex((d) => d.name === columns[a]!.name);
          const set = cover[released.labelOf[dim]![p]!]!;
          const size = set.filter((inside, code) => inside && present[a]![code]).length;
          w = set[v] ? w / size : 0;
        });
        out[c]! += w;
      }
    }
    return out;
  };
}

/** Every cell of the pair (x, y), x-major. */
function everyCell(columns: EncodedColumn[], x: number, y: number): Int32Array[] {
  const dx = columns[x]!.dictionary.length;
  const dy = columns[y]!.dictionary.length;
  return [
    Int32Array.from({ length: dx * dy }, (_, c) => Math.floor(c / dy)),
    Int32Array.from({ length: dx * dy }, (_, c) => c % dy),
  ];
}

function expectClose(fast: Float64Array | undefined, slow: Float64Array): void {
  expect(fast).toBeDefined();
  expect(fast!.length).toBe(slow.length);
  for (let c = 0; c < slow.length; c++) expect(fast![c]).toBeCloseTo(slow[c]!, 12);
}

describe('Mondrian estimator (uniform spread within classes)', () => {
  const base = loadSpec(SPEC);
  const spec: ReleaseSpec = {
    ...base,
    privacy: [{ model: 'k-anonymity', k: 50 }],
    method: { name: 'mondrian', mode: 'relaxed', measures: true },
  };
  const { columns, qi, estimator, bruteForce } = setup(spec);

  it('equals the definition on random marginals', () => {
    const rng = new Random(3);
    let compared = 0;
    let withQiAndSa = 0;
    for (let trial = 0; trial < 16; trial++) {
      const size = 1 + rng.below(3);
      const attrs = [...new Set(Array.from({ length: size }, () => rng.below(columns.length)))].sort();
      const { cells } = marginalCounts(columns, attrs);
      if (cells[0]!.length > 2000) continue;
      expectClose(estimator.marginal(attrs, cells), bruteForce(attrs, cells));
      compared++;
      if (attrs.length > 1 && attrs.some((a) => !qi[a])) withQiAndSa++;
    }
    expect(compared).toBeGreaterThanOrEqual(10);
    expect(withQiAndSa).toBeGreaterThan(0);
  });

  it('sums to 1 over every value of an attribute', () => {
    for (let a = 0; a < columns.length; a++) {
      const codes = Int32Array.from(columns[a]!.dictionary, (_, c) => c);
      const total = estimator.marginal([a], [codes])!.reduce((x, y) => x + y, 0);
      expect(total).toBeCloseTo(1, 12);
    }
  });

  it('gives every cell of a pair in one pass: the definition, and the marginal over those cells', () => {
    let pairs = 0;
    for (let x = 0; x < columns.length; x++) {
      for (let y = x + 1; y < columns.length; y++) {
        const cells = everyCell(columns, x, y);
        if (cells[0]!.length > 3000) continue;
        const joint = estimator.pair!(x, y);
        expectClose(joint, bruteForce([x, y], cells));
        expectClose(joint, estimator.marginal([x, y], cells)!);
        pairs++;
      }
    }
    expect(pairs).toBeGreaterThan(20);
  });
});

describe('Mondrian estimator over ranges with the missing value, relaxed cuts and values outside the QIs', () => {
  // Two numeric QIs (one with missing cells: `*` and missing labels), a hierarchy QI, an SA and an insensitive column.
  const dir = mkdtempSync(join(tmpdir(), 'ppdp-estimator-'));
  dirs.push(dir);
  const rng = new Random(11);
  const lines = ['a,b,c,s,o'];
  for (let r = 0; r < 240; r++) {
    // a: 3 missing cells, too few for a class of their own (`*`); b: 8 (missing, and `*`).
    const a = r % 80 === 5 ? '' : String(rng.below(30));
    const b = r % 30 === 7 ? '' : (rng.below(40) / 4).toFixed(2);
    lines.push(`${a},${b},${'pqrstu'[rng.below(6)]},${'xyz'[rng.below(3)]},${'klmn'[rng.below(4)]}`);
  }
  writeFileSync(join(dir, 't.csv'), `${lines.join('\n')}\n`);
  writeFileSync(
    join(dir, 'release.json'),
    JSON.stringify({
      input: 't.csv',
      format: { emptyCells: 'value' },
      attributes: {
        a: { type: 'quasi-identifying', scale: 'numeric' },
        b: { type: 'quasi-identifying', scale: 'numeric' },
        c: {
          type: 'quasi-identifying',
          hierarchy: { groups: [{ p: 'pq', q: 'pq', r: 'rs', s: 'rs', t: 'tu', u: 'tu' }] },
        },
        s: { type: 'sensitive' },
        o: { type: 'insensitive' },
      },
      privacy: [{ model: 'k-anonymity', k: 4 }],
      method: { name: 'mondrian', mode: 'relaxed' },
    }),
  );
  const { columns, released, estimator, bruteForce } = setup(loadSpec(join(dir, 'release.json')));

  it('releases what the test means to cover: ranges, `*`, the missing value', () => {
    expect(released.dictionaries[0]).toContain('*');
    expect(released.dictionaries[1]).toContain('');
    expect(released.dictionaries[1]).toContain('*');
    expect(released.dictionaries[0]!.some((l) => l.startsWith('['))).toBe(true);
    expect(released.classes).toBeGreaterThan(10);
  });

  it('equals the definition over every cell of every marginal of two and three attributes', () => {
    const m = columns.length;
    for (let x = 0; x < m; x++) {
      for (let y = x + 1; y < m; y++) {
        const cells = everyCell(columns, x, y);
        const slow = bruteForce([x, y], cells);
        expectClose(estimator.marginal([x, y], cells), slow);
        expectClose(estimator.pair!(x, y), slow);
        for (let z = y + 1; z < m; z++) {
          const some = marginalCounts(columns, [x, y, z]).cells;
          expectClose(estimator.marginal([x, y, z], some), bruteForce([x, y, z], some));
        }
      }
    }
  });

  it('takes its steps from a budget before it starts, and refuses without working past it', () => {
    const cells = marginalCounts(columns, [0, 1, 2, 3]).cells;
    const budget = { steps: 1e12 };
    const full = estimator.marginal([0, 1, 2, 3], cells, budget)!;
    const used = 1e12 - budget.steps;
    expect(used).toBeGreaterThan(cells[0]!.length);
    const short = { steps: used - 1 };
    expect(estimator.marginal([0, 1, 2, 3], cells, short)).toBeUndefined();
    expect((short as { needed?: number }).needed).toBeGreaterThan(used - 1);
    expectClose(estimator.marginal([0, 1, 2, 3], cells, { steps: used }), full);

    const pairBudget = { steps: 1e12 };
    estimator.pair!(0, 1, pairBudget);
    const tight = { steps: 1e12 - pairBudget.steps - 1 };
    expect(estimator.pair!(0, 1, tight)).toBeUndefined();
    expect(tight.steps).toBe(1e12 - pairBudget.steps - 1);
  });
});
