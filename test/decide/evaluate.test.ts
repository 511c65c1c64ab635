import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { evaluateCommand } from '../../src/cli/evaluate.ts';
import { readArrow } from '../../src/data/arrow.ts';
import { readCsv } from '../../src/data/csv.ts';
import { type Evaluation, evaluateTable } from '../../src/evaluate/evaluate.ts';
import { readHierarchyRows } from '../../src/hierarchy/hierarchy.ts';
import { tsGroupingKernel } from '../../src/kernels/groupby/reference.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { thousands } from '../../src/util/format.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const dir = mkdtempSync(join(tmpdir(), 'ppdp-evaluate-'));
const HOSPITAL = new URL('../../examples/hospital/', import.meta.url).pathname;
const file = (name: string, text: string) => {
  writeFileSync(join(dir, name), text);
  return join(dir, name);
};
// A generalized table as another tool writes it: ranges, hierarchy labels, '*' rows.
const released = readCsv(
  file(
    'released.csv',
    'age;sex;zip;disease\n[20-29];M;1****;flu\n[20-29];M;1****;cold\n[20-29];M;1****;flu\n' +
      '[30-39];F;130**;cancer\n[30-39];F;130**;flu\n*;*;*;cold\n',
  ),
);
const original = readCsv(
  file(
    'original.csv',
    'age;sex;zip;disease\n21;M;13053;flu\n25;M;14850;cold\n28;M;14853;flu\n33;F;13053;cancer\n35;F;13068;flu\n40;F;14850;cold\n',
  ),
);
const zipHierarchy = readHierarchyRows(
  file('zip.csv', '13053;130**;1****;*\n13068;130**;1****;*\n14850;148**;1****;*\n14853;148**;1****;*\n'),
);

