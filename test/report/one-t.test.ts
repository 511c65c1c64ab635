/**
 * Issue 36: one figure per fact. For a numeric sensitive attribute under ordered t-closeness,
 * report.html, explore.html and `ppdp evaluate` each show one t for the attribute, labelled with
 * its distance (the model's; the default rule's for an attribute no model names), and
 * report.html summarizes the numeric attribute by its spread per class instead of value-share
 * bars. A population model that cannot be fitted is reported as not fitted, never as 0.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { exploreCommand } from '../../src/cli/explore.ts';
import { populationUniqueness } from '../../src/metrics/population-risk.ts';
import { fmtNum } from '../../src/report/format.ts';
import { renderRisk } from '../../src/report/privacy-sections.ts';
import { embeddedData, type Json } from '../helpers/explore-page.ts';
import { releaseTo } from '../helpers/release.ts';
import { WAGE_ATTRIBUTES } from '../helpers/wage.ts';

const FIXTURES = new URL('../fixtures/defaults/', import.meta.url).pathname;
const dir = mkdtempSync(join(tmpdir(), 'ppdp-one-t-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const spec = join(dir, 'wage.json');
writeFileSync(
  spec,
  JSON.stringify({
    input: join(FIXTURES, 'wage.csv'),
    attributes: WAGE_ATTRIBUTES,
    privacy: [
      { model: 'k-anonymity', k: 2 },
      { model: 't-closeness', attribute: 'wage', t: 0.3 },
    ],
    method: { name: 'generalization', maxSuppression: 0 },
    seed: 1,
  }),
);

describe('one t per attribute, its distance named', () => {
  it('report.html: the guarantees and the disclosure table show the same t, labelled ordered; wage as spreads', async () => {
    const { report, out } = await releaseTo(spec, join(dir, 'release'));
    const model = report.privacy.models.find((m) => m.model === 't-closeness')!;
    expect(model.params.distance).toBe('ordered');
    const t = fmtNum(model.achieved.t!);
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain(`t of the worst class (ordered distance): <strong>${t}</strong>`);
    const row = html.match(/<td>t \((\w+) distance\)<\/td><td class="num">([^<]+)<\/td>/)!;
    expect(row.slice(1)).toEqual(['ordered', t]);
    expect(html).not.toContain('t (closeness)');
    // The equal-distance t is not on the page.
    const equal = (report.privacy.disclosure!.wage as Json).release.t;
    expect((report.privacy.disclosure!.wage as Json).tDistance).toBe('ordered');
    expect(equal).toBe(model.achieved.t);
    // Numeric: spreads per class, not one bar per value.
    expect(report.privacy.sensitive![0]!.numeric).toMatchObject({ classes: report.privacy.classes });
    expect(html).toContain('Narrowest range of a class');
    expect(html).not.toContain('wage: share of each value overall');
  });

  it('explore.html: every choice shows one t for wage, with its distance', async () => {
    const out = join(dir, 'explore');
    await exploreCommand([spec, '--vary', 't=0.2..0.4:0.1', '--out', out, '--quiet']);
    const html = readFileSync(join(out, 'explore.html'), 'utf8');
    const data = embeddedData(html);
    const shown = (data.choices as Json[]).filter((c) => c.disclosure);
    expect(shown.length).toBeGreaterThan(0);
    for (const c of shown) {
      expect(c.disclosure).toHaveLength(1);
      expect(c.disclosure[0]).toMatchObject({ attribute: 'wage', tDistance: 'ordered' });
    }
    expect(html).toContain('t (0–1, distance)');
  });

  it('ppdp evaluate: one t for wage, labelled ordered', () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      lines.push(String(s));
      return true;
    });
    try {
      expect(evaluateCommand([join(dir, 'release'), '--spec', spec])).toBe(0);
    } finally {
      write.mockRestore();
    }
    const text = lines.join('');
    const wage = text.split('\n').find((l) => l.trim().startsWith('wage'))!;
    expect(wage).toMatch(/t \(ordered\) \d/);
    expect(wage.match(/\bt \(/g)).toHaveLength(1);
    const model = text.split('\n').find((l) => l.trim().startsWith('t-closeness'))!;
    const value = wage.match(/t \(ordered\) ([\d.e-]+)/)![1];
    expect(model).toContain(`worst t (ordered) ${value}`);
  });
});

describe('a population model that cannot be fitted', () => {
  it('is null with its reason, never 0 uniques', () => {
    const u = populationUniqueness([1, 1, 3], { samplingFraction: 0.5 });
    expect(u.estimates.snb).toEqual({
      uniques: null,
      share: null,
      notFitted: expect.stringMatching(/^the SNB model could not be fitted/),
    });
    // Dankar's rule falls back on Zayatz's, which is fitted.
    expect(u.dankarModel).toBe('zayatz');
    expect(u.estimates.dankar).toEqual(u.estimates.zayatz);
    // report.html: "not fitted" with the reason; the journalist row does not deny the population.
    const dist = { threshold: 0.2, max: 1, mean: 0.5, shareAbove: 0.4, rows: 5, bins: [] };
    const html = renderRisk({
      privacy: {
        reidentification: {
          basis: 'the quasi-identifiers',
          threshold: 0.2,
          prosecutor: dist,
          journalist: dist,
          population: 'sample',
          marketer: 0.6,
        },
        populationRisk: u,
      },
    } as never);
    expect(html).toMatch(
      /<td>SNB<\/td><td class="num">not fitted <span class="meaning">the SNB model could not be fitted/,
    );
    expect(html).not.toMatch(/<td>SNB<\/td><td class="num">0</);
    expect(html).not.toContain('No population table was given');
    for (const [, e] of Object.entries(u.estimates)) expect(e.uniques).not.toBe(0);
  });
});
