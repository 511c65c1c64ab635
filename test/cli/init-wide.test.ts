/**
 * `ppdp init` on a wide table: the 17-column bank-marketing-shaped survey, every column drafted
 * quasi-identifying (a lattice of 8·10⁷ nodes). init says what makes the lattice large (each
 * column's height and factor) and which coarser hierarchies would shrink it, with the size they
 * give; the draft, released as it is, searches best-effort and ends within the default budget
 * (the report's stoppedBy and nodes checked, not the wall time).
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withStdout } from '../../bench/stdout.ts';
import { BANK_COLUMNS, writeBankTable } from '../../bench/wide-table.ts';
import { initCommand } from '../../src/cli/init.ts';
import { latticeAdvice } from '../../src/cli/init-lattice.ts';
import { readTable } from '../../src/data/read.ts';
import { buildHierarchy } from '../../src/hierarchy/hierarchy.ts';
import { DEFAULT_NODE_BUDGET } from '../../src/methods/generalization/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-init-wide-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** init's stdout for a table, and its draft's path. */
function init(csv: string, name: string): { out: string; spec: string } {
  const spec = join(dir, `${name}.json`);
  const { result, printed } = withStdout(() => initCommand([csv, '--out', spec]));
  expect(result).toBe(0);
  return { out: printed, spec };
}

/** init's suggested hierarchies, per column: lines `    a, b: {…} — height …`. */
function suggestions(out: string): Record<string, string> {
  const found: Record<string, string> = {};
  for (const m of out.matchAll(/\n {4}([a-z][a-z, ]*): (\{.*?\}) — height/g))
    for (const c of m[1]!.split(', ')) found[c] = m[2]!;
  return found;
}

const NUMERIC = ['age', 'balance', 'day', 'duration', 'campaign', 'pdays', 'previous'];

describe('ppdp init on a wide table', () => {
  const csv = writeBankTable(join(dir, 'bank'), 600);
  const { out, spec } = init(csv, 'wide');

  it('drafts every column quasi-identifying, and names what makes the lattice large', () => {
    const draft = JSON.parse(readFileSync(spec, 'utf8'));
    for (const c of BANK_COLUMNS) expect(draft.attributes[c].type, c).toBe('quasi-identifying');
    expect(out).toContain('lattice: 80,000,000 nodes');
    expect(out).toContain('past the 10,000,000 the optimal search enumerates');
    expect(out).toContain(`at most ${DEFAULT_NODE_BUDGET.toLocaleString('en-US')} nodes (method.nodeBudget)`);
    // Each factor with its columns, the largest first.
    const factors = out.split('\n').filter((l) => /^ {4}×\d/.test(l));
    expect(factors).toEqual([
      `    ×5 each (intervals, height 4): ${NUMERIC.join(', ')} — ×78,125 together`,
      '    ×2 each (groups, height 1): job, marital, education, default, housing, loan, contact, month, poutcome, y — ×1,024 together',
    ]);
    // A coarser hierarchy for each numeric column (columns with the same one on one line).
    const suggested = suggestions(out);
    expect(Object.keys(suggested).sort()).toEqual([...NUMERIC].sort());
    for (const c of NUMERIC) expect(suggested[c]).toMatch(/^\{"intervals":\[\d+\]\}$/);
    expect(out).toMatch(/\n {4}[a-z, ]+: \{"intervals":\[\d+\]\} — height 2, ×3 instead of ×5/);
    expect(out).toContain('all of them: 2,239,488 nodes, within the optimal search’s limit');
    expect(out).toContain('marked "insensitive"');
  });

  it('its suggestions, applied to the draft, give the lattice they state', () => {
    const draft = JSON.parse(readFileSync(spec, 'utf8'));
    for (const [c, hierarchy] of Object.entries(suggestions(out)))
      draft.attributes[c].hierarchy = JSON.parse(hierarchy);
    const coarser = join(dir, 'coarser.json');
    writeFileSync(coarser, JSON.stringify(draft));
    const parsed = loadSpec(coarser);
    const advice = latticeAdvice(parsed, readTable(csv, { nulls: 'missing' }));
    expect(advice.size).toBe(2_239_488);
    expect(advice.bestEffort).toBe(false);
  });

  it('releases as drafted within the default budget: the search ends by itself, not at the time limit', async () => {
    const { report } = await releaseTo(spec, join(dir, 'out'));
    const g = report.generalization!;
    expect(g.latticeSize).toBe(80_000_000);
    expect(g.strategy).toMatch(/^best-effort/);
    expect(['converged', 'optimal']).toContain(g.stoppedBy);
    expect(g.nodesChecked).toBeLessThanOrEqual(DEFAULT_NODE_BUDGET);
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.k).toBeGreaterThanOrEqual(5);
    expect(g.trajectory!.at(-1)!.nodesChecked).toBe(g.nodesChecked);
  }, 300_000);

  it('gives each quasi-identifier the height a release builds', () => {
    const hospital = join(dir, 'hospital.csv');
    writeFileSync(hospital, readFileSync(new URL('../../examples/hospital/hospital.csv', import.meta.url)));
    for (const drafted of [spec, init(hospital, 'hospital').spec]) {
      const parsed = loadSpec(drafted);
      const table = readInput(parsed);
      const advice = latticeAdvice(parsed, table);
      expect(advice.factors.length).toBeGreaterThan(2);
      for (const f of advice.factors) {
        const a = parsed.attributes.find((x) => x.name === f.name)!;
        const column = table.columns.find((c) => c.name === f.name)!;
        expect(f.height, f.name).toBe(buildHierarchy(column, a.hierarchy!).height);
      }
    }
  });

  it('says one line of a lattice the optimal search enumerates', () => {
    const narrow = join(dir, 'narrow.csv');
    const rows = readFileSync(csv, 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(';').slice(0, 4).join(';'));
    writeFileSync(narrow, `${rows.join('\n')}\n`);
    const lattice = init(narrow, 'narrow')
      .out.split('\n')
      .filter((l) => l.includes('lattice'));
    expect(lattice).toEqual([
      '  lattice: 40 nodes (4 quasi-identifiers): the optimal search enumerates it and proves its node optimal',
    ]);
  });
});
