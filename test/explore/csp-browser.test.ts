/**
 * Both pages under their own Content-Security-Policy in headless Chromium, driven over the
 * DevTools protocol (test/helpers/cdp.ts): report.html from file://, explore.html from file://
 * and from `--serve`. Neither may log a console error or warning, throw, or trip the CSP (its
 * `securitypolicyviolation` events); explore.html must still work (picks fill the panes, the
 * spec's own choice shows its rows, any other choice says why it shows none). A control at the
 * end of each page (an inline style and an inline script added by hand) must be refused, so
 * the policy is in force and the listener hears it. Without Chromium the test is skipped
 * locally and fails under CI (test/helpers/requires.ts).
 */

import { readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { exploreCommand } from '../../src/cli/explore.ts';
import type { ExplorerData } from '../../src/explore/explorer.ts';
import { explorerCsp } from '../../src/explore/page.ts';
import { serveExplorer } from '../../src/explore/serve.ts';
import { type CdpPage, openPage } from '../helpers/cdp.ts';
import { findChromium } from '../helpers/chromium.ts';
import { embeddedData } from '../helpers/explore-page.ts';
import { releaseTo } from '../helpers/release.ts';
import { requires } from '../helpers/requires.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const chromium = findChromium();

/** No console message, exception or CSP refusal so far; then the control must be refused. */
async function clean(page: CdpPage): Promise<void> {
  expect(page.problems()).toEqual([]);
  expect(await page.violations()).toEqual([]);
  await page.evaluate(`(() => {
    document.body.insertAdjacentHTML('beforeend', '<p id="control" style="color: red">control</p>');
    const s = document.createElement('script');
    s.textContent = 'window.controlRan = true';
    document.body.appendChild(s);
  })()`);
  // Served, the page has the policy twice (header and meta): each refusal is reported per policy.
  const seen = await page.violations();
  expect([...new Set(seen.map((v) => v.directive))].sort()).toEqual(['script-src-elem', 'style-src-attr']);
  expect(await page.evaluate('window.controlRan === undefined')).toBe(true);
}

interface Driven {
  own: { title: string; rows: number; none: boolean };
  other: { title: string; rows: number; none: boolean };
  node: { title: string; rows: number; none: boolean };
  swatches: number;
}

/** Picks the spec's own solution, another solution and a lattice node, reading the left pane each time. */
function drive(own: number, other: number, node: number[]): string {
  return `(() => {
    const read = () => {
      const pane = document.getElementById('pane-0');
      return {
        title: pane.querySelector('h3')?.textContent ?? '',
        rows: pane.querySelectorAll('table.preview tbody tr').length,
        none: pane.querySelector('.preview-none') !== null,
      };
    };
    document.querySelector('button[data-choice="${own}"]').click();
    const own = read();
    document.querySelector('button[data-choice="${other}"]').click();
    const other = read();
    const svg = document.getElementById('lattice');
    const at = window.ppdpLattice.center(${JSON.stringify(node)});
    const init = { bubbles: true, clientX: at.clientX, clientY: at.clientY, pointerId: 1 };
    svg.dispatchEvent(new PointerEvent('pointerdown', init));
    svg.dispatchEvent(new PointerEvent('pointerup', init));
    const node = read();
    const swatches = [...document.querySelectorAll('.legend svg.swatch rect')].filter(
      (r) => r.getBoundingClientRect().width > 0 && r.getAttribute('fill'),
    ).length;
    return { own, other, node, swatches };
  })()`;
}

requires('chromium').describe('report.html and explore.html under their CSP', () => {
  // A column named with a right-to-left override: both pages must show it escaped.
  const ws = adultWorkspace(1500);
  const RLO = '\u202E';
  ws.write('adult.csv', ws.read('adult.csv').replace('occupation', `occu${RLO}pation`));
  ws.editSpec((s) => {
    const a = s['attributes'] as Record<string, unknown>;
    a[`occu${RLO}pation`] = a['occupation'];
    delete a['occupation'];
  });
  /** The page's visible text shows the control as <U+202E> and holds no raw bidi control. */
  async function bidiShown(page: CdpPage): Promise<void> {
    const text = await page.evaluate<string>('document.body.innerText');
    expect(text).toContain('occu<U+202E>pation');
    expect(text).not.toMatch(/[\u061C\u200E\u200F\u202A-\u202E\u2066-\u2069]/);
  }

  it('report.html: charts and legends draw with no console error and no CSP violation', async () => {
    expect(chromium).not.toBeNull();
    const out = join(ws.dir, 'release');
    await releaseTo(ws.spec, out);
    const page = await openPage(chromium!, `file://${join(out, 'report.html')}`);
    try {
      const drawn = await page.evaluate<{ charts: number; marks: number; styled: boolean }>(`({
        charts: document.querySelectorAll('svg.chart').length,
        marks: [...document.querySelectorAll('svg.chart .mark')].filter((m) => m.getBBox().width > 0).length,
        // The stylesheet applied (allowed by its hash): the body's background is the report's.
        styled: getComputedStyle(document.body).backgroundColor === 'rgb(243, 244, 246)',
      })`);
      expect(drawn.charts).toBeGreaterThan(3);
      expect(drawn.marks).toBeGreaterThan(0);
      expect(drawn.styled).toBe(true);
      await clean(page);
      await bidiShown(page);
    } finally {
      await page.close();
    }
  }, 120_000);

  it('explore.html from file:// and from --serve: picks work, nothing is refused', async () => {
    expect(chromium).not.toBeNull();
    const out = join(ws.dir, 'explore');
    await exploreCommand([ws.spec, '--vary', 'k=3..6', '--out', out, '--quiet']);
    const file = join(out, 'explore.html');
    const html = readFileSync(file, 'utf8');
    const data = embeddedData(html) as ExplorerData;
    const own = data.preview!.choice;
    const other = data.points.map((p) => p.choice).find((c) => c >= 0 && !data.choices[c]!.preview)!;
    expect(other, 'a solution other than the spec’s own').toBeDefined();
    const node = data.choices.find((c) => c.kind === 'node' && c.feasible && !c.preview)!.levels!;

    let server: Server | undefined;
    const served = await serveExplorer(html, (s) => {
      server = s;
    });
    try {
      const header = (await fetch(served)).headers.get('content-security-policy');
      expect(header).toBe(`${explorerCsp()}; frame-ancestors 'none'`);
      for (const url of [`file://${file}`, served]) {
        const page = await openPage(chromium!, url);
        try {
          const seen = await page.evaluate<Driven>(drive(own, other, node));
          expect(seen.own.rows, url).toBe(50);
          expect(seen.own.none).toBe(false);
          expect(seen.other.title).toMatch(/^Solution for k = /);
          expect(seen.other).toMatchObject({ rows: 0, none: true });
          expect(seen.node).toEqual({ title: `Node ${node.join(',')}`, rows: 0, none: true });
          expect(seen.swatches).toBeGreaterThanOrEqual(5);
          await page.evaluate(`document.querySelector('button[data-choice="${own}"]').click()`);
          await bidiShown(page);
          await clean(page);
        } finally {
          await page.close();
        }
      }
    } finally {
      server!.close();
    }
  }, 300_000);
});