describe('evaluate on a hand-made generalized table', () => {
  const base = {
    table: released,
    source: 'released.csv',
    quasiIdentifiers: ['age', 'sex', 'zip'],
    sensitive: ['disease'],
    threshold: 0.2,
  };

  it('finds the classes as written and their risks', () => {
    for (const kernel of [wasmGroupingKernel, tsGroupingKernel]) {
      const e = evaluateTable({ ...base, kernel });
      expect(e.rows).toBe(6);
      expect(e.suppressedRows).toBe(1);
      expect(e.classes).toBe(2);
      expect(e.kAchieved).toBe(2);
      expect(e.risk.prosecutor).toEqual({ max: 0.5, mean: 0.4, recordsAbove: 5, shareAbove: 1 });
      expect(e.risk.marketer).toBeCloseTo(0.4, 12);
      expect(e.disclosure.disease!.release.distinctL).toBe(2);
      expect(e.utility).toBeUndefined();
    }
  });

  it('measures average risk over the released classes; a model that needs its population table is not measured', () => {
    const e = evaluateTable({
      ...base,
      kernel: wasmGroupingKernel,
      privacy: [
        { model: 'average-risk', threshold: 0.5 },
        { model: 'average-risk', threshold: 0.3 },
        { model: 'delta-presence', deltaMin: 0.1, deltaMax: 0.5, population: join(dir, 'population.csv') },
      ],
    });
    // Two classes over five released rows.
    expect(e.models!.map((m) => [m.satisfied, m.worst, m.measured])).toEqual([
      [true, 0.4, undefined],
      [false, 0.4, undefined],
      [false, Number.NaN, false],
    ]);
  });

  it('checks privacy models per class', () => {
    const e = evaluateTable({
      ...base,
      kernel: wasmGroupingKernel,
      privacy: [
        { model: 'k-anonymity', k: 3 },
        { model: 'distinct-l-diversity', attribute: 'disease', l: 2 },
      ],
    });
    expect(e.models).toEqual([
      { model: 'k-anonymity', params: { k: 3 }, satisfied: false, worst: 2, classesFailing: 1 },
      {
        model: 'distinct-l-diversity',
        params: { attribute: 'disease', l: 2 },
        satisfied: true,
        worst: 2,
        classesFailing: 0,
      },
    ]);
  });

  it('measures information loss from the strings: ranges, hierarchy labels, values and *', () => {
    const e = evaluateTable({
      ...base,
      kernel: wasmGroupingKernel,
      original,
      hierarchies: new Map([['zip', zipHierarchy]]),
    });
    const age = (5 * (9 / 19) + 1) / 6;
    const sex = 1 / 6;
    const zip = (3 * 1 + 2 * (1 / 3) + 1) / 6;
    expect(e.utility!.ncpByAttribute.age).toBeCloseTo(age, 12);
    expect(e.utility!.ncpByAttribute.sex).toBeCloseTo(sex, 12);
    expect(e.utility!.ncpByAttribute.zip).toBeCloseTo(zip, 12);
    expect(e.utility!.ncp).toBeCloseTo((age + sex + zip) / 3, 12);
    expect(e.utility!.discernibility).toBe(9 + 4 + 6);
    expect(e.utility!.aecs).toBeCloseTo(1.25, 12);
    expect(e.utility!.unmeasuredCells).toBe(0);
  });

  it('measures a range over the numbers: an empty cell of the column is not the number 0', () => {
    // Years 1990–2020 and one missing year, released as two ranges and the empty cell as it is.
    const e = evaluateTable({
      table: readCsv(
        file(
          'years-released.csv',
          'year,sex\n[1990-2005],F\n[1990-2005],F\n[2006-2020],M\n[2006-2020],M\n,F\n',
        ),
      ),
      source: 'years-released.csv',
      quasiIdentifiers: ['year', 'sex'],
      sensitive: [],
      original: readCsv(file('years.csv', 'year,sex\n1990,F\n2000,F\n2010,M\n2020,M\n,F\n')),
      threshold: 0.2,
      kernel: wasmGroupingKernel,
    });
    expect(e.utility!.ncpByAttribute.year).toBeCloseTo((15 + 15 + 14 + 14) / 30 / 5, 12);
    expect(e.utility!.ncpByAttribute.sex).toBe(0);
  });

  it('divides AECS by the spec’s k, and says which k it took', () => {
    // Two released classes (3 and 2 rows) and one suppressed row: k achieved 2.
    const bySpec = evaluateTable({
      ...base,
      kernel: wasmGroupingKernel,
      original,
      privacy: [
        { model: 'distinct-l-diversity', attribute: 'disease', l: 2 },
        { model: 'k-anonymity', k: 1 },
      ],
    });
    expect(bySpec.utility!.aecs).toBeCloseTo(5 / 2 / 1, 12);
    expect(bySpec.utility!.aecsK).toEqual({ k: 1, from: 'spec' });
    const achieved = evaluateTable({ ...base, kernel: wasmGroupingKernel, original });
    expect(achieved.utility!.aecs).toBeCloseTo(5 / 2 / 2, 12);
    expect(achieved.utility!.aecsK).toEqual({ k: 2, from: 'achieved' });
  });

  it('names a missing column and how to see the columns', () => {
    expect(() =>
      evaluateTable({ ...base, quasiIdentifiers: ['age', 'zipcode'], kernel: wasmGroupingKernel }),
    ).toThrow(/released\.csv has no column zipcode/);
  });
});

