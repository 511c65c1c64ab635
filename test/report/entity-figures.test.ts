/**
 * One figure per fact with an entity column (several rows per person, docs/definitions.md): the
 * release's report (report.json, report.html), explore.html and `ppdp evaluate` show one l and
 * one t per sensitive attribute, all counted over persons, equal to the models' achieved figures
 * and to what the verifier's own person weighting finds; the CLI summary's k says persons; the
 * no-solution message reports the top node over persons.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { exploreCommand } from '../../src/cli/explore.ts';
import { main } from '../../src/cli/main.ts';
import { kSummary, suppressedSummary } from '../../src/cli/summary.ts';
import type { ReleaseReport } from '../../src/contracts/report.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { countsOfClass } from '../../src/methods/generalization/evaluate.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { noSolution } from '../../src/methods/generalization/search.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { fmtNum } from '../../src/report/format.ts';
import { thousands } from '../../src/util/format.ts';
import { embeddedData, type Json } from '../helpers/explore-page.ts';
import { releaseTo } from '../helpers/release.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-entity-figures-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let folders = 0;

const ZONE = { R1: 'North', R2: 'North', R3: 'North', R4: 'South', R5: 'South', R6: 'South' };
const CATEGORIES = ['books', 'garden', 'toys', 'food', 'music'];

/** A spec folder with input.csv (`customer;age;region;sex;category`) and release.json. */
function fixture(rows: string[][], customer: string, privacy: object[]): string {
  const folder = join(dir, `f${folders++}`);
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'input.csv'),
    `customer;age;region;sex;category\n${rows.map((r) => r.join(';')).join('\n')}\n`,
  );
  const path = join(folder, 'release.json');
  writeFileSync(
    path,
    JSON.stringify({
      input: 'input.csv',
      format: { delimiter: ';' },
      attributes: {
        customer: { type: customer },
        age: { type: 'quasi-identifying', hierarchy: { intervals: [5, 10, 20] } },
        region: { type: 'quasi-identifying', hierarchy: { groups: [ZONE] } },
        sex: { type: 'quasi-identifying', hierarchy: { mask: 'right' } },
        category: { type: 'sensitive' },
      },
      privacy,
      method: { name: 'generalization', maxSuppression: 0, metric: 'ncp' },
      seed: 1,
    }),
  );
  return path;
}

function rowsOf(person: string, qi: [string, string, string], value: string, n = 1): string[][] {
  return Array.from({ length: n }, () => [person, ...qi, value]);
}

/**
 * Customers in four corners of the QI space; some order many times one value (by rows their
 * value outweighs the others, by persons it weighs one person).
 */
function orders(): string[][] {
  const corners: [string, string, string][] = [
    ['31', 'R1', 'M'],
    ['33', 'R2', 'M'],
    ['44', 'R4', 'F'],
    ['47', 'R5', 'F'],
  ];
  const rows: string[][] = [];
  corners.forEach((qi, c) => {
    for (let p = 0; p < 6; p++) {
      const who = `c${c}p${p}`;
      rows.push(...rowsOf(who, qi, CATEGORIES[(p + c) % 5]!));
      // Every third customer orders their first value eight times more, and another once.
      if (p % 3 === 0) {
        rows.push(...rowsOf(who, qi, CATEGORIES[(p + c) % 5]!, 8));
        rows.push(...rowsOf(who, qi, CATEGORIES[(p + c + 2) % 5]!));
      }
    }
  });
  return rows;
}

const PRIVACY = [
  { model: 'k-anonymity', k: 3 },
  { model: 'distinct-l-diversity', attribute: 'category', l: 3 },
  { model: 't-closeness', attribute: 'category', t: 0.35, distance: 'equal' },
];

function captured(run: () => number): string {
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
    lines.push(String(s));
    return true;
  });
  try {
    expect(run()).toBe(0);
  } finally {
    write.mockRestore();
  }
  return lines.join('');
}

