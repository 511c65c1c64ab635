import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { formatCsv, readCsv } from '../../src/data/csv.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { InputError, NoSolutionError, SpecError, VerificationError } from '../../src/errors.ts';
import { anatomize } from '../../src/methods/anatomy/bucketize.ts';
import { type AnatomyRelease, anatomyRelease } from '../../src/methods/anatomy/index.ts';
import { checkEligibility } from '../../src/methods/bucket-common.ts';
import type { StagedFile } from '../../src/methods/method.ts';
import { lDiversity } from '../../src/models/l-diversity.ts';
import { readInput, streams } from '../../src/pipeline/release.ts';
import { parseSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { Random } from '../../src/util/random.ts';
import { decodeTable } from '../../src/verify/generalization.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { releaseTo } from '../helpers/release.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SPEC_FILE = join(ROOT, 'examples/adult-anatomy/release.json');
const base = JSON.parse(readFileSync(SPEC_FILE, 'utf8'));

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ppdp-anatomy-'));
  dirs.push(d);
  return d;
};

function specWith(edit: (json: typeof base) => void): ReleaseSpec {
  const json = structuredClone(base);
  edit(json);
  return parseSpec(json, SPEC_FILE);
}

const table: EncodedTable = readInput(specWith(() => {}));
const ctx = (spec: ReleaseSpec) => ({
  spec,
  table,
  time: <T>(_: string, work: () => T) => work(),
  say: () => {},
  random: streams(spec, table),
});

function stage(files: StagedFile[]): string {
  const dir = tempDir();
  for (const f of files) writeFileSync(join(dir, f.name), f.content);
  return dir;
}

/** The spec of an Anatomy release of occupation with `model` and `l`. */
const specOf = (l: number, model = 'distinct-l-diversity', seed = 1) =>
  specWith((j) => {
    j.privacy = [{ model, attribute: 'occupation', l }];
    j.seed = seed;
  });

/** The pipeline's Anatomy verifier over a release staged in `dir`, against the spec it was made for. */
const verifyAt = (r: AnatomyRelease & { spec: ReleaseSpec }, dir: string) =>
  verifierFor('anatomy').verify({
    spec: r.spec,
    table,
    claims: r.claims,
    staged: (name) => join(dir, name),
  });

const release = (l: number, model = 'distinct-l-diversity', seed = 1) => {
  const spec = specOf(l, model, seed);
  return { ...anatomyRelease(ctx(spec)), spec };
};

describe('anatomy bucketization (Xiao & Tao group creation)', () => {
  it('puts every row in a bucket of ≥ l pairwise distinct SA values, sizes l or l + 1', () => {
    let checked = 0;
    const random = new Random(7);
    for (let trial = 0; trial < 50; trial++) {
      const domain = 2 + random.below(8);
      const l = 2 + random.below(Math.min(domain, 5) - 1);
      const n = l + random.below(200);
      const sa = Int32Array.from({ length: n }, () => random.below(domain));
      const counts = new Int32Array(domain);
      for (const s of sa) counts[s]!++;
      if (Math.max(...counts) * l > n) continue; // not eligible
      const bz = anatomize(sa, domain, l, new Random(trial));
      const values = Array.from({ length: bz.buckets }, () => [] as number[]);
      for (let r = 0; r < n; r++) values[bz.bucketOf[r]!]!.push(sa[r]!);
      for (const v of values) {
        expect(v.length).toBeGreaterThanOrEqual(l);
        expect(v.length).toBeLessThanOrEqual(l + 1);
        expect(new Set(v).size).toBe(v.length);
      }
      expect(bz.residual).toBeLessThan(l);
      expect(bz.buckets).toBe(Math.floor(n / l));
      checked++;
    }
    expect(checked).toBeGreaterThan(10);
  });
});

