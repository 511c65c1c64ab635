import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { appliedMethod, readSavedRelease } from '../../src/apply/apply.ts';
import { PpdpError } from '../../src/errors.ts';
import { prepareMondrian } from '../../src/methods/mondrian/index.ts';
import { releaseValues } from '../../src/methods/mondrian/release.ts';
import { assignBoxes, parseTransformation } from '../../src/methods/mondrian/transformation.ts';
import { readInput } from '../../src/pipeline/release.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { adultWorkspace, type Workspace } from '../helpers/workspace.ts';

const DATA = ['data.arrow', 'data.csv'];
const same = (a: string, b: string) =>
  DATA.every((f) => readFileSync(join(a, f)).equals(readFileSync(join(b, f))));

/** Re-applies the release in `from` to the data `spec` names, publishing to `out`. */
async function apply(from: string, spec: string, out: string) {
  return await releaseTo(spec, out, { method: appliedMethod(readSavedRelease(from), loadSpec(spec)) });
}

/** Every `every`-th data row of the workspace's adult.csv dropped: another sample, same schema. */
function otherSample(ws: Workspace, every: number): void {
  const [header, ...rows] = ws.read('adult.csv').trim().split('\n');
  ws.write('adult.csv', `${[header, ...rows.filter((_, i) => i % every !== 0)].join('\n')}\n`);
}

/** The Mondrian example's spec, pointed at the workspace's copy of Adult. */
function mondrianSpec(ws: Workspace, mode: 'strict' | 'relaxed', privacy?: unknown[]): string {
  const spec = JSON.parse(
    readFileSync(new URL('../../examples/adult-mondrian/release.json', import.meta.url), 'utf8'),
  );
  delete spec.root;
  spec.input = 'adult.csv';
  for (const a of Object.values(spec.attributes) as { hierarchy?: string }[])
    if (a.hierarchy) a.hierarchy = a.hierarchy.replace('../adult/', '');
  spec.method.mode = mode;
  if (privacy) spec.privacy = privacy;
  spec.method.measures = false;
  ws.write(`mondrian-${mode}.json`, JSON.stringify(spec));
  return join(ws.dir, `mondrian-${mode}.json`);
}

