/**
 * `ppdp apply` re-applies a release's transformation only with the settings that give it its
 * meaning: a changed hierarchy (the saved node's age level 1 would be other intervals), seed or
 * suppression is refused, naming what differs; the same spec re-applies, and a changed
 * suppression limit (checked against the new data) is allowed.
 */
import { createHash } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { appliedMethod, readSavedRelease } from '../../src/apply/apply.ts';
import { loadSpec } from '../../src/release-spec/spec.ts';
import { releaseTo } from '../helpers/release.ts';
import { TINY_SPEC, tinyWorkspace } from '../helpers/tiny.ts';

const ws = tinyWorkspace();
const release = join(ws.dir, 'release');
const AGE = { type: 'quasi-identifying', hierarchy: { intervals: [10, 20] } };
const SEX = { type: 'quasi-identifying', hierarchy: 'sex.csv' };
const base = { ...TINY_SPEC, attributes: { ...TINY_SPEC.attributes, age: AGE, sex: SEX }, seed: 1 };
writeFileSync(join(ws.dir, 'sex.csv'), 'F;*\nM;*\n');
writeFileSync(join(ws.dir, 'same-sex.csv'), 'F;*\nM;*\n');
writeFileSync(join(ws.dir, 'other-sex.csv'), 'F;person\nM;person\n');

type Spec = {
  attributes: { age: { hierarchy: { intervals: number[] } }; sex: { hierarchy: string } };
  method: Record<string, unknown>;
  seed: number;
};

/** A spec over the same table: the release's, changed by `edit`. */
function specWith(name: string, edit: (s: Spec) => void): string {
  const s = structuredClone(base) as unknown as Spec;
  edit(s);
  writeFileSync(join(ws.dir, name), JSON.stringify(s));
  return join(ws.dir, name);
}

beforeAll(async () => {
  await releaseTo(
    specWith('release.json', () => {}),
    release,
  );
});

const methodFor = (spec: string) => () => appliedMethod(readSavedRelease(release), loadSpec(spec));

describe('apply refuses a spec that changes the transformation', () => {
  it.each([
    [
      'a hierarchy',
      (s: Spec) => (s.attributes.age.hierarchy.intervals = [20, 40]),
      /the hierarchy of age differs$/,
    ],
    [
      "a hierarchy file's content",
      (s: Spec) => (s.attributes.sex.hierarchy = 'other-sex.csv'),
      /the hierarchy of sex differs$/,
    ],
    [
      'two hierarchies and the seed',
      (s: Spec) => {
        s.attributes.age.hierarchy.intervals = [5];
        s.attributes.sex.hierarchy = 'other-sex.csv';
        s.seed = 2;
      },
      /the hierarchies of age and sex differ; the seed is 2, the release's 1$/,
    ],
    [
      'a quasi-identifier taken out of the spec',
      (s: Spec) => delete (s.attributes as Partial<Spec['attributes']>).age,
      /'age' is no longer in the spec \(the release generalized it as a quasi-identifier\)$/,
    ],
    ['the seed', (s: Spec) => (s.seed = 2), /the seed is 2, the release's 1$/],
    [
      'the suppressed rows',
      (s: Spec) => (s.method.suppressed = 'remove'),
      /method\.suppressed is remove, the release's mask$/,
    ],
  ])('%s', (_, edit, said) => {
    const spec = specWith('changed.json', edit);
    expect(methodFor(spec)).toThrow(said);
    try {
      methodFor(spec)();
    } catch (e) {
      expect((e as { code: string }).code).toBe('E_APPLY_CHANGED');
      expect((e as Error).message).toMatch(/^changed\.json changes the transformation of the release in /);
    }
  });
});

describe('apply accepts', () => {
  it('the same spec, and reproduces the data files', async () => {
    const spec = join(ws.dir, 'release.json');
    const out = join(ws.dir, 'again');
    await releaseTo(spec, out, { method: methodFor(spec)() });
    for (const f of ['data.csv', 'data.arrow']) {
      expect(readFileSync(join(out, f)).equals(readFileSync(join(release, f)))).toBe(true);
    }
  });

  it('a hierarchy file of another name with the same content', () => {
    const spec = specWith('same.json', (s) => (s.attributes.sex.hierarchy = 'same-sex.csv'));
    expect(methodFor(spec)).not.toThrow();
  });

  it('another suppression limit (it decides whether the new data is protected, and is checked)', () => {
    const spec = specWith('limit.json', (s) => (s.method.maxSuppression = 0.5));
    expect(methodFor(spec)).not.toThrow();
  });
});

describe('a release made before its report recorded hierarchies', () => {
  it('is applied with a caution that its hierarchies were not checked', async () => {
    const old = join(ws.dir, 'old-release');
    const copy = join(ws.dir, 'old-copy');
    await releaseTo(join(ws.dir, 'release.json'), old);
    // Its report.json as an earlier ppdp wrote it: no spec.hierarchies.
    const reportPath = join(old, 'report.json');
    const report = JSON.parse(readFileSync(reportPath, 'utf8'));
    delete report.spec.hierarchies;
    const bytes = Buffer.from(JSON.stringify(report));
    writeFileSync(reportPath, bytes);
    const manifestPath = join(old, 'manifest.json');
    const manifest = JSON.parse(readFileSync(manifestPath, 'utf8'));
    const entry = manifest.files.find((f: { name: string }) => f.name === 'report.json');
    Object.assign(entry, { bytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') });
    writeFileSync(manifestPath, JSON.stringify(manifest));
    const said: string[] = [];
    const spec = join(ws.dir, 'release.json');
    const method = appliedMethod(readSavedRelease(old), loadSpec(spec));
    const built = await releaseTo(spec, copy, { method, progress: (line: string) => said.push(line) });
    expect(said.filter((l) => l.startsWith('caution: '))).toEqual([
      expect.stringMatching(
        /does not record its hierarchies \(made by an earlier ppdp\): release\.json's were not checked/,
      ),
    ]);
    expect(built.report.details?.applied).toMatchObject({ hierarchiesChecked: false });
  });
});

describe('a quasi-identifier named __proto__', () => {
  it("has its hierarchy recorded and checked like any other's", async () => {
    const [header, ...rows] = readFileSync(join(ws.dir, 't.csv'), 'utf8').split('\n');
    writeFileSync(join(ws.dir, 'proto.csv'), [header!.replace('age', '__proto__'), ...rows].join('\n'));
    const spec = (name: string, widths: number[]) => {
      const attributes: Record<string, unknown> = Object.create(null);
      Object.assign(attributes, base.attributes);
      delete attributes.age;
      Object.defineProperty(attributes, '__proto__', {
        value: { type: 'quasi-identifying', hierarchy: { intervals: widths } },
        enumerable: true,
      });
      writeFileSync(join(ws.dir, name), JSON.stringify({ ...base, input: 'proto.csv', attributes }));
      return join(ws.dir, name);
    };
    const out = join(ws.dir, 'proto-release');
    const built = await releaseTo(spec('proto.json', [10, 20]), out);
    expect(Object.keys(built.report.spec.hierarchies ?? {})).toContain('__proto__');
    const changed = spec('proto-changed.json', [20, 40]);
    expect(() => appliedMethod(readSavedRelease(out), loadSpec(changed))).toThrow(
      /the hierarchy of __proto__ differs$/,
    );
  });
});