describe('Anatomy on Adult (occupation sensitive, the 8 QIs)', () => {
  for (const l of [2, 3, 4, 5, 6]) {
    it(`l = ${l}: verified independently`, () => {
      const r = release(l);
      const dir = stage(r.files);
      const checks = verifyAt(r, dir);
      expect(checks.every((c) => c.passed)).toBe(true);
      expect(checks.map((c) => c.name)).toContain('l-diversity');
      expect(r.layout.bucketization.buckets).toBe(Math.floor(table.rowCount / l));
      // The ST read back: every bucket has ≥ l distinct values, counts add up to N.
      const st = decodeTable(readCsv(join(dir, 'st.csv'), { delimiter: ';' }));
      const perBucket = new Map<string, number>();
      let total = 0;
      st.columns[0]!.forEach((b, i) => {
        perBucket.set(b, (perBucket.get(b) ?? 0) + 1);
        total += Number(st.columns[2]![i]);
      });
      expect(Math.min(...perBucket.values())).toBeGreaterThanOrEqual(l);
      expect(total).toBe(table.rowCount);
      // The QIT keeps the QIs unchanged and adds `bucket`; data.csv is the single-table form.
      const qit = decodeTable(readArrow(join(dir, 'qit.arrow')));
      expect(qit.names).toEqual([
        'sex',
        'age',
        'race',
        'marital-status',
        'education',
        'native-country',
        'workclass',
        'salary-class',
        'bucket',
      ]);
      const data = decodeTable(readArrow(join(dir, 'data.arrow')));
      expect(data.names).toEqual([...table.columns.map((c) => c.name), 'bucket']);
    });
  }

  it('entropy l-diversity (l = 3.5) buckets ⌈l⌉ distinct values and verifies', () => {
    const r = release(3.5, 'entropy-l-diversity');
    const dir = stage(r.files);
    expect(verifyAt(r, dir).every((c) => c.passed)).toBe(true);
    expect(r.layout.bucketization.buckets).toBe(Math.floor(table.rowCount / 4));
  });

  it('refuses l above what the SA distribution allows, with the numbers', () => {
    // Prof-specialty: 4,038 of 30,162 rows; 30162 / 4038 = 7.47.
    expect(() => release(7)).not.toThrow();
    let error: unknown;
    try {
      release(8);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoSolutionError);
    const message = (error as NoSolutionError).describe();
    expect(message).toMatch(/4038 of 30162 rows/);
    expect(message).toMatch(/N\/l = 3770\.3/);
    expect(message).toMatch(/l ≤ 7/);
    expect(message).not.toMatch(/Prof-specialty/);
  });

  it('refuses l below 2: the quasi-identifiers go out unchanged and l alone protects the rows', () => {
    for (const [l, model] of [
      [1, 'distinct-l-diversity'],
      [1.5, 'entropy-l-diversity'],
    ] as const) {
      expect(() => release(l, model)).toThrow(SpecError);
      expect(() => release(l, model)).toThrow(
        new RegExp(`privacy\\[0\\]\\.l must be at least 2 for anatomy, but found ${l}`),
      );
    }
  });

  it('never hints an l below 2 when the sensitive attribute allows none', () => {
    // salary-class: '<=50K' in about three rows of four, so no bucket of 2 can spread it.
    const skewed = () =>
      anatomyRelease(
        ctx(
          specWith((j) => {
            j.attributes['salary-class'] = { type: 'sensitive' };
            j.attributes.occupation = { type: 'insensitive' };
            j.privacy = [{ model: 'distinct-l-diversity', attribute: 'salary-class', l: 2 }];
          }),
        ),
      );
    expect(skewed).toThrow(NoSolutionError);
    let hint = '';
    try {
      skewed();
    } catch (e) {
      hint = (e as NoSolutionError).hint ?? '';
    }
    expect(hint).not.toMatch(/l ≤ 1/);
    expect(hint).toMatch(
      /l must be at least 2, which one dominant value of salary-class rules out: record salary-class in finer values/,
    );
  });

  it('a sensitive attribute with one value in every row: no l to offer, nothing any release hides', () => {
    const spec = { model: 'distinct-l-diversity', attribute: 'dis', l: 2 } as const;
    const req = {
      attribute: 'dis',
      column: { name: 'dis', dictionary: ['same'], codes: new Int32Array(50) },
      model: spec.model,
      l: 2,
      diversity: lDiversity(spec),
    };
    let hint = '';
    try {
      checkEligibility(req, 50, 'anatomy');
    } catch (e) {
      hint = (e as NoSolutionError).hint ?? '';
    }
    expect(hint).toMatch(
      /^dis holds one value in every row, which no release can hide: mark it "insensitive"/,
    );
    expect(hint).not.toMatch(/l ≤/);
  });

  it('says so when the dominant sensitive value is the missing value, which no finer recording splits', () => {
    const spec = { model: 'distinct-l-diversity', attribute: 'dis', l: 2 } as const;
    // 11 of 20 rows empty (the missing value), the others in two values.
    const codes = Int32Array.from({ length: 20 }, (_, r) => (r < 11 ? 0 : 1 + (r % 2)));
    const req = {
      attribute: 'dis',
      column: { name: 'dis', dictionary: ['', 'a', 'b'], codes },
      model: spec.model,
      l: 2,
      diversity: lDiversity(spec),
    };
    let hint = '';
    try {
      checkEligibility(req, 20, 'anatomy');
    } catch (e) {
      hint = (e as NoSolutionError).hint ?? '';
    }
    expect(hint).toMatch(
      /which dis's dominant value, the missing value .*, rules out: fill in the values that are known/,
    );
    expect(hint).not.toMatch(/split its most frequent value/);
  });

  it('refuses a "scale": "numeric" attribute holding text, as Mondrian does, naming the row and not the value', () => {
    const numericRace = () =>
      anatomyRelease(
        ctx(
          specWith((j) => {
            j.attributes.race = { type: 'quasi-identifying', scale: 'numeric' };
          }),
        ),
      );
    expect(numericRace).toThrow(InputError);
    expect(numericRace).toThrow(
      /^adult\.csv row 2, column 'race': not a number, but the attribute is numeric$/,
    );
  });

  it('refuses models that do not apply and a second sensitive attribute', () => {
    expect(() =>
      anatomyRelease(
        ctx(
          specWith((j) => {
            j.privacy = [{ model: 'k-anonymity', k: 5 }];
          }),
        ),
      ),
    ).toThrow(SpecError);
    expect(() =>
      anatomyRelease(
        ctx(
          specWith((j) => {
            j.attributes['salary-class'] = { type: 'sensitive' };
          }),
        ),
      ),
    ).toThrow(/protects one sensitive attribute/);
  });

  it('is deterministic: same seed → identical bytes; another seed → another release', () => {
    const bytes = (r: AnatomyRelease) => r.files.map((f) => Buffer.from(f.content).toString('base64'));
    const a = release(4, 'distinct-l-diversity', 11);
    const b = release(4, 'distinct-l-diversity', 11);
    const c = release(4, 'distinct-l-diversity', 12);
    expect(bytes(a)).toEqual(bytes(b));
    expect(bytes(a)).not.toEqual(bytes(c));
  });
});

