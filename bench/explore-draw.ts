/**
 * Explorer page benchmark (a script, not a test): how long the page takes to lay out and draw
 * a lattice of 10,000 nodes (heights 4,4,4,4,3,3: 5⁴·4² nodes, a third of them evaluated),
 * measured by the page itself (`data-draw-ms` on the lattice) in headless Chromium. Prints the
 * median of the runs and writes them to bench/results/explore-draw.json. Run:
 * `npx tsx bench/explore-draw.ts [--runs N]`.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Choice, ExplorerData } from '../src/explore/explorer.ts';
import { explorerHtml } from '../src/explore/page.ts';
import { helpIfAsked } from './help.ts';

helpIfAsked(import.meta.url);

const { values } = parseArgs({ options: { runs: { type: 'string', default: '5' } } });
const heights = [4, 4, 4, 4, 3, 3];
const size = heights.reduce((n, h) => n * (h + 1), 1);
const choices: Choice[] = [];
const choiceOf = Array.from({ length: size }, (_, id) => {
  if (id % 3 !== 0) return -1;
  const feasible = id > size / 2;
  return (
    choices.push({
      kind: 'node',
      params: { k: 5 },
      status: id === size - 1 ? 'optimal' : feasible ? 'feasible' : 'infeasible',
      feasible,
      levels: [],
    }) - 1
  );
});
const data: ExplorerData = {
  spec: 'synthetic.json',
  method: 'generalization',
  rows: 1000,
  seed: 1,
  parameters: [{ name: 'k', values: [5], spec: 5 }],
  points: [{ values: { k: 5 }, feasible: true, choice: 0 }],
  choices,
  lattice: {
    qis: heights.map((_, i) => `q${i}`),
    heights,
    size,
    evaluated: 'checked',
    choiceOf,
    drawn: true,
  },
  frontier: {
    spec: 'synthetic.json',
    method: 'generalization',
    parameter: 'k',
    parameters: ['k'],
    rows: 1000,
    points: [{ value: 5, values: { k: 5 }, feasible: true, objective: { name: 'ncp', value: 0.3 }, ms: 0 }],
  },
};
const dir = mkdtempSync(join(tmpdir(), 'ppdp-explore-draw-'));
try {
  const page = join(dir, 'explore.html');
  writeFileSync(page, explorerHtml(data));
  const times: number[] = [];
  for (let run = 0; run < Number(values.runs); run++) {
    const dom = execFileSync(
      'chromium',
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--no-first-run',
        '--window-size=1280,2000',
        `--user-data-dir=${join(dir, 'profile')}`,
        '--dump-dom',
        `file://${page}`,
      ],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 },
    );
    times.push(Number(/data-draw-ms="([\d.]+)"/.exec(dom)![1]));
  }
  times.sort((a, b) => a - b);
  const median = times[times.length >> 1]!;
  process.stdout.write(
    `lattice of ${size} nodes drawn in ${median} ms (median of ${times.length}: ${times.join(', ')} ms)\n`,
  );
  const results = new URL('./results/explore-draw.json', import.meta.url).pathname;
  writeFileSync(
    results,
    `${JSON.stringify({ nodes: size, medianMs: median, runsMs: times, at: new Date().toISOString() }, null, 2)}\n`,
  );
  process.stdout.write(`written to ${results}\n`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