describe('an entity release: one l and one t per attribute, over persons', () => {
  const spec = fixture(orders(), 'entity', PRIVACY);
  let report: ReleaseReport;
  let out: string;
  let t: number;
  let l: number;
  beforeAll(async () => {
    ({ report, out } = await releaseTo(spec, join(dir, 'release')));
    t = report.privacy.models.find((m) => m.model === 't-closeness')!.achieved.t!;
    l = report.privacy.models.find((m) => m.model === 'distinct-l-diversity')!.achieved.l!;
  });

  it('report.json: the disclosure measures are the models’ figures, counted over persons', () => {
    const d = report.privacy.disclosure!.category as Json;
    expect(d.over).toBe('persons');
    expect(d.release.t).toBeCloseTo(t, 12);
    expect(d.release.distinctL).toBe(l);
    expect(d.note).toContain('counted over persons');
    expect(report.persons).toBeDefined();
  });

  it('report.html: one t and one l for category, the model’s, labelled over persons', () => {
    const html = readFileSync(join(out, 'report.html'), 'utf8');
    const shown = fmtNum(t);
    const row = html.match(/<td>t \((\w+) distance\)<\/td><td class="num">([^<]+)<\/td>/)!;
    expect(row.slice(1)).toEqual(['equal', shown]);
    expect(html.match(/<td>t \(\w+ distance\)<\/td>/g)).toHaveLength(1);
    const distinct = html.match(/<td>[^<]*distinct[^<]*<\/td><td class="num">([^<]+)<\/td>/i)!;
    expect(distinct[1]).toBe(fmtNum(l));
    expect(html).toContain('counted over persons');
    expect(html).toContain('Counted over persons: each person weighs 1');
    expect(html).toContain('share of persons');
    // The risk section counts persons too, as report.json's risks do.
    expect(html).toContain('Persons are grouped by');
    expect(html).toContain('<th scope="row">Persons above the threshold</th>');
    expect(html).not.toContain('Rows above the threshold');
  });

  it('explore.html: each node’s t and l are over persons, the released node’s equal to the report’s', async () => {
    const where = join(dir, 'explore');
    await exploreCommand([spec, '--vary', 't=0.35,0.5', '--out', where, '--quiet']);
    const html = readFileSync(join(where, 'explore.html'), 'utf8');
    const data = embeddedData(html);
    const shown = (data.choices as Json[]).filter((c) => c.disclosure);
    expect(shown.length).toBeGreaterThan(0);
    for (const c of shown) {
      expect(c.disclosure).toHaveLength(1);
      expect(c.disclosure[0]).toMatchObject({ attribute: 'category', over: 'persons' });
    }
    // The choice the spec itself releases (t = 0.35): the report's release.
    const same = shown.filter((c) => c.params?.t === 0.35 && String(c.command).startsWith('ppdp release'));
    expect(same).toHaveLength(1);
    for (const c of same) {
      expect(c.disclosure[0].t).toBeCloseTo(t, 12);
      expect(c.disclosure[0].distinctL).toBe(l);
    }
    // Every other node's t is the one the search's person weighting finds there.
    const prepared = prepareGeneralization(loadSpec(spec), readInput(loadSpec(spec)), wasmGroupingKernel);
    const search = openSearch(prepared, wasmGroupingKernel);
    const tModel = prepared.problem.models.find((m) => m.spec.model === 't-closeness')!;
    const nodes = shown.filter((c) => c.kind === 'node' && Array.isArray(c.levels));
    expect(nodes.length).toBeGreaterThan(0);
    for (const c of nodes) {
      const r = search.evaluate(prepared.problem.lattice.index(c.levels));
      const h = r.histograms.find((x) => x.attribute === 'category')!;
      let worst = 0;
      for (let g = 0; g < r.groups; g++) {
        if (r.suppressed[g]) continue;
        const histogram = countsOfClass(h, g);
        worst = Math.max(worst, tModel.measure({ size: r.persons![g]!, histogram, population: undefined }));
      }
      expect(c.disclosure[0].t, c.levels.join(',')).toBeCloseTo(worst, 12);
    }
  });

  it('ppdp evaluate: k, l and t over persons, placed as the verifier places them, equal to the report’s', () => {
    const text = captured(() => evaluateCommand([out, '--spec', spec]));
    const category = text.split('\n').find((x) => x.trim().startsWith('category'))!;
    expect(category.match(/\bt \(/g)).toHaveLength(1);
    expect(category).toContain(`t (equal) ${Number(t.toPrecision(4))}`);
    expect(category).toContain(`distinct l ${l}`);
    expect(text).toMatch(new RegExp(`k achieved +${report.privacy.k} persons`));
    const json = JSON.parse(captured(() => evaluateCommand([out, '--spec', spec, '--out', '-'])));
    expect(json.persons).toEqual({
      input: report.persons!.input,
      suppressed: report.persons!.suppressed,
      kAchieved: report.privacy.k,
    });
    expect(json.disclosure.category.release.t).toBeCloseTo(t, 12);
    expect(json.disclosure.category.over).toBe('persons');
    const model = json.models.find((m: Json) => m.model === 't-closeness');
    expect(model.worst).toBeCloseTo(t, 12);
    expect(model.satisfied).toBe(true);
    // The risks per person, as the report's: one of a class's P persons, 1/P.
    const risk = report.privacy.reidentification!.prosecutor;
    expect(json.risk.prosecutor.max).toBeCloseTo(risk.max, 12);
    expect(json.risk.prosecutor.mean).toBeCloseTo(risk.mean, 12);
    expect(json.risk.prosecutor.recordsAbove).toBe(Math.round(risk.shareAbove * risk.rows));
    expect(text).toMatch(/prosecutor risk .* persons \(/);
  });

  it('over rows the same release shows another t: the figures above are not the rows’', () => {
    const input = join(dir, `f${folders - 1}`, 'input.csv');
    const json = JSON.parse(
      captured(() =>
        evaluateCommand([
          join(out, 'data.csv'),
          '--qi',
          'age,region,sex',
          '--sensitive',
          'category',
          '--original',
          input,
          '--out',
          '-',
        ]),
      ),
    );
    expect(json.disclosure.category.over).toBeUndefined();
    expect(Math.abs(json.disclosure.category.release.t - t)).toBeGreaterThan(1e-6);
  });

  it('a table without its report: evaluate says the figures are not counted over persons', () => {
    const text = captured(() => evaluateCommand([join(out, 'data.csv'), '--spec', spec]));
    expect(text).toContain('not counted over persons');
    expect(text.split('\n').find((x) => x.trim().startsWith('category'))).toBeUndefined();
  });

  it('the CLI summary counts persons', async () => {
    const lines: string[] = [];
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((s) => {
      lines.push(String(s));
      return true;
    });
    try {
      expect(await main(['release', spec, '--out', join(dir, 'cli'), '--quiet'])).toBe(0);
    } finally {
      write.mockRestore();
    }
    const line = lines.join('').split('\n')[0]!;
    expect(line).toContain(
      `k = ${report.privacy.k} persons, ${report.rows.suppressed} rows suppressed (${report.persons!.suppressed} persons)`,
    );
    // Without an entity column, the line is as it was.
    const rows = { privacy: { k: 4 }, rows: { suppressed: 0 } } as unknown as ReleaseReport;
    expect(kSummary(rows) + suppressedSummary(rows)).toBe('k = 4, 0 rows suppressed');
    // Counts with thousands separators, as every count ppdp prints.
    const large = {
      privacy: { k: 1000 },
      rows: { suppressed: 12345 },
      persons: { suppressed: 2500 },
    } as unknown as ReleaseReport;
    expect(kSummary(large) + suppressedSummary(large)).toBe(
      'k = 1,000 persons, 12,345 rows suppressed (2,500 persons)',
    );
  });

  it('the class sizes and the population estimates count persons: report.json, report.html, explore and evaluate', async () => {
    const path = fixture(orders(), 'entity', PRIVACY);
    const written = JSON.parse(readFileSync(path, 'utf8'));
    writeFileSync(path, JSON.stringify({ ...written, report: { population: { samplingFraction: 0.1 } } }));
    const released = await releaseTo(path, join(dir, 'population'));
    const { privacy, persons } = released.report;
    const u = privacy.populationRisk!;
    expect(u.over).toBe('persons');
    // 24 customers, each in one class: N = persons / f, the sample the released persons.
    expect(u.populationSize).toBe(Math.round(persons!.input / 0.1));
    expect(u.samplingFraction).toBeCloseTo((persons!.input - persons!.suppressed) / u.populationSize, 12);
    const bins = privacy.ecSizeHistogram!;
    expect(bins.reduce((n, b) => n + b.persons!, 0)).toBe(persons!.input - persons!.suppressed);
    expect(bins.reduce((n, b) => n + b.rows, 0)).toBe(released.report.rows.released);
    const html = readFileSync(join(released.out, 'report.html'), 'utf8');
    expect(html).toContain('class size (persons)');
    expect(html).toContain('<th scope="col">Class size (persons)</th>');
    expect(html).toMatch(/Persons unique in a population of [\d,]+ persons/);

    const where = join(dir, 'explore-population');
    await exploreCommand([path, '--vary', 't=0.35,0.5', '--out', where, '--quiet']);
    const choices = (
      embeddedData(readFileSync(join(where, 'explore.html'), 'utf8')).choices as Json[]
    ).filter((c) => c.classSizes?.length > 0);
    expect(choices.length).toBeGreaterThan(0);
    for (const c of choices) for (const b of c.classSizes) expect(b.persons, b.label).toBeGreaterThan(0);

    const json = JSON.parse(captured(() => evaluateCommand([released.out, '--spec', path, '--out', '-'])));
    expect(json.populationRisk).toEqual(JSON.parse(JSON.stringify(u)));
    expect(json.ecSizeHistogram).toEqual(bins);
    expect(captured(() => evaluateCommand([released.out, '--spec', path]))).toContain(
      `(in a population of ${thousands(u.populationSize)} persons, counted over persons;`,
    );
  });
});

describe('no solution with an entity column', () => {
  it('reports the top node over persons', () => {
    // One customer's four orders of each value beside two customers' books: by rows the table
    // (one class at the top) is entropy-3-diverse (books 6/22, the others 4/22 each: l ≈ 4.9);
    // by persons a weighs 0.2 per value, books 2.2 of 3 (l ≈ 2.59 < 3): no node holds.
    const rows = [
      ...CATEGORIES.flatMap((v) => rowsOf('a', ['31', 'R1', 'M'], v, 4)),
      ...['b', 'c'].flatMap((p) => rowsOf(p, ['44', 'R4', 'F'], 'books')),
    ];
    const spec = loadSpec(
      fixture(rows, 'entity', [{ model: 'entropy-l-diversity', attribute: 'category', l: 3 }]),
    );
    const table = readInput(spec);
    const search = openSearch(prepareGeneralization(spec, table, wasmGroupingKernel), wasmGroupingKernel);
    const message = noSolution(search).message;
    expect(message).toContain('the top node, one class of all persons, reaches 2.585, counted over persons');
    expect(message).toContain('persons with a suppressed row');
    expect(message).not.toContain('suppressed rows');
  });
});
