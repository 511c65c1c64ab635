/**
 * explore.html driven in headless Chromium on Adult: a script added to a copy of the page
 * clicks three lattice nodes and two frontier points (pointer events at their places on
 * screen, as a mouse would), picks one node by keyboard, and writes what each pane shows into
 * the DOM, which `chromium --dump-dom` prints. Each choice is then released as the page says
 * (its `ppdp apply --node` command, or its spec change and `ppdp release`), and the page's
 * numbers must be the release's, and its rows (shown for the spec's own choice only) the
 * release's first rows. The driving script is allowed by the page's CSP by its hash. Chromium's network log must hold no request
 * but the file. Without Chromium the test is skipped locally and fails under CI (test/helpers/requires.ts).
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { applyCommand } from '../../src/cli/apply.ts';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import type { ExplorerData } from '../../src/explore/explorer.ts';
import { parseCsvHead } from '../../src/explore/explorer.ts';
import { decodeEntities, findChromium } from '../helpers/chromium.ts';
import { embeddedData, exploreGrid } from '../helpers/explore-page.ts';
import { releaseTo } from '../helpers/release.ts';
import { requires } from '../helpers/requires.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const chromium = findChromium();

interface PaneRead {
  title: string;
  choice: number;
  facts: Record<string, string>;
  preview: string[][];
  command: string;
  specChange: string;
}

/** Picks each target in turn and reads the left pane after each pick. */
function driver(nodes: number[][], points: number[]): string {
  return `<script>
(() => {
  const read = () => {
    const pane = document.getElementById('pane-0');
    const facts = {};
    for (const td of pane.querySelectorAll('td[data-fact]')) facts[td.dataset.fact] = td.dataset.value;
    return {
      title: pane.querySelector('h3').textContent,
      choice: Number(pane.dataset.choice),
      facts,
      preview: [...pane.querySelectorAll('table.preview tbody tr')].map((tr) => [...tr.children].map((td) => td.textContent)),
      command: pane.querySelector('pre.command')?.textContent ?? '',
      specChange: pane.querySelector('pre.spec-change')?.textContent ?? '',
    };
  };
  const svg = document.getElementById('lattice');
  const out = { nodes: [], points: [], keyboard: null };
  for (const levels of ${JSON.stringify(nodes)}) {
    const at = window.ppdpLattice.center(levels);
    const init = { bubbles: true, clientX: at.clientX, clientY: at.clientY, pointerId: 1 };
    svg.dispatchEvent(new PointerEvent('pointerdown', init));
    svg.dispatchEvent(new PointerEvent('pointerup', init));
    out.nodes.push(read());
  }
  for (const i of ${JSON.stringify(points)}) {
    document.querySelector('circle.pt[data-point="' + i + '"]').dispatchEvent(new MouseEvent('click', { bubbles: true }));
    out.points.push(read());
  }
  // By keyboard: into the right pane, the node the search box finds, then Enter on the lattice.
  document.querySelector('input[name=slot][value="1"]').click();
  svg.focus();
  svg.dispatchEvent(new KeyboardEvent('keydown', { key: 'ArrowUp', bubbles: true }));
  svg.dispatchEvent(new KeyboardEvent('keydown', { key: 'Enter', bubbles: true }));
  out.keyboard = {
    title: document.querySelector('#pane-1 h3')?.textContent ?? '',
    current: document.getElementById('lattice-current').textContent,
  };
  out.resources = performance.getEntriesByType('resource').map((e) => e.name);
  out.drawMs = Number(svg.dataset.drawMs);
  out.widths = { doc: document.documentElement.scrollWidth, view: window.innerWidth };
  out.unlabelled = [...document.querySelectorAll('svg.chart')].filter(
    (s) => !s.getAttribute('aria-label') || s.querySelectorAll('text.axis-label').length !== 2,
  ).length;
  const pre = document.createElement('pre');
  pre.id = 'explore-check';
  pre.textContent = JSON.stringify(out);
  document.body.appendChild(pre);
})();
</script>`;
}

