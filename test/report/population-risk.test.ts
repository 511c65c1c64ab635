/** A spec with report.population: the release report carries population uniqueness, in JSON and HTML. */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('release report: population risk', () => {
  it('is measured on the released classes when the spec names a population, and absent otherwise', async () => {
    const ws = adultWorkspace(3000);
    const plain = await releaseTo(ws.spec, join(ws.dir, 'plain'));
    expect(plain.report.privacy.populationRisk).toBeUndefined();

    ws.editSpec((s) => {
      s.method = { name: 'generalization', maxSuppression: 0.02, metric: 'ncp', suppressed: 'mask' };
      s.privacy = [{ model: 'k-anonymity', k: 1 }];
      s.report = { population: { samplingFraction: 0.01 } };
    });
    const { report, out } = await releaseTo(ws.spec, join(ws.dir, 'out'));
    const u = report.privacy.populationRisk!;
    expect(u.populationSize).toBe(Math.round(u.populationSize));
    expect(u.samplingFraction).toBeCloseTo(0.01, 4);
    // k = 1 keeps the input as it is: many sample uniques, and at 1 % Dankar's rule takes Pitman's model
    expect(u.sampleUniques).toBeGreaterThan(100);
    expect(u.dankarModel).toBe('pitman');
    expect(u.estimates.dankar).toEqual(u.estimates.pitman);
    expect(u.estimates.pitman.uniques).toBeGreaterThan(0);
    const json = JSON.parse(readFileSync(join(out, 'report.json'), 'utf8'));
    expect(json.privacy.populationRisk).toEqual(JSON.parse(JSON.stringify(u)));
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    expect(html).toContain('<caption>Population uniqueness</caption>');
    expect(html).toMatch(/Records unique in a population of [\d,]+/);
    expect(html).toContain('(here Pitman)');
  }, 120_000);

  it('Mondrian reports it too: its classes have at least k rows, so no population uniques', async () => {
    const ws = adultWorkspace(2000);
    ws.editSpec((s) => {
      s.method = { name: 'mondrian' };
      s.privacy = [{ model: 'k-anonymity', k: 2 }];
      s.report = { population: { size: 300000 } };
    });
    const { report } = await releaseTo(ws.spec, join(ws.dir, 'out'));
    expect(report.privacy.populationRisk).toMatchObject({
      populationSize: 300000,
      sampleUniques: 0,
      dankarModel: null,
      estimates: { dankar: { uniques: 0, share: 0 } },
    });
  }, 120_000);
});