describe('Anatomy verification rejects tampered releases', () => {
  const r = release(3);
  const dir = stage(r.files);

  /** Rewrites both forms of one staged table after editing its string columns. */
  const rewrite = (into: string, name: string, edit: (columns: string[][]) => void) => {
    const t = decodeTable(readArrow(join(dir, `${name}.arrow`)));
    edit(t.columns);
    const columns: OutputColumn[] = t.names.map((n, i) => {
      const dictionary = [...new Set(t.columns[i]!)];
      const index = new Map(dictionary.map((v, k) => [v, k]));
      return {
        name: n,
        kind: 'dictionary',
        dictionary,
        codes: Int32Array.from(t.columns[i]!, (v) => index.get(v)!),
      };
    });
    writeFileSync(join(into, `${name}.arrow`), encodeArrow(columns));
    writeFileSync(join(into, `${name}.csv`), formatCsv(columns, ';'));
  };
  const copy = () => {
    const into = tempDir();
    for (const f of r.files) writeFileSync(join(into, f.name), f.content);
    return into;
  };

  it('a bucket edited to hold one SA value fails l-diversity', () => {
    const into = copy();
    rewrite(into, 'st', ([bucket, value, count]) => {
      // Bucket of the first ST row: give all its rows the first row's value.
      const b = bucket![0]!;
      for (let i = 0; i < bucket!.length && bucket![i] === b; i++) value![i] = value![0]!;
      void count;
    });
    expect(() => verifyAt(r, into)).toThrow(VerificationError);
    expect(() => verifyAt(r, into)).toThrow(/l-diversity \(/);
  });

  it('a QI edited in the QIT fails the multiset match', () => {
    const into = copy();
    rewrite(into, 'qit', (columns) => {
      columns[1]![0] = columns[1]![0] === '90' ? '17' : '90';
    });
    expect(() => verifyAt(r, into)).toThrow(/qit-rows/);
  });

  it('an SA moved to another bucket in the single table fails', () => {
    const into = copy();
    rewrite(into, 'data', (columns) => {
      const sa = columns[7]!;
      const bucket = columns[9]!;
      const j = bucket.findIndex((b) => b !== bucket[0]);
      const i = sa.findIndex((v, k) => k >= j && bucket[k] !== bucket[0] && v !== sa[0]);
      [sa[0], sa[i]] = [sa[i]!, sa[0]!];
    });
    expect(() => verifyAt(r, into)).toThrow(/single-table/);
  });
});

describe('an Anatomy release end to end', () => {
  it('publishes QIT, ST and the single table with a report', async () => {
    const out = join(tempDir(), 'out');
    const { report, manifest } = await releaseTo(SPEC_FILE, out);
    expect(manifest.files.map((f) => f.name)).toEqual([
      'data.arrow',
      'data.csv',
      'qit.arrow',
      'qit.csv',
      'report.html',
      'report.json',
      'st.arrow',
      'st.csv',
    ]);
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.satisfied).toBe(true);
    expect(report.privacy.models[0]!.achieved.l).toBe(4);
    expect(report.privacy.classes).toBe(Math.floor(table.rowCount / 4));
    expect(report.privacy.ecSizeHistogram!.length).toBeGreaterThan(0);
    expect(report.utility.metric).toBe('kl-divergence');
    expect(report.utility.value).toBeGreaterThan(0);
    expect(report.utility.queryErrorCube).toBeGreaterThan(0);
    expect(report.sections![0]!.title).toBe('Anatomy buckets');
    const disclosure = report.privacy.disclosure!.occupation as { release: { distinctL: number } };
    expect(disclosure.release.distinctL).toBe(4);
  });
});
