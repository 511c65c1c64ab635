import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { encodeArrow, readArrow } from '../../src/data/arrow.ts';
import { formatCsv } from '../../src/data/csv.ts';
import type { EncodedTable, OutputColumn } from '../../src/data/table.ts';
import { InputError, NoSolutionError, SpecError, VerificationError } from '../../src/errors.ts';
import { wasmGroupingKernel } from '../../src/kernels/groupby/wasm.ts';
import { discretize, isNumericColumn, pam, phiSquared } from '../../src/methods/slicing/correlation.ts';
import { sliceTable, slicingClaims, slicingFiles } from '../../src/methods/slicing/index.ts';
import { slicingMeasures } from '../../src/methods/slicing/report.ts';
import type { SlicedRelease } from '../../src/methods/slicing/sliced.ts';
import { readInput, streams } from '../../src/pipeline/release.ts';
import { parseSpec, type ReleaseSpec } from '../../src/release-spec/spec.ts';
import { decodeTable } from '../../src/verify/generalization.ts';
import { verifierFor } from '../../src/verify/index.ts';
import { releaseTo } from '../helpers/release.ts';

const ROOT = new URL('../../', import.meta.url).pathname;
const SPEC_FILE = join(ROOT, 'examples/adult-slicing/release.json');
const base = JSON.parse(readFileSync(SPEC_FILE, 'utf8'));

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});
const tempDir = () => {
  const d = mkdtempSync(join(tmpdir(), 'ppdp-slicing-'));
  dirs.push(d);
  return d;
};

const parse = (json: unknown, file = SPEC_FILE) => parseSpec(json, file);
function adultSpec(edit: (json: typeof base) => void = () => {}): ReleaseSpec {
  const json = structuredClone(base);
  edit(json);
  return parse(json);
}
const adult: EncodedTable = readInput(adultSpec());
const noTime = <T>(_: string, work: () => T) => work();
const slice = (spec: ReleaseSpec, table: EncodedTable = adult) =>
  sliceTable({ spec, table, kernel: wasmGroupingKernel, time: noTime, random: streams(spec, table) });

function stageAndVerify(spec: ReleaseSpec, table: EncodedTable, sliced: SlicedRelease) {
  const dir = tempDir();
  for (const f of slicingFiles(sliced, table.delimiter)) writeFileSync(join(dir, f.name), f.content);
  const checks = verifierFor('slicing').verify({
    spec,
    table,
    claims: slicingClaims(sliced),
    staged: (name) => join(dir, name),
  });
  return { dir, checks };
}

describe('φ² and PAM', () => {
  it('φ² is 1 for a function of one another, 0 for independent attributes', () => {
    const a = Int32Array.from({ length: 400 }, (_, i) => i % 4);
    const b = Int32Array.from({ length: 400 }, (_, i) => (i % 4) * 2 + 1);
    const c = Int32Array.from({ length: 400 }, (_, i) => Math.floor(i / 4) % 5);
    expect(phiSquared(a, 4, b, 8)).toBeCloseTo(1, 12);
    expect(phiSquared(a, 4, c, 5)).toBeCloseTo(0, 12);
    expect(phiSquared(a, 4, new Int32Array(400), 1)).toBe(0);
  });

  it('PAM finds two blocks of a block distance matrix', () => {
    const near = 0.1;
    const far = 0.9;
    const blockOf = [0, 1, 0, 1, 1, 0];
    const d = blockOf.map((x, i) => blockOf.map((y, j) => (i === j ? 0 : x === y ? near : far)));
    const { clusterOf } = pam(d, 2);
    for (let i = 0; i < 6; i++)
      for (let j = 0; j < 6; j++) {
        expect(clusterOf[i] === clusterOf[j]).toBe(blockOf[i] === blockOf[j]);
      }
  });
});