describe('apply a generalization release', async () => {
  const ws = adultWorkspace(4000);
  const first = join(ws.dir, 'out', 'first');
  const { report } = await releaseTo(ws.spec, first);

  it('reproduces the data files byte for byte on the same data, with the node and nothing searched', async () => {
    const again = await apply(first, ws.spec, join(ws.dir, 'out', 'again'));
    expect(same(first, join(ws.dir, 'out', 'again'))).toBe(true);
    expect(again.report.generalization!.node).toEqual(report.generalization!.node);
    expect(again.report.generalization!.nodesChecked).toBe(1);
    expect(again.report.generalization!.strategy).toBe('applied');
    expect(again.report.verification.verified).toBe(true);
    expect(again.report.details).toMatchObject({ applied: { from: again.report.ppdp.runId } });
  });

  it('verifies and publishes another sample of the same schema under the old node', async () => {
    const other = adultWorkspace(4000);
    otherSample(other, 15);
    other.editSpec((s) => {
      (s.method as Record<string, unknown>).maxSuppression = 0.1;
    });
    const r = await apply(first, other.spec, join(other.dir, 'out'));
    expect(r.report.verification.verified).toBe(true);
    expect(r.report.rows.input).toBe(3733);
    expect(r.report.generalization!.node).toEqual(report.generalization!.node);
    expect(r.report.privacy.k).toBeGreaterThanOrEqual(5);
  });

  it('refuses, publishing nothing, when the old node leaves too many classes below k', async () => {
    const other = adultWorkspace(4000);
    otherSample(other, 2);
    const out = join(other.dir, 'out');
    await expect(apply(first, other.spec, out)).rejects.toThrow(
      /the saved node .* does not protect this table: \d+ classes smaller than k=5 \(\d+ rows\) would need suppressing, and the spec allows at most 40 suppressed rows/,
    );
    expect(other.list('out')).toBeNull();
  });

  it('refuses a release whose files changed after publishing, or another method', async () => {
    const copy = adultWorkspace(10);
    const out = join(copy.dir, 'copy');
    await releaseTo(ws.spec, out);
    writeFileSync(
      join(out, 'report.json'),
      readFileSync(join(out, 'report.json'), 'utf8').replace('"k": 5', '"k": 6'),
    );
    expect(() => readSavedRelease(out)).toThrow(/does not match the release's manifest\.json/);
    expect(() => readSavedRelease(ws.dir)).toThrow(/no manifest\.json — not a published release/);
    const spec = mondrianSpec(ws, 'strict');
    expect(() => appliedMethod(readSavedRelease(first), loadSpec(spec))).toThrow(
      /the spec's method is mondrian, the release's is generalization/,
    );
  });

  it('locates a damaged manifest.json or transformation.json without quoting it', async () => {
    const copy = adultWorkspace(10);
    const out = join(copy.dir, 'damaged');
    await releaseTo(ws.spec, out);
    // A value of the input where JSON cannot have it: named by line and column, never shown.
    const manifest = readFileSync(join(out, 'manifest.json'), 'utf8');
    writeFileSync(join(out, 'manifest.json'), manifest.replace('{', '{\n  Private-Value-7,'));
    expect(() => readSavedRelease(out)).toThrow(/manifest\.json line 2, column 3: not valid JSON/);
    try {
      readSavedRelease(out);
    } catch (e) {
      expect((e as PpdpError).code).toBe('E_APPLY_RELEASE');
      expect((e as Error).message).not.toContain('Private');
    }
    const boxes = '{"format": "x", "boxes": [["Private-Value-7" 12]]}';
    expect(() => parseTransformation(boxes, 'transformation.json')).toThrow(
      /transformation\.json line 1, column 46: not valid JSON/,
    );
    expect(() => parseTransformation(boxes, 'transformation.json')).not.toThrow(/Private/);
  });
});

describe('apply a Mondrian release', async () => {
  const ws = adultWorkspace(3000);
  const spec = mondrianSpec(ws, 'strict');
  const first = join(ws.dir, 'm-first');
  await releaseTo(spec, first);

  it('publishes its partitions in transformation.json and, strict, reproduces the data exactly', async () => {
    const t = parseTransformation(
      readFileSync(join(first, 'transformation.json'), 'utf8'),
      'transformation.json',
    );
    expect(t.boxes.reduce((s, b) => s + b.rows, 0)).toBe(3000);
    expect(t.dimensions.find((d) => d.name === 'age')!.kind).toBe('numeric');
    const again = await apply(first, spec, join(ws.dir, 'm-again'));
    expect(again.report.verification.verified).toBe(true);
    expect(same(first, join(ws.dir, 'm-again'))).toBe(true);
  });

  it('puts every row back in the partition it came from (boxes rebuilt from the file)', async () => {
    const spec = loadSpec(mondrianSpec(ws, 'relaxed', [{ model: 'k-anonymity', k: 10 }]));
    const first = join(ws.dir, 'm-relaxed');
    const built = await releaseTo(spec.file, first);
    const t = parseTransformation(
      readFileSync(join(first, 'transformation.json'), 'utf8'),
      'transformation.json',
    );
    const { problem } = prepareMondrian(spec, readInput(spec));
    const result = assignBoxes(problem, t, spec.file);
    const sizes = Array.from(result.start, (s, p) => result.end[p]! - s);
    expect(sizes).toEqual(t.boxes.map((b) => b.rows));
    expect(releaseValues(problem, result).classes).toBe(built.report.privacy.classes);
  });

  it('refuses rows outside every saved partition, naming the attribute', async () => {
    const other = adultWorkspace(3000);
    const [header, ...rows] = other.read('adult.csv').trim().split('\n');
    const age = header!.split(';').indexOf('age');
    const older = rows.map((row, i) => {
      if (i % 500 !== 0) return row;
      const cells = row.split(';');
      cells[age] = '120'; // older than every partition's range
      return cells.join(';');
    });
    other.write('adult.csv', `${[header, ...older].join('\n')}\n`);
    const otherSpec = mondrianSpec(other, 'strict');
    await expect(apply(first, otherSpec, join(other.dir, 'out'))).rejects.toThrow(
      /6 of 3000 rows fall outside every saved partition; the quasi-identifiers whose values no partition covers: age \(6\)/,
    );
  });
});

describe('apply a randomization release, and the methods that cannot be re-applied', () => {
  it('reproduces a randomized release from its matrices', async () => {
    const ws = adultWorkspace(3000);
    const spec = JSON.parse(
      readFileSync(new URL('../../examples/adult-randomization/release.json', import.meta.url), 'utf8'),
    );
    delete spec.root;
    spec.input = 'adult.csv';
    ws.write('randomization.json', JSON.stringify(spec));
    const path = join(ws.dir, 'randomization.json');
    await releaseTo(path, join(ws.dir, 'r1'));
    const again = await apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    expect(again.report.verification.verified).toBe(true);
    expect(same(join(ws.dir, 'r1'), join(ws.dir, 'r2'))).toBe(true);
  });

  it('refuses a value outside the saved bins, naming its row and column (not a field of the saved matrices)', async () => {
    const ws = adultWorkspace(3000);
    const spec = JSON.parse(
      readFileSync(new URL('../../examples/adult-randomization/release.json', import.meta.url), 'utf8'),
    );
    delete spec.root;
    spec.input = 'adult.csv';
    spec.attributes.age = { type: 'quasi-identifying', scale: 'numeric' };
    ws.write('randomization.json', JSON.stringify(spec));
    const path = join(ws.dir, 'randomization.json');
    await releaseTo(path, join(ws.dir, 'r1'));
    const [header, ...rows] = ws.read('adult.csv').trim().split('\n');
    const age = header!.split(';').indexOf('age');
    const older = rows.map((row, i) => {
      if (i !== 9) return row;
      const cells = row.split(';');
      cells[age] = '150'; // older than the saved bins reach
      return cells.join(';');
    });
    ws.write('adult.csv', `${[header, ...older].join('\n')}\n`);
    const failure = apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    // The header is row 1: the tenth data row is row 11.
    await expect(failure).rejects.toThrow(
      /^adult\.csv row 11, column 'age': the value lies outside the saved bins of age in .*matrices\.json/,
    );
    await expect(failure).rejects.not.toThrow(/method\.matrices|150/);
  });

  it('bins new data with the saved bin edges, even when its range is narrower', async () => {
    const ws = adultWorkspace(3000);
    const spec = JSON.parse(
      readFileSync(new URL('../../examples/adult-randomization/release.json', import.meta.url), 'utf8'),
    );
    delete spec.root;
    spec.input = 'adult.csv';
    spec.attributes.age = { type: 'quasi-identifying', scale: 'numeric' };
    ws.write('randomization.json', JSON.stringify(spec));
    const path = join(ws.dir, 'randomization.json');
    await releaseTo(path, join(ws.dir, 'r1'));
    const saved = JSON.parse(ws.read('r1/matrices.json')).attributes.age;
    // Only the rows aged 30 to 49: a range inside the saved bins, not their own.
    const [header, ...rows] = ws.read('adult.csv').trim().split('\n');
    const age = header!.split(';').indexOf('age');
    const middle = rows.filter((row) => {
      const a = Number(row.split(';')[age]);
      return a >= 30 && a < 50;
    });
    ws.write('adult.csv', `${[header, ...middle].join('\n')}\n`);
    const again = await apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    expect(again.report.verification.verified).toBe(true);
    const reapplied = JSON.parse(ws.read('r2/matrices.json')).attributes.age;
    expect(reapplied.categories).toEqual(saved.categories);
    expect(reapplied.discretization).toEqual(saved.discretization);
    expect(reapplied.matrix).toEqual(saved.matrix);
    const [outHeader, ...outRows] = ws.read('r2/data.csv').trim().split('\n');
    const outAge = outHeader!.split(';').indexOf('age');
    const released = new Set(outRows.map((row) => row.split(';')[outAge]));
    for (const label of released) expect(saved.categories).toContain(label);
  });

  it('refuses a category the saved release does not have, naming its row and column', async () => {
    const ws = adultWorkspace(1000);
    const spec = JSON.parse(
      readFileSync(new URL('../../examples/adult-randomization/release.json', import.meta.url), 'utf8'),
    );
    delete spec.root;
    spec.input = 'adult.csv';
    ws.write('randomization.json', JSON.stringify(spec));
    const path = join(ws.dir, 'randomization.json');
    await releaseTo(path, join(ws.dir, 'r1'));
    const [header, ...rows] = ws.read('adult.csv').trim().split('\n');
    const race = header!.split(';').indexOf('race');
    const changed = rows.map((row, i) => {
      if (i !== 4) return row;
      const cells = row.split(';');
      cells[race] = 'Unseen-race';
      return cells.join(';');
    });
    ws.write('adult.csv', `${[header, ...changed].join('\n')}\n`);
    const failure = apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    await expect(failure).rejects.toThrow(
      /^adult\.csv row 6, column 'race': the value is none of the saved categories of race in .*matrices\.json/,
    );
    await expect(failure).rejects.not.toThrow(/method\.matrices|Unseen/);
  });

  /** 48 rows: every (zip, sex) group holds diagnoses x, y, z equally, or `diag` when given. */
  const smallTable = (diag?: (zip: string, sex: string) => string | undefined) =>
    `zip,sex,diag\n${['A', 'B']
      .flatMap((zip) =>
        ['M', 'F'].flatMap((sex) =>
          Array.from({ length: 12 }, (_, i) => `${zip},${sex},${diag?.(zip, sex) ?? 'xyz'[i % 3]}`),
        ),
      )
      .join('\n')}\n`;
  /** A spec of t.csv in `ws` protecting diag, written to `name`; its path. */
  const smallSpec = (ws: Workspace, name: string, scenario: string, privacy: unknown): string => {
    ws.write(
      name,
      JSON.stringify({
        input: 't.csv',
        attributes: {
          zip: { type: 'quasi-identifying' },
          sex: { type: 'quasi-identifying' },
          diag: { type: 'sensitive' },
        },
        privacy: [privacy],
        method: { name: 'randomization', scenario, form: 'retention' },
        seed: 1,
      }),
    );
    return join(ws.dir, name);
  };
  const rho = (rho2: number) => ({ model: 'rho-privacy', attribute: 'diag', rho1: 0.1, rho2 });

  it('keeps an attribute the release left unperturbed at retention 1, refusing when the new table then fails the bound', async () => {
    const ws = adultWorkspace(0);
    // τ = 0.5 holds unperturbed: the release randomizes neither QI.
    ws.write('t.csv', smallTable());
    const path = smallSpec(ws, 'r.json', 'rr-qi', {
      model: 'attribute-disclosure',
      attribute: 'diag',
      tau: 0.5,
    });
    await releaseTo(path, join(ws.dir, 'r1'));
    const saved = JSON.parse(ws.read('r1/matrices.json'));
    expect(Object.keys(saved.attributes)).toEqual([]);
    expect(Object.keys(saved.released).sort()).toEqual(['diag', 'sex', 'zip']);
    // Now every (A, M) row has diagnosis x: a release of this table would randomize the QIs.
    ws.write(
      't.csv',
      smallTable((zip, sex) => (zip === 'A' && sex === 'M' ? 'x' : undefined)),
    );
    const failure = apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    await expect(failure).rejects.toMatchObject({ code: 'E_APPLY_INFEASIBLE' });
    await expect(failure).rejects.toThrow(
      /^r\.json: the transformation saved in .*matrices\.json does not protect this table: they leave a maximum attribute-disclosure risk of 1\.000 > τ = 0\.5; the release left zip, sex unperturbed \(retention 1\), and apply keeps them so$/,
    );
    expect(ws.list('r2')).toBeNull();
  });

  it('keeps a sensitive attribute the release left unperturbed, refusing it under rho-privacy', async () => {
    const ws = adultWorkspace(0);
    // One diagnosis: nothing to randomize, so the release leaves diag unperturbed.
    ws.write(
      't.csv',
      smallTable(() => 'x'),
    );
    const path = smallSpec(ws, 'r.json', 'rr-s', rho(0.5));
    await releaseTo(path, join(ws.dir, 'r1'));
    expect(Object.keys(JSON.parse(ws.read('r1/matrices.json')).attributes)).toEqual([]);
    ws.write('t.csv', smallTable());
    const failure = apply(join(ws.dir, 'r1'), path, join(ws.dir, 'r2'));
    await expect(failure).rejects.toMatchObject({ code: 'E_APPLY_INFEASIBLE' });
    await expect(failure).rejects.toThrow(
      /does not protect this table: the release left the sensitive attribute diag unperturbed \(retention 1\), and rho-privacy \(0\.1, 0\.5\) needs its 3 categories randomized$/,
    );
  });

  it('refuses a saved matrix a tightened rho-privacy no longer allows, as the saved one', async () => {
    const ws = adultWorkspace(0);
    ws.write('t.csv', smallTable());
    await releaseTo(smallSpec(ws, 'r.json', 'rr-s', rho(0.5)), join(ws.dir, 'r1'));
    const failure = apply(join(ws.dir, 'r1'), smallSpec(ws, 'r2.json', 'rr-s', rho(0.3)), join(ws.dir, 'r2'));
    await expect(failure).rejects.toMatchObject({ code: 'E_APPLY_INFEASIBLE' });
    await expect(failure).rejects.toThrow(
      /^r2\.json: the transformation saved in .*matrices\.json does not protect this table: the saved matrix of the sensitive attribute diag is 9\.000-amplifying; rho-privacy \(0\.1, 0\.3\) allows γ ≤ 3\.857$/,
    );
  });

  it('refuses Anatomy with the reason', async () => {
    const ws = adultWorkspace(500);
    ws.editSpec((s) => {
      s.method = { name: 'anatomy' };
      s.privacy = [{ model: 'distinct-l-diversity', attribute: 'occupation', l: 2 }];
    });
    await releaseTo(ws.spec, join(ws.dir, 'anatomy'));
    const error = (() => {
      try {
        appliedMethod(readSavedRelease(join(ws.dir, 'anatomy')), loadSpec(ws.spec));
      } catch (e) {
        return e as PpdpError;
      }
    })();
    expect(error).toBeInstanceOf(PpdpError);
    expect(error!.message).toMatch(
      /anatomy releases cannot be re-applied: Anatomy's buckets are drawn from the data itself/,
    );
  });
});
