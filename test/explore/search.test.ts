/**
 * The explorer's view of a best-effort search: the spec's own run's trajectory drawn in
 * explore.html, with the commands that continue it under twice the budget when a budget stopped
 * it — and continuing does go on from where it stopped (a larger node budget retraces the same
 * search). A wide table's lattice, past what can be listed, is left out of the page while its
 * search is shown. An optimal search shows none of it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { withStdout } from '../../bench/stdout.ts';
import { writeBankTable } from '../../bench/wide-table.ts';
import { initCommand } from '../../src/cli/init.ts';
import { PpdpError } from '../../src/errors.ts';
import { explore } from '../../src/explore/explorer.ts';
import { parseVary } from '../../src/explore/frontier.ts';
import { explorerHtml } from '../../src/explore/page.ts';
import { withSearchBudget } from '../../src/explore/search.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { embeddedData } from '../helpers/explore-page.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-explore-search-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const run = (spec: ReleaseSpec, vary: string, lattice = false) =>
  explore(spec, readInput(spec), [parseVary(vary)], {
    specPath: 'release.json',
    kernel: wasmGroupingKernel,
    lattice,
  });

/** The page's best-effort section, or undefined. */
function section(html: string): string | undefined {
  const at = html.indexOf('<section id="search-progress"');
  return at < 0 ? undefined : html.slice(at, html.indexOf('</section>', at));
}

describe('explore on a spec that searches best-effort', () => {
  const ws = adultWorkspace(1500);
  const spec = withSearchBudget(loadSpec(ws.spec), '40');
  const data = run(spec, 'k=4..6');

  it('carries the spec’s own run’s trajectory and, stopped by its budget, the commands to continue', () => {
    const s = data.search!;
    expect(s.stoppedBy).toBe('node budget');
    expect(s.nodeBudget).toBe(40);
    expect(s.trajectory.at(-1)!.nodesChecked).toBe(s.nodesChecked);
    expect(s.trajectory.at(-1)!.best).toBe(s.value);
    const own = data.frontier.points.find((p) => p.values['k'] === 5)!;
    expect(s.value).toBe(own.objective!.value);
    expect(s.more!.nodeBudget).toBe(80);
    expect(s.more!.explore).toBe('ppdp explore release.json --vary k=4,5,6 --node-budget 80 --time-limit 60');
    expect(s.more!.specChange).toEqual({ method: { nodeBudget: 80, timeLimit: 60 } });
  });

  it('draws it in explore.html, with the commands, and embeds it in the page’s data', () => {
    const html = explorerHtml(data);
    const progress = section(html)!;
    expect(progress).toBeDefined();
    expect(progress.match(/<polyline class="series"/g)).toHaveLength(2);
    expect(progress.match(/<circle class="mark"/g)).toHaveLength(2 * data.search!.trajectory.length);
    expect(progress).toContain('--node-budget 80 --time-limit 60');
    expect(progress).toContain('{&quot;method&quot;:{&quot;nodeBudget&quot;:80,&quot;timeLimit&quot;:60}}');
    expect(embeddedData(html).search.trajectory).toEqual(data.search!.trajectory);
  });

  it('continued with the larger budget, goes on from where it stopped', () => {
    const more = run(withSearchBudget(loadSpec(ws.spec), String(data.search!.more!.nodeBudget)), 'k=4..6');
    const strip = (s: typeof data.search) => s!.trajectory.map(({ ms: _, ...p }) => p);
    // The first run's path (all but its last point, the final bound) is where the second one went.
    const path = strip(data.search).slice(0, -1);
    expect(path.length).toBeGreaterThan(0);
    expect(strip(more.search).slice(0, path.length)).toEqual(path);
    expect(more.search!.nodesChecked).toBeGreaterThan(data.search!.nodesChecked);
    expect(more.search!.value).toBeLessThanOrEqual(data.search!.value);
  });

  it('refuses a budget for a method without a lattice search, and a budget that is no count', () => {
    const mondrian = loadSpec(
      new URL('../../examples/adult-mondrian/release.json', import.meta.url).pathname,
    );
    expect(() => withSearchBudget(mondrian, '100')).toThrow(PpdpError);
    expect(() => withSearchBudget(spec, '1.5')).toThrow(/--node-budget must be a whole number/);
    expect(() => withSearchBudget(spec, undefined, '0')).toThrow(/--time-limit must be a number of seconds/);
  });
});

describe('explore on a spec that searches optimally', () => {
  it('shows no search section', () => {
    const ws = adultWorkspace(1000);
    const data = run(loadSpec(ws.spec), 'k=5');
    expect(data.search).toBeUndefined();
    expect(section(explorerHtml(data))).toBeUndefined();
  });
});

describe('explore on a wide table (a lattice of 8·10⁷ nodes)', () => {
  it('leaves the lattice out, and shows its search', () => {
    const csv = writeBankTable(join(dir, 'bank'), 600);
    const draft = join(dir, 'release.json');
    expect(withStdout(() => initCommand([csv, '--out', draft])).result).toBe(0);
    const data = run(loadSpec(draft), 'k=5', true);
    expect(data.lattice).toBeUndefined();
    const s = data.search!;
    expect(s.latticeSize).toBe(80_000_000);
    expect(s.trajectory.length).toBeGreaterThan(1);
    const html = explorerHtml(data);
    expect(section(html)).toContain('80,000,000 nodes');
    if (s.more === undefined)
      expect(section(html)).toMatch(/A larger budget would not change|nothing left to search/);
  }, 300_000);
});