describe('the seed’s Table 1 example', () => {
  const dir = tempDir();
  writeFileSync(
    join(dir, 'table.csv'),
    'Age;Sex;Zipcode;Disease\n22;M;47906;dyspepsia\n22;F;47906;flu\n33;F;47905;flu\n52;F;47905;bronchitis\n' +
      '54;M;47302;flu\n60;M;47302;dyspepsia\n60;M;47304;dyspepsia\n64;F;47304;gastritis\n',
  );
  const spec = parse(
    {
      input: 'table.csv',
      format: { delimiter: ';' },
      attributes: {
        Age: { type: 'quasi-identifying', scale: 'numeric' },
        Sex: { type: 'quasi-identifying' },
        Zipcode: { type: 'quasi-identifying' },
        Disease: { type: 'sensitive' },
      },
      privacy: [{ model: 'distinct-l-diversity', attribute: 'Disease', l: 2 }],
      method: {
        name: 'slicing',
        columnGroups: [
          ['Age', 'Sex'],
          ['Zipcode', 'Disease'],
        ],
      },
      seed: 3,
    },
    join(dir, 'release.json'),
  );
  const table = readInput(spec);
  const sliced = slice(spec, table);

  it('refines Table 1(f)’s two buckets {22, 22, 33, 52} and {54, 60, 60, 64}, verified', () => {
    const { dir: out, checks } = stageAndVerify(spec, table, sliced);
    expect(checks.every((c) => c.passed)).toBe(true);
    const data = decodeTable(readArrow(join(out, 'data.arrow')));
    expect(data.names).toEqual(['Age+Sex', 'Zipcode+Disease', 'bucket']);
    // The first split is the paper's (age below 54 or not); further splits keep 2-diversity.
    const ages = new Map<string, number[]>();
    data.columns[0]!.forEach((v, i) => {
      const b = data.columns[2]![i]!;
      ages.set(b, [...(ages.get(b) ?? []), Number(v.split('|')[0])]);
    });
    for (const a of ages.values()) expect(a.every((x) => x < 54) || a.every((x) => x >= 54)).toBe(true);
    expect(ages.size).toBeGreaterThanOrEqual(2);
    expect(new Set(data.columns[1]!)).toEqual(
      new Set([
        '47906|dyspepsia',
        '47906|flu',
        '47905|flu',
        '47905|bronchitis',
        '47302|flu',
        '47302|dyspepsia',
        '47304|dyspepsia',
        '47304|gastritis',
      ]),
    );
    expect(sliced.partition.maxP).toBeCloseTo(0.5, 12);
  });
});

describe('a numeric attribute with missing amounts', () => {
  // Amounts of 100 and more, two written NA and two empty: read as 0, the missing ones would
  // sort below every amount, share the lowest amounts' bin and buckets, and stretch the range
  // the split widths are measured against down to 0. The lowest and the highest amounts are all
  // flu, so no median cut can leave them alone: only the cut of the missing rows from the
  // amounts keeps the missing rows apart.
  const dir = tempDir();
  const others = ['asthma', 'diabetes', 'covid'];
  const lines = ['id,admitted,amount,diagnosis'];
  for (let i = 0; i < 26; i++) {
    const diagnosis = i < 4 || i >= 22 ? 'flu' : others[i % 3];
    lines.push(`P${1000 + i},2023-0${1 + (i % 9)}-1${i % 10},${(100 + i * 37.5).toFixed(2)},${diagnosis}`);
  }
  ['NA', '', 'NA', ''].forEach((amount, i) => {
    lines.push(`P${1100 + i},2023-11-0${i + 1},${amount},${i % 2 === 0 ? 'asthma' : 'diabetes'}`);
  });
  writeFileSync(join(dir, 'visits.csv'), `${lines.join('\n')}\n`);
  const spec = parse(
    {
      input: 'visits.csv',
      format: { emptyCells: 'value' },
      attributes: {
        id: { type: 'identifying' },
        admitted: { type: 'insensitive' },
        amount: { type: 'quasi-identifying', scale: 'numeric', missing: ['NA'] },
        diagnosis: { type: 'sensitive' },
      },
      privacy: [{ model: 'distinct-l-diversity', attribute: 'diagnosis', l: 2 }],
      method: { name: 'slicing', columns: 2 },
      seed: 5,
    },
    join(dir, 'release.json'),
  );
  const table = readInput(spec);
  const sliced = slice(spec, table);
  const amount = table.columns.find((c) => c.name === 'amount')!;
  const missingRows = Array.from(amount.codes, (c, r) => (amount.dictionary[c] === '' ? r : -1)).filter(
    (r) => r >= 0,
  );

  it('sorts the missing value after every amount and never reads it as a number', () => {
    expect(missingRows).toHaveLength(4);
    const split = sliced.problem.split.find((a) => a.name === 'amount')!;
    expect(split.numbers).toBe(split.domain - 1);
    for (const r of missingRows) expect(split.ranks[r]).toBe(split.numbers);
    expect(Number.isNaN(split.numeric![split.numbers]!)).toBe(true);
    expect(Math.min(...split.numeric!.subarray(0, split.numbers))).toBe(100);
  });

  it('reads numbers beside the missing value as numeric without a scale, as Mondrian does', () => {
    expect(isNumericColumn(amount, 'nominal')).toBe(true);
    expect(isNumericColumn(amount, 'ordinal')).toBe(false);
    const missingOnly = { ...amount, dictionary: amount.dictionary.map(() => '') };
    expect(isNumericColumn(missingOnly, 'nominal')).toBe(false);
  });

  it('bins the missing value apart from the amounts for φ²', () => {
    const bins = discretize(amount, true, undefined);
    const missingBin = bins.codes[missingRows[0]!]!;
    bins.codes.forEach((b, r) => {
      expect(b === missingBin).toBe(missingRows.includes(r));
    });
    expect(bins.how).toBe('10 equal-frequency bins and the missing value');
  });

  it('cuts the missing rows off the amounts first, as Mondrian does, and verifies', () => {
    for (const b of sliced.partition.buckets) {
      const rows = Array.from(sliced.partition.rows.subarray(b.start, b.end));
      const missing = rows.filter((r) => missingRows.includes(r)).length;
      expect(missing === 0 || missing === rows.length).toBe(true);
    }
    const { checks } = stageAndVerify(spec, table, sliced);
    expect(checks.every((c) => c.passed)).toBe(true);
  });
});

