/**
 * One real release of every method, its report.html opened in headless Chromium: every chart
 * must have drawn (a non-empty box, labelled axes and at least one data mark of non-zero size).
 * The page is driven over the DevTools protocol (test/helpers/cdp.ts), which measures it; it must
 * log no console error and trip no rule of its Content-Security-Policy. Without Chromium the test
 * is skipped locally and fails under CI (test/helpers/requires.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import { openPage } from '../helpers/cdp.ts';
import { findChromium } from '../helpers/chromium.ts';
import { releaseTo } from '../helpers/release.ts';
import { requires } from '../helpers/requires.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const EXAMPLES = new URL('../../examples/', import.meta.url).pathname;
const ROWS = 1500;

const chromium = findChromium();

/** Measures every chart once laid out (evaluated over the DevTools protocol: the page's CSP allows no added script). */
const CHECK = `[...document.querySelectorAll('svg.chart')].map((svg) => {
  const box = svg.getBoundingClientRect();
  const drawn = [...svg.querySelectorAll('.mark')].filter((m) => {
    const b = m.getBBox();
    return b.width > 0 && b.height > 0;
  }).length;
  return {
    title: svg.getAttribute('aria-label'),
    width: box.width,
    height: box.height,
    marks: drawn,
    axisLabels: [...svg.querySelectorAll('text.axis-label')].filter((t) => t.textContent.trim() !== '').length,
    ticks: svg.querySelectorAll('line.tick').length,
  };
})`;

interface ChartCheck {
  title: string;
  width: number;
  height: number;
  marks: number;
  axisLabels: number;
  ticks: number;
}

/**
 * Opens the report in headless Chromium and returns what the check measured; the page must
 * log no error or warning and trip no rule of its Content-Security-Policy.
 */
async function chartsDrawn(reportHtml: string): Promise<ChartCheck[]> {
  const page = await openPage(chromium!, `file://${reportHtml}`);
  try {
    const charts = await page.evaluate<ChartCheck[]>(CHECK);
    expect(page.problems()).toEqual([]);
    expect(await page.violations()).toEqual([]);
    return charts;
  } finally {
    await page.close();
  }
}

/** A spec for `method` from its example, moved into a workspace of the first ROWS Adult rows. */
function exampleSpec(ws: ReturnType<typeof adultWorkspace>, example: string): string {
  const s = JSON.parse(
    readFileSync(join(EXAMPLES, example, 'release.json'), 'utf8').replaceAll('../adult/', ''),
  );
  delete s.root;
  s.report = { riskThreshold: 0.1 };
  const name = `${example}.json`;
  ws.write(name, JSON.stringify(s, null, 2));
  return join(ws.dir, name);
}

/** The charts of a release whose classes generalize the quasi-identifiers. */
const GENERALIZING_CHARTS = [
  'prosecutor re-identification risk',
  'class that reveals most',
  'classes per size',
  'NCP per quasi-identifier',
  'Wall time',
];

/** The charts of a release that publishes exact quasi-identifiers in buckets. */
const BUCKET_CHARTS = [
  'prosecutor re-identification risk',
  'class that reveals most',
  'buckets per size',
  'uncertainty coefficient',
  'Wall time',
];

const METHODS: { method: string; example: string; amber: boolean; charts: string[] }[] = [
  {
    method: 'generalization',
    example: 'adult',
    // Amber: occupation is sensitive, released unchanged, and no model bounds it (the audit).
    amber: true,
    charts: GENERALIZING_CHARTS,
  },
  {
    method: 'mondrian',
    example: 'adult-mondrian',
    // Green: occupation, released unchanged, is bounded by the example's l-diversity.
    amber: false,
    charts: GENERALIZING_CHARTS,
  },
  {
    method: 'anatomy',
    example: 'adult-anatomy',
    amber: true,
    charts: BUCKET_CHARTS,
  },
  {
    method: 'slicing',
    example: 'adult-slicing',
    amber: true,
    charts: BUCKET_CHARTS,
  },
  {
    method: 'randomization',
    example: 'adult-randomization',
    amber: true,
    charts: ['attribute-disclosure risk', 'Retention', 'reconstructed from the release', 'Wall time'],
  },
];

requires('chromium').describe('report.html in headless Chromium', () => {
  const ws = adultWorkspace(ROWS);
  for (const { method, example, amber, charts } of METHODS) {
    it(`draws every chart of a ${method} release`, async () => {
      expect(chromium, 'chromium is not installed: apt-get install -y chromium').not.toBeNull();
      const out = join(ws.dir, 'out', method);
      const { report } = await releaseTo(exampleSpec(ws, example), out);
      expect(report.spec.method).toBe(method);
      expect(report.verification.verified).toBe(true);

      const html = readFileSync(join(out, 'report.html'), 'utf8');
      expect(html).not.toMatch(/undefined|NaN|seed 0\d\d|SPEC|§|issue \d/);
      expect(html).toContain(amber ? '<div class="verdict warn"' : '<div class="verdict pass"');
      expect(html).toContain('Does not protect against:');
      const risk = report.privacy.reidentification ?? report.privacy.attributeRisk;
      expect((risk as ReleaseReport['privacy']['attributeRisk'])!.threshold).toBe(0.1);

      const drawn = await chartsDrawn(join(out, 'report.html'));
      for (const part of charts) expect(drawn.map((c) => c.title).join('\n')).toContain(part);
      for (const c of drawn) {
        expect({ title: c.title, drawn: c.width > 100 && c.height > 40 }).toEqual({
          title: c.title,
          drawn: true,
        });
        expect({ title: c.title, marks: c.marks > 0 }).toEqual({ title: c.title, marks: true });
        expect({ title: c.title, axisLabels: c.axisLabels }).toEqual({ title: c.title, axisLabels: 2 });
        expect(c.ticks, c.title).toBeGreaterThanOrEqual(3);
      }
    });
  }
});
