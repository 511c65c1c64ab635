import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { exploreCommand } from '../../src/cli/explore.ts';
import { PpdpError } from '../../src/errors.ts';
import { exploreFrontier, parseVary, specWith } from '../../src/explore/frontier.ts';
import { frontierCsv } from '../../src/explore/render.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { search } from '../../src/methods/generalization/index.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { adultSpec, prepareAdult } from '../helpers/adult.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

describe('--vary', () => {
  it('reads integer ranges, steps, fractional ranges and lists', () => {
    expect(parseVary('k=2..5')).toEqual({ parameter: 'k', values: [2, 3, 4, 5] });
    expect(parseVary('k=2..10:4')).toEqual({ parameter: 'k', values: [2, 6, 10] });
    expect(parseVary('t=0.1..0.3:0.05')).toEqual({ parameter: 't', values: [0.1, 0.15, 0.2, 0.25, 0.3] });
    expect(parseVary('τ=0.2,0.4')).toEqual({ parameter: 'tau', values: [0.2, 0.4] });
    expect(parseVary('l=2..6').values).toHaveLength(5);
  });

  it('refuses what it cannot run, saying how to write it', () => {
    for (const bad of [
      'k',
      'x=1..3',
      'k=5..2',
      'k=1..3:0',
      't=0.1..0.5',
      't=0..2:1',
      'k=1.5',
      'k=1..100000',
    ]) {
      expect(() => parseVary(bad), bad).toThrow(PpdpError);
    }
    expect(() => parseVary('t=0.1..0.5')).toThrow(/needs a step/);
  });

  it('sets the parameter in the models that carry it, adds k-anonymity, refuses a missing SA model', () => {
    const spec = adultSpec();
    expect(specWith(spec, 'k', 9).privacy).toEqual([{ model: 'k-anonymity', k: 9 }]);
    expect(specWith({ ...spec, privacy: [] }, 'k', 3).privacy).toEqual([{ model: 'k-anonymity', k: 3 }]);
    expect(() => specWith(spec, 'l', 3)).toThrow(/needs a distinct-l-diversity or .* model/);
    // "an attribute-disclosure model", not "a attribute-disclosure model".
    expect(() => specWith(spec, 'tau', 0.3)).toThrow(/needs an attribute-disclosure model in privacy/);
    const withL = {
      ...spec,
      privacy: [...spec.privacy, { model: 'distinct-l-diversity' as const, attribute: 'occupation', l: 2 }],
    };
    expect(specWith(withL, 'l', 4).privacy[1]).toEqual({
      model: 'distinct-l-diversity',
      attribute: 'occupation',
      l: 4,
    });
    expect(() => specWith(withL, 'l', 2.5)).toThrow(/not a whole number/);
  });
});

describe('the frontier on Adult', () => {
  const spec = adultSpec();
  const table = readInput(spec);
  const frontier = exploreFrontier(spec, table, parseVary('k=2..12:5'), wasmGroupingKernel);

  it('each value chose the node a release searching alone chooses', () => {
    for (const p of frontier.points) {
      const prepared = prepareAdult(specWith(spec, 'k', p.value));
      const outcome = search(prepared, wasmGroupingKernel);
      outcome.evaluator.dispose();
      expect(p.feasible).toBe(true);
      expect(p.node).toEqual(
        Object.fromEntries(prepared.qis.map((q, i) => [q.name, outcome.best.levels[i]])),
      );
      expect(p.utility?.ncp).toBeCloseTo(outcome.best.values.ncp, 12);
      expect(p.kAchieved).toBeGreaterThanOrEqual(p.value);
      expect(p.maxProsecutorRisk).toBeCloseTo(1 / p.kAchieved!, 12);
    }
  });

  it('trades risk for information loss as k grows', () => {
    const ncp = frontier.points.map((p) => p.utility!.ncp!);
    const risk = frontier.points.map((p) => p.maxProsecutorRisk!);
    for (let i = 1; i < ncp.length; i++) {
      expect(ncp[i]).toBeGreaterThanOrEqual(ncp[i - 1]!);
      expect(risk[i]).toBeLessThanOrEqual(risk[i - 1]!);
    }
  });

  it('writes a CSV row per value', () => {
    const csv = frontierCsv(frontier).trim().split('\n');
    expect(csv[0]).toMatch(
      /^k,feasible,classes,k_achieved,suppressed_rows,objective,objective_value,risk,risk_value,ncp,/,
    );
    expect(csv[1]).toMatch(/^2,true,\d+,2,\d+,ncp,0\.\d+,max prosecutor risk,0\.5,/);
    expect(csv.slice(1).map((l) => Number(l.split(',')[0]))).toEqual([2, 7, 12]);
  });

  it('marks values with no solution instead of failing the sweep', () => {
    const strict = {
      ...spec,
      privacy: [
        { model: 'k-anonymity' as const, k: 2 },
        { model: 'distinct-l-diversity' as const, attribute: 'occupation', l: 2 },
      ],
    };
    const f = exploreFrontier(strict, table, parseVary('l=14..15'), wasmGroupingKernel);
    expect(f.points.map((p) => p.feasible)).toEqual([true, false]);
    expect(f.points[1]!.reason).toMatch(/no generalization satisfies/);
  });
});

describe('the frontier of another method', () => {
  it('builds Mondrian in memory per value, publishing nothing', () => {
    const ws = adultWorkspace(1000);
    ws.editSpec((s) => {
      s.method = { name: 'mondrian', mode: 'strict', measures: false };
    });
    const spec = loadSpec(ws.spec);
    const f = exploreFrontier(spec, readInput(spec), parseVary('k=5,20'), wasmGroupingKernel);
    expect(f.method).toBe('mondrian');
    expect(f.points.map((p) => p.objective?.name)).toEqual(['ncp', 'ncp']);
    expect(f.points[0]!.kAchieved).toBeGreaterThanOrEqual(5);
    expect(f.points[1]!.kAchieved).toBeGreaterThanOrEqual(20);
    expect(f.points[1]!.utility!.ncp!).toBeGreaterThan(f.points[0]!.utility!.ncp!);
    expect(f.points[1]!.risk).toEqual({ name: 'max prosecutor risk', value: 1 / f.points[1]!.kAchieved! });
    expect(ws.list('.')!.filter((name) => !name.startsWith('adult') && name !== 'README.md')).toEqual([
      'release.json',
    ]);
  });
});

describe('ppdp explore (in process)', () => {
  it('refuses an --out that is a file before reading anything', async () => {
    const ws = adultWorkspace(10);
    await expect(
      exploreCommand([ws.spec, '--vary', 'k=2..3', '--out', join(ws.dir, 'adult.csv')]),
    ).rejects.toThrow(/--out .*adult\.csv: exists and is a file, not a folder/);
  });
});
