/**
 * `ppdp explore --vary epsilon=…` on a differentially private spec: each ε released several
 * times in memory (the sample is secret and random), the frontier holding per ε the
 * derivation's β and k and the runs' mean and range only; the page explaining the trade-off and
 * saying the runs are not releases, embedding no row and no single run; frontier.csv with the
 * per-ε columns; and --vary epsilon / --repeats refused, by name, on a spec without the model.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dpParameters } from '../../src/catalogue/dp-parameters.ts';
import { exploreCommand } from '../../src/cli/explore.ts';
import { PpdpError, SpecError } from '../../src/errors.ts';
import { parseVary } from '../../src/explore/frontier.ts';
import { ADULT_DP_LEVELS } from '../helpers/adult-dp.ts';
import { embeddedData, type Json } from '../helpers/explore-page.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const LEVELS = ADULT_DP_LEVELS;
const DELTA = 1e-5;
const EPSILONS = [0.5, 1, 1.5];
const REPEATS = 3;

const ws = adultWorkspace();
ws.editSpec((s) => {
  s.privacy = [{ model: 'differential-privacy', epsilon: 1, delta: DELTA, levels: LEVELS }];
  s.method = { name: 'generalization', metric: 'loss', maxSuppression: 1, suppressed: 'remove' };
});
const rows = ws.read('adult.csv').trim().split('\n').length - 1;
const out = join(ws.dir, 'explore');
const ran = exploreCommand([
  ws.spec,
  '--vary',
  'epsilon=0.5..1.5:0.5',
  '--repeats',
  String(REPEATS),
  '--out',
  out,
  '--quiet',
]);
const read = async (name: string) => {
  await ran;
  return readFileSync(join(out, name), 'utf8');
};

describe('explore --vary epsilon on a differentially private spec', () => {
  it('runs each ε several times: β and k are the derivation’s, the metric and the counts come as mean and range', async () => {
    const frontier = JSON.parse(await read('frontier.json'));
    expect(frontier.parameters).toEqual(['epsilon']);
    expect(frontier.points.map((p: Json) => p.value)).toEqual(EPSILONS);
    for (const p of frontier.points) {
      const { beta, k } = dpParameters(p.value, DELTA);
      const r = p.repeats;
      expect(p.feasible).toBe(true);
      expect(r.runs).toBe(REPEATS);
      expect(r.withSolution).toBe(REPEATS);
      expect(r.beta).toBe(beta);
      expect(r.k).toBe(k);
      expect(r.metric).toBe('loss');
      expect(p.objective).toEqual({ name: 'loss', value: r.objective.mean });
      for (const m of ['objective', 'sampledRows', 'suppressedRows', 'releasedRows', 'classes']) {
        expect(r[m].min, m).toBeLessThanOrEqual(r[m].mean);
        expect(r[m].mean, m).toBeLessThanOrEqual(r[m].max);
      }
      // Three independent samples of ~βn rows: not all the same size, and about βn.
      expect(r.sampledRows.max).toBeGreaterThan(r.sampledRows.min);
      expect(Math.abs(r.sampledRows.mean - beta * rows)).toBeLessThan(0.05 * rows);
      expect(r.releasedRows.mean).toBeCloseTo(r.sampledRows.mean - r.suppressedRows.mean, 6);
      expect(r.objective.max).toBeGreaterThan(0);
      // Nothing of a single run: no node, no per-run measures.
      for (const key of ['node', 'suppressedRows', 'kAchieved', 'classes', 'utility', 'achieved'])
        expect(p[key], key).toBeUndefined();
    }
    // A smaller ε samples fewer rows.
    const sampled = frontier.points.map((p: Json) => p.repeats.sampledRows.mean);
    expect(sampled[0]).toBeLessThan(sampled[1]);
    expect(sampled[1]).toBeLessThan(sampled[2]);
  });

  it('explains the trade-off, lists β and k per ε, says the runs are not releases and embeds no row', async () => {
    const html = await read('explore.html');
    expect(html).toContain('A smaller ε is a stronger promise.');
    const [lo, hi] = [dpParameters(0.5, DELTA).k, dpParameters(1.5, DELTA).k];
    expect(lo).toBeLessThan(hi);
    expect(html).toContain(`k grows as ε grows: from ${lo} at epsilon = 0.5 to ${hi} at epsilon = 1.5`);
    expect(html).toContain('β and k come from ε and δ alone');
    expect(html).toContain('none of them is a release');
    const section = html.slice(html.indexOf('<section id="frontier"'), html.indexOf('</section>'));
    for (const e of EPSILONS) {
      const { beta, k } = dpParameters(e, DELTA);
      expect(section).toContain(
        `<tr><td>epsilon = ${e}</td><td class="num">${Number(beta.toPrecision(4))}</td><td class="num">${k}</td>`,
      );
    }
    // The mean with its band, per measure.
    expect(section.match(/<polygon class="band"/g)?.length).toBe(3);
    const data = embeddedData(html);
    expect(data.choices).toEqual([]);
    expect(data.preview).toBeUndefined();
    expect(data.lattice).toBeUndefined();
    expect(html).not.toContain('id="picked"');
    // No cell of the input reaches the page: a value only Adult's rows hold is absent.
    expect(ws.read('adult.csv')).toContain('Never-married');
    expect(html).not.toContain('Never-married');
  });

  it('writes frontier.csv with the per-ε mean and range, named without thresholds', async () => {
    const [header, ...lines] = (await read('frontier.csv')).trim().split('\n');
    const columns = header!.split(',');
    expect(columns.slice(0, 6)).toEqual(['epsilon', 'runs', 'runs_with_solution', 'beta', 'k', 'metric']);
    for (const m of ['metric_value', 'sampled_rows', 'suppressed_rows', 'released_rows', 'classes'])
      for (const s of ['mean', 'min', 'max']) expect(columns).toContain(`${m}_${s}`);
    for (const c of columns) expect(c).toMatch(/^[a-z_]+$/);
    expect(lines).toHaveLength(EPSILONS.length);
    const frontier = JSON.parse(await read('frontier.json'));
    lines.forEach((line, i) => {
      const cell = (name: string) => line.split(',')[columns.indexOf(name)];
      const p = frontier.points[i];
      expect(Number(cell('epsilon'))).toBe(EPSILONS[i]);
      expect(Number(cell('beta'))).toBe(dpParameters(EPSILONS[i]!, DELTA).beta);
      expect(Number(cell('k'))).toBe(dpParameters(EPSILONS[i]!, DELTA).k);
      expect(Number(cell('metric_value_mean'))).toBe(p.repeats.objective.mean);
      expect(Number(cell('sampled_rows_min'))).toBe(p.repeats.sampledRows.min);
      expect(Number(cell('suppressed_rows_max'))).toBe(p.repeats.suppressedRows.max);
    });
  });
});

describe('refusals', () => {
  it('reads ε and epsilon, and refuses ε ≤ 0', () => {
    expect(parseVary('ε=0.5..1.5:0.5')).toEqual({ parameter: 'epsilon', values: [0.5, 1, 1.5] });
    expect(() => parseVary('epsilon=0,1')).toThrow(/ε must be > 0/);
  });

  it('refuses --vary epsilon on a spec without differential privacy, naming the model and the spec', async () => {
    const plain = adultWorkspace(200);
    const error = await exploreCommand([
      plain.spec,
      '--vary',
      'epsilon=1,2',
      '--out',
      join(plain.dir, 'x'),
      '--quiet',
    ]).catch((e) => e);
    expect(error).toBeInstanceOf(SpecError);
    expect(error.message).toMatch(
      /--vary epsilon: it needs a differential-privacy model in privacy, and release\.json has none/,
    );
    expect(error.hint).not.toMatch(/sensitive attribute/);
    expect(plain.list('x')).toBeNull();
  });

  it('refuses a grid on a differentially private spec', async () => {
    await expect(
      exploreCommand([
        ws.spec,
        '--vary',
        'epsilon=1,2',
        '--vary',
        'k=2,3',
        '--out',
        join(ws.dir, 'z'),
        '--quiet',
      ]),
    ).rejects.toThrow(/release\.json releases a secret random sample, explored one parameter at a time/);
    expect(ws.list('z')).toBeNull();
  });

  it('refuses --repeats on a spec whose release draws no sample', async () => {
    const plain = adultWorkspace(200);
    const error = await exploreCommand([
      plain.spec,
      '--vary',
      'k=2,3',
      '--repeats',
      '3',
      '--out',
      join(plain.dir, 'x'),
      '--quiet',
    ]).catch((e) => e);
    expect(error).toBeInstanceOf(PpdpError);
    expect(error.message).toMatch(/--repeats applies to a release that draws a secret sample/);
    await expect(
      exploreCommand([
        ws.spec,
        '--vary',
        'epsilon=1',
        '--repeats',
        '0',
        '--out',
        join(ws.dir, 'y'),
        '--quiet',
      ]),
    ).rejects.toThrow(/--repeats must be a whole number from 1 to/);
  });
});