describe('evaluate agrees with the report of a ppdp release', () => {
  it('k, classes, risk, NCP, discernibility of a generalization release', async () => {
    const ws = adultWorkspace(3000);
    const out = join(ws.dir, 'out');
    const { report } = await releaseTo(ws.spec, out);
    const spec = loadSpec(ws.spec);
    const input = readInput(spec);
    const e = evaluateTable({
      table: readArrow(join(out, 'data.arrow')),
      source: 'data.arrow',
      quasiIdentifiers: spec.attributes.filter((a) => a.type === 'quasi-identifying').map((a) => a.name),
      sensitive: ['occupation'],
      original: input,
      hierarchies: new Map(
        spec.attributes
          .filter((a) => a.type === 'quasi-identifying')
          .map((a) => [a.name, readHierarchyRows((a.hierarchy as { path: string }).path)]),
      ),
      privacy: spec.privacy,
      threshold: 0.2,
      kernel: wasmGroupingKernel,
    });
    expect(e.kAchieved).toBe(report.privacy.k);
    expect(e.classes).toBe(report.privacy.classes);
    expect(e.suppressedRows).toBe(report.rows.suppressed);
    expect(e.risk.prosecutor.max).toBeCloseTo(report.privacy.prosecutorRisk!.max, 12);
    expect(e.utility!.ncp).toBeCloseTo(report.utility.ncp as number, 9);
    expect(e.utility!.discernibility).toBe(report.utility.discernibility);
    expect(e.models![0]!.satisfied).toBe(true);
  });

  // The CLI's --spec path: the spec's input as the original, its hierarchies and models.
  const evaluateBySpec = (release: string, spec: string): { e: Evaluation; summary: string } => {
    const json = join(release, '..', `${basename(release)}-evaluate.json`);
    let summary = '';
    const write = vi.spyOn(process.stdout, 'write').mockImplementation((text) => {
      summary += String(text);
      return true;
    });
    try {
      evaluateCommand([release, '--spec', spec, '--out', json]);
    } finally {
      write.mockRestore();
    }
    return { e: JSON.parse(readFileSync(json, 'utf8')) as Evaluation, summary };
  };
  const hospitalSpec = (
    name: string,
    edit: (spec: { method: Record<string, unknown> }) => void = () => {},
  ) => {
    const spec = JSON.parse(readFileSync(join(HOSPITAL, name), 'utf8'));
    spec.input = join(HOSPITAL, spec.input);
    edit(spec);
    return file(name, JSON.stringify(spec));
  };

  it('NCP of a Mondrian release whose numeric QI has empty cells (ages 1–99: over 98, not 99)', async () => {
    const spec = hospitalSpec('release-mondrian.json');
    const { report, out } = await releaseTo(spec, join(dir, 'mondrian'));
    const { e } = evaluateBySpec(out, spec);
    const byAttribute = (report.details!.mondrian as { ncpByAttribute: Record<string, number> })
      .ncpByAttribute;
    for (const [name, ncp] of Object.entries(byAttribute))
      expect(e.utility!.ncpByAttribute[name]).toBeCloseTo(ncp, 12);
    expect(e.utility!.ncp).toBeCloseTo(report.utility.ncp as number, 12);
  });

  it('refuses a release whose rows do not carry their quasi-identifiers (Anatomy, randomization), naming its report', async () => {
    type Editable = {
      method: Record<string, unknown>;
      privacy?: unknown[];
      attributes?: Record<string, { type: string }>;
    };
    const edits: [string, (s: Editable) => void][] = [
      [
        'anatomy',
        (s) => {
          s.method = { name: 'anatomy' };
          s.privacy = [{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 }];
        },
      ],
      [
        'randomization',
        (s) => {
          // sex alone as the quasi-identifier: its groups are large enough to randomize diagnosis in.
          for (const a of ['age', 'zip', 'admission_date']) s.attributes![a]!.type = 'identifying';
          s.method = { name: 'randomization', scenario: 'rr-s' };
          s.privacy = [{ model: 'attribute-disclosure', attribute: 'diagnosis', tau: 0.5 }];
        },
      ],
    ];
    for (const [method, edit] of edits) {
      const spec = hospitalSpec('release.json', edit as (s: { method: Record<string, unknown> }) => void);
      const { out } = await releaseTo(spec, join(dir, method));
      // The folder, or its table: each row would be misread as a class of its own.
      for (const evaluated of [out, join(out, 'data.csv')]) {
        expect(() => evaluateCommand([evaluated, '--spec', spec])).toThrow(
          `${evaluated}: evaluate measures releases of generalization and mondrian (rows with their quasi-identifiers); this release was made by ${method}, and its report.json holds its verified figures`,
        );
      }
    }
  });

  it('a release that removes its suppressed rows: they count as suppressed, as in report.json', async () => {
    const spec = hospitalSpec('release.json', (s) => {
      s.method.suppressed = 'remove';
    });
    const { report, out } = await releaseTo(spec, join(dir, 'removed'));
    expect(report.rows.suppressed).toBeGreaterThan(0);
    expect(report.rows.released).toBe(report.rows.input - report.rows.suppressed);
    const { e, summary } = evaluateBySpec(out, spec);
    expect(e.rows).toBe(report.rows.released);
    expect(e.suppressedRows).toBe(report.rows.suppressed);
    expect(e.removedRows).toBe(report.rows.suppressed);
    expect(e.utility!.ncp).toBeCloseTo(report.utility.ncp as number, 12);
    for (const [name, ncp] of Object.entries(report.generalization!.ncpByAttribute!))
      expect(e.utility!.ncpByAttribute[name]).toBeCloseTo(ncp, 12);
    expect(e.utility!.discernibility).toBe(report.utility.discernibility);
    expect(e.utility!.aecs).toBeCloseTo(report.utility.aecs as number, 12);
    expect(summary).toMatch(
      new RegExp(
        `${thousands(e.rows)} rows \\(${thousands(e.suppressedRows)} suppressed, ${thousands(e.removedRows)} of them removed`,
      ),
    );
    expect(summary).toMatch(/AECS [\d.]+ \(k = 5, the spec’s\)/);
  });
});