/**
 * The page with a driving script added before </body>, its CSP allowing that script by hash
 * (and nothing else besides what the page allows already).
 */
function withScript(html: string, script: string): string {
  const body = /^<script>([\s\S]*)<\/script>$/.exec(script)![1]!;
  const hash = `'sha256-${createHash('sha256').update(body).digest('base64')}'`;
  const patched = html.replace(
    /script-src ([^;"]*)/,
    (_, sources: string) => `script-src ${sources} ${hash}`,
  );
  expect(patched).not.toBe(html);
  return patched.replace('</body>', `${script}\n</body>`);
}

/** The first released rows of a release folder's data.csv (header dropped). */
function releasedHead(dir: string, count: number): string[][] {
  return parseCsvHead(readFileSync(join(dir, 'data.csv'), 'utf8'), ';', count + 1).slice(1);
}

requires('chromium').describe('explore.html in headless Chromium', () => {
  it('shows for picked nodes and points what releasing them gives, and requests nothing', async () => {
    expect(chromium, 'chromium is not installed: apt-get install -y chromium').not.toBeNull();
    const ws = adultWorkspace(); // the whole Adult table: its 4,320-node lattice, every node evaluated
    const { out, html } = await exploreGrid(ws);
    const data = embeddedData(html) as ExplorerData;
    const lattice = data.lattice!;
    expect(lattice.evaluated).toBe('all');

    // Three feasible nodes: the optimum, one that suppresses rows, one that suppresses none.
    const feasible = data.choices.filter((c) => c.kind === 'node' && c.feasible);
    const optimal = feasible.find((c) => c.status === 'optimal')!;
    const suppressing = feasible.find((c) => c.status === 'feasible' && c.suppressedRows! > 0)!;
    const clean = feasible.find(
      (c) => c.status === 'feasible' && c.suppressedRows === 0 && c !== suppressing,
    )!;
    const nodes = [optimal, suppressing, clean].map((c) => c.levels!);
    // Two frontier points with different solutions.
    const points = [0, data.points.findIndex((p) => p.choice >= 0 && p.choice !== data.points[0]!.choice)];

    const page = join(out, 'explore-driven.html');
    writeFileSync(page, withScript(html, driver(nodes, points)));
    const { dom, requests } = openInChromium(page, ws.dir);
    const found = /<pre id="explore-check">([\s\S]*?)<\/pre>/.exec(dom);
    expect(found, 'the driving script ran').not.toBeNull();
    const seen = JSON.parse(decodeEntities(found![1]!)) as {
      nodes: PaneRead[];
      points: PaneRead[];
      keyboard: { title: string; current: string };
      resources: string[];
      drawMs: number;
      widths: { doc: number; view: number };
      unlabelled: number;
    };

    // Nothing fetched: no resource entries, and no request the page started in Chromium's log
    // (a control page with an image from the network shows the log would catch one).
    expect(seen.resources).toEqual([]);
    expect(requests).toEqual([]);
    const control = join(ws.dir, 'control.html');
    writeFileSync(control, '<!doctype html><img src="http://127.0.0.1:9/outside.png">');
    expect(openInChromium(control, ws.dir).requests).toEqual(['http://127.0.0.1:9/outside.png']);
    expect(seen.widths.doc).toBeLessThanOrEqual(seen.widths.view); // nothing overflows at 1,280 px
    expect(seen.unlabelled).toBe(0);
    expect(seen.drawMs).toBeGreaterThanOrEqual(0);
    expect(seen.keyboard.title).toMatch(/^Node \d(,\d)+$/);
    expect(seen.keyboard.current).toContain(seen.keyboard.title.slice('Node '.length));

    // The optimum's rows are the page's one preview; the other nodes show none.
    expect(seen.nodes.map((pane) => pane.preview.length)).toEqual([50, 0, 0]);
    // Each node released with the command the page shows.
    for (const [i, pane] of seen.nodes.entries()) {
      expect(pane.title).toBe(`Node ${nodes[i]!.join(',')}`);
      const args = pane.command.split(' ');
      expect(args.slice(0, 2)).toEqual(['ppdp', i === 0 ? 'release' : 'apply']);
      const dir = join(ws.dir, `node-${i}`);
      const report =
        i === 0
          ? (await releaseTo(ws.spec, dir)).report
          : await (async () => {
              const at = args.indexOf('--out');
              expect(await applyCommand([...args.slice(2, at), '--out', dir, '--quiet'])).toBe(0);
              return JSON.parse(readFileSync(join(dir, 'report.json'), 'utf8')) as ReleaseReport;
            })();
      checkAgainst(pane, report, dir, data);
      expect(Object.values(report.generalization!.node)).toEqual(nodes[i]);
    }

    // Each frontier point released with its spec change.
    for (const [i, pane] of seen.points.entries()) {
      const change = JSON.parse(pane.specChange) as { privacy?: unknown; method?: Record<string, unknown> };
      ws.editSpec((s) => {
        if (change.privacy) s['privacy'] = change.privacy;
        if (change.method) s['method'] = { ...(s['method'] as object), ...change.method };
      });
      const dir = join(ws.dir, `point-${i}`);
      const { report } = await releaseTo(ws.spec, dir);
      checkAgainst(pane, report, dir, data);
      expect(Object.values(report.generalization!.node)).toEqual(data.choices[pane.choice]!.levels);
      const point = data.points[points[i]!]!;
      expect(pane.choice).toBe(point.choice);
    }
  }, 600_000);
});

/**
 * Opens a page in headless Chromium; returns its DOM once scripts ran and the requests the
 * page started (from the network log: Chromium's own traffic has no initiating origin).
 */
function openInChromium(page: string, dir: string): { dom: string; requests: string[] } {
  const netlog = join(dir, 'netlog.json');
  const dom = execFileSync(
    chromium!,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--no-first-run',
      '--disable-background-networking',
      '--window-size=1280,2000',
      `--user-data-dir=${join(dir, 'chromium-profile')}`,
      `--log-net-log=${netlog}`,
      '--dump-dom',
      `file://${page}`,
    ],
    { encoding: 'utf8', timeout: 90_000, stdio: ['ignore', 'pipe', 'ignore'], maxBuffer: 64 << 20 },
  );
  const log = JSON.parse(readFileSync(netlog, 'utf8')) as {
    constants: { logEventTypes: Record<string, number> };
    events: { type: number; params?: { url?: string; initiator?: string } }[];
  };
  const start = log.constants.logEventTypes['URL_REQUEST_START_JOB'];
  const requests = log.events
    .filter((e) => e.type === start && e.params?.url && e.params.initiator !== 'not an origin')
    .map((e) => e.params!.url!)
    .filter((url) => !url.startsWith('file://'));
  return { dom, requests: [...new Set(requests)] };
}

/** The pane's figures and preview against the release's report and data.csv. */
function checkAgainst(pane: PaneRead, report: ReleaseReport, dir: string, data: ExplorerData): void {
  expect(Number(pane.facts['k achieved (smallest class)'])).toBe(report.privacy.k);
  expect(Number(pane.facts['Suppressed rows'])).toBe(report.rows.suppressed);
  expect(Number(pane.facts['Classes'])).toBe(report.privacy.classes);
  expect(Number(pane.facts['ncp'] ?? pane.facts['Objective: ncp'])).toBeCloseTo(
    report.utility.ncp as number,
    9,
  );
  // The page holds the rows of the spec's own choice only: they are its release's first rows;
  // any other choice shows none.
  if (!data.choices[pane.choice]!.preview) {
    expect(pane.preview).toEqual([]);
    return;
  }
  expect(pane.preview).toHaveLength(50);
  expect(pane.preview).toEqual(releasedHead(dir, 50));
  expect(pane.preview[0]).toHaveLength(data.preview!.columns.length);
}
