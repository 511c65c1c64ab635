import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { NoSolutionError, type PpdpError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { openSearch, prepareGeneralization } from '../../src/methods/generalization/index.ts';
import { kMinimalSearch, preferred } from '../../src/methods/generalization/samarati.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { PREFERENCES, type PrivacyModelSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { type KMinimalGoldenRow, PRIVACY_CONFIGS, type PrivacyGoldenRow } from '../golden/adult-configs.ts';
import { adultSpec } from '../helpers/adult.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace } from '../helpers/workspace.ts';

const golden = (name: string) =>
  JSON.parse(readFileSync(new URL(`../golden/${name}`, import.meta.url), 'utf8'));
const privacyGolden: PrivacyGoldenRow[] = golden('adult-privacy.json');
const kMinimalGolden: KMinimalGoldenRow[] = golden('adult-k-minimal.json');

describe('privacy models on Adult: the release equals exhaustive search and passes the verifier', () => {
  const ws = adultWorkspace();
  it.each(
    PRIVACY_CONFIGS.map(
      (c, i) => [`${c.name}, maxSuppression ${c.maxSuppression}`, c, privacyGolden[i]!] as const,
    ),
  )('%s', { timeout: 300_000 }, async (_, c, g) => {
    expect(g.name).toBe(c.name);
    ws.editSpec((s) => {
      s.privacy = [{ model: 'k-anonymity', k: 5 }, c.model];
      (s.method as Record<string, unknown>).maxSuppression = c.maxSuppression;
    });
    const { report } = await releaseTo(ws.spec, join(ws.dir, 'out', `${c.name}-${c.maxSuppression}`));
    expect(report.generalization!.node).toEqual(g.node);
    expect(report.utility.value).toBeCloseTo(g.value, 9);
    expect(report.rows.suppressed).toBe(g.suppressedRows);
    expect(report.verification.verified).toBe(true);
    const sa = report.privacy.models[1]!;
    expect(sa.satisfied).toBe(true);
    expect(report.verification.checks.find((x) => x.name === c.model.model)?.passed).toBe(true);
    // Brickell & Shmatikov's measures and both trivial baselines are in every report
    const d = report.privacy.disclosure!.occupation as Record<string, Record<string, number>>;
    expect(d.release!.knowledgeGain).toBeGreaterThanOrEqual(0);
    expect(d.qisWithheld!.knowledgeGain).toBe(0);
    expect(d.accuracy!.original).toBeGreaterThanOrEqual(d.accuracy!.release!);
  });
});

describe("Samarati's k-minimal generalizations", () => {
  const base = adultSpec();
  const table = readInput(base);
  it.each(kMinimalGolden.map((g) => [`k=${g.k} maxSuppression=${g.maxSuppression}`, g] as const))(
    '%s',
    { timeout: 300_000 },
    (_, g) => {
      const spec = {
        ...base,
        privacy: [{ model: 'k-anonymity', k: g.k }],
        method: { ...base.method, maxSuppression: g.maxSuppression, strategy: 'k-minimal' },
      } as ReleaseSpec;
      const prepared = prepareGeneralization(spec, table, wasmGroupingKernel);
      const first = kMinimalSearch(
        openSearch(prepared, wasmGroupingKernel),
        prepared.hierarchies.map((h) => h.levelTables),
        prepared.tuples.columns,
        'min-absolute-distance',
        'release.json',
      );
      expect(first.kMinimal.map((r) => r.levels)).toEqual(g.kMinimal);
      expect(first.nodesChecked).toBeLessThan(prepared.problem.lattice.size);
      const heights = prepared.hierarchies.map((h) => h.height);
      const keys = {
        'min-absolute-distance': (l: number[]) => l.reduce((a, b) => a + b, 0),
        'min-relative-distance': (l: number[]) => l.reduce((a, b, i) => a + b / heights[i]!, 0),
        'max-distribution': (l: number[]) =>
          -first.kMinimal.find((r) => r.levels.join() === l.join())!.retainedClasses,
        'min-suppression': (l: number[]) =>
          first.kMinimal.find((r) => r.levels.join() === l.join())!.suppressedRows,
      };
      for (const preference of PREFERENCES) {
        const chosen = preferred(prepared.problem.lattice, preference, first.kMinimal).levels;
        expect(g.kMinimal).toContainEqual(chosen);
        const best = Math.min(...g.kMinimal.map(keys[preference]));
        expect(keys[preference](chosen)).toBeCloseTo(best, 9);
      }
    },
  );
});

describe('privacy-model errors and combinations', () => {
  const failing = async (edit: (s: Record<string, unknown>) => void): Promise<PpdpError> => {
    const ws = adultWorkspace(2000);
    ws.editSpec(edit);
    try {
      await releaseTo(ws.spec, join(ws.dir, 'out'));
    } catch (e) {
      expect(ws.list('out')).toBeNull();
      return e as PpdpError;
    }
    throw new Error('expected the release to fail');
  };

  it('a model on a column that is not sensitive', async () => {
    const e = await failing((s) => {
      s.privacy = [{ model: 'distinct-l-diversity', attribute: 'education', l: 2 }];
    });
    expect(e.code).toBe('E_SPEC_ATTRIBUTE');
    expect(e.message).toMatch(
      /privacy\[0\]\.attribute names 'education', which is not a sensitive attribute/,
    );
  });

  it('δ with no solution names the model and what the best node reaches', async () => {
    const e = await failing((s) => {
      s.privacy = [
        { model: 'k-anonymity', k: 2 },
        { model: 'delta-disclosure', attribute: 'occupation', delta: 0 },
      ];
    });
    expect(e).toBeInstanceOf(NoSolutionError);
    expect(e.message).toMatch(
      /no generalization satisfies delta-disclosure delta = 0 \(the top node, one class of all rows, reaches 0\)/,
    );
  });

  it('l larger than the number of distinct sensitive values', async () => {
    const e = await failing((s) => {
      s.privacy = [{ model: 'distinct-l-diversity', attribute: 'occupation', l: 15 }];
    });
    expect(e).toBeInstanceOf(NoSolutionError);
    expect(e.message).toMatch(
      /distinct-l-diversity l = 15 \(the top node, one class of all rows, reaches 14\)/,
    );
    // A smaller l, yes, but never one that protects nothing.
    expect(e.hint).toMatch(/a smaller l, though not below 2/);
  });

  it('k with two sensitive-attribute models on two sensitive columns', async () => {
    const ws = adultWorkspace(3000);
    ws.editSpec((s) => {
      const attributes = s.attributes as Record<string, Record<string, unknown>>;
      attributes['salary-class']!.type = 'sensitive';
      s.privacy = [
        { model: 'k-anonymity', k: 3 },
        { model: 'distinct-l-diversity', attribute: 'salary-class', l: 2 },
        { model: 't-closeness', attribute: 'occupation', t: 0.3, distance: 'hierarchical' },
      ] satisfies PrivacyModelSpec[];
      (s.method as Record<string, unknown>).maxSuppression = 0.05;
    });
    const { report } = await releaseTo(ws.spec, join(ws.dir, 'out'));
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.models.map((m) => m.achieved)).toEqual([
      { k: expect.any(Number) },
      { l: 2 },
      { t: expect.any(Number) },
    ]);
    expect(report.privacy.models[2]!.achieved.t).toBeLessThanOrEqual(0.3);
    expect(Object.keys(report.privacy.disclosure!).sort()).toEqual(['occupation', 'salary-class']);
  });
});