describe('Slicing on Adult (occupation sensitive, the 8 QIs)', () => {
  for (const c of [2, 3]) {
    for (const l of [2, 3, 4, 5]) {
      it(`c = ${c}, l = ${l}: l-diverse by the independent recomputation; membership measured`, () => {
        const spec = adultSpec((j) => {
          j.method = { name: 'slicing', columns: c };
          j.privacy = [{ model: 'distinct-l-diversity', attribute: 'occupation', l }];
        });
        const sliced = slice(spec);
        expect(sliced.plan.columns.length).toBe(c);
        expect(sliced.partition.maxP * l).toBeLessThanOrEqual(1 + 1e-9);
        expect(sliced.partition.buckets.length).toBeGreaterThan(1);
        const { checks } = stageAndVerify(spec, adult, sliced);
        expect(checks.every((x) => x.passed)).toBe(true);
        const diverse = checks.find((x) => x.name === 'l-diverse')!;
        expect(diverse.detail).toMatch(/0 \(tuple, value\) pairs above 1\/l/);

        const { membership, kl } = slicingMeasures(wasmGroupingKernel, sliced, streams(spec, adult));
        expect(membership.originalRecords).toBe(adult.rowCount);
        expect(membership.combinations).toBeGreaterThanOrEqual(membership.originalTuples);
        // Each distinct original tuple is a combination of every bucket it matches (at least its own).
        expect(membership.combinations - membership.fakeCombinations).toBeGreaterThanOrEqual(
          membership.originalTuples,
        );
        expect(membership.fakeTuples).toBeGreaterThan(0);
        const sum = (bins: { share: number }[]) => bins.reduce((s, b) => s + b.share, 0);
        expect(sum(membership.matchingBucketsOriginal.bins)).toBeCloseTo(1, 9);
        expect(sum(membership.matchingBucketsFake.bins)).toBeCloseTo(1, 9);
        expect(membership.matchingBucketsOriginal.mean).toBeGreaterThanOrEqual(1);
        expect(kl).toBeGreaterThan(0);
      });
    }
  }

  it('random splits: verified, and tuples match several buckets (membership protection)', () => {
    const spec = adultSpec((j) => {
      j.method = { name: 'slicing', columns: 3, split: 'random' };
      // l = 5 puts the sensitive attribute in a column of its own, which leaves random halves
      // room to pass; at l = 3 almost none does and the table stays in one or two buckets.
      j.privacy[0].l = 5;
    });
    const sliced = slice(spec);
    expect(sliced.partition.maxP * 5).toBeLessThanOrEqual(1 + 1e-9);
    expect(stageAndVerify(spec, adult, sliced).checks.every((x) => x.passed)).toBe(true);
    const { membership } = slicingMeasures(wasmGroupingKernel, sliced, streams(spec, adult));
    expect(membership.matchingBucketsOriginal.mean).toBeGreaterThan(1.5);
    expect(membership.matchingBucketsOriginal.bins[0]!.label).toBe('1');
    expect(membership.matchingBucketsOriginal.bins[0]!.share).toBeLessThan(0.9);
  });

  it('Mondrian splits make buckets boxes in QI space: every tuple matches exactly one bucket', () => {
    const spec = adultSpec((j) => {
      j.method = { name: 'slicing', columns: 3 };
      j.privacy[0].l = 3;
    });
    const { membership } = slicingMeasures(wasmGroupingKernel, slice(spec), streams(spec, adult));
    expect(membership.matchingBucketsOriginal.mean).toBe(1);
    expect(membership.matchingBucketsFake.mean).toBe(1);
  });

  it('the builder’s p(t,s) equals a brute-force recomputation over all tuples and buckets', () => {
    const dir = tempDir();
    const lines = readFileSync(join(ROOT, 'examples/adult/adult.csv'), 'utf8').split('\n');
    writeFileSync(join(dir, 'adult.csv'), `${lines.slice(0, 801).join('\n')}\n`);
    const json = structuredClone(base);
    json.input = 'adult.csv';
    delete json.root;
    for (const a of Object.values(json.attributes) as { hierarchy?: string }[]) {
      if (!a.hierarchy) continue;
      a.hierarchy = a.hierarchy.replace('../adult/', '');
      writeFileSync(join(dir, a.hierarchy), readFileSync(join(ROOT, 'examples/adult', a.hierarchy)));
    }
    json.method = { name: 'slicing', columns: 3 };
    json.privacy = [{ model: 'distinct-l-diversity', attribute: 'occupation', l: 3 }];
    const spec = parse(json, join(dir, 'release.json'));
    const table = readInput(spec);
    const sliced = slice(spec, table);
    const { problem, partition } = sliced;
    const n = table.rowCount;
    const buckets = partition.buckets.map((b) => Array.from(partition.rows.subarray(b.start, b.end)));
    let worst = 0;
    for (let t = 0; t < n; t++) {
      const mass = new Float64Array(problem.saDomain);
      let total = 0;
      buckets.forEach((members) => {
        let f = 1;
        for (let j = 0; j < problem.matchCodes.length; j++) {
          const codes = problem.matchCodes[j]!;
          f *= members.filter((r) => codes[r] === codes[t]).length / members.length;
        }
        if (f === 0) return;
        const u = problem.matchCodes[problem.saColumn]!;
        const same = members.filter((r) => u[r] === u[t]);
        total += f;
        for (const r of same) mass[problem.sa[r]!]! += f / same.length;
      });
      for (const m of mass) worst = Math.max(worst, m / total);
    }
    expect(partition.buckets.length).toBeGreaterThan(2);
    expect(partition.maxP).toBeCloseTo(worst, 9);
    expect(worst * 3).toBeLessThanOrEqual(1 + 1e-9);
    expect(stageAndVerify(spec, table, sliced).checks.every((c) => c.passed)).toBe(true);
  });

  it('refuses l above what the SA distribution allows, and column groups that cannot be l-diverse', () => {
    expect(() =>
      slice(
        adultSpec((j) => {
          j.privacy[0].l = 8;
        }),
      ),
    ).toThrow(/4038 of 30162 rows/);
    let error: unknown;
    try {
      slice(
        adultSpec((j) => {
          j.privacy[0].l = 2;
          j.method = {
            name: 'slicing',
            columnGroups: [
              ['sex', 'age', 'race', 'marital-status', 'native-country', 'workclass', 'salary-class'],
              ['education', 'occupation'],
            ],
          };
        }),
      );
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(NoSolutionError);
    expect((error as NoSolutionError).message).toMatch(
      /\(education\) already give p\(t,s\) = 0\.8173 > 1\/l = 0\.5000/,
    );
  });

  it('refuses l below 2: each column goes out exact, and l alone links a row to its sensitive value', () => {
    const l1 = () =>
      slice(
        adultSpec((j) => {
          j.privacy[0].l = 1;
        }),
      );
    expect(l1).toThrow(SpecError);
    expect(l1).toThrow(/privacy\[0\]\.l must be at least 2 for slicing, but found 1/);
  });

  it('refuses a "scale": "numeric" attribute holding text, as Mondrian does, naming the row and not the value', () => {
    const numericRace = () =>
      slice(
        adultSpec((j) => {
          j.attributes.race = { ...j.attributes.race, scale: 'numeric' };
        }),
      );
    expect(numericRace).toThrow(InputError);
    expect(numericRace).toThrow(
      /^adult\.csv row 2, column 'race': not a number, but the attribute is numeric$/,
    );
  });

  it("refuses a value holding '|' (its join character), naming the first row that holds one, not the value", () => {
    const race = adult.columns.find((c) => c.name === 'race')!;
    const code = race.codes[100]!;
    const piped: EncodedTable = {
      ...adult,
      columns: adult.columns.map((c) =>
        c === race ? { ...c, dictionary: c.dictionary.map((v, i) => (i === code ? `${v}|x` : v)) } : c,
      ),
    };
    // Rows are named as the CSV counts them: its header is row 1.
    const first = race.codes.indexOf(code) + 2;
    const refused = () => slice(adultSpec(), piped);
    expect(refused).toThrow(SpecError);
    expect(refused).toThrow(
      new RegExp(`^release\\.json: adult\\.csv row ${first}, column 'race': a value contains '\\|'`),
    );
  });

  it('refuses bad column requests', () => {
    expect(() => slice(adultSpec((j) => (j.method = { name: 'slicing', columns: 1 })))).toThrow(SpecError);
    expect(() => slice(adultSpec((j) => (j.method = { name: 'slicing', columns: 10 })))).toThrow(
      /2 to 9 columns/,
    );
    expect(() =>
      slice(
        adultSpec((j) => (j.method = { name: 'slicing', columnGroups: [['sex', 'age'], ['occupation']] })),
      ),
    ).toThrow(/leaves out race/);
  });

  it('is deterministic: same seed → identical bytes; another seed → another release', () => {
    const bytes = (seed: number) =>
      slicingFiles(slice(adultSpec((j) => (j.seed = seed))), ';').map((f) =>
        Buffer.from(f.content).toString('base64'),
      );
    const a = bytes(5);
    expect(bytes(5)).toEqual(a);
    expect(bytes(6)).not.toEqual(a);
  });
});

describe('Slicing verification rejects tampered releases', () => {
  const spec = adultSpec((j) => {
    j.method = { name: 'slicing', columns: 3 };
    j.privacy[0].l = 3;
  });
  const sliced = slice(spec);
  const { dir } = stageAndVerify(spec, adult, sliced);
  const verify = (staged: (name: string) => string) =>
    verifierFor('slicing').verify({ spec, table: adult, claims: slicingClaims(sliced), staged });

  const tampered = (edit: (columns: string[][], names: string[]) => void) => {
    const t = decodeTable(readArrow(join(dir, 'data.arrow')));
    edit(t.columns, t.names);
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
    const into = tempDir();
    writeFileSync(join(into, 'data.arrow'), encodeArrow(columns));
    writeFileSync(join(into, 'data.csv'), formatCsv(columns, ';'));
    return (name: string) => join(into, name);
  };

  it('a bucket whose sensitive column is made uniform fails the l-diverse check', () => {
    const path = tampered((columns, names) => {
      const sa = names.findIndex((n) => n.split('+').includes('occupation'));
      const bucket = columns[names.length - 1]!;
      const first = bucket[0]!;
      for (let i = 0; i < bucket.length; i++) if (bucket[i] === first) columns[sa]![i] = columns[sa]![0]!;
    });
    expect(() => verify(path)).toThrow(VerificationError);
    expect(() => verify(path)).toThrow(/l-diverse \(/);
  });

  it('a value moved to another bucket fails the per-bucket permutation check', () => {
    const path = tampered((columns, names) => {
      const bucket = columns[names.length - 1]!;
      const i = bucket.findIndex((b) => b !== bucket[0]);
      const col = columns[0]!;
      const j = col.findIndex((v, k) => k >= i && bucket[k] !== bucket[0] && v !== col[0]);
      [col[0], col[j]] = [col[j]!, col[0]!];
    });
    expect(() => verify(path)).toThrow(/bucket-permutations/);
  });
});

describe('a Slicing release end to end', () => {
  it('publishes the sliced table with column, bucket and membership sections', async () => {
    const out = join(tempDir(), 'out');
    const { report } = await releaseTo(SPEC_FILE, out);
    expect(report.verification.verified).toBe(true);
    expect(report.privacy.satisfied).toBe(true);
    expect(report.privacy.models[0]!.achieved.maxP! * 4).toBeLessThanOrEqual(1 + 1e-9);
    expect(report.sections!.map((s) => s.title)).toEqual([
      'Slicing columns',
      'Slicing buckets',
      'Membership disclosure',
    ]);
    const details = report.details!.slicing as { membership: { fakeTuples: number }; columns: string[][] };
    expect(details.columns.length).toBe(2);
    expect(details.membership.fakeTuples).toBeGreaterThan(0);
    expect(report.utility.metric).toBe('kl-divergence');
    expect(report.utility.queryErrorCube).toBeGreaterThan(0);
    const csv = readFileSync(join(out, 'data.csv'), 'utf8');
    expect(csv.split('\n')[0]).toBe(`${details.columns.map((g) => g.join('+')).join(';')};bucket`);
  });
});
